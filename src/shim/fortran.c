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
 * Same for MPI_ALLTOALL, MPI_ALLGATHER and MPI_ALLGATHERV, and for MPI_INIT,
 * MPI_INIT_THREAD and MPI_FINALIZE, so a Fortran program gets the start-up
 * messages, the statistics at the end and its contexts released before
 * PMPI_Finalize exactly as a C program does.
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

#if defined(CT_FORTRAN_OPENMPI) && !defined(CT_NO_INTERCEPT)

#include <dlfcn.h>

static void lookup_sentinels(void)
{
    static const char *const in_place[4] = {"mpi_fortran_in_place_", "mpi_fortran_in_place__",
                                            "mpi_fortran_in_place", "MPI_FORTRAN_IN_PLACE"};
    static const char *const bottom[4] = {"mpi_fortran_bottom_", "mpi_fortran_bottom__",
                                          "mpi_fortran_bottom", "MPI_FORTRAN_BOTTOM"};
    ct_state *st = ct_state_get();
    for (int i = 0; i < 4; i++) {
        st->fortran.in_place[i] = dlsym(RTLD_DEFAULT, in_place[i]);
        st->fortran.bottom[i] = dlsym(RTLD_DEFAULT, bottom[i]);
    }
}

/* A Fortran buffer argument as C sees it: the sentinels become MPI_IN_PLACE
 * and MPI_BOTTOM, anything else is the address itself. */
static void *c_buf(void *p)
{
    ct_state *st = ct_state_get();
    pthread_once(&st->fortran.once, lookup_sentinels);
    for (int i = 0; i < 4; i++) {
        if (p != NULL && p == st->fortran.in_place[i])
            return MPI_IN_PLACE;
        if (p != NULL && p == st->fortran.bottom[i])
            return MPI_BOTTOM;
    }
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

/* The four manglings of mpif.h / use mpi plus the mpi_f08 name, all bound
 * to one function. */
#define CT_FORTRAN_NAMES(fn, lower, upper, args)                                     \
    CT_EXPORT void lower##_ args __attribute__((alias(#fn)));                        \
    CT_EXPORT void lower##__ args __attribute__((alias(#fn)));                       \
    CT_EXPORT void lower args __attribute__((alias(#fn)));                           \
    CT_EXPORT void upper args __attribute__((alias(#fn)));                           \
    CT_EXPORT void lower##_f08_ args __attribute__((alias(#fn)))

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

const char *ct_shim_fortran_note(void)
{
    return "Fortran: mpif.h, use mpi and use mpi_f08 callers are served (Open MPI: coltune "
           "defines mpi_<call>_ and its manglings and mpi_<call>_f08_)";
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
           "bindings call the C MPI_* entry points)";
}

#endif
