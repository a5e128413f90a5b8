/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sched.h - a schedule of rounds: how an algorithm is described once and run
 * by every form of its call (docs/internals.md, "One algorithm, every form").
 *
 * An algorithm that splits does not run its exchange: it describes it, as
 * data, in rounds (libNBC's schedules, Hoefler, Lumsdaine and Rehm 2007;
 * MPICH's transport-based collectives). A round is a list of operations:
 * sends and receives, posted when the round starts, and copies, done when
 * the round starts; the next round starts when every send and receive of the
 * round has completed. A round may instead keep at most W sends and W
 * receives in flight, starting the next of each as one completes (the
 * sliding window of Namugwanya et al. 2023, Algorithms 4 and 5).
 *
 * One engine runs every schedule: to completion for a blocking call
 * (ct_sched_run: one wait per round, as the algorithms' own loops did), a
 * step at a time for a nonblocking one (ct_sched_start, then ct_sched_test
 * from the completion calls, or ct_sched_wait), and from the top again at
 * every start of a persistent one, built once at init.
 */
#ifndef CT_SCHED_H
#define CT_SCHED_H

#include "core/ct_common.h"

typedef enum ct_op_kind {
    CT_OP_SEND, /* buf, count, type to peer */
    CT_OP_RECV, /* into buf, count, type from peer */
    CT_OP_COPY, /* src (scount, stype) to buf (count, type), locally */
    CT_OP_STEP  /* an exchange of the algorithm's own, advanced by step (alone in its round) */
} ct_op_kind;

/*
 * A step: what an algorithm puts in a schedule where its exchange is not a
 * list of messages known at the start: bytes moved through a shared-memory
 * window (alltoallv_shm.c, alltoallv_node_aware.c), rounds that depend on
 * what arrives (TuNA's sizes), a request's byte view around an algorithm's
 * own schedule, a blocking call's collective of the MPI library, a
 * learner's choice among schedules; so that its nonblocking and persistent
 * forms are requests like the others'. start begins it (at the round's start), test advances it without
 * blocking (*done once complete), wait blocks until it completes; release
 * releases what state holds when the schedule is freed. Each returns an MPI
 * error class.
 */
typedef struct ct_step {
    int (*start)(void *state);
    int (*test)(void *state, int *done);
    int (*wait)(void *state);
    void (*release)(void *state);
} ct_step;

typedef struct ct_op {
    ct_op_kind kind;
    int peer;
    void *buf;
    MPI_Count count;
    MPI_Datatype type;
    const void *src; /* CT_OP_COPY only */
    MPI_Count scount;
    MPI_Datatype stype;
    const ct_step *step; /* CT_OP_STEP only: its functions, and buf its state */
} ct_op;

typedef struct ct_round {
    int first, n;       /* its operations: ops[first .. first + n) */
    int nsend, nrecv;   /* how many of them are sends and receives */
    int window;         /* 0: all at once; W > 0: at most W sends in flight, and */
    int rwindow;        /* ... at most this many receives */
    int step;           /* its one operation is a step (CT_OP_STEP) */
    int local;          /* its messages travel on the local group's communicator */
} ct_round;

/* How a blocking run waits for a windowed round's next completion. */
typedef enum ct_poll {
    CT_POLL_WAITANY, /* MPI_Waitany ([Namugwanya2023] Algorithm 4) */
    CT_POLL_TESTANY  /* MPI_Testany in a loop (Algorithm 5) */
} ct_poll;

struct ct_ctx;

typedef struct ct_sched {
    struct ct_ctx *ctx; /* the call's context: its buffer holds a blocking call's schedule */
    int own;            /* the schedule's memory is its own (owned), not ctx's */
    MPI_Comm comm; /* the private communicator the messages travel on */
    MPI_Comm local_comm; /* an intercommunicator's local group (ct_sched_local) */
    int rank;      /* this rank in comm (copies of derived types go through it) */
    int tag;
    ct_poll poll;
    ct_op *ops;
    int nops, max_ops;
    ct_round *rounds;
    int nrounds, max_rounds;
    MPI_Request *reqs; /* the running round's requests (a window: W send slots, W receive) */
    int overflow;      /* a builder appended beyond the bounds it gave (a bug: the run fails) */
    /* The run: the round in progress (nrounds once done), its requests, and
     * in a windowed round the next send and receive to start. */
    int round, nreqs, next_send, next_recv;
    void *owned; /* the memory of ops, rounds and reqs when own is set */
    size_t owned_bytes;
    size_t step_bytes; /* bytes its steps' states hold */
    void *offered; /* memory the caller offers (a blocking call's stack), if large enough */
    size_t offered_bytes;
} ct_sched;

/* Prepares s to be built for a call on ctx (its private communicator),
 * with tag: in a buffer of ctx (a blocking call; valid until the context's
 * next call) or, own set, in memory of its own (a request's schedule, kept
 * until ct_sched_free). */
void ct_sched_prepare(ct_sched *s, struct ct_ctx *ctx, int tag, int own);
/* Memory (64-byte aligned) a blocking call offers for a small schedule, in
 * place of the context's buffer: its own stack. */
static inline void ct_sched_offer(ct_sched *s, void *mem, size_t bytes)
{
    s->offered = mem;
    s->offered_bytes = bytes;
}
/* A builder's first step: room for at most max_ops operations in at most
 * max_rounds rounds (its own memory is kept when large enough: a schedule
 * may be built again, at each start of a request, with no allocation). */
int ct_sched_reserve(ct_sched *s, int max_ops, int max_rounds);
/* Bytes of memory s holds of its own (its steps' states too). */
size_t ct_sched_own_bytes(const ct_sched *s);
void ct_sched_free(ct_sched *s);

/* Opens the next round: 0 for all at once, W > 0 for a window of W. */
void ct_sched_round(ct_sched *s, int window);
/* Opens the next round with at most wsend sends and wrecv receives in
 * flight (wrecv 1: its receives one at a time, in the order given). */
void ct_sched_round_windows(ct_sched *s, int wsend, int wrecv);
/* The open round's messages travel on the local group of the call's
 * intercommunicator (ctx->local_comm), peers by local rank. */
void ct_sched_local(ct_sched *s);
/* Appends to the open round (a round needs at least one operation; an
 * empty one is dropped when the next opens). Zero-size messages and copies
 * are skipped by the builders, not here. */
void ct_sched_send(ct_sched *s, const void *buf, MPI_Count count, MPI_Datatype type, int peer);
void ct_sched_recv(ct_sched *s, void *buf, MPI_Count count, MPI_Datatype type, int peer);
void ct_sched_copy(ct_sched *s, const void *src, MPI_Count scount, MPI_Datatype stype, void *dst,
                   MPI_Count count, MPI_Datatype type);

/* Appends a step in a round of its own (a builder opens another round for
 * what follows it) with its state, which holds bytes of memory and which
 * the schedule owns from now: step->release(state) when the schedule is freed. */
void ct_sched_step(ct_sched *s, const ct_step *step, void *state, size_t bytes);

/* Starts round 0 (and every following round that completes at once). */
int ct_sched_start(ct_sched *s);
/* Advances without blocking; *done is 1 once every round has completed. */
int ct_sched_test(ct_sched *s, int *done);
/* Blocks until every round has completed. */
int ct_sched_wait(ct_sched *s);
/* The blocking form: start, then wait. */
int ct_sched_run(ct_sched *s);
/* Has the run completed (or not started)? */
static inline int ct_sched_done(const ct_sched *s) { return s->round >= s->nrounds; }

#endif
