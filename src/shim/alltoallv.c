/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv.c - the MPI_Alltoallv entry point (int counts and displacements)
 * and the MPI-4 large-count MPI_Alltoallv_c (MPI_Count counts, MPI_Aint
 * displacements), where the MPI library has it (configure defines
 * CT_HAVE_LARGE_COUNT: MPICH 4, not Open MPI 4.1).
 *
 * Intra-communicators go through the decision (rules, environment) and the
 * chosen algorithm; intercommunicators are forwarded to PMPI_Alltoallv or
 * PMPI_Alltoallv_c. The description keeps the caller's arrays as they are
 * (ct_vec_int, or ct_vec_count and ct_vec_aint): the decision and every
 * algorithm read them through ct_vec_at, and point-to-point calls switch to
 * their _c forms when a count needs it (core/datatype.h).
 */
#include "alltoallv/alltoallv.h"
#include "shim/shim.h"

int ct_shim_fwd_alltoallv(const ct_alltoallv_args *a)
{
    return PMPI_Alltoallv(a->sendbuf, a->sendcounts.v, a->sdispls.v, a->sendtype, a->recvbuf,
                          a->recvcounts.v, a->rdispls.v, a->recvtype, a->comm);
}

/* Either form: served or forwarded (the forwarder read first: the
 * pass-through then calls it directly). */
static inline int serve_alltoallv(const ct_alltoallv_args *a)
{
    const ct_alltoallv_forward_fn forward = a->forward;
    if (!ct_shim_serves_intra(a->comm, CT_COLL_ALLTOALLV))
        return forward(a);
    return ct_shim_return(a->comm, ct_alltoallv_dispatch(a, NULL));
}

int ct_shim_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                      MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                      const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    ct_alltoallv_args a = ct_shim_describe_alltoallv(
        sendbuf, ct_vec_int(sendcounts), ct_vec_int(sdispls), sendtype, recvbuf,
        ct_vec_int(recvcounts), ct_vec_int(rdispls), recvtype, comm, ct_shim_fwd_alltoallv);
    return serve_alltoallv(&a);
}

#ifndef CT_NO_INTERCEPT /* see init.c */
CT_EXPORT int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return ct_shim_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                             rdispls, recvtype, comm);
}
#endif

#ifdef CT_HAVE_LARGE_COUNT
int ct_shim_fwd_alltoallv_c(const ct_alltoallv_args *a)
{
    return PMPI_Alltoallv_c(a->sendbuf, a->sendcounts.v, a->sdispls.v, a->sendtype, a->recvbuf,
                            a->recvcounts.v, a->rdispls.v, a->recvtype, a->comm);
}

#ifndef CT_NO_INTERCEPT
CT_EXPORT int MPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm)
{
    ct_alltoallv_args a = ct_shim_describe_alltoallv(
        sendbuf, ct_vec_count(sendcounts), ct_vec_aint(sdispls), sendtype, recvbuf,
        ct_vec_count(recvcounts), ct_vec_aint(rdispls), recvtype, comm, ct_shim_fwd_alltoallv_c);
    return serve_alltoallv(&a);
}
#endif
#endif /* CT_HAVE_LARGE_COUNT */
