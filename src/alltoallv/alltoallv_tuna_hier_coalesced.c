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

/* Posts the receive of the message node m sends this rank (null when empty). */
static int coalesced_irecv(ct_tuna_hier *H, int m, MPI_Request *req)
{
    int rc = MPI_SUCCESS, cnt = 0, contiguous = 1;
    const int Qm = H->node_size[m];
    const ct_alltoallv_args *a = H->a;
    MPI_Aint next = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    size_t total = 0;
    *req = MPI_REQUEST_NULL;
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
        CT_CALL(PMPI_Irecv((char *)a->recvbuf + H->displs[0], (int)total, MPI_BYTE, from,
                           CT_TAG_ALLTOALLV, H->ctx->comm, req));
    } else {
        CT_CALL(PMPI_Type_create_hindexed(cnt, H->blens, H->displs, MPI_BYTE, &type));
        CT_CALL(PMPI_Type_commit(&type));
        CT_CALL(PMPI_Irecv(a->recvbuf, 1, type, from, CT_TAG_ALLTOALLV, H->ctx->comm, req));
    }
out:
    /* A pending receive keeps its datatype alive (MPI_Type_free semantics). */
    if (type != MPI_DATATYPE_NULL)
        PMPI_Type_free(&type);
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

int ct_tuna_hier_coalesced_inter(ct_tuna_hier *H, int block_count)
{
    int rc = MPI_SUCCESS;
    const int N = H->N, n = H->n, steps = N - 1;
    const int bc = block_count < steps ? block_count : steps;
    const int per = (H->Q + H->Qn - 1) / H->Qn; /* most D entries on one node */
    MPI_Request *reqs = ct_ctx_requests(H->ctx, bc * (1 + per));
    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    coalesced_compact(H);
    for (int first = 1; first <= steps; first += bc) {
        const int last = first + bc <= steps + 1 ? first + bc : steps + 1;
        int nreq = 0;
        for (int k = first; k < last; k++) /* from the node k ahead (Alg. 3 line 22) */
            CT_CALL(coalesced_irecv(H, (n + k) % N, &reqs[nreq++]));
        for (int k = first; k < last; k++) { /* to the node k behind (Alg. 3 line 26) */
            const int m = (n - k + N) % N;
            for (int d = H->d_first[m]; d < H->d_first[m + 1]; d++)
                if (H->tot[d] > 0)
                    CT_CALL(PMPI_Isend(ct_tuna_hier_gblock(H, d, 0), (int)H->tot[d], MPI_BYTE,
                                       H->d_rank[d], CT_TAG_ALLTOALLV, H->ctx->comm,
                                       &reqs[nreq++]));
        }
        CT_CALL(PMPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
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
