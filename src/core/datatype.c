/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * datatype.c - datatype facts and typed local copies.
 */
#include "core/datatype.h"
#include "core/log.h"
#include "core/copy.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int ct_type_info(MPI_Datatype type, ct_typeinfo *ti)
{
    int rc;
    MPI_Count size;
    CT_CALL(PMPI_Type_get_extent(type, &ti->lb, &ti->extent));
    CT_CALL(PMPI_Type_get_true_extent(type, &ti->true_lb, &ti->true_extent));
    CT_CALL(PMPI_Type_size_x(type, &size));
    ti->size = (MPI_Aint)size;
    /* Contiguous: one element's data fills its true extent without holes, and
     * consecutive elements abut (extent == size). */
    ti->contig = ti->true_extent == ti->size && ti->extent == ti->size;
out:
    return rc;
}

int ct_type_usable(MPI_Datatype type)
{
    MPI_Count size;
    return type != MPI_DATATYPE_NULL && PMPI_Type_size_x(type, &size) == MPI_SUCCESS;
}

int ct_copy_typed(const void *src, MPI_Count scount, MPI_Datatype stype, void *dst,
                  MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm, int rank)
{
    int rc = MPI_SUCCESS;
    ct_typeinfo s, r;
    CT_CALL(ct_type_info(stype, &s));
    CT_CALL(ct_type_info(rtype, &r));
    MPI_Aint sbytes = (MPI_Aint)scount * s.size, rbytes = (MPI_Aint)rcount * r.size;
    if (sbytes == 0 && rbytes == 0)
        return MPI_SUCCESS;
    if (s.contig && r.contig && sbytes <= rbytes) {
        ct_memcpy((char *)dst + r.true_lb, (const char *)src + s.true_lb, (size_t)sbytes);
        return MPI_SUCCESS;
    }
    CT_CALL(ct_sendrecv(src, scount, stype, rank, dst, rcount, rtype, rank, CT_TAG_SELF, comm));
out:
    return rc;
}

#ifdef CT_HAVE_LARGE_COUNT
#define FITS_INT(n) 1 /* the _c routine takes any count */
#else
#define FITS_INT(n) ((n) <= INT_MAX)
#endif
#define NEEDS_C(n) ((n) > INT_MAX)

int ct_isend(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
             MPI_Comm comm, MPI_Request *req)
{
    if (!FITS_INT(count))
        return MPI_ERR_COUNT;
#ifdef CT_HAVE_LARGE_COUNT
    if (NEEDS_C(count))
        return PMPI_Isend_c(buf, count, type, dest, tag, comm, req);
#endif
    return PMPI_Isend(buf, (int)count, type, dest, tag, comm, req);
}

int ct_irecv(void *buf, MPI_Count count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
             MPI_Request *req)
{
    if (!FITS_INT(count))
        return MPI_ERR_COUNT;
#ifdef CT_HAVE_LARGE_COUNT
    if (NEEDS_C(count))
        return PMPI_Irecv_c(buf, count, type, src, tag, comm, req);
#endif
    return PMPI_Irecv(buf, (int)count, type, src, tag, comm, req);
}

int ct_sendrecv(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, void *rbuf,
                MPI_Count rcount, MPI_Datatype rtype, int src, int tag, MPI_Comm comm)
{
    if (!FITS_INT(scount) || !FITS_INT(rcount))
        return MPI_ERR_COUNT;
#ifdef CT_HAVE_LARGE_COUNT
    if (NEEDS_C(scount) || NEEDS_C(rcount))
        return PMPI_Sendrecv_c(sbuf, scount, stype, dest, tag, rbuf, rcount, rtype, src, tag,
                               comm, MPI_STATUS_IGNORE);
#endif
    return PMPI_Sendrecv(sbuf, (int)scount, stype, dest, tag, rbuf, (int)rcount, rtype, src, tag,
                         comm, MPI_STATUS_IGNORE);
}

/* PMPI_Pack and PMPI_Unpack take int byte counts: count elements go in
 * pieces that fit, whose packed forms are back to back. */
int ct_pack_elems(const void *buf, MPI_Count count, MPI_Datatype type, const ct_typeinfo *t,
                  char *packed, int unpack, MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    if (t->size > INT_MAX)
        return MPI_ERR_TYPE;
    const MPI_Aint piece = t->size > 0 ? INT_MAX / t->size : count;
    for (MPI_Aint done = 0; done < count; done += piece) {
        const int n = (int)(count - done < piece ? count - done : piece);
        const int bytes = (int)(n * t->size);
        char *elems = (char *)buf + done * t->extent;
        char *at = packed + (size_t)done * (size_t)t->size;
        int pos = 0;
        if (unpack)
            CT_CALL(PMPI_Unpack(at, bytes, &pos, elems, n, type, comm));
        else
            CT_CALL(PMPI_Pack(elems, n, type, at, bytes, &pos, comm));
        if (pos != bytes) /* coltune's packed format is the data (homogeneous MPI) */
            return MPI_ERR_TYPE;
    }
out:
    return rc;
}

/* Whether the non-empty blocks of a contiguous type lie back to back in the
 * user's buffer, in block order. */
static int back_to_back(const ct_bytes *v)
{
    int first = -1;
    MPI_Aint next = 0;
    for (int j = 0; j < v->n; j++) {
        const MPI_Aint at = (MPI_Aint)ct_vec_at(&v->displs, j) * v->t.extent;
        const size_t len = ct_bytes_len(v, j);
        if (len == 0)
            continue;
        if (first >= 0 && at != next)
            return 0;
        first = first < 0 ? j : first;
        next = at + (MPI_Aint)len;
    }
    return 1;
}

int ct_bytes_init(ct_bytes *v, const void *buf, int n, ct_vec counts, ct_vec displs,
                  MPI_Datatype type, int stream)
{
    *v = (ct_bytes){.buf = (char *)buf, .counts = counts, .displs = displs, .type = type, .n = n};
    const int rc = ct_type_info(type, &v->t);
    if (rc == MPI_SUCCESS) /* v->t is read only once it is known */
        v->staged = !v->t.contig || (stream && !back_to_back(v));
    return rc;
}

char *ct_bytes_stream(const ct_bytes *v)
{
    if (v->staged)
        return v->staging;
    for (int j = 0; j < v->n; j++)
        if (ct_bytes_len(v, j) > 0)
            return ct_bytes_block(v, j);
    return v->buf;
}

size_t ct_bytes_layout(ct_bytes *v, char *base, size_t *off)
{
    size_t total = 0;
    if (!v->staged)
        return 0;
    if (base != NULL)
        v->off = (MPI_Aint *)(base + *off);
    *off = CT_ALIGN_UP(*off + (size_t)v->n * sizeof(MPI_Aint));
    for (int j = 0; j < v->n; j++) {
        if (base != NULL)
            v->off[j] = (MPI_Aint)total;
        total += ct_bytes_len(v, j);
    }
    if (base != NULL) {
        v->staging = base + *off;
        v->staged_bytes = total;
    }
    *off = CT_ALIGN_UP(*off + total);
    return total;
}

int ct_bytes_alloc(ct_bytes *v)
{
    size_t bytes = 0, off = 0;
    ct_bytes_layout(v, NULL, &bytes);
    if (bytes == 0)
        return MPI_SUCCESS;
    v->owned = malloc(bytes);
    if (v->owned == NULL)
        return MPI_ERR_NO_MEM;
    ct_bytes_layout(v, v->owned, &off);
    return MPI_SUCCESS;
}

void ct_bytes_free(ct_bytes *v)
{
    free(v->owned);
    v->owned = NULL;
}

/* (Un)packs block j between the user's buffer and staging. */
static int pack_block(const ct_bytes *v, int j, int unpack, MPI_Comm comm)
{
    const size_t len = ct_bytes_len(v, j);
    char *user = v->buf + (MPI_Aint)ct_vec_at(&v->displs, j) * v->t.extent;
    if (len == 0)
        return MPI_SUCCESS;
    if (v->t.contig) { /* staged for a stream only */
        if (unpack)
            ct_memcpy(user + v->t.true_lb, ct_bytes_block(v, j), len);
        else
            ct_memcpy(ct_bytes_block(v, j), user + v->t.true_lb, len);
        return MPI_SUCCESS;
    }
    return ct_pack_elems(user, ct_vec_at(&v->counts, j), v->type, &v->t, ct_bytes_block(v, j),
                         unpack, comm);
}

static int pack_all(const ct_bytes *v, int unpack, MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    for (int j = 0; v->staged && j < v->n; j++)
        CT_CALL(pack_block(v, j, unpack, comm));
out:
    return rc;
}

int ct_bytes_pack(const ct_bytes *v, MPI_Comm comm) { return pack_all(v, 0, comm); }
int ct_bytes_unpack(const ct_bytes *v, MPI_Comm comm) { return pack_all(v, 1, comm); }

/*
 * One side's blocks as MPI_BYTE counts and displacements from *base (the
 * staging, or the user's buffer): seen in place, the call's own vectors in
 * bytes (ct_vec_affine); staged, linear when the call's are (uniform
 * blocks), else MPI_Count arrays in *arrays ([2n], freed by the caller).
 */
static int bytes_vecs(const ct_bytes *v, MPI_Count **arrays, ct_vec *counts, ct_vec *displs,
                      char **base)
{
    const int P = v->n;
    *base = v->staged ? v->staging : v->buf;
    if (!v->staged) { /* block j: counts[j] * size bytes at displs[j] * extent + true_lb */
        *counts = ct_vec_affine(v->counts, 0, (MPI_Count)v->t.size);
        *displs = ct_vec_affine(v->displs, v->t.true_lb, v->t.extent);
        return MPI_SUCCESS;
    }
    if (v->counts.kind == CT_VEC_LINEAR && v->displs.kind == CT_VEC_LINEAR) {
        const MPI_Count bytes = (MPI_Count)ct_bytes_len(v, 0);
        *counts = ct_vec_linear(bytes, 0);
        *displs = ct_vec_linear(0, bytes); /* back to back */
        return MPI_SUCCESS;
    }
    *arrays = malloc((size_t)(P > 0 ? P : 1) * 2 * sizeof(MPI_Count));
    if (*arrays == NULL)
        return MPI_ERR_NO_MEM;
    for (int j = 0; j < P; j++) {
        (*arrays)[j] = (MPI_Count)ct_bytes_len(v, j);
        (*arrays)[P + j] = (MPI_Count)(ct_bytes_block(v, j) - *base);
    }
    *counts = ct_vec_count(*arrays);
    *displs = ct_vec_count(*arrays + P);
    return MPI_SUCCESS;
}

int ct_bytes_pair_init(ct_bytes_pair *v, const void *sendbuf, int ns, ct_vec scounts,
                       ct_vec sdispls, MPI_Datatype stype, void *recvbuf, int nr,
                       ct_vec rcounts, ct_vec rdispls, MPI_Datatype rtype)
{
    int rc;
    memset(v, 0, sizeof *v);
    CT_CALL(ct_bytes_init(&v->s, sendbuf, ns, scounts, sdispls, stype, 0));
    CT_CALL(ct_bytes_init(&v->r, recvbuf, nr, rcounts, rdispls, rtype, 0));
    CT_CALL(ct_bytes_alloc(&v->s));
    CT_CALL(ct_bytes_alloc(&v->r));
    CT_CALL(bytes_vecs(&v->s, &v->sarrays, &v->scounts, &v->sdispls, &v->sbase));
    CT_CALL(bytes_vecs(&v->r, &v->rarrays, &v->rcounts, &v->rdispls, &v->rbase));
out:
    return rc;
}

int ct_bytes_pair_in_place(const ct_bytes_pair *v)
{
    return !v->s.staged && !v->r.staged; /* and so no arrays (bytes_vecs) */
}

size_t ct_bytes_pair_bytes(const ct_bytes_pair *v)
{
    return v->s.staged_bytes + v->r.staged_bytes +
           (v->sarrays != NULL ? 2 * (size_t)v->s.n * sizeof(MPI_Count) : 0) +
           (v->rarrays != NULL ? 2 * (size_t)v->r.n * sizeof(MPI_Count) : 0);
}

void ct_bytes_pair_free(ct_bytes_pair *v)
{
    free(v->sarrays);
    free(v->rarrays);
    ct_bytes_free(&v->s);
    ct_bytes_free(&v->r);
    v->sarrays = v->rarrays = NULL;
}
