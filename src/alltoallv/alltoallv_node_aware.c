/*
 * alltoallv_node_aware.c - node-aware hierarchical Alltoallv: coalesced
 * TuNA_l^g (paper 001 section IV-B, Algorithm 3) with its intra-node phase
 * done through the node's shared-memory window instead of point-to-point
 * TuNA.
 *
 * Intra-node phase. Every rank publishes all its blocks (one stream of P
 * blocks, shm_stream.h) in its part of its node's window; after the one
 * synchronisation per round, rank (n, h) reads from the part of every rank
 * j of its node
 *   - j's block for itself, into its receive buffer (j = h: its own block);
 *   - j's block for every rank it handles on other nodes (D, tuna_hier.h),
 *     which the inter-node phase sends on.
 * That is Algorithm 3's "rearrange T" done by the reads themselves: where
 * TuNA moves a block through up to log_r Q hops of messages, each block
 * here crosses memory once or twice.
 *
 * Inter-node phase, between ranks of equal local index, on the coalesced
 * blocks (one per destination rank: all its node's blocks for it):
 *   - nodes of equal size: TuNA with the given radix (paper 001 section III)
 *     among the N ranks of local index h, one per node (a lane): ceil(log_r
 *     N) steps of forwarded blocks instead of N - 1 messages per rank, which
 *     pays where a message between nodes costs more than the copies. It
 *     needs no global maximum block, so the call starts without a
 *     collective: between hosts an allreduce costs about as much as the
 *     whole small-block exchange (docs/cluster.md);
 *   - nodes of different sizes, where a rank handles several ranks of a
 *     larger node and lanes are not all-to-all groups: Algorithm 3's
 *     (ct_tuna_hier_coalesced_inter), one message per node pair and local
 *     index, block_count node offsets at a time, after one allreduce for
 *     the largest block (its buffer G) and for int offsets (its messages);
 *     where some offset exceeds an int, TuNA (radix 2) serves the call.
 *
 * The window spans a node's ranks: real nodes, or emulated ones
 * (COLTUNE_PPN) when the whole communicator shares memory
 * (CT_R_NODE_SHARED_MEMORY). If some node cannot set up its window, every
 * rank learns it at the first call and the communicator's calls run TuNA
 * (radix 2) instead, which needs no shared memory.
 */
#include "alltoallv/shm_stream.h"
#include "alltoallv/tuna_hier.h"

#include <limits.h>
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

/* ------------------------------------------------------------------ */
/* Equal nodes: the lanes                                              */
/* ------------------------------------------------------------------ */

/*
 * With every node holding Q ranks, rank (n, h) forwards to rank (m, h) of
 * every other node m exactly the blocks its node's ranks send there: the
 * ranks of local index h, one per node, form a lane, and the lane runs one
 * all-to-all of those coalesced blocks. Nothing here needs the call's
 * largest block, so the call needs no collective before it (the uneven path
 * below does):
 *  - the intra-node phase reads, from each rank c of this node, c's block
 *    for this rank (into the receive buffer) and c's block for (m, h),
 *    which it leaves where it lies in the window when the exchange took one
 *    round (ct_shm_stream_block), or places in G, sized after round 0 from
 *    the headers, when it took several;
 *  - the lane runs TuNA (ct_tuna_exchange) with bundles of Q blocks, block c
 *    of the bundle for member m being rank c's block for (m, h): it goes
 *    from the window (or G) into the round buffers, and on its last hop
 *    straight to its place in the receive buffer; every size is known
 *    there (recvcounts), so no last hop carries metadata.
 */
typedef struct lanes {
    const ct_alltoallv_args *a;
    ct_ctx *ctx;
    const ct_shm_stream *s;
    int N, n, h, Q;
    int *rank_at;      /* [N Q] rank (m, l) at m Q + l */
    int *rank_of;      /* [N] the lane: rank (m, h) */
    ct_shm_want *want; /* the stream's wants */
    int *want_of;      /* [N Q] want of rank c's block for (m, h), at m Q + c; -1: m = n */
} lanes;

static int lane_rank(const lanes *L, int m, int l) { return L->rank_at[m * L->Q + l]; }

/* Lays out the tables and the TuNA engine's scratch in base (NULL:
 * measures only); returns the bytes. */
static size_t lanes_layout(lanes *L, char *base, const ct_tuna_group *grp, int radix,
                           char **engine)
{
    size_t off = 0;
    CT_CARVE(base, off, L->rank_at, int, (size_t)L->N * L->Q);
    CT_CARVE(base, off, L->rank_of, int, L->N);
    CT_CARVE(base, off, L->want_of, int, (size_t)L->N * L->Q);
    CT_CARVE(base, off, *engine, char, ct_tuna_scratch_bytes(grp, radix));
    return off;
}

static void lanes_tables(lanes *L)
{
    const ct_topo *topo = &L->ctx->topo;
    for (int r = 0; r < L->ctx->size; r++)
        L->rank_at[topo->node_of[r] * L->Q + topo->local_of[r]] = r;
    for (int m = 0; m < L->N; m++)
        L->rank_of[m] = lane_rank(L, m, L->h);
}

/* The stream's wants: from each rank c of this node (the readers start at
 * different parts), c's block for this rank, then c's blocks for the lane,
 * placed later (dst NULL). Returns their number (N Q). */
static int lanes_wants(lanes *L)
{
    const ct_alltoallv_args *a = L->a;
    int nw = 0;
    for (int t = 0; t < L->Q; t++) {
        const int c = (L->h + 1 + t) % L->Q;
        const int src = lane_rank(L, L->n, c);
        L->want[nw++] = (ct_shm_want){
            .member = c,
            .block = L->ctx->rank,
            .dst = (char *)a->recvbuf + ct_vec_at(&a->rdispls, src),
            .cap = (size_t)ct_vec_at(&a->recvcounts, src),
        };
        L->want_of[L->n * L->Q + c] = -1;
        for (int m = 0; m < L->N; m++) {
            if (m == L->n)
                continue;
            L->want_of[m * L->Q + c] = nw;
            L->want[nw++] = (ct_shm_want){.member = c, .block = L->rank_of[m]};
        }
    }
    return nw;
}

/* ct_shm_place: with one round the lane's blocks stay in the window; with
 * several they go to G, back to back, as their sizes now say. */
static int lanes_place(void *arg, ct_shm_want *want, int nwant, size_t rounds)
{
    lanes *L = arg;
    size_t bytes = 0;
    char *G;
    if (rounds == 1)
        return MPI_SUCCESS;
    for (int w = 0; w < nwant; w++)
        if (want[w].deferred)
            bytes += want[w].bytes;
    G = ct_ctx_buffer(L->ctx, CT_BUF_NODE_LANE, bytes > 0 ? bytes : 1);
    if (G == NULL)
        return MPI_ERR_NO_MEM;
    L->ctx->call_extra += bytes;
    for (int w = 0; w < nwant; w++) {
        if (!want[w].deferred)
            continue;
        want[w].dst = G;
        want[w].cap = want[w].bytes;
        G += want[w].bytes;
    }
    return MPI_SUCCESS;
}

/* Block c of the bundle this rank sends lane member m: rank c's block for
 * (m, h), in the window or in G. */
static const char *lane_source(void *arg, int m, int c, size_t *bytes)
{
    const lanes *L = arg;
    const int w = L->want_of[m * L->Q + c];
    *bytes = 0;
    if (w < 0) /* this node: the intra-node phase delivered it */
        return NULL;
    const ct_shm_want *want = &L->want[w];
    *bytes = want->bytes;
    return want->dst != NULL ? want->dst : ct_shm_stream_block(L->s, want);
}

/* Block c of the bundle from member m: rank (m, c)'s block for this rank. */
static char *lane_target(void *arg, int m, int c, size_t bytes)
{
    const lanes *L = arg;
    const int src = lane_rank(L, m, c);
    if (bytes > (size_t)ct_vec_at(&L->a->recvcounts, src))
        return NULL; /* longer than its buffer: MPI_ERR_TRUNCATE */
    return (char *)L->a->recvbuf + ct_vec_at(&L->a->rdispls, src);
}

static size_t lane_known(void *arg, int m, int c)
{
    const lanes *L = arg;
    return m == L->n ? 0 : (size_t)ct_vec_at(&L->a->recvcounts, lane_rank(L, m, c));
}

/* This rank's stream: its block for every rank (the byte view). */
static void stream_out(const ct_alltoallv_args *a, int P, ct_shm_out *out)
{
    for (int k = 0; k < P; k++)
        out[k] = (ct_shm_out){.src = (const char *)a->sendbuf + ct_vec_at(&a->sdispls, k),
                              .bytes = (size_t)ct_vec_at(&a->sendcounts, k)};
}

static int node_aware_lanes(const ct_alltoallv_args *a, ct_ctx *ctx, ct_shm_stream *s,
                            int radix)
{
    int rc = MPI_SUCCESS, local_rc = MPI_ERR_NO_MEM, nw = 0;
    const ct_topo *topo = &ctx->topo;
    lanes L = {.a = a, .ctx = ctx, .s = s, .N = topo->N, .n = topo->node,
               .h = topo->local_rank, .Q = topo->Q, .want = s->want};
    ct_tuna_group grp = {.size = L.N, .index = L.n, .C = L.Q, .known_c = CT_TUNA_ALL_KNOWN,
                         .arg = &L, .source = lane_source, .target = lane_target,
                         .known = lane_known};
    const ct_shm_place place = {lanes_place, &L};
    char *engine = NULL;
    const size_t bytes = lanes_layout(&L, NULL, &grp, radix, &engine);
    char *scratch = ct_ctx_scratch(ctx, bytes);
    if (scratch != NULL) {
        lanes_layout(&L, scratch, &grp, radix, &engine);
        lanes_tables(&L);
        stream_out(a, ctx->size, s->out);
        nw = lanes_wants(&L);
        local_rc = MPI_SUCCESS;
    }
    ctx->call_extra += bytes + ct_shm_stream_bytes(ctx->size);
    CT_CALL(ct_shm_stream_run(s, s->out, local_rc, s->want, nw, NULL, &place));
    if (L.N > 1) {
        grp.rank_of = L.rank_of;
        CT_CALL(ct_tuna_exchange(&grp, ctx, radix, engine));
    }
out:
    return rc;
}

/* ------------------------------------------------------------------ */
/* Nodes of different sizes: Algorithm 3 between them                  */
/* ------------------------------------------------------------------ */

/*
 * What Algorithm 3 needs of every rank: the call's largest block M (for G)
 * and whether every byte offset fits the int counts its messages use. One
 * allreduce; *fits is the same on every rank.
 */
static int uneven_agree(const ct_alltoallv_args *a, ct_ctx *ctx, size_t *M, int *fits)
{
    int rc;
    ct_call_facts f;
    /* the decision's own local facts, of the byte view (a failure here, which
     * MPI_BYTE cannot cause, counts as offsets that do not fit) */
    const int frc = ct_alltoallv_local_facts(a, ctx, &f);
    long long in[2] = {frc == MPI_SUCCESS ? f.msg_size : 0,
                       frc != MPI_SUCCESS || (f.violations & CT_R_INT_OFFSETS) != 0},
              res[2];
    CT_CALL(PMPI_Allreduce(in, res, 2, MPI_LONG_LONG, MPI_MAX, ctx->comm));
    *M = (size_t)res[0];
    *fits = res[1] == 0 && res[0] <= INT_MAX;
out:
    return rc;
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

static int node_aware_uneven(const ct_alltoallv_args *a, ct_ctx *ctx, ct_shm_stream *s,
                             int block_count)
{
    int rc, fits;
    const int P = ctx->size;
    ct_tuna_hier H;
    size_t own, M;
    CT_CALL(uneven_agree(a, ctx, &M, &fits));
    if (!fits) /* on every rank: TuNA needs no int offsets */
        return ct_alltoallv_tuna(a, ctx, (const long[]){2});
    ctx->call_msg_size = (long)M; /* what ct_tuna_hier_begin would ask for */
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
        stream_out(a, P, out);
        nw = stream_wants(&H, want);
        local_rc = MPI_SUCCESS;
    }
    ctx->call_extra += own + ct_shm_stream_bytes(P);
    CT_CALL(ct_shm_stream_run(s, out, local_rc, want, nw, NULL, NULL));
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

int ct_alltoallv_node_aware(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params)
{
    int rc;
    const int radix = (int)params[0], block_count = (int)params[1];
    ct_shm_stream *s;
    CT_CALL(node_window(ctx, &s));
    if (s == NULL) /* some node has no window: every rank comes here */
        return ct_alltoallv_tuna(a, ctx, (const long[]){2});
    if (ctx->topo.uniform)
        return node_aware_lanes(a, ctx, s, radix);
    return node_aware_uneven(a, ctx, s, block_count);
out:
    return rc;
}
