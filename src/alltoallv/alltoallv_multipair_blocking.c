/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_multipair_blocking.c - multi-pair blocking exchange
 * ([Namugwanya2023] Algorithm 3).
 *
 * Pairwise order (step i: send to (p + i) mod P, receive from (p - i) mod P),
 * but stride steps are started together and completed with one Waitall
 * before the next group. The listing waits when "i mod stride == 0", which
 * at i = 0 would wait after a single step; the prose (groups of stride
 * exchanges) is followed here: a group ends after every stride-th step and
 * at the last step.
 *
 * A round per group (core/sched.h). Nonblocking: the own block and the
 * first group at start, each later group when the test or wait that finds
 * the one before complete.
 */
#include "alltoallv/a2av_p2p.h"

int ct_alltoallv_multipair_blocking_build(const ct_alltoallv_args *a, ct_ctx *ctx,
                                          const long *params, ct_sched *s)
{
    int rc;
    ct_a2av x;
    const int P = ctx->size, p = ctx->rank;
    const int stride = (int)params[0];
    CT_CALL(ct_a2av_prepare(&x, a, ctx));
    CT_CALL(ct_sched_reserve(s, 2 * P, 1 + (P - 1 + stride - 1) / stride));
    ct_sched_round(s, 0);
    ct_a2av_sched_self(&x, s);
    for (int i = 1; i < P; i++) {
        if ((i - 1) % stride == 0)
            ct_sched_round(s, 0);
        ct_a2av_sched_send(&x, s, (p + i) % P);
        ct_a2av_sched_recv(&x, s, (p - i + P) % P);
    }
out:
    return rc;
}
