/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_multipair_testany.c - multi-pair test exchange
 * ([Namugwanya2023] Algorithm 5).
 *
 * As Algorithm 4, but completion is polled with MPI_Testany instead of
 * blocking in MPI_Waitany: the loop keeps driving progress and refills a slot
 * as soon as any request is seen complete.
 */
#include "alltoallv/a2av_p2p.h"

/* Polls until some request completes, or all are null (idx = MPI_UNDEFINED). */
static int test_any(int n, MPI_Request *reqs, int *idx)
{
    int flag = 0, rc = MPI_SUCCESS;
    while (!flag && rc == MPI_SUCCESS)
        rc = PMPI_Testany(n, reqs, idx, &flag, MPI_STATUS_IGNORE);
    return rc;
}

int ct_alltoallv_multipair_testany(const ct_alltoallv_args *a, ct_ctx *ctx,
                                   const long *params)
{
    int rc;
    ct_a2av x;
    CT_CALL(ct_a2av_prepare(&x, a, ctx));
    CT_CALL(ct_a2av_window(&x, (int)params[0], test_any));
out:
    return rc;
}
