/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ineighbor.c - the nonblocking MPI_Ineighbor_alltoallv and
 * MPI_Ineighbor_alltoall, their MPI-4 large-count forms where the MPI
 * library has them (CT_HAVE_LARGE_COUNT), and the persistent
 * MPI_Neighbor_alltoallv_init and MPI_Neighbor_alltoall_init (MPICH 4) or
 * Open MPI 4.1's MPIX_ ones (CT_HAVE_PCOLL).
 *
 * The same description as the blocking calls (neighbor.c), with the
 * request: rule collectives ineighbor_alltoallv / ineighbor_alltoall,
 * variables COLTUNE_INEIGHBOR_ALLTOALLV / COLTUNE_INEIGHBOR_ALLTOALL; a
 * persistent call is decided once, as the nonblocking form (condition
 * persistent=1). A served call returns one of coltune's requests
 * (core/request.h); pmpi forwards this very call.
 */
#include "neighbor/neighbor.h"
#include "shim/shim.h"

int ct_shim_fwd_ineighbor_alltoallv(const ct_neighbor_args *a)
{
    return PMPI_Ineighbor_alltoallv(a->sendbuf, a->sendcounts.v, a->sdispls.v, a->sendtype,
                                    a->recvbuf, a->recvcounts.v, a->rdispls.v, a->recvtype,
                                    a->comm, a->request);
}

int ct_shim_fwd_ineighbor_alltoall(const ct_neighbor_args *a)
{
    return PMPI_Ineighbor_alltoall(a->sendbuf, (int)a->sendcounts.base, a->sendtype,
                                   a->recvbuf, (int)a->recvcounts.base, a->recvtype, a->comm,
                                   a->request);
}

/* Either collective, any form: served or forwarded. The persistent forms
 * without the pass-through's shortcut, whose bit is the nonblocking calls'
 * (rules may decide them apart: persistent=1). */
static int serve(ct_neighbor_args *a, ct_coll coll, MPI_Request *request)
{
    a->coll = coll;
    a->request = request;
    if (a->persistent ? !ct_shim_serves_kind(a->comm, 0) : !ct_shim_serves_intra(a->comm, coll))
        return a->forward(a);
    return ct_shim_return(a->comm, ct_ineighbor_dispatch(a, NULL));
}

/* The description of an Ineighbor_alltoall: uniform blocks as linear vectors. */
static ct_neighbor_args describe_uniform(const void *sendbuf, MPI_Count sendcount,
                                         MPI_Datatype sendtype, void *recvbuf,
                                         MPI_Count recvcount, MPI_Datatype recvtype,
                                         MPI_Comm comm, ct_neighbor_forward_fn forward)
{
    return ct_shim_describe_neighbor(CT_COLL_INEIGHBOR_ALLTOALL, sendbuf,
                                     ct_vec_linear(sendcount, 0), ct_vec_linear(0, sendcount),
                                     sendtype, recvbuf, ct_vec_linear(recvcount, 0),
                                     ct_vec_linear(0, recvcount), recvtype, comm, forward);
}

int ct_shim_ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                const int recvcounts[], const int rdispls[],
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    ct_neighbor_args a = ct_shim_describe_neighbor(
        CT_COLL_INEIGHBOR_ALLTOALLV, sendbuf, ct_vec_int(sendcounts), ct_vec_int(sdispls),
        sendtype, recvbuf, ct_vec_int(recvcounts), ct_vec_int(rdispls), recvtype, comm,
        ct_shim_fwd_ineighbor_alltoallv);
    return serve(&a, CT_COLL_INEIGHBOR_ALLTOALLV, request);
}

int ct_shim_ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request *request)
{
    ct_neighbor_args a = describe_uniform(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                          recvtype, comm, ct_shim_fwd_ineighbor_alltoall);
    return serve(&a, CT_COLL_INEIGHBOR_ALLTOALL, request);
}

#ifndef CT_NO_INTERCEPT /* see init.c */
CT_EXPORT int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                      const int sdispls[], MPI_Datatype sendtype,
                                      void *recvbuf, const int recvcounts[],
                                      const int rdispls[], MPI_Datatype recvtype,
                                      MPI_Comm comm, MPI_Request *request)
{
    return ct_shim_ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                       recvcounts, rdispls, recvtype, comm, request);
}

CT_EXPORT int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                     MPI_Comm comm, MPI_Request *request)
{
    return ct_shim_ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                      recvtype, comm, request);
}
#endif

#ifdef CT_HAVE_LARGE_COUNT
int ct_shim_fwd_ineighbor_alltoallv_c(const ct_neighbor_args *a)
{
    return PMPI_Ineighbor_alltoallv_c(a->sendbuf, a->sendcounts.v, a->sdispls.v, a->sendtype,
                                      a->recvbuf, a->recvcounts.v, a->rdispls.v, a->recvtype,
                                      a->comm, a->request);
}

int ct_shim_fwd_ineighbor_alltoall_c(const ct_neighbor_args *a)
{
    return PMPI_Ineighbor_alltoall_c(a->sendbuf, a->sendcounts.base, a->sendtype, a->recvbuf,
                                     a->recvcounts.base, a->recvtype, a->comm, a->request);
}

#ifndef CT_NO_INTERCEPT
CT_EXPORT int MPI_Ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                                        const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                        void *recvbuf, const MPI_Count recvcounts[],
                                        const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                        MPI_Comm comm, MPI_Request *request)
{
    ct_neighbor_args a = ct_shim_describe_neighbor(
        CT_COLL_INEIGHBOR_ALLTOALLV, sendbuf, ct_vec_count(sendcounts), ct_vec_aint(sdispls),
        sendtype, recvbuf, ct_vec_count(recvcounts), ct_vec_aint(rdispls), recvtype, comm,
        ct_shim_fwd_ineighbor_alltoallv_c);
    return serve(&a, CT_COLL_INEIGHBOR_ALLTOALLV, request);
}

CT_EXPORT int MPI_Ineighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount,
                                       MPI_Datatype sendtype, void *recvbuf,
                                       MPI_Count recvcount, MPI_Datatype recvtype,
                                       MPI_Comm comm, MPI_Request *request)
{
    ct_neighbor_args a = describe_uniform(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                          recvtype, comm, ct_shim_fwd_ineighbor_alltoall_c);
    return serve(&a, CT_COLL_INEIGHBOR_ALLTOALL, request);
}
#endif
#endif /* CT_HAVE_LARGE_COUNT */

#ifdef CT_HAVE_PCOLL
int ct_shim_fwd_neighbor_alltoallv_init(const ct_neighbor_args *a)
{
    return CT_PINIT(Neighbor_alltoallv)(a->sendbuf, a->sendcounts.v, a->sdispls.v,
                                        a->sendtype, a->recvbuf, a->recvcounts.v,
                                        a->rdispls.v, a->recvtype, a->comm, a->info,
                                        a->request);
}

int ct_shim_fwd_neighbor_alltoall_init(const ct_neighbor_args *a)
{
    return CT_PINIT(Neighbor_alltoall)(a->sendbuf, (int)a->sendcounts.base, a->sendtype,
                                       a->recvbuf, (int)a->recvcounts.base, a->recvtype,
                                       a->comm, a->info, a->request);
}

#ifndef CT_NO_INTERCEPT
CT_EXPORT int CT_INIT(Neighbor_alltoallv)(const void *sendbuf, const int sendcounts[],
                                          const int sdispls[], MPI_Datatype sendtype,
                                          void *recvbuf, const int recvcounts[],
                                          const int rdispls[], MPI_Datatype recvtype,
                                          MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    ct_neighbor_args a = ct_shim_describe_neighbor(
        CT_COLL_INEIGHBOR_ALLTOALLV, sendbuf, ct_vec_int(sendcounts), ct_vec_int(sdispls),
        sendtype, recvbuf, ct_vec_int(recvcounts), ct_vec_int(rdispls), recvtype, comm,
        ct_shim_fwd_neighbor_alltoallv_init);
    a.persistent = 1;
    a.info = info;
    return serve(&a, CT_COLL_INEIGHBOR_ALLTOALLV, request);
}

CT_EXPORT int CT_INIT(Neighbor_alltoall)(const void *sendbuf, int sendcount,
                                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                         MPI_Request *request)
{
    ct_neighbor_args a = describe_uniform(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                          recvtype, comm, ct_shim_fwd_neighbor_alltoall_init);
    a.persistent = 1;
    a.info = info;
    return serve(&a, CT_COLL_INEIGHBOR_ALLTOALL, request);
}
#endif /* CT_NO_INTERCEPT */
#endif /* CT_HAVE_PCOLL */
