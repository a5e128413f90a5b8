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
 */
#include "alltoallv/a2av_p2p.h"

int ct_alltoallv_scattered(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params)
{
    int rc;
    ct_a2av x;
    const int P = ctx->size, p = ctx->rank;
    const int block_count = (int)params[0];
    MPI_Request *reqs = ct_ctx_requests(ctx, 2 * block_count);
    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    CT_CALL(ct_a2av_prepare(&x, a, ctx));
    CT_CALL(ct_a2av_self_copy(&x));
    for (int first = 1; first < P; first += block_count) {
        int ss = P - first < block_count ? P - first : block_count;
        for (int i = 0; i < ss; i++)
            CT_CALL(ct_a2av_irecv(&x, (p + first + i) % P, &reqs[i]));
        for (int i = 0; i < ss; i++)
            CT_CALL(ct_a2av_isend(&x, (p - first - i + P) % P, &reqs[ss + i]));
        CT_CALL(PMPI_Waitall(2 * ss, reqs, MPI_STATUSES_IGNORE));
    }
out:
    return rc;
}
