/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allgatherv_inter_segmented.c - intercommunicator Allgatherv by byte-index
 * segmentation ([Kang2019] Algorithm 2 and section 4.1).
 *
 * Every byte of a group's blocks gets a global index: the blocks of ranks
 * 0, 1, ... back to back (the group's stream, K_A = sum k_{A,i} bytes).
 * Group A's stream is cut into q segments, B's into p, of floor(K/n) or
 * ceil(K/n) bytes (the first K mod n one byte longer); a rank sends the part
 * of its block that falls in segment k to rank k of the other group
 * (boundaries are rounded to cache lines: CT_SEG_ALIGN in segments.h). A
 * large block is thus spread over several receivers (a "multi-target
 * sender"), and several small ones share one. Then one in-place allgatherv
 * per group (on ctx->local_comm) over the received segments completes the
 * stream, which is already in rank order.
 *
 * What each rank needs to know (section 4.1): as a sender, its group's total
 * K and the prefix R of the blocks before its own, by one Allreduce and one
 * Exscan inside the group (run together, non-blocking); as a receiver, the
 * remote blocks, which recvcounts give. (Algorithm 2's listing garbles these
 * index sets; the prose is followed here.)
 *
 * Receive order (section 4.1): a receiver takes the higher-rank
 * multi-target sender first, then the senders whose blocks lie inside its
 * segment by rank, then the lower-rank multi-target sender, one at a time;
 * a sender serves its receivers by rank. So a multi-target sender's first
 * receiver takes it at once and its last one after the others, and every
 * receiver stays busy (Theorem 3's proof).
 *
 * Cost (Theorem 3): transfer time M + (max(max k_A, max k_B) + log(pq)) t_w
 * with M = max(K_A, K_B) t_w, against about M + 3(K_A + K_B) t_w for root
 * gathering (section 3.1, Eq. 2).
 *
 * Works on the byte view (CT_A_BYTES, see allgather_inter.h): blocks of any
 * committed datatype are cut at byte granularity of their packed form, and
 * the driver honours the user's displacements (in place when they already
 * put the blocks back to back in rank order, else by one copy per block).
 */
#include "allgather_inter/ag_exchange.h"
#include "core/sched.h"

#include <stdlib.h>

/*
 * Algorithm 2's plan: the group's total and this rank's prefix agreed in
 * the local group (one Iallreduce and one Iexscan, run together), the
 * remote blocks' global indices from recvcounts into prefix ([nremote + 1],
 * the caller's until the plan is built). In a nonblocking call or at a
 * persistent init this agreement runs in the call, as the decision's does.
 */
static int plan_of(const ct_allgatherv_args *a, ct_ctx *ctx, const long *params, size_t *prefix,
                   ct_ag_plan *plan)
{
    int rc;
    const int nremote = ctx->remote_size;
    long long mine = (long long)a->sendcount, K_local = 0, R = 0;
    MPI_Request reqs[2];
    /* Lines 1-2: the group's total; section 4.1: this rank's prefix. */
    CT_CALL(PMPI_Iallreduce(&mine, &K_local, 1, MPI_LONG_LONG, MPI_SUM, ctx->local_comm,
                            &reqs[0]));
    CT_CALL(PMPI_Iexscan(&mine, &R, 1, MPI_LONG_LONG, MPI_SUM, ctx->local_comm, &reqs[1]));
    /* Meanwhile: the remote blocks' global indices, from recvcounts (bytes). */
    prefix[0] = 0;
    for (int j = 0; j < nremote; j++)
        prefix[j + 1] = prefix[j] + (size_t)ct_vec_at(&a->recvcounts, j);
    CT_CALL(PMPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    if (ctx->rank == 0)
        R = 0; /* Exscan leaves rank 0's result undefined */
    *plan = (ct_ag_plan){
        .send = a->sendbuf,
        .lo = (size_t)R,
        .hi = (size_t)(R + mine),
        /* Lines 3-11 / 15-21: segment boundaries at i*floor(K/n) + min(i, K mod n),
         * in units of a cache line (CT_SEG_ALIGN, segments.h). */
        .local = ct_seg_even((size_t)K_local, nremote, CT_SEG_ALIGN),
        .recv = a->recvbuf, /* the byte view: displs are the prefix sums */
        .remote = ct_seg_even(prefix[nremote], ctx->size, CT_SEG_ALIGN),
        .remote_blocks = {nremote, 0, prefix},
        .ordered = 1,
        .linear = (int)params[0],
    };
out:
    return rc;
}

/* The blocking call (s NULL) or a request's schedule (s). */
static int segmented(const ct_allgatherv_args *a, ct_ctx *ctx, const long *params, ct_sched *s)
{
    int rc = MPI_SUCCESS;
    const size_t bytes = ((size_t)ctx->remote_size + 1) * sizeof(size_t);
    size_t *prefix = NULL;
    ct_ag_plan plan;
    CT_ALLOC(prefix, bytes);
    if (s == NULL)
        ctx->call_extra += bytes;
    CT_CALL(plan_of(a, ctx, params, prefix, &plan));
    if (s == NULL)
        CT_CALL(ct_ag_segmented_exchange(ctx, &plan));
    else
        CT_CALL(ct_ag_segmented_build(ctx, &plan, s));
out:
    free(prefix);
    return rc;
}

int ct_allgatherv_inter_segmented(const ct_allgatherv_args *a, ct_ctx *ctx, const long *params)
{
    return segmented(a, ctx, params, NULL);
}

/* The nonblocking and persistent forms: the same two rounds, the sums agreed
 * in the call (plan_of); at the start this rank's pieces and its first
 * receive, at each test or wait the next receive, then the intra-group
 * round. */
int ct_allgatherv_inter_segmented_build(const ct_allgatherv_args *a, ct_ctx *ctx,
                                        const long *params, ct_sched *s)
{
    return segmented(a, ctx, params, s);
}
