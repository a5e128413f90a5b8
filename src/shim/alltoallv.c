/*
 * alltoallv.c - interception of MPI_Alltoallv.
 *
 * Intra-communicators go through the decision (rules, environment) and the
 * chosen algorithm; intercommunicators are forwarded to PMPI_Alltoallv.
 */
#include "alltoallv/alltoallv.h"
#include "shim/shim.h"

int ct_alltoallv_pmpi(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params)
{
    (void)ctx;
    (void)params;
    return PMPI_Alltoallv(a->sendbuf, a->sendcounts, a->sdispls, a->sendtype, a->recvbuf,
                          a->recvcounts, a->rdispls, a->recvtype, a->comm);
}

#ifndef CT_NO_INTERCEPT /* see init.c */
CT_EXPORT int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    int inter = 0;
    if (!ct_shim_active(comm) || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm);
    ct_alltoallv_args a = {sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                           recvcounts, rdispls, recvtype, comm};
    return ct_shim_return(comm, ct_alltoallv_dispatch(&a, NULL));
}
#endif
