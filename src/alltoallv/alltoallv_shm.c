/* SPDX-License-Identifier: BSD-3-Clause */
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
 * the window: they travel point-to-point, where the MPI library copies a
 * block once (Open MPI's CMA, MPICH's XPMEM or CMA) instead of the window's
 * twice. Both sides decide alone, before round 0, the sender from its count
 * and the receiver from its own, which in a correct program describe the
 * same bytes; so the point-to-point blocks are posted first and move while
 * the ranks synchronise and copy the small blocks (the waits drive the MPI
 * library's progress). The sender's decision is the one that holds: it
 * marks its direct blocks in its stream's header, and after round 0 a
 * receiver whose own count said otherwise settles it, posting the receive
 * late (its buffer is too short: MPI reports MPI_ERR_TRUNCATE) or cancelling
 * the one it posted and reading the block from the window. The tags
 * alternate from call to call, so a receive still waiting to be cancelled
 * cannot take a block of the sender's next call. A block whose bytes exceed
 * an int stays in the window. On large communicators blocks under large go
 * point-to-point too, where P - 1 of them would need more than two rounds
 * of the window (direct_limit).
 *
 * MPI_Alltoall needs none of that when its blocks are large or empty:
 * every rank knows every block's size from its own arguments, so then every
 * block of every rank travels point-to-point (or none does), and every rank
 * skips the window alike (no plan, header or round 0: all_p2p).
 *
 * An MPI_Alltoallv cannot know that without round 0, whose synchronisation
 * cost the point-to-point blocks about 5% (P = 32, 16 - 32 KiB blocks,
 * coltune-bench, against the same blocks without it), and is all an empty
 * call costs (IMB-NBC, P = 4 on 2 cores: 6.6 us, where the library's
 * nonblocking call completes at once, in 0.3 us). So it learns it from round 0 itself: when no
 * rank put a byte in the window (every rank reads that from every header,
 * so all agree: ct_shm_stream.empty, and all_direct where some rank sent a
 * block point-to-point), the next Alltoallv calls on the communicator with
 * the same large skip the window, a run: their blocks travel point-to-point
 * with the user's counts and types, as the MPI library's would (all_p2p),
 * and the call after the run goes through the window again to see whether
 * that still holds. The first run is P2P_RUN calls, and each run twice as
 * long as the one before while the call between them finds the same, up to
 * P2P_RUN_MAX: a benchmark's loop of a thousand empty calls pays seven
 * synchronisations. Blocks that have become small meanwhile cost at most
 * P2P_RUN_MAX calls at the point-to-point speed, which is the library's.
 * The blocking call begins its runs where all its blocks went
 * point-to-point (all_direct): it posts the empty blocks too, as the
 * library's blocking routine does, so an empty call would save nothing.
 *
 * If the window cannot be set up (shm.h), every rank learns it at the first
 * call, and that call and every later one on the communicator that chooses
 * shm is forwarded to the MPI library's routine.
 *
 * Nonblocking and persistent (ct_alltoallv_shm_build): the same call, split
 * where the window splits it. At the start a rank posts its point-to-point
 * blocks, copies its own block and publishes its stream's round 0 (its
 * blocks into the window, or the first W bytes of them); at each test or
 * wait it copies out what the others have published, and runs the later
 * rounds, if any; at completion it settles and completes the point-to-point
 * blocks. Between the start and the completion a rank needs no progress:
 * what it published waits in the window for the others to read. A window
 * serves one call at a time, in the order the calls started
 * (ct_shm_stream_enqueue): a call started while another is still running
 * on this rank begins when that one completes; a blocking call first
 * completes those before it. The blocks that travel point-to-point carry
 * the request's own tag. The runs depend on how the calls before went on
 * every rank, which a start may not know yet (they may still be running
 * here): a request's call reads the run when it begins, when those have
 * completed on this rank, and one in a run posts its blocks, the empty ones
 * left out (as the libraries' nonblocking routines and the linear schedule
 * do: an empty call is complete at once), and leaves the window's queue at
 * once (ct_shm_job.detached): the next call may begin while its blocks
 * travel. Like those, it trusts both ends of a block to agree whether it is
 * empty, as MPI requires of the type signatures: a receiver that expects
 * bytes its sender does not send waits for them, where the window would
 * have given it nothing (and MPI_ERR_TRUNCATE for bytes it did not expect). A communicator with no window, an MPI_Ialltoall whose blocks are
 * empty or all travel point-to-point, and every call under an MPI library
 * whose progress engine coltune cannot hook (MPICH: see
 * ct_alltoallv_shm_build) get the linear schedule (alltoallv_linear.c):
 * the same messages as a request's run.
 */
#include "alltoallv/a2av_p2p.h"
#include "core/shm_stream.h"
#include "core/log.h"
#include "core/request.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Alltoallv calls without the window after one that put nothing in it (see
 * above): the first run, and the longest, which the runs reach by doubling
 * while the calls between them find the same. */
enum { P2P_RUN = 16, P2P_RUN_MAX = 256 };

/* Whether a block of `bytes` travels point-to-point (see above); limit is
 * the call's direct_limit(). */
static int is_direct(size_t bytes, long limit)
{
    return limit > 0 && bytes >= (size_t)limit && bytes <= (size_t)INT_MAX;
}

/*
 * The size from which a block travels point-to-point: large, or less where
 * P - 1 blocks under large would fill more than two rounds of the window
 * (W bytes a round): a block goes through the window only if P - 1 blocks
 * of its size fit in two. Measured with IMB and OSU (Open MPI 4.1, 2 cores,
 * docs/defaults.md): Alltoallv at P = 32, 32 KiB blocks in four rounds of
 * 256 KiB ran at 0.84-0.92x native and point-to-point at 0.90-0.93x, where
 * 16 KiB blocks in two rounds ran at 1.3-1.4x, and P = 16 at 32 KiB in two
 * rounds at 0.98-1.04x. Every rank derives it alike, from P and the window.
 */
static long direct_limit(long large, size_t W, int P)
{
    const size_t two_rounds = 2 * W / (size_t)(P - 1); /* the largest block for two rounds */
    if (large <= 0 || two_rounds >= (size_t)large)
        return large;
    return (long)two_rounds + 1;
}

/* The tag of this call's point-to-point blocks (see above). */
static int direct_tag(const ct_shm_stream *s)
{
    return CT_TAG_SHM_DIRECT + (int)(s->calls & 1);
}

/*
 * The call's plan, from the counts alone (it allocates nothing): out[j] this
 * rank's block for rank j (none for itself), want[w] the block it reads from
 * rank i = me + 1 + w (the readers start at different parts), and which of
 * them travel point-to-point by each side's own decision.
 */
static void plan(const ct_a2av *x, const ct_typeinfo *st, const ct_typeinfo *rt, long large,
                 ct_shm_out *out, ct_shm_want *want)
{
    const int P = x->ctx->size, me = x->ctx->rank;
    for (int j = 0; j < P; j++) {
        const size_t bytes = j == me ? 0 : (size_t)ct_a2av_scount(x, j) * (size_t)st->size;
        out[j] = (ct_shm_out){.src = ct_a2av_sendblock(x, j) + st->true_lb,
                              .bytes = bytes,
                              .direct = is_direct(bytes, large)};
    }
    for (int w = 0; w < P - 1; w++) {
        const int i = (me + 1 + w) % P;
        want[w] = (ct_shm_want){.member = i,
                                .block = me,
                                .cap = (size_t)ct_a2av_rcount(x, i) * (size_t)rt->size,
                                .dst = ct_a2av_recvblock(x, i) + rt->true_lb};
        want[w].req = is_direct(want[w].cap, large) ? 0 : -1; /* 0: to be posted */
    }
}

/* The call's point-to-point blocks. */
typedef struct direct_state {
    const ct_a2av *x;
    MPI_Request *reqs;
    int n;    /* requests posted */
    int next; /* requests before it have completed */
    int tag;
    int rc; /* the first failure among them */
} direct_state;

/* Keeps the first failure among the point-to-point blocks. */
static void keep_first(direct_state *d, int rc)
{
    if (rc != MPI_SUCCESS && d->rc == MPI_SUCCESS)
        d->rc = rc;
}

/* Receives *want point-to-point into the user's buffer, with the user's
 * type and count (MPI reports a longer block): request d->reqs[d->n]. */
static int post_recv(direct_state *d, ct_shm_want *want)
{
    const MPI_Count count = ct_a2av_rcount(d->x, want->member);
    const int rc = ct_irecv(ct_a2av_recvblock(d->x, want->member),
                            count < INT_MAX ? count : INT_MAX, d->x->a->recvtype, want->member,
                            d->tag, d->x->ctx->comm, &d->reqs[d->n]);
    want->req = rc == MPI_SUCCESS ? d->n++ : -1;
    return rc;
}

/*
 * Posts this rank's point-to-point blocks before round 0: the receives its
 * own counts call for, from me - 1 down (rank me - t sends to this rank
 * t-th), then the sends, spread out (not every rank to rank 0 first). A
 * send that cannot be posted is dropped from the stream (0 bytes) and the
 * call fails on every rank through round 0.
 */
static int post_direct(direct_state *d, ct_shm_out *out, ct_shm_want *want)
{
    int rc = MPI_SUCCESS;
    const ct_a2av *x = d->x;
    const int P = x->ctx->size;
    for (int w = P - 2; w >= 0; w--)
        if (want[w].req == 0 && post_recv(d, &want[w]) != MPI_SUCCESS)
            rc = MPI_ERR_OTHER;
    for (int t = 1; t < P; t++) {
        const int j = (x->ctx->rank + t) % P;
        if (!out[j].direct)
            continue;
        if (ct_isend(ct_a2av_sendblock(x, j), ct_a2av_scount(x, j), x->a->sendtype, j, d->tag,
                     x->ctx->comm, &d->reqs[d->n]) == MPI_SUCCESS) {
            d->n++;
            continue;
        }
        out[j].direct = 0;
        out[j].bytes = 0;
        rc = MPI_ERR_OTHER;
    }
    return rc;
}

/* Completes what it can of the point-to-point blocks, in order: the MPI
 * library moves all of them on meanwhile (ct_shm_idle, during the rounds).
 * Returns whether one completed. */
static int drive(void *arg)
{
    direct_state *d = arg;
    const int first = d->next;
    while (d->next < d->n) {
        int done = 0;
        const int rc = PMPI_Test(&d->reqs[d->next], &done, MPI_STATUS_IGNORE);
        keep_first(d, rc);
        if (!done && rc == MPI_SUCCESS)
            break;
        d->next++;
    }
    return d->next > first;
}

/*
 * After round 0, which told every rank how each of its blocks travels: a
 * receive posted on this rank's own guess for a block its sender put in the
 * window is cancelled (the rounds copied the block), a block its sender
 * sent point-to-point against this rank's guess is received now.
 */
static void settle_direct(direct_state *d, ct_shm_want *want)
{
    const int P = d->x->ctx->size;
    for (int w = 0; w < P - 1; w++) {
        if (want[w].req >= 0 && !want[w].direct) {
            if (want[w].req >= d->next) /* not complete: no block can match it */
                keep_first(d, PMPI_Cancel(&d->reqs[want[w].req]));
        } else if (want[w].req < 0 && want[w].direct) {
            keep_first(d, post_recv(d, &want[w]));
        }
    }
}

/*
 * Then every request completes, even after a failure, so that nothing stays
 * in flight: blocking, or as far as they have (returns whether all have).
 * One at a time, so the call returns the error class of the first failure
 * (MPI_ERR_TRUNCATE for a block longer than its buffer), not
 * MPI_ERR_IN_STATUS.
 */
static int complete_direct(direct_state *d, int block)
{
    if (!block) {
        drive(d);
        return d->next == d->n;
    }
    for (; d->next < d->n; d->next++)
        keep_first(d, PMPI_Wait(&d->reqs[d->next], MPI_STATUS_IGNORE));
    return 1;
}

/*
 * Every block point-to-point, where all ranks come alike: an MPI_Alltoall
 * whose blocks are empty or of at least large bytes (every rank knows every
 * block's size from its own arguments, which the standard makes equal), or
 * an MPI_Alltoallv during a run (see above). The window has nothing to
 * carry and round 0 nothing to settle: no plan, no header, no
 * synchronisation, only the blocks, in the order post_direct uses
 * (receives from me - 1 down, sends from me + 1 up), with the call's tag,
 * and the own block. The blocking call posts the empty blocks too (a
 * receiver whose count is not 0 gets a message, as from the MPI library's
 * blocking routine); a request skips them, as the libraries' nonblocking
 * routines and the linear schedule do, so that an empty call is complete
 * at once. A block that cannot be posted stops the posting; what was posted
 * completes, and the call returns the first failure.
 */
static void post_all(direct_state *d, int skip_empty)
{
    const ct_a2av *x = d->x;
    const int P = x->ctx->size, me = x->ctx->rank;
    int rc = MPI_SUCCESS;
    for (int t = 1; t < P && rc == MPI_SUCCESS; t++) {
        const int i = (me - t + P) % P;
        if (skip_empty && !ct_a2av_recvs_from(x, i))
            continue;
        rc = ct_irecv(ct_a2av_recvblock(x, i), ct_a2av_rcount(x, i), x->a->recvtype, i, d->tag,
                      x->ctx->comm, &d->reqs[d->n]);
        d->n += rc == MPI_SUCCESS;
    }
    for (int t = 1; t < P && rc == MPI_SUCCESS; t++) {
        const int j = (me + t) % P;
        if (skip_empty && !ct_a2av_sends_to(x, j))
            continue;
        rc = ct_isend(ct_a2av_sendblock(x, j), ct_a2av_scount(x, j), x->a->sendtype, j, d->tag,
                      x->ctx->comm, &d->reqs[d->n]);
        d->n += rc == MPI_SUCCESS;
    }
    keep_first(d, rc);
    keep_first(d, ct_a2av_self_copy(x));
}

/* The blocking call's: posted, then completed one at a time (the first
 * failure's class). */
static int all_p2p(direct_state *d)
{
    post_all(d, 0);
    for (; d->next < d->n; d->next++)
        keep_first(d, PMPI_Wait(&d->reqs[d->next], MPI_STATUS_IGNORE));
    return d->rc;
}

/* Is an Alltoallv call on s, with direct limit large, in a run without the
 * window (see above)? The same on every rank. */
static int in_run(const ct_shm_stream *s, long large)
{
    return s->p2p_left > 0 && s->p2p_limit == large;
}

/*
 * After an Alltoallv's exchange with direct limit large, on every rank
 * alike: whether it found what begins a run (found), and so the next run.
 * A run twice as long as the last, up to P2P_RUN_MAX, where the call that
 * ended the last found the same under the same large; else P2P_RUN.
 */
static void learn_run(ct_shm_stream *s, int found, long large)
{
    if (s->p2p_limit != large) /* the runs before were found under another limit */
        s->p2p_run = 0;
    if (found) {
        const int next = s->p2p_run > 0 ? 2 * s->p2p_run : P2P_RUN;
        s->p2p_run = next < P2P_RUN_MAX ? next : P2P_RUN_MAX;
    } else {
        s->p2p_run = 0;
    }
    s->p2p_left = s->p2p_run;
    s->p2p_limit = large;
}

/* ------------------------------------------------------------------ */
/* A call                                                              */
/* ------------------------------------------------------------------ */

/* One call, blocking or a request's: what it moves and how far it has got. */
typedef struct shm_call {
    ct_alltoallv_args args; /* a request's own copy of the description */
    ct_a2av x;
    ct_typeinfo st, rt; /* each side's type, asked once per call */
    ct_shm_stream *s;
    long large;   /* the direct limit (direct_limit) */
    int tag;      /* of the point-to-point blocks */
    direct_state d;
    ct_shm_idle idle;
    ct_shm_xchg xchg;
    int xchg_rc;  /* the exchange's result, once it has completed */
    size_t staged;
    /* a request's own buffers for non-contiguous sides (a blocking call's
     * are the context's) */
    char *packed, *stage;
    ct_shm_job job; /* a request's place in the window's queue */
    /* An Alltoallv request's, for its calls in a run: a receive and a send
     * per peer, allocated with it (none in a blocking call's) */
    MPI_Request run_reqs[];
} shm_call;

/* Memory for packing or staging: the request's own, or the context's. */
static char *side_buffer(shm_call *c, char *own, const ct_ctx_buf_key *key, size_t bytes)
{
    if (own != NULL)
        return own;
    char *mem = ct_ctx_buffer(c->x.ctx, key, bytes);
    if (mem != NULL)
        c->x.ctx->call_extra += bytes;
    return mem;
}

/* A non-contiguous send side: the blocks that go through the window packed
 * into a buffer, back to back. */
static int pack_sends(shm_call *c, ct_shm_out *out)
{
    int rc = MPI_SUCCESS;
    const ct_a2av *x = &c->x;
    const int P = x->ctx->size;
    size_t packed_bytes = 0;
    char *packed;
    for (int j = 0; j < P; j++)
        if (!out[j].direct)
            packed_bytes += out[j].bytes;
    if (c->st.contig || packed_bytes == 0)
        return MPI_SUCCESS;
    packed = side_buffer(c, c->packed, &ct_buf_shm_send, packed_bytes);
    if (packed == NULL)
        return MPI_ERR_NO_MEM;
    for (int j = 0; j < P; j++) {
        if (out[j].direct)
            continue;
        if (out[j].bytes > 0)
            CT_CALL(ct_pack_elems(ct_a2av_sendblock(x, j), ct_a2av_scount(x, j),
                                  x->a->sendtype, &c->st, packed, 0, x->ctx->comm));
        out[j].src = packed;
        packed += out[j].bytes;
    }
out:
    return rc;
}

/* A non-contiguous receive side: the blocks the window may bring staged in
 * a buffer (c->staged: its bytes, 0 when not). */
static int stage_recvs(shm_call *c, ct_shm_want *want)
{
    const int P = c->x.ctx->size;
    char *stage;
    c->staged = 0;
    for (int w = 0; w < P - 1 && !c->rt.contig; w++)
        c->staged += want[w].cap;
    if (c->staged == 0)
        return MPI_SUCCESS;
    stage = side_buffer(c, c->stage, &ct_buf_shm_recv, c->staged);
    if (stage == NULL)
        return MPI_ERR_NO_MEM;
    for (int w = 0; w < P - 1; w++) {
        want[w].dst = stage;
        stage += want[w].cap;
    }
    return MPI_SUCCESS;
}

/* A non-contiguous receive side: the staged blocks into the user's buffer. */
static int unstage(const shm_call *c, const ct_shm_want *want)
{
    int rc = MPI_SUCCESS;
    const ct_a2av *x = &c->x;
    for (int w = 0; w < x->ctx->size - 1; w++)
        if (want[w].cap > 0 && !want[w].direct)
            CT_CALL(ct_pack_elems(ct_a2av_recvblock(x, want[w].member),
                                  ct_a2av_rcount(x, want[w].member), x->a->recvtype, &c->rt,
                                  want[w].dst, 1, x->ctx->comm));
out:
    return rc;
}

/* The description, the types and the window: every form's first step. */
static int call_prepare(shm_call *c, const ct_alltoallv_args *a, ct_ctx *ctx)
{
    int rc;
    static const ct_ctx_key window_key = CT_SHM_STREAM_KEY("shm window");
    CT_CALL(ct_a2av_prepare(&c->x, a, ctx));
    CT_CALL(ct_type_info(a->sendtype, &c->st));
    CT_CALL(ct_type_info(a->recvtype, &c->rt));
    c->s = NULL;
    if (ctx->size > 1)
        CT_CALL(ct_shm_stream_get(ctx, &window_key, ctx->comm, ctx->size, "shm", &c->s));
out:
    return rc;
}

/* Is the call an MPI_Alltoall's (blocking, nonblocking or persistent)? */
static int coll_is_alltoall(ct_coll coll)
{
    return coll == CT_COLL_ALLTOALL || coll == CT_COLL_IALLTOALL;
}

static int is_alltoall(const shm_call *c) { return coll_is_alltoall(c->x.a->coll); }

/* Does this MPI_Alltoall skip the window, its blocks all empty or all
 * point-to-point (all_p2p)? */
static int alltoall_skips_window(const shm_call *c)
{
    if (!is_alltoall(c))
        return 0;
    const size_t block = (size_t)ct_a2av_scount(&c->x, 0) * (size_t)c->st.size;
    return block == 0 || is_direct(block, c->large);
}

/* The start of the exchange (the window is this call's): the plan, the
 * point-to-point blocks posted, the own block copied, round 0 published. */
static void call_begin(shm_call *c, int blocking)
{
    ct_shm_stream *s = c->s;
    const int P = c->x.ctx->size;
    c->d = (direct_state){.x = &c->x, .reqs = s->reqs, .tag = c->tag};
    c->idle = (ct_shm_idle){drive, &c->d};
    c->xchg_rc = MPI_SUCCESS;
    plan(&c->x, &c->st, &c->rt, c->large, s->out, s->want);
    int local_rc = post_direct(&c->d, s->out, s->want);
    if (local_rc == MPI_SUCCESS)
        local_rc = pack_sends(c, s->out);
    if (local_rc == MPI_SUCCESS)
        local_rc = stage_recvs(c, s->want);
    if (local_rc == MPI_SUCCESS)
        local_rc = ct_a2av_self_copy(&c->x);
    ct_shm_stream_begin(&c->xchg, s, s->out, local_rc, s->want, P - 1, NULL, blocking);
}

/* Takes the call on: the exchange, then the point-to-point blocks, then
 * the staged blocks. Blocking, to its end; else as far as it goes without
 * waiting. Returns the call's error class once *done. */
static int call_advance(shm_call *c, int block, int *done)
{
    ct_shm_stream *s = c->s;
    *done = 0;
    if (!c->xchg.done) {
        int xdone;
        c->xchg_rc = ct_shm_stream_advance(&c->xchg, c->d.n > 0 ? &c->idle : NULL, block, &xdone);
        if (!xdone)
            return MPI_SUCCESS;
        settle_direct(&c->d, s->want); /* whatever round 0 said */
    }
    if (!complete_direct(&c->d, block))
        return MPI_SUCCESS;
    *done = 1;
    int rc = c->xchg_rc != MPI_SUCCESS ? c->xchg_rc : c->d.rc;
    if (rc == MPI_SUCCESS && c->staged > 0)
        rc = unstage(c, s->want);
    return rc;
}

int ct_alltoallv_shm(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params)
{
    int rc, done;
    const int P = ctx->size;
    shm_call c;
    CT_CALL(call_prepare(&c, a, ctx));
    if (P == 1)
        return ct_a2av_self_copy(&c.x);
    ct_shm_stream *s = c.s;
    if (s == NULL)
        return a->forward(a); /* no window on some rank: every rank comes here */
    if (!ct_shm_stream_idle(s)) /* the nonblocking calls started before this one */
        ct_shm_stream_progress(s, NULL, 1);
    c.large = direct_limit(params[0], s->W, P);
    c.tag = direct_tag(s);
    c.packed = c.stage = NULL;
    /* An MPI_Alltoall whose blocks all travel point-to-point, or a call of a
     * point-to-point run (see above): no window */
    const int alltoall = is_alltoall(&c);
    if (alltoall ? alltoall_skips_window(&c) : in_run(s, c.large)) {
        direct_state d = {.x = &c.x, .reqs = s->reqs, .tag = c.tag};
        s->calls++; /* as an exchange counts it: the next call's tag differs */
        s->p2p_left -= !alltoall;
        return all_p2p(&d);
    }
    ctx->call_extra += ct_shm_stream_bytes(P);
    call_begin(&c, 1);
    rc = call_advance(&c, 1, &done);
    if (!alltoall) /* on every rank alike, whatever rc */
        learn_run(s, s->all_direct, c.large);
out:
    return rc;
}

/* ------------------------------------------------------------------ */
/* The nonblocking and persistent forms                                */
/* ------------------------------------------------------------------ */

static shm_call *call_of(ct_shm_job *job)
{
    return (shm_call *)((char *)job - offsetof(shm_call, job));
}

/*
 * A request's call begins when the window is its: the calls before it have
 * completed on this rank, so every rank reads the same run. In a run, it
 * posts its blocks point-to-point alone, on its own requests and with the
 * request's tag, the empty ones left out (post_all), and leaves the queue
 * (returns 0): the next call may begin at once, and the request completes
 * when its blocks have (step_test, step_wait). Else, the exchange.
 */
static int job_begin(ct_shm_job *job)
{
    shm_call *c = call_of(job);
    ct_shm_stream *s = c->s;
    if (is_alltoall(c) || !in_run(s, c->large)) {
        call_begin(c, 0);
        return 1;
    }
    c->d = (direct_state){.x = &c->x, .reqs = c->run_reqs, .tag = c->tag};
    s->calls++;
    s->p2p_left--;
    post_all(&c->d, 1);
    return 0;
}

/* A request's exchange that put nothing in the window, its blocks all
 * point-to-point or all empty, begins a run: after an empty one the calls
 * of the run complete at once, as the MPI library's do. (A blocking call
 * would post its empty blocks all the same, so only all_direct begins its
 * runs.) */
static int job_advance(ct_shm_job *job, int *done)
{
    shm_call *c = call_of(job);
    const int rc = call_advance(c, 0, done);
    if (*done && !is_alltoall(c)) /* on every rank alike, whatever rc */
        learn_run(c->s, c->s->empty, c->large);
    return rc;
}

static int step_start(void *state)
{
    shm_call *c = state;
    ct_shm_stream_enqueue(c->s, &c->job);
    return MPI_SUCCESS;
}

/* Whether the request's call began in a run (job_begin returned 0). From
 * then on the request does not look at the window: a later blocking call
 * may release it (this rank's copy of the request holds the communicator,
 * but another rank's may be complete and freed: cache.h). */
static int in_a_run(const shm_call *c)
{
    return __atomic_load_n(&c->job.detached, __ATOMIC_ACQUIRE);
}

static int step_test(void *state, int *done)
{
    shm_call *c = state;
    if (!in_a_run(c)) {
        *done = ct_shm_stream_progress(c->s, &c->job, 0);
        if (!in_a_run(c))
            return *done ? c->job.rc : MPI_SUCCESS;
    }
    /* done only once every block has, even after a failure: the request
     * (and its run_reqs with it) may be freed at its completion */
    *done = complete_direct(&c->d, 0);
    return *done ? c->d.rc : MPI_SUCCESS;
}

static int step_wait(void *state)
{
    shm_call *c = state;
    if (!in_a_run(c))
        ct_shm_stream_progress(c->s, &c->job, 1);
    if (!in_a_run(c))
        return c->job.rc;
    complete_direct(&c->d, 1);
    return c->d.rc;
}

static void step_free(void *state)
{
    shm_call *c = state;
    free(c->packed);
    free(c->stage);
    free(c);
}

static const ct_step shm_step = {step_start, step_test, step_wait, step_free};

/* Bytes of the blocks a side has for the others (the most the window or
 * its staging carries). */
static size_t side_bytes(const ct_a2av *x, int send, const ct_typeinfo *t)
{
    size_t bytes = 0;
    for (int j = 0; j < x->ctx->size; j++)
        if (j != x->ctx->rank)
            bytes += (size_t)(send ? ct_a2av_scount(x, j) : ct_a2av_rcount(x, j)) * t->size;
    return bytes;
}

/*
 * The nonblocking and persistent forms (see above): one step, the call
 * (core/sched.h), made here with its own buffers for non-contiguous sides,
 * so that a start allocates nothing. The window is made (collectively) by
 * the first call on the communicator that needs it, here.
 */
int ct_alltoallv_shm_build(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params,
                           ct_sched *s)
{
    int rc;
    const size_t nrun = coll_is_alltoall(a->coll) ? 0 : 2 * (size_t)(ctx->size - 1);
    size_t bytes = sizeof(shm_call) + nrun * sizeof(MPI_Request);
    shm_call *c = calloc(1, bytes);
    if (c == NULL)
        return MPI_ERR_NO_MEM;
    c->args = *a;
    CT_CALL(call_prepare(c, &c->args, ctx));
    if (c->s != NULL) {
        c->large = direct_limit(params[0], c->s->W, ctx->size);
        if (alltoall_skips_window(c))
            c->s = NULL;
    }
    /* Where nothing advances a request while its rank is in another MPI call
     * (MPICH: no progress hook, core/request.h), a call queued on the window
     * behind another could wait for a rank blocked elsewhere (MPICH's
     * coll/nonblocking3 hangs so): the linear schedule, whose messages the
     * MPI library moves by itself. The same library on every rank: all agree. */
    if (c->s != NULL && !ct_request_hooked())
        c->s = NULL;
    if (c->s == NULL) { /* one rank, no window, no block in it, no hook */
        free(c);
        return ct_alltoallv_linear_build(a, ctx, NULL, s);
    }
    if (!c->st.contig) {
        const size_t n = side_bytes(&c->x, 1, &c->st);
        c->packed = malloc(n > 0 ? n : 1);
        bytes += n;
    }
    if (!c->rt.contig) {
        const size_t n = side_bytes(&c->x, 0, &c->rt);
        c->stage = malloc(n > 0 ? n : 1);
        bytes += n;
    }
    if ((!c->st.contig && c->packed == NULL) || (!c->rt.contig && c->stage == NULL)) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    c->tag = s->tag;
    c->job = (ct_shm_job){.begin = job_begin, .advance = job_advance};
    CT_CALL(ct_sched_reserve(s, 1, 1));
    ct_sched_step(s, &shm_step, c, bytes);
    return MPI_SUCCESS;
out:
    step_free(c);
    return rc;
}
