/*
 * alltoallv_node_aware.c - node-aware hierarchical Alltoallv: coalesced
 * TuNA_l^g (paper 001 section IV-B, Algorithm 3) with its intra-node phase
 * done through the node's shared-memory window instead of point-to-point
 * TuNA.
 *
 * Intra-node phase. Every rank publishes all its blocks (one stream of P
 * blocks, shm_stream.h) in its part of its node's window; after the one
 * synchronisation per round, rank (n, h) copies out of the part of every
 * rank j of its node
 *   - j's block for itself, into its receive buffer (j = h: its own block);
 *   - j's block for every rank it handles on other nodes (D, tuna_hier.h),
 *     into G, the buffer the inter-node phase sends from.
 * That is Algorithm 3's "rearrange T" done by the reads themselves: where
 * TuNA moves a block through up to log_r Q hops of messages, each block
 * here crosses memory twice.
 *
 * Inter-node phase: Algorithm 3's (ct_tuna_hier_coalesced_inter): one
 * message per node pair and local index, block_count node offsets at a time.
 *
 * The window spans a node's ranks: real nodes, or emulated ones
 * (COLTUNE_PPN) when the whole communicator shares memory
 * (CT_R_NODE_SHARED_MEMORY). If some node cannot set up its window, every
 * rank learns it at the first call and the communicator's calls run
 * tuna_hier_coalesced (radix 2) instead, which needs no shared memory.
 */
#include "alltoallv/shm_stream.h"
#include "alltoallv/tuna_hier.h"

/* The node's window: a node communicator (ranks in local order) and its
 * window, created by the first call (collectively over ctx->comm). */
static int node_window(ct_ctx *ctx, ct_shm_stream **s)
{
    int rc = MPI_SUCCESS;
    MPI_Comm node = MPI_COMM_NULL;
    if (ctx->ext[CT_EXT_A2A_NODE].p == NULL)
        CT_CALL(PMPI_Comm_split(ctx->comm, ctx->topo.node, ctx->topo.local_rank, &node));
    CT_CALL(ct_shm_stream_get(ctx, CT_EXT_A2A_NODE, node, 1, ctx->size, "node_aware", s));
out:
    return rc;
}

/* This rank's stream: its block for every rank (the byte view: MPI_BYTE
 * counts and displacements). */
static void stream_out(const ct_tuna_hier *H, ct_shm_out *out)
{
    const ct_alltoallv_args *a = H->a;
    for (int k = 0; k < H->ctx->size; k++) {
        out[k] = (ct_shm_out){.src = (const char *)a->sendbuf + ct_vec_at(&a->sdispls, k),
                              .bytes = (size_t)ct_vec_at(&a->sendcounts, k)};
    }
}

/* What this rank reads: from each rank j of its node, j's block for it and
 * j's blocks for D (into G). Returns the number of entries. */
static int stream_wants(const ct_tuna_hier *H, ct_shm_want *want)
{
    const ct_alltoallv_args *a = H->a;
    const int me = H->ctx->rank;
    int nw = 0;
    for (int t = 0; t < H->Qn; t++) {
        const int j = (H->h + 1 + t) % H->Qn; /* the readers start at different parts */
        const int src = ct_tuna_hier_rank(H, H->n, j);
        want[nw++] = (ct_shm_want){
            .member = j,
            .block = me,
            .dst = (char *)a->recvbuf + ct_vec_at(&a->rdispls, src),
            .cap = (size_t)ct_vec_at(&a->recvcounts, src),
        };
        for (int d = 0; d < H->nd; d++)
            want[nw++] = (ct_shm_want){.member = j,
                                       .block = H->d_rank[d],
                                       .dst = ct_tuna_hier_gblock(H, d, j),
                                       .cap = H->M};
    }
    return nw;
}

int ct_alltoallv_node_aware(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params)
{
    int rc;
    const int P = ctx->size, block_count = (int)params[0];
    ct_shm_stream *s;
    ct_tuna_hier H;
    size_t own;
    CT_CALL(node_window(ctx, &s));
    if (s == NULL) /* some node has no window: every rank comes here */
        return ct_tuna_hier_run(a, ctx, 2, block_count, ct_tuna_hier_coalesced_inter);
    CT_CALL(ct_tuna_hier_begin(&H, a, ctx, &own));
    if (H.M == 0)
        return MPI_SUCCESS;
    char *scratch = ct_ctx_scratch(ctx, own);
    const size_t nwant = (size_t)H.Qn * (1 + (size_t)H.nd);
    ct_shm_out *out = NULL;
    ct_shm_want *want = NULL;
    int local_rc = MPI_ERR_NO_MEM, nw = 0;
    if (scratch != NULL) {
        ct_tuna_hier_tables(&H, scratch);
        out = ct_ctx_buffer(ctx, CT_BUF_SHM_PLAN,
                            (size_t)P * sizeof *out + nwant * sizeof *want);
    }
    if (out != NULL) {
        want = (ct_shm_want *)(out + P);
        stream_out(&H, out);
        nw = stream_wants(&H, want);
        local_rc = MPI_SUCCESS;
    }
    ctx->call_extra += own + ct_shm_stream_bytes(P);
    CT_CALL(ct_shm_stream_run(s, out, local_rc, want, nw, NULL));
    /* The G block sizes the inter-node phase sends (stream_wants' order). */
    for (int t = 0, w = 0; t < H.Qn; t++) {
        const int j = want[w].member;
        w++; /* its block for this rank */
        for (int d = 0; d < H.nd; d++, w++)
            H.gsz[d * H.Qn + j] = (int)want[w].bytes; /* <= M: fits an int */
    }
    if (H.N > 1)
        CT_CALL(ct_tuna_hier_coalesced_inter(&H, block_count));
out:
    return rc;
}
