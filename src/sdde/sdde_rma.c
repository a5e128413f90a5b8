/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdde_rma.c - the one-sided constant-size sparse dynamic data exchange
 * ([Geyko2023] section IV-C, Algorithm 3; as in Cellar),
 * MPIX_Alltoall_crs only.
 *
 * Every rank exposes a window with one slot per origin rank (the paper's
 * proc_vals[num_procs x sendcount]) and puts each of its messages into slot
 * "rank" of its destination, between two fences. The paper then takes every
 * slot whose value is non-zero as a message; here each slot has a flag the
 * origin also puts (the message's byte count + 1), so a message of zeros, or
 * of zero elements, is still a message. The reader clears the flags it has
 * read, so the window is ready for the next call without a third fence: the
 * next call's opening fence ends the epoch this call's closing fence opened,
 * and so waits until every rank has read its slots.
 *
 * The window is created once per communicator (MPI_Win_allocate, collective)
 * and cached; a call whose slots do not fit grows it, collectively: the slot
 * size is the decision's msg_size (largest message any rank sends), on which
 * every rank agrees, so every rank grows it in the same call.
 *
 * Where the window cannot be made (Open MPI 4.1 has no one-sided transport
 * between hosts over TCP: MPI_Win_allocate fails with MPI_ERR_WIN), every
 * rank learns it in the same call (one allreduce, only in a call that makes
 * the window), and that call and every later one on the communicator are
 * served by the personalized exchange.
 *
 * Cost: two fences (each about a barrier) and one put pair per message, no
 * matching and no probing; O(P * msg_size) window memory per rank. Messages
 * arrive already ordered by source.
 */
#include "sdde/sdde_exchange.h"
#include "core/log.h"
#include "algorithms.h"

#include <stdlib.h>
#include <string.h>

static size_t round8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Window sizes are whole multiples of WIN_ALIGN bytes. MPICH 4.0.2 (ch4,
 * one node) misplaces puts into a window of MPI_Win_allocate whose size is
 * 8 modulo 16: at P = 2 a put to rank 1 at displacement d lands 8 bytes
 * before it (rank 1 of a 40-byte window saw disp 8 at 0, disp 0 in rank 0's
 * window), which lost and garbled messages. */
enum { WIN_ALIGN = 64 };
static size_t round_win(size_t n) { return (n + WIN_ALIGN - 1) / WIN_ALIGN * WIN_ALIGN; }

/* Makes the cached window bytes long; *made tells whether this rank has
 * it (a failed MPI_Win_allocate is not an error here: see above). */
static int window_make(ct_sdde_cache *c, MPI_Comm comm, size_t bytes, int *made)
{
    int rc = MPI_SUCCESS;
    MPI_Info info = MPI_INFO_NULL;
    void *base = NULL;
    *made = 0;
    if (c->win != MPI_WIN_NULL)
        CT_CALL(PMPI_Win_free(&c->win));
    c->win_base = NULL;
    c->win_bytes = 0;
    CT_CALL(PMPI_Info_create(&info));
    CT_CALL(PMPI_Info_set(info, "no_locks", "true")); /* fences only */
    if (PMPI_Win_allocate((MPI_Aint)bytes, 1, info, comm, &base, &c->win) != MPI_SUCCESS) {
        c->win = MPI_WIN_NULL;
        goto out;
    }
    CT_CALL(PMPI_Win_set_errhandler(c->win, MPI_ERRORS_RETURN));
    memset(base, 0, bytes); /* no flag set: made public by the next fence */
    c->win_base = base;
    c->win_bytes = bytes;
    *made = 1;
out:
    if (info != MPI_INFO_NULL)
        PMPI_Info_free(&info);
    return rc;
}

/* Makes the cached window at least need bytes (collective when it grows,
 * which every rank does in the same call). *usable: every rank has it. */
static int window_ensure(ct_sdde_cache *c, MPI_Comm comm, size_t need, int *usable)
{
    int rc = MPI_SUCCESS, made;
    *usable = !c->rma_unusable;
    if (c->rma_unusable || (c->win != MPI_WIN_NULL && c->win_bytes >= need))
        return MPI_SUCCESS;
    CT_CALL(window_make(c, comm, round_win(need > 2 * c->win_bytes ? need : 2 * c->win_bytes),
                        &made));
    CT_CALL(PMPI_Allreduce(&made, usable, 1, MPI_INT, MPI_MIN, comm));
    if (!*usable) {
        /* A rank that has the window cannot free it alone (collective). */
        c->win = MPI_WIN_NULL;
        c->win_base = NULL;
        c->win_bytes = 0;
        c->rma_unusable = 1;
    }
out:
    return rc;
}

int ct_sdde_rma(ct_sdde *x, ct_ctx *ctx, const long *params)
{
    (void)params;
    int rc = MPI_SUCCESS;
    const int P = ctx->size, me = ctx->rank;
    const ct_sdde_out *o = &x->out;
    int *flag_of = NULL;
    /* Window layout: P flags (int), then P slots of the largest message. */
    const size_t slot = round8(x->msg_size > 0 ? (size_t)x->msg_size : 0);
    const size_t flags_bytes = round8((size_t)P * sizeof(int));
    int usable;
    /* Create window */
    CT_CALL(window_ensure(x->cache, ctx->comm, flags_bytes + (size_t)P * slot, &usable));
    if (!usable) {
        if (ctx->decide_rank == 0)
            ct_log_once("alltoall_crs: rma: MPI_Win_allocate failed on %s; its calls that "
                        "choose rma are served by personalized", ctx->name);
        return ct_sdde_personalized(x, ctx, params);
    }
    CT_ALLOC(flag_of, (size_t)o->n * sizeof *flag_of);
    MPI_Win win = x->cache->win;
    int *flags = (int *)x->cache->win_base;
    const char *slots = x->cache->win_base + flags_bytes;
    /* Synchronize on window. Neither this fence nor the closing one asserts
     * MPI_MODE_NOPRECEDE / MPI_MODE_NOSUCCEED: a fence that ends no epoch
     * need not be a barrier (MPI-4.0 12.5.1), and this one must be, so that
     * no origin's put reaches a slot or flag before its reader has read and
     * cleared it after the previous call (MPICH at P = 2 lost and garbled
     * messages so). */
    CT_CALL(PMPI_Win_fence(0, win));
    /* for i in 0..send_nnz: put message i into slot "rank" of dest[i], and its flag */
    ct_sdde_count_internode(x, o);
    for (int i = 0; i < o->n; i++) {
        if (o->bytes[i] > 0)
            CT_CALL(PMPI_Put(o->ptr[i], o->bytes[i], MPI_BYTE, o->dest[i],
                             (MPI_Aint)(flags_bytes + (size_t)me * slot), o->bytes[i], MPI_BYTE,
                             win));
        flag_of[i] = o->bytes[i] + 1;
        CT_CALL(PMPI_Put(&flag_of[i], 1, MPI_INT, o->dest[i],
                         (MPI_Aint)((size_t)me * sizeof(int)), 1, MPI_INT, win));
    }
    /* Synchronize on window */
    CT_CALL(PMPI_Win_fence(0, win));
    /* for i in 0..num_procs: a set flag is a message from i */
    for (int i = 0; i < P; i++) {
        if (flags[i] == 0)
            continue;
        rc = ct_sdde_box_copy(&x->got, i, slots + (size_t)i * slot, (size_t)(flags[i] - 1));
        if (rc != MPI_SUCCESS)
            goto out;
        flags[i] = 0;
    }
    ctx->call_extra += x->cache->win_bytes;
out:
    free(flag_of);
    return rc;
}
