/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_c.c - the MPI-4 large-count entry point MPI_Alltoallv_c
 * (MPI_Count counts, MPI_Aint displacements), where the MPI library has it
 * (configure defines CT_HAVE_LARGE_COUNT: MPICH 4, not Open MPI 4.1).
 *
 * The description keeps the caller's arrays as they are (ct_vec_count,
 * ct_vec_aint): the decision and every algorithm read them through
 * ct_vec_at, and point-to-point calls switch to their _c forms when a count
 * needs it (core/datatype.h). Intercommunicators are forwarded to
 * PMPI_Alltoallv_c.
 */
#include "alltoallv/alltoallv.h"
#include "shim/shim.h"

#ifdef CT_HAVE_LARGE_COUNT

static int fwd_alltoallv_c(const ct_alltoallv_args *a)
{
    return PMPI_Alltoallv_c(a->sendbuf, a->sendcounts.v, a->sdispls.v, a->sendtype, a->recvbuf,
                            a->recvcounts.v, a->rdispls.v, a->recvtype, a->comm);
}

ct_alltoallv_args ct_shim_describe_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                                               const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                               void *recvbuf, const MPI_Count recvcounts[],
                                               const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                               MPI_Comm comm)
{
    return (ct_alltoallv_args){.coll = CT_COLL_ALLTOALLV,
                           .sendbuf = sendbuf,
                           .sendcounts = ct_vec_count(sendcounts),
                           .sdispls = ct_vec_aint(sdispls),
                           .sendtype = sendtype,
                           .recvbuf = recvbuf,
                           .recvcounts = ct_vec_count(recvcounts),
                           .rdispls = ct_vec_aint(rdispls),
                           .recvtype = recvtype,
                           .comm = comm,
                           .forward = fwd_alltoallv_c,
                           .msg_size = -1};
}

int ct_shim_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                        const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                        const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                        MPI_Datatype recvtype, MPI_Comm comm)
{
    ct_alltoallv_args a = ct_shim_describe_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype,
                                                       recvbuf, recvcounts, rdispls, recvtype,
                                                       comm);
    if (!ct_shim_serves_intra(comm, CT_COLL_ALLTOALLV))
        return fwd_alltoallv_c(&a);
    return ct_shim_return(comm, ct_alltoallv_dispatch(&a, NULL));
}

#ifndef CT_NO_INTERCEPT /* see init.c */
CT_EXPORT int MPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm)
{
    return ct_shim_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                               rdispls, recvtype, comm);
}
#endif

#endif /* CT_HAVE_LARGE_COUNT */
