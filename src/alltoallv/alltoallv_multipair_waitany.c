/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_multipair_waitany.c - multi-pair non-blocking exchange (paper
 * 004, Algorithm 4).
 *
 * stride sends and stride receives in flight in pairwise order; MPI_Waitany
 * returns whichever completes first and the next exchange in that direction
 * starts in its slot, so one slow partner does not hold up the others.
 * The window itself is shared with Algorithm 5 (ct_a2av_window).
 */
#include "alltoallv/a2av_p2p.h"

static int wait_any(int n, MPI_Request *reqs, int *idx)
{
    return PMPI_Waitany(n, reqs, idx, MPI_STATUS_IGNORE);
}

int ct_alltoallv_multipair_waitany(const ct_alltoallv_args *a, ct_ctx *ctx,
                                   const long *params)
{
    int rc;
    ct_a2av x;
    CT_CALL(ct_a2av_prepare(&x, a, ctx));
    CT_CALL(ct_a2av_window(&x, (int)params[0], wait_any));
out:
    return rc;
}
