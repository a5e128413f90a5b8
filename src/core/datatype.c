/*
 * datatype.c - datatype facts and typed local copies.
 */
#include "core/datatype.h"
#include "core/log.h"

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

int ct_copy_typed(const void *src, int scount, MPI_Datatype stype, void *dst, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm, int rank)
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
    CT_CALL(PMPI_Sendrecv(src, scount, stype, rank, CT_TAG_SELF, dst, rcount, rtype, rank,
                          CT_TAG_SELF, comm, MPI_STATUS_IGNORE));
out:
    return rc;
}
