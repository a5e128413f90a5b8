/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoall.c - the MPI_Alltoall entry point.
 *
 * A uniform exchange is an Alltoallv whose counts are all sendcount and whose
 * displacements are j * sendcount: the description says so without any
 * per-call array (ct_vec_linear), and every Alltoallv algorithm serves it
 * under the rule collective alltoall (COLTUNE_ALLTOALL). With MPI_IN_PLACE
 * the send arguments are ignored, as the standard says: the driver describes
 * the send side by the receive arguments. Intercommunicators are forwarded
 * to PMPI_Alltoall.
 */
#include "alltoallv/alltoallv.h"
#include "shim/shim.h"

int ct_shim_fwd_alltoall(const ct_alltoallv_args *a)
{
    return PMPI_Alltoall(a->sendbuf, (int)a->sendcounts.base, a->sendtype, a->recvbuf,
                         (int)a->recvcounts.base, a->recvtype, a->comm);
}

ct_alltoallv_args ct_shim_describe_alltoall(const void *sendbuf, MPI_Count sendcount,
                                            MPI_Datatype sendtype, void *recvbuf,
                                            MPI_Count recvcount, MPI_Datatype recvtype,
                                            MPI_Comm comm, ct_alltoallv_forward_fn forward)
{
    return (ct_alltoallv_args){.coll = CT_COLL_ALLTOALL,
                               .sendbuf = sendbuf,
                               .sendcounts = ct_vec_linear(sendcount, 0),
                               .sdispls = ct_vec_linear(0, sendcount),
                               .sendtype = sendtype,
                               .recvbuf = recvbuf,
                               .recvcounts = ct_vec_linear(recvcount, 0),
                               .rdispls = ct_vec_linear(0, recvcount),
                               .recvtype = recvtype,
                               .comm = comm,
                               .forward = forward,
                               .msg_size = -1};
}

int ct_shim_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (ct_alltoall_empty_at_once(sendbuf, sendcount, sendtype, recvcount, recvtype, comm))
        return MPI_SUCCESS; /* nothing to do (alltoallv.h) */
    ct_alltoallv_args a = ct_shim_describe_alltoall(sendbuf, sendcount, sendtype, recvbuf,
                                                    recvcount, recvtype, comm,
                                                    ct_shim_fwd_alltoall);
    if (ct_alltoall_is_empty(&a))
        return ct_alltoall_forward_empty(&a);
    if (!ct_shim_serves_intra(comm, CT_COLL_ALLTOALL))
        return ct_shim_fwd_alltoall(&a);
    return ct_shim_return(comm, ct_alltoallv_dispatch(&a, NULL));
}

#ifndef CT_NO_INTERCEPT /* see init.c */
CT_EXPORT int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return ct_shim_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
#endif
