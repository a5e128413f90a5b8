/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ialltoallv.c - the nonblocking entry points MPI_Ialltoallv and
 * MPI_Ialltoall, and their MPI-4 large-count forms where the MPI library has
 * them (CT_HAVE_LARGE_COUNT).
 *
 * The same description as the blocking calls (ct_alltoallv_args), with the
 * request: the decision picks among the algorithms that split
 * (CT_ALLTOALLV_SPLIT_ALG, coll_list.h) or pmpi, which forwards this very
 * call; a served call returns one of coltune's requests (core/request.h),
 * which the completion calls (request.c) advance and complete.
 * Intercommunicators are forwarded.
 */
#include "alltoallv/alltoallv.h"
#include "shim/shim.h"

int ct_shim_fwd_ialltoallv(const ct_alltoallv_args *a)
{
    return PMPI_Ialltoallv(a->sendbuf, a->sendcounts.v, a->sdispls.v, a->sendtype, a->recvbuf,
                           a->recvcounts.v, a->rdispls.v, a->recvtype, a->comm, a->request);
}

int ct_shim_fwd_ialltoall(const ct_alltoallv_args *a)
{
    return PMPI_Ialltoall(a->sendbuf, (int)a->sendcounts.base, a->sendtype, a->recvbuf,
                          (int)a->recvcounts.base, a->recvtype, a->comm, a->request);
}

#ifndef CT_NO_INTERCEPT /* see init.c */
/* Either collective, either form: served or forwarded. */
static int serve(ct_alltoallv_args *a, ct_coll coll, MPI_Request *request)
{
    a->coll = coll;
    a->request = request;
    if (!ct_shim_serves_intra(a->comm, coll))
        return a->forward(a);
    return ct_shim_return(a->comm, ct_ialltoallv_dispatch(a, NULL));
}

int ct_shim_ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Request *request)
{
    ct_alltoallv_args a = ct_shim_describe_alltoallv(
        sendbuf, ct_vec_int(sendcounts), ct_vec_int(sdispls), sendtype, recvbuf,
        ct_vec_int(recvcounts), ct_vec_int(rdispls), recvtype, comm, ct_shim_fwd_ialltoallv);
    return serve(&a, CT_COLL_IALLTOALLV, request);
}

int ct_shim_ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    ct_alltoallv_args a = ct_shim_describe_alltoall(sendbuf, sendcount, sendtype, recvbuf,
                                                    recvcount, recvtype, comm,
                                                    ct_shim_fwd_ialltoall);
    return serve(&a, CT_COLL_IALLTOALL, request);
}

CT_EXPORT int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    return ct_shim_ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm, request);
}

CT_EXPORT int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    return ct_shim_ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             request);
}
#endif

#ifdef CT_HAVE_LARGE_COUNT
int ct_shim_fwd_ialltoallv_c(const ct_alltoallv_args *a)
{
    return PMPI_Ialltoallv_c(a->sendbuf, a->sendcounts.v, a->sdispls.v, a->sendtype,
                             a->recvbuf, a->recvcounts.v, a->rdispls.v, a->recvtype, a->comm,
                             a->request);
}

int ct_shim_fwd_ialltoall_c(const ct_alltoallv_args *a)
{
    return PMPI_Ialltoall_c(a->sendbuf, a->sendcounts.base, a->sendtype, a->recvbuf,
                            a->recvcounts.base, a->recvtype, a->comm, a->request);
}

#ifndef CT_NO_INTERCEPT
CT_EXPORT int MPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    ct_alltoallv_args a = ct_shim_describe_alltoallv(
        sendbuf, ct_vec_count(sendcounts), ct_vec_aint(sdispls), sendtype, recvbuf,
        ct_vec_count(recvcounts), ct_vec_aint(rdispls), recvtype, comm,
        ct_shim_fwd_ialltoallv_c);
    return serve(&a, CT_COLL_IALLTOALLV, request);
}

CT_EXPORT int MPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request *request)
{
    ct_alltoallv_args a = ct_shim_describe_alltoall(sendbuf, sendcount, sendtype, recvbuf,
                                                    recvcount, recvtype, comm,
                                                    ct_shim_fwd_ialltoall_c);
    return serve(&a, CT_COLL_IALLTOALL, request);
}
#endif
#endif /* CT_HAVE_LARGE_COUNT */
