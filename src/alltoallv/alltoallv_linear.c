/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_linear.c - linear exchange in ascending rank order (Open MPI's
 * basic linear Alltoallv; [Fan2024] section II(d)).
 *
 * All receives are posted for ranks 0, 1, ..., P-1, then all sends in the
 * same order, and one Waitall completes them. Unlike spread-out, every rank
 * targets rank 0 first, which concentrates traffic; it is here because it is
 * what many installed MPI libraries do, and it is fast for small P.
 *
 * One round (core/sched.h). Nonblocking: every message is posted and the
 * own block copied at start; the rest moves as the MPI library progresses,
 * and completion only waits.
 */
#include "alltoallv/a2av_p2p.h"

int ct_alltoallv_linear_build(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params,
                              ct_sched *s)
{
    (void)params;
    int rc;
    ct_a2av x;
    const int P = ctx->size, p = ctx->rank;
    CT_CALL(ct_a2av_prepare(&x, a, ctx));
    CT_CALL(ct_sched_reserve(s, 2 * P, 1));
    ct_sched_round(s, 0);
    for (int j = 0; j < P; j++)
        if (j != p)
            ct_a2av_sched_recv(&x, s, j);
    for (int j = 0; j < P; j++)
        if (j != p)
            ct_a2av_sched_send(&x, s, j);
    ct_a2av_sched_self(&x, s);
out:
    return rc;
}
