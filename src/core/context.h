/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * context.h - one context per user communicator.
 *
 * Created lazily by the first intercepted call on a communicator and cached
 * on it with an attribute whose delete callback frees it. It holds the private
 * duplicate communicator that carries all of coltune's internal traffic, the
 * node topology, reusable scratch buffers and what the modules above keep per
 * communicator (the decision's cache, shared windows: ct_ctx_ext).
 */
#ifndef CT_CONTEXT_H
#define CT_CONTEXT_H

#include "core/ct_common.h"
#include "core/state.h"

typedef struct ct_topo {
    int N;           /* nodes */
    int Q;           /* ranks per node (of the largest node) */
    int node;        /* this rank's node index, 0..N-1 (nodes numbered by lowest rank) */
    int local_rank;  /* this rank's index within its node */
    int consecutive; /* each node's ranks are one consecutive range */
    int uniform;     /* every node holds exactly Q ranks */
    int emulated;    /* nodes come from COLTUNE_PPN, not MPI_COMM_TYPE_SHARED */
    int shared;      /* all ranks share memory (one MPI_COMM_TYPE_SHARED domain),
                        whatever COLTUNE_PPN emulates */
    int *node_of;    /* [P] node index of each rank */
    int *local_of;   /* [P] index of each rank within its node */
    int *node_size;  /* [N] ranks on each node */
} ct_topo;

/* The communicator's shape: the quantities a rule or a parameter bound may
 * use. */
typedef struct ct_shape {
    long P; /* communicator size */
    long Q; /* ranks per node (largest node when nodes are uneven) */
    long N; /* number of nodes */
} ct_shape;

struct ct_ctx;

/*
 * What the modules above core keep per communicator (windows, node
 * communicators, caches, decisions): each defines one static key per kind of
 * object and reaches its object with ct_ctx_ext(); core names none of them.
 */
typedef struct ct_ctx_key {
    const char *name; /* for readers and debuggers */
    /* Makes the object (arg: what the caller of ct_ctx_ext passed); may be
     * collective, when every rank calls ct_ctx_ext for the key in the same
     * call. A NULL *obj is not kept: the next ct_ctx_ext makes it again.
     * A key reached from a local call (coltune_decision: the decision's
     * cache) may be reached by several threads at once: each makes one,
     * the first hung on the context is kept and the others are released at
     * once, so its create and release must be local. */
    int (*create)(struct ct_ctx *ctx, void *arg, void **obj);
    /* Frees it with the context, before the private communicator is freed
     * (it may be collective); objects go in the reverse order of creation,
     * the same on every rank. */
    void (*release)(void *obj);
    /* Optional: where the object's ranks agreed, in the call now ending, to
     * release it (a shared window the cache asked back, core/cache.h), the
     * object that takes its place (ct_ctx_ext_retire then releases it);
     * NULL to keep it. */
    void *(*retire)(void *obj);
} ct_ctx_key;

#define CT_CTX_NEXT 12 /* objects one context can hold (the library has 10 keys) */

/*
 * A growable buffer of a context (ct_ctx_buffer): each user defines one
 * static key per buffer it needs, so no two users, and no two buffers of one
 * call, can share a buffer by mistake.
 */
typedef struct ct_ctx_buf_key {
    const char *name;
} ct_ctx_buf_key;

#define CT_CTX_NBUFS 16 /* buffers one context can hold (the library has 15 keys) */

typedef struct ct_ctx {
    MPI_Comm comm; /* private duplicate of the user's communicator */
    int rank, size; /* in comm (the local group for an intercommunicator) */
    int is_inter;
    /* Intercommunicators only (MPI_COMM_NULL otherwise), created once: */
    int remote_size;
    MPI_Comm local_comm; /* intra-communicator of the local group, by local rank */
    MPI_Comm union_comm; /* intra-communicator over both groups (merge) */
    /* Where decisions are agreed (the one small allreduce) and topology is
     * measured: comm for an intra-communicator, union_comm for an inter one.
     * decide_rank is the rank there; rank 0 writes the decision log. */
    MPI_Comm decide_comm;
    int decide_rank;
    int serial;    /* number for log messages */
    char name[MPI_MAX_OBJECT_NAME];
    ct_topo topo;
    ct_shape shape; /* P, Q, N for rules and parameter expressions; for an
                       intercommunicator P is the size of both groups together */
    /* Calls on this communicator agree whether a buffer is GPU memory
     * (select/decide.c): some rank had a GPU runtime loaded when the context
     * was made, or COLTUNE_DEVICE=always. Agreed then, so a rank without a
     * runtime takes part too and none waits alone. */
    int device_agree;
    /* Reusable buffers, grown on demand and freed with the context. */
    void *scratch;
    size_t scratch_size;
    MPI_Request *reqs;
    int nreqs;
    struct {
        const ct_ctx_buf_key *key; /* NULL: free */
        char *p;
        size_t size;
    } buf[CT_CTX_NBUFS]; /* ct_ctx_buffer() */
    size_t call_extra; /* extra memory the current call used, for statistics */
    /* Under COLTUNE_STATS, the statistics entry and bytes of the call the
     * driver runs (-1: none): a persistent request it makes takes them, and
     * counts each of its starts there (ct_request_launch). */
    int stat_index;
    double stat_bytes;
    /* Bit c set: every call of collective c on this communicator goes to the
     * MPI library's own routine, unseen (the decision layer sets it: see
     * ct_ctx_forwards). */
    unsigned forwards;
    void *cache; /* the process-wide cache's record of it (core/cache.c), also
                    hung on it as an object below */
    /* The modules' objects (ct_ctx_ext), in order of creation: appended
     * under the state lock, next published with a release store, so that a
     * local call in another thread (coltune_decision) may look them up. */
    struct {
        const ct_ctx_key *key;
        void *obj;
    } ext[CT_CTX_NEXT];
    int next;
    /* Requests that use it (core/request.h; under the state lock): a
     * communicator freed while one is pending keeps its private
     * communicator until the last is freed (orphaned: freed meanwhile).
     * kept: freed while some rank's request held it, so its modules'
     * objects (windows, plans), which the requests' schedules use, stay
     * too, on every rank, until MPI_Finalize (next_kept: the list of them,
     * in the order the communicators were freed). */
    int holds, orphaned, kept;
    struct ct_ctx *next_kept;
    /* Nonblocking calls started on it, and persistent calls made (their
     * inits), every rank alike (in the order of the calls, which MPI makes
     * the same on every rank). */
    unsigned nbc_calls;
    uint64_t persistent_calls; /* never wraps: it says when the tags have */
    /* The persistent tags this rank's live requests hold (bit t: tag
     * CT_TAG_PERSISTENT + t; made at the first persistent call, NULL when
     * that failed: then every tag counts as held once the count wraps). */
    unsigned long *persistent_held;
} ct_ctx;

/* Returns the context of comm, creating it (collectively) on first use. */
int ct_ctx_get(MPI_Comm comm, ct_ctx **out);
/* The context of comm if it already has one (*out NULL otherwise); local. */
int ct_ctx_lookup(MPI_Comm comm, ct_ctx **out);

/*
 * Whether a call of collective coll on comm can go to the MPI library at
 * once: comm is the communicator whose context was looked up last (the
 * cache ct_ctx_get keeps where one thread calls MPI at a time) and bit coll
 * of its forwards is set. Local, no MPI call: the interception's fast path
 * for a communicator the rules leave to the MPI library.
 */
static inline int ct_ctx_forwards(MPI_Comm comm, unsigned coll)
{
    const ct_state *st = ct_state_get();
    const ct_ctx *ctx = st->last.ctx;
    return ctx != NULL && st->last.comm == comm && (ctx->forwards >> coll & 1u);
}

/* A request uses ctx until it is freed (ct_ctx_unhold); a context whose
 * communicator was freed meanwhile is freed with the last hold. */
void ct_ctx_hold(ct_ctx *ctx);
void ct_ctx_unhold(ct_ctx *ctx);
/* Has the application freed its communicator (a request still holds it)? */
int ct_ctx_orphaned(ct_ctx *ctx);
/* Does some request of this rank hold ctx now? */
int ct_ctx_held(ct_ctx *ctx);

/* ct_ctx_request_tag's answer when every persistent tag is held (never an
 * MPI error code, which are >= 0): the call goes to the MPI library. */
#define CT_NO_TAG (-2)

/*
 * The tag of the next nonblocking or persistent call's messages on ctx,
 * which every rank asks for at the same call. A persistent request keeps its
 * tag for life, so the persistent calls count in a range of their own: a
 * request that outlives any number of nonblocking calls never meets one of
 * them on its tag (16384 calls after it, it would if they shared one
 * count). Nor does it meet a later persistent request: once the count has
 * wrapped, the ranks agree (one allreduce) whether some live request holds
 * the next tag, and pass it over while one does; with every tag held the
 * answer is CT_NO_TAG. The request gives its tag back when it is freed
 * (ct_ctx_tag_release).
 */
int ct_ctx_request_tag(ct_ctx *ctx, int persistent, int *tag);
void ct_ctx_tag_release(ct_ctx *ctx, int tag);

/* A scratch buffer of at least n bytes, owned by ctx (valid until the next call). */
void *ct_ctx_scratch(ct_ctx *ctx, size_t n);
/* The buffer of key, of at least n bytes, owned by ctx: grown with realloc,
 * so its contents are kept but its address may change; no operation may be
 * pending on it when it is grown. NULL when out of memory. */
void *ct_ctx_buffer(ct_ctx *ctx, const ct_ctx_buf_key *key, size_t n);
/* Its size now (0 before its first use). */
size_t ct_ctx_buffer_size(const ct_ctx *ctx, const ct_ctx_buf_key *key);

/* The object key hangs on ctx, made by key->create(ctx, arg, ...) on first
 * use; returns what create returned (*obj may then be NULL). */
int ct_ctx_ext(ct_ctx *ctx, const ct_ctx_key *key, void *arg, void **obj);
/* The object key hangs on ctx, NULL when there is none yet (local). */
void *ct_ctx_ext_find(const ct_ctx *ctx, const ct_ctx_key *key);
/* Puts obj in the place of key's object on ctx (which keeps its place in the
 * order of release) and returns that object, for the caller to release;
 * NULL, and obj not kept, when key has none. */
void *ct_ctx_ext_swap(ct_ctx *ctx, const ct_ctx_key *key, void *obj);
/* Replaces and releases the objects whose ranks agreed to release them in
 * the call now ending (key->retire); every rank that holds one calls it. */
void ct_ctx_ext_retire(ct_ctx *ctx);
/* Bytes of the reusable buffers (scratch, requests, ct_ctx_buffer) ctx keeps. */
size_t ct_ctx_local_bytes(const ct_ctx *ctx);
/* Frees them (no call may be running on ctx); they grow again on demand. */
void ct_ctx_drop_buffers(ct_ctx *ctx);
/* Releases every object hung on ctx (ctx_free does it first; the unit tests
 * use it on contexts of their own). */
void ct_ctx_ext_release(ct_ctx *ctx);
/* An array of at least n requests, owned by ctx. */
MPI_Request *ct_ctx_requests(ct_ctx *ctx, int n);

/* The topology COLTUNE_PPN=ppn[:cyclic] gives P ranks, as seen by rank 0, with
 * no communication (coltune-info --check; shared is left 0). */
int ct_topo_emulate(int P, int ppn, int cyclic, ct_topo *topo);
void ct_topo_free(ct_topo *topo);

/* Frees the attribute keyval (at MPI_Finalize). */
void ct_ctx_keyval_free(void);
/* Removes the contexts cached on the predefined communicators, and the
 * contexts kept for requests after their communicators were freed (at
 * MPI_Finalize). */
void ct_ctx_release_predefined(void);

#endif
