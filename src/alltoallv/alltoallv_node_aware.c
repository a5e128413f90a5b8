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
 * Inter-node phase, between ranks of equal local index, on the coalesced
 * blocks (one per destination rank: all its node's blocks for it):
 *   - nodes of equal size: TuNA with the given radix (paper 001 section III)
 *     among the N ranks of local index h, one per node (a lane): ceil(log_r
 *     N) steps of forwarded blocks instead of N - 1 messages per rank, which
 *     pays where a message between nodes costs more than the copies;
 *   - nodes of different sizes, where a rank handles several ranks of a
 *     larger node and lanes are not all-to-all groups: Algorithm 3's
 *     (ct_tuna_hier_coalesced_inter), one message per node pair and local
 *     index, block_count node offsets at a time.
 *
 * The window spans a node's ranks: real nodes, or emulated ones
 * (COLTUNE_PPN) when the whole communicator shares memory
 * (CT_R_NODE_SHARED_MEMORY). If some node cannot set up its window, every
 * rank learns it at the first call and the communicator's calls run
 * tuna_hier_coalesced (radix 2) instead, which needs no shared memory.
 */
#include "alltoallv/shm_stream.h"
#include "alltoallv/tuna_hier.h"

#include <string.h>

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

/* ------------------------------------------------------------------ */
/* The lanes: TuNA over the nodes, where every node holds Q ranks      */
/* ------------------------------------------------------------------ */

/*
 * With nodes of equal size rank (n, h) handles exactly rank (m, h) of every
 * other node m (tuna_hier.h): what G holds for it, compacted, is this rank's
 * block of the lane's all-to-all, and the block from (m, h) is node m's
 * blocks for this rank, in local order. That block lands straight in the
 * receive buffer when those lie there back to back, else in a staging area,
 * spread afterwards. Every size is known at its receiver (recvcounts), so
 * the block's last hop carries no metadata.
 */
typedef struct lane {
    const ct_tuna_hier *H;
    int *rank_of;  /* [N] rank (m, h) */
    char **dst;    /* [N] where the block from member m lands */
    size_t *bytes; /* [N] its bytes */
    int *staged;   /* [N] dst is in the staging area */
    char *stage;
} lane;

/* The block this rank sends member m: G's D entry on node m, compacted. */
static const char *lane_source(void *arg, int m, int c, size_t *bytes)
{
    const ct_tuna_hier *H = ((const lane *)arg)->H;
    (void)c;
    *bytes = 0;
    if (H->d_first[m] == H->d_first[m + 1]) /* this node */
        return NULL;
    *bytes = H->tot[H->d_first[m]];
    return ct_tuna_hier_gblock(H, H->d_first[m], 0);
}

static char *lane_target(void *arg, int m, int c, size_t bytes)
{
    const lane *L = arg;
    (void)c;
    return bytes <= L->bytes[m] ? L->dst[m] : NULL; /* longer: MPI_ERR_TRUNCATE */
}

static size_t lane_known(void *arg, int m) { return ((const lane *)arg)->bytes[m]; }

/* Node m's blocks for this rank: their bytes, and whether they lie back to
 * back in the receive buffer in local order from displacement *first (the
 * byte view). */
static size_t node_blocks(const ct_tuna_hier *H, int m, int *contiguous, long *first)
{
    const ct_alltoallv_args *a = H->a;
    size_t total = 0;
    long next = -1;
    *contiguous = 1;
    *first = 0;
    for (int l = 0; l < H->node_size[m]; l++) {
        const int src = ct_tuna_hier_rank(H, m, l);
        const long count = (long)ct_vec_at(&a->recvcounts, src);
        const long displ = (long)ct_vec_at(&a->rdispls, src);
        if (count == 0)
            continue;
        if (next < 0)
            *first = displ;
        else if (displ != next)
            *contiguous = 0;
        next = displ + count;
        total += (size_t)count;
    }
    return total;
}

/* Lays out the lane's tables, staging and the TuNA engine's scratch in
 * base (NULL: measures only); returns the bytes. */
static size_t lane_layout(const ct_tuna_hier *H, lane *L, char *base, const ct_tuna_group *grp,
                          int radix, char **engine)
{
    const int N = H->N;
    size_t off = 0, staged = 0;
    CT_CARVE(base, off, L->rank_of, int, N);
    CT_CARVE(base, off, L->staged, int, N);
    CT_CARVE(base, off, L->dst, char *, N);
    CT_CARVE(base, off, L->bytes, size_t, N);
    for (int m = 0; m < N; m++) {
        int contiguous = 1;
        long first = 0;
        const size_t b = m == H->n ? 0 : node_blocks(H, m, &contiguous, &first);
        if (b > 0 && !contiguous)
            staged += b;
        if (base == NULL)
            continue;
        L->rank_of[m] = ct_tuna_hier_rank(H, m, H->h);
        L->bytes[m] = b;
        L->staged[m] = b > 0 && !contiguous;
        L->dst[m] = b > 0 && contiguous ? (char *)H->a->recvbuf + first : NULL;
    }
    CT_CARVE(base, off, L->stage, char, staged);
    CT_CARVE(base, off, *engine, char, ct_tuna_scratch_bytes(grp, radix));
    return off;
}

/* The staged members' places in the staging area (lane_layout put the
 * others' in the receive buffer). */
static void lane_stage(const ct_tuna_hier *H, lane *L)
{
    char *stage = L->stage;
    for (int m = 0; m < H->N; m++) {
        if (!L->staged[m])
            continue;
        L->dst[m] = stage;
        stage += L->bytes[m];
    }
}

/* A staged member's block: node m's blocks, in local order, to their places. */
static void lane_spread(const ct_tuna_hier *H, const lane *L)
{
    const ct_alltoallv_args *a = H->a;
    for (int m = 0; m < H->N; m++) {
        const char *from = L->dst[m];
        for (int l = 0; L->staged[m] && l < H->node_size[m]; l++) {
            const int src = ct_tuna_hier_rank(H, m, l);
            const size_t count = (size_t)ct_vec_at(&a->recvcounts, src);
            if (count > 0)
                memcpy((char *)a->recvbuf + ct_vec_at(&a->rdispls, src), from, count);
            from += count;
        }
    }
}

static int lane_inter(ct_tuna_hier *H, int radix)
{
    int rc = MPI_SUCCESS;
    lane L = {.H = H};
    char *engine = NULL, *base;
    ct_tuna_group grp = {.size = H->N, .index = H->n, .C = 1, .known_c = 0, .arg = &L,
                         .source = lane_source, .target = lane_target, .known = lane_known};
    const size_t bytes = lane_layout(H, &L, NULL, &grp, radix, &engine);
    base = ct_ctx_buffer(H->ctx, CT_BUF_NODE_LANE, bytes > 0 ? bytes : 1);
    if (base == NULL)
        return MPI_ERR_NO_MEM;
    H->ctx->call_extra += bytes;
    lane_layout(H, &L, base, &grp, radix, &engine);
    lane_stage(H, &L);
    grp.rank_of = L.rank_of;
    ct_tuna_hier_compact(H);
    CT_CALL(ct_tuna_exchange(&grp, H->ctx, radix, engine));
    lane_spread(H, &L);
out:
    return rc;
}

int ct_alltoallv_node_aware(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params)
{
    int rc;
    const int P = ctx->size, radix = (int)params[0], block_count = (int)params[1];
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
    if (H.N > 1 && ctx->topo.uniform)
        CT_CALL(lane_inter(&H, radix));
    else if (H.N > 1)
        CT_CALL(ct_tuna_hier_coalesced_inter(&H, block_count));
out:
    return rc;
}
