/*
 * alltoallv_shm.c - MPI_Alltoallv and MPI_Alltoall through a shared-memory
 * window, for communicators whose ranks all share one node
 * (CT_R_SHARED_MEMORY).
 *
 * Each rank copies its outgoing blocks, with a table of where each lies,
 * into its own part of a window every rank maps; the ranks synchronise once
 * through flags in the window; each rank copies the blocks addressed to it
 * straight from the senders' parts into its receive buffer (and its own
 * block directly). A byte crosses memory twice, with memcpy and no message
 * matching, where the point-to-point algorithms pay the MPI library's
 * per-message cost P - 1 times per rank. It is the Alltoallv counterpart of
 * the shm intercommunicator Allgather (allgather_inter_shm.c) and of what
 * Open MPI's coll/han and coll/xhc do on a node; none of the papers treats
 * it. The window is bounded (COLTUNE_SHM_WINDOW per rank per half), so
 * larger exchanges run in rounds (shm_stream.h).
 *
 * Types: a contiguous type is copied from and to the user's buffers; a
 * non-contiguous send side is packed first, a non-contiguous receive side
 * staged and unpacked (context buffers, counted in the call's extra
 * memory). Byte arithmetic is in size_t: no offset is limited to int.
 *
 * Large blocks (parameter large: at least that many bytes; 0 for none) skip
 * the window: the sender marks them direct in its stream's header and sends
 * them point-to-point after the rounds, where the MPI library copies a block
 * once (Open MPI's CMA, MPICH's XPMEM or CMA) instead of the window's twice;
 * their receivers learn it from the headers. Only a sender decides, so both
 * sides agree; a block whose bytes exceed an int stays in the window.
 *
 * If the window cannot be set up (shm.h), every rank learns it at the first
 * call, and that call and every later one on the communicator that chooses
 * shm is forwarded to the MPI library's routine.
 */
#include "alltoallv/shm_stream.h"
#include "core/log.h"

#include <limits.h>
#include <string.h>

/* Whether this rank sends its block of `bytes` point-to-point (see above). */
static int is_direct(size_t bytes, long large)
{
    return large > 0 && bytes >= (size_t)large && bytes <= (size_t)INT_MAX;
}

/* This rank's stream: out[j] is its block for rank j (none for itself),
 * packed into a context buffer when the send type is not contiguous (a
 * direct block is sent from the user's buffer with its own type). */
static int send_side(const ct_a2av *x, const ct_typeinfo *t, long large, ct_shm_out *out)
{
    int rc = MPI_SUCCESS;
    const int P = x->ctx->size, me = x->ctx->rank;
    const ct_alltoallv_args *a = x->a;
    size_t packed_bytes = 0;
    char *packed = NULL;
    for (int j = 0; j < P; j++) {
        out[j].bytes = j == me ? 0 : (size_t)ct_a2av_scount(x, j) * (size_t)t->size;
        out[j].src = ct_a2av_sendblock(x, j) + t->true_lb;
        out[j].direct = is_direct(out[j].bytes, large);
        if (!out[j].direct)
            packed_bytes += out[j].bytes;
    }
    if (t->contig || packed_bytes == 0)
        return MPI_SUCCESS;
    packed = ct_ctx_buffer(x->ctx, CT_BUF_SHM_SEND, packed_bytes);
    if (packed == NULL)
        return MPI_ERR_NO_MEM;
    x->ctx->call_extra += packed_bytes;
    for (int j = 0; j < P; j++) {
        if (out[j].direct)
            continue;
        if (out[j].bytes > 0)
            CT_CALL(ct_pack_elems(ct_a2av_sendblock(x, j), ct_a2av_scount(x, j), a->sendtype, t,
                                  packed, 0, x->ctx->comm));
        out[j].src = packed;
        packed += out[j].bytes;
    }
out:
    return rc;
}

/* The blocks this rank reads: rank i's block for it, from i = me + 1 on (the
 * readers start at different parts). Staged in a context buffer when the
 * receive type is not contiguous (*staged: its bytes, 0 when not). */
static int recv_side(const ct_a2av *x, const ct_typeinfo *t, ct_shm_want *want,
                     size_t *staged)
{
    const int P = x->ctx->size, me = x->ctx->rank;
    char *stage;
    *staged = 0;
    for (int w = 0; w < P - 1; w++) {
        const int i = (me + 1 + w) % P;
        want[w].member = i;
        want[w].block = me;
        want[w].cap = (size_t)ct_a2av_rcount(x, i) * (size_t)t->size;
        want[w].dst = ct_a2av_recvblock(x, i) + t->true_lb;
        want[w].direct = 0;
        *staged += want[w].cap;
    }
    if (t->contig || *staged == 0) {
        *staged = 0;
        return MPI_SUCCESS;
    }
    stage = ct_ctx_buffer(x->ctx, CT_BUF_SHM_RECV, *staged);
    if (stage == NULL)
        return MPI_ERR_NO_MEM;
    x->ctx->call_extra += *staged;
    for (int w = 0; w < P - 1; w++) {
        want[w].dst = stage;
        stage += want[w].cap;
    }
    return MPI_SUCCESS;
}

/* A non-contiguous receive side: the staged blocks into the user's buffer. */
static int unstage(const ct_a2av *x, const ct_typeinfo *t, const ct_shm_want *want)
{
    int rc = MPI_SUCCESS;
    for (int w = 0; w < x->ctx->size - 1; w++)
        if (want[w].cap > 0 && !want[w].direct)
            CT_CALL(ct_pack_elems(ct_a2av_recvblock(x, want[w].member),
                                  ct_a2av_rcount(x, want[w].member), x->a->recvtype, t,
                                  want[w].dst, 1, x->ctx->comm));
out:
    return rc;
}

/*
 * The direct blocks, after the rounds: every rank knows from the headers
 * which blocks addressed to it are direct and receives them with the user's
 * own type and count (MPI reports a longer block), and sends its own.
 */
static int send_direct(const ct_a2av *x, const ct_shm_out *out, const ct_shm_want *want)
{
    int rc = MPI_SUCCESS, n = 0;
    const int P = x->ctx->size;
    MPI_Request *reqs = ct_ctx_requests(x->ctx, 2 * P);
    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    for (int w = P - 2; w >= 0; w--) { /* from me - 1 down: rank me - t sends to me t-th */
        const int i = want[w].member;
        const MPI_Count count = ct_a2av_rcount(x, i);
        if (want[w].direct)
            CT_CALL(ct_irecv(ct_a2av_recvblock(x, i), count < INT_MAX ? count : INT_MAX,
                             x->a->recvtype, i, CT_TAG_ALLTOALLV, x->ctx->comm, &reqs[n++]));
    }
    for (int t = 1; t < P; t++) { /* spread out: not every rank to rank 0 first */
        const int j = (x->ctx->rank + t) % P;
        if (out[j].direct)
            CT_CALL(ct_isend(ct_a2av_sendblock(x, j), ct_a2av_scount(x, j), x->a->sendtype, j,
                             CT_TAG_ALLTOALLV, x->ctx->comm, &reqs[n++]));
    }
out:
    /* Every posted request completes, even after a failure: nothing stays in
     * flight. One at a time, so the call returns the error class of the
     * first failure (MPI_ERR_TRUNCATE for a block longer than its receive
     * buffer, as through the window), not MPI_ERR_IN_STATUS. */
    for (int k = 0; k < n; k++) {
        const int wrc = PMPI_Wait(&reqs[k], MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = wrc;
    }
    return rc;
}

int ct_alltoallv_shm(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params)
{
    int rc;
    const int P = ctx->size;
    ct_a2av x;
    ct_typeinfo st, rt; /* each side's type, asked once per call */
    ct_shm_stream *s;
    size_t staged = 0;
    const long large = params[0];
    CT_CALL(ct_a2av_prepare(&x, a, ctx));
    CT_CALL(ct_type_info(a->sendtype, &st));
    CT_CALL(ct_type_info(a->recvtype, &rt));
    if (P == 1)
        return ct_a2av_self_copy(&x);
    CT_CALL(ct_shm_stream_get(ctx, CT_EXT_A2A_SHM, ctx->comm, 0, P, "shm", &s));
    if (s == NULL)
        return a->forward(a); /* no window on some rank: every rank comes here */
    ctx->call_extra += ct_shm_stream_bytes(P);
    ct_shm_out *out = ct_ctx_buffer(ctx, CT_BUF_SHM_PLAN,
                                    (size_t)P * (sizeof(ct_shm_out) + sizeof(ct_shm_want)));
    ct_shm_want *want = out != NULL ? (ct_shm_want *)(out + P) : NULL;
    int local_rc = out == NULL ? MPI_ERR_NO_MEM : send_side(&x, &st, large, out);
    if (local_rc == MPI_SUCCESS)
        local_rc = recv_side(&x, &rt, want, &staged);
    if (local_rc == MPI_SUCCESS)
        local_rc = ct_a2av_self_copy(&x);
    rc = ct_shm_stream_run(s, out, local_rc, want, P - 1);
    if (rc != MPI_SUCCESS && rc != MPI_ERR_TRUNCATE)
        return rc; /* round 0 failed on every rank: no direct block is sent */
    const int direct_rc = send_direct(&x, out, want);
    if (rc == MPI_SUCCESS)
        rc = direct_rc;
    if (rc == MPI_SUCCESS && staged > 0)
        rc = unstage(&x, &rt, want);
out:
    return rc;
}
