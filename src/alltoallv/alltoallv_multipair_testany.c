/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_multipair_testany.c - multi-pair test exchange
 * ([Namugwanya2023] Algorithm 5).
 *
 * As Algorithm 4, but completion is polled with MPI_Testany instead of
 * blocking in MPI_Waitany: the loop keeps driving progress and refills a slot
 * as soon as any request is seen complete.
 *
 * The same windowed round as Algorithm 4 (ct_a2av_sched_window); only a
 * blocking wait differs (CT_POLL_TESTANY). Nonblocking: as Algorithm 4.
 */
#include "alltoallv/a2av_p2p.h"

int ct_alltoallv_multipair_testany_build(const ct_alltoallv_args *a, ct_ctx *ctx,
                                         const long *params, ct_sched *s)
{
    return ct_a2av_sched_window(a, ctx, (int)params[0], CT_POLL_TESTANY, s);
}
