/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_segments.c - the segment arithmetic of the segmented intercommunicator
 * Allgather and Allgatherv (src/allgather_inter/segments.c), against a
 * brute-force byte map, for every pair of group sizes p, q <= 24.
 *
 * For each stream (one group's blocks sent to the other group) the test
 * checks that: both groups compute the same partition from their own view;
 * every byte of the stream is sent exactly once, by the rank whose block
 * holds it, to the receiver whose segment holds it; every sender's sends go
 * to ascending receivers; every receiver's receive list is exactly the set
 * of messages addressed to it, tiles its segment and follows the order of
 * [Kang2019] section 4.1; and, simulating the exchange and the intra-group
 * allgatherv (counts bound(k+1)-bound(k), displacements bound(k)), that every
 * receiver ends with the whole stream in rank order.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allgather_inter/segments.h"

#define MAXG 24

/* ------------------------------------------------------------------ */
/* Brute force                                                         */
/* ------------------------------------------------------------------ */

static unsigned char stream_byte(size_t g) { return (unsigned char)(g * 131u + 7u + (g >> 8)); }

/* The receiver of every byte, segment by segment: owner[g] = k for g in
 * [bound(k), bound(k+1)), -1 for bytes no segment covers. */
static void scan_owners(const ct_seg_part *pt, int *owner)
{
    for (size_t g = 0; g < pt->K; g++)
        owner[g] = -1;
    for (int k = 0; k < pt->n; k++)
        for (size_t g = ct_seg_bound(pt, k); g < ct_seg_bound(pt, k + 1) && g < pt->K; g++)
            owner[g] = k;
}

/* Does sender list[0..n) hold (peer, offset, bytes)? */
static int has_xfer(const ct_seg_xfer *list, int n, int peer, size_t offset, size_t bytes)
{
    for (int i = 0; i < n; i++)
        if (list[i].peer == peer && list[i].offset == offset && list[i].bytes == bytes)
            return 1;
    return 0;
}

/*
 * The whole check for one stream: the senders' blocks (nb of them, block j
 * is [prefix[j], prefix[j+1])), the partition the senders compute and the
 * one the receivers compute (they must agree). what names the case.
 */
static void check_stream(const ct_seg_part *send_view, const ct_seg_part *recv_view,
                         const size_t *prefix, int nb, int uniform, const char *what)
{
    const ct_seg_part *pt = send_view;
    const int n = pt->n;
    const size_t K = prefix[nb];
    ct_seg_blocks blocks = {nb, uniform ? prefix[1] : 0, uniform ? NULL : prefix};

    /* Mirror: both groups compute the same boundaries. */
    if (recv_view->n != n || recv_view->K != K || send_view->K != K)
        fail_msg("%s: views disagree on n or K", what);
    for (int k = 0; k <= n; k++)
        if (ct_seg_bound(send_view, k) != ct_seg_bound(recv_view, k))
            fail_msg("%s: bound(%d) differs between the groups", what, k);
    if (ct_seg_bound(pt, 0) != 0 || ct_seg_bound(pt, n) != K)
        fail_msg("%s: partition does not span [0, K=%zu)", what, K);
    for (int k = 0; k < n; k++)
        if (ct_seg_bound(pt, k) > ct_seg_bound(pt, k + 1))
            fail_msg("%s: bound(%d) > bound(%d)", what, k, k + 1);
    for (int j = 0; j < nb; j++)
        if (ct_seg_block_start(&blocks, j) != prefix[j])
            fail_msg("%s: block_start(%d)", what, j);

    int *owner = malloc((K ? K : 1) * sizeof *owner);
    int *sent = calloc(K ? K : 1, sizeof *sent);
    ct_seg_xfer **sends = calloc((size_t)nb, sizeof *sends);
    int *nsends = calloc((size_t)nb, sizeof *nsends);
    assert_true(owner && sent && sends && nsends);
    scan_owners(pt, owner);
    for (size_t g = 0; g < K; g++) {
        if (ct_seg_owner(pt, g) != owner[g])
            fail_msg("%s: owner(%zu) = %d, brute force %d", what, g, ct_seg_owner(pt, g),
                     owner[g]);
    }

    /* Senders: ascending receivers, the block covered once, right receivers. */
    for (int j = 0; j < nb; j++) {
        size_t lo = prefix[j], hi = prefix[j + 1];
        int ns = ct_seg_sends(pt, lo, hi, NULL);
        sends[j] = calloc((size_t)(ns ? ns : 1), sizeof **sends);
        assert_non_null(sends[j]);
        nsends[j] = ct_seg_sends(pt, lo, hi, sends[j]);
        assert_int_equal(nsends[j], ns);
        size_t at = lo;
        for (int i = 0; i < ns; i++) {
            const ct_seg_xfer *x = &sends[j][i];
            if (x->bytes == 0 || x->offset != at || x->peer < 0 || x->peer >= n)
                fail_msg("%s: sender %d send %d (peer %d, offset %zu, %zu bytes) bad", what, j,
                         i, x->peer, x->offset, x->bytes);
            if (i > 0 && x->peer <= sends[j][i - 1].peer)
                fail_msg("%s: sender %d: receivers not ascending", what, j);
            for (size_t g = x->offset; g < x->offset + x->bytes; g++) {
                if (owner[g] != x->peer)
                    fail_msg("%s: byte %zu sent by %d to %d, belongs to %d", what, g, j, x->peer,
                             owner[g]);
                sent[g]++;
            }
            at += x->bytes;
        }
        if (at != hi)
            fail_msg("%s: sender %d sends [%zu, %zu) of its block [%zu, %zu)", what, j, lo, at,
                     lo, hi);
    }
    for (size_t g = 0; g < K; g++)
        if (sent[g] != 1)
            fail_msg("%s: byte %zu sent %d times", what, g, sent[g]);

    /* Receivers, and the simulated exchange + intra-group allgatherv. */
    unsigned char *stream = malloc(K ? K : 1), *final = malloc(K ? K : 1);
    int *cover = calloc(K ? K : 1, sizeof *cover);
    ct_seg_xfer *recvs = calloc((size_t)nb, sizeof *recvs);
    assert_true(stream && final && cover && recvs);
    for (size_t g = 0; g < K; g++) {
        stream[g] = stream_byte(g);
        final[g] = 0xEE;
    }
    for (int k = 0; k < n; k++) {
        size_t s = ct_seg_bound(pt, k), e = ct_seg_bound(pt, k + 1);
        int nr = ct_seg_recvs(recv_view, k, &blocks, NULL);
        if (nr > nb)
            fail_msg("%s: receiver %d: %d receives from %d senders", what, k, nr, nb);
        assert_int_equal(ct_seg_recvs(recv_view, k, &blocks, recvs), nr);
        /* Exactly the messages addressed to k. */
        int expected = 0;
        for (int j = 0; j < nb; j++)
            for (int i = 0; i < nsends[j]; i++)
                expected += sends[j][i].peer == k;
        if (nr != expected)
            fail_msg("%s: receiver %d posts %d receives, %d messages sent to it", what, k, nr,
                     expected);
        size_t got = 0;
        for (int i = 0; i < nr; i++) {
            const ct_seg_xfer *x = &recvs[i];
            if (!has_xfer(sends[x->peer], nsends[x->peer], k, x->offset, x->bytes))
                fail_msg("%s: receiver %d expects (%d, %zu, %zu), never sent", what, k, x->peer,
                         x->offset, x->bytes);
            if (x->offset < s || x->offset + x->bytes > e)
                fail_msg("%s: receiver %d receives outside its segment", what, k);
            /* The exchange puts these bytes at receiver k, at their place in
             * the stream; the allgatherv (member k contributes [s, e) at
             * displacement s) carries them to the same place everywhere. */
            memcpy(final + x->offset, stream + x->offset, x->bytes);
            for (size_t g = x->offset; g < x->offset + x->bytes; g++)
                cover[g]++;
            got += x->bytes;
        }
        if (got != e - s)
            fail_msg("%s: receiver %d gets %zu bytes of its %zu", what, k, got, e - s);
        /* Section 4.1 order: the multi-target senders (more than one receiver)
         * among k's senders are at most the lowest and the highest; the
         * highest comes first, the lowest last, the others by rank between. */
        if (nr > 1) {
            int lo_j = recvs[0].peer, hi_j = recvs[0].peer;
            for (int i = 1; i < nr; i++) {
                lo_j = recvs[i].peer < lo_j ? recvs[i].peer : lo_j;
                hi_j = recvs[i].peer > hi_j ? recvs[i].peer : hi_j;
            }
            int hi_multi = nsends[hi_j] > 1, lo_multi = nsends[lo_j] > 1;
            int pos = 0;
            if (hi_multi && recvs[pos++].peer != hi_j)
                fail_msg("%s: receiver %d does not take multi-target sender %d first", what, k,
                         hi_j);
            int prev = -1;
            for (int i = pos; i < nr - lo_multi; i++) {
                int j = recvs[i].peer;
                if (j <= prev || (nsends[j] > 1 && j != lo_j && j != hi_j) ||
                    (hi_multi && j == hi_j) || (lo_multi && j == lo_j))
                    fail_msg("%s: receiver %d: sender %d out of order", what, k, j);
                prev = j;
            }
            if (lo_multi && recvs[nr - 1].peer != lo_j)
                fail_msg("%s: receiver %d does not take multi-target sender %d last", what, k,
                         lo_j);
        }
    }
    for (size_t g = 0; g < K; g++)
        if (cover[g] != 1)
            fail_msg("%s: byte %zu received %d times", what, g, cover[g]);
    if (K > 0 && memcmp(final, stream, K) != 0) {
        size_t g = 0;
        while (final[g] == stream[g])
            g++;
        fail_msg("%s: after the allgatherv byte %zu is 0x%02x, want 0x%02x", what, g, final[g],
                 stream[g]);
    }

    for (int j = 0; j < nb; j++)
        free(sends[j]);
    free(sends);
    free(nsends);
    free(owner);
    free(sent);
    free(stream);
    free(final);
    free(cover);
    free(recvs);
}

/* ------------------------------------------------------------------ */
/* Algorithm 1                                                         */
/* ------------------------------------------------------------------ */

/* Algorithm 1's shape: the larger group's ranks send whole blocks to one
 * partner each; subgroups have ceil/floor sizes; the smaller group's block j
 * goes to the members of s_j in pieces differing by at most one byte. */
static void check_alg1_shape(int p, size_t kA, int q, size_t align, const char *what)
{
    ct_seg_part pt = ct_seg_alg1(p, kA, q, align); /* p blocks among q receivers */
    if (p >= q) {
        size_t lo_sz = (size_t)(p / q) * kA, hi_sz = (size_t)((p + q - 1) / q) * kA;
        for (int k = 0; k < q; k++) {
            size_t sz = ct_seg_bound(&pt, k + 1) - ct_seg_bound(&pt, k);
            if (sz != lo_sz && sz != hi_sz)
                fail_msg("%s: receiver %d takes %zu bytes, not %zu or %zu", what, k, sz, lo_sz,
                         hi_sz);
            if (k > 0 && sz > ct_seg_bound(&pt, k) - ct_seg_bound(&pt, k - 1))
                fail_msg("%s: subgroup %d larger than subgroup %d", what, k, k - 1);
        }
        for (int j = 0; kA > 0 && j < p; j++)
            if (ct_seg_sends(&pt, (size_t)j * kA, (size_t)(j + 1) * kA, NULL) != 1)
                fail_msg("%s: block %d of the larger group is split", what, j);
    } else {
        /* Block j in units of align bytes (the last one may be short). */
        size_t units = (kA + align - 1) / align;
        for (int j = 0; j < p; j++) {
            ct_seg_xfer x[MAXG];
            int n = ct_seg_sends(&pt, (size_t)j * kA, (size_t)(j + 1) * kA, x);
            size_t sub = (size_t)(q / p + (j < q % p));
            if ((size_t)n != (units < sub ? units : sub))
                fail_msg("%s: block %d goes to %d receivers, subgroup has %zu", what, j, n, sub);
            size_t lo = units / sub * align, hi = (units + sub - 1) / sub * align;
            for (int i = 0; i < n; i++) {
                size_t b = x[i].bytes;
                int last = i == n - 1;
                if (b > hi || (!last && (b < lo || b % align != 0)) ||
                    (x[i].offset - (size_t)j * kA) % align != 0)
                    fail_msg("%s: block %d piece %d has %zu bytes at %zu", what, j, i, b,
                             x[i].offset);
            }
        }
    }
}

static void test_allgather_all_group_sizes(void **state)
{
    (void)state;
    static const size_t ks[] = {0, 1, 5, 24, 31, 200};
    static const size_t aligns[] = {1, 4, 64};
    const int nk = (int)(sizeof ks / sizeof ks[0]);
    size_t prefix[MAXG + 1];
    char what[160];
    for (int p = 1; p <= MAXG; p++) {
        for (int q = 1; q <= MAXG; q++) {
            for (int a = 0; a < nk; a++) {
                for (int b = 0; b < nk; b++) {
                    size_t kA = ks[a], kB = ks[b], al = aligns[(p + q + a + b) % 3];
                    /* Group A's view (it is local, B remote) and B's view. */
                    ct_seg_part a_local = ct_seg_alg1(p, kA, q, al);
                    ct_seg_part a_remote = ct_seg_alg1(q, kB, p, al);
                    ct_seg_part b_local = ct_seg_alg1(q, kB, p, al);
                    ct_seg_part b_remote = ct_seg_alg1(p, kA, q, al);
                    for (int j = 0; j <= p; j++)
                        prefix[j] = (size_t)j * kA;
                    snprintf(what, sizeof what, "allgather p=%d q=%d kA=%zu kB=%zu align=%zu, A->B",
                             p, q, kA, kB, al);
                    check_stream(&a_local, &b_remote, prefix, p, 1, what);
                    check_alg1_shape(p, kA, q, al, what);
                    for (int j = 0; j <= q; j++)
                        prefix[j] = (size_t)j * kB;
                    snprintf(what, sizeof what, "allgather p=%d q=%d kA=%zu kB=%zu align=%zu, B->A",
                             p, q, kA, kB, al);
                    check_stream(&b_local, &a_remote, prefix, q, 1, what);
                    check_alg1_shape(q, kB, p, al, what);
                }
            }
        }
    }
}

/* Fig. 2 of the paper: p = 8, q = 3 gives subgroups of 3, 3, 2. */
static void test_allgather_fig2(void **state)
{
    (void)state;
    ct_seg_part pt = ct_seg_alg1(8, 10, 3, 1);
    assert_int_equal(ct_seg_bound(&pt, 0), 0);
    assert_int_equal(ct_seg_bound(&pt, 1), 30);
    assert_int_equal(ct_seg_bound(&pt, 2), 60);
    assert_int_equal(ct_seg_bound(&pt, 3), 80);
    /* b_1's block of 10 bytes split among s_1 = {a_3, a_4, a_5}: 4, 3, 3. */
    ct_seg_part sp = ct_seg_alg1(3, 10, 8, 1);
    assert_int_equal(ct_seg_bound(&sp, 3), 10);
    assert_int_equal(ct_seg_bound(&sp, 4), 14);
    assert_int_equal(ct_seg_bound(&sp, 5), 17);
    assert_int_equal(ct_seg_bound(&sp, 6), 20);
    assert_int_equal(ct_seg_bound(&sp, 7), 25); /* s_2 = {a_6, a_7}: 5, 5 */
}

/* ------------------------------------------------------------------ */
/* Algorithm 2 (section 4.1)                                           */
/* ------------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

enum { NPATTERNS = 9 };
static const char *const pattern_names[NPATTERNS] = {
    "equal",     "arithmetic", "descending", "random",   "zero-heavy",
    "all-zero",  "one-nonzero", "one-huge",  "alternate-zero",
};

/* Counts (bytes) of n blocks after a pattern (paper settings 5-8 and zeros). */
static void pattern_counts(int pattern, int n, uint64_t seed, size_t *counts)
{
    uint64_t s = seed;
    int pick = (int)(rng_next(&s) % (uint64_t)n);
    for (int i = 0; i < n; i++) {
        switch (pattern) {
        case 0: counts[i] = 6; break;
        case 1: counts[i] = 3 * (size_t)i; break;
        case 2: counts[i] = 2 * (size_t)(n - i) + 1; break;
        case 3: counts[i] = rng_next(&s) % 41; break;
        case 4: counts[i] = rng_next(&s) % 5 == 0 ? 1 + rng_next(&s) % 60 : 0; break;
        case 5: counts[i] = 0; break;
        case 6: counts[i] = i == pick ? 1 + rng_next(&s) % 100 : 0; break;
        case 7: counts[i] = i == pick ? 300 : rng_next(&s) % 4; break;
        default: counts[i] = i % 2 ? 0 : 1 + rng_next(&s) % 17; break;
        }
    }
}

/* Section 4.1's balance: segments of floor or ceil of u/n units (u = K in
 * units of align), boundaries on unit multiples, the short unit last. */
static void check_even_shape(const ct_seg_part *pt, const char *what)
{
    size_t units = (pt->K + pt->align - 1) / pt->align, n = (size_t)pt->n;
    for (int k = 0; k < pt->n; k++) {
        size_t s = ct_seg_bound(pt, k), e = ct_seg_bound(pt, k + 1);
        size_t lo = units / n, hi = (units + n - 1) / n;
        if (s % pt->align != 0 && s != pt->K)
            fail_msg("%s: boundary %d at %zu is not a multiple of %zu", what, k, s, pt->align);
        if (e - s > hi * pt->align || (e < pt->K && e - s < lo * pt->align))
            fail_msg("%s: segment %d has %zu bytes (units %zu..%zu of %zu)", what, k, e - s, lo,
                     hi, pt->align);
    }
}

static void test_allgatherv_all_group_sizes(void **state)
{
    (void)state;
    size_t cA[MAXG], cB[MAXG], prefA[MAXG + 1], prefB[MAXG + 1];
    char what[200];
    for (int p = 1; p <= MAXG; p++) {
        for (int q = 1; q <= MAXG; q++) {
            for (int pa = 0; pa < NPATTERNS; pa++) {
                static const int shifts[] = {0, 4, 5};
                for (int si = 0; si < 3; si++) {
                    int pb = (pa + shifts[si]) % NPATTERNS;
                    uint64_t seed = (uint64_t)(p * 1000 + q * 10 + pa) * 31 + (uint64_t)si;
                    pattern_counts(pa, p, seed, cA);
                    pattern_counts(pb, q, seed ^ 0xABCDEFu, cB);
                    prefA[0] = prefB[0] = 0;
                    for (int j = 0; j < p; j++)
                        prefA[j + 1] = prefA[j] + cA[j];
                    for (int j = 0; j < q; j++)
                        prefB[j + 1] = prefB[j] + cB[j];
                    /* A's senders know K_A by allreduce, B's receivers by summing
                     * their recvcounts: both cut K_A evenly among q. */
                    size_t al = si == 0 ? 1 : si == 1 ? 8 : 64;
                    ct_seg_part a_send = ct_seg_even(prefA[p], q, al);
                    ct_seg_part b_recv = ct_seg_even(prefA[p], q, al);
                    ct_seg_part b_send = ct_seg_even(prefB[q], p, al);
                    ct_seg_part a_recv = ct_seg_even(prefB[q], p, al);
                    snprintf(what, sizeof what, "allgatherv p=%d q=%d A %s B %s align %zu, A->B",
                             p, q, pattern_names[pa], pattern_names[pb], al);
                    check_stream(&a_send, &b_recv, prefA, p, 0, what);
                    check_even_shape(&a_send, what);
                    snprintf(what, sizeof what, "allgatherv p=%d q=%d A %s B %s align %zu, B->A",
                             p, q, pattern_names[pa], pattern_names[pb], al);
                    check_stream(&b_send, &a_recv, prefB, q, 0, what);
                    check_even_shape(&b_send, what);
                }
            }
        }
    }
}

/* Fig. 3 of the paper (p = 6, q = 2 in a shape where a_2 and a_3 both reach
 * b_1, a_3 reaching two receivers): b_1 takes the higher multi-target sender
 * first. Blocks 4, 4, 4, 9, 1 over 3 receivers: segments of 8, 7, 7 bytes. */
static void test_allgatherv_order_example(void **state)
{
    (void)state;
    size_t prefix[] = {0, 4, 8, 12, 21, 22};
    ct_seg_part pt = ct_seg_even(22, 3, 1); /* [0,8) [8,15) [15,22) */
    ct_seg_blocks b = {5, 0, prefix};
    ct_seg_xfer x[5];
    /* receiver 1: a_2 (exclusive [8,12)) and a_3 ([12,15), multi-target, higher) */
    assert_int_equal(ct_seg_recvs(&pt, 1, &b, x), 2);
    assert_int_equal(x[0].peer, 3);
    assert_int_equal(x[0].offset, 12);
    assert_int_equal(x[0].bytes, 3);
    assert_int_equal(x[1].peer, 2);
    /* receiver 2: a_3 ([15,21), multi-target, lower) after a_4 ([21,22)) */
    assert_int_equal(ct_seg_recvs(&pt, 2, &b, x), 2);
    assert_int_equal(x[0].peer, 4);
    assert_int_equal(x[1].peer, 3);
    assert_int_equal(x[1].bytes, 6);
    /* a_3 sends to receivers 1 then 2 */
    assert_int_equal(ct_seg_sends(&pt, 12, 21, x), 2);
    assert_int_equal(x[0].peer, 1);
    assert_int_equal(x[1].peer, 2);
}

/* A stream shorter than the number of receivers: one byte each to the
 * first K receivers, nothing to the others. */
static void test_even_short_stream(void **state)
{
    (void)state;
    ct_seg_part pt = ct_seg_even(3, 7, 1);
    for (int k = 0; k <= 7; k++)
        assert_int_equal(ct_seg_bound(&pt, k), k < 3 ? (size_t)k : 3);
    assert_int_equal(ct_seg_owner(&pt, 2), 2);
    /* 130 bytes in units of 64 among 4: 64, 64, 2, 0. */
    ct_seg_part al = ct_seg_even(130, 4, 64);
    assert_int_equal(ct_seg_bound(&al, 1), 64);
    assert_int_equal(ct_seg_bound(&al, 2), 128);
    assert_int_equal(ct_seg_bound(&al, 3), 130);
    assert_int_equal(ct_seg_bound(&al, 4), 130);
    assert_int_equal(ct_seg_owner(&al, 129), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allgather_fig2),
        cmocka_unit_test(test_even_short_stream),
        cmocka_unit_test(test_allgatherv_order_example),
        cmocka_unit_test(test_allgather_all_group_sizes),
        cmocka_unit_test(test_allgatherv_all_group_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
