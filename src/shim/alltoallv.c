/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv.c - the MPI_Alltoallv entry point (int counts and displacements).
 *
 * Intra-communicators go through the decision (rules, environment) and the
 * chosen algorithm; intercommunicators are forwarded to PMPI_Alltoallv.
 */
#include "alltoallv/alltoallv.h"
#include "shim/shim.h"

int ct_shim_fwd_alltoallv(const ct_alltoallv_args *a)
{
    return PMPI_Alltoallv(a->sendbuf, a->sendcounts.v, a->sdispls.v, a->sendtype, a->recvbuf,
                          a->recvcounts.v, a->rdispls.v, a->recvtype, a->comm);
}

ct_alltoallv_args ct_shim_describe_alltoallv(const void *sendbuf, const int sendcounts[],
                                             const int sdispls[], MPI_Datatype sendtype,
                                             void *recvbuf, const int recvcounts[],
                                             const int rdispls[], MPI_Datatype recvtype,
                                             MPI_Comm comm)
{
    return (ct_alltoallv_args){.coll = CT_COLL_ALLTOALLV,
                               .sendbuf = sendbuf,
                               .sendcounts = ct_vec_int(sendcounts),
                               .sdispls = ct_vec_int(sdispls),
                               .sendtype = sendtype,
                               .recvbuf = recvbuf,
                               .recvcounts = ct_vec_int(recvcounts),
                               .rdispls = ct_vec_int(rdispls),
                               .recvtype = recvtype,
                               .comm = comm,
                               .forward = ct_shim_fwd_alltoallv,
                               .msg_size = -1};
}

int ct_shim_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                      MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                      const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    ct_alltoallv_args a = ct_shim_describe_alltoallv(sendbuf, sendcounts, sdispls, sendtype,
                                                     recvbuf, recvcounts, rdispls, recvtype,
                                                     comm);
    if (!ct_shim_serves_intra(comm, CT_COLL_ALLTOALLV))
        return ct_shim_fwd_alltoallv(&a);
    return ct_shim_return(comm, ct_alltoallv_dispatch(&a, NULL));
}

#ifndef CT_NO_INTERCEPT /* see init.c */
CT_EXPORT int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return ct_shim_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                             rdispls, recvtype, comm);
}
#endif
