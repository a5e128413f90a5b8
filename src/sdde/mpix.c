/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpix.c - the public sparse dynamic data exchange API of include/coltune.h:
 * MPIX_Info, MPIX_Comm, MPIX_Alltoall(v)_crs[_alloc], MPIX_Free, and the
 * coltune_alltoall(v)_crs[_alloc] entry points on a plain MPI_Comm with a
 * spec. Each builds a ct_sdde_args and goes through the one driver (sdde.c).
 */
#include "coltune.h"

#include "api.h"
#include "core/context.h"
#include "core/log.h"
#include "sdde/sdde.h"
#include "shim/shim.h"

#include <stdlib.h>
#include <string.h>

struct MPIX_Info {
    int recv_nnz_known;  /* *recv_nnz is the exact count on input */
    int recv_size_known; /* *recv_size is the exact size on input */
};

/* Thin: the context (private communicator, topology, cached window and node
 * communicator) hangs on comm itself, shared with the intercepted calls. */
struct MPIX_Comm {
    MPI_Comm comm;
};

CT_EXPORT int MPIX_Info_init(MPIX_Info **xinfo)
{
    if (xinfo == NULL)
        return MPI_ERR_ARG;
    *xinfo = calloc(1, sizeof **xinfo);
    return *xinfo ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

CT_EXPORT int MPIX_Info_free(MPIX_Info **xinfo)
{
    if (xinfo == NULL)
        return MPI_ERR_ARG;
    free(*xinfo);
    *xinfo = NULL;
    return MPI_SUCCESS;
}

CT_EXPORT int MPIX_Info_set_recv_nnz_known(MPIX_Info *xinfo, int known)
{
    if (xinfo == NULL)
        return MPI_ERR_ARG;
    xinfo->recv_nnz_known = known != 0;
    return MPI_SUCCESS;
}

CT_EXPORT int MPIX_Info_set_recv_size_known(MPIX_Info *xinfo, int known)
{
    if (xinfo == NULL)
        return MPI_ERR_ARG;
    xinfo->recv_size_known = known != 0;
    return MPI_SUCCESS;
}

CT_EXPORT int MPIX_Comm_init(MPIX_Comm **xcomm, MPI_Comm comm)
{
    ct_ctx *ctx;
    int rc = ct_api_begin(comm, CT_API_INTRA);
    if (rc == MPI_SUCCESS && xcomm == NULL)
        rc = MPI_ERR_ARG;
    if (rc == MPI_SUCCESS)
        rc = ct_ctx_get(comm, &ctx); /* collective on first use of comm */
    if (rc != MPI_SUCCESS)
        return ct_shim_return(comm, rc);
    *xcomm = malloc(sizeof **xcomm);
    if (*xcomm == NULL)
        return ct_shim_return(comm, MPI_ERR_NO_MEM);
    (*xcomm)->comm = comm;
    return MPI_SUCCESS;
}

CT_EXPORT int MPIX_Comm_free(MPIX_Comm **xcomm)
{
    if (xcomm == NULL)
        return MPI_ERR_ARG;
    free(*xcomm);
    *xcomm = NULL;
    return MPI_SUCCESS;
}

CT_EXPORT int MPIX_Free(void *ptr)
{
    free(ptr);
    return MPI_SUCCESS;
}

CT_EXPORT int coltune_sdde_internode_msgs(MPI_Comm comm, long *count)
{
    if (comm == MPI_COMM_NULL)
        return MPI_ERR_COMM;
    if (count == NULL)
        return MPI_ERR_ARG;
    *count = ct_sdde_last_internode(comm);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* The exchanges                                                       */
/* ------------------------------------------------------------------ */

/* Parses spec_text (NULL: decide) and runs the call through the driver. */
static int run_call(ct_sdde_args *c, const char *spec_text, const MPIX_Info *xinfo)
{
    ct_spec spec;
    int rc = ct_api_begin(c->comm, CT_API_INTRA);
    if (rc != MPI_SUCCESS)
        return ct_shim_return(c->comm, rc);
    c->nnz_known = xinfo != NULL && xinfo->recv_nnz_known;
    c->size_known = xinfo != NULL && xinfo->recv_size_known;
    ct_coll coll = c->variable ? CT_COLL_ALLTOALLV_CRS : CT_COLL_ALLTOALL_CRS;
    rc = ct_api_parse_spec(c->fn, spec_text, coll, c->comm, &spec);
    if (rc < 0)
        return ct_shim_return(c->comm, MPI_ERR_ARG);
    return ct_shim_return(c->comm, ct_sdde_dispatch(c, rc ? &spec : NULL));
}

static MPI_Comm comm_of(const MPIX_Comm *xcomm)
{
    return xcomm != NULL ? xcomm->comm : MPI_COMM_NULL;
}

/* The send side, receive counts and communicator, shared by every entry point. */
#define A2A_CALL(name, is_alloc)                                                           \
    ct_sdde_args c = {.fn = (name), .alloc = (is_alloc), .send_nnz = send_nnz,             \
                      .dest = dest, .sendcount = sendcount, .sendtype = sendtype,          \
                      .sendvals = sendvals, .recv_nnz = recv_nnz, .recvcount = recvcount, \
                      .recvtype = recvtype, .comm = comm}
#define A2AV_CALL(name, is_alloc)                                                          \
    ct_sdde_args c = {.fn = (name), .variable = 1, .alloc = (is_alloc),                    \
                      .send_nnz = send_nnz, .send_size = send_size, .dest = dest,          \
                      .sendcounts = sendcounts, .sdispls = sdispls, .sendtype = sendtype,  \
                      .sendvals = sendvals, .recv_nnz = recv_nnz, .recv_size = recv_size,  \
                      .recvtype = recvtype, .comm = comm}

CT_EXPORT int coltune_alltoall_crs(const char *spec, int send_nnz, const int *dest,
                                   int sendcount, MPI_Datatype sendtype, const void *sendvals,
                                   int *recv_nnz, int *src, int recvcount,
                                   MPI_Datatype recvtype, void *recvvals, MPIX_Info *xinfo,
                                   MPI_Comm comm)
{
    A2A_CALL("MPIX_Alltoall_crs", 0);
    c.src = src;
    c.recvvals = recvvals;
    return run_call(&c, spec, xinfo);
}

CT_EXPORT int MPIX_Alltoall_crs(int send_nnz, const int *dest, int sendcount,
                                MPI_Datatype sendtype, const void *sendvals, int *recv_nnz,
                                int *src, int recvcount, MPI_Datatype recvtype, void *recvvals,
                                MPIX_Info *xinfo, MPIX_Comm *xcomm)
{
    return coltune_alltoall_crs(NULL, send_nnz, dest, sendcount, sendtype, sendvals, recv_nnz,
                                src, recvcount, recvtype, recvvals, xinfo, comm_of(xcomm));
}

CT_EXPORT int coltune_alltoall_crs_alloc(const char *spec, int send_nnz, const int *dest,
                                         int sendcount, MPI_Datatype sendtype,
                                         const void *sendvals, int *recv_nnz, int **src,
                                         int recvcount, MPI_Datatype recvtype, void **recvvals,
                                         MPIX_Info *xinfo, MPI_Comm comm)
{
    A2A_CALL("MPIX_Alltoall_crs_alloc", 1);
    c.src_out = src;
    c.recvvals_out = recvvals;
    return run_call(&c, spec, xinfo);
}

CT_EXPORT int MPIX_Alltoall_crs_alloc(int send_nnz, const int *dest, int sendcount,
                                      MPI_Datatype sendtype, const void *sendvals,
                                      int *recv_nnz, int **src, int recvcount,
                                      MPI_Datatype recvtype, void **recvvals, MPIX_Info *xinfo,
                                      MPIX_Comm *xcomm)
{
    return coltune_alltoall_crs_alloc(NULL, send_nnz, dest, sendcount, sendtype, sendvals,
                                      recv_nnz, src, recvcount, recvtype, recvvals, xinfo,
                                      comm_of(xcomm));
}

CT_EXPORT int coltune_alltoallv_crs(const char *spec, int send_nnz, int send_size,
                                    const int *dest, const int *sendcounts, const int *sdispls,
                                    MPI_Datatype sendtype, const void *sendvals, int *recv_nnz,
                                    int *recv_size, int *src, int *recvcounts, int *rdispls,
                                    MPI_Datatype recvtype, void *recvvals, MPIX_Info *xinfo,
                                    MPI_Comm comm)
{
    A2AV_CALL("MPIX_Alltoallv_crs", 0);
    c.src = src;
    c.recvcounts = recvcounts;
    c.rdispls = rdispls;
    c.recvvals = recvvals;
    return run_call(&c, spec, xinfo);
}

CT_EXPORT int MPIX_Alltoallv_crs(int send_nnz, int send_size, const int *dest,
                                 const int *sendcounts, const int *sdispls,
                                 MPI_Datatype sendtype, const void *sendvals, int *recv_nnz,
                                 int *recv_size, int *src, int *recvcounts, int *rdispls,
                                 MPI_Datatype recvtype, void *recvvals, MPIX_Info *xinfo,
                                 MPIX_Comm *xcomm)
{
    return coltune_alltoallv_crs(NULL, send_nnz, send_size, dest, sendcounts, sdispls,
                                 sendtype, sendvals, recv_nnz, recv_size, src, recvcounts,
                                 rdispls, recvtype, recvvals, xinfo, comm_of(xcomm));
}

CT_EXPORT int coltune_alltoallv_crs_alloc(const char *spec, int send_nnz, int send_size,
                                          const int *dest, const int *sendcounts,
                                          const int *sdispls, MPI_Datatype sendtype,
                                          const void *sendvals, int *recv_nnz, int *recv_size,
                                          int **src, int **recvcounts, int **rdispls,
                                          MPI_Datatype recvtype, void **recvvals,
                                          MPIX_Info *xinfo, MPI_Comm comm)
{
    A2AV_CALL("MPIX_Alltoallv_crs_alloc", 1);
    c.src_out = src;
    c.recvcounts_out = recvcounts;
    c.rdispls_out = rdispls;
    c.recvvals_out = recvvals;
    return run_call(&c, spec, xinfo);
}

CT_EXPORT int MPIX_Alltoallv_crs_alloc(int send_nnz, int send_size, const int *dest,
                                       const int *sendcounts, const int *sdispls,
                                       MPI_Datatype sendtype, const void *sendvals,
                                       int *recv_nnz, int *recv_size, int **src,
                                       int **recvcounts, int **rdispls, MPI_Datatype recvtype,
                                       void **recvvals, MPIX_Info *xinfo, MPIX_Comm *xcomm)
{
    return coltune_alltoallv_crs_alloc(NULL, send_nnz, send_size, dest, sendcounts, sdispls,
                                       sendtype, sendvals, recv_nnz, recv_size, src,
                                       recvcounts, rdispls, recvtype, recvvals, xinfo,
                                       comm_of(xcomm));
}
