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

/*
 * A per-peer array of a call, counts or displacements, whatever its origin:
 * an int array (MPI_Alltoallv, the Fortran bindings), an MPI_Count or MPI_Aint
 * array (the MPI-4 large-count forms), or no array at all (MPI_Alltoall,
 * where element j is base + j * step: counts have step 0, displacements base
 * 0 and step the count). Every entry point describes its call with these, so
 * the algorithms never know which one was used and nothing is converted or
 * allocated per call. An array's element j is base + a[j] * step: the call's
 * own (base 0, step 1), or, in a byte view of a contiguous type
 * (ct_bytes_pair), the same array in bytes (ct_vec_affine). So only the
 * entry points, which describe the call as given, hand v to the MPI library.
 */
typedef enum ct_vec_kind { CT_VEC_INT, CT_VEC_COUNT, CT_VEC_AINT, CT_VEC_LINEAR } ct_vec_kind;

typedef struct ct_vec {
    ct_vec_kind kind;
    const void *v;        /* the array (CT_VEC_INT, CT_VEC_COUNT, CT_VEC_AINT) */
    MPI_Count base, step; /* element j: base + v[j] * step, or base + j * step */
} ct_vec;

static inline ct_vec ct_vec_int(const int *v) { return (ct_vec){CT_VEC_INT, v, 0, 1}; }
static inline ct_vec ct_vec_count(const MPI_Count *v) { return (ct_vec){CT_VEC_COUNT, v, 0, 1}; }
static inline ct_vec ct_vec_aint(const MPI_Aint *v) { return (ct_vec){CT_VEC_AINT, v, 0, 1}; }
static inline ct_vec ct_vec_linear(MPI_Count base, MPI_Count step)
{
    return (ct_vec){CT_VEC_LINEAR, NULL, base, step};
}

/* x seen as base + x[j] * scale (no array copied). */
static inline ct_vec ct_vec_affine(ct_vec x, MPI_Count base, MPI_Count scale)
{
    x.base = base + x.base * scale;
    x.step *= scale;
    return x;
}

static inline MPI_Count ct_vec_at(const ct_vec *x, int j)
{
    MPI_Count k = j;
    switch (x->kind) {
    case CT_VEC_INT:
        k = ((const int *)x->v)[j];
        break;
    case CT_VEC_COUNT:
        k = ((const MPI_Count *)x->v)[j];
        break;
    case CT_VEC_AINT:
        k = ((const MPI_Aint *)x->v)[j];
        break;
    case CT_VEC_LINEAR:
        break;
    }
    return x->base + k * x->step;
}


/*
 * The byte view of one side of a call: n blocks, block j ct_vec_at(counts, j)
 * elements of type at ct_vec_at(displs, j) extents from buf, seen as bytes.
 * A contiguous type is seen in place; any other is staged: its blocks lie
 * back to back in a buffer (ct_bytes_layout, ct_bytes_alloc), packed there
 * from the user's buffer (ct_bytes_pack) or unpacked from there
 * (ct_bytes_unpack). With stream, the caller needs the blocks back to back
 * from ct_bytes_stream(): a contiguous type is seen in place only when the
 * user's non-empty blocks already lie so. The one byte view of every
 * algorithm that works on bytes: the Alltoall(v) driver's, TuNA's, the
 * intercommunicator Allgather(v) driver's and the sparse exchange's.
 * Offsets are MPI_Aint: nothing here is limited to int.
 */
typedef struct ct_bytes {
    char *buf;
    ct_vec counts, displs; /* the call's, in elements and extents */
    MPI_Datatype type;
    ct_typeinfo t;
    int n;
    int staged;     /* the blocks go through staging */
    char *staging;  /* set by ct_bytes_layout or ct_bytes_alloc */
    size_t staged_bytes; /* its bytes, then */
    MPI_Aint *off;  /* staged: block j at staging + off[j] */
    void *owned;    /* what ct_bytes_alloc allocated */
} ct_bytes;

int ct_bytes_init(ct_bytes *v, const void *buf, int n, ct_vec counts, ct_vec displs,
                  MPI_Datatype type, int stream);

/* Bytes of block j. */
static inline size_t ct_bytes_len(const ct_bytes *v, int j)
{
    return (size_t)ct_vec_at(&v->counts, j) * (size_t)v->t.size;
}

/* Where block j's bytes are (staged: once laid out). */
static inline char *ct_bytes_block(const ct_bytes *v, int j)
{
    if (v->staged)
        return v->staging + v->off[j];
    return v->buf + (MPI_Aint)ct_vec_at(&v->displs, j) * v->t.extent + v->t.true_lb;
}

/* With stream: where the blocks start, back to back. */
char *ct_bytes_stream(const ct_bytes *v);

/* The staging's place in a buffer of the caller's at base + *off (64-byte
 * aligned pieces): with base NULL only advances *off by what it needs (0 in
 * place), else carves it. Returns the staged bytes (0 in place). */
size_t ct_bytes_layout(ct_bytes *v, char *base, size_t *off);

/*
 * Both sides of a call seen as bytes, each staged in memory of its own where
 * its type is not contiguous: what a driver hands an algorithm on bytes
 * (CT_A_BYTES), blocking or as a request's step. The caller packs s before
 * the algorithm runs and unpacks r after (ct_bytes_pack, ct_bytes_unpack).
 */
typedef struct ct_bytes_pair {
    ct_bytes s, r;
    MPI_Count *sarrays, *rarrays; /* [2n] byte counts and displacements, or NULL where
                                     the call's are linear (uniform blocks) */
    char *sbase, *rbase;          /* the byte view: MPI_BYTE blocks from these */
    ct_vec scounts, sdispls, rcounts, rdispls;
} ct_bytes_pair;

/* ns send blocks and nr receive blocks (the Alltoall(v)'s P and P, a
 * neighbourhood's out- and in-degrees). v is safe to free on failure. */
int ct_bytes_pair_init(ct_bytes_pair *v, const void *sendbuf, int ns, ct_vec scounts,
                       ct_vec sdispls, MPI_Datatype stype, void *recvbuf, int nr,
                       ct_vec rcounts, ct_vec rdispls, MPI_Datatype rtype);
/* Is v the call's own memory: nothing staged (contiguous types), so no
 * buffer or array of its own? */
int ct_bytes_pair_in_place(const ct_bytes_pair *v);
/* Bytes it holds (staging and arrays). */
size_t ct_bytes_pair_bytes(const ct_bytes_pair *v);
void ct_bytes_pair_free(ct_bytes_pair *v);

/* Lays the staging out in memory of its own (freed by ct_bytes_free). */
int ct_bytes_alloc(ct_bytes *v);
void ct_bytes_free(ct_bytes *v);

/* Staged: packs the user's blocks into staging, or unpacks them from it;
 * in place, nothing. comm is a communicator of this rank (PMPI_Pack's). */
int ct_bytes_pack(const ct_bytes *v, MPI_Comm comm);
int ct_bytes_unpack(const ct_bytes *v, MPI_Comm comm);

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
