/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fortran.c - how the Fortran bindings (include 'mpif.h', use mpi,
 * use mpi_f08) reach coltune.
 *
 * Each MPI library's Fortran layer reaches the C library differently, so the
 * same preloaded libcoltune.so does what the library it was built for needs:
 *
 *  - MPICH (4.0): the mpif.h and use mpi bindings (mpi_alltoallv_ and its
 *    manglings in libmpifort) call the C MPI_Alltoallv, and the use mpi_f08
 *    bindings (mpi_alltoallv_f08ts_ through an internal MPIR_*_cdesc
 *    function) call the C MPI_Alltoallv or, for large counts, MPI_Alltoallv_c.
 *    coltune's C entry points already serve every Fortran call, with MPICH's
 *    own handle conversion and MPI_IN_PLACE translation; defining Fortran
 *    symbols for them here would serve each call twice. Only mpi_f08's
 *    MPI_INIT, MPI_INIT_THREAD and MPI_FINALIZE (mpi_init_f08_, ...) call
 *    PMPI_Init and PMPI_Finalize directly: those three are defined, so a
 *    use mpi_f08 program gets the statistics and start-up log of a C one.
 *
 *  - Open MPI (4.1): every binding calls PMPI_ directly, so the C entry points
 *    never see a Fortran call. coltune defines the Fortran symbols themselves,
 *    which the dynamic linker binds in place of libmpi_mpifh's (LD_PRELOAD
 *    comes first; Open MPI's are weak aliases and called through the PLT):
 *      mpif.h and use mpi: mpi_alltoallv_, mpi_alltoallv__, mpi_alltoallv,
 *        MPI_ALLTOALLV (the module's interfaces name the same externals);
 *      use mpi_f08: mpi_alltoallv_f08_, whose ierror is optional (NULL when
 *        absent), with the same arguments: TYPE(MPI_Comm) is passed as a
 *        pointer to its integer MPI_VAL and buffers as plain addresses.
 *    Each converts the handles with PMPI_*_f2c, maps Open MPI's Fortran
 *    sentinels (the common block mpi_fortran_in_place_, mpi_fortran_bottom_,
 *    looked up with dlsym under each mangling) to MPI_IN_PLACE and
 *    MPI_BOTTOM, and calls the same ct_shim_* function as the C symbol, so
 *    rules, environment, log and statistics are the C caller's. The PMPI_
 *    Fortran names (pmpi_alltoallv_, ...) are left to the MPI library: a tool
 *    calling them gets the native routine, as the profiling interface says.
 *    Safe: nothing here calls an MPI_ symbol, so no call is served twice,
 *    and a handle that does not convert is given to the library's own routine
 *    unconverted in meaning (f2c's answer), which reports the error as its
 *    own binding would.
 *
 * Same for MPI_ALLTOALL, MPI_ALLGATHER, MPI_ALLGATHERV, MPI_NEIGHBOR_ALLTOALLV
 * and MPI_NEIGHBOR_ALLTOALL, and for MPI_INIT,
 * MPI_INIT_THREAD and MPI_FINALIZE, so a Fortran program gets the start-up
 * messages, the statistics at the end and its contexts released before
 * PMPI_Finalize exactly as a C program does; and for MPI_IALLTOALLV,
 * MPI_IALLTOALL, MPI_IALLGATHER, MPI_IALLGATHERV and the thirteen
 * completion calls (below).
 */
#include "core/state.h"
#include "shim/shim.h"

#if (defined(CT_FORTRAN_OPENMPI) || defined(CT_FORTRAN_MPICH)) && !defined(CT_NO_INTERCEPT)

/* The Fortran INTEGER is a C int in every build coltune supports. */
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint must be an int");

typedef MPI_Fint F;

static void set_ierr(F *ierr, int rc)
{
    if (ierr != NULL) /* optional in mpi_f08 */
        *ierr = (F)rc;
}

/* MPI_INIT, MPI_INIT_THREAD and MPI_FINALIZE: the libraries' own bindings
 * pass no command line (argc 0) to PMPI_Init; so does coltune. */
#define INIT_ARGS (F * ierr)
#define INIT_THREAD_ARGS (F * required, F *provided, F *ierr)
#define FINALIZE_ARGS (F * ierr)

void ct_f_init INIT_ARGS;
void ct_f_init INIT_ARGS { set_ierr(ierr, ct_shim_init(NULL, NULL)); }

void ct_f_init_thread INIT_THREAD_ARGS;
void ct_f_init_thread INIT_THREAD_ARGS
{
    int got = MPI_THREAD_SINGLE;
    int rc = ct_shim_init_thread(NULL, NULL, *required, &got);
    *provided = (F)got;
    set_ierr(ierr, rc);
}

void ct_f_finalize FINALIZE_ARGS;
void ct_f_finalize FINALIZE_ARGS { set_ierr(ierr, ct_shim_finalize()); }

#endif
#if (defined(CT_FORTRAN_OPENMPI) || defined(CT_FORTRAN_MPICH)) && !defined(CT_NO_INTERCEPT)

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* The four manglings of a Fortran common block's name. */
static void lookup(const char *name, const char *f08, const void *found[5])
{
    char buf[64];
    static const char *const forms[4] = {"%s_", "%s__", "%s", ""};
    for (int i = 0; i < 3; i++) {
        snprintf(buf, sizeof buf, forms[i], name);
        found[i] = dlsym(RTLD_DEFAULT, buf);
    }
    size_t n = 0;
    for (; name[n] != '\0' && n + 1 < sizeof buf; n++)
        buf[n] = (char)(name[n] >= 'a' && name[n] <= 'z' ? name[n] - 'a' + 'A' : name[n]);
    buf[n] = '\0';
    found[3] = dlsym(RTLD_DEFAULT, buf);
    /* mpi_f08's, through the C pointer MPI-3 defines (MPI_F08_STATUS_IGNORE) */
    void *const *ptr = f08 != NULL ? dlsym(RTLD_DEFAULT, f08) : NULL;
    found[4] = ptr != NULL ? *ptr : NULL;
}

static void lookup_sentinels(void)
{
    ct_state *st = ct_state_get();
    lookup("mpi_fortran_in_place", NULL, st->fortran.in_place);
    lookup("mpi_fortran_bottom", NULL, st->fortran.bottom);
    lookup("mpi_fortran_status_ignore", "MPI_F08_STATUS_IGNORE", st->fortran.status_ignore);
    lookup("mpi_fortran_statuses_ignore", "MPI_F08_STATUSES_IGNORE",
           st->fortran.statuses_ignore);
}

/* Is p one of the sentinels in set[5]? */
static int is_sentinel(const void *p, const void *const set[5])
{
    ct_state *st = ct_state_get();
    pthread_once(&st->fortran.once, lookup_sentinels);
    for (int i = 0; i < 5; i++)
        if (p != NULL && p == set[i])
            return 1;
    return 0;
}

/* The four manglings of mpif.h / use mpi plus the mpi_f08 name, all bound
 * to one function. */
#define CT_FORTRAN_NAMES(fn, lower, upper, args)                                     \
    CT_EXPORT void lower##_ args __attribute__((alias(#fn)));                        \
    CT_EXPORT void lower##__ args __attribute__((alias(#fn)));                       \
    CT_EXPORT void lower args __attribute__((alias(#fn)));                           \
    CT_EXPORT void upper args __attribute__((alias(#fn)));                           \
    CT_EXPORT void lower##_f08_ args __attribute__((alias(#fn)))

/*
 * The completion calls' names: under Open MPI all five (its bindings call
 * PMPI_ directly); under MPICH the mpi_f08 one alone, whose bindings call
 * PMPI_Wait and the others directly (its mpif.h and use mpi bindings call
 * the C MPI_Wait, which coltune serves), while its mpi_f08 MPI_Ialltoallv
 * calls the C MPI_Ialltoallv: a request coltune made must reach coltune's
 * completion. MPICH's mpi_f08 request is its C handle and TYPE(MPI_Status)
 * the C status, which the same conversions keep as they are.
 */
#if defined(CT_FORTRAN_OPENMPI)
#define CT_FORTRAN_DONE_NAMES CT_FORTRAN_NAMES
#else
#define CT_FORTRAN_DONE_NAMES(fn, lower, upper, args) \
    CT_EXPORT void lower##_f08_ args __attribute__((alias(#fn)))
#endif

/* ------------------------------------------------------------------ */
/* The nonblocking calls and the completion calls                      */
/* ------------------------------------------------------------------ */

/*
 * A request coltune serves must be completed by coltune: Open MPI's own
 * Fortran MPI_WAIT would find only the inactive handle behind it (core/
 * request.h). So with the nonblocking collectives, every Fortran
 * completion call is coltune's too, converting as Open MPI's bindings do:
 * requests with PMPI_Request_f2c / c2f (each entry of an array), statuses
 * with PMPI_Status_c2f (Open MPI's Fortran status, INTEGER(MPI_STATUS_SIZE)
 * or TYPE(MPI_Status), has the C status's bytes), MPI_STATUS_IGNORE and
 * MPI_STATUSES_IGNORE by their common blocks, indices from 0 to 1-based,
 * logicals as gfortran's (.TRUE. is 1). The persistent MPIX_*_INIT calls
 * are coltune's too (below); a request the library made is given back to it.
 */
#define F_TRUE 1
#define F_STATUS_INTS ((int)(sizeof(MPI_Status) / sizeof(F)))

static MPI_Status *c_status(F *f, MPI_Status *tmp)
{
    return is_sentinel(f, ct_state_get()->fortran.status_ignore) ? MPI_STATUS_IGNORE : tmp;
}

static void f_status(const MPI_Status *c, F *f)
{
    if (c != MPI_STATUS_IGNORE)
        PMPI_Status_c2f(c, f);
}

/* An array of n requests and, unless ignored, n statuses, in C: on the
 * stack for a few, else allocated (NULL: out of memory). */
enum { ON_STACK = 32 };
typedef struct c_array {
    MPI_Request *req;
    MPI_Status *st; /* MPI_STATUSES_IGNORE when the caller ignores them */
    MPI_Request req_stack[ON_STACK];
    MPI_Status st_stack[ON_STACK];
} c_array;

static void c_array_free(c_array *a)
{
    if (a->req != a->req_stack)
        free(a->req);
    if (a->st != a->st_stack && a->st != MPI_STATUSES_IGNORE)
        free(a->st); /* (free(NULL) too, when it could not be made) */
}

static int c_array_make(c_array *a, int n, const F *freq, F *fst)
{
    const int big = n > ON_STACK;
    const int ignore = fst == NULL || is_sentinel(fst, ct_state_get()->fortran.statuses_ignore);
    a->req = big ? malloc((size_t)n * sizeof *a->req) : a->req_stack;
    a->st = ignore ? MPI_STATUSES_IGNORE : big ? malloc((size_t)n * sizeof *a->st) : a->st_stack;
    /* (Open MPI's MPI_STATUSES_IGNORE is a null pointer) */
    if (a->req == NULL || (!ignore && a->st == NULL)) {
        c_array_free(a);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < n; i++)
        a->req[i] = PMPI_Request_f2c(freq[i]);
    return MPI_SUCCESS;
}

/* The requests back (completed ones are MPI_REQUEST_NULL now), and the
 * first nstatus statuses. */
static void c_array_back(const c_array *a, int count, F *freq, F *fst, int nstatus)
{
    for (int i = 0; i < count; i++)
        freq[i] = PMPI_Request_c2f(a->req[i]);
    for (int k = 0; k < nstatus && a->st != MPI_STATUSES_IGNORE; k++)
        PMPI_Status_c2f(&a->st[k], fst + (size_t)k * F_STATUS_INTS);
}

/* What a completion call's result lets it write back. */
static int written(int rc) { return rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS; }

#define WAIT_ARGS (F * request, F *status, F *ierr)
void ct_f_wait WAIT_ARGS;
void ct_f_wait WAIT_ARGS
{
    MPI_Status tmp, *s = c_status(status, &tmp);
    MPI_Request r = PMPI_Request_f2c(*request);
    const int rc = ct_shim_wait(&r, s);
    if (rc == MPI_SUCCESS) {
        *request = PMPI_Request_c2f(r);
        f_status(s, status);
    }
    set_ierr(ierr, rc);
}
CT_FORTRAN_DONE_NAMES(ct_f_wait, mpi_wait, MPI_WAIT, WAIT_ARGS);

#define TEST_ARGS (F * request, F *flag, F *status, F *ierr)
void ct_f_test TEST_ARGS;
void ct_f_test TEST_ARGS
{
    MPI_Status tmp, *s = c_status(status, &tmp);
    MPI_Request r = PMPI_Request_f2c(*request);
    int done = 0;
    const int rc = ct_shim_test(&r, &done, s);
    if (rc == MPI_SUCCESS) {
        *flag = done ? F_TRUE : 0;
        *request = PMPI_Request_c2f(r);
        if (done)
            f_status(s, status);
    }
    set_ierr(ierr, rc);
}
CT_FORTRAN_DONE_NAMES(ct_f_test, mpi_test, MPI_TEST, TEST_ARGS);

void ct_f_request_get_status TEST_ARGS;
void ct_f_request_get_status TEST_ARGS
{
    MPI_Status tmp, *s = c_status(status, &tmp);
    int done = 0;
    const int rc = ct_shim_get_status(PMPI_Request_f2c(*request), &done, s);
    if (rc == MPI_SUCCESS) {
        *flag = done ? F_TRUE : 0;
        if (done)
            f_status(s, status);
    }
    set_ierr(ierr, rc);
}
CT_FORTRAN_DONE_NAMES(ct_f_request_get_status, mpi_request_get_status, MPI_REQUEST_GET_STATUS,
                 TEST_ARGS);

#define WAITALL_ARGS (F * count, F *requests, F *statuses, F *ierr)
void ct_f_waitall WAITALL_ARGS;
void ct_f_waitall WAITALL_ARGS
{
    c_array a;
    int rc = c_array_make(&a, *count, requests, statuses);
    if (rc == MPI_SUCCESS) {
        rc = ct_shim_waitall(*count, a.req, a.st);
        if (written(rc))
            c_array_back(&a, *count, requests, statuses, *count);
        c_array_free(&a);
    }
    set_ierr(ierr, rc);
}
CT_FORTRAN_DONE_NAMES(ct_f_waitall, mpi_waitall, MPI_WAITALL, WAITALL_ARGS);

#define TESTALL_ARGS (F * count, F *requests, F *flag, F *statuses, F *ierr)
void ct_f_testall TESTALL_ARGS;
void ct_f_testall TESTALL_ARGS
{
    c_array a;
    int done = 0, rc = c_array_make(&a, *count, requests, statuses);
    if (rc == MPI_SUCCESS) {
        rc = ct_shim_testall(*count, a.req, &done, a.st);
        if (written(rc)) {
            *flag = done ? F_TRUE : 0;
            c_array_back(&a, *count, requests, statuses, done ? *count : 0);
        }
        c_array_free(&a);
    }
    set_ierr(ierr, rc);
}
CT_FORTRAN_DONE_NAMES(ct_f_testall, mpi_testall, MPI_TESTALL, TESTALL_ARGS);

/* An index from C (0-based) to Fortran (1-based). */
static F f_index(int i) { return i == MPI_UNDEFINED ? (F)MPI_UNDEFINED : (F)(i + 1); }

/* MPI_WAITANY and MPI_TESTANY (flag NULL: wait). */
static void any(F *count, F *requests, F *index, F *flag, F *status, F *ierr)
{
    c_array a;
    MPI_Status tmp, *s = c_status(status, &tmp);
    int i = MPI_UNDEFINED, done = 0, rc = c_array_make(&a, *count, requests, NULL);
    if (rc == MPI_SUCCESS) {
        rc = ct_shim_any(*count, a.req, &i, flag != NULL ? &done : NULL, s, flag == NULL);
        if (written(rc)) {
            c_array_back(&a, *count, requests, NULL, 0);
            *index = f_index(i);
            if (flag != NULL)
                *flag = done ? F_TRUE : 0;
            if ((flag == NULL || done) && i != MPI_UNDEFINED)
                f_status(s, status);
        }
        c_array_free(&a);
    }
    set_ierr(ierr, rc);
}

#define WAITANY_ARGS (F * count, F *requests, F *index, F *status, F *ierr)
void ct_f_waitany WAITANY_ARGS;
void ct_f_waitany WAITANY_ARGS { any(count, requests, index, NULL, status, ierr); }
CT_FORTRAN_DONE_NAMES(ct_f_waitany, mpi_waitany, MPI_WAITANY, WAITANY_ARGS);

#define TESTANY_ARGS (F * count, F *requests, F *index, F *flag, F *status, F *ierr)
void ct_f_testany TESTANY_ARGS;
void ct_f_testany TESTANY_ARGS { any(count, requests, index, flag, status, ierr); }
CT_FORTRAN_DONE_NAMES(ct_f_testany, mpi_testany, MPI_TESTANY, TESTANY_ARGS);

#define SOME_ARGS (F * incount, F *requests, F *outcount, F *indices, F *statuses, F *ierr)

/* MPI_WAITSOME and MPI_TESTSOME: indices is an int array (F is int). */
static void some(F *incount, F *requests, F *outcount, F *indices, F *statuses, F *ierr,
                 int block)
{
    c_array a;
    int n = MPI_UNDEFINED, rc = c_array_make(&a, *incount, requests, statuses);
    if (rc == MPI_SUCCESS) {
        rc = ct_shim_some(*incount, a.req, &n, indices, a.st, block);
        if (written(rc)) {
            c_array_back(&a, *incount, requests, statuses, n == MPI_UNDEFINED ? 0 : n);
            for (int k = 0; k < n && n != MPI_UNDEFINED; k++)
                indices[k] += 1;
            *outcount = (F)n;
        }
        c_array_free(&a);
    }
    set_ierr(ierr, rc);
}

void ct_f_waitsome SOME_ARGS;
void ct_f_waitsome SOME_ARGS { some(incount, requests, outcount, indices, statuses, ierr, 1); }
CT_FORTRAN_DONE_NAMES(ct_f_waitsome, mpi_waitsome, MPI_WAITSOME, SOME_ARGS);

void ct_f_testsome SOME_ARGS;
void ct_f_testsome SOME_ARGS { some(incount, requests, outcount, indices, statuses, ierr, 0); }
CT_FORTRAN_DONE_NAMES(ct_f_testsome, mpi_testsome, MPI_TESTSOME, SOME_ARGS);

#define ONE_REQUEST_ARGS (F * request, F *ierr)

void ct_f_start ONE_REQUEST_ARGS;
void ct_f_start ONE_REQUEST_ARGS
{
    MPI_Request r = PMPI_Request_f2c(*request);
    set_ierr(ierr, ct_shim_start(&r));
}
CT_FORTRAN_DONE_NAMES(ct_f_start, mpi_start, MPI_START, ONE_REQUEST_ARGS);

#define STARTALL_ARGS (F * count, F *requests, F *ierr)
void ct_f_startall STARTALL_ARGS;
void ct_f_startall STARTALL_ARGS
{
    c_array a;
    int rc = c_array_make(&a, *count, requests, NULL);
    if (rc == MPI_SUCCESS) {
        rc = ct_shim_startall(*count, a.req);
        c_array_free(&a);
    }
    set_ierr(ierr, rc);
}
CT_FORTRAN_DONE_NAMES(ct_f_startall, mpi_startall, MPI_STARTALL, STARTALL_ARGS);

void ct_f_request_free ONE_REQUEST_ARGS;
void ct_f_request_free ONE_REQUEST_ARGS
{
    MPI_Request r = PMPI_Request_f2c(*request);
    const int rc = ct_shim_request_free(&r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    set_ierr(ierr, rc);
}
CT_FORTRAN_DONE_NAMES(ct_f_request_free, mpi_request_free, MPI_REQUEST_FREE, ONE_REQUEST_ARGS);

void ct_f_cancel ONE_REQUEST_ARGS;
void ct_f_cancel ONE_REQUEST_ARGS
{
    MPI_Request r = PMPI_Request_f2c(*request);
    set_ierr(ierr, ct_shim_cancel(&r));
}
CT_FORTRAN_DONE_NAMES(ct_f_cancel, mpi_cancel, MPI_CANCEL, ONE_REQUEST_ARGS);
#endif

#if defined(CT_FORTRAN_OPENMPI) && !defined(CT_NO_INTERCEPT)

/* A Fortran buffer argument as C sees it: the sentinels become MPI_IN_PLACE
 * and MPI_BOTTOM, anything else is the address itself. */
static void *c_buf(void *p)
{
    ct_state *st = ct_state_get();
    if (is_sentinel(p, st->fortran.in_place))
        return MPI_IN_PLACE;
    if (is_sentinel(p, st->fortran.bottom))
        return MPI_BOTTOM;
    return p;
}

/* Open MPI's f2c answers NULL for a handle that names nothing (a bad
 * Fortran handle). Such a call goes straight to the library's own routine,
 * which reports MPI_ERR_COMM or MPI_ERR_TYPE through the error handler as
 * Open MPI's binding would; coltune never touches an invalid handle. */
static int handles_ok(MPI_Comm comm, MPI_Datatype stype, MPI_Datatype rtype)
{
    return comm != NULL && stype != NULL && rtype != NULL;
}

CT_FORTRAN_NAMES(ct_f_init, mpi_init, MPI_INIT, INIT_ARGS);
CT_FORTRAN_NAMES(ct_f_init_thread, mpi_init_thread, MPI_INIT_THREAD, INIT_THREAD_ARGS);
CT_FORTRAN_NAMES(ct_f_finalize, mpi_finalize, MPI_FINALIZE, FINALIZE_ARGS);

#define ALLTOALLV_ARGS                                                                  \
    (void *sendbuf, F *sendcounts, F *sdispls, F *sendtype, void *recvbuf, F *recvcounts, \
     F *rdispls, F *recvtype, F *comm, F *ierr)

void ct_f_alltoallv ALLTOALLV_ARGS;
void ct_f_alltoallv ALLTOALLV_ARGS
{
    const MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    if (!handles_ok(c, st, rt))
        set_ierr(ierr, PMPI_Alltoallv(c_buf(sendbuf), sendcounts, sdispls, st, c_buf(recvbuf),
                                      recvcounts, rdispls, rt, c));
    else
        set_ierr(ierr, ct_shim_alltoallv(c_buf(sendbuf), sendcounts, sdispls, st,
                                         c_buf(recvbuf), recvcounts, rdispls, rt, c));
}
CT_FORTRAN_NAMES(ct_f_alltoallv, mpi_alltoallv, MPI_ALLTOALLV, ALLTOALLV_ARGS);

#define ALLTOALL_ARGS                                                                   \
    (void *sendbuf, F *sendcount, F *sendtype, void *recvbuf, F *recvcount, F *recvtype, \
     F *comm, F *ierr)

void ct_f_alltoall ALLTOALL_ARGS;
void ct_f_alltoall ALLTOALL_ARGS
{
    const MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    if (!handles_ok(c, st, rt))
        set_ierr(ierr, PMPI_Alltoall(c_buf(sendbuf), *sendcount, st, c_buf(recvbuf), *recvcount,
                                     rt, c));
    else
        set_ierr(ierr, ct_shim_alltoall(c_buf(sendbuf), *sendcount, st, c_buf(recvbuf),
                                        *recvcount, rt, c));
}
CT_FORTRAN_NAMES(ct_f_alltoall, mpi_alltoall, MPI_ALLTOALL, ALLTOALL_ARGS);

void ct_f_allgather ALLTOALL_ARGS;
void ct_f_allgather ALLTOALL_ARGS
{
    const MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    if (!handles_ok(c, st, rt))
        set_ierr(ierr, PMPI_Allgather(c_buf(sendbuf), *sendcount, st, c_buf(recvbuf),
                                      *recvcount, rt, c));
    else
        set_ierr(ierr, ct_shim_allgather(c_buf(sendbuf), *sendcount, st, c_buf(recvbuf),
                                         *recvcount, rt, c));
}
CT_FORTRAN_NAMES(ct_f_allgather, mpi_allgather, MPI_ALLGATHER, ALLTOALL_ARGS);

#define ALLGATHERV_ARGS                                                                \
    (void *sendbuf, F *sendcount, F *sendtype, void *recvbuf, F *recvcounts, F *displs, \
     F *recvtype, F *comm, F *ierr)

void ct_f_allgatherv ALLGATHERV_ARGS;
void ct_f_allgatherv ALLGATHERV_ARGS
{
    const MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    if (!handles_ok(c, st, rt))
        set_ierr(ierr, PMPI_Allgatherv(c_buf(sendbuf), *sendcount, st, c_buf(recvbuf),
                                       recvcounts, displs, rt, c));
    else
        set_ierr(ierr, ct_shim_allgatherv(c_buf(sendbuf), *sendcount, st, c_buf(recvbuf),
                                          recvcounts, displs, rt, c));
}
CT_FORTRAN_NAMES(ct_f_allgatherv, mpi_allgatherv, MPI_ALLGATHERV, ALLGATHERV_ARGS);

void ct_f_neighbor_alltoallv ALLTOALLV_ARGS;
void ct_f_neighbor_alltoallv ALLTOALLV_ARGS
{
    const MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    if (!handles_ok(c, st, rt))
        set_ierr(ierr, PMPI_Neighbor_alltoallv(c_buf(sendbuf), sendcounts, sdispls, st,
                                               c_buf(recvbuf), recvcounts, rdispls, rt, c));
    else
        set_ierr(ierr, ct_shim_neighbor_alltoallv(c_buf(sendbuf), sendcounts, sdispls, st,
                                                  c_buf(recvbuf), recvcounts, rdispls, rt, c));
}
CT_FORTRAN_NAMES(ct_f_neighbor_alltoallv, mpi_neighbor_alltoallv, MPI_NEIGHBOR_ALLTOALLV,
                 ALLTOALLV_ARGS);

void ct_f_neighbor_alltoall ALLTOALL_ARGS;
void ct_f_neighbor_alltoall ALLTOALL_ARGS
{
    const MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    if (!handles_ok(c, st, rt))
        set_ierr(ierr, PMPI_Neighbor_alltoall(c_buf(sendbuf), *sendcount, st, c_buf(recvbuf),
                                              *recvcount, rt, c));
    else
        set_ierr(ierr, ct_shim_neighbor_alltoall(c_buf(sendbuf), *sendcount, st,
                                                 c_buf(recvbuf), *recvcount, rt, c));
}
CT_FORTRAN_NAMES(ct_f_neighbor_alltoall, mpi_neighbor_alltoall, MPI_NEIGHBOR_ALLTOALL,
                 ALLTOALL_ARGS);

#define IALLTOALLV_ARGS                                                                  \
    (void *sendbuf, F *sendcounts, F *sdispls, F *sendtype, void *recvbuf, F *recvcounts, \
     F *rdispls, F *recvtype, F *comm, F *request, F *ierr)

void ct_f_ialltoallv IALLTOALLV_ARGS;
void ct_f_ialltoallv IALLTOALLV_ARGS
{
    const MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc =
        handles_ok(c, st, rt)
            ? ct_shim_ialltoallv(c_buf(sendbuf), sendcounts, sdispls, st, c_buf(recvbuf),
                                 recvcounts, rdispls, rt, c, &r)
            : PMPI_Ialltoallv(c_buf(sendbuf), sendcounts, sdispls, st, c_buf(recvbuf),
                              recvcounts, rdispls, rt, c, &r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    set_ierr(ierr, rc);
}
CT_FORTRAN_NAMES(ct_f_ialltoallv, mpi_ialltoallv, MPI_IALLTOALLV, IALLTOALLV_ARGS);

#define IALLTOALL_ARGS                                                                   \
    (void *sendbuf, F *sendcount, F *sendtype, void *recvbuf, F *recvcount, F *recvtype, \
     F *comm, F *request, F *ierr)

void ct_f_ialltoall IALLTOALL_ARGS;
void ct_f_ialltoall IALLTOALL_ARGS
{
    const MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = handles_ok(c, st, rt)
                       ? ct_shim_ialltoall(c_buf(sendbuf), *sendcount, st, c_buf(recvbuf),
                                           *recvcount, rt, c, &r)
                       : PMPI_Ialltoall(c_buf(sendbuf), *sendcount, st, c_buf(recvbuf),
                                        *recvcount, rt, c, &r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    set_ierr(ierr, rc);
}
CT_FORTRAN_NAMES(ct_f_ialltoall, mpi_ialltoall, MPI_IALLTOALL, IALLTOALL_ARGS);

void ct_f_iallgather IALLTOALL_ARGS;
void ct_f_iallgather IALLTOALL_ARGS
{
    const MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = handles_ok(c, st, rt)
                       ? ct_shim_iallgather(c_buf(sendbuf), *sendcount, st, c_buf(recvbuf),
                                            *recvcount, rt, c, &r)
                       : PMPI_Iallgather(c_buf(sendbuf), *sendcount, st, c_buf(recvbuf),
                                         *recvcount, rt, c, &r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    set_ierr(ierr, rc);
}
CT_FORTRAN_NAMES(ct_f_iallgather, mpi_iallgather, MPI_IALLGATHER, IALLTOALL_ARGS);

void ct_f_ineighbor_alltoallv IALLTOALLV_ARGS;
void ct_f_ineighbor_alltoallv IALLTOALLV_ARGS
{
    const MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc =
        handles_ok(c, st, rt)
            ? ct_shim_ineighbor_alltoallv(c_buf(sendbuf), sendcounts, sdispls, st,
                                          c_buf(recvbuf), recvcounts, rdispls, rt, c, &r)
            : PMPI_Ineighbor_alltoallv(c_buf(sendbuf), sendcounts, sdispls, st, c_buf(recvbuf),
                                       recvcounts, rdispls, rt, c, &r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    set_ierr(ierr, rc);
}
CT_FORTRAN_NAMES(ct_f_ineighbor_alltoallv, mpi_ineighbor_alltoallv, MPI_INEIGHBOR_ALLTOALLV,
                 IALLTOALLV_ARGS);

void ct_f_ineighbor_alltoall IALLTOALL_ARGS;
void ct_f_ineighbor_alltoall IALLTOALL_ARGS
{
    const MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = handles_ok(c, st, rt)
                       ? ct_shim_ineighbor_alltoall(c_buf(sendbuf), *sendcount, st,
                                                    c_buf(recvbuf), *recvcount, rt, c, &r)
                       : PMPI_Ineighbor_alltoall(c_buf(sendbuf), *sendcount, st, c_buf(recvbuf),
                                                 *recvcount, rt, c, &r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    set_ierr(ierr, rc);
}
CT_FORTRAN_NAMES(ct_f_ineighbor_alltoall, mpi_ineighbor_alltoall, MPI_INEIGHBOR_ALLTOALL,
                 IALLTOALL_ARGS);

#define IALLGATHERV_ARGS                                                               \
    (void *sendbuf, F *sendcount, F *sendtype, void *recvbuf, F *recvcounts, F *displs, \
     F *recvtype, F *comm, F *request, F *ierr)

void ct_f_iallgatherv IALLGATHERV_ARGS;
void ct_f_iallgatherv IALLGATHERV_ARGS
{
    const MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = handles_ok(c, st, rt)
                       ? ct_shim_iallgatherv(c_buf(sendbuf), *sendcount, st, c_buf(recvbuf),
                                             recvcounts, displs, rt, c, &r)
                       : PMPI_Iallgatherv(c_buf(sendbuf), *sendcount, st, c_buf(recvbuf),
                                          recvcounts, displs, rt, c, &r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    set_ierr(ierr, rc);
}
CT_FORTRAN_NAMES(ct_f_iallgatherv, mpi_iallgatherv, MPI_IALLGATHERV, IALLGATHERV_ARGS);

#ifdef CT_HAVE_PCOLL_MPIX
/* The persistent calls of Open MPI's pcollreq extension (mpif-ext.h,
 * mpi_ext), whose bindings too call PMPIX_ directly: to coltune's C ones
 * (alltoallv_init.c, iallgather.c), and their requests to its completion
 * calls above. */
#define ALLTOALLV_INIT_ARGS                                                              \
    (void *sendbuf, F *sendcounts, F *sdispls, F *sendtype, void *recvbuf, F *recvcounts, \
     F *rdispls, F *recvtype, F *comm, F *info, F *request, F *ierr)
#define ALLTOALL_INIT_ARGS                                                               \
    (void *sendbuf, F *sendcount, F *sendtype, void *recvbuf, F *recvcount, F *recvtype, \
     F *comm, F *info, F *request, F *ierr)
#define ALLGATHERV_INIT_ARGS                                                           \
    (void *sendbuf, F *sendcount, F *sendtype, void *recvbuf, F *recvcounts, F *displs, \
     F *recvtype, F *comm, F *info, F *request, F *ierr)

/* Valid handles, the info too (else the library's routine reports it). */
static int init_ok(MPI_Comm comm, MPI_Datatype stype, MPI_Datatype rtype, MPI_Info info)
{
    return handles_ok(comm, stype, rtype) && info != NULL;
}

/* The request of a persistent init that returned rc, to Fortran. */
static void init_done(int rc, MPI_Request r, F *request, F *ierr)
{
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    set_ierr(ierr, rc);
}

void ct_f_alltoallv_init ALLTOALLV_INIT_ARGS;
void ct_f_alltoallv_init ALLTOALLV_INIT_ARGS
{
    const MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    const MPI_Info i = PMPI_Info_f2c(*info);
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = (init_ok(c, st, rt, i) ? MPIX_Alltoallv_init : PMPIX_Alltoallv_init)(
        c_buf(sendbuf), sendcounts, sdispls, st, c_buf(recvbuf), recvcounts, rdispls, rt, c,
        i, &r);
    init_done(rc, r, request, ierr);
}
CT_FORTRAN_NAMES(ct_f_alltoallv_init, mpix_alltoallv_init, MPIX_ALLTOALLV_INIT,
                 ALLTOALLV_INIT_ARGS);

void ct_f_alltoall_init ALLTOALL_INIT_ARGS;
void ct_f_alltoall_init ALLTOALL_INIT_ARGS
{
    const MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    const MPI_Info i = PMPI_Info_f2c(*info);
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = (init_ok(c, st, rt, i) ? MPIX_Alltoall_init : PMPIX_Alltoall_init)(
        c_buf(sendbuf), *sendcount, st, c_buf(recvbuf), *recvcount, rt, c,
        i, &r);
    init_done(rc, r, request, ierr);
}
CT_FORTRAN_NAMES(ct_f_alltoall_init, mpix_alltoall_init, MPIX_ALLTOALL_INIT, ALLTOALL_INIT_ARGS);

void ct_f_allgather_init ALLTOALL_INIT_ARGS;
void ct_f_allgather_init ALLTOALL_INIT_ARGS
{
    const MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    const MPI_Info i = PMPI_Info_f2c(*info);
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = (init_ok(c, st, rt, i) ? MPIX_Allgather_init : PMPIX_Allgather_init)(
        c_buf(sendbuf), *sendcount, st, c_buf(recvbuf), *recvcount, rt, c,
        i, &r);
    init_done(rc, r, request, ierr);
}
CT_FORTRAN_NAMES(ct_f_allgather_init, mpix_allgather_init, MPIX_ALLGATHER_INIT,
                 ALLTOALL_INIT_ARGS);

void ct_f_allgatherv_init ALLGATHERV_INIT_ARGS;
void ct_f_allgatherv_init ALLGATHERV_INIT_ARGS
{
    const MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    const MPI_Info i = PMPI_Info_f2c(*info);
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = (init_ok(c, st, rt, i) ? MPIX_Allgatherv_init : PMPIX_Allgatherv_init)(
        c_buf(sendbuf), *sendcount, st, c_buf(recvbuf), recvcounts, displs, rt, c,
        i, &r);
    init_done(rc, r, request, ierr);
}
CT_FORTRAN_NAMES(ct_f_allgatherv_init, mpix_allgatherv_init, MPIX_ALLGATHERV_INIT,
                 ALLGATHERV_INIT_ARGS);

void ct_f_neighbor_alltoallv_init ALLTOALLV_INIT_ARGS;
void ct_f_neighbor_alltoallv_init ALLTOALLV_INIT_ARGS
{
    const MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    const MPI_Info i = PMPI_Info_f2c(*info);
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc =
        (init_ok(c, st, rt, i) ? MPIX_Neighbor_alltoallv_init : PMPIX_Neighbor_alltoallv_init)(
            c_buf(sendbuf), sendcounts, sdispls, st, c_buf(recvbuf), recvcounts, rdispls, rt,
            c, i, &r);
    init_done(rc, r, request, ierr);
}
CT_FORTRAN_NAMES(ct_f_neighbor_alltoallv_init, mpix_neighbor_alltoallv_init,
                 MPIX_NEIGHBOR_ALLTOALLV_INIT, ALLTOALLV_INIT_ARGS);

void ct_f_neighbor_alltoall_init ALLTOALL_INIT_ARGS;
void ct_f_neighbor_alltoall_init ALLTOALL_INIT_ARGS
{
    const MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    const MPI_Comm c = PMPI_Comm_f2c(*comm);
    const MPI_Info i = PMPI_Info_f2c(*info);
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc =
        (init_ok(c, st, rt, i) ? MPIX_Neighbor_alltoall_init : PMPIX_Neighbor_alltoall_init)(
            c_buf(sendbuf), *sendcount, st, c_buf(recvbuf), *recvcount, rt, c, i, &r);
    init_done(rc, r, request, ierr);
}
CT_FORTRAN_NAMES(ct_f_neighbor_alltoall_init, mpix_neighbor_alltoall_init,
                 MPIX_NEIGHBOR_ALLTOALL_INIT, ALLTOALL_INIT_ARGS);
#endif /* CT_HAVE_PCOLL_MPIX */

const char *ct_shim_fortran_note(void)
{
    return "Fortran: mpif.h, use mpi and use mpi_f08 callers are served, the nonblocking "
           "calls and the completion calls too (Open MPI: coltune defines mpi_<call>_ and its "
           "manglings and mpi_<call>_f08_, and the persistent MPIX_ calls' likewise)";
}

#elif defined(CT_NO_INTERCEPT)

const char *ct_shim_fortran_note(void) { return "Fortran: not intercepted (no MPI_* symbols)"; }

#else /* MPICH and MPICH-derived libraries */

#if defined(CT_FORTRAN_MPICH)
CT_EXPORT void mpi_init_f08_ INIT_ARGS __attribute__((alias("ct_f_init")));
CT_EXPORT void mpi_init_thread_f08_ INIT_THREAD_ARGS __attribute__((alias("ct_f_init_thread")));
CT_EXPORT void mpi_finalize_f08_ FINALIZE_ARGS __attribute__((alias("ct_f_finalize")));
#endif

const char *ct_shim_fortran_note(void)
{
    return "Fortran: mpif.h, use mpi and use mpi_f08 callers are served (the MPI library's "
           "bindings call the C MPI_* entry points; coltune defines mpi_f08's completion "
           "calls, which call PMPI_ directly)";
}

#endif
