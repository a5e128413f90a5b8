/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * datatype.h - datatype facts and the typed local copy every algorithm uses
 * for the block a rank sends to itself.
 */
#ifndef CT_DATATYPE_H
#define CT_DATATYPE_H

#include "core/ct_common.h"

typedef struct ct_typeinfo {
    MPI_Aint lb, extent;           /* as MPI_Type_get_extent */
    MPI_Aint true_lb, true_extent; /* as MPI_Type_get_true_extent */
    MPI_Aint size;                 /* bytes of data in one element */
    int contig; /* count elements occupy size*count bytes from true_lb */
} ct_typeinfo;

int ct_type_info(MPI_Datatype type, ct_typeinfo *ti);

/* A datatype handle the MPI library accepts: not null, and its size can be
 * asked (a stale or made-up handle fails there, quietly, with the library's
 * own checks, instead of inside an algorithm). Drivers check the datatypes
 * of a call an algorithm is to run with this before they use them. */
int ct_type_usable(MPI_Datatype type);

/* Packs (unpack = 0) count elements of type at buf into packed, back to back,
 * or unpacks them from there (unpack = 1), in pieces PMPI_Pack's int byte
 * counts can take: any count, one element of at most INT_MAX bytes
 * (MPI_ERR_TYPE otherwise). comm is an intra-communicator of this rank. */
int ct_pack_elems(const void *buf, MPI_Count count, MPI_Datatype type, const ct_typeinfo *t,
                  char *packed, int unpack, MPI_Comm comm);

/* Address of element displ of a buffer of elements of extent ext. */
static inline char *ct_elem_ptr(const void *buf, MPI_Aint displ, MPI_Aint ext)
{
    return (char *)buf + displ * ext;
}

/*
 * Copies scount elements of stype at src to rcount elements of rtype at dst
 * (the type signatures match, as in any MPI exchange). Contiguous types are
 * copied with memcpy, anything else through a send to self on comm (a
 * private communicator). comm must be an intra-communicator containing this
 * rank as rank: on an intercommunicator context use ctx->local_comm (on
 * ctx->comm, "rank" names a rank of the remote group).
 */
int ct_copy_typed(const void *src, MPI_Count scount, MPI_Datatype stype, void *dst,
                  MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm, int rank);

/*
 * Point-to-point calls with MPI_Count element counts: the MPI-4 large-count
 * routine where the library has it (CT_HAVE_LARGE_COUNT) and the count
 * needs it, the int routine otherwise. Without large-count routines no count
 * can exceed an int (every entry point then takes int counts), so a larger
 * one is an MPI_ERR_COUNT, never a truncation.
 */
int ct_isend(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
             MPI_Comm comm, MPI_Request *req);
int ct_irecv(void *buf, MPI_Count count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
             MPI_Request *req);
int ct_sendrecv(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, void *rbuf,
                MPI_Count rcount, MPI_Datatype rtype, int src, int tag, MPI_Comm comm);

#endif
