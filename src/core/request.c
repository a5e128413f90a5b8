/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * request.c - coltune's requests and the table of their handles (request.h).
 */
#include "core/request.h"
#include "core/copy.h"
#include "core/log.h"
#include "core/state.h"

#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* The table: handle -> request, chained buckets, under its lock       */
/* ------------------------------------------------------------------ */

/* A handle's bits (a pointer in Open MPI, an int in MPICH), mixed. */
static size_t bucket_of(MPI_Request h)
{
    uint64_t x = 0;
    memcpy(&x, &h, sizeof h < sizeof x ? sizeof h : sizeof x);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)(x & (CT_REQUEST_BUCKETS - 1));
}

static int same(MPI_Request a, MPI_Request b) { return memcmp(&a, &b, sizeof a) == 0; }

static void table_add(ct_request *r)
{
    ct_requests *t = &ct_state_get()->requests;
    const size_t b = bucket_of(r->handle);
    pthread_mutex_lock(&t->lock);
    r->next = t->bucket[b];
    t->bucket[b] = r;
    pthread_mutex_unlock(&t->lock);
}

static void table_remove(ct_request *r)
{
    ct_requests *t = &ct_state_get()->requests;
    pthread_mutex_lock(&t->lock);
    for (ct_request **at = &t->bucket[bucket_of(r->handle)]; *at != NULL; at = &(*at)->next) {
        if (*at == r) {
            *at = r->next;
            break;
        }
    }
    pthread_mutex_unlock(&t->lock);
}

static ct_request *lookup(const ct_requests *t, MPI_Request h)
{
    for (ct_request *r = t->bucket[bucket_of(h)]; r != NULL; r = r->next)
        if (same(r->handle, h))
            return r;
    return NULL;
}

ct_request *ct_request_find(MPI_Request h)
{
    ct_requests *t = &ct_state_get()->requests;
    if (same(h, MPI_REQUEST_NULL))
        return NULL;
    pthread_mutex_lock(&t->lock);
    ct_request *r = lookup(t, h);
    pthread_mutex_unlock(&t->lock);
    return r;
}

int ct_request_find_all(int n, const MPI_Request reqs[], ct_request *mine[])
{
    ct_requests *t = &ct_state_get()->requests;
    int found = 0;
    pthread_mutex_lock(&t->lock);
    for (int i = 0; i < n; i++) {
        mine[i] = same(reqs[i], MPI_REQUEST_NULL) ? NULL : lookup(t, reqs[i]);
        found += mine[i] != NULL;
    }
    pthread_mutex_unlock(&t->lock);
    return found;
}

int ct_request_any_active(void)
{
    return __atomic_load_n(&ct_state_get()->requests.active, __ATOMIC_RELAXED) != 0;
}

int ct_request_any_live(void)
{
    return __atomic_load_n(&ct_state_get()->requests.live, __ATOMIC_RELAXED) != 0;
}

/* ------------------------------------------------------------------ */
/* Life                                                                */
/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* Handles                                                             */
/* ------------------------------------------------------------------ */

/*
 * A request's handle: an inactive persistent request of the library,
 * completed at once (empty status) by any completion call that reaches it.
 * A freed request's handle is kept for the next request rather than freed:
 * MPICH 4.0.2 hangs a persistent collective whose request object was that
 * of a freed persistent point-to-point request (MPI_Send_init,
 * MPI_Request_free, then MPI_Neighbor_alltoallv_init on any communicator:
 * its starts never complete, without coltune too), and the library reuses
 * the object of the last request freed. Up to CT_REQUEST_SPARE_MAX handles
 * are kept (a process with more of coltune's requests alive at once frees
 * the ones beyond, and is exposed to that bug again);
 * ct_request_handles_free frees them before MPI_Finalize.
 */
static int handle_take(MPI_Request *h)
{
    ct_requests *t = &ct_state_get()->requests;
    pthread_mutex_lock(&t->lock);
    const int have = t->nspare > 0;
    if (have)
        *h = t->spare[--t->nspare];
    pthread_mutex_unlock(&t->lock);
    return have ? MPI_SUCCESS
                : PMPI_Send_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, h);
}

static void handle_give(MPI_Request *h)
{
    ct_requests *t = &ct_state_get()->requests;
    pthread_mutex_lock(&t->lock);
    if (t->nspare == t->spare_cap && t->spare_cap < CT_REQUEST_SPARE_MAX) {
        const int cap = t->spare_cap ? 2 * t->spare_cap : 16;
        MPI_Request *grown = realloc(t->spare, (size_t)cap * sizeof *grown);
        if (grown != NULL) {
            t->spare = grown;
            t->spare_cap = cap;
        }
    }
    const int kept = t->nspare < t->spare_cap;
    if (kept)
        t->spare[t->nspare++] = *h;
    pthread_mutex_unlock(&t->lock);
    if (!kept)
        PMPI_Request_free(h);
    *h = MPI_REQUEST_NULL;
}

void ct_request_handles_free(void)
{
    ct_requests *t = &ct_state_get()->requests;
    pthread_mutex_lock(&t->lock);
    MPI_Request *spare = t->spare;
    const int n = t->nspare;
    t->spare = NULL;
    t->nspare = t->spare_cap = 0;
    pthread_mutex_unlock(&t->lock);
    /* outside the lock: the library's progress may call ct_request_progress_all */
    for (int i = 0; i < n; i++)
        PMPI_Request_free(&spare[i]);
    free(spare);
}

int ct_request_new(ct_ctx *ctx, MPI_Comm user_comm, int persistent, ct_request **out)
{
    int rc;
    ct_request *r = calloc(1, sizeof *r);
    *out = NULL;
    if (r == NULL)
        return MPI_ERR_NO_MEM;
    r->types[0] = r->types[1] = MPI_DATATYPE_NULL;
    r->stat_index = -1;
    rc = handle_take(&r->handle);
    if (rc != MPI_SUCCESS) {
        free(r);
        return rc;
    }
    r->ctx = ctx;
    r->user_comm = user_comm;
    r->persistent = persistent;
    ct_ctx_hold(ctx);
    __atomic_add_fetch(&ct_state_get()->requests.live, 1, __ATOMIC_RELAXED);
    *out = r;
    return MPI_SUCCESS;
}

static void request_release(ct_request *r)
{
    const int tagged = r->sched.ctx != NULL, tag = r->sched.tag;
    ct_sched_free(&r->sched); /* may still complete messages on the tag */
    if (tagged) /* a persistent call's tag, held since its schedule was prepared */
        ct_ctx_tag_release(r->ctx, tag);
    for (int i = 0; i < 2; i++)
        if (r->types[i] != MPI_DATATYPE_NULL)
            PMPI_Type_free(&r->types[i]);
    free(r->keep);
    handle_give(&r->handle);
    ct_ctx_unhold(r->ctx);
    __atomic_sub_fetch(&ct_state_get()->requests.live, 1, __ATOMIC_RELAXED);
    free(r);
}

void ct_request_discard(ct_request *r)
{
    if (r != NULL)
        request_release(r);
}

int ct_request_type(ct_request *r, MPI_Datatype type, MPI_Datatype *use)
{
    int rc, ni, na, nd, combiner, slot = r->types[0] == MPI_DATATYPE_NULL ? 0 : 1;
    *use = type;
    CT_CALL(PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner));
    if (combiner == MPI_COMBINER_NAMED || r->types[slot] != MPI_DATATYPE_NULL)
        return MPI_SUCCESS;
    CT_CALL(PMPI_Type_dup(type, &r->types[slot]));
    *use = r->types[slot];
out:
    return rc;
}

/* ------------------------------------------------------------------ */
/* Running                                                             */
/* ------------------------------------------------------------------ */

/*
 * Progress. A schedule's next round starts inside coltune's calls: the
 * completion calls (src/shim/request.c) and, under Open MPI, every call
 * that waits inside the library: its progress engine calls the functions
 * registered with opal_progress_register (libopen-pal, as libnbc's own
 * schedules do), found here at the first request. Elsewhere (MPICH) a
 * rank blocked in another call (MPI_Recv) does not advance its schedules
 * (docs/internals.md).
 */
typedef int (*progress_fn)(void);

static int progress_callback(void)
{
    if (!ct_request_any_active())
        return 0;
    ct_request_progress_all();
    return 0;
}

static void hook_progress(void);

int ct_request_hooked(void)
{
    ct_requests *t = &ct_state_get()->requests;
    hook_progress(); /* once: the answer is the same from the first call on */
    return __atomic_load_n(&t->hooked, __ATOMIC_ACQUIRE) == 2;
}

int ct_request_hookable(void) { return dlsym(RTLD_DEFAULT, "opal_progress_register") != NULL; }

static void hook_progress(void)
{
    ct_requests *t = &ct_state_get()->requests;
    if (__atomic_load_n(&t->hooked, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&t->lock);
    if (!t->hooked) {
        int (*reg)(progress_fn) = NULL;
        *(void **)&reg = dlsym(RTLD_DEFAULT, "opal_progress_register");
        const int hooked = reg != NULL && reg(progress_callback) == 0 ? 2 : 1;
        __atomic_store_n(&t->hooked, hooked, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&t->lock);
}

/* Only one thread advances a request at a time; another finds it busy. */
static int try_claim(ct_request *r) { return !__atomic_exchange_n(&r->busy, 1, __ATOMIC_ACQUIRE); }
static void unclaim(ct_request *r) { __atomic_store_n(&r->busy, 0, __ATOMIC_RELEASE); }

/* The running list: the active requests, which progress_all advances. */
static int running_add(ct_request *r)
{
    ct_requests *t = &ct_state_get()->requests;
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&t->lock);
    if (t->active == t->running_cap) {
        const int cap = t->running_cap ? 2 * t->running_cap : 16;
        ct_request **grown = realloc(t->running, (size_t)cap * sizeof *grown);
        if (grown == NULL)
            rc = MPI_ERR_NO_MEM;
        else {
            t->running = grown;
            t->running_cap = cap;
        }
    }
    if (rc == MPI_SUCCESS) {
        t->running[t->active] = r;
        __atomic_store_n(&t->active, t->active + 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

static void running_remove(ct_request *r)
{
    ct_requests *t = &ct_state_get()->requests;
    pthread_mutex_lock(&t->lock);
    for (int i = 0; i < t->active; i++) {
        if (t->running[i] == r) {
            t->running[i] = t->running[t->active - 1];
            __atomic_store_n(&t->active, t->active - 1, __ATOMIC_RELAXED);
            break;
        }
    }
    pthread_mutex_unlock(&t->lock);
}

int ct_request_start(ct_request *r)
{
    int rc;
    if (r->active)
        return MPI_ERR_REQUEST; /* starting an active persistent request */
    hook_progress();
    /* Claimed while its first round starts: another thread's progress (or
     * the library's, from inside the sends below) finds it running only
     * once it has started. */
    while (!try_claim(r))
        sched_yield();
    r->done = 0;
    r->active = 1;
    rc = running_add(r);
    if (rc == MPI_SUCCESS) {
        if (r->start_copy_bytes > 0)
            ct_memcpy(r->keep, r->start_copy_from, r->start_copy_bytes);
        r->rc = ct_sched_start(&r->sched);
        if (r->rc != MPI_SUCCESS)
            __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
    } else {
        r->active = 0;
    }
    unclaim(r);
    return rc;
}

int ct_request_open(ct_ctx *ctx, MPI_Comm user_comm, int persistent, MPI_Datatype *sendtype,
                    MPI_Datatype *recvtype, ct_request **out)
{
    int rc, tag;
    *out = NULL;
    rc = ct_ctx_request_tag(ctx, persistent, &tag); /* first: every rank counts the call */
    if (rc == CT_NO_TAG) /* every persistent tag held: the caller forwards, no error */
        return rc;
    CT_CALL(rc);
    rc = ct_request_new(ctx, user_comm, persistent, out);
    if (rc != MPI_SUCCESS) {
        ct_ctx_tag_release(ctx, tag);
        return rc;
    }
    ct_sched_prepare(&(*out)->sched, ctx, tag, 1); /* the request holds the tag now */
    CT_CALL(ct_request_type(*out, *sendtype, sendtype));
    CT_CALL(ct_request_type(*out, *recvtype, recvtype));
out:
    return rc;
}

int ct_request_launch(ct_ctx *ctx, ct_request **r, MPI_Request *user)
{
    ct_request *ready = *r;
    ctx->call_extra += ct_sched_own_bytes(&ready->sched) + ready->keep_bytes;
    if (ready->persistent && ctx->stat_index >= 0) {
        ready->stat_index = ctx->stat_index;
        ready->stat_bytes = ctx->stat_bytes;
        ctx->stat_index = -2;
    }
    *r = NULL;
    return ct_request_go(ready, user);
}

int ct_request_publish(ct_request *r, MPI_Request *user)
{
    table_add(r);
    *user = r->handle;
    return MPI_SUCCESS;
}

int ct_request_go(ct_request *r, MPI_Request *user)
{
    int rc = ct_request_publish(r, user);
    if (rc != MPI_SUCCESS || r->persistent) /* a persistent one waits for MPI_Start */
        return rc;
    rc = ct_request_start(r);
    if (rc != MPI_SUCCESS)
        (void)ct_request_free(r, user); /* inactive: out of the table, freed */
    return rc;
}


int ct_request_test(ct_request *r, int *done)
{
    if (!r->done && try_claim(r)) {
        int finished = 0;
        const int rc = ct_sched_test(&r->sched, &finished);
        if (rc != MPI_SUCCESS)
            r->rc = rc;
        r->done = finished || rc != MPI_SUCCESS;
        unclaim(r);
    }
    *done = __atomic_load_n(&r->done, __ATOMIC_ACQUIRE);
    return MPI_SUCCESS;
}

void ct_request_wait(ct_request *r)
{
    int done = 0;
    if (!ct_request_hooked()) {
        /* Nothing else advances the other requests while this one would
         * block (MPICH): a peer may wait for one of them, or for one of the
         * library's, before it serves this one, so all of them are polled. */
        while (ct_request_test(r, &done), !done)
            ct_request_idle();
        return;
    }
    while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
        if (!try_claim(r)) { /* another thread is advancing it */
            sched_yield();
            continue;
        }
        if (!r->done) {
            const int rc = ct_sched_wait(&r->sched);
            if (rc != MPI_SUCCESS)
                r->rc = rc;
            __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
        }
        unclaim(r);
    }
}

/* Claims up to n running requests from index *next on, not done and not
 * claimed by another thread; *next moves past those looked at. Returns how
 * many it claimed, and sets *more if requests remain past *next. */
static int claim_batch(ct_requests *t, int *next, ct_request **claimed, int n, int *more)
{
    int got = 0, i;
    pthread_mutex_lock(&t->lock);
    for (i = *next; i < t->active && got < n; i++) {
        ct_request *r = t->running[i];
        if (!__atomic_load_n(&r->done, __ATOMIC_RELAXED) && try_claim(r))
            claimed[got++] = r;
    }
    *next = i;
    *more = i < t->active;
    pthread_mutex_unlock(&t->lock);
    return got;
}

void ct_request_progress_all(void)
{
    ct_requests *t = &ct_state_get()->requests;
    /* A request found here may be completed and freed by another thread at
     * once: only those claimed under the lock are advanced, and a claim
     * holds off their completion (ct_request_complete waits for it).
     * Every running request is advanced, a batch at a time: the list is
     * not in start order (running_remove moves the last into the gap), and
     * a request left out of every pass (only the first 16 pending were
     * advanced) may be the one another rank's request waits for while this
     * rank sits in the library (MPICH's coll/nonblocking3 keeps 20 in
     * flight over 4 communicators). */
    enum { BATCH = 16 };
    ct_request *claimed[BATCH];
    int next = 0, more = 1;
    if (!ct_request_any_active())
        return;
    while (more) {
        const int n = claim_batch(t, &next, claimed, BATCH, &more);
        for (int i = 0; i < n; i++) {
            int finished = 0;
            const int rc = ct_sched_test(&claimed[i]->sched, &finished);
            if (rc != MPI_SUCCESS)
                claimed[i]->rc = rc;
            if (finished || rc != MPI_SUCCESS)
                __atomic_store_n(&claimed[i]->done, 1, __ATOMIC_RELEASE);
            unclaim(claimed[i]);
        }
    }
}

/*
 * MPI's progress rule: an operation a rank has started completes while the
 * rank waits in any MPI call. A peer may wait, in the library, for one of
 * this rank's nonblocking operations (the library's own, as an MPI_Ibcast
 * on another communicator, or coltune's) before it comes to the call this
 * rank waits for. So a wait of coltune's that does not enter the library
 * (a rank reading a shared window, spinning on its flags) calls this now
 * and then: an MPI_Iprobe, which runs the library's progress engine (and,
 * in Open MPI, coltune's hook), and, where nothing runs coltune's requests
 * from there (MPICH), a pass over them. Without it a rank that waited for
 * its node in coltune's window kept its node's other rank waiting forever
 * in MPI_Waitall for an MPI_Ibcast of the first (MPICH's coll/nonblocking3
 * on 4 ranks, node_aware forced, COLTUNE_PPN=2).
 */
void ct_request_idle(void)
{
    int flag;
    const int rc =
        PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        ct_log_mpi_error(rc, "MPI_Iprobe", __FILE__, __LINE__);
    if (!ct_request_hooked())
        ct_request_progress_all();
}

/* ------------------------------------------------------------------ */
/* Completion                                                          */
/* ------------------------------------------------------------------ */

void ct_request_empty_status(MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = MPI_SUCCESS;
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
}

int ct_request_complete(ct_request *r, MPI_Request *user, MPI_Status *status)
{
    const int rc = r->rc;
    ct_request_empty_status(status);
    /* Wait until no other thread's progress_all holds it. */
    while (!try_claim(r))
        sched_yield();
    r->active = 0;
    running_remove(r);
    if (r->persistent) {
        unclaim(r);
        return rc;
    }
    table_remove(r);
    request_release(r);
    *user = MPI_REQUEST_NULL;
    return rc;
}

int ct_request_free(ct_request *r, MPI_Request *user)
{
    if (r->active)
        return MPI_ERR_REQUEST;
    table_remove(r);
    request_release(r);
    *user = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

MPI_Comm ct_request_errcomm(ct_request *r)
{
    return ct_ctx_orphaned(r->ctx) ? MPI_COMM_SELF : r->user_comm;
}
