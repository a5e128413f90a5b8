/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * neighbor.c - the MPI_Neighbor_alltoallv and MPI_Neighbor_alltoall entry
 * points, and their MPI-4 large-count forms where the MPI library has them
 * (CT_HAVE_LARGE_COUNT).
 *
 * The description is the Alltoall(v)'s, per neighbour: block j of the send
 * side for the j-th destination, of the receive side from the j-th source
 * (src/neighbor/nbr_graph.h); MPI_Neighbor_alltoall's uniform blocks are
 * linear vectors, as MPI_Alltoall's. Communicators without a topology and
 * intercommunicators go to the library, which reports the error.
 */
#include "neighbor/neighbor.h"
#include "shim/shim.h"

int ct_shim_fwd_neighbor_alltoallv(const ct_neighbor_args *a)
{
    return PMPI_Neighbor_alltoallv(a->sendbuf, a->sendcounts.v, a->sdispls.v, a->sendtype,
                                   a->recvbuf, a->recvcounts.v, a->rdispls.v, a->recvtype,
                                   a->comm);
}

int ct_shim_fwd_neighbor_alltoall(const ct_neighbor_args *a)
{
    return PMPI_Neighbor_alltoall(a->sendbuf, (int)a->sendcounts.base, a->sendtype, a->recvbuf,
                                  (int)a->recvcounts.base, a->recvtype, a->comm);
}

/* Either collective, either form: served or forwarded. */
static inline int serve_neighbor(const ct_neighbor_args *a)
{
    const ct_neighbor_forward_fn forward = a->forward;
    if (!ct_shim_serves_intra(a->comm, a->coll))
        return forward(a);
    return ct_shim_return(a->comm, ct_neighbor_dispatch(a, NULL));
}

int ct_shim_neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    const ct_neighbor_args a = ct_shim_describe_neighbor(
        CT_COLL_NEIGHBOR_ALLTOALLV, sendbuf, ct_vec_int(sendcounts), ct_vec_int(sdispls),
        sendtype, recvbuf, ct_vec_int(recvcounts), ct_vec_int(rdispls), recvtype, comm,
        ct_shim_fwd_neighbor_alltoallv);
    return serve_neighbor(&a);
}

int ct_shim_neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    const ct_neighbor_args a = ct_shim_describe_neighbor(
        CT_COLL_NEIGHBOR_ALLTOALL, sendbuf, ct_vec_linear(sendcount, 0),
        ct_vec_linear(0, sendcount), sendtype, recvbuf, ct_vec_linear(recvcount, 0),
        ct_vec_linear(0, recvcount), recvtype, comm, ct_shim_fwd_neighbor_alltoall);
    return serve_neighbor(&a);
}

#ifndef CT_NO_INTERCEPT /* see init.c */
CT_EXPORT int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                     const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                     const int recvcounts[], const int rdispls[],
                                     MPI_Datatype recvtype, MPI_Comm comm)
{
    return ct_shim_neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                      recvcounts, rdispls, recvtype, comm);
}

CT_EXPORT int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm)
{
    return ct_shim_neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                     comm);
}
#endif

#ifdef CT_HAVE_LARGE_COUNT
int ct_shim_fwd_neighbor_alltoallv_c(const ct_neighbor_args *a)
{
    return PMPI_Neighbor_alltoallv_c(a->sendbuf, a->sendcounts.v, a->sdispls.v, a->sendtype,
                                     a->recvbuf, a->recvcounts.v, a->rdispls.v, a->recvtype,
                                     a->comm);
}

int ct_shim_fwd_neighbor_alltoall_c(const ct_neighbor_args *a)
{
    return PMPI_Neighbor_alltoall_c(a->sendbuf, a->sendcounts.base, a->sendtype, a->recvbuf,
                                    a->recvcounts.base, a->recvtype, a->comm);
}

#ifndef CT_NO_INTERCEPT
CT_EXPORT int MPI_Neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                                       const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                       void *recvbuf, const MPI_Count recvcounts[],
                                       const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                       MPI_Comm comm)
{
    const ct_neighbor_args a = ct_shim_describe_neighbor(
        CT_COLL_NEIGHBOR_ALLTOALLV, sendbuf, ct_vec_count(sendcounts), ct_vec_aint(sdispls),
        sendtype, recvbuf, ct_vec_count(recvcounts), ct_vec_aint(rdispls), recvtype, comm,
        ct_shim_fwd_neighbor_alltoallv_c);
    return serve_neighbor(&a);
}

CT_EXPORT int MPI_Neighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount,
                                      MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                      MPI_Datatype recvtype, MPI_Comm comm)
{
    const ct_neighbor_args a = ct_shim_describe_neighbor(
        CT_COLL_NEIGHBOR_ALLTOALL, sendbuf, ct_vec_linear(sendcount, 0),
        ct_vec_linear(0, sendcount), sendtype, recvbuf, ct_vec_linear(recvcount, 0),
        ct_vec_linear(0, recvcount), recvtype, comm, ct_shim_fwd_neighbor_alltoall_c);
    return serve_neighbor(&a);
}
#endif
#endif /* CT_HAVE_LARGE_COUNT */
