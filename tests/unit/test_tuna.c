/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_tuna.c - the index arithmetic and schedule TuNA's engine runs
 * (src/alltoallv/tuna_index.h, called by ct_tuna_exchange in
 * alltoallv_tuna.c, which the flat and the hierarchical algorithms share)
 * against brute-force enumeration, for every P <= MAX_P, every radix 2..P
 * and every rank: the rounds of each digit, the slots of each round, where
 * a slot is read from (send buffer or T) and whether it arrives, the peers,
 * B and the o -> t map. Then the schedule is replayed with those very
 * functions, in the engine's order, for every P, radix and rank: every block
 * must reach its destination exactly once, and no two live blocks may ever
 * share a slot of T. (tests/mpi/alltoallv.sh runs the engine itself against
 * PMPI_Alltoallv at every radix.)
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

/* Highest position with a non-zero digit of i >= 1. */
static int bf_top(int i, int r)
{
    int x = 0;
    for (; i >= r; i /= r)
        x++;
    return x;
}

static long long bf_pow(int r, int x)
{
    long long pw = 1;
    while (x-- > 0)
        pw *= r;
    return pw;
}

#define FOR_ALL_P_R(P, r)                                                       \
    for (int P = 1; P <= MAX_P; P++)                                            \
        for (int r = 2; r <= (P < 2 ? 2 : P); r++)

/* The engine's walk: digits of weight pw = r^x while pw < P, as many as
 * P - 1 has base-r digits; rounds z = 1 .. ct_tuna_digit_rounds, exactly the
 * (x, z) whose slot set is not empty. */
static void test_digits_and_rounds(void **state)
{
    (void)state;
    int got[MAX_P], want[MAX_P];
    FOR_ALL_P_R(P, r)
    {
        const int w = bf_digits(P, r);
        int x = 0, K = 0;
        for (long long pw = 1; pw < P; pw *= r, x++) {
            assert_int_equal(pw, ct_tuna_pow(r, x));
            assert_int_equal(pw, bf_pow(r, x));
            const int nz = ct_tuna_digit_rounds(P, r, pw);
            assert_true(nz >= 1 && nz <= r - 1);
            for (int z = 1; z < r; z++) {
                const int m = bf_round(P, r, x, z, want);
                if ((m > 0) != (z <= nz))
                    fail_msg("P=%d r=%d x=%d: round z=%d has %d slots, digit_rounds %d", P, r,
                             x, z, m, nz);
                if (z > nz)
                    continue;
                const int n = ct_tuna_round_slots(P, r, x, z, got);
                if (n != m || memcmp(got, want, (size_t)n * sizeof(int)) != 0)
                    fail_msg("round (x=%d, z=%d) of P=%d r=%d: %d slots, want %d", x, z, P, r,
                             n, m);
                assert_int_equal(ct_tuna_round_slots(P, r, x, z, NULL), n);
                assert_true(n <= bf_pow(r, w - 1)); /* III-A: at most r^(w-1) blocks */
            }
            K += nz;
        }
        if (x != w)
            fail_msg("P=%d r=%d: the walk has %d digits, want %d", P, r, x, w);
        assert_int_equal(ct_tuna_digit_rounds(P, r, bf_pow(r, w)), 0); /* past the last */
        if (K != bf_rounds(P, r) || ct_tuna_rounds(P, r) != K)
            fail_msg("K(P=%d, r=%d) = %d, walk %d, want %d", P, r, ct_tuna_rounds(P, r), K,
                     bf_rounds(P, r));
        assert_true(K <= w * (r - 1)); /* III-A */
    }
    assert_int_equal(ct_tuna_rounds(8, 2), 3); /* Fig. 3a: three rounds */
    assert_int_equal(ct_tuna_rounds(8, 3), 4); /* (0,1) (0,2) (1,1) (1,2) */
    assert_int_equal(ct_tuna_rounds(8, 8), 7); /* linear */
    assert_int_equal(ct_tuna_digit_rounds(8, 3, 3), 2); /* 3 and 6 < 8 */
    assert_int_equal(ct_tuna_digit_rounds(7, 3, 3), 2);
    assert_int_equal(ct_tuna_digit_rounds(6, 3, 3), 1);
}

/* Where the slots of round (x, z) are read and whether they arrive: in the
 * send buffer exactly when every digit below x is 0 (no earlier round moved
 * the slot), final exactly when x is the highest non-zero digit. */
static void test_read_and_arrive(void **state)
{
    (void)state;
    int slots[MAX_P];
    FOR_ALL_P_R(P, r)
    {
        int x = 0;
        for (long long pw = 1; pw < P; pw *= r, x++)
            for (int z = 1; z <= ct_tuna_digit_rounds(P, r, pw); z++) {
                const int n = ct_tuna_round_slots(P, r, x, z, slots);
                for (int k = 0; k < n; k++) {
                    const int o = slots[k];
                    int lower_zero = 1;
                    for (int y = 0; y < x; y++)
                        lower_zero &= bf_digit(o, r, y) == 0;
                    if (ct_tuna_in_send_buffer(o, pw) != lower_zero)
                        fail_msg("P=%d r=%d x=%d slot %d: in_send_buffer %d", P, r, x, o,
                                 ct_tuna_in_send_buffer(o, pw));
                    if (ct_tuna_arrives(o, pw, r) != (bf_top(o, r) == x))
                        fail_msg("P=%d r=%d x=%d slot %d: arrives %d, top digit %d", P, r, x,
                                 o, ct_tuna_arrives(o, pw, r), bf_top(o, r));
                }
            }
    }
}

static void test_peers(void **state)
{
    (void)state;
    for (int P = 1; P <= MAX_P; P++)
        for (int me = 0; me < P; me++)
            for (int d = -(P - 1); d < P; d++) {
                int want = me;
                for (int k = 0; k < (d < 0 ? -d : d); k++) /* step by step round the ring */
                    want = d < 0 ? (want == 0 ? P - 1 : want - 1) : (want + 1 == P ? 0 : want + 1);
                if (ct_tuna_peer(P, me, d) != want)
                    fail_msg("peer(P=%d, me=%d, d=%d) = %d, want %d", P, me, d,
                             ct_tuna_peer(P, me, d), want);
            }
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
 * The schedule of ct_tuna_exchange replayed on P ranks with the functions it
 * calls, in its order: a block is (source, destination). Rank p starts with
 * the block for ct_tuna_peer(P, p, o) in slot o of its send buffer S; each
 * digit's rounds send their slots to ct_tuna_peer(P, p, z pw), reading S or
 * T as ct_tuna_in_send_buffer says, and the receiver either keeps the block
 * (ct_tuna_arrives: it must be for that rank, from ct_tuna_peer(P, q, -o))
 * or stores it in T at ct_tuna_tindex, which must then be free. A digit's
 * rounds all send before any receives (the engine runs them concurrently).
 */
typedef struct sim_rank {
    int S[MAX_P];  /* destination of the block still in S, -1 once sent */
    int T[MAX_P];  /* block (source * MAX_P + destination) in T[t], -1 free */
    int R[MAX_P];  /* source of the block received from each source, -1 none */
    int out_src[MAX_P], out_dst[MAX_P], out_o[MAX_P], out_to[MAX_P], nout;
} sim_rank;

/* Every rank sends the slots of the digit's rounds. */
static void sim_send(sim_rank *rk, int P, int r, int x, long long pw)
{
    int slots[MAX_P];
    for (int p = 0; p < P; p++) {
        sim_rank *s = &rk[p];
        s->nout = 0;
        for (int z = 1; z <= ct_tuna_digit_rounds(P, r, pw); z++) {
            const int n = ct_tuna_round_slots(P, r, x, z, slots);
            for (int k = 0; k < n; k++) {
                const int o = slots[k];
                int *from;
                if (ct_tuna_in_send_buffer(o, pw)) {
                    from = &s->S[o];
                    s->out_src[s->nout] = p;
                    s->out_dst[s->nout] = *from;
                } else {
                    const int t = ct_tuna_tindex(o, r);
                    if (t < 0 || s->T[t] < 0)
                        fail_msg("P=%d r=%d rank %d: slot %d is not in T[%d]", P, r, p, o, t);
                    from = &s->T[t];
                    s->out_src[s->nout] = *from / MAX_P;
                    s->out_dst[s->nout] = *from % MAX_P;
                }
                if (*from < 0)
                    fail_msg("P=%d r=%d rank %d: slot %d sent twice", P, r, p, o);
                *from = -1;
                s->out_o[s->nout] = o;
                s->out_to[s->nout++] = ct_tuna_peer(P, p, z * pw);
            }
        }
    }
}

/* Every rank receives what its peers ct_tuna_peer(P, q, -z pw) sent it. */
static void sim_receive(sim_rank *rk, int P, int r, long long pw)
{
    for (int q = 0; q < P; q++) {
        sim_rank *s = &rk[q];
        for (int z = 1; z <= ct_tuna_digit_rounds(P, r, pw); z++) {
            const sim_rank *from = &rk[ct_tuna_peer(P, q, -z * pw)];
            for (int k = 0; k < from->nout; k++) {
                if (from->out_to[k] != q || from->out_o[k] / pw % r != z)
                    continue; /* another round's block */
                const int o = from->out_o[k], src = from->out_src[k], dst = from->out_dst[k];
                if (ct_tuna_arrives(o, pw, r)) {
                    if (dst != q || src != ct_tuna_peer(P, q, -o))
                        fail_msg("P=%d r=%d: slot %d (%d -> %d) arrives at %d", P, r, o, src,
                                 dst, q);
                    assert_int_equal(s->R[src], -1);
                    s->R[src] = src;
                    continue;
                }
                const int t = ct_tuna_tindex(o, r);
                assert_int_not_equal(dst, q);
                if (t < 0 || s->T[t] >= 0)
                    fail_msg("P=%d r=%d rank %d: T[%d] for slot %d is taken", P, r, q, t, o);
                s->T[t] = src * MAX_P + dst;
            }
        }
    }
}

static void replay(int P, int r)
{
    static sim_rank rk[MAX_P];
    for (int p = 0; p < P; p++) {
        for (int o = 0; o < P; o++) {
            rk[p].S[o] = ct_tuna_peer(P, p, o);
            rk[p].T[o] = rk[p].R[o] = -1;
        }
        rk[p].R[p] = p; /* slot 0: the own block, copied locally */
        rk[p].S[0] = -1;
    }
    int x = 0;
    for (long long pw = 1; pw < P; pw *= r, x++) {
        sim_send(rk, P, r, x, pw);
        sim_receive(rk, P, r, pw);
    }
    for (int p = 0; p < P; p++)
        for (int o = 0; o < P; o++) {
            if (rk[p].R[o] != o)
                fail_msg("P=%d r=%d: rank %d never got the block of %d", P, r, p, o);
            assert_int_equal(rk[p].S[o], -1);
            assert_int_equal(rk[p].T[o], -1);
        }
}

static void test_schedule(void **state)
{
    (void)state;
    FOR_ALL_P_R(P, r)
    replay(P, r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_digits_and_rounds),
        cmocka_unit_test(test_read_and_arrive),
        cmocka_unit_test(test_peers),
        cmocka_unit_test(test_direct_and_tsize),
        cmocka_unit_test(test_tindex),
        cmocka_unit_test(test_schedule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
