/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_tuna_hier_staggered.c - staggered TuNA_l^g ([Fan2024] section
 * IV-B, Algorithm 2, Fig. 6a).
 *
 * Intra-node TuNA with the given radix (alltoallv_tuna_hier.c), then the
 * inter-node exchange between ranks of equal local index, ONE block per
 * step: step s = (k - 1) Q + j, for node offset k = 1 .. N-1 and local source
 * j = 0 .. Q-1, receives from the counterpart on node (n + k) mod N the block
 * of that node's rank j (straight into the receive buffer: its size is
 * recvcounts there) and sends the counterpart on node (n - k) mod N the block
 * of this node's rank j. Steps run in batches of block_count, each completed
 * by one Waitall (scattered, IV-A b). Algorithm 2 writes n where Q is meant
 * (lines 4, 6, 11, 13) and also walks the steps of its own node (k = 0),
 * which move nothing; here only the (N - 1) Q remote steps are counted.
 *
 * Nodes of different sizes: Q is the largest node; a step whose j lies
 * beyond a node's size moves nothing there. The block of rank (m, j) for
 * rank (n, g) comes from rank (m, g mod Q_m) (tuna_hier.h).
 *
 * Cost: intra-node TuNA on Q ranks, then (N - 1) Q inter-node steps of one
 * block (latency-friendly for short messages: no packing, no datatypes).
 */
#include "alltoallv/tuna_hier.h"

static int staggered_inter(ct_tuna_hier *H, int block_count)
{
    int rc = MPI_SUCCESS;
    const ct_alltoallv_args *a = H->a;
    const int N = H->N, n = H->n, Q = H->Q, Qn = H->Qn, steps = (N - 1) * Q;
    const int bc = block_count < steps ? block_count : steps;
    const int per = (Q + Qn - 1) / Qn; /* most D entries on one node */
    MPI_Request *reqs = ct_ctx_requests(H->ctx, bc * (1 + per));
    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    for (int first = 0; first < steps; first += bc) {
        const int last = first + bc < steps ? first + bc : steps;
        int nreq = 0;
        for (int s = first; s < last; s++) { /* Alg. 2 lines 3-9 */
            const int k = 1 + s / Q, j = s % Q, m = (n + k) % N;
            if (j >= H->node_size[m])
                continue;
            const int src = ct_tuna_hier_rank(H, m, j);
            const int count = (int)ct_vec_at(&a->recvcounts, src); /* byte view: int */
            if (count > 0)
                CT_CALL(PMPI_Irecv((char *)a->recvbuf + ct_vec_at(&a->rdispls, src), count,
                                   MPI_BYTE, ct_tuna_hier_rank(H, m, H->h % H->node_size[m]),
                                   CT_TAG_ALLTOALLV, H->ctx->comm, &reqs[nreq++]));
        }
        for (int s = first; s < last; s++) { /* Alg. 2 lines 10-16 */
            const int k = 1 + s / Q, j = s % Q, m = (n - k + N) % N;
            if (j >= Qn)
                continue;
            for (int d = H->d_first[m]; d < H->d_first[m + 1]; d++) {
                const int b = H->gsz[d * Qn + j];
                if (b > 0)
                    CT_CALL(PMPI_Isend(ct_tuna_hier_gblock(H, d, j), b, MPI_BYTE, H->d_rank[d],
                                       CT_TAG_ALLTOALLV, H->ctx->comm, &reqs[nreq++]));
            }
        }
        CT_CALL(PMPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
    }
out:
    return rc;
}

int ct_alltoallv_tuna_hier_staggered(const ct_alltoallv_args *a, ct_ctx *ctx,
                                     const long *params)
{
    return ct_tuna_hier_run(a, ctx, (int)params[0], (int)params[1], staggered_inter);
}
