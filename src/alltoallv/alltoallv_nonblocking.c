/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_nonblocking.c - non-blocking spread-out exchange
 * ([Namugwanya2023] Algorithm 2; [Fan2024] section II(d), "spread-out").
 *
 * Every receive is posted first, then every send, both in spread-out order:
 * at step i rank p receives from (p - i) mod P and sends to (p + i) mod P, so
 * in any step each rank is the target of exactly one message. One Waitall.
 * Tolerates late ranks, at the price of up to 2(P-1) requests in flight.
 *
 * One round (core/sched.h). Nonblocking: every message is posted and the
 * own block copied at start; completion only waits.
 */
#include "alltoallv/a2av_p2p.h"

int ct_alltoallv_nonblocking_build(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params,
                                   ct_sched *s)
{
    (void)params;
    int rc;
    ct_a2av x;
    const int P = ctx->size, p = ctx->rank;
    CT_CALL(ct_a2av_prepare(&x, a, ctx));
    CT_CALL(ct_sched_reserve(s, 2 * P, 1));
    ct_sched_round(s, 0);
    for (int i = 1; i < P; i++)
        ct_a2av_sched_recv(&x, s, (p - i + P) % P);
    for (int i = 1; i < P; i++)
        ct_a2av_sched_send(&x, s, (p + i) % P);
    ct_a2av_sched_self(&x, s);
out:
    return rc;
}
