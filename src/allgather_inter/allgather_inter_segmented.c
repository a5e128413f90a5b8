/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allgather_inter_segmented.c - intercommunicator Allgather by message
 * segmentation ([Kang2019] Algorithm 1, section 4).
 *
 * Let A be the larger group (p ranks, blocks of k_A bytes) and B the smaller
 * (q <= p ranks, k_B bytes). A is cut into q subgroups s_0..s_{q-1} of
 * consecutive ranks, the first p mod q of ceil(p/q) ranks, the others of
 * floor(p/q). Every a_i sends its whole block to the one b_j whose subgroup
 * holds it; every b_j cuts its block into |s_j| nearly equal segments and
 * sends the t-th to the t-th member of s_j. Blocks and segments thus arrive
 * in rank order: b_j holds A's blocks of s_j, a_i one segment of B's
 * stream. One in-place allgather(v) inside each group (concurrently, on
 * ctx->local_comm) completes both: A gathers B's segments, B gathers A's
 * subgroups. No reordering, no copy: on the byte view the data lands in the
 * user's receive buffer.
 *
 * Cost (Theorem 1): transfer time (max(p k_A, q k_B) + k_B) t_w, against
 * about (M + 3 p k_A + 3 q k_B) t_w for the root gathering of the MPI
 * libraries (section 3.1, Eq. 2); startup ceil(p/q) t_s for the exchange
 * plus log(p) t_s for the allgathers.
 *
 * Both groups run this same code and compute mirror schedules from values
 * both know (p, q, k_A from B's recvcount, k_B from A's recvcount): nothing
 * is communicated but the data. p == q degenerates to a_i <-> b_i, whole
 * blocks both ways. The segment arithmetic is in segments.c.
 *
 * Works on the byte view (CT_A_BYTES, see allgather_inter.h): the driver
 * packs non-contiguous types, so segments are cut at byte granularity of
 * the packed form, rounded to cache lines (CT_SEG_ALIGN, segments.h).
 */
#include "allgather_inter/ag_exchange.h"
#include "core/sched.h"

/* Algorithm 1's plan: from values both groups know. */
static ct_ag_plan plan_of(const ct_allgather_args *a, const ct_ctx *ctx, const long *params)
{
    const size_t k_local = (size_t)a->sendcount, k_remote = (size_t)a->recvcount;
    ct_ag_plan plan = {
        .send = a->sendbuf,
        .lo = (size_t)ctx->rank * k_local,
        .hi = (size_t)(ctx->rank + 1) * k_local,
        /* Section 4: whichever group is larger sends whole blocks to its
         * subgroup's partner; the smaller one splits its blocks. ct_seg_alg1
         * picks the case from the sizes, identically on both sides. */
        .local = ct_seg_alg1(ctx->size, k_local, ctx->remote_size, CT_SEG_ALIGN),
        .recv = a->recvbuf,
        .remote = ct_seg_alg1(ctx->remote_size, k_remote, ctx->size, CT_SEG_ALIGN),
        .remote_blocks = {ctx->remote_size, k_remote, NULL},
        /* A receiver gets whole blocks from its subgroup, or one segment from
         * one sender: there are no multi-target senders to order. */
        .ordered = 0,
        .linear = (int)params[0],
    };
    return plan;
}

int ct_allgather_inter_segmented(const ct_allgather_args *a, ct_ctx *ctx, const long *params)
{
    const ct_ag_plan plan = plan_of(a, ctx, params);
    return ct_ag_segmented_exchange(ctx, &plan);
}

/* The nonblocking and persistent forms: the same two rounds; at the start
 * this rank's pieces and its segment's receives, at each test or wait the
 * intra-group round once they have completed. */
int ct_allgather_inter_segmented_build(const ct_allgather_args *a, ct_ctx *ctx,
                                       const long *params, ct_sched *s)
{
    const ct_ag_plan plan = plan_of(a, ctx, params);
    return ct_ag_segmented_build(ctx, &plan, s);
}
