/*
 * allgather.c - interception of MPI_Allgather and MPI_Allgatherv.
 *
 * Intercommunicators go through the decision (rule collectives
 * allgather_inter / allgatherv_inter, variables COLTUNE_ALLGATHER_INTER /
 * COLTUNE_ALLGATHERV_INTER). Intra-communicators, and MPI_IN_PLACE (which
 * has no meaning on intercommunicators), are forwarded to PMPI_ so the user
 * gets exactly what the MPI library does.
 */
#include "allgather_inter/allgather_inter.h"
#include "shim/shim.h"

int ct_allgather_inter_pmpi(const ct_allgather_args *a, ct_ctx *ctx, const long *params)
{
    (void)ctx;
    (void)params;
    return PMPI_Allgather(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                          a->recvtype, a->comm);
}

int ct_allgatherv_inter_pmpi(const ct_allgatherv_args *a, ct_ctx *ctx, const long *params)
{
    (void)ctx;
    (void)params;
    return PMPI_Allgatherv(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcounts,
                           a->displs, a->recvtype, a->comm);
}

/* Served by coltune: an intercommunicator, a real send buffer, and
 * arguments the MPI library would accept (else it reports its own error). */
static int served_inter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        MPI_Datatype recvtype, MPI_Comm comm)
{
    int inter = 0;
    return sendbuf != MPI_IN_PLACE && sendcount >= 0 && ct_shim_active(comm) &&
           ct_shim_type_ok(sendtype) && ct_shim_type_ok(recvtype) &&
           PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter;
}

int ct_shim_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!served_inter(sendbuf, sendcount, sendtype, recvtype, comm) || recvcount < 0)
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    ct_allgather_args a = {sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm};
    return ct_shim_return(comm, ct_allgather_inter_dispatch(&a, NULL));
}

/* No recvcounts entry is negative (the remote group's size entries). */
static int counts_valid(const int *counts, MPI_Comm comm)
{
    int n = 0;
    if (PMPI_Comm_remote_size(comm, &n) != MPI_SUCCESS)
        return 0;
    for (int j = 0; j < n; j++)
        if (counts[j] < 0)
            return 0;
    return 1;
}

int ct_shim_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int displs[],
                       MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!served_inter(sendbuf, sendcount, sendtype, recvtype, comm) ||
        !counts_valid(recvcounts, comm))
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                               recvtype, comm);
    ct_allgatherv_args a = {sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                            recvtype, comm};
    return ct_shim_return(comm, ct_allgatherv_inter_dispatch(&a, NULL));
}

#ifndef CT_NO_INTERCEPT /* see init.c */
CT_EXPORT int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return ct_shim_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

CT_EXPORT int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    return ct_shim_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                              recvtype, comm);
}
#endif
