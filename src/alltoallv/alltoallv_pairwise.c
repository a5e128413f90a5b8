/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_pairwise.c - pairwise exchange ([Namugwanya2023] Algorithm 1).
 *
 * P-1 steps: at step i rank p sends block (p + i) mod P to that rank and
 * receives from (p - i) mod P with one MPI_Sendrecv, so a rank has a single
 * message in flight in each direction; step 0, its own block, is a local
 * copy. Cost: sum over steps of (alpha + beta * larger block of the step);
 * every step waits for its slowest partner. No extra memory.
 */
#include "alltoallv/a2av_p2p.h"

int ct_alltoallv_pairwise(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params)
{
    (void)params;
    int rc;
    ct_a2av x;
    const int P = ctx->size, p = ctx->rank;
    CT_CALL(ct_a2av_prepare(&x, a, ctx));
    CT_CALL(ct_a2av_self_copy(&x));
    for (int i = 1; i < P; i++)
        CT_CALL(ct_a2av_sendrecv(&x, (p + i) % P, (p - i + P) % P));
out:
    return rc;
}
