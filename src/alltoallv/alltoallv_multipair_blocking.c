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
 */
#include "alltoallv/a2av_p2p.h"

int ct_alltoallv_multipair_blocking(const ct_alltoallv_args *a, ct_ctx *ctx,
                                    const long *params)
{
    int rc, n = 0;
    ct_a2av x;
    const int P = ctx->size, p = ctx->rank;
    const int stride = (int)params[0];
    MPI_Request *reqs = ct_ctx_requests(ctx, 2 * stride);
    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    CT_CALL(ct_a2av_prepare(&x, a, ctx));
    CT_CALL(ct_a2av_self_copy(&x));
    for (int i = 1; i < P; i++) {
        CT_CALL(ct_a2av_isend(&x, (p + i) % P, &reqs[n++]));
        CT_CALL(ct_a2av_irecv(&x, (p - i + P) % P, &reqs[n++]));
        if (i % stride == 0 || i == P - 1) {
            CT_CALL(PMPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
            n = 0;
        }
    }
out:
    return rc;
}
