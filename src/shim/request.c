/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * request.c - the completion calls, for coltune's requests (core/request.h):
 * MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Waitsome, MPI_Test, MPI_Testall,
 * MPI_Testany, MPI_Testsome, MPI_Request_get_status, MPI_Start,
 * MPI_Startall, MPI_Request_free and MPI_Cancel.
 *
 * While no coltune request is active, each forwards at once (one load; an
 * inactive persistent request of coltune is an inactive persistent request
 * of the library to it, which it completes at once with an empty status).
 * Otherwise coltune's entries are found by their handles (one lock per
 * call), advanced and completed here, and the library is given the others
 * (a copy of the array with coltune's entries MPI_REQUEST_NULL). A call
 * that must wait for the library's requests while coltune's schedules are
 * active polls both, unless the library's progress engine advances the
 * schedules itself (ct_request_hooked, Open MPI).
 */
#include "core/request.h"
#include "shim/shim.h"
#include "stats.h"

#include <stdlib.h>
#include <string.h>

#ifndef CT_NO_INTERCEPT /* see init.c: the whole file */

static MPI_Status *status_at(MPI_Status statuses[], int i)
{
    return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

/* ------------------------------------------------------------------ */
/* An array's entries that are coltune's active requests               */
/* ------------------------------------------------------------------ */

#define ON_STACK 64

typedef struct mine {
    ct_request **r;      /* r[i]: the active coltune request of entry i, or NULL */
    MPI_Request *others; /* the array with those entries MPI_REQUEST_NULL */
    int n;               /* how many entries are coltune's */
    ct_request *r_stack[ON_STACK];
    MPI_Request others_stack[ON_STACK];
} mine;

static int mine_find(mine *m, int count, const MPI_Request reqs[])
{
    m->r = count <= ON_STACK ? m->r_stack : malloc((size_t)count * sizeof *m->r);
    m->others =
        count <= ON_STACK ? m->others_stack : malloc((size_t)count * sizeof *m->others);
    if (m->r == NULL || m->others == NULL)
        return MPI_ERR_NO_MEM;
    ct_request_find_all(count, reqs, m->r);
    m->n = 0;
    for (int i = 0; i < count; i++) {
        if (m->r[i] != NULL && !m->r[i]->active)
            m->r[i] = NULL; /* inactive: the library completes its handle at once */
        m->others[i] = m->r[i] != NULL ? MPI_REQUEST_NULL : reqs[i];
        m->n += m->r[i] != NULL;
    }
    return MPI_SUCCESS;
}

static void mine_free(mine *m)
{
    if (m->r != m->r_stack)
        free(m->r);
    if (m->others != m->others_stack)
        free(m->others);
}

/* Puts back what the library did to the other entries. */
static void mine_back(const mine *m, int count, MPI_Request reqs[])
{
    for (int i = 0; i < count; i++)
        if (m->r[i] == NULL)
            reqs[i] = m->others[i];
}

/* Completes coltune's request of entry i; its error, if any, in *err (the
 * first) and in the entry's status. */
static void complete_entry(const mine *m, int i, MPI_Request reqs[], MPI_Status *status,
                           int *err, MPI_Comm *err_comm)
{
    ct_request *r = m->r[i];
    const MPI_Comm comm = ct_request_errcomm(r);
    const int rc = ct_request_complete(r, &reqs[i], status);
    if (rc != MPI_SUCCESS && status != MPI_STATUS_IGNORE)
        status->MPI_ERROR = rc;
    if (rc != MPI_SUCCESS && *err == MPI_SUCCESS) {
        *err = rc;
        *err_comm = comm;
    }
}

/* The error of a call that completed several requests: MPI_ERR_IN_STATUS
 * when one of coltune's failed (each status says which), raised on its
 * communicator; else what the library said. */
static int multiple_result(int lib_rc, int err, MPI_Comm err_comm)
{
    if (err == MPI_SUCCESS)
        return lib_rc;
    return ct_shim_return(err_comm, MPI_ERR_IN_STATUS);
}

/* ------------------------------------------------------------------ */
/* Waiting for the library's requests while coltune's are active       */
/* ------------------------------------------------------------------ */

static int lib_wait(MPI_Request *req, MPI_Status *status)
{
    int rc, flag = 0;
    if (ct_request_hooked() || !ct_request_any_active())
        return PMPI_Wait(req, status);
    do {
        ct_request_progress_all();
        rc = PMPI_Test(req, &flag, status);
    } while (rc == MPI_SUCCESS && !flag);
    return rc;
}

/* Polls each request with PMPI_Test until all have completed (as
 * MPI_Waitall may complete them one by one), not all of them with
 * PMPI_Testall or PMPI_Testsome: MPICH 4.0's MPI_Testall answers
 * MPI_ERR_IN_STATUS for a persistent collective request that completed
 * without error, and its MPI_Testsome reports such a request again and again
 * once it is inactive. A null or inactive entry (coltune's own among them,
 * whose statuses the caller writes after) completes at its first test. */
static int lib_waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    int rc = MPI_SUCCESS, left = count, failed = 0;
    char seen_stack[ON_STACK], *seen = seen_stack;
    if (ct_request_hooked() || !ct_request_any_active())
        return PMPI_Waitall(count, reqs, statuses);
    if (count > ON_STACK && (seen = malloc((size_t)count)) == NULL)
        return MPI_ERR_NO_MEM;
    memset(seen, 0, (size_t)count);
    while (left > 0) {
        ct_request_progress_all();
        for (int i = 0; i < count; i++) {
            int flag = 0;
            if (seen[i])
                continue;
            rc = PMPI_Test(&reqs[i], &flag, status_at(statuses, i));
            if (rc != MPI_SUCCESS) { /* this one failed, and is complete */
                failed = 1;
                flag = 1;
                if (statuses != MPI_STATUSES_IGNORE)
                    statuses[i].MPI_ERROR = rc;
            } else if (flag && statuses != MPI_STATUSES_IGNORE) {
                statuses[i].MPI_ERROR = MPI_SUCCESS;
            }
            seen[i] = (char)flag;
            left -= flag;
        }
    }
    if (seen != seen_stack)
        free(seen);
    return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

static int lib_waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    int rc, flag = 0;
    if (ct_request_hooked() || !ct_request_any_active())
        return PMPI_Waitany(count, reqs, index, status);
    do {
        ct_request_progress_all();
        rc = PMPI_Testany(count, reqs, index, &flag, status);
    } while (rc == MPI_SUCCESS && !flag);
    return rc;
}

static int lib_waitsome(int count, MPI_Request reqs[], int *outcount, int indices[],
                        MPI_Status statuses[])
{
    int rc;
    if (ct_request_hooked() || !ct_request_any_active())
        return PMPI_Waitsome(count, reqs, outcount, indices, statuses);
    do {
        ct_request_progress_all();
        rc = PMPI_Testsome(count, reqs, outcount, indices, statuses);
    } while (rc == MPI_SUCCESS && *outcount == 0);
    return rc;
}

/* ------------------------------------------------------------------ */
/* One request                                                         */
/* ------------------------------------------------------------------ */

/* The active coltune request req names, or NULL. */
static ct_request *active_of(MPI_Request req)
{
    ct_request *r = ct_request_find(req);
    return r != NULL && r->active ? r : NULL;
}

static int complete_one(ct_request *r, MPI_Request *req, MPI_Status *status)
{
    const MPI_Comm comm = ct_request_errcomm(r);
    return ct_shim_return(comm, ct_request_complete(r, req, status));
}

int ct_shim_wait(MPI_Request *req, MPI_Status *status)
{
    ct_request *r;
    if (!ct_request_any_active() || (r = active_of(*req)) == NULL)
        return lib_wait(req, status);
    ct_request_wait(r);
    return complete_one(r, req, status);
}

int ct_shim_test(MPI_Request *req, int *flag, MPI_Status *status)
{
    ct_request *r;
    if (!ct_request_any_active())
        return PMPI_Test(req, flag, status);
    if ((r = active_of(*req)) == NULL) {
        ct_request_progress_all();
        return PMPI_Test(req, flag, status);
    }
    ct_request_test(r, flag);
    return *flag ? complete_one(r, req, status) : MPI_SUCCESS;
}

int ct_shim_get_status(MPI_Request req, int *flag, MPI_Status *status)
{
    ct_request *r;
    if (!ct_request_any_active())
        return PMPI_Request_get_status(req, flag, status);
    if ((r = active_of(req)) == NULL) {
        ct_request_progress_all();
        return PMPI_Request_get_status(req, flag, status);
    }
    ct_request_test(r, flag);
    if (*flag)
        ct_request_empty_status(status); /* the request stays as it is */
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Arrays                                                              */
/* ------------------------------------------------------------------ */

int ct_shim_waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    int rc, err = MPI_SUCCESS;
    MPI_Comm err_comm = MPI_COMM_NULL;
    mine m;
    if (!ct_request_any_active())
        return PMPI_Waitall(count, reqs, statuses);
    if ((rc = mine_find(&m, count, reqs)) != MPI_SUCCESS || m.n == 0) {
        mine_free(&m);
        return rc == MPI_SUCCESS ? lib_waitall(count, reqs, statuses) : rc;
    }
    for (int i = 0; i < count; i++)
        if (m.r[i] != NULL)
            ct_request_wait(m.r[i]);
    rc = lib_waitall(count, m.others, statuses);
    mine_back(&m, count, reqs);
    for (int i = 0; i < count; i++)
        if (m.r[i] != NULL)
            complete_entry(&m, i, reqs, status_at(statuses, i), &err, &err_comm);
    mine_free(&m);
    return multiple_result(rc, err, err_comm);
}

int ct_shim_testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    int rc, err = MPI_SUCCESS, done = 1;
    MPI_Comm err_comm = MPI_COMM_NULL;
    mine m;
    if (!ct_request_any_active())
        return PMPI_Testall(count, reqs, flag, statuses);
    if ((rc = mine_find(&m, count, reqs)) != MPI_SUCCESS || m.n == 0) {
        mine_free(&m);
        if (rc == MPI_SUCCESS)
            ct_request_progress_all();
        return rc == MPI_SUCCESS ? PMPI_Testall(count, reqs, flag, statuses) : rc;
    }
    for (int i = 0; i < count; i++) {
        int d = 1;
        if (m.r[i] != NULL)
            ct_request_test(m.r[i], &d);
        done &= d;
    }
    /* Nothing is completed unless everything is (MPI_Testall). */
    *flag = 0;
    if (done && (rc = PMPI_Testall(count, m.others, flag, statuses)) == MPI_SUCCESS && *flag) {
        mine_back(&m, count, reqs);
        for (int i = 0; i < count; i++)
            if (m.r[i] != NULL)
                complete_entry(&m, i, reqs, status_at(statuses, i), &err, &err_comm);
    }
    mine_free(&m);
    return multiple_result(rc, err, err_comm);
}

/* One pass of Waitany/Testany over an array with coltune's entries: the
 * first of them that is done, else whatever the library completes. */
static int any_pass(mine *m, int count, MPI_Request reqs[], int *index, int *flag,
                    MPI_Status *status)
{
    int rc, idx, lib_flag = 0;
    for (int i = 0; i < count; i++) {
        int done = 0;
        if (m->r[i] == NULL || (ct_request_test(m->r[i], &done), !done))
            continue;
        *index = i;
        *flag = 1;
        return complete_one(m->r[i], &reqs[i], status);
    }
    *flag = 0;
    rc = PMPI_Testany(count, m->others, &idx, &lib_flag, status);
    if (rc == MPI_SUCCESS && lib_flag && idx != MPI_UNDEFINED) {
        reqs[idx] = m->others[idx];
        *index = idx;
        *flag = 1;
    }
    return rc;
}

/* MPI_Waitany (wait set; flag NULL) or MPI_Testany. */
int ct_shim_any(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status,
                     int wait)
{
    int rc, done = 0;
    mine m;
    if (!ct_request_any_active())
        return wait ? PMPI_Waitany(count, reqs, index, status)
                    : PMPI_Testany(count, reqs, index, flag, status);
    if ((rc = mine_find(&m, count, reqs)) != MPI_SUCCESS || m.n == 0) {
        mine_free(&m);
        if (rc != MPI_SUCCESS)
            return rc;
        if (wait)
            return lib_waitany(count, reqs, index, status);
        ct_request_progress_all();
        return PMPI_Testany(count, reqs, index, flag, status);
    }
    *index = MPI_UNDEFINED;
    do /* a wait: one of coltune's is active, so something will complete */
        rc = any_pass(&m, count, reqs, index, &done, status);
    while (wait && rc == MPI_SUCCESS && !done);
    if (flag != NULL)
        *flag = done;
    mine_free(&m);
    return rc;
}

/* One pass of Waitsome/Testsome: coltune's entries that are done, then what
 * the library completes of the others; *outcount 0 when nothing did. */
static int some_pass(mine *m, int count, MPI_Request reqs[], int *outcount, int indices[],
                     MPI_Status statuses[])
{
    int rc, out = 0, lib_out = 0, err = MPI_SUCCESS;
    MPI_Comm err_comm = MPI_COMM_NULL;
    for (int i = 0; i < count; i++) {
        int done = 0;
        if (m->r[i] == NULL || (ct_request_test(m->r[i], &done), !done))
            continue;
        complete_entry(m, i, reqs, status_at(statuses, out), &err, &err_comm);
        m->r[i] = NULL; /* completed: no longer an entry of coltune's */
        indices[out++] = i;
    }
    rc = PMPI_Testsome(count, m->others, &lib_out, indices + out,
                       statuses == MPI_STATUSES_IGNORE ? MPI_STATUSES_IGNORE : statuses + out);
    if (rc == MPI_SUCCESS && lib_out != MPI_UNDEFINED) {
        for (int k = out; k < out + lib_out; k++)
            reqs[indices[k]] = m->others[indices[k]];
        out += lib_out;
    }
    *outcount = out;
    return multiple_result(rc, err, err_comm);
}

/* MPI_Waitsome (wait set) or MPI_Testsome. */
int ct_shim_some(int count, MPI_Request reqs[], int *outcount, int indices[],
                      MPI_Status statuses[], int wait)
{
    int rc;
    mine m;
    if (!ct_request_any_active())
        return wait ? PMPI_Waitsome(count, reqs, outcount, indices, statuses)
                    : PMPI_Testsome(count, reqs, outcount, indices, statuses);
    if ((rc = mine_find(&m, count, reqs)) != MPI_SUCCESS || m.n == 0) {
        mine_free(&m);
        if (rc != MPI_SUCCESS)
            return rc;
        if (wait)
            return lib_waitsome(count, reqs, outcount, indices, statuses);
        ct_request_progress_all();
        return PMPI_Testsome(count, reqs, outcount, indices, statuses);
    }
    do /* a wait: one of coltune's is active, so something will complete */
        rc = some_pass(&m, count, reqs, outcount, indices, statuses);
    while (wait && rc == MPI_SUCCESS && *outcount == 0);
    mine_free(&m);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Starting, freeing, cancelling                                       */
/* ------------------------------------------------------------------ */

int ct_shim_start(MPI_Request *req)
{
    ct_request *r;
    if (!ct_request_any_live() || (r = ct_request_find(*req)) == NULL)
        return PMPI_Start(req);
    if (!r->persistent || r->active) /* MPI: only an inactive persistent request */
        return ct_shim_return(ct_request_errcomm(r), MPI_ERR_REQUEST);
    const double t0 = r->stat_index >= 0 ? PMPI_Wtime() : 0;
    const int rc = ct_request_start(r);
    if (rc == MPI_SUCCESS && r->stat_index >= 0) /* COLTUNE_STATS: a start is a call */
        ct_stats_record(r->stat_index, 1, r->stat_bytes, PMPI_Wtime() - t0, 0);
    return ct_shim_return(ct_request_errcomm(r), rc);
}

int ct_shim_startall(int count, MPI_Request reqs[])
{
    int rc = MPI_SUCCESS;
    if (!ct_request_any_live())
        return PMPI_Startall(count, reqs);
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++)
        rc = ct_shim_start(&reqs[i]);
    return rc;
}

int ct_shim_request_free(MPI_Request *req)
{
    ct_request *r;
    if (!ct_request_any_live() || (r = ct_request_find(*req)) == NULL)
        return PMPI_Request_free(req);
    /* MPI: erroneous for an active collective request, nonblocking or
     * persistent; nothing is freed. */
    const MPI_Comm comm = ct_request_errcomm(r);
    return ct_shim_return(comm, ct_request_free(r, req));
}

int ct_shim_cancel(MPI_Request *req)
{
    ct_request *r;
    if (!ct_request_any_live() || (r = ct_request_find(*req)) == NULL)
        return PMPI_Cancel(req);
    /* MPI: erroneous for a collective request. */
    return ct_shim_return(ct_request_errcomm(r), MPI_ERR_REQUEST);
}

/* ------------------------------------------------------------------ */
/* The symbols                                                         */
/* ------------------------------------------------------------------ */
CT_EXPORT int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    return ct_shim_wait(request, status);
}

CT_EXPORT int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    return ct_shim_test(request, flag, status);
}

CT_EXPORT int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    return ct_shim_get_status(request, flag, status);
}

CT_EXPORT int MPI_Waitall(int count, MPI_Request array_of_requests[],
                          MPI_Status array_of_statuses[])
{
    return ct_shim_waitall(count, array_of_requests, array_of_statuses);
}

CT_EXPORT int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                          MPI_Status array_of_statuses[])
{
    return ct_shim_testall(count, array_of_requests, flag, array_of_statuses);
}

CT_EXPORT int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index,
                          MPI_Status *status)
{
    return ct_shim_any(count, array_of_requests, index, NULL, status, 1);
}

CT_EXPORT int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                          MPI_Status *status)
{
    return ct_shim_any(count, array_of_requests, index, flag, status, 0);
}

CT_EXPORT int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                           int array_of_indices[], MPI_Status array_of_statuses[])
{
    return ct_shim_some(incount, array_of_requests, outcount, array_of_indices,
                      array_of_statuses, 1);
}

CT_EXPORT int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                           int array_of_indices[], MPI_Status array_of_statuses[])
{
    return ct_shim_some(incount, array_of_requests, outcount, array_of_indices,
                      array_of_statuses, 0);
}

CT_EXPORT int MPI_Start(MPI_Request *request) { return ct_shim_start(request); }

CT_EXPORT int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    return ct_shim_startall(count, array_of_requests);
}

CT_EXPORT int MPI_Request_free(MPI_Request *request) { return ct_shim_request_free(request); }

CT_EXPORT int MPI_Cancel(MPI_Request *request) { return ct_shim_cancel(request); }
#endif
