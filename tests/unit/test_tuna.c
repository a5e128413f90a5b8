/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_tuna.c - TuNA index arithmetic (src/alltoallv/tuna_index.c, [Fan2024]
 * section III) against brute-force enumeration, for every P <= MAX_P and
 * every radix 2..P: digits, rounds, K, B, the o -> t map, and a simulation of
 * the whole exchange that checks every block reaches its destination and
 * that no two live blocks ever share a slot of T.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alltoallv/tuna_index.h"

#define MAX_P 64

/* Digit x of i in base r by repeated division (independent of the library). */
static int bf_digit(int i, int r, int x)
{
    while (x-- > 0)
        i /= r;
    return i % r;
}

/* Number of base-r digits of P - 1 (0 for P <= 1): ceil(log_r P). */
static int bf_digits(int P, int r)
{
    int w = 0;
    for (int v = P - 1; v > 0; v /= r)
        w++;
    return w;
}

static int bf_nonzero_digits(int i, int r)
{
    int n = 0;
    for (; i > 0; i /= r)
        n += i % r != 0;
    return n;
}

static int bf_is_direct(int i, int r) { return bf_nonzero_digits(i, r) == 1; }

/* Slots of round (x, z): every i in [1, P) whose digit x is z. */
static int bf_round(int P, int r, int x, int z, int *out)
{
    int n = 0;
    for (int i = 1; i < P; i++)
        if (bf_digit(i, r, x) == z)
            out[n++] = i;
    return n;
}

static int bf_rounds(int P, int r)
{
    int K = 0, buf[MAX_P];
    for (int x = 0; x < bf_digits(P, r); x++)
        for (int z = 1; z < r; z++)
            K += bf_round(P, r, x, z, buf) > 0;
    return K;
}

#define FOR_ALL_P_R(P, r)                                                       \
    for (int P = 1; P <= MAX_P; P++)                                            \
        for (int r = 2; r <= (P < 2 ? 2 : P); r++)

static void test_digits(void **state)
{
    (void)state;
    FOR_ALL_P_R(P, r)
    {
        int w = ct_tuna_digits(P, r);
        if (w != bf_digits(P, r))
            fail_msg("digits(P=%d, r=%d) = %d, want %d", P, r, w, bf_digits(P, r));
        /* r^(w-1) < P <= r^w */
        if (P > 1)
            assert_true(ct_tuna_pow(r, w - 1) < P && ct_tuna_pow(r, w) >= P);
        for (int i = 0; i < P; i++)
            for (int x = 0; x < w; x++)
                if (ct_tuna_digit(i, r, x) != bf_digit(i, r, x))
                    fail_msg("digit(%d, r=%d, x=%d) = %d, want %d", i, r, x,
                             ct_tuna_digit(i, r, x), bf_digit(i, r, x));
    }
    assert_int_equal(ct_tuna_digits(4, 2), 2); /* Fig. 2 */
    assert_int_equal(ct_tuna_digits(8, 2), 3); /* Fig. 3a */
    assert_int_equal(ct_tuna_digits(9, 3), 2);
    assert_int_equal(ct_tuna_digits(10, 3), 3);
}

static void test_rounds(void **state)
{
    (void)state;
    int got[MAX_P], want[MAX_P];
    FOR_ALL_P_R(P, r)
    {
        const int w = bf_digits(P, r);
        int nmax = 0;
        for (int x = 0; x < w; x++)
            for (int z = 1; z < r; z++) {
                int n = ct_tuna_round_slots(P, r, x, z, got);
                int m = bf_round(P, r, x, z, want);
                if (n != m || memcmp(got, want, (size_t)n * sizeof(int)) != 0)
                    fail_msg("round (x=%d, z=%d) of P=%d r=%d: %d slots, want %d", x, z, P, r,
                             n, m);
                assert_int_equal(ct_tuna_round_slots(P, r, x, z, NULL), n);
                /* non-empty exactly when its smallest slot z r^x exists */
                assert_int_equal(ct_tuna_round_nonempty(P, r, x, z), n > 0);
                /* III-A: at most r^(w-1) blocks per round */
                assert_true(n <= ct_tuna_pow(r, w - 1));
                nmax = n > nmax ? n : nmax;
            }
        assert_int_equal(ct_tuna_max_round_slots(P, r), nmax);
        int K = ct_tuna_rounds(P, r);
        if (K != bf_rounds(P, r))
            fail_msg("K(P=%d, r=%d) = %d, want %d", P, r, K, bf_rounds(P, r));
        assert_true(K <= w * (r - 1)); /* III-A */
    }
    assert_int_equal(ct_tuna_rounds(8, 2), 3); /* Fig. 3a: three rounds */
    assert_int_equal(ct_tuna_rounds(8, 3), 4); /* (0,1) (0,2) (1,1) (1,2) */
    assert_int_equal(ct_tuna_rounds(8, 8), 7); /* linear */
}

static void test_direct_and_tsize(void **state)
{
    (void)state;
    FOR_ALL_P_R(P, r)
    {
        int nondirect = 0;
        for (int i = 0; i < P; i++) {
            assert_int_equal(ct_tuna_is_direct(i, r), bf_is_direct(i, r));
            nondirect += i > 0 && !bf_is_direct(i, r);
        }
        int B = ct_tuna_tsize(P, r);
        if (B != nondirect)
            fail_msg("B(P=%d, r=%d) = %d, want %d non-direct slots", P, r, B, nondirect);
        if (P > 1) {
            assert_int_equal(B, P - (ct_tuna_rounds(P, r) + 1)); /* III-C */
            assert_int_equal(B == 0, r >= P - 1);              /* "r exceeds P - 2" */
        }
    }
    /* Fig. 3: P = 8 with r = 2, 3, 4 needs B = 4, 3, 3 */
    assert_int_equal(ct_tuna_tsize(8, 2), 4);
    assert_int_equal(ct_tuna_tsize(8, 3), 3);
    assert_int_equal(ct_tuna_tsize(8, 4), 3);
    assert_int_equal(ct_tuna_tsize(1, 2), 0);
}

static void test_tindex(void **state)
{
    (void)state;
    FOR_ALL_P_R(P, r)
    {
        int rank = 0; /* non-direct slots below o */
        for (int o = 0; o < P; o++) {
            int t = ct_tuna_tindex(o, r);
            if (o == 0 || bf_is_direct(o, r)) {
                assert_int_equal(t, -1);
                continue;
            }
            if (t != rank)
                fail_msg("t(o=%d, r=%d) = %d, want %d", o, r, t, rank);
            assert_true(t < ct_tuna_tsize(P, r));
            rank++;
        }
    }
    /* III-C, Fig. 3a: o = 3 -> t = 0, o = 5 -> t = 1 */
    assert_int_equal(ct_tuna_tindex(3, 2), 0);
    assert_int_equal(ct_tuna_tindex(5, 2), 1);
    assert_int_equal(ct_tuna_tindex(7, 2), 3);
}

/*
 * The whole exchange on P ranks: a block is (source, destination). Rank p
 * starts with the block for p + o in slot o (send buffer S); each round moves
 * the slots of (x, z) to p + z r^x, where a block either is final (it must be
 * for that rank: into R) or goes to T at t(o), which must then be free.
 * Sending reads S while no lower digit has moved the slot, T otherwise.
 */
typedef struct sim_rank {
    int S[MAX_P];  /* destination of the block still in S, -1 once sent */
    int T[MAX_P];  /* block (source * MAX_P + destination) in T[t], -1 free */
    int R[MAX_P];  /* source of the block received from each source, -1 none */
    int inflight_src[MAX_P], inflight_dst[MAX_P], inflight_o[MAX_P], ninflight;
} sim_rank;

static void simulate(int P, int r)
{
    static sim_rank rk[MAX_P];
    int slots[MAX_P];
    for (int p = 0; p < P; p++) {
        for (int o = 0; o < P; o++) {
            rk[p].S[o] = (p + o) % P;
            rk[p].T[o] = rk[p].R[o] = -1;
        }
        rk[p].R[p] = p; /* slot 0: the own block, copied locally */
        rk[p].S[0] = -1;
    }
    int x = 0;
    for (long long pw = 1; pw < P; pw *= r, x++)
        for (int z = 1; z < r && z * pw < P; z++) {
            const int n = ct_tuna_round_slots(P, r, x, z, slots);
            /* every rank sends its slots... */
            for (int p = 0; p < P; p++) {
                sim_rank *s = &rk[p];
                s->ninflight = 0;
                for (int k = 0; k < n; k++) {
                    const int o = slots[k];
                    int src, dst;
                    if (o % pw == 0) { /* never moved: still in S */
                        assert_int_not_equal(s->S[o], -1);
                        src = p;
                        dst = s->S[o];
                        s->S[o] = -1;
                    } else {
                        const int t = ct_tuna_tindex(o, r);
                        assert_true(t >= 0);
                        if (s->T[t] < 0)
                            fail_msg("P=%d r=%d rank %d: slot %d not in T[%d]", P, r, p, o, t);
                        src = s->T[t] / MAX_P;
                        dst = s->T[t] % MAX_P;
                        s->T[t] = -1;
                    }
                    s->inflight_src[k] = src;
                    s->inflight_dst[k] = dst;
                    s->inflight_o[k] = o;
                }
                s->ninflight = n;
            }
            /* ... and receives those of the rank z r^x behind. */
            for (int q = 0; q < P; q++) {
                const sim_rank *from = &rk[(q - z * pw + P) % P];
                sim_rank *s = &rk[q];
                for (int k = 0; k < from->ninflight; k++) {
                    const int o = from->inflight_o[k], src = from->inflight_src[k];
                    const int dst = from->inflight_dst[k];
                    if (ct_tuna_final_after(o, r, x)) {
                        if (dst != q)
                            fail_msg("P=%d r=%d: final slot %d lands at %d, for %d", P, r, o, q,
                                     dst);
                        assert_int_equal(s->R[src], -1);
                        /* rotated index: the slot o block at q comes from q - o */
                        assert_int_equal(src, (q - o + P) % P);
                        s->R[src] = src;
                    } else {
                        const int t = ct_tuna_tindex(o, r);
                        assert_int_not_equal(dst, q);
                        if (t < 0 || s->T[t] >= 0)
                            fail_msg("P=%d r=%d rank %d: T[%d] for slot %d is taken", P, r, q, t,
                                     o);
                        s->T[t] = src * MAX_P + dst;
                    }
                }
            }
        }
    for (int p = 0; p < P; p++)
        for (int o = 0; o < P; o++) {
            if (rk[p].R[o] != o)
                fail_msg("P=%d r=%d: rank %d never got the block of %d", P, r, p, o);
            assert_int_equal(rk[p].S[o], -1);
            assert_int_equal(rk[p].T[o], -1);
        }
}

static void test_simulation(void **state)
{
    (void)state;
    FOR_ALL_P_R(P, r)
    simulate(P, r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_digits),
        cmocka_unit_test(test_rounds),
        cmocka_unit_test(test_direct_and_tsize),
        cmocka_unit_test(test_tindex),
        cmocka_unit_test(test_simulation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
