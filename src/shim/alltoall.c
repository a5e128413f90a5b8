/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoall.c - the MPI_Alltoall entry point, and the MPI-4 large-count
 * MPI_Alltoall_c (MPI_Count counts) where the MPI library has it
 * (CT_HAVE_LARGE_COUNT).
 *
 * A uniform exchange is an Alltoallv whose counts are all sendcount and whose
 * displacements are j * sendcount: the description says so without any
 * per-call array (ct_vec_linear), and every Alltoallv algorithm serves it
 * under the rule collective alltoall (COLTUNE_ALLTOALL). With MPI_IN_PLACE
 * the send arguments are ignored, as the standard says: the driver describes
 * the send side by the receive arguments. Intercommunicators are forwarded
 * to PMPI_Alltoall or PMPI_Alltoall_c.
 */
#include "alltoallv/alltoallv.h"
#include "shim/shim.h"

int ct_shim_fwd_alltoall(const ct_alltoallv_args *a)
{
    return PMPI_Alltoall(a->sendbuf, (int)a->sendcounts.base, a->sendtype, a->recvbuf,
                         (int)a->recvcounts.base, a->recvtype, a->comm);
}

/* Either form: the empty call returns at once, the others are served or
 * forwarded. */
static inline int serve_alltoall(const void *sendbuf, MPI_Count sendcount,
                                 MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                 MPI_Datatype recvtype, MPI_Comm comm,
                                 ct_alltoallv_forward_fn forward)
{
    if (ct_alltoall_empty_at_once(sendbuf, sendcount, sendtype, recvcount, recvtype, comm))
        return MPI_SUCCESS; /* nothing to do (alltoallv.h) */
    ct_alltoallv_args a = ct_shim_describe_alltoall(sendbuf, sendcount, sendtype, recvbuf,
                                                    recvcount, recvtype, comm, forward);
    if (ct_alltoall_is_empty(&a))
        return ct_alltoall_forward_empty(&a);
    if (!ct_shim_serves_intra(comm, CT_COLL_ALLTOALL))
        return forward(&a);
    return ct_shim_return(comm, ct_alltoallv_dispatch(&a, NULL));
}

int ct_shim_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return serve_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                          ct_shim_fwd_alltoall);
}

#ifndef CT_NO_INTERCEPT /* see init.c */
CT_EXPORT int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return ct_shim_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
#endif

#ifdef CT_HAVE_LARGE_COUNT
int ct_shim_fwd_alltoall_c(const ct_alltoallv_args *a)
{
    return PMPI_Alltoall_c(a->sendbuf, a->sendcounts.base, a->sendtype, a->recvbuf,
                           a->recvcounts.base, a->recvtype, a->comm);
}

#ifndef CT_NO_INTERCEPT
CT_EXPORT int MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm)
{
    return serve_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                          ct_shim_fwd_alltoall_c);
}
#endif
#endif /* CT_HAVE_LARGE_COUNT */
