/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv.h - what the MPI_Alltoallv algorithms share: per-call extents,
 * block addresses, the self-block copy, zero-size-aware point-to-point
 * helpers, and the driver that decides and runs (alltoallv.c).
 *
 * An algorithm never sees MPI_IN_PLACE: the driver serves it by copying the
 * receive blocks aside and running the algorithm out of the copy.
 * A block of zero bytes is never sent: the sender's and receiver's byte
 * counts are equal by the MPI standard, so both sides skip it alike.
 */
#ifndef CT_ALLTOALLV_H
#define CT_ALLTOALLV_H

#include "core/context.h"
#include "core/datatype.h"
#include "select/decide.h"
#include "select/spec.h"

typedef struct ct_a2av {
    const ct_alltoallv_args *a;
    ct_ctx *ctx;
    MPI_Aint sext, rext;   /* extents of sendtype / recvtype */
    MPI_Aint ssize, rsize; /* sizes (bytes of data) of one element */
} ct_a2av;

int ct_a2av_prepare(ct_a2av *x, const ct_alltoallv_args *a, ct_ctx *ctx);

/* Counts and displacements of peer's blocks, read through the description. */
static inline MPI_Count ct_a2av_scount(const ct_a2av *x, int peer)
{
    return ct_vec_at(&x->a->sendcounts, peer);
}
static inline MPI_Count ct_a2av_rcount(const ct_a2av *x, int peer)
{
    return ct_vec_at(&x->a->recvcounts, peer);
}
static inline const char *ct_a2av_sendblock(const ct_a2av *x, int peer)
{
    return ct_elem_ptr(x->a->sendbuf, (MPI_Aint)ct_vec_at(&x->a->sdispls, peer), x->sext);
}
static inline char *ct_a2av_recvblock(const ct_a2av *x, int peer)
{
    return ct_elem_ptr(x->a->recvbuf, (MPI_Aint)ct_vec_at(&x->a->rdispls, peer), x->rext);
}
static inline int ct_a2av_sends_to(const ct_a2av *x, int peer)
{
    return x->ssize != 0 && ct_a2av_scount(x, peer) != 0;
}
static inline int ct_a2av_recvs_from(const ct_a2av *x, int peer)
{
    return x->rsize != 0 && ct_a2av_rcount(x, peer) != 0;
}

/* Copies this rank's own block from the send to the receive buffer. */
int ct_a2av_self_copy(const ct_a2av *x);

/* Non-blocking send of block peer (MPI_REQUEST_NULL when it is empty). */
int ct_a2av_isend(const ct_a2av *x, int peer, MPI_Request *req);
/* Non-blocking receive of block peer (MPI_REQUEST_NULL when it is empty). */
int ct_a2av_irecv(const ct_a2av *x, int peer, MPI_Request *req);
/* Blocking exchange: send block send_to, receive block recv_from. */
int ct_a2av_sendrecv(const ct_a2av *x, int send_to, int recv_from);

/*
 * Sliding window of the multi-pair non-blocking exchanges ([Namugwanya2023]
 * Algorithms 4 and 5): stride sends and stride receives in flight in pairwise
 * order; whenever wait_any reports a completed request, the next send (or
 * receive) is started in its slot. wait_any returns an MPI code and sets *idx
 * to the completed request, or MPI_UNDEFINED once every request is null.
 */
typedef int (*ct_a2av_any_fn)(int n, MPI_Request *reqs, int *idx);
int ct_a2av_window(const ct_a2av *x, int stride, ct_a2av_any_fn wait_any);

/*
 * TuNA ([Fan2024] section III) among a group of ranks of ctx->comm, shared by
 * tuna (the group is the whole communicator) and tuna_hier_* (the group is
 * one node, section IV-A). Works on bytes; every size is a size_t, so no
 * byte count or offset is limited to int.
 *
 * A slot is a bundle of C blocks: slot i of member g holds, in rotated order,
 * the blocks g sends through member (g + i) mod size. source() gives block c
 * of the bundle this rank sends through member j (NULL and 0 bytes for none);
 * target() says where block c of the bundle from member j lands once it has
 * reached this rank, its last hop (NULL when bytes do not fit: an error).
 * Blocks known_c .. known_c + known_n - 1 of a bundle are the ones its
 * member itself receives: their sizes, known(j, c), are known at the
 * receiver, so they travel without metadata on their last hop. tuna_hier
 * knows one position (the block for the member itself), node_aware's lanes
 * every position (one block per rank of the sending node), and its leaders
 * the first Q (the leader's own; the rest it delivers inside its node).
 */

typedef struct ct_tuna_group {
    int size;           /* ranks in the group */
    int index;          /* this rank's index in the group */
    const int *rank_of; /* [size] rank in ctx->comm of each member; NULL: identity */
    int C;              /* blocks per slot */
    int known_c, known_n; /* the positions in a bundle its member receives */
    void *arg;
    const char *(*source)(void *arg, int j, int c, size_t *bytes);
    char *(*target)(void *arg, int j, int c, size_t bytes);
    size_t (*known)(void *arg, int j, int c);
} ct_tuna_group;

/* Buffers of ct_ctx_buffer() the TuNA engine uses (the others are free).
 * Digits alternate between the two send buffers: a digit's sends complete
 * during the next digit (alltoallv_tuna.c). */
enum { CT_BUF_TUNA_T, CT_BUF_TUNA_SEND, CT_BUF_TUNA_SEND_ODD, CT_BUF_TUNA_RECV_KNOWN,
       CT_BUF_TUNA_RECV_HDR, CT_BUF_TUNA_RECV_DATA };

/* Bytes of scratch ct_tuna_exchange() needs for this group and radix. */
size_t ct_tuna_scratch_bytes(const ct_tuna_group *grp, int radix);
/* Runs TuNA on the group: every rank of the group calls it with the same
 * radix. No rank needs to know any other rank's block sizes beforehand.
 * scratch holds ct_tuna_scratch_bytes() bytes (the caller counts them in
 * ctx->call_extra; the engine adds the buffers it grows). */
int ct_tuna_exchange(const ct_tuna_group *grp, ct_ctx *ctx, int radix, void *scratch);

/*
 * Carving one scratch allocation into typed arrays, each 64-byte aligned:
 * CT_CARVE(base, off, ptr, type, count) points ptr at base + off (unless base
 * is NULL: a first pass only measures) and advances off past count elements.
 */
#define CT_CARVE(base, off, ptr, type, count)                                      \
    do {                                                                           \
        if ((base) != NULL)                                                        \
            (ptr) = (type *)((base) + (off));                                      \
        (off) = CT_ALIGN_UP((off) + (size_t)(count) * sizeof(type));               \
    } while (0)

/* This rank's facts of a call for the decision (ct_local_facts_fn, no
 * communication): its largest block and the local restrictions it violates
 * (non-contiguous types, byte offsets beyond an int). */
int ct_alltoallv_local_facts(const void *args, const ct_ctx *ctx, ct_call_facts *f);

/*
 * The driver of MPI_Alltoallv and MPI_Alltoall (a->coll): decides (forced
 * spec, environment, rules) and runs the chosen algorithm on comm, the user's
 * intra-communicator. Used by every entry point of src/shim and by the direct
 * API, each of which fills the description a.
 */
int ct_alltoallv_dispatch(const ct_alltoallv_args *a, const ct_spec *forced);

/* Nothing to do (select/decide.h): is a an MPI_Alltoall whose blocks are
 * empty (with MPI_IN_PLACE the receive arguments describe both sides)? The
 * shim asks first, before anything else, so such a call costs what the MPI
 * library's own routine costs; ct_alltoall_forward_empty forwards it and
 * counts it as pmpi in the statistics. */
int ct_alltoall_is_empty(const ct_alltoallv_args *a);
int ct_alltoall_forward_empty(const ct_alltoallv_args *a);

#endif
