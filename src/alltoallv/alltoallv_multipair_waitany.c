/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_multipair_waitany.c - multi-pair non-blocking exchange
 * ([Namugwanya2023] Algorithm 4).
 *
 * stride sends and stride receives in flight in pairwise order; MPI_Waitany
 * returns whichever completes first and the next exchange in that direction
 * starts in its slot, so one slow partner does not hold up the others.
 *
 * One round with a window of stride (core/sched.h, shared with Algorithm 5:
 * ct_a2av_sched_window). Nonblocking: the first stride exchanges of each
 * direction and the own block at start, the next ones as the tests and
 * waits find slots free.
 */
#include "alltoallv/a2av_p2p.h"

int ct_alltoallv_multipair_waitany_build(const ct_alltoallv_args *a, ct_ctx *ctx,
                                         const long *params, ct_sched *s)
{
    return ct_a2av_sched_window(a, ctx, (int)params[0], CT_POLL_WAITANY, s);
}
