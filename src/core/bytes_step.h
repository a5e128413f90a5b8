/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bytes_step.h - a request's byte view (CT_A_BYTES): an algorithm's
 * schedule on the bytes of a call (ct_bytes_pair), as one step of the
 * request's schedule, whose non-contiguous sides are staged in memory of the
 * request's own: the send side packed at each start, the receive side
 * unpacked at completion; none where both sides are contiguous, seen in
 * place. The Alltoall(v) and neighbourhood drivers use it.
 */
#ifndef CT_BYTES_STEP_H
#define CT_BYTES_STEP_H

#include "core/context.h"
#include "core/datatype.h"
#include "core/sched.h"

typedef struct ct_bytes_step {
    ct_bytes_pair v; /* the byte view, taken from the caller (ct_bytes_step_begin) */
    ct_sched inner;  /* the algorithm's schedule on it: the caller builds it */
    MPI_Comm comm;
    int pack_recv; /* the receive side is packed at each start too (blocks that
                      no one sends to are unpacked unchanged) */
} ct_bytes_step;

/* Where a request's algorithm builds its schedule on the byte view *v (the
 * caller's, initialised): on a view in place (ct_bytes_pair_in_place: the
 * call's own buffers and arrays, which MPI keeps as they are while the
 * request needs them), on s itself (*step NULL), with no step to pack and
 * unpack nothing; else a new step takes *v (the caller's is then empty) and
 * the algorithm builds on its inner schedule. ct_bytes_step_end then adds
 * the step. */
int ct_bytes_step_begin(ct_sched *s, ct_ctx *ctx, ct_bytes_pair *v, ct_bytes_step **step,
                        ct_sched **into);
/* The step of ct_bytes_step_begin, its schedule built with rc: added to s
 * (none: rc). */
int ct_bytes_step_end(ct_sched *s, ct_bytes_step *step, int rc);

#endif
