/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_nonblocking.c - non-blocking spread-out exchange
 * ([Namugwanya2023] Algorithm 2; [Fan2024] section II(d), "spread-out").
 *
 * Every receive is posted first, then every send, both in spread-out order:
 * at step i rank p receives from (p - i) mod P and sends to (p + i) mod P, so
 * in any step each rank is the target of exactly one message. One Waitall.
 * Tolerates late ranks, at the price of up to 2(P-1) requests in flight.
 */
#include "alltoallv/a2av_p2p.h"

int ct_alltoallv_nonblocking(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params)
{
    (void)params;
    int rc;
    ct_a2av x;
    const int P = ctx->size, p = ctx->rank;
    MPI_Request *reqs = ct_ctx_requests(ctx, 2 * P);
    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    CT_CALL(ct_a2av_prepare(&x, a, ctx));
    for (int i = 1; i < P; i++)
        CT_CALL(ct_a2av_irecv(&x, (p - i + P) % P, &reqs[i - 1]));
    for (int i = 1; i < P; i++)
        CT_CALL(ct_a2av_isend(&x, (p + i) % P, &reqs[P - 1 + i - 1]));
    CT_CALL(ct_a2av_self_copy(&x));
    CT_CALL(PMPI_Waitall(2 * (P - 1), reqs, MPI_STATUSES_IGNORE));
out:
    return rc;
}
