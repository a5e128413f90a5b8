/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allgather.c - the MPI_Allgather and MPI_Allgatherv entry points.
 *
 * Intercommunicators go through the decision (rule collectives
 * allgather_inter / allgatherv_inter, variables COLTUNE_ALLGATHER_INTER /
 * COLTUNE_ALLGATHERV_INTER). Intra-communicators and MPI_IN_PLACE (which
 * has no meaning on intercommunicators) are forwarded to PMPI_, so the user
 * gets exactly what the library does; so are arguments the library must
 * reject (allgather_inter.c checks them).
 */
#include "allgather_inter/allgather_inter.h"
#include "shim/shim.h"

int ct_shim_fwd_allgather(const ct_allgather_args *a)
{
    return PMPI_Allgather(a->sendbuf, (int)a->sendcount, a->sendtype, a->recvbuf,
                          (int)a->recvcount, a->recvtype, a->comm);
}

int ct_shim_fwd_allgatherv(const ct_allgatherv_args *a)
{
    return PMPI_Allgatherv(a->sendbuf, (int)a->sendcount, a->sendtype, a->recvbuf,
                           a->recvcounts.v, a->displs.v, a->recvtype, a->comm);
}

int ct_shim_serves_inter(const void *sendbuf, MPI_Comm comm, ct_coll coll)
{
    int inter = 0;
    return sendbuf != MPI_IN_PLACE && !ct_ctx_forwards(comm, coll) && ct_shim_active(comm) &&
           PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter;
}

int ct_shim_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    ct_allgather_args a = {sendbuf,  sendcount, sendtype, recvbuf, recvcount,
                           recvtype, comm,      ct_shim_fwd_allgather};
    if (!ct_shim_serves_inter(sendbuf, comm, CT_COLL_ALLGATHER_INTER))
        return ct_shim_fwd_allgather(&a);
    return ct_shim_return(comm, ct_allgather_inter_dispatch(&a, NULL));
}

int ct_shim_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int displs[],
                       MPI_Datatype recvtype, MPI_Comm comm)
{
    ct_allgatherv_args a = {sendbuf,
                            sendcount,
                            sendtype,
                            recvbuf,
                            ct_vec_int(recvcounts),
                            ct_vec_int(displs),
                            recvtype,
                            comm,
                            ct_shim_fwd_allgatherv};
    if (!ct_shim_serves_inter(sendbuf, comm, CT_COLL_ALLGATHERV_INTER))
        return ct_shim_fwd_allgatherv(&a);
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
