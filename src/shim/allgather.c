/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allgather.c - the MPI_Allgather and MPI_Allgatherv entry points, and the
 * MPI-4 large-count MPI_Allgather_c and MPI_Allgatherv_c where the MPI
 * library has them (CT_HAVE_LARGE_COUNT): the same descriptions, with
 * MPI_Count counts and MPI_Aint displacements kept as the caller gave them,
 * forwarded to the _c routines.
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
    return sendbuf != MPI_IN_PLACE && !ct_ctx_forwards(comm, coll) &&
           ct_shim_serves_kind(comm, 1);
}

/* Either form of each: served or forwarded (the forwarder read first, as
 * in alltoallv.c: the pass-through then calls it directly). */
static inline int serve_allgather(const ct_allgather_args *a)
{
    int (*const forward)(const ct_allgather_args *) = a->forward;
    if (!ct_shim_serves_inter(a->sendbuf, a->comm, CT_COLL_ALLGATHER_INTER))
        return forward(a);
    return ct_shim_return(a->comm, ct_allgather_inter_dispatch(a, NULL));
}

static inline int serve_allgatherv(const ct_allgatherv_args *a)
{
    int (*const forward)(const ct_allgatherv_args *) = a->forward;
    if (!ct_shim_serves_inter(a->sendbuf, a->comm, CT_COLL_ALLGATHERV_INTER))
        return forward(a);
    return ct_shim_return(a->comm, ct_allgatherv_inter_dispatch(a, NULL));
}

int ct_shim_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    ct_allgather_args a = ct_shim_describe_allgather(sendbuf, sendcount, sendtype, recvbuf,
                                                     recvcount, recvtype, comm,
                                                     ct_shim_fwd_allgather);
    return serve_allgather(&a);
}

int ct_shim_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int displs[],
                       MPI_Datatype recvtype, MPI_Comm comm)
{
    ct_allgatherv_args a = ct_shim_describe_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                                                       ct_vec_int(recvcounts), ct_vec_int(displs),
                                                       recvtype, comm, ct_shim_fwd_allgatherv);
    return serve_allgatherv(&a);
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

#ifndef CT_NO_INTERCEPT
CT_EXPORT int MPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm)
{
    ct_allgather_args a = ct_shim_describe_allgather(sendbuf, sendcount, sendtype, recvbuf,
                                                     recvcount, recvtype, comm,
                                                     ct_shim_fwd_allgather_c);
    return serve_allgather(&a);
}

CT_EXPORT int MPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const MPI_Count recvcounts[],
                               const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    ct_allgatherv_args a = ct_shim_describe_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                                                       ct_vec_count(recvcounts),
                                                       ct_vec_aint(displs), recvtype, comm,
                                                       ct_shim_fwd_allgatherv_c);
    return serve_allgatherv(&a);
}
#endif
#endif /* CT_HAVE_LARGE_COUNT */
