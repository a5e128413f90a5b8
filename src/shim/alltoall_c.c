/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoall_c.c - the MPI-4 large-count entry point MPI_Alltoall_c, where the
 * MPI library has it (CT_HAVE_LARGE_COUNT). The same uniform description as
 * MPI_Alltoall (alltoall.c) with MPI_Count counts, forwarded to
 * PMPI_Alltoall_c.
 */
#include "alltoallv/alltoallv.h"
#include "shim/shim.h"

#ifdef CT_HAVE_LARGE_COUNT

int ct_shim_fwd_alltoall_c(const ct_alltoallv_args *a)
{
    return PMPI_Alltoall_c(a->sendbuf, a->sendcounts.base, a->sendtype, a->recvbuf,
                           a->recvcounts.base, a->recvtype, a->comm);
}

int ct_shim_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (ct_alltoall_empty_at_once(sendbuf, sendcount, sendtype, recvcount, recvtype, comm))
        return MPI_SUCCESS; /* nothing to do (alltoallv.h) */
    ct_alltoallv_args a = ct_shim_describe_alltoall(sendbuf, sendcount, sendtype, recvbuf,
                                                    recvcount, recvtype, comm, ct_shim_fwd_alltoall_c);
    if (ct_alltoall_is_empty(&a))
        return ct_alltoall_forward_empty(&a);
    if (!ct_shim_serves_intra(comm, CT_COLL_ALLTOALL))
        return ct_shim_fwd_alltoall_c(&a);
    return ct_shim_return(comm, ct_alltoallv_dispatch(&a, NULL));
}

#ifndef CT_NO_INTERCEPT /* see init.c */
CT_EXPORT int MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm)
{
    return ct_shim_alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
#endif

#endif /* CT_HAVE_LARGE_COUNT */
