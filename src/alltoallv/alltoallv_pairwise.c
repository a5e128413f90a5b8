/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_pairwise.c - pairwise exchange ([Namugwanya2023] Algorithm 1).
 *
 * P-1 steps: at step i rank p sends block (p + i) mod P to that rank and
 * receives from (p - i) mod P, a rank having a single message in flight in
 * each direction; step 0, its own block, is a local copy. Cost: sum over
 * steps of (alpha + beta * larger block of the step); every step waits for
 * its slowest partner. No extra memory.
 *
 * A round per step (core/sched.h; a step with both blocks empty joins the
 * next). Nonblocking: the copy and step 1 at start, each later step when
 * the test or wait that finds the one before complete.
 */
#include "alltoallv/a2av_p2p.h"

int ct_alltoallv_pairwise_build(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params,
                                ct_sched *s)
{
    (void)params;
    int rc;
    ct_a2av x;
    const int P = ctx->size, p = ctx->rank;
    CT_CALL(ct_a2av_prepare(&x, a, ctx));
    CT_CALL(ct_sched_reserve(s, 2 * P, P));
    ct_sched_round(s, 0);
    ct_a2av_sched_self(&x, s);
    for (int i = 1; i < P; i++) {
        ct_sched_round(s, 0);
        ct_a2av_sched_send(&x, s, (p + i) % P);
        ct_a2av_sched_recv(&x, s, (p - i + P) % P);
    }
out:
    return rc;
}
