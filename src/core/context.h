/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * context.h - one context per user communicator.
 *
 * Created lazily by the first intercepted call on a communicator and cached
 * on it with an attribute whose delete callback frees it. It holds the private
 * duplicate communicator that carries all of coltune's internal traffic, the
 * node topology, cached decisions and reusable scratch buffers.
 */
#ifndef CT_CONTEXT_H
#define CT_CONTEXT_H

#include "algorithms.h"

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

/* A decision: the algorithm and its resolved parameter values. */
typedef struct ct_choice {
    const ct_algorithm *alg;
    long params[CT_MAX_PARAMS];
    int rule_line; /* rules-file line that chose it, 0 for none */
    int forced;    /* chosen through the environment or the direct API */
} ct_choice;

#define CT_MAX_LOGGED 32

/* The modules that keep collective objects in a context (ct_ctx.ext). */
typedef enum ct_ext_id {
    CT_EXT_SDDE,   /* MPIX_Alltoall(v)_crs (src/sdde/sdde.h): node communicator,
                      member map, rma window */
    CT_EXT_AG_SHM, /* the shm Allgather(v) (allgather_inter_shm.c): shared window */
    CT_EXT_A2A_SHM,  /* the shm Alltoall(v) (alltoallv_shm.c): shared window */
    CT_EXT_A2A_NODE, /* node_aware Alltoall(v): node communicator and its window */
    CT_EXT_COUNT
} ct_ext_id;

/* Cached growable buffers per context (ct_ctx_buffer). */
#define CT_CTX_NBUFS 8 /* the most any algorithm uses: node_aware, TuNA's 6 and two */

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
    struct {
        int valid;
        ct_choice choice;
    } cached[CT_COLL_COUNT];
    /* ct_algorithm_fallback() of each collective, looked up once: the
     * decision compares every choice with it (select/decide.c). */
    const ct_algorithm *fallback[CT_COLL_COUNT];
    /* Calls on this communicator agree whether a buffer is GPU memory
     * (select/decide.c): some rank had a GPU runtime loaded when the context
     * was made, or COLTUNE_DEVICE=always. Agreed then, so a rank without a
     * runtime takes part too and none waits alone. */
    int device_agree;
    int nlogged;
    char *logged[CT_MAX_LOGGED]; /* decisions already logged (COLTUNE_VERBOSE=1) */
    /* Reusable buffers, grown on demand and freed with the context. */
    void *scratch;
    size_t scratch_size;
    MPI_Request *reqs;
    int nreqs;
    struct {
        char *p;
        size_t size;
    } buf[CT_CTX_NBUFS]; /* ct_ctx_buffer() */
    size_t call_extra; /* extra memory the current call used, for statistics */
    /* Modules' collective per-communicator objects (windows, node
     * communicators), created on first use; ctx_free calls each release()
     * first, while comm is still valid. */
    struct {
        void *p;
        void (*release)(void *p);
    } ext[CT_EXT_COUNT];
} ct_ctx;

/* Returns the context of comm, creating it (collectively) on first use. */
int ct_ctx_get(MPI_Comm comm, ct_ctx **out);
/* The context of comm if it already has one (*out NULL otherwise); local. */
int ct_ctx_lookup(MPI_Comm comm, ct_ctx **out);

/* A scratch buffer of at least n bytes, owned by ctx (valid until the next call). */
void *ct_ctx_scratch(ct_ctx *ctx, size_t n);
/* Cached buffer number which (< CT_CTX_NBUFS) of at least n bytes, owned by
 * ctx: grown with realloc, so its contents are kept but its address may
 * change; no operation may be pending on it when it is grown. Algorithms
 * that need several growing buffers in one call use different numbers. */
void *ct_ctx_buffer(ct_ctx *ctx, int which, size_t n);
/* An array of at least n requests, owned by ctx. */
MPI_Request *ct_ctx_requests(ct_ctx *ctx, int n);

/* Computes the topology of comm (size P, rank) into topo; collective. */
int ct_topo_compute(MPI_Comm comm, int ppn, int cyclic, ct_topo *topo);
/* Fills topo from a node_of map (exposed for the unit tests). */
int ct_topo_from_map(int P, int rank, const int *node_key, ct_topo *topo);
/* The topology COLTUNE_PPN=ppn[:cyclic] gives P ranks, as seen by rank 0, with
 * no communication (coltune-info --check; shared is left 0). */
int ct_topo_emulate(int P, int ppn, int cyclic, ct_topo *topo);
void ct_topo_free(ct_topo *topo);

/* Frees the attribute keyval (at MPI_Finalize). */
void ct_ctx_keyval_free(void);
/* Removes the contexts cached on the predefined communicators (at MPI_Finalize). */
void ct_ctx_release_predefined(void);

#endif
