/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdde_nonblocking.c - the non-blocking sparse dynamic data exchange, NBX
 * ([Geyko2023] section IV-B, Algorithm 2; [Hoefler2010]).
 *
 * Every message is a synchronous send (MPI_Issend), which completes only once
 * its receiver has matched it. Each rank probes for messages (any source) and
 * receives them as they come; once all of its own sends are complete it
 * enters a non-blocking barrier, and keeps probing until the barrier
 * completes: then every rank's sends have been matched, so nothing is left
 * in flight.
 *
 * Cost: one message per destination plus one Ibarrier (O(log P) latency), no
 * O(P) array anywhere. (Like every algorithm here but locality_dense it also
 * pays the driver's small allreduce, in which all ranks agree that every
 * rank's arguments are valid before anything is sent; NBX alone would not
 * need it.) Probes are matched probes (MPI_Improbe/MPI_Mrecv), so
 * a message is received exactly where it was found even if other threads
 * probe on other communicators.
 */
#include "sdde/sdde_exchange.h"

#include <stdlib.h>

int ct_sdde_exchange_nbx(MPI_Comm comm, int tag, const ct_sdde_out *o, ct_sdde_box *box)
{
    int rc = MPI_SUCCESS, done = 0;
    MPI_Request *reqs = NULL, barrier = MPI_REQUEST_NULL;
    CT_ALLOC(reqs, (size_t)o->n * sizeof *reqs);
    /* for i in 0..send_nnz: synchronous non-blocking send of message i */
    for (int i = 0; i < o->n; i++)
        CT_CALL(PMPI_Issend(o->ptr[i], o->bytes[i], MPI_BYTE, o->dest[i], tag, comm, &reqs[i]));
    while (!done) {
        /* if a non-blocking probe finds a message: receive it */
        int found;
        MPI_Message msg;
        MPI_Status st;
        CT_CALL(PMPI_Improbe(MPI_ANY_SOURCE, tag, comm, &found, &msg, &st));
        if (found) {
            CT_CALL(ct_sdde_recv_matched(box, &msg, &st));
            continue;
        }
        if (barrier == MPI_REQUEST_NULL) {
            /* all sends complete (matched by their receivers): non-blocking barrier */
            int sent;
            CT_CALL(PMPI_Testall(o->n, reqs, &sent, MPI_STATUSES_IGNORE));
            if (sent)
                CT_CALL(PMPI_Ibarrier(comm, &barrier));
        } else {
            /* until the barrier completes */
            CT_CALL(PMPI_Test(&barrier, &done, MPI_STATUS_IGNORE));
        }
    }
out:
    free(reqs);
    return rc;
}

int ct_sdde_nonblocking(ct_sdde *x, ct_ctx *ctx, const long *params)
{
    (void)params;
    ct_sdde_count_internode(x, &x->out);
    return ct_sdde_exchange_nbx(ctx->comm, ct_sdde_tag(x, CT_TAG_SDDE), &x->out, &x->got);
}
