/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allgather_c.c - the MPI-4 large-count entry points MPI_Allgather_c and
 * MPI_Allgatherv_c, where the MPI library has them (CT_HAVE_LARGE_COUNT).
 * The same descriptions as allgather.c, with MPI_Count counts and MPI_Aint
 * displacements kept as the caller gave them, forwarded to the _c routines.
 */
#include "allgather_inter/allgather_inter.h"
#include "shim/shim.h"

#ifdef CT_HAVE_LARGE_COUNT

int ct_shim_fwd_allgather_c(const ct_allgather_args *a)
{
    return PMPI_Allgather_c(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                            a->recvtype, a->comm);
}

int ct_shim_fwd_allgatherv_c(const ct_allgatherv_args *a)
{
    return PMPI_Allgatherv_c(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf,
                             a->recvcounts.v, a->displs.v, a->recvtype, a->comm);
}

int ct_shim_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                        MPI_Comm comm)
{
    ct_allgather_args a = {sendbuf,  sendcount, sendtype, recvbuf, recvcount,
                           recvtype, comm,      ct_shim_fwd_allgather_c};
    if (!ct_shim_serves_inter(sendbuf, comm, CT_COLL_ALLGATHER_INTER))
        return ct_shim_fwd_allgather_c(&a);
    return ct_shim_return(comm, ct_allgather_inter_dispatch(&a, NULL));
}

int ct_shim_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                         MPI_Datatype recvtype, MPI_Comm comm)
{
    ct_allgatherv_args a = {sendbuf,
                            sendcount,
                            sendtype,
                            recvbuf,
                            ct_vec_count(recvcounts),
                            ct_vec_aint(displs),
                            recvtype,
                            comm,
                            ct_shim_fwd_allgatherv_c};
    if (!ct_shim_serves_inter(sendbuf, comm, CT_COLL_ALLGATHERV_INTER))
        return ct_shim_fwd_allgatherv_c(&a);
    return ct_shim_return(comm, ct_allgatherv_inter_dispatch(&a, NULL));
}

#ifndef CT_NO_INTERCEPT /* see init.c */
CT_EXPORT int MPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm)
{
    return ct_shim_allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

CT_EXPORT int MPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const MPI_Count recvcounts[],
                               const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return ct_shim_allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                recvtype, comm);
}
#endif

#endif /* CT_HAVE_LARGE_COUNT */
