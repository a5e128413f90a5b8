/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdde_personalized.c - the personalized sparse dynamic data exchange
 * ([Geyko2023] section IV-A, Algorithm 1).
 *
 * Every rank starts its sends, then a reduction of per-destination message
 * counts tells each rank how many messages it will receive; it probes for
 * exactly that many (any source) and receives each as it is matched. The
 * reduction is MPI_Reduce_scatter_block of one int per rank, which delivers
 * to each rank only its own total (the paper's MPI_Allreduce of the P-long
 * array would deliver all of them).
 *
 * Cost: one Reduce_scatter_block of P ints (O(log P) latency, O(P) memory and
 * bandwidth per rank), plus one message per destination; receives are
 * matched by probing, so data lands in the unexpected queue first. When every
 * rank gives the exact number of messages it receives (MPIX_Info hint), the
 * reduction is skipped.
 */
#include "sdde/sdde_exchange.h"

#include <stdlib.h>

int ct_sdde_exchange_personalized(MPI_Comm comm, int tag, const ct_sdde_out *o, int nrecv,
                                  ct_sdde_box *box)
{
    int rc = MPI_SUCCESS, P;
    int *sizes = NULL;
    MPI_Request *reqs = NULL;
    CT_CALL(PMPI_Comm_size(comm, &P));
    CT_ALLOC(reqs, (size_t)o->n * sizeof *reqs);
    /* for i in 0..send_nnz: MPI_Isend message i to dest[i] */
    for (int i = 0; i < o->n; i++)
        CT_CALL(PMPI_Isend(o->ptr[i], o->bytes[i], MPI_BYTE, o->dest[i], tag, comm, &reqs[i]));
    /* sizes[proc] = messages to proc; the reduction gives sizes[rank] summed
     * over every rank: the number of messages this rank receives */
    if (nrecv < 0) {
        CT_ALLOC(sizes, (size_t)P * sizeof *sizes);
        for (int j = 0; j < P; j++)
            sizes[j] = 0;
        for (int i = 0; i < o->n; i++)
            sizes[o->dest[i]]++;
        CT_CALL(PMPI_Reduce_scatter_block(sizes, &nrecv, 1, MPI_INT, MPI_SUM, comm));
    }
    /* for i in 0..sizes[rank]: probe for a message and receive it */
    for (int k = 0; k < nrecv; k++) {
        MPI_Message msg;
        MPI_Status st;
        CT_CALL(PMPI_Mprobe(MPI_ANY_SOURCE, tag, comm, &msg, &st));
        CT_CALL(ct_sdde_recv_matched(box, &msg, &st));
    }
    /* wait for all sends to complete */
    CT_CALL(PMPI_Waitall(o->n, reqs, MPI_STATUSES_IGNORE));
out:
    free(sizes);
    free(reqs);
    return rc;
}

int ct_sdde_personalized(ct_sdde *x, ct_ctx *ctx, const long *params)
{
    (void)params;
    ct_sdde_count_internode(x, &x->out);
    return ct_sdde_exchange_personalized(ctx->comm, ct_sdde_tag(x, CT_TAG_SDDE), &x->out,
                                         x->known_nrecv, &x->got);
}
