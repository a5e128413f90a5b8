/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdde.h - the driver of MPIX_Alltoall_crs and MPIX_Alltoallv_crs (sdde.c),
 * called by mpix.c and the direct API. What the driver and its algorithms
 * share, and how they split the work, is in sdde_exchange.h.
 */
#ifndef CT_SDDE_H
#define CT_SDDE_H

#include "select/spec.h"

/* ------------------------------------------------------------------ */
/* The driver                                                          */
/* ------------------------------------------------------------------ */

/* The user's call, either collective, either way of allocating. */
typedef struct ct_sdde_args {
    const char *fn; /* "MPIX_Alltoall_crs" ...: names the call in messages */
    int variable;   /* MPIX_Alltoallv_crs */
    int alloc;      /* the _alloc variants: outputs allocated by coltune */
    int send_nnz, send_size;
    const int *dest, *sendcounts, *sdispls; /* sendcounts, sdispls: variable only */
    int sendcount;                          /* constant only */
    MPI_Datatype sendtype;
    const void *sendvals;
    int *recv_nnz, *recv_size; /* recv_size: variable only */
    int recvcount;             /* constant only */
    MPI_Datatype recvtype;
    int *src, *recvcounts, *rdispls; /* caller-allocated outputs */
    void *recvvals;
    int **src_out, **recvcounts_out, **rdispls_out; /* _alloc outputs */
    void **recvvals_out;
    int nnz_known, size_known; /* hints (MPIX_Info) */
    MPI_Comm comm;
} ct_sdde_args;

/* Validates, decides (forced: a spec from the direct API, or NULL), runs and
 * writes the outputs. Returns an MPI error code (the caller hands it to the
 * communicator's error handler). */
int ct_sdde_dispatch(const ct_sdde_args *c, const ct_spec *forced);

/* The number coltune_sdde_internode_msgs reports, -1 before any call. */
long ct_sdde_last_internode(MPI_Comm comm);

#endif
