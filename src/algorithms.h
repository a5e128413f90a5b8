/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * algorithms.h - the one algorithm registry.
 *
 * The collectives and algorithms are declared once, in coll_list.h; the
 * enum, the registry and the prototypes here are derived from it. Each
 * algorithm declares its name, collective, parameters (with ranges that
 * may depend on the communicator: P, Q, N) and restrictions. The rules file,
 * the environment and the direct C API all resolve an algorithm through this
 * table and pass through the same restriction checks (select/decide.c), so no
 * algorithm ever has to fail halfway through a call.
 */
#ifndef CT_ALGORITHMS_H
#define CT_ALGORITHMS_H

#include "core/context.h"
#include "core/datatype.h"

struct ct_ctx;

/* The collectives, in the order of src/coll_list.h: CT_COLL_ALLTOALLV, ... */
typedef enum ct_coll {
#define CT_COLLECTIVE(ID, name, call, fallback, msg_size_known) CT_COLL_##ID,
#include "coll_list.h"
    CT_COLL_COUNT
} ct_coll;

const char *ct_coll_name(ct_coll coll);
/* Returns 0 and sets *out when name is a known collective, -1 otherwise. */
int ct_coll_from_name(const char *name, size_t len, ct_coll *out);
/* Does every rank know a call's msg_size from its own arguments? For
 * MPI_Alltoall and the intercommunicator MPI_Allgather the standard makes
 * the blocks of a group alike, so a msg_size condition costs nothing; for
 * the others each rank sees only its own blocks, and reaching a msg_size
 * condition costs the call one allreduce (select/decide.h). */
int ct_coll_msg_size_known(ct_coll coll);

/* ------------------------------------------------------------------ */
/* Parameters                                                          */
/* ------------------------------------------------------------------ */

#define CT_MAX_PARAMS 4

/* A parameter bound or expression may use the communicator's shape
 * (ct_shape, core/context.h: P, Q, N). */

/* A value that is a constant or a simple expression of P, Q or N:
 * value = term(P, Q, N) + offset, with term one of the ct_term values. */
typedef enum ct_term {
    CT_TERM_CONST = 0, /* offset alone */
    CT_TERM_P,         /* P + offset */
    CT_TERM_Q,         /* Q + offset */
    CT_TERM_N,         /* N + offset */
    CT_TERM_SQRT_P,    /* round(sqrt(P)) + offset, integer arithmetic */
    CT_TERM_SQRT_Q,    /* round(sqrt(Q)) + offset */
    CT_TERM_NM1_Q      /* (N - 1) * Q + offset */
} ct_term;

typedef struct ct_expr {
    ct_term term;
    long offset;
} ct_expr;

long ct_expr_eval(ct_expr e, const ct_shape *env);
/* Writes the expression as it would be written in a rules file. */
void ct_expr_format(ct_expr e, char *buf, size_t len);

typedef struct ct_param_desc {
    const char *name;
    ct_expr min, max; /* inclusive, evaluated against the communicator */
    ct_expr def;      /* default when the spec does not set it */
    const char *help;
    int clamp; /* CT_CLAMP: a value set above max acts as max (its help says so),
                  as MPICH's throttle does; CT_RANGE: it is a restriction */
} ct_param_desc;

/* ct_param_desc.clamp of a parameter whose values above its range act as its
 * maximum (src/coll_list.h; tests/unit/test_registry.c checks the help says
 * so), and of one whose values out of range are a restriction. */
#define CT_CLAMP 1
#define CT_RANGE 0

/* ------------------------------------------------------------------ */
/* Call arguments, one struct per collective                           */
/* ------------------------------------------------------------------ */

/*
 * The one description of an MPI_Alltoallv or MPI_Alltoall call (coll says
 * which), filled by every entry point: the C bindings with int or large
 * counts, the Fortran bindings and the direct API. forward runs this very
 * call with the MPI library's own routine (PMPI_Alltoallv, PMPI_Alltoall,
 * PMPI_Alltoallv_c, ...), with the user's arguments: the algorithm pmpi is
 * that, and only src/shim defines forwarders.
 */
typedef struct ct_alltoallv_args {
    ct_coll coll;        /* CT_COLL_ALLTOALLV or CT_COLL_ALLTOALL */
    const void *sendbuf; /* never MPI_IN_PLACE when an algorithm other than pmpi sees it */
    ct_vec sendcounts, sdispls; /* in elements of sendtype */
    MPI_Datatype sendtype;
    void *recvbuf;
    ct_vec recvcounts, rdispls; /* in elements of recvtype */
    MPI_Datatype recvtype;
    MPI_Comm comm; /* the user's communicator: only pmpi uses it */
    int (*forward)(const struct ct_alltoallv_args *a);
    long msg_size; /* set by the driver: the largest block any rank sends (bytes)
                      when the decision computed it, else -1 (algorithms may use
                      it instead of their own allreduce) */
    MPI_Request *request; /* the nonblocking forms (ialltoallv, ialltoall): where
                             the call's request goes; NULL for the blocking ones */
    int persistent;       /* with request: the persistent form (MPI_Alltoallv_init,
                             ...), decided as its nonblocking one */
    MPI_Info info;        /* the persistent form's info (forwarded) */
} ct_alltoallv_args;
/* Entry points name every field when they fill one (msg_size -1 too): a
 * field left to the initialiser's zero makes GCC clear the whole struct
 * first (rep stos), which cost an empty MPI_Alltoall 0.05 us, four times
 * the rest of its path. */

typedef int (*ct_alltoallv_forward_fn)(const ct_alltoallv_args *a);

typedef int (*ct_alltoallv_fn)(const ct_alltoallv_args *args, struct ct_ctx *ctx,
                               const long *params);
/* An algorithm that splits (CT_ALLTOALLV_SPLIT_ALG) describes the call as a
 * schedule of rounds in s, prepared by its caller (core/sched.h), without
 * moving a byte: the caller runs it, at once or as a request. */
struct ct_sched;
typedef int (*ct_alltoallv_build_fn)(const ct_alltoallv_args *args, struct ct_ctx *ctx,
                                     const long *params, struct ct_sched *s);

/* Intercommunicator Allgather: every rank sends sendcount elements; recvbuf
 * receives recvcount elements from each rank of the remote group. The one
 * description of the call, filled by every entry point (C, large-count,
 * Fortran, direct API); forward runs this very call with the library's
 * routine (PMPI_Allgather or PMPI_Allgather_c). */
typedef struct ct_allgather_args {
    const void *sendbuf; /* never MPI_IN_PLACE (forwarded to PMPI_) */
    MPI_Count sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    MPI_Count recvcount;
    MPI_Datatype recvtype;
    MPI_Comm comm; /* the user's intercommunicator: only pmpi uses it */
    int (*forward)(const struct ct_allgather_args *a);
    MPI_Request *request; /* the nonblocking form (iallgather_inter): where the
                             call's request goes; NULL for the blocking one */
    int persistent;       /* with request: MPI_Allgather_init, decided as the
                             nonblocking form */
    MPI_Info info;        /* the persistent form's info (forwarded) */
} ct_allgather_args;

/* Intercommunicator Allgatherv: recvcounts/displs index the remote group
 * (int arrays, or MPI_Count / MPI_Aint ones from MPI_Allgatherv_c). */
typedef struct ct_allgatherv_args {
    const void *sendbuf;
    MPI_Count sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    ct_vec recvcounts, displs;
    MPI_Datatype recvtype;
    MPI_Comm comm;
    int (*forward)(const struct ct_allgatherv_args *a);
    MPI_Request *request; /* as in ct_allgather_args */
    int persistent;
    MPI_Info info;
} ct_allgatherv_args;

typedef int (*ct_allgather_fn)(const ct_allgather_args *args, struct ct_ctx *ctx,
                               const long *params);
/* An algorithm that splits (CT_ALLGATHER_INTER_SPLIT_ALG) describes the call
 * as a schedule in s, as the Alltoall(v) ones do. */
typedef int (*ct_allgather_build_fn)(const ct_allgather_args *args, struct ct_ctx *ctx,
                                     const long *params, struct ct_sched *s);
typedef int (*ct_allgatherv_build_fn)(const ct_allgatherv_args *args, struct ct_ctx *ctx,
                                      const long *params, struct ct_sched *s);
typedef int (*ct_allgatherv_fn)(const ct_allgatherv_args *args, struct ct_ctx *ctx,
                                const long *params);

/* MPIX_Alltoall_crs and MPIX_Alltoallv_crs (sparse dynamic data exchange):
 * both collectives' algorithms see one call the driver has validated and
 * normalised (src/sdde/sdde.h): the messages this rank sends, as bytes, and
 * a collector for the messages it receives. */
struct ct_sdde;
typedef int (*ct_sdde_fn)(struct ct_sdde *x, struct ct_ctx *ctx, const long *params);

/*
 * The one description of an MPI_Neighbor_alltoallv or MPI_Neighbor_alltoall
 * call (coll says which), filled by every entry point as ct_alltoallv_args
 * is: block j of the send side goes to the j-th destination of the
 * communicator's neighbourhood, block j of the receive side comes from the
 * j-th source (src/neighbor/nbr_graph.h). MPI_Neighbor_alltoall's uniform
 * blocks are linear vectors. The standard has no MPI_IN_PLACE here.
 */
struct ct_nbr_graph;
typedef struct ct_neighbor_args {
    ct_coll coll; /* CT_COLL_NEIGHBOR_ALLTOALLV or CT_COLL_NEIGHBOR_ALLTOALL */
    const void *sendbuf;
    ct_vec sendcounts, sdispls; /* per destination, in elements of sendtype */
    MPI_Datatype sendtype;
    void *recvbuf;
    ct_vec recvcounts, rdispls; /* per source, in elements of recvtype */
    MPI_Datatype recvtype;
    MPI_Comm comm; /* the user's communicator: only pmpi uses it */
    int (*forward)(const struct ct_neighbor_args *a);
    long msg_size; /* as in ct_alltoallv_args */
    const struct ct_nbr_graph *graph; /* set by the driver: the neighbourhood */
    /* The nonblocking and persistent forms (ineighbor_alltoall(v)), as in
     * ct_alltoallv_args: where the request goes, NULL for a blocking call */
    MPI_Request *request;
    int persistent;
    MPI_Info info;
} ct_neighbor_args;

typedef int (*ct_neighbor_forward_fn)(const ct_neighbor_args *a);
typedef int (*ct_neighbor_fn)(const ct_neighbor_args *args, struct ct_ctx *ctx,
                              const long *params);
typedef int (*ct_neighbor_build_fn)(const ct_neighbor_args *args, struct ct_ctx *ctx,
                                    const long *params, struct ct_sched *s);

/* ------------------------------------------------------------------ */
/* Restrictions                                                        */
/* ------------------------------------------------------------------ */

/* Restrictions that depend only on the communicator or the MPI library
 * (identical on every rank by construction): checked without communication. */
#define CT_R_PROGRESS 0x01u /* its nonblocking form starts later rounds as earlier
                               ones complete: served only where the MPI library's
                               progress engine calls coltune's (Open MPI); elsewhere
                               a rank blocked in another MPI call would not start
                               them, and a peer waiting for them could hang */
#define CT_R_SHARED_MEMORY 0x04u    /* all ranks share memory (one real node) */
#define CT_R_NODE_SHARED_MEMORY 0x08u /* each node's ranks share memory: real nodes, or
                                         emulated ones (COLTUNE_PPN) inside one */

/* Restrictions that depend on rank-local call arguments: the decision
 * combines them over all ranks in the one small allreduce (decide.c). */
#define CT_R_INT_OFFSETS 0x20u  /* every byte offset and total fits in int */

#define CT_R_LOCAL_MASK 0xf0u

/* Adapters the driver applies (not restrictions): */
#define CT_A_BYTES 0x100u /* runs on contiguous bytes: the driver presents every call
                             as MPI_BYTE blocks, packing non-contiguous types. The
                             Alltoall(v) view has MPI_Count offsets; the
                             allgather(v)_inter one has int offsets, so an algorithm
                             there must also declare CT_R_INT_OFFSETS, and its
                             received blocks are back to back in rank order
                             (allgather_inter.h) */
#define CT_A_AGREES 0x200u /* (sparse exchanges) its own exchange tells every rank
                              whether any rank's arguments are invalid: the driver
                              skips its agreement allreduce when the decision needs
                              no per-call facts (sdde.h) */

/* Hints to the online learner (select/adapt.c), not restrictions: */
#define CT_L_ACROSS_NODES 0x400u /* COLTUNE_ADAPT (and an adapt rule without a list)
                                    offers it only where the communicator spans
                                    several nodes: on one node it does what another
                                    candidate does, at a setup cost of its own
                                    (node_aware: shm's exchange through one window,
                                    plus a node communicator and a second window).
                                    An adapt rule that lists it offers it anywhere */
#define CT_L_WARM_UP 0x800u /* makes per-communicator state at its first calls (a shared
                               window): the learner runs it before its rounds judge it.
                               The others' first call of a turn, not judged, is their
                               warm-up */

/* The restriction and adapter bits, one at a time, for listings (coltune-info):
 * the i-th bit's short name ("shared_memory") and what it means; NULL past
 * the last. */
typedef struct ct_restriction_desc {
    unsigned bit;
    const char *name;
    const char *meaning;
} ct_restriction_desc;

const ct_restriction_desc *ct_restriction_at(int i);

typedef struct ct_algorithm {
    const char *name;
    ct_coll coll;
    const char *summary; /* one line, with the paper reference */
    int nparams;
    ct_param_desc params[CT_MAX_PARAMS];
    unsigned restrictions;
    union {
        ct_alltoallv_fn alltoallv;
        ct_allgather_fn allgather;
        ct_allgatherv_fn allgatherv;
        ct_sdde_fn sdde; /* CT_COLL_ALLTOALL_CRS and CT_COLL_ALLTOALLV_CRS */
        ct_neighbor_fn neighbor;
    } run; /* NULL for an algorithm that splits: build describes it */
    union {
        ct_alltoallv_build_fn alltoallv;
        ct_allgather_build_fn allgather;
        ct_allgatherv_build_fn allgatherv;
        ct_neighbor_build_fn neighbor;
    } build; /* NULL for an algorithm that runs its call itself; both for one
                that steps (CT_ALLTOALLV_STEP_ALG): run serves the blocking call */
} ct_algorithm;

/* The registry: a NULL-terminated view. */
const ct_algorithm *ct_algorithm_find(ct_coll coll, const char *name, size_t len);
int ct_algorithm_count(void);
const ct_algorithm *ct_algorithm_at(int i);
int ct_algorithm_index(const ct_algorithm *alg);
/* The algorithm that serves a call when no rule matches or a chosen
 * algorithm cannot serve it: "pmpi" (forward to the MPI library) for the MPI
 * collectives; for coltune's own MPIX calls, which have no PMPI routine,
 * their reference algorithm. It has no parameters and no restrictions. */
const ct_algorithm *ct_algorithm_fallback(ct_coll coll);
/* Is coll a nonblocking form, whose calls return a request (ialltoallv,
 * ialltoall, iallgather_inter, iallgatherv_inter, ineighbor_alltoallv,
 * ineighbor_alltoall)? Its algorithms are those that split, and its calls do not
 * learn (a learner times calls to their completion). */
int ct_coll_nonblocking(ct_coll coll);
/* Is coll a neighbourhood collective (MPI_Neighbor_alltoall(v) and their
 * nonblocking forms), whose rules may name the graph's degree, offnode and
 * components? */
int ct_coll_neighbor(ct_coll coll);
/* Does every block of a call of coll have one size (MPI_Neighbor_alltoall
 * and its nonblocking form: one count and datatype per rank, and the
 * standard makes one rank's send signature every other rank's receive
 * signature), which every rank of a connected graph knows alike? */
int ct_coll_one_block_size(ct_coll coll);
/* The facts of a neighbourhood collective's graph that rules may name
 * (select/rules.h: CT_KEY_DEGREE, CT_KEY_OFFNODE, CT_KEY_COMPONENTS;
 * neighbor/nbr_graph.h). */
typedef struct ct_graph_facts {
    long degree, offnode;
    long components; /* weakly connected, an isolated rank one; 0: not counted */
} ct_graph_facts;
/* Does the MPI library serve coll (its fallback is pmpi)? Not the MPIX calls. */
int ct_coll_has_pmpi(ct_coll coll);

/* ------------------------------------------------------------------ */
/* Algorithm entry points (one file each under src/<collective>/)      */
/* ------------------------------------------------------------------ */

#define CT_ALLTOALLV_ALG(name, ...)                                                          \
    int ct_alltoallv_##name(const ct_alltoallv_args *a, struct ct_ctx *ctx, const long *params);
#define CT_ALLTOALLV_SPLIT_ALG(name, ...)                                                    \
    int ct_alltoallv_##name##_build(const ct_alltoallv_args *a, struct ct_ctx *ctx,          \
                                    const long *params, struct ct_sched *s);
#define CT_ALLTOALLV_STEP_ALG(name, ...)                                                     \
    int ct_alltoallv_##name(const ct_alltoallv_args *a, struct ct_ctx *ctx, const long *params); \
    int ct_alltoallv_##name##_build(const ct_alltoallv_args *a, struct ct_ctx *ctx,          \
                                    const long *params, struct ct_sched *s);
#define CT_ALLGATHER_INTER_ALG(name, ...)                                                    \
    int ct_allgather_inter_##name(const ct_allgather_args *a, struct ct_ctx *ctx,            \
                                  const long *params);                                       \
    int ct_allgatherv_inter_##name(const ct_allgatherv_args *a, struct ct_ctx *ctx,          \
                                   const long *params);
#define CT_ALLGATHER_INTER_SPLIT_ALG(name, ...)                                              \
    CT_ALLGATHER_INTER_ALG(name)                                                             \
    int ct_allgather_inter_##name##_build(const ct_allgather_args *a, struct ct_ctx *ctx,    \
                                          const long *params, struct ct_sched *s);           \
    int ct_allgatherv_inter_##name##_build(const ct_allgatherv_args *a, struct ct_ctx *ctx,  \
                                           const long *params, struct ct_sched *s);
#define CT_SDDE_ALG(name, ...)                                                               \
    int ct_sdde_##name(struct ct_sdde *x, struct ct_ctx *ctx, const long *params);
#define CT_NEIGHBOR_ALG(name, ...)                                                           \
    int ct_neighbor_##name(const ct_neighbor_args *a, struct ct_ctx *ctx, const long *params);
#define CT_NEIGHBOR_SPLIT_ALG(name, ...)                                                     \
    int ct_neighbor_##name##_build(const ct_neighbor_args *a, struct ct_ctx *ctx,            \
                                   const long *params, struct ct_sched *s);
#define CT_NEIGHBOR_STEP_ALG(name, ...)                                                      \
    CT_NEIGHBOR_ALG(name)                                                                    \
    CT_NEIGHBOR_SPLIT_ALG(name)
#include "coll_list.h"

#endif
