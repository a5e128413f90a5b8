/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_tuna_hier_coalesced.c - coalesced TuNA_l^g ([Fan2024] section
 * IV-B, Algorithm 3, Fig. 6b).
 *
 * Intra-node TuNA with the given radix (alltoallv_tuna_hier.c), then the
 * inter-node exchange between ranks of equal local index: at node offset
 * k = 1 .. N-1 a rank receives from its counterpart on node (n + k) mod N the
 * Q blocks that node's ranks send it, in ONE message, and sends node
 * (n - k) mod N its counterpart's Q blocks in one message. The offsets run
 * in batches of block_count, each completed by one Waitall (scattered, IV-A
 * b). Algorithm 3 lines 22 and 26 take "% Q" where N is meant, and line 10
 * reuses n for a counter; here the node is always n, a counter never.
 * Before sending, each destination's blocks are compacted in G ("rearrange
 * T", line 19); the message is received straight into the receive buffer
 * (contiguous when the caller's rdispls make it so, else through an
 * hindexed datatype).
 *
 * Nodes of different sizes: a message from node m to rank (n, g) comes from
 * rank (m, g mod Q_m); a rank of a short node sends one message to each rank
 * it handles on a larger node (tuna_hier.h).
 *
 * Cost: intra-node TuNA on Q ranks, then N - 1 inter-node rounds of about Q
 * blocks (bandwidth-bound, long messages); block_count >= N - 1 posts them
 * all at once.
 */
#include "alltoallv/tuna_hier.h"

#include <string.h>

/* The receive of the message node m sends this rank, appended to s (none
 * when empty): straight into the receive buffer, through an hindexed
 * datatype where the caller's blocks are not back to back (made once,
 * kept in H->rtypes[m]). */
static int coalesced_recv(ct_tuna_hier *H, int m, ct_sched *s)
{
    int rc = MPI_SUCCESS, cnt = 0, contiguous = 1;
    const int Qm = H->node_size[m];
    const ct_alltoallv_args *a = H->a;
    MPI_Aint next = 0;
    size_t total = 0;
    /* The blocks of node m's ranks, in local order, where the caller wants them. */
    for (int j = 0; j < Qm; j++) {
        const int src = ct_tuna_hier_rank(H, m, j);
        /* the byte view: int counts and displacements (CT_R_INT_OFFSETS) */
        const int count = (int)ct_vec_at(&a->recvcounts, src);
        const MPI_Aint displ = (MPI_Aint)ct_vec_at(&a->rdispls, src);
        if (count == 0)
            continue;
        if (cnt > 0 && displ != next)
            contiguous = 0;
        H->blens[cnt] = count;
        H->displs[cnt++] = displ;
        next = displ + count;
        total += (size_t)count;
    }
    if (total == 0)
        return MPI_SUCCESS;
    const int from = ct_tuna_hier_rank(H, m, H->h % Qm);
    if (contiguous) {
        ct_sched_recv(s, (char *)a->recvbuf + H->displs[0], (MPI_Count)total, MPI_BYTE, from);
        return MPI_SUCCESS;
    }
    if (H->rtypes[m] == MPI_DATATYPE_NULL) {
        CT_CALL(PMPI_Type_create_hindexed(cnt, H->blens, H->displs, MPI_BYTE, &H->rtypes[m]));
        CT_CALL(PMPI_Type_commit(&H->rtypes[m]));
    }
    ct_sched_recv(s, a->recvbuf, 1, H->rtypes[m], from);
out:
    return rc;
}

/* "Rearrange T" (Algorithm 3 line 19): each D entry's blocks, in local
 * source order, moved to the front of its region of G; tot[d] their bytes. */
static void coalesced_compact(ct_tuna_hier *H)
{
    for (int d = 0; d < H->nd; d++) {
        char *base = ct_tuna_hier_gblock(H, d, 0);
        size_t pos = 0;
        for (int j = 0; j < H->Qn; j++) {
            const size_t b = (size_t)H->gsz[d * H->Qn + j];
            if (b > 0 && base + pos != ct_tuna_hier_gblock(H, d, j))
                memmove(base + pos, ct_tuna_hier_gblock(H, d, j), b);
            pos += b;
        }
        H->tot[d] = pos;
    }
}

/* G compacted, then a round per batch of block_count node offsets: the
 * receives from the nodes k ahead, the sends to the nodes k behind. */
int ct_tuna_hier_coalesced_inter(ct_tuna_hier *H, int block_count, ct_sched *s)
{
    int rc;
    const int N = H->N, n = H->n, steps = N - 1;
    const int bc = block_count < steps ? block_count : steps;
    CT_CALL(ct_sched_reserve(s, steps + H->nd, (steps + bc - 1) / bc));
    coalesced_compact(H);
    for (int first = 1; first <= steps; first += bc) {
        const int last = first + bc <= steps + 1 ? first + bc : steps + 1;
        ct_sched_round(s, 0);
        for (int k = first; k < last; k++) /* from the node k ahead (Alg. 3 line 22) */
            CT_CALL(coalesced_recv(H, (n + k) % N, s));
        for (int k = first; k < last; k++) { /* to the node k behind (Alg. 3 line 26) */
            const int m = (n - k + N) % N;
            for (int d = H->d_first[m]; d < H->d_first[m + 1]; d++)
                if (H->tot[d] > 0)
                    ct_sched_send(s, ct_tuna_hier_gblock(H, d, 0), (MPI_Count)H->tot[d],
                                  MPI_BYTE, H->d_rank[d]);
        }
    }
out:
    return rc;
}

int ct_alltoallv_tuna_hier_coalesced(const ct_alltoallv_args *a, ct_ctx *ctx,
                                     const long *params)
{
    return ct_tuna_hier_run(a, ctx, (int)params[0], (int)params[1],
                            ct_tuna_hier_coalesced_inter);
}

int ct_alltoallv_tuna_hier_coalesced_build(const ct_alltoallv_args *a, ct_ctx *ctx,
                                           const long *params, ct_sched *s)
{
    return ct_tuna_hier_build(a, ctx, (int)params[0], (int)params[1],
                              ct_tuna_hier_coalesced_inter, s);
}
