/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allgather_inter_shm.c - intercommunicator Allgather and Allgatherv through
 * a shared-memory window, for communicators whose ranks all share one node.
 *
 * Every rank copies its block into its own part of a window that all ranks
 * of both groups map (MPI_Win_allocate_shared over ctx->union_comm, the
 * MPI-3 shared-memory model, [Hoefler2013]),
 * the ranks synchronise once, and every rank copies the remote group's
 * blocks out of their owners' parts straight into its receive buffer. A
 * block crosses memory twice, once in and once out, with plain memcpy and
 * no message matching; the point-to-point exchanges (direct, segmented) move
 * a byte once but through the MPI library's single-copy or two-copy
 * transport, which on this kind of machine delivers a fraction of memcpy's
 * bandwidth, and the native root gathering moves it about three times.
 * [Kang2019] does not consider it: it is the shared-memory counterpart of
 * allgather_inter_direct.c, as Open MPI's coll/sm is of its basic linear.
 *
 * Rounds. The window is small and fixed: two halves of SHM_CHUNK bytes per
 * rank. A call runs in rounds; in round r every rank copies bytes
 * [r C, (r+1) C) of its block into half (r mod 2), the ranks synchronise,
 * and every rank copies the same range of each remote block out of that
 * half. The synchronisation of round r also tells every writer that all
 * readers are done with round r-1, so round r+1 may overwrite the other
 * half without a second synchronisation: one barrier-like step per round.
 * The round count carries on across calls (shm_state.round), so the first
 * round of a call never writes the half the last round of the previous
 * call was read from. Round 0's synchronisation is an allreduce (MAX) of
 * the block sizes, which also gives every rank the number of rounds: an
 * Allgatherv rank does not know its own group's block sizes.
 *
 * Types: a contiguous type is copied in and out of the user's buffers
 * directly; a non-contiguous send block is packed first and non-contiguous
 * receive blocks are staged and unpacked at the end (each a context buffer,
 * counted in the call's extra memory). All byte arithmetic is in size_t, so
 * no call is restricted to int byte offsets.
 *
 * The window is created by the first call on the communicator and freed
 * with the context (collectively, at MPI_Comm_free). If it cannot be set
 * up on every rank, the communicator's calls are served by the direct
 * exchange from then on: the setup ends with one allreduce that every rank
 * reaches whatever failed on it, so all ranks learn it together.
 */
#include "allgather_inter/ag_exchange.h"
#include "core/datatype.h"
#include "core/log.h"
#include "core/shm.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of a block copied per round: one half of a rank's window part.
 * Measured at 256 KiB, 1 MiB and 4 MiB on one node (Open MPI 4.1, 8 and 13
 * ranks, 64 KiB to 8 MiB blocks): the same within noise. */
#define SHM_CHUNK ((size_t)1 << 20)

typedef struct shm_state {
    ct_shm_win *w;       /* over union_comm: two halves of SHM_CHUNK bytes per rank */
    char **remote;       /* [remote_size] each remote rank's part */
    unsigned long round; /* rounds run on this communicator; parity picks the half */
} shm_state;

static void state_free(void *p)
{
    shm_state *st = p;
    if (st == NULL)
        return;
    ct_shm_win_free(st->w); /* collective, like the context's release */
    free(st->remote);
    free(st);
}

/* The state of a communicator without a usable window: read-only. */
static const shm_state no_window = {.w = NULL};

/* The context buffers of the packed send block and of the staged stream. */
static const ct_ctx_buf_key buf_packed = {"shm Allgather packed"},
                            buf_stage = {"shm Allgather stage"};

/* Where remote rank j's part is: union_comm's rank of each remote rank,
 * from the groups (local, no communication). */
static int remote_union_ranks(const ct_ctx *ctx, int *union_rank)
{
    int rc = MPI_SUCCESS;
    MPI_Group remote = MPI_GROUP_NULL, all = MPI_GROUP_NULL;
    int *index = NULL;
    CT_ALLOC(index, (size_t)ctx->remote_size * sizeof(int));
    for (int j = 0; j < ctx->remote_size; j++)
        index[j] = j;
    CT_CALL(PMPI_Comm_remote_group(ctx->comm, &remote));
    CT_CALL(PMPI_Comm_group(ctx->union_comm, &all));
    CT_CALL(PMPI_Group_translate_ranks(remote, ctx->remote_size, index, all, union_rank));
out:
    if (remote != MPI_GROUP_NULL)
        PMPI_Group_free(&remote);
    if (all != MPI_GROUP_NULL)
        PMPI_Group_free(&all);
    free(index);
    return rc;
}

/* This rank's part of the setup: the remote ranks' parts (local). */
static int map_remote(const ct_ctx *ctx, shm_state *st)
{
    int rc = MPI_SUCCESS;
    int *union_rank = NULL;
    CT_ALLOC(union_rank, (size_t)ctx->remote_size * sizeof(int));
    CT_ALLOC(st->remote, (size_t)ctx->remote_size * sizeof(char *));
    CT_CALL(remote_union_ranks(ctx, union_rank));
    for (int j = 0; j < ctx->remote_size; j++)
        st->remote[j] = st->w->part[union_rank[j]];
out:
    free(union_rank);
    return rc;
}

/* Creates the window over both groups (core/shm.h: every rank learns
 * together whether it worked), then maps the remote parts; one allreduce
 * tells every rank whether every rank could. */
static int state_create(ct_ctx *ctx, shm_state **out)
{
    int rc, here, everywhere;
    shm_state *st = calloc(1, sizeof *st);
    ct_shm_win *w = NULL;
    *out = NULL;
    CT_CALL(ct_shm_win_create(ctx->union_comm, 2 * SHM_CHUNK, "shm", &w));
    if (w == NULL) /* the same on every rank */
        goto out;
    if (st != NULL) {
        st->w = w;
        here = map_remote(ctx, st) == MPI_SUCCESS;
    } else {
        here = 0;
    }
    CT_CALL(PMPI_Allreduce(&here, &everywhere, 1, MPI_INT, MPI_MIN, ctx->union_comm));
    if (everywhere) {
        *out = st;
        return MPI_SUCCESS;
    }
    ct_log_once("shm: the remote parts of the shared window could not be mapped on every "
                "rank; Allgather(v) calls on this communicator that choose shm run the "
                "direct exchange");
    ct_shm_win_free(w); /* every rank holds it */
    if (st != NULL)
        st->w = NULL;
out:
    if (st != NULL)
        free(st->remote);
    free(st);
    return rc;
}

/* The context's window state, created (collectively) by the first call;
 * *out is NULL when the communicator has no usable window. */
static int state_make(ct_ctx *ctx, void *arg, void **obj)
{
    (void)arg;
    shm_state *st;
    int rc = state_create(ctx, &st);
    *obj = st != NULL ? (void *)st : (void *)&no_window;
    return rc;
}

static void state_release(void *obj)
{
    if (obj != (const void *)&no_window)
        state_free(obj);
}

static int state_get(ct_ctx *ctx, shm_state **out)
{
    static const ct_ctx_key key = {"shm Allgather window", state_make, state_release};
    void *obj;
    int rc = ct_ctx_ext(ctx, &key, NULL, &obj);
    *out = obj == (const void *)&no_window ? NULL : obj;
    return rc;
}

/* A remote block: where its bytes go (the user's buffer or the staging
 * buffer) and how many there are. */
typedef struct shm_block {
    char *dst;
    size_t bytes;
} shm_block;

/* Where this call's bytes come from and go to: *send is this rank's block
 * as bytes (packed into context buffer 0 unless contiguous), blk[j] the
 * place of remote block j (staged in context buffer 1 unless contiguous). */
static int prepare(ct_ctx *ctx, const ct_ag_view *d, const char **send, size_t *sbytes,
                   shm_block *blk, char **stage)
{
    int rc = MPI_SUCCESS;
    MPI_Count count;
    ct_typeinfo s, r;
    MPI_Aint displ;
    size_t staged = 0;
    CT_CALL(ct_type_info(d->sendtype, &s));
    CT_CALL(ct_type_info(d->recvtype, &r));
    if ((!s.contig && s.size > INT_MAX) || (!r.contig && r.size > INT_MAX)) {
        ct_log_once("shm: a non-contiguous datatype of more than INT_MAX bytes per element "
                    "cannot be packed; the call returns MPI_ERR_TYPE");
        return MPI_ERR_TYPE; /* every rank returns an error: see rounds() */
    }
    *sbytes = (size_t)d->sendcount * (size_t)s.size;
    *send = *sbytes ? (const char *)d->sendbuf + s.true_lb : NULL;
    *stage = NULL;
    if (!s.contig && *sbytes > 0) {
        char *packed = ct_ctx_buffer(ctx, &buf_packed, *sbytes);
        if (packed == NULL)
            return MPI_ERR_NO_MEM;
        CT_CALL(ct_pack_elems(d->sendbuf, d->sendcount, d->sendtype, &s, packed, 0,
                              ctx->local_comm));
        *send = packed;
        ctx->call_extra += *sbytes;
    }
    for (int j = 0; j < ctx->remote_size; j++) {
        ct_ag_remote_block(d, j, &count, &displ);
        blk[j].bytes = (size_t)count * (size_t)r.size;
        blk[j].dst = blk[j].bytes ? (char *)d->recvbuf + displ * r.extent + r.true_lb : NULL;
        staged += r.contig ? 0 : blk[j].bytes;
    }
    if (staged == 0)
        return MPI_SUCCESS;
    *stage = ct_ctx_buffer(ctx, &buf_stage, staged);
    if (*stage == NULL)
        return MPI_ERR_NO_MEM;
    ctx->call_extra += staged;
    staged = 0;
    for (int j = 0; j < ctx->remote_size; j++) {
        blk[j].dst = *stage + staged;
        staged += blk[j].bytes;
    }
out:
    return rc;
}

/* Non-contiguous receive type: the staged blocks to the user's buffer. */
static int unstage(ct_ctx *ctx, const ct_ag_view *d, const shm_block *blk)
{
    int rc = MPI_SUCCESS;
    MPI_Count count;
    ct_typeinfo r;
    MPI_Aint displ;
    CT_CALL(ct_type_info(d->recvtype, &r));
    for (int j = 0; j < ctx->remote_size; j++) {
        ct_ag_remote_block(d, j, &count, &displ);
        if (blk[j].bytes > 0)
            CT_CALL(ct_pack_elems((char *)d->recvbuf + displ * r.extent, count, d->recvtype,
                                  &r, blk[j].dst, 1, ctx->local_comm));
    }
out:
    return rc;
}

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* The rounds (see the top of the file). prep_rc is this rank's result of
 * prepare(): round 0's allreduce tells every rank whether any failed. */
static int rounds(ct_ctx *ctx, shm_state *st, int prep_rc, const char *send, size_t sbytes,
                  const shm_block *blk)
{
    int rc = MPI_SUCCESS;
    const int nremote = ctx->remote_size;
    size_t most = 0; /* the largest block of either group */
    for (size_t off = 0;; off += SHM_CHUNK) {
        const size_t half = (st->round++ & 1) * SHM_CHUNK;
        if (prep_rc == MPI_SUCCESS && off < sbytes)
            memcpy(st->w->part[st->w->rank] + half, send + off, min_size(SHM_CHUNK, sbytes - off));
        CT_CALL(PMPI_Win_sync(st->w->win));
        if (off == 0) {
            unsigned long long in[2] = {sbytes, prep_rc != MPI_SUCCESS}, res[2];
            CT_CALL(PMPI_Allreduce(in, res, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX,
                                   ctx->union_comm));
            if (res[1]) {
                if (prep_rc == MPI_SUCCESS)
                    ct_log_once("shm: another rank could not prepare its buffers");
                return prep_rc != MPI_SUCCESS ? prep_rc : MPI_ERR_OTHER;
            }
            most = (size_t)res[0];
        } else {
            CT_CALL(PMPI_Barrier(ctx->union_comm));
        }
        CT_CALL(PMPI_Win_sync(st->w->win));
        /* rank i of a group starts at remote rank i: the readers spread out */
        for (int t = 0; t < nremote; t++) {
            const int j = (ctx->rank + t) % nremote;
            if (off < blk[j].bytes)
                memcpy(blk[j].dst + off, st->remote[j] + half,
                       min_size(SHM_CHUNK, blk[j].bytes - off));
        }
        if (off + SHM_CHUNK >= most)
            break;
    }
out:
    return rc;
}

/* One call of either collective: through the window, or by the direct
 * exchange when the communicator has no usable window. */
static int shm_exchange(ct_ctx *ctx, const ct_ag_view *d)
{
    int rc;
    const char *send = NULL;
    size_t sbytes = 0;
    char *stage = NULL;
    shm_state *st;
    CT_CALL(state_get(ctx, &st));
    if (st == NULL)
        return ct_ag_direct_exchange(ctx, d);
    shm_block *blk = ct_ctx_scratch(ctx, (size_t)ctx->remote_size * sizeof *blk);
    int prep_rc = blk == NULL ? MPI_ERR_NO_MEM : prepare(ctx, d, &send, &sbytes, blk, &stage);
    ctx->call_extra += 2 * SHM_CHUNK;
    CT_CALL(rounds(ctx, st, prep_rc, send, sbytes, blk));
    if (stage != NULL)
        CT_CALL(unstage(ctx, d, blk));
out:
    return rc;
}

int ct_allgather_inter_shm(const ct_allgather_args *a, ct_ctx *ctx, const long *params)
{
    (void)params;
    const ct_ag_view d = ct_ag_view_allgather(a);
    return shm_exchange(ctx, &d);
}

int ct_allgatherv_inter_shm(const ct_allgatherv_args *a, ct_ctx *ctx, const long *params)
{
    (void)params;
    const ct_ag_view d = ct_ag_view_allgatherv(a);
    return shm_exchange(ctx, &d);
}
