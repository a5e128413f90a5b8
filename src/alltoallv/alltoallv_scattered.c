/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_scattered.c - MPICH's scattered Alltoallv ([Fan2024] section
 * II(d)): spread-out order in batches of block_count peers.
 *
 * Steps 1..P-1 are cut into batches of block_count consecutive steps. For a
 * batch, the receives from (p + s) mod P are posted, then the sends to
 * (p - s) mod P, and the batch is completed with one Waitall before the next
 * starts; this bounds the requests in flight (and network congestion) to
 * 2 * block_count. block_count >= P-1 is the plain non-blocking spread-out.
 *
 * A round per batch (core/sched.h). Nonblocking: the own block and the
 * first batch at start, each later batch when the test or wait that finds
 * the one before complete.
 */
#include "alltoallv/a2av_p2p.h"

int ct_alltoallv_scattered_build(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params,
                                 ct_sched *s)
{
    int rc;
    ct_a2av x;
    const int P = ctx->size, p = ctx->rank;
    const int block_count = (int)params[0];
    CT_CALL(ct_a2av_prepare(&x, a, ctx));
    CT_CALL(ct_sched_reserve(s, 2 * P, 1 + (P - 1 + block_count - 1) / block_count));
    ct_sched_round(s, 0);
    ct_a2av_sched_self(&x, s);
    for (int first = 1; first < P; first += block_count) {
        const int ss = P - first < block_count ? P - first : block_count;
        ct_sched_round(s, 0);
        for (int i = 0; i < ss; i++)
            ct_a2av_sched_recv(&x, s, (p + first + i) % P);
        for (int i = 0; i < ss; i++)
            ct_a2av_sched_send(&x, s, (p - first - i + P) % P);
    }
out:
    return rc;
}
