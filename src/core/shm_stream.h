/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm_stream.h - personalised exchange through a bounded shared-memory
 * window: the one round engine of the shared-window algorithms, the shm
 * Alltoall(v) (alltoallv/alltoallv_shm.c: every rank of the communicator),
 * the node-aware hierarchical one (alltoallv/alltoallv_node_aware.c: the
 * ranks of one node) and the shm intercommunicator Allgather(v)
 * (allgather_inter/allgather_inter_shm.c: the ranks of both groups, one
 * block each).
 *
 * Each member of the window's group publishes a stream: its outgoing blocks
 * 0 .. nblocks-1 back to back. A member reads any block of any member's
 * stream straight into its destination. The window holds, per member, two
 * halves of W data bytes (COLTUNE_SHM_WINDOW) and a header; a call runs in
 * rounds, round r carrying bytes [r W, (r+1) W) of every stream.
 *
 * Round r (seq: rounds run on this window, the same on every member):
 *   1. copy the round's part of this rank's stream into half (seq mod 2),
 *      in round 0 with the header: stream length, an error flag and the
 *      offset and size of every block;
 *   2. publish count seq + 1 (shm.h);
 *   3. for every member, as soon as it has published seq + 1 (whichever
 *      publishes first), copy the wanted blocks' parts of the round out of
 *      its half; the round ends when this rank has seen every member
 *      publish.
 * A member publishes round r + 1 only after it has read round r, so when a
 * writer has seen every member publish round r all have finished reading
 * round r - 1 from the half it is about to overwrite: one synchronisation
 * per round, and no fast writer can overwrite what a slow reader still needs
 * (with a single half it could, and ranks would disagree on the rounds).
 * The number of rounds is ceil(longest stream / W), read from the headers of
 * round 0 by every member alike.
 *
 * A block the writer marks direct takes no space in its stream: the header
 * says so, and the writer's caller sends it by point-to-point, its reader's
 * caller receives it (alltoallv/alltoallv_shm.c). The header's block table is written
 * even when the writer reports an error, so that a reader always learns how
 * each block it wants travels, and can settle a point-to-point receive it
 * posted on its own guess.
 */
#ifndef CT_SHM_STREAM_H
#define CT_SHM_STREAM_H

#include "core/context.h"
#include "core/shm.h"

/* A piece of an outgoing block. */
typedef struct ct_shm_piece {
    const char *src;
    size_t bytes;
} ct_shm_piece;

/* One of this rank's outgoing blocks: bytes at src, or, with npiece > 0,
 * the pieces piece[0 .. npiece-1] back to back (bytes their sum). */
typedef struct ct_shm_out {
    const char *src;
    size_t bytes;
    int direct; /* not in the stream: the caller sends it otherwise */
    const ct_shm_piece *piece;
    int npiece;
} ct_shm_out;

/* A block this rank reads: block `block` of member `member`'s stream (this
 * rank's own too), into dst, which holds cap bytes (a longer block is an
 * MPI_ERR_TRUNCATE). The exchange sets off, bytes and direct. A want whose
 * dst is NULL is placed by the caller once its length is known (ct_shm_place). */
typedef struct ct_shm_want {
    int member, block;
    char *dst;
    size_t cap;
    size_t off, bytes; /* where the block lies in the member's stream, its length */
    int direct;        /* the writer marked it direct: not copied, the caller receives it */
    int deferred;      /* dst was NULL: placed after round 0 */
    int req;           /* the caller's own: its receive request for the block, or -1 */
} ct_shm_want;

/* Work a caller has in flight during the rounds (its point-to-point
 * blocks): fn(arg) is called while this rank waits for another member, so
 * that the MPI library moves it on meanwhile. It returns whether some of
 * the work completed: then the rank looks again at once, and gives its core
 * away (ct_shm_pause) only when nothing moved. Yielding after every look,
 * busy or not, cost the point-to-point blocks a few percent more at 32 KiB
 * to 128 KiB (Alltoallv, 4 to 16 ranks on two cores: 0.81 against 0.86x
 * native at P = 4, 0.92 against 0.99x at P = 16, 32 KiB). */
typedef struct ct_shm_idle {
    int (*fn)(void *arg);
    void *arg;
} ct_shm_idle;

/* Wants placed once their lengths are known: fn(arg, want, nwant, rounds) is
 * called once, after round 0 has read every member's header (so every
 * want's bytes are set), with the number of rounds the exchange runs. It
 * sets dst (and cap >= bytes) of the wants whose dst is NULL; with rounds ==
 * 1 it may leave one NULL, to be read in place after the exchange
 * (ct_shm_stream_block). An error it returns skips the deferred copies; the
 * rounds still run, and the exchange returns that error. */
typedef struct ct_shm_place {
    int (*fn)(void *arg, ct_shm_want *want, int nwant, size_t rounds);
    void *arg;
} ct_shm_place;

/*
 * An exchange that a nonblocking or persistent call runs on the window: a
 * job in the window's queue. The window serves one exchange at a time, in
 * the order the calls started (the same on every member): a job begins
 * (begin: it prepares and publishes its round 0, telling the members of a
 * failure through it) once the one before it has completed on this rank,
 * and advance takes it on without blocking; its completion (the call's
 * error class in rc) begins the next. A begin that finds the window has
 * nothing to carry for its call (the shm Alltoallv's runs without it)
 * returns 0: the job leaves the queue at once (detached), the next begins,
 * and the job's owner completes the call without the queue
 * (ct_shm_stream_progress returns once the job is detached).
 */
typedef struct ct_shm_job {
    struct ct_shm_job *next;
    int (*begin)(struct ct_shm_job *job); /* returns whether it holds the window */
    int (*advance)(struct ct_shm_job *job, int *done); /* without blocking */
    int done, rc;
    int detached; /* atomic: begun without the window, no longer the queue's */
} ct_shm_job;

/* A window for streams of nblocks blocks, created by the first call that
 * needs it and cached in the context (freed with it). */
typedef struct ct_shm_stream {
    ct_shm_win *w;
    MPI_Comm comm; /* the window's group: ctx->comm, ctx->union_comm, or a node
                      communicator it owns */
    ct_ctx *ctx;   /* the context it hangs on (its bytes count in the cache) */
    size_t charged; /* bytes counted in the cache (core/cache.h) */
    int whole;      /* its group is the whole of ctx->decide_comm: the cache may ask
                       it back (a node's window of several is kept, cache.h) */
    int retire;     /* in the last exchange some member asked for its release:
                       read from every member's header, so the same on all */
    void *spare;    /* what takes its place when it is released (made with it, so
                       that no rank can fail to make it then) */
    int owns_comm;
    int nblocks;
    size_t W;   /* data bytes per half */
    size_t hdr; /* header bytes per half */
    /* Per member, for a call: its wants, want_first .. + want_count; and
     * the members a round still waits for (pending). */
    int *want_first, *want_count, *pending;
    /* A caller's plan of one exchange of nblocks blocks, and its requests:
     * out[nblocks], want[nblocks], reqs[2 nblocks], allocated with the window,
     * so that nothing can fail for want of memory between the caller posting
     * its point-to-point blocks and round 0. */
    ct_shm_out *out;
    ct_shm_want *want;
    MPI_Request *reqs;
    int *members; /* the caller's own map from its peers to members, made by
                     its first call (the shm Allgather(v): remote rank to
                     union rank); freed with the window */
    unsigned long calls; /* exchanges begun on the window, the same on every member */
    /* What the last exchange put in the window, read from every member's
     * header in round 0, so the same on every member: no byte (empty), and
     * of those, one where some member marked a block direct (all_direct). */
    int empty, all_direct;
    /* The caller's own (alltoallv_shm.c), the same on every member: calls
     * still to make without the window, the length of the last such run,
     * and the direct limit under which it was found. */
    int p2p_left, p2p_run;
    long p2p_limit;
    unsigned long seq0;  /* the half round 0 of the last exchange used */
    ct_shm_job *head, *tail; /* the queue of nonblocking exchanges, head running */
    int queue_busy;          /* a thread is at the queue (atomic) */
} ct_shm_stream;

/* Buffers of ct_ctx_buffer() the shared-memory algorithms use. */
extern const ct_ctx_buf_key ct_buf_shm_send, ct_buf_shm_recv, ct_buf_shm_plan;

/* Window bytes per member for streams of nblocks blocks (the configured W). */
size_t ct_shm_stream_bytes(int nblocks);

/* How a user of streams keys its window in the context (ct_ctx_ext): each
 * defines static const ct_ctx_key k = CT_SHM_STREAM_KEY("name") and passes &k
 * to ct_shm_stream_get. */
int ct_shm_stream_create(ct_ctx *ctx, void *arg, void **obj);
void ct_shm_stream_release(void *obj);
void *ct_shm_stream_retire(void *obj);
#define CT_SHM_STREAM_KEY(name)                                                              \
    {(name), ct_shm_stream_create, ct_shm_stream_release, ct_shm_stream_retire}

/*
 * The context's window under key over comm (ranks that share memory:
 * ctx->comm itself or an intercommunicator's ctx->union_comm), or, with
 * comm MPI_COMM_NULL, over this rank's node of ctx->comm (a node
 * communicator the window owns), created collectively over ctx->decide_comm
 * (every rank of the communicator, both groups of an intercommunicator) by
 * the first call. *out is NULL on every rank when some rank could not set
 * up its window (a small /dev/shm, say), on that call and every later one;
 * who names the algorithm in the one log message. It is NULL too where the
 * window does not fit the cache limit on some rank (core/cache.h): then it
 * is asked for again at this key's 2nd, 4th, 8th, ... call; likewise after
 * the cache asked it back and its ranks released it (from the next call).
 */
int ct_shm_stream_get(ct_ctx *ctx, const ct_ctx_key *key, MPI_Comm comm, int nblocks,
                      const char *who, ct_shm_stream **out);

/*
 * One exchange. out[0 .. nblocks-1] is this rank's stream (a block of 0
 * bytes takes no space); want[0 .. nwant-1] the blocks it reads, grouped
 * by member (each member's wants next to each other). local_rc
 * is this rank's readiness (MPI_SUCCESS, or why it has nothing to publish):
 * round 0 tells every member, and then all return an error (the blocks'
 * direct flags are still read, from every member whose out was not NULL;
 * want may be NULL when local_rc is an error). A block longer
 * than its destination is cut and the call returns MPI_ERR_TRUNCATE on the
 * reader, after the rounds (the others are not kept waiting). idle, if not
 * NULL, is called whenever this rank waits for another member; place, if not
 * NULL, places the wants whose dst is NULL.
 */
int ct_shm_stream_run(ct_shm_stream *s, const ct_shm_out *out, int local_rc, ct_shm_want *want,
                      int nwant, const ct_shm_idle *idle, const ct_shm_place *place);

/* Where the copy into this rank's stream has got to: block k starts at
 * stream offset start; blocks before k are in the window already. */
typedef struct ct_shm_cursor {
    int k;
    size_t start;
} ct_shm_cursor;

/* A round as this rank reads it, and (round 0) what the headers said. */
typedef struct ct_shm_round {
    unsigned long seq; /* the round's half, on every member */
    size_t lo, hi;     /* the stream bytes it carries */
    int first;         /* round 0: headers to read */
    size_t longest;    /* the longest stream seen (round 0) */
    int direct;        /* some member marked a block direct (round 0) */
    int release;       /* some member's cache asks the window back (round 0) */
    int error, truncated;
} ct_shm_round;

/* ct_shm_stream_run in steps: its arguments and where it has got to. */
typedef struct ct_shm_xchg {
    ct_shm_stream *s;
    const ct_shm_out *out;
    int local_rc;
    ct_shm_want *want;
    int nwant;
    const ct_shm_place *place;
    int blocking; /* a blocking call's: only it may retire the window (cache.h) */
    size_t total, r, rounds;
    ct_shm_round rs;
    ct_shm_cursor c;
    int npending; /* members the round still waits for (s->pending); -1: not looked */
    int place_rc, done, rc;
} ct_shm_xchg;

/*
 * The same exchange in steps. Begin publishes round 0 (it cannot block);
 * advance reads what the members have published and runs the later rounds,
 * blocking until the exchange completes or (block 0) returning as soon as
 * it would wait, *done set once complete (its return value then the
 * exchange's). The window serves one exchange at a time: a caller begins
 * one only when the last has completed on this rank (the queue, below).
 * Only a blocking call's exchange (blocking 1: every rank is in it at once)
 * passes on its cache's wish to release the window (cache.h).
 */
void ct_shm_stream_begin(ct_shm_xchg *x, ct_shm_stream *s, const ct_shm_out *out, int local_rc,
                         ct_shm_want *want, int nwant, const ct_shm_place *place, int blocking);
int ct_shm_stream_advance(ct_shm_xchg *x, const ct_shm_idle *idle, int block, int *done);

/* Puts job at the end of the window's queue, and begins it if it is first. */
void ct_shm_stream_enqueue(ct_shm_stream *s, ct_shm_job *job);
/*
 * Advances the queue: until job has completed (block), or as far as it goes
 * without waiting (block 0). With job NULL, until the queue is empty: a
 * blocking call's exchange on the window, and the window's release, wait
 * for the nonblocking ones started before them (on every member in the same
 * order). Returns whether job is done or detached (1 when job is NULL and
 * the queue is empty).
 */
int ct_shm_stream_progress(ct_shm_stream *s, ct_shm_job *job, int block);
static inline int ct_shm_stream_idle(const ct_shm_stream *s)
{
    return __atomic_load_n(&s->head, __ATOMIC_ACQUIRE) == NULL;
}

/*
 * Where a wanted block lies in its writer's part of the window, after an
 * exchange of one round. It stays there until this rank's next exchange on
 * the window: a writer overwrites that half only after every member,
 * this one included, has published the round after it.
 */
static inline const char *ct_shm_stream_block(const ct_shm_stream *s, const ct_shm_want *want)
{
    return s->w->part[want->member] + (s->seq0 & 1) * (s->hdr + s->W) + s->hdr + want->off;
}

#endif
