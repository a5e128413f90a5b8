/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_linear.c - linear exchange in ascending rank order (Open MPI's
 * basic linear Alltoallv; [Fan2024] section II(d)).
 *
 * All receives are posted for ranks 0, 1, ..., P-1, then all sends in the
 * same order, and one Waitall completes them. Unlike spread-out, every rank
 * targets rank 0 first, which concentrates traffic; it is here because it is
 * what many installed MPI libraries do, and it is fast for small P.
 */
#include "alltoallv/a2av_p2p.h"

int ct_alltoallv_linear(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params)
{
    (void)params;
    int rc, n = 0;
    ct_a2av x;
    const int P = ctx->size, p = ctx->rank;
    MPI_Request *reqs = ct_ctx_requests(ctx, 2 * P);
    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    CT_CALL(ct_a2av_prepare(&x, a, ctx));
    for (int j = 0; j < P; j++)
        if (j != p)
            CT_CALL(ct_a2av_irecv(&x, j, &reqs[n++]));
    for (int j = 0; j < P; j++)
        if (j != p)
            CT_CALL(ct_a2av_isend(&x, j, &reqs[n++]));
    CT_CALL(ct_a2av_self_copy(&x));
    CT_CALL(PMPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
out:
    return rc;
}
