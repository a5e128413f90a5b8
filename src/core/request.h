/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * request.h - coltune's requests: a nonblocking or persistent collective
 * that coltune serves, as the application holds it.
 *
 * The application holds a real request of the MPI library, the handle: an
 * inactive persistent send to MPI_PROC_NULL, made for the purpose. Every
 * completion call is intercepted (src/shim/request.c); it finds coltune's
 * requests among its arguments by their handles, in one table (O(1)), and
 * advances and completes them itself, giving the others to the MPI library.
 * While no coltune request is active (ct_request_any_active), the completion
 * calls forward at once: a process with none pending pays one load. An
 * inactive persistent request needs no interception either: the MPI library
 * completes its handle at once with an empty status, as MPI says of an
 * inactive persistent request.
 *
 * A request holds its context (ct_ctx_hold): a communicator freed while its
 * operation is pending keeps its private communicator until the request is
 * freed.
 */
#ifndef CT_REQUEST_H
#define CT_REQUEST_H

#include "core/context.h"
#include "core/sched.h"

typedef struct ct_request {
    MPI_Request handle; /* what the application holds */
    ct_ctx *ctx;        /* held until the request is freed */
    MPI_Comm user_comm; /* the application's communicator, for its error handler */
    ct_sched sched;     /* the operation (its own memory) */
    int persistent;
    int active;   /* started and not yet completed */
    int done;     /* its schedule has completed (or failed): completion may report it */
    int rc;       /* the schedule's error, reported at completion */
    int busy;     /* a thread is advancing it (atomic) */
    void *keep;   /* memory the operation uses until the request is freed */
    size_t keep_bytes;
    /* A persistent call in place: at each start, before its schedule, the
     * receive blocks' bytes are copied aside (into keep) */
    const void *start_copy_from;
    size_t start_copy_bytes;
    MPI_Datatype types[2]; /* duplicates of the call's derived datatypes, or NULL */
    /* Under COLTUNE_STATS a persistent request counts each start as a call
     * of this statistics entry (the algorithm that runs it; a learner's
     * start sets it), of stat_bytes: -1 for none */
    int stat_index;
    double stat_bytes;
    struct ct_request *next; /* in its table bucket */
} ct_request;

/* A new inactive request on ctx (held) for a call on user_comm, with its
 * handle; not yet in the table. */
int ct_request_new(ct_ctx *ctx, MPI_Comm user_comm, int persistent, ct_request **out);
/* Frees a request that is not in the table (a call that failed before it
 * was published). */
void ct_request_discard(ct_request *r);
/* Frees the handles kept for later requests (request.c): before
 * MPI_Finalize. */
void ct_request_handles_free(void);
/* type itself when it is predefined, else a duplicate the request keeps (the
 * application may free its datatype before the operation completes). */
int ct_request_type(ct_request *r, MPI_Datatype type, MPI_Datatype *use);

/* A new request for a nonblocking or persistent call on ctx (ct_request_new)
 * with its schedule prepared on the call's own tag (ct_ctx_request_tag: the
 * nonblocking collectives of a communicator start in the same order on every
 * rank; collective once the persistent tags wrap) and its own duplicates of
 * the call's datatypes (*sendtype and *recvtype replaced: ct_request_type).
 * On failure *out is to be discarded; CT_NO_TAG: no persistent tag is free,
 * the call goes to the MPI library. */
int ct_request_open(ct_ctx *ctx, MPI_Comm user_comm, int persistent, MPI_Datatype *sendtype,
                    MPI_Datatype *recvtype, ct_request **out);
/* The built request *r to the application (ct_request_go), its schedule's
 * memory and what it keeps counted in ctx->call_extra; *r is NULL after: the application's, or
 * freed. A persistent one takes ctx's statistics entry (ctx->stat_index, which is -2 after:
 * taken). */
int ct_request_launch(ct_ctx *ctx, ct_request **r, MPI_Request *user);

/* Starts its schedule, marks it active, and (a nonblocking call) puts it in
 * the table and gives the application its handle in *user. */
int ct_request_start(ct_request *r);
int ct_request_publish(ct_request *r, MPI_Request *user);
/* A call's last step: publishes r as *user and, a nonblocking call (not
 * persistent), starts it. r is the application's from here; should the
 * start fail (out of memory), it is taken back and freed, *user
 * MPI_REQUEST_NULL, and the error returned. */
int ct_request_go(ct_request *r, MPI_Request *user);

/* Is any coltune request active? (One relaxed load: the fast path.) */
int ct_request_any_active(void);
/* Does any coltune request exist (MPI_Start, MPI_Request_free)? */
int ct_request_any_live(void);
/* The request whose handle is h, or NULL (locks the table). */
ct_request *ct_request_find(MPI_Request h);
/* Finds every coltune request of reqs[0..n) into mine[] (NULL where the
 * entry is not one); returns how many (one lock). */
int ct_request_find_all(int n, const MPI_Request reqs[], ct_request *mine[]);

/* Advances an active request without blocking; *done once it has completed. */
int ct_request_test(ct_request *r, int *done);
/* Blocks until it has completed. */
void ct_request_wait(ct_request *r);
/* Advances every active request a little (from any completion call). */
void ct_request_progress_all(void);
/* A wait of coltune's that found nothing to do gives the rest a turn: the
 * library's progress engine and, where that does not run coltune's
 * requests itself, those requests (see request.c). */
void ct_request_idle(void);
/* Does the MPI library's progress engine advance them too, inside any call
 * that waits (Open MPI)? Then a wait on other requests needs no polling. */
int ct_request_hooked(void);
/* Does the MPI library offer the hook at all (its registration function is
 * there)? Registers nothing: for coltune-info, where no job runs. */
int ct_request_hookable(void);

/* Completes a request whose operation is done: an empty status (status may
 * be MPI_STATUS_IGNORE), *user set to MPI_REQUEST_NULL and the request freed
 * (nonblocking), or left inactive (persistent). Returns the operation's
 * error. */
int ct_request_complete(ct_request *r, MPI_Request *user, MPI_Status *status);
/* MPI_Request_free of a request: an inactive persistent one is freed
 * (*user MPI_REQUEST_NULL); an active one is an error (MPI_ERR_REQUEST). */
int ct_request_free(ct_request *r, MPI_Request *user);
/* The communicator whose error handler an error of r goes to: the
 * application's, or MPI_COMM_SELF once it has freed it. */
MPI_Comm ct_request_errcomm(ct_request *r);

/* An empty status, as MPI gives for a completed collective. */
void ct_request_empty_status(MPI_Status *status);

#endif
