/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv.c - the MPI_Alltoallv driver (the helpers its algorithms share
 * are in a2av_p2p.c).
 */
#include "alltoallv/alltoallv.h"
#include "alltoallv/a2av_p2p.h"
#include "core/device.h"
#include "core/log.h"
#include "core/state.h"
#include "stats.h"
#include "select/decide.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Per-call facts for the decision                                     */
/* ------------------------------------------------------------------ */

int ct_alltoallv_local_facts(const void *args, const ct_ctx *ctx, ct_call_facts *f)
{
    return ct_a2av_local_facts(args, ctx->size, &f->msg_size, &f->violations);
}

/* Device memory of one side of a call: the address of its first non-empty
 * block (a buffer without data is not device memory, whatever its address). */
static unsigned side_device(const void *buf, int P, const ct_vec *counts, const ct_vec *displs,
                            MPI_Datatype type)
{
    ct_typeinfo t;
    for (int j = 0; j < P; j++) {
        if (ct_vec_at(counts, j) <= 0)
            continue;
        if (ct_type_info(type, &t) != MPI_SUCCESS)
            return 0; /* the MPI library will say what is wrong */
        return ct_device_memory(ct_elem_ptr(buf, (MPI_Aint)ct_vec_at(displs, j), t.extent) +
                                t.true_lb);
    }
    return 0;
}

/* ct_device_memory_fn: the receive side, then the send side (not MPI_IN_PLACE). */
static unsigned device_memory(const void *args, const ct_ctx *ctx)
{
    const ct_alltoallv_args *a = args;
    unsigned dev = side_device(a->recvbuf, ctx->size, &a->recvcounts, &a->rdispls, a->recvtype);
    if (dev == 0 && a->sendbuf != MPI_IN_PLACE)
        dev = side_device(a->sendbuf, ctx->size, &a->sendcounts, &a->sdispls, a->sendtype);
    return dev;
}

/* ------------------------------------------------------------------ */
/* MPI_IN_PLACE                                                        */
/* ------------------------------------------------------------------ */

/*
 * With MPI_IN_PLACE the block for peer j is receive block j, and the block
 * received from j replaces it. The bytes spanned by all receive blocks are
 * copied aside once and the algorithm runs with the copy as its send buffer
 * (same counts, displacements and type), which is exactly the standard's
 * semantics. *tmp receives the allocation (NULL when nothing is sent).
 */
static int inplace_args(const ct_alltoallv_args *a, int P, ct_alltoallv_args *out, void **tmp,
                        size_t *tmp_bytes)
{
    int rc;
    ct_typeinfo r;
    MPI_Aint lo = 0, hi = 0;
    int any = 0;
    *tmp = NULL;
    *tmp_bytes = 0;
    CT_CALL(ct_type_info(a->recvtype, &r));
    for (int j = 0; j < P; j++) {
        const MPI_Count count = ct_vec_at(&a->recvcounts, j);
        if (count == 0)
            continue;
        MPI_Aint start = (MPI_Aint)ct_vec_at(&a->rdispls, j) * r.extent + r.true_lb;
        MPI_Aint end = start + (MPI_Aint)(count - 1) * r.extent + r.true_extent;
        lo = (!any || start < lo) ? start : lo;
        hi = (!any || end > hi) ? end : hi;
        any = 1;
    }
    *out = *a;
    out->sendcounts = a->recvcounts;
    out->sdispls = a->rdispls;
    out->sendtype = a->recvtype;
    out->sendbuf = a->recvbuf;
    if (any && hi > lo) {
        CT_ALLOC(*tmp, (size_t)(hi - lo));
        memcpy(*tmp, (char *)a->recvbuf + lo, (size_t)(hi - lo));
        *tmp_bytes = (size_t)(hi - lo);
        /* The usual MPI idiom: a base address such that base + lo is the copy. */
        out->sendbuf = (char *)*tmp - lo;
    }
out:
    return rc;
}

/* ------------------------------------------------------------------ */
/* Packed bytes (CT_A_BYTES)                                           */
/* ------------------------------------------------------------------ */

/*
 * The byte view of one side of a call: counts and displacements in bytes of
 * MPI_BYTE (linear, without any array, for MPI_Alltoall's uniform blocks). A
 * contiguous type is viewed in place (displacement in bytes from the user's
 * buffer, lower bound included); any other type is packed into (send) or
 * received through (recv) a contiguous staging buffer. Counts and offsets
 * are MPI_Count: the view itself limits nothing to int (an algorithm that
 * needs int offsets declares CT_R_INT_OFFSETS).
 */
typedef struct byte_side {
    ct_vec counts, displs;   /* in bytes; MPI_Count arrays, or linear for MPI_Alltoall */
    MPI_Count *arrays;       /* [2P] the counts, then the displacements (NULL when linear) */
    char *staging;           /* NULL when the user's buffer is viewed in place */
    size_t staging_bytes;
} byte_side;

static void byte_side_free(byte_side *b)
{
    free(b->arrays);
    free(b->staging);
}

/* The byte counts and displacements: linear when the call's are (uniform
 * blocks of MPI_Alltoall: no per-call array), else MPI_Count arrays. */
static int byte_side_layout(byte_side *b, int P, const ct_vec *counts, const ct_vec *displs,
                            const ct_typeinfo *t)
{
    int rc = MPI_SUCCESS;
    MPI_Count pos = 0;
    if (counts->kind == CT_VEC_LINEAR && displs->kind == CT_VEC_LINEAR) {
        const MPI_Count bytes = counts->base * t->size;
        b->counts = ct_vec_linear(bytes, 0);
        b->displs = t->contig ? ct_vec_linear(displs->base * t->extent + t->true_lb,
                                              displs->step * t->extent)
                              : ct_vec_linear(0, bytes); /* packed back to back */
        b->staging_bytes = (size_t)(P * bytes);
        return MPI_SUCCESS;
    }
    CT_ALLOC(b->arrays, (size_t)P * 2 * sizeof(MPI_Count));
    MPI_Count *bcounts = b->arrays, *bdispls = b->arrays + P;
    for (int j = 0; j < P; j++) {
        bcounts[j] = ct_vec_at(counts, j) * t->size;
        bdispls[j] = t->contig ? ct_vec_at(displs, j) * t->extent + t->true_lb : pos;
        pos += bcounts[j];
    }
    b->counts = ct_vec_count(bcounts);
    b->displs = ct_vec_count(bdispls);
    b->staging_bytes = (size_t)pos;
out:
    return rc;
}

/* Packs (unpack = 0) or unpacks a staged side's blocks, in the user's type. */
static int byte_side_pack(const byte_side *b, const ct_vec *counts, const ct_vec *displs,
                          MPI_Datatype type, const ct_typeinfo *t, const void *buf, int P,
                          MPI_Comm comm, int unpack)
{
    int rc = MPI_SUCCESS;
    for (int j = 0; j < P; j++)
        CT_CALL(ct_pack_elems(ct_elem_ptr(buf, (MPI_Aint)ct_vec_at(displs, j), t->extent),
                              ct_vec_at(counts, j), type, t,
                              b->staging + ct_vec_at(&b->displs, j), unpack, comm));
out:
    return rc;
}

static int byte_side_init(byte_side *b, int P, const ct_vec *counts, const ct_vec *displs,
                          MPI_Datatype type, const void *buf, MPI_Comm comm, int pack)
{
    int rc = MPI_SUCCESS;
    ct_typeinfo t;
    memset(b, 0, sizeof *b);
    CT_CALL(ct_type_info(type, &t));
    CT_CALL(byte_side_layout(b, P, counts, displs, &t));
    if (t.contig) {
        b->staging_bytes = 0;
        return MPI_SUCCESS;
    }
    CT_ALLOC(b->staging, b->staging_bytes > 0 ? b->staging_bytes : 1);
    if (pack)
        CT_CALL(byte_side_pack(b, counts, displs, type, &t, buf, P, comm, 0));
out:
    return rc;
}

/* Unpacks a staged receive side into the user's buffer. */
static int byte_side_unpack(const byte_side *b, const ct_alltoallv_args *a, int P, MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    ct_typeinfo t;
    if (b->staging == NULL)
        return MPI_SUCCESS;
    CT_CALL(ct_type_info(a->recvtype, &t));
    CT_CALL(byte_side_pack(b, &a->recvcounts, &a->rdispls, a->recvtype, &t, a->recvbuf, P,
                           comm, 1));
out:
    return rc;
}

/* Runs alg on the byte view of a. */
static int run_bytes(ct_ctx *ctx, const ct_choice *ch, const ct_alltoallv_args *a)
{
    int rc, P = ctx->size;
    byte_side s = {0}, r = {0};
    CT_CALL(byte_side_init(&s, P, &a->sendcounts, &a->sdispls, a->sendtype, a->sendbuf,
                           ctx->comm, 1));
    CT_CALL(byte_side_init(&r, P, &a->recvcounts, &a->rdispls, a->recvtype, a->recvbuf,
                           ctx->comm, 0));
    ct_alltoallv_args b = *a;
    b.sendbuf = s.staging ? s.staging : a->sendbuf;
    b.sendcounts = s.counts;
    b.sdispls = s.displs;
    b.sendtype = MPI_BYTE;
    b.recvbuf = r.staging ? r.staging : a->recvbuf;
    b.recvcounts = r.counts;
    b.rdispls = r.displs;
    b.recvtype = MPI_BYTE;
    CT_CALL(ch->alg->run.alltoallv(&b, ctx, ch->params));
    CT_CALL(byte_side_unpack(&r, a, P, ctx->comm));
    ctx->call_extra += s.staging_bytes + r.staging_bytes;
out:
    byte_side_free(&s);
    byte_side_free(&r);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The driver                                                          */
/* ------------------------------------------------------------------ */

/* Bytes this rank sends (with MPI_IN_PLACE, which pmpi sees, the send side
 * is the receive arguments: the send type may be MPI_DATATYPE_NULL). */
static double bytes_sent(const ct_alltoallv_args *a, int P)
{
    const int inplace = a->sendbuf == MPI_IN_PLACE;
    const ct_vec *counts = inplace ? &a->recvcounts : &a->sendcounts;
    MPI_Count size;
    double total = 0;
    if (PMPI_Type_size_x(inplace ? a->recvtype : a->sendtype, &size) != MPI_SUCCESS)
        return 0;
    for (int j = 0; j < P; j++)
        total += (double)ct_vec_at(counts, j) * (double)size;
    return total;
}

/*
 * Arguments the MPI library must reject (a negative count, a datatype that
 * is null or not a datatype, on a side that is used). Such a call is not run
 * by an algorithm but forwarded, so the user gets the library's own error
 * class through the communicator's error handler, as without coltune. It is
 * checked on local arguments only, like the library's own checks (an
 * erroneous program fails as it would natively), and only when an algorithm
 * other than pmpi was chosen: the pass-through pays nothing for it.
 */
static int args_usable(const ct_alltoallv_args *a, int P)
{
    const int inplace = a->sendbuf == MPI_IN_PLACE;
    if (!ct_type_usable(a->recvtype) || (!inplace && !ct_type_usable(a->sendtype)))
        return 0;
    for (int j = 0; j < P; j++)
        if (ct_vec_at(&a->recvcounts, j) < 0 || (!inplace && ct_vec_at(&a->sendcounts, j) < 0))
            return 0;
    return 1;
}

static int run_choice(ct_ctx *ctx, const ct_choice *ch, const ct_alltoallv_args *a,
                      long msg_size)
{
    int rc, stats = ct_settings_get()->stats;
    double t0 = stats ? PMPI_Wtime() : 0;
    void *tmp = NULL;
    size_t tmp_bytes = 0;
    ct_alltoallv_args copy = *a;
    ctx->call_extra = 0;
    if (a->sendbuf == MPI_IN_PLACE && ch->alg->run.alltoallv != ct_alltoallv_pmpi)
        CT_CALL(inplace_args(a, ctx->size, &copy, &tmp, &tmp_bytes));
    copy.msg_size = msg_size;
    if (ch->alg->restrictions & CT_A_BYTES)
        CT_CALL(run_bytes(ctx, ch, &copy));
    else
        CT_CALL(ch->alg->run.alltoallv(&copy, ctx, ch->params));
    if (stats)
        ct_stats_record(ct_algorithm_index(ch->alg), bytes_sent(&copy, ctx->size),
                        PMPI_Wtime() - t0, ctx->call_extra + tmp_bytes);
out:
    free(tmp);
    return rc;
}

int ct_alltoall_is_empty(const ct_alltoallv_args *a)
{
    return a->coll == CT_COLL_ALLTOALL && a->recvcounts.base == 0 &&
           (a->sendbuf == MPI_IN_PLACE || a->sendcounts.base == 0);
}

int ct_alltoall_empty_at_once(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    const ct_state *st = ct_state_get();
    return recvcount == 0 && (sendbuf == MPI_IN_PLACE || sendcount == 0) &&
           !st->settings->stats && !st->settings->disabled && !st->finalizing &&
           comm != MPI_COMM_NULL && recvtype != MPI_DATATYPE_NULL &&
           (sendbuf == MPI_IN_PLACE || sendtype != MPI_DATATYPE_NULL);
}

int ct_alltoall_forward_empty(const ct_alltoallv_args *a)
{
    if (ct_alltoall_empty_at_once(a->sendbuf, a->sendcounts.base, a->sendtype,
                                  a->recvcounts.base, a->recvtype, a->comm))
        return MPI_SUCCESS;
    if (!ct_settings_get()->stats)
        return a->forward(a);
    double t0 = PMPI_Wtime();
    int rc = a->forward(a);
    ct_decide_count_empty(a->coll, PMPI_Wtime() - t0);
    return rc;
}

int ct_alltoallv_dispatch(const ct_alltoallv_args *a, const ct_spec *forced)
{
    ct_ctx *ctx;
    ct_choice choice;
    if (ct_alltoall_is_empty(a))
        return ct_alltoall_forward_empty(a);
    /* MPI_Alltoall: the block size is the same on every rank by the standard
     * (matching type signatures), so msg_size costs no communication. */
    ct_decide_input call = {.coll = a->coll, .args = a, .local_facts = ct_alltoallv_local_facts,
                            .msg_size_is_global = ct_coll_msg_size_known(a->coll),
                            .device_memory = device_memory};
    int rc = ct_decide_call(a->comm, &call, forced, &ctx, &choice);
    if (rc != MPI_SUCCESS)
        return rc;
    /* pmpi is the fallback of both collectives (one registry function) */
    if (ctx == NULL ||
        (choice.alg->run.alltoallv != ct_alltoallv_pmpi && !args_usable(a, ctx->size)))
        return a->forward(a);
    return run_choice(ctx, &choice, a, call.have_facts ? call.facts.msg_size : -1);
}

int ct_alltoallv_pmpi(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params)
{
    (void)ctx;
    (void)params;
    return a->forward(a);
}
