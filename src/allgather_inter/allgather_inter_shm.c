/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allgather_inter_shm.c - intercommunicator Allgather and Allgatherv through
 * a shared-memory window, for communicators whose ranks all share one node.
 *
 * Every rank copies its block into its own part of a window that all ranks
 * of both groups map (MPI_Win_allocate_shared over ctx->union_comm, the
 * MPI-3 shared-memory model, [Hoefler2013]),
 * the ranks synchronise through flags in the window, and every rank copies
 * the remote group's blocks out of their owners' parts straight into its
 * receive buffer. A
 * block crosses memory twice, once in and once out, with plain memcpy and
 * no message matching; the point-to-point exchanges (direct, segmented) move
 * a byte once but through the MPI library's single-copy or two-copy
 * transport, which on this kind of machine delivers a fraction of memcpy's
 * bandwidth, and the native root gathering moves it about three times.
 * [Kang2019] does not consider it: it is the shared-memory counterpart of
 * allgather_inter_direct.c, as Open MPI's coll/sm is of its basic linear.
 *
 * The exchange is the shared-window round engine of the Alltoall(v)
 * algorithms (core/shm_stream.h) over union_comm: each rank's stream is one
 * block, its own, and it reads the remote group's. The window is bounded
 * (COLTUNE_SHM_WINDOW per rank per half), so a larger block travels in
 * rounds, each ended by flags in the window, not by a collective call;
 * round 0 also tells every rank whether some rank failed to prepare its
 * buffers (then every rank returns an error) and how many rounds there are
 * (an Allgatherv rank does not know its own group's block sizes).
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
#include "core/shm_stream.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Where each remote rank's stream is: its rank in union_comm, from the
 * groups (local, no communication), kept with the window (s->members). */
static int remote_members(const ct_ctx *ctx, ct_shm_stream *s)
{
    int rc = MPI_SUCCESS;
    MPI_Group remote = MPI_GROUP_NULL, all = MPI_GROUP_NULL;
    int *index = NULL, *member = NULL;
    CT_ALLOC(index, (size_t)ctx->remote_size * sizeof(int));
    CT_ALLOC(member, (size_t)ctx->remote_size * sizeof(int));
    for (int j = 0; j < ctx->remote_size; j++)
        index[j] = j;
    CT_CALL(PMPI_Comm_remote_group(ctx->comm, &remote));
    CT_CALL(PMPI_Comm_group(ctx->union_comm, &all));
    CT_CALL(PMPI_Group_translate_ranks(remote, ctx->remote_size, index, all, member));
    s->members = member;
    member = NULL;
out:
    if (remote != MPI_GROUP_NULL)
        PMPI_Group_free(&remote);
    if (all != MPI_GROUP_NULL)
        PMPI_Group_free(&all);
    free(index);
    free(member);
    return rc;
}

/* The context buffers of the packed send block and of the staged stream. */
static const ct_ctx_buf_key buf_packed = {"shm Allgather packed"},
                            buf_stage = {"shm Allgather stage"};

/* Lays a view's staging out in a context buffer of its own (none when the
 * view is in place). */
static int stage(ct_ctx *ctx, ct_bytes *v, const ct_ctx_buf_key *key)
{
    size_t need = 0, off = 0;
    ct_bytes_layout(v, NULL, &need);
    if (need == 0)
        return MPI_SUCCESS;
    char *mem = ct_ctx_buffer(ctx, key, need);
    if (mem == NULL)
        return MPI_ERR_NO_MEM;
    ct_bytes_layout(v, mem, &off);
    ctx->call_extra += v->staged_bytes;
    return MPI_SUCCESS;
}

/* Where this call's bytes come from and go to (ct_bytes, core/datatype.h):
 * out is this rank's block (packed into buf_packed unless contiguous),
 * want[j] remote block j, read from its owner's stream into the user's
 * buffer (staged in buf_stage unless contiguous: rv). */
static int prepare(ct_ctx *ctx, const ct_ag_view *d, const ct_shm_stream *s, ct_shm_out *out,
                   ct_shm_want *want, ct_bytes *rv)
{
    int rc;
    ct_bytes sv;
    CT_CALL(ct_bytes_init(&sv, d->sendbuf, 1, ct_vec_linear(d->sendcount, 0),
                          ct_vec_linear(0, 0), d->sendtype, 0));
    CT_CALL(ct_bytes_init(rv, d->recvbuf, ctx->remote_size, d->recvcounts, d->displs,
                          d->recvtype, 0));
    if ((sv.staged && sv.t.size > INT_MAX) || (rv->staged && rv->t.size > INT_MAX)) {
        ct_log_once("shm: a non-contiguous datatype of more than INT_MAX bytes per element "
                    "cannot be packed; the call returns MPI_ERR_TYPE");
        return MPI_ERR_TYPE; /* every rank returns an error: round 0 tells them */
    }
    CT_CALL(stage(ctx, &sv, &buf_packed));
    CT_CALL(stage(ctx, rv, &buf_stage));
    CT_CALL(ct_bytes_pack(&sv, ctx->local_comm));
    *out = (ct_shm_out){.src = ct_bytes_block(&sv, 0), .bytes = ct_bytes_len(&sv, 0)};
    for (int j = 0; j < ctx->remote_size; j++) {
        const size_t bytes = ct_bytes_len(rv, j);
        want[j] = (ct_shm_want){.member = s->members[j], .cap = bytes,
                                .dst = bytes ? ct_bytes_block(rv, j) : NULL, .req = -1};
    }
out:
    return rc;
}

/* One call of either collective: through the window, or by the direct
 * exchange when the communicator has no usable window. A rank that cannot
 * prepare its part still runs round 0, which tells every rank to return an
 * error (core/shm_stream.h). */
static int shm_exchange(ct_ctx *ctx, const ct_ag_view *d)
{
    int rc;
    ct_bytes rv = {0};
    ct_shm_stream *s;
    static const ct_ctx_key window_key = CT_SHM_STREAM_KEY("shm Allgather window");
    CT_CALL(ct_shm_stream_get(ctx, &window_key, ctx->union_comm, 1, "shm", &s));
    if (s == NULL)
        return ct_ag_direct_exchange(ctx, d); /* no window on some rank: every rank comes here */
    ct_shm_want *want = ct_ctx_scratch(ctx, (size_t)ctx->remote_size * sizeof *want);
    int local_rc = want == NULL ? MPI_ERR_NO_MEM : MPI_SUCCESS;
    if (local_rc == MPI_SUCCESS && s->members == NULL)
        local_rc = remote_members(ctx, s);
    if (local_rc == MPI_SUCCESS)
        local_rc = prepare(ctx, d, s, s->out, want, &rv);
    ctx->call_extra += ct_shm_stream_bytes(1);
    rc = ct_shm_stream_run(s, s->out, local_rc, local_rc == MPI_SUCCESS ? want : NULL,
                           local_rc == MPI_SUCCESS ? ctx->remote_size : 0, NULL, NULL);
    if (rc == MPI_SUCCESS)
        rc = ct_bytes_unpack(&rv, ctx->local_comm);
out:
    return rc;
}

CT_AG_VIEW_ALGORITHM(shm, shm_exchange)
