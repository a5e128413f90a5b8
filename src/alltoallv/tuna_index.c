/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tuna_index.c - TuNA index arithmetic ([Fan2024] section III); see
 * tuna_index.h.
 */
#include "alltoallv/tuna_index.h"

#include <stddef.h>

long long ct_tuna_pow(int r, int x)
{
    long long pw = 1;
    while (x-- > 0)
        pw *= r;
    return pw;
}

int ct_tuna_rounds(int P, int r)
{
    int K = 0;
    /* III-A: K <= w * (r - 1); the top digit position may allow fewer values of z. */
    for (long long pw = 1; pw < P; pw *= r)
        K += ct_tuna_digit_rounds(P, r, pw);
    return K;
}

int ct_tuna_round_slots(int P, int r, int x, int z, int *out)
{
    const long long pw = ct_tuna_pow(r, x), span = pw * r;
    int n = 0;
    /* i = a + z * r^x + b * r^(x+1) with 0 <= a < r^x, b >= 0: ascending in (b, a). */
    for (long long base = z * pw; base < P; base += span)
        for (long long i = base; i < base + pw && i < P; i++) {
            if (out != NULL)
                out[n] = (int)i;
            n++;
        }
    return n;
}

int ct_tuna_is_direct(int i, int r)
{
    if (i <= 0)
        return 0;
    while (i % r == 0)
        i /= r;
    return i < r; /* one non-zero digit left, the lowest */
}

int ct_tuna_tsize(int P, int r)
{
    return P <= 1 ? 0 : P - (ct_tuna_rounds(P, r) + 1);
}

int ct_tuna_tindex(int o, int r)
{
    if (o <= 0 || ct_tuna_is_direct(o, r))
        return -1;
    int dx = 0;
    long long pw = 1;
    while (pw * r <= o) { /* dx = floor(log_r o) */
        pw *= r;
        dx++;
    }
    int dz = (int)(o / pw);
    return o - 1 - dx * (r - 1) - dz;
}
