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

/* A round per batch of block_count steps: the receives of its steps, each
 * straight into the receive buffer, then its sends from G. */
static int staggered_inter(ct_tuna_hier *H, int block_count, ct_sched *s)
{
    int rc;
    const ct_alltoallv_args *a = H->a;
    const int N = H->N, n = H->n, Q = H->Q, Qn = H->Qn, steps = (N - 1) * Q;
    const int bc = block_count < steps ? block_count : steps;
    CT_CALL(ct_sched_reserve(s, steps + H->nd * Qn, (steps + bc - 1) / bc));
    for (int first = 0; first < steps; first += bc) {
        const int last = first + bc < steps ? first + bc : steps;
        ct_sched_round(s, 0);
        for (int st = first; st < last; st++) { /* Alg. 2 lines 3-9 */
            const int k = 1 + st / Q, j = st % Q, m = (n + k) % N;
            if (j >= H->node_size[m])
                continue;
            const int src = ct_tuna_hier_rank(H, m, j);
            const MPI_Count count = ct_vec_at(&a->recvcounts, src); /* byte view */
            if (count > 0)
                ct_sched_recv(s, (char *)a->recvbuf + ct_vec_at(&a->rdispls, src), count,
                              MPI_BYTE, ct_tuna_hier_rank(H, m, H->h % H->node_size[m]));
        }
        for (int st = first; st < last; st++) { /* Alg. 2 lines 10-16 */
            const int k = 1 + st / Q, j = st % Q, m = (n - k + N) % N;
            if (j >= Qn)
                continue;
            for (int d = H->d_first[m]; d < H->d_first[m + 1]; d++) {
                const int b = H->gsz[d * Qn + j];
                if (b > 0)
                    ct_sched_send(s, ct_tuna_hier_gblock(H, d, j), b, MPI_BYTE, H->d_rank[d]);
            }
        }
    }
out:
    return rc;
}

int ct_alltoallv_tuna_hier_staggered(const ct_alltoallv_args *a, ct_ctx *ctx,
                                     const long *params)
{
    return ct_tuna_hier_run(a, ctx, (int)params[0], (int)params[1], staggered_inter);
}

int ct_alltoallv_tuna_hier_staggered_build(const ct_alltoallv_args *a, ct_ctx *ctx,
                                           const long *params, ct_sched *s)
{
    return ct_tuna_hier_build(a, ctx, (int)params[0], (int)params[1], staggered_inter, s);
}
