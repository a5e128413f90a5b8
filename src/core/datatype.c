/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * datatype.c - datatype facts and typed local copies.
 */
#include "core/datatype.h"
#include "core/log.h"

#include <limits.h>
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
        memcpy((char *)dst + r.true_lb, (const char *)src + s.true_lb, (size_t)sbytes);
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
    }
out:
    return rc;
}
