/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_init.c - the persistent entry points: MPI-4's MPI_Alltoallv_init
 * and MPI_Alltoall_init where the MPI library has them (MPICH 4,
 * CT_HAVE_PCOLL_MPI4), or Open MPI 4.1's MPIX_Alltoallv_init and
 * MPIX_Alltoall_init (its pcollreq extension, CT_HAVE_PCOLL_MPIX).
 *
 * The same description as the nonblocking calls, persistent: decided once
 * as the collective's nonblocking form (ialltoallv, ialltoall), its schedule
 * built once in the request, which every MPI_Start runs from the top
 * (alltoallv.c, start_choice). pmpi forwards this very call: the request is
 * then the library's. Intercommunicators are forwarded.
 */
#include "alltoallv/alltoallv.h"
#include "shim/shim.h"

#ifdef CT_HAVE_PCOLL

int ct_shim_fwd_alltoallv_init(const ct_alltoallv_args *a)
{
    return CT_PINIT(Alltoallv)(a->sendbuf, a->sendcounts.v, a->sdispls.v, a->sendtype,
                               a->recvbuf, a->recvcounts.v, a->rdispls.v, a->recvtype, a->comm,
                               a->info, a->request);
}

int ct_shim_fwd_alltoall_init(const ct_alltoallv_args *a)
{
    return CT_PINIT(Alltoall)(a->sendbuf, (int)a->sendcounts.base, a->sendtype, a->recvbuf,
                              (int)a->recvcounts.base, a->recvtype, a->comm, a->info,
                              a->request);
}

#ifndef CT_NO_INTERCEPT /* see init.c */
static int serve(ct_alltoallv_args *a, ct_coll coll, MPI_Info info, MPI_Request *request)
{
    a->coll = coll;
    a->request = request;
    a->persistent = 1;
    a->info = info;
    if (!ct_shim_serves_kind(a->comm, 0)) /* no shortcut: decided apart */
        return a->forward(a);
    return ct_shim_return(a->comm, ct_ialltoallv_dispatch(a, NULL));
}

CT_EXPORT int CT_INIT(Alltoallv)(const void *sendbuf, const int sendcounts[],
                                 const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                 const int recvcounts[], const int rdispls[],
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    ct_alltoallv_args a = ct_shim_describe_alltoallv(
        sendbuf, ct_vec_int(sendcounts), ct_vec_int(sdispls), sendtype, recvbuf,
        ct_vec_int(recvcounts), ct_vec_int(rdispls), recvtype, comm, ct_shim_fwd_alltoallv_init);
    return serve(&a, CT_COLL_IALLTOALLV, info, request);
}

CT_EXPORT int CT_INIT(Alltoall)(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    ct_alltoallv_args a = ct_shim_describe_alltoall(sendbuf, sendcount, sendtype, recvbuf,
                                                    recvcount, recvtype, comm,
                                                    ct_shim_fwd_alltoall_init);
    return serve(&a, CT_COLL_IALLTOALL, info, request);
}
#endif /* CT_NO_INTERCEPT */
#endif /* CT_HAVE_PCOLL */
