/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * iallgather.c - the nonblocking MPI_Iallgather and MPI_Iallgatherv, their
 * MPI-4 large-count forms where the MPI library has them
 * (CT_HAVE_LARGE_COUNT), and the persistent MPI_Allgather_init and
 * MPI_Allgatherv_init (MPICH 4) or Open MPI 4.1's MPIX_ ones (CT_HAVE_PCOLL).
 *
 * The same descriptions as the blocking calls (allgather.c), with the
 * request. Intercommunicators go through the decision (rule collectives
 * iallgather_inter / iallgatherv_inter, variables COLTUNE_IALLGATHER_INTER /
 * COLTUNE_IALLGATHERV_INTER; a persistent call is decided once, as the
 * nonblocking form, condition persistent=1); a served call returns one of
 * coltune's requests (core/request.h), pmpi forwards this very call.
 * Intra-communicators and MPI_IN_PLACE are forwarded.
 */
#include "allgather_inter/allgather_inter.h"
#include "shim/shim.h"

int ct_shim_fwd_iallgather(const ct_allgather_args *a)
{
    return PMPI_Iallgather(a->sendbuf, (int)a->sendcount, a->sendtype, a->recvbuf,
                           (int)a->recvcount, a->recvtype, a->comm, a->request);
}

int ct_shim_fwd_iallgatherv(const ct_allgatherv_args *a)
{
    return PMPI_Iallgatherv(a->sendbuf, (int)a->sendcount, a->sendtype, a->recvbuf,
                            a->recvcounts.v, a->displs.v, a->recvtype, a->comm, a->request);
}

#ifndef CT_NO_INTERCEPT /* see init.c */
/* Is the call coltune's? The persistent forms without the pass-through's
 * shortcut, whose bit is the nonblocking calls' (rules may decide them
 * apart: persistent=1). */
static int served(const void *sendbuf, MPI_Comm comm, ct_coll coll, int persistent)
{
    return persistent ? sendbuf != MPI_IN_PLACE && ct_shim_serves_kind(comm, 1)
                      : ct_shim_serves_inter(sendbuf, comm, coll);
}

static int serve_iallgather(ct_allgather_args *a, MPI_Request *request)
{
    a->request = request;
    if (!served(a->sendbuf, a->comm, CT_COLL_IALLGATHER_INTER, a->persistent))
        return a->forward(a);
    return ct_shim_return(a->comm, ct_iallgather_inter_dispatch(a, NULL));
}

static int serve_iallgatherv(ct_allgatherv_args *a, MPI_Request *request)
{
    a->request = request;
    if (!served(a->sendbuf, a->comm, CT_COLL_IALLGATHERV_INTER, a->persistent))
        return a->forward(a);
    return ct_shim_return(a->comm, ct_iallgatherv_inter_dispatch(a, NULL));
}

int ct_shim_iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Request *request)
{
    ct_allgather_args a = ct_shim_describe_allgather(sendbuf, sendcount, sendtype, recvbuf,
                                                     recvcount, recvtype, comm,
                                                     ct_shim_fwd_iallgather);
    return serve_iallgather(&a, request);
}

int ct_shim_iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[], const int displs[],
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    ct_allgatherv_args a = ct_shim_describe_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                                                       ct_vec_int(recvcounts), ct_vec_int(displs),
                                                       recvtype, comm, ct_shim_fwd_iallgatherv);
    return serve_iallgatherv(&a, request);
}

CT_EXPORT int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    return ct_shim_iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              request);
}

CT_EXPORT int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return ct_shim_iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                               recvtype, comm, request);
}
#endif

#ifdef CT_HAVE_LARGE_COUNT
int ct_shim_fwd_iallgather_c(const ct_allgather_args *a)
{
    return PMPI_Iallgather_c(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                             a->recvtype, a->comm, a->request);
}

int ct_shim_fwd_iallgatherv_c(const ct_allgatherv_args *a)
{
    return PMPI_Iallgatherv_c(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf,
                              a->recvcounts.v, a->displs.v, a->recvtype, a->comm, a->request);
}

#ifndef CT_NO_INTERCEPT
CT_EXPORT int MPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request *request)
{
    ct_allgather_args a = ct_shim_describe_allgather(sendbuf, sendcount, sendtype, recvbuf,
                                                     recvcount, recvtype, comm,
                                                     ct_shim_fwd_iallgather_c);
    return serve_iallgather(&a, request);
}

CT_EXPORT int MPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                void *recvbuf, const MPI_Count recvcounts[],
                                const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Request *request)
{
    ct_allgatherv_args a = ct_shim_describe_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                                                       ct_vec_count(recvcounts),
                                                       ct_vec_aint(displs), recvtype, comm,
                                                       ct_shim_fwd_iallgatherv_c);
    return serve_iallgatherv(&a, request);
}
#endif
#endif /* CT_HAVE_LARGE_COUNT */

#ifdef CT_HAVE_PCOLL
int ct_shim_fwd_allgather_init(const ct_allgather_args *a)
{
    return CT_PINIT(Allgather)(a->sendbuf, (int)a->sendcount, a->sendtype, a->recvbuf,
                               (int)a->recvcount, a->recvtype, a->comm, a->info, a->request);
}

int ct_shim_fwd_allgatherv_init(const ct_allgatherv_args *a)
{
    return CT_PINIT(Allgatherv)(a->sendbuf, (int)a->sendcount, a->sendtype, a->recvbuf,
                                a->recvcounts.v, a->displs.v, a->recvtype, a->comm, a->info,
                                a->request);
}

#ifndef CT_NO_INTERCEPT
CT_EXPORT int CT_INIT(Allgather)(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    ct_allgather_args a = ct_shim_describe_allgather(sendbuf, sendcount, sendtype, recvbuf,
                                                     recvcount, recvtype, comm,
                                                     ct_shim_fwd_allgather_init);
    a.persistent = 1;
    a.info = info;
    return serve_iallgather(&a, request);
}

CT_EXPORT int CT_INIT(Allgatherv)(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request)
{
    ct_allgatherv_args a = ct_shim_describe_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                                                       ct_vec_int(recvcounts), ct_vec_int(displs),
                                                       recvtype, comm, ct_shim_fwd_allgatherv_init);
    a.persistent = 1;
    a.info = info;
    return serve_iallgatherv(&a, request);
}
#endif /* CT_NO_INTERCEPT */
#endif /* CT_HAVE_PCOLL */
