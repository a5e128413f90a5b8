/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * state.h - the library's global mutable state that core keeps, in one
 * struct, and the one lock that guards the modules' own (statistics,
 * stats.c; the GPU runtimes, core/device.c; the once-only messages).
 *
 * The configuration is written once under pthread_once (shim/init.c) and is
 * read-only afterwards. Everything per communicator lives in its context
 * (context.h).
 */
#ifndef CT_STATE_H
#define CT_STATE_H

#include "core/settings.h"

#include <pthread.h>

/* coltune's requests (core/request.c). active: how many are active (a
 * nonblocking call not yet completed, a persistent one started), so that the
 * completion calls forward at once while none is; live: how many exist.
 * Both atomic, on a cache line of their own. The table from the handle the
 * application holds to the request, under lock; the handles of freed
 * requests, kept for the next ones (at most CT_REQUEST_SPARE_MAX). */
#define CT_REQUEST_BUCKETS 256
#define CT_REQUEST_SPARE_MAX 1024
typedef struct ct_requests {
    _Alignas(64) int active;
    int live;
    pthread_mutex_t lock;
    struct ct_request *bucket[CT_REQUEST_BUCKETS];
    struct ct_request **running; /* the active ones, for progress (count: active) */
    int running_cap;
    MPI_Request *spare; /* [nspare] inactive handles, under lock */
    int nspare, spare_cap;
    int hooked; /* 0 not yet asked; 1 no progress hook; 2 the MPI library's progress
                   engine calls ct_request_progress_all (core/request.c) */
} ct_requests;

/* An operation of coltune's own begun without a user's request to complete
 * it (a neighbourhood agreement begun ahead of its use: an MPI_Iallreduce,
 * neighbor/neighbor_locality.c). Listed from its start until its owner
 * removes it; MPI_Finalize completes those still listed (complete), as MPI
 * requires of every operation begun before it. */
typedef struct ct_outstanding {
    void (*complete)(struct ct_outstanding *self);
    struct ct_outstanding *prev, *next;
    int listed;
} ct_outstanding;

typedef struct ct_state {
    int init_done;    /* configuration read */
    int mpi_init_seen; /* MPI_Init/MPI_Init_thread went through the shim */
    int finalizing;
    int errors_reported; /* configuration errors were reported (or will not be) */
    int log_rank; /* world rank for message prefixes, -1 unknown */
    int keyval;   /* communicator attribute holding the context: written once
                     under lock, read without it (atomic loads) */
    /* The last communicator whose context a call looked up, and that
     * context (core/context.c): it spares the hot path the MPI library's
     * attribute lookup. Kept only where at most one thread calls MPI at a
     * time (MPI_THREAD_SERIALIZED or less: usable), and forgotten when that
     * context is freed (its communicator's handle may then be reused). */
    struct {
        int usable;
        MPI_Comm comm;
        void *ctx;
    } last;
    int ctx_serial; /* numbers contexts for log messages */
    /* The communicators whose context a thread is making now (core/context.c,
     * ctx_make): another thread that needs one of them waits on made (with
     * lock) instead of making a second. Under the lock. */
    struct ct_making *making;
    pthread_cond_t made;
    /* Contexts whose communicators were freed while requests held them,
     * kept with their windows and plans until MPI_Finalize (core/context.c,
     * ctx_delete_fn), oldest first. Under the lock. */
    struct ct_ctx *kept, *kept_last;
    /* This process's node (core/context.c, learn_node), learnt from the
     * first context of a communicator with MPI_COMM_WORLD's group: the
     * lowest MPI_COMM_WORLD rank on its node (-1 until then) and its world's
     * name, the number world rank 0 drew (draw: this process's, drawn at its
     * first context). Later contexts find their nodes with one allgather of
     * these. Written under the lock. */
    struct {
        int leader;
        int world[2];
        int draw[2], drawn;
    } node;
    /* Calls the online learners made while exploring (learner_calls: how
     * many learners share the budget), and all their calls (learner_seen: a
     * learner's turn leaves out the time between two of its calls that holds
     * another learner's call), on every communicator (select/adapt.c;
     * atomic). A cache line of their own, away from what every call reads. */
    _Alignas(64) unsigned long learner_calls;
    unsigned long learner_seen;
    char learner_calls_line[64 - 2 * sizeof(unsigned long)];
    /* What coltune keeps between calls, process-wide (core/cache.c), under
     * the lock: the contexts from least to most recently used, the bytes
     * they keep (and the learners' records), the most kept at a call
     * boundary, the largest need of one call, and what the limit cost. */
    struct {
        void *oldest, *newest; /* core/cache.c: a context's record */
        size_t kept, peak, largest;
        unsigned long released_buffers, refused_windows, released_windows;
    } cache;
    ct_requests requests;
    ct_outstanding *outstanding; /* under the lock: ct_outstanding_add */
    /* The configuration's settings (select/config.h), set once it is read;
     * all zero before. */
    const ct_settings *settings;
    pthread_mutex_t lock;
    struct {
        char **msgs;
        int count, cap;
    } once;
    /* The MPI library's Fortran MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS_IGNORE
     * and MPI_STATUSES_IGNORE sentinels, one per name mangling and mpi_f08's,
     * looked up once (src/shim/fortran.c). */
    struct {
        pthread_once_t once;
        const void *in_place[5], *bottom[5], *status_ignore[5], *statuses_ignore[5];
    } fortran;
} ct_state;

ct_state *ct_state_get(void);

/* Releases the message set (after PMPI_Finalize; the keyval is freed before
 * it, see shim/init.c). */
void ct_state_free(void);

static inline const ct_settings *ct_settings_get(void) { return ct_state_get()->settings; }
void ct_state_lock(ct_state *st);
void ct_state_unlock(ct_state *st);
/* Waits, the lock held, until ct_state_wake: a context has been made. */
void ct_state_wait(ct_state *st);
void ct_state_wake(ct_state *st);

/* Lists o (its complete set) until ct_outstanding_remove. */
void ct_outstanding_add(ct_outstanding *o);
/* Takes o off the list, if it is there (before its memory goes). */
void ct_outstanding_remove(ct_outstanding *o);
/* At MPI_Finalize: completes every operation still listed, taking each off
 * the list first (a rank waits for its own; each was begun on every rank
 * of its communicator, so the waits complete in any order). */
void ct_outstanding_complete_all(void);

#endif
