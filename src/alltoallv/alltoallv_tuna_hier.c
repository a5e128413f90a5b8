/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_tuna_hier.c - the part of hierarchical TuNA_l^g ([Fan2024]
 * section IV-A) that its staggered and coalesced variants share: node
 * tables, and the intra-node phase.
 *
 * Intra-node phase (IV-A a, the "implicit" strategy of Fig. 4b): the Q ranks
 * of a node run one TuNA among themselves (ct_tuna_exchange) on bundles: the
 * bundle a rank sends through local member l holds its blocks for every rank
 * l handles on every node (tuna_hier.h). Blocks for this node land in the
 * receive buffer; blocks for other nodes land in G, one M-byte block per
 * (destination, local source), ready for the inter-node phase of the variant
 * (alltoallv_tuna_hier_staggered.c, alltoallv_tuna_hier_coalesced.c).
 *
 * Memory: G holds about (N - 1) Q blocks of M bytes (M: the largest block of
 * the call, which the decision's allreduce provides), the intra-node T at
 * most (Q - K - 1) N blocks; the node tables are O(P) integers.
 */
#include "alltoallv/tuna_hier.h"

#include <string.h>


static int ceil_div(int a, int b) { return (a + b - 1) / b; }

/* Block c of the bundle this rank sends through local member j. */
static const char *hier_source(void *arg, int j, int c, size_t *bytes)
{
    const ct_tuna_hier *H = arg;
    const int m = H->pos_node[c], l = j + H->pos_k[c] * H->Qn;
    if (l >= H->node_size[m]) { /* member j handles no rank there */
        *bytes = 0;
        return NULL;
    }
    const int d = ct_tuna_hier_rank(H, m, l);
    *bytes = (size_t)ct_vec_at(&H->a->sendcounts, d);
    return (const char *)H->a->sendbuf + ct_vec_at(&H->a->sdispls, d);
}

/* Block c of the bundle from local member j, arrived at this rank. */
static char *hier_target(void *arg, int j, int c, size_t bytes)
{
    ct_tuna_hier *H = arg;
    if (c == H->known_c) { /* for this rank itself */
        const int src = ct_tuna_hier_rank(H, H->n, j);
        return bytes <= (size_t)ct_vec_at(&H->a->recvcounts, src)
                   ? (char *)H->a->recvbuf + ct_vec_at(&H->a->rdispls, src)
                   : NULL;
    }
    const int d = H->pos_d[c];
    if (d < 0 || bytes > H->M)
        return NULL;
    H->gsz[d * H->Qn + j] = (int)bytes; /* <= M, which fits an int (CT_R_INT_OFFSETS) */
    return ct_tuna_hier_gblock(H, d, j);
}

/* Bytes of the block from local member j for this rank itself. */
static size_t hier_known(void *arg, int j, int c)
{
    const ct_tuna_hier *H = arg;
    (void)c; /* known_c */
    return (size_t)ct_vec_at(&H->a->recvcounts, ct_tuna_hier_rank(H, H->n, j));
}

/* The largest block (bytes) any rank sends in the call, for G: from the
 * decision's allreduce (which CT_R_INT_OFFSETS makes happen), else one of
 * its own. */
static int max_block(const ct_alltoallv_args *a, ct_ctx *ctx, size_t *M)
{
    int rc = MPI_SUCCESS;
    long local = 0, global;
    if (a->msg_size >= 0) {
        *M = (size_t)a->msg_size;
        return MPI_SUCCESS;
    }
    for (int j = 0; j < ctx->size; j++)
        if (ct_vec_at(&a->sendcounts, j) > local)
            local = (long)ct_vec_at(&a->sendcounts, j);
    CT_CALL(PMPI_Allreduce(&local, &global, 1, MPI_LONG, MPI_MAX, ctx->comm));
    *M = (size_t)global;
out:
    return rc;
}

/* Counts C and nd, then carves the tables from base (NULL: only measures). */
static size_t hier_layout(ct_tuna_hier *H, char *base, int P)
{
    size_t off = 0;
    H->C = H->nd = 0;
    for (int m = 0; m < H->N; m++) {
        const int Qm = H->node_size[m];
        H->C += ceil_div(Qm, H->Qn);
        if (m != H->n && H->h < Qm)
            H->nd += ceil_div(Qm - H->h, H->Qn); /* l' = h, h + Qn, ... below Qm */
    }
    CT_CARVE(base, off, H->node_start, int, H->N + 1);
    CT_CARVE(base, off, H->rank_at, int, P);
    CT_CARVE(base, off, H->pos_node, int, H->C);
    CT_CARVE(base, off, H->pos_k, int, H->C);
    CT_CARVE(base, off, H->pos_d, int, H->C);
    CT_CARVE(base, off, H->d_rank, int, H->nd);
    CT_CARVE(base, off, H->d_first, int, H->N + 1);
    CT_CARVE(base, off, H->gsz, int, (size_t)H->nd * H->Qn);
    CT_CARVE(base, off, H->tot, size_t, H->nd);
    CT_CARVE(base, off, H->blens, int, H->Q);
    CT_CARVE(base, off, H->displs, MPI_Aint, H->Q);
    CT_CARVE(base, off, H->G, char, (size_t)H->nd * H->Qn * H->M);
    return off;
}

/* Fills the node-ordered ranks, bundle positions and D. */
static void hier_tables(ct_tuna_hier *H, int P)
{
    const ct_topo *topo = &H->ctx->topo;
    int c = 0;
    H->node_start[0] = 0;
    for (int m = 0; m < H->N; m++)
        H->node_start[m + 1] = H->node_start[m] + H->node_size[m];
    for (int r = 0; r < P; r++)
        H->rank_at[H->node_start[topo->node_of[r]] + topo->local_of[r]] = r;
    H->nd = 0;
    for (int m = 0; m < H->N; m++) {
        H->d_first[m] = H->nd;
        for (int k = 0; k < ceil_div(H->node_size[m], H->Qn); k++, c++) {
            const int l = H->h + k * H->Qn; /* the rank of node m this rank handles */
            H->pos_node[c] = m;
            H->pos_k[c] = k;
            H->pos_d[c] = -1;
            if (m == H->n)
                H->known_c = c; /* k = 0 only: this node has Qn ranks */
            else if (l < H->node_size[m]) {
                H->pos_d[c] = H->nd;
                H->d_rank[H->nd++] = ct_tuna_hier_rank(H, m, l);
            }
        }
    }
    H->d_first[H->N] = H->nd;
    memset(H->gsz, 0, (size_t)H->nd * H->Qn * sizeof(int));
}

int ct_tuna_hier_begin(ct_tuna_hier *H, const ct_alltoallv_args *a, ct_ctx *ctx, size_t *own)
{
    int rc;
    *H = (ct_tuna_hier){.a = a, .ctx = ctx};
    *own = 0;
    CT_CALL(max_block(a, ctx, &H->M));
    if (H->M == 0) /* every block is empty, as every rank knows */
        return MPI_SUCCESS;
    H->N = ctx->topo.N;
    H->n = ctx->topo.node;
    H->h = ctx->topo.local_rank;
    H->Q = ctx->topo.Q;
    H->node_size = ctx->topo.node_size;
    H->Qn = H->node_size[H->n];
    *own = hier_layout(H, NULL, ctx->size);
out:
    return rc;
}

void ct_tuna_hier_tables(ct_tuna_hier *H, char *scratch)
{
    hier_layout(H, scratch, H->ctx->size);
    hier_tables(H, H->ctx->size);
}

int ct_tuna_hier_run(const ct_alltoallv_args *a, ct_ctx *ctx, int radix, int block_count,
                     ct_tuna_inter_fn inter)
{
    int rc;
    ct_tuna_hier H;
    size_t own, bytes;
    char *scratch;
    CT_CALL(ct_tuna_hier_begin(&H, a, ctx, &own));
    if (H.M == 0)
        return MPI_SUCCESS;
    /* The intra-node group: this node's ranks in local order (IV-A a). */
    ct_tuna_group grp = {.arg = &H, .source = hier_source, .target = hier_target,
                         .known = hier_known, .size = H.Qn, .index = H.h, .C = H.C};
    bytes = own + ct_tuna_scratch_bytes(&grp, radix);
    scratch = ct_ctx_scratch(ctx, bytes);
    if (scratch == NULL)
        CT_CALL(MPI_ERR_NO_MEM);
    ctx->call_extra += bytes;
    ct_tuna_hier_tables(&H, scratch);
    grp.rank_of = H.rank_at + H.node_start[H.n];
    grp.known_c = H.known_c;
    grp.known_n = 1;
    CT_CALL(ct_tuna_exchange(&grp, ctx, radix, scratch + own));
    if (H.N > 1)
        CT_CALL(inter(&H, block_count));
out:
    return rc;
}
