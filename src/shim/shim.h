/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shim.h - what the interception files share. src/shim is the only place
 * that defines MPI_* symbols and forwards the user's calls to PMPI_*.
 */
#ifndef CT_SHIM_H
#define CT_SHIM_H

#include "algorithms.h"

/* Initialises coltune if MPI_Init was never seen (sessions, or a call made
 * before anything else) and says whether coltune should serve a call on
 * comm: not when disabled, finalizing, or comm is MPI_COMM_NULL. */
int ct_shim_active(MPI_Comm comm);

/* ct_shim_active(comm) and comm is an intra-communicator: the calls coltune
 * serves on intra-communicators (Alltoall, Alltoallv) go to the driver.
 * Not when the rules leave every call of coll on comm to the MPI library
 * (ct_ctx_forwards): the pass-through then costs two loads and a compare. */
int ct_shim_serves_intra(MPI_Comm comm, ct_coll coll);
/* The same without the pass-through's shortcut (ct_ctx_forwards, whose bit
 * is the nonblocking calls' own): the persistent forms, which rules may
 * decide apart from them (persistent=1). inter_wanted: 1 for an
 * intercommunicator, 0 for an intra-communicator. */
int ct_shim_serves_kind(MPI_Comm comm, int inter_wanted);

/* Hands a failure to the error handler of the user's communicator, as the
 * MPI library itself would, and returns rc. */
int ct_shim_return(MPI_Comm comm, int rc);

/*
 * The description of a call (algorithms.h) from each entry point's
 * arguments, and the forwarders that run that very call with the MPI
 * library's routine (the description's forward: the int or the large-count
 * form). The direct API (src/api.c) and the Fortran bindings use the same ones.
 */
static inline ct_alltoallv_args ct_shim_describe_alltoallv(
    const void *sendbuf, ct_vec sendcounts, ct_vec sdispls, MPI_Datatype sendtype, void *recvbuf,
    ct_vec recvcounts, ct_vec rdispls, MPI_Datatype recvtype, MPI_Comm comm,
    ct_alltoallv_forward_fn forward)
{
    return (ct_alltoallv_args){.coll = CT_COLL_ALLTOALLV,
                               .sendbuf = sendbuf,
                               .sendcounts = sendcounts,
                               .sdispls = sdispls,
                               .sendtype = sendtype,
                               .recvbuf = recvbuf,
                               .recvcounts = recvcounts,
                               .rdispls = rdispls,
                               .recvtype = recvtype,
                               .comm = comm,
                               .forward = forward,
                               .msg_size = -1,
                               .request = NULL,
                               .persistent = 0,
                               .info = MPI_INFO_NULL};
}

/* MPI_Alltoall: an Alltoallv of uniform blocks (alltoall.c). */
static inline ct_alltoallv_args ct_shim_describe_alltoall(
    const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, ct_alltoallv_forward_fn forward)
{
    ct_alltoallv_args a = ct_shim_describe_alltoallv(
        sendbuf, ct_vec_linear(sendcount, 0), ct_vec_linear(0, sendcount), sendtype, recvbuf,
        ct_vec_linear(recvcount, 0), ct_vec_linear(0, recvcount), recvtype, comm, forward);
    a.coll = CT_COLL_ALLTOALL;
    return a;
}

int ct_shim_fwd_alltoallv(const ct_alltoallv_args *a);
int ct_shim_fwd_alltoall(const ct_alltoallv_args *a);
int ct_shim_fwd_ialltoallv(const ct_alltoallv_args *a);
int ct_shim_fwd_ialltoall(const ct_alltoallv_args *a);
#if defined(CT_HAVE_PCOLL_MPI4) || defined(CT_HAVE_PCOLL_MPIX)
/* The persistent forms (alltoallv_init.c): MPI_Alltoallv_init and
 * MPI_Alltoall_init, or Open MPI's MPIX_ ones. */
#define CT_HAVE_PCOLL 1
/* The persistent entry points under the library's names, and its PMPI_ ones. */
#ifdef CT_HAVE_PCOLL_MPIX
#include <mpi-ext.h>
#define CT_INIT(call) MPIX_##call##_init
#define CT_PINIT(call) PMPIX_##call##_init
#else
#define CT_INIT(call) MPI_##call##_init
#define CT_PINIT(call) PMPI_##call##_init
#endif
int ct_shim_fwd_alltoallv_init(const ct_alltoallv_args *a);
int ct_shim_fwd_alltoall_init(const ct_alltoallv_args *a);
#endif

/*
 * What MPI_Alltoallv, MPI_Alltoall, MPI_Allgather and MPI_Allgatherv do with
 * C arguments: serve the call or forward it. The C symbols are these, and
 * the Fortran bindings (fortran.c) call them once their arguments are C.
 */
int ct_shim_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                      MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                      const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int ct_shim_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int ct_shim_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int ct_shim_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int displs[],
                       MPI_Datatype recvtype, MPI_Comm comm);

/* MPI_Ialltoallv and MPI_Ialltoall with C arguments (ialltoallv.c). */
int ct_shim_ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Request *request);
int ct_shim_ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
/* MPI_Iallgather and MPI_Iallgatherv with C arguments (iallgather.c). */
int ct_shim_iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Request *request);
int ct_shim_iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[], const int displs[],
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);

/* The completion calls with C arguments (request.c): MPI_Wait, MPI_Test,
 * MPI_Request_get_status, MPI_Waitall, MPI_Testall, MPI_Waitany and
 * MPI_Testany (ct_shim_any; block 1 waits), MPI_Waitsome and MPI_Testsome
 * (ct_shim_some), MPI_Start, MPI_Startall, MPI_Request_free, MPI_Cancel. */
int ct_shim_wait(MPI_Request *req, MPI_Status *status);
int ct_shim_test(MPI_Request *req, int *flag, MPI_Status *status);
int ct_shim_get_status(MPI_Request req, int *flag, MPI_Status *status);
int ct_shim_waitall(int count, MPI_Request reqs[], MPI_Status statuses[]);
int ct_shim_testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[]);
int ct_shim_any(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status,
                int block);
int ct_shim_some(int count, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[], int block);
int ct_shim_start(MPI_Request *req);
int ct_shim_startall(int count, MPI_Request reqs[]);
int ct_shim_request_free(MPI_Request *req);
int ct_shim_cancel(MPI_Request *req);

/* The one description of an intercommunicator Allgather(v) call, every
 * field named (see ct_alltoallv_args): the blocking form's; the nonblocking
 * and persistent entry points set request, persistent and info. */
static inline ct_allgather_args ct_shim_describe_allgather(
    const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
    int (*forward)(const ct_allgather_args *))
{
    return (ct_allgather_args){.sendbuf = sendbuf, .sendcount = sendcount,
                               .sendtype = sendtype, .recvbuf = recvbuf,
                               .recvcount = recvcount, .recvtype = recvtype, .comm = comm,
                               .forward = forward, .request = NULL, .persistent = 0,
                               .info = MPI_INFO_NULL};
}

static inline ct_allgatherv_args ct_shim_describe_allgatherv(
    const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
    ct_vec recvcounts, ct_vec displs, MPI_Datatype recvtype, MPI_Comm comm,
    int (*forward)(const ct_allgatherv_args *))
{
    return (ct_allgatherv_args){.sendbuf = sendbuf, .sendcount = sendcount,
                                .sendtype = sendtype, .recvbuf = recvbuf,
                                .recvcounts = recvcounts, .displs = displs,
                                .recvtype = recvtype, .comm = comm, .forward = forward,
                                .request = NULL, .persistent = 0, .info = MPI_INFO_NULL};
}

/* The intercommunicator Allgather(v) (allgather.c): the forwarders, and
 * whether a call goes to the driver (an intercommunicator, no MPI_IN_PLACE;
 * the driver checks the rest of the arguments). */
int ct_shim_fwd_allgather(const ct_allgather_args *a);
int ct_shim_fwd_allgatherv(const ct_allgatherv_args *a);
int ct_shim_serves_inter(const void *sendbuf, MPI_Comm comm, ct_coll coll);
/* Their nonblocking and persistent forms (iallgather.c). */
int ct_shim_fwd_iallgather(const ct_allgather_args *a);
int ct_shim_fwd_iallgatherv(const ct_allgatherv_args *a);
#ifdef CT_HAVE_PCOLL
int ct_shim_fwd_allgather_init(const ct_allgather_args *a);
int ct_shim_fwd_allgatherv_init(const ct_allgatherv_args *a);
#endif

#ifdef CT_HAVE_LARGE_COUNT
/* The forwarders of the MPI-4 large-count forms (MPI_Alltoallv_c, ...). */
int ct_shim_fwd_alltoallv_c(const ct_alltoallv_args *a);
int ct_shim_fwd_alltoall_c(const ct_alltoallv_args *a);
int ct_shim_fwd_ialltoallv_c(const ct_alltoallv_args *a);
int ct_shim_fwd_ialltoall_c(const ct_alltoallv_args *a);
int ct_shim_fwd_allgather_c(const ct_allgather_args *a);
int ct_shim_fwd_allgatherv_c(const ct_allgatherv_args *a);
int ct_shim_fwd_iallgather_c(const ct_allgather_args *a);
int ct_shim_fwd_iallgatherv_c(const ct_allgatherv_args *a);
#endif

/* The one description of an MPI_Neighbor_alltoall(v) call (neighbor.c),
 * every field named (see ct_alltoallv_args): the blocking form's; the
 * nonblocking and persistent entry points (ineighbor.c) set coll, request,
 * persistent and info. */
static inline ct_neighbor_args ct_shim_describe_neighbor(
    ct_coll coll, const void *sendbuf, ct_vec sendcounts, ct_vec sdispls, MPI_Datatype sendtype,
    void *recvbuf, ct_vec recvcounts, ct_vec rdispls, MPI_Datatype recvtype, MPI_Comm comm,
    ct_neighbor_forward_fn forward)
{
    return (ct_neighbor_args){.coll = coll,
                              .sendbuf = sendbuf,
                              .sendcounts = sendcounts,
                              .sdispls = sdispls,
                              .sendtype = sendtype,
                              .recvbuf = recvbuf,
                              .recvcounts = recvcounts,
                              .rdispls = rdispls,
                              .recvtype = recvtype,
                              .comm = comm,
                              .forward = forward,
                              .msg_size = -1,
                              .graph = NULL,
                              .request = NULL,
                              .persistent = 0,
                              .info = MPI_INFO_NULL};
}

/* MPI_Neighbor_alltoallv and MPI_Neighbor_alltoall (neighbor.c): the
 * forwarders, and what the C symbols and the Fortran bindings call. */
int ct_shim_fwd_neighbor_alltoallv(const ct_neighbor_args *a);
int ct_shim_fwd_neighbor_alltoall(const ct_neighbor_args *a);
#ifdef CT_HAVE_LARGE_COUNT
int ct_shim_fwd_neighbor_alltoallv_c(const ct_neighbor_args *a);
int ct_shim_fwd_neighbor_alltoall_c(const ct_neighbor_args *a);
#endif
int ct_shim_neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int ct_shim_neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm);
/* Their nonblocking and persistent forms (ineighbor.c). */
int ct_shim_fwd_ineighbor_alltoallv(const ct_neighbor_args *a);
int ct_shim_fwd_ineighbor_alltoall(const ct_neighbor_args *a);
#ifdef CT_HAVE_LARGE_COUNT
int ct_shim_fwd_ineighbor_alltoallv_c(const ct_neighbor_args *a);
int ct_shim_fwd_ineighbor_alltoall_c(const ct_neighbor_args *a);
#endif
#ifdef CT_HAVE_PCOLL
int ct_shim_fwd_neighbor_alltoallv_init(const ct_neighbor_args *a);
int ct_shim_fwd_neighbor_alltoall_init(const ct_neighbor_args *a);
#endif
int ct_shim_ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                const int recvcounts[], const int rdispls[],
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int ct_shim_ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request *request);

/* What MPI_Init, MPI_Init_thread and MPI_Finalize do (init.c): read the
 * configuration once, report statistics and release coltune's state. */
int ct_shim_init(int *argc, char ***argv);
int ct_shim_init_thread(int *argc, char ***argv, int required, int *provided);
int ct_shim_finalize(void);

/* One line saying how the Fortran bindings reach coltune under the MPI
 * library it was built for (fortran.c; logged at start-up when verbose). */
const char *ct_shim_fortran_note(void);

#endif
