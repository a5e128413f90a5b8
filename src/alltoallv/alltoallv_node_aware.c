/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_node_aware.c - node-aware hierarchical Alltoallv: coalesced
 * TuNA_l^g ([Fan2024] section IV-B, Algorithm 3) with its intra-node phase
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
 *   - nodes of equal size: TuNA with the given radix ([Fan2024] section III)
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
#include "alltoallv/tuna_hier.h"
#include "core/shm_stream.h"

#include "core/log.h"
#include "core/copy.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The context buffers of the lanes' G and of the stash. */
static const ct_ctx_buf_key buf_lane = {"node_aware lane"}, buf_stash = {"node_aware stash"};

/* The node's window: a node communicator (ranks in local order) and its
 * window, created by the first call (collectively over ctx->comm). */
static int node_window(ct_ctx *ctx, ct_shm_stream **s)
{
    static const ct_ctx_key window_key = CT_SHM_STREAM_KEY("node_aware window");
    return ct_shm_stream_get(ctx, &window_key, MPI_COMM_NULL, ctx->size, "node_aware", s);
}

/* ------------------------------------------------------------------ */
/* Equal nodes: the lanes                                              */
/* ------------------------------------------------------------------ */

/*
 * With every node holding Q ranks, the ranks of local index h, one per
 * node, form a lane, and a lane runs one all-to-all of coalesced blocks.
 * Nothing here needs the call's largest block, so the call needs no
 * collective before it (the uneven path below does).
 *
 * Every rank a lane (leaders = Q, the default): rank (n, h) forwards to
 * rank (m, h) of every other node m exactly the blocks its node's ranks
 * send there:
 *  - the intra-node phase reads, from each rank j of this node, j's block
 *    for this rank (into the receive buffer) and j's block for (m, h),
 *    which it leaves where it lies in the window when the exchange took one
 *    round (ct_shm_stream_block), or places in G, sized after round 0 from
 *    the headers, when it took several;
 *  - the lane runs TuNA (ct_tuna_exchange) with bundles of Q blocks, block j
 *    of the bundle for member m being rank j's block for (m, h): it goes
 *    from the window (or G) into the round buffers, and on its last hop
 *    straight to its place in the receive buffer; every size is known
 *    there (recvcounts), so no last hop carries metadata.
 *
 * Fewer lanes (leaders = L < Q): only local ranks 0 .. L-1 exchange between
 * nodes. This is the hierarchical form, with one or a few leaders per node,
 * rather than the multi-lane one ([Namugwanya2023] section 3 names both).
 * Leader h handles the S local indices h_k = h + k L < Q, k = 0 .. S-1:
 *  - in the intra-node phase it also reads, from each rank j of its node,
 *    j's block for (m, h_k), for every other node m and every k;
 *  - its lane runs TuNA with bundles of S Q blocks, position k Q + j being
 *    rank j's block for (m, h_k); the k = 0 blocks are the leader's own
 *    (sizes known), the others arrive with their sizes into a stash;
 *  - a delivery phase, a second exchange through the window, follows: for
 *    every k >= 1 and other node m the leader publishes one block, the sizes
 *    of the Q blocks of ranks (m, 0 .. Q-1) for (n, h_k), then those blocks;
 *    rank h_k reads the blocks of its leader and puts each part in its
 *    receive buffer.
 * One more synchronisation inside the node buys about Q/L times fewer, and
 * larger, messages between nodes. Between hosts over TCP on few cores that
 * pays at small blocks (docs/cluster.md).
 */

/* A leader's blocks for the ranks it delivers to, stored as they arrive
 * (any order, any size): in a buffer cached in the context, as large as
 * the calls before needed; what does not fit goes to chunks of at least
 * STASH_CHUNK bytes, freed after the call, and the buffer grows for the
 * next one. */
#define STASH_CHUNK ((size_t)64 * 1024)

typedef struct stash_chunk {
    struct stash_chunk *next;
    size_t cap, used;
    char data[];
} stash_chunk;

typedef struct stash {
    char *base;
    size_t cap, used, spilled;
    stash_chunk *chunks; /* the newest first */
    int nomem;           /* a chunk could not be allocated */
} stash;

static void stash_open(stash *st, ct_ctx *ctx)
{
    st->base = ct_ctx_buffer(ctx, &buf_stash, 1);
    st->cap = st->base != NULL ? ct_ctx_buffer_size(ctx, &buf_stash) : 0;
}

static char *stash_put(stash *st, size_t bytes)
{
    stash_chunk *ch = st->chunks;
    char *p;
    if (bytes <= st->cap - st->used) {
        p = st->base + st->used;
        st->used += bytes;
        return p;
    }
    if (ch == NULL || bytes > ch->cap - ch->used) {
        const size_t cap = bytes > STASH_CHUNK ? bytes : STASH_CHUNK;
        ch = malloc(sizeof *ch + cap);
        if (ch == NULL) {
            st->nomem = 1;
            return NULL;
        }
        ch->cap = cap;
        ch->used = 0;
        ch->next = st->chunks;
        st->chunks = ch;
    }
    p = ch->data + ch->used;
    ch->used += bytes;
    st->spilled += bytes;
    return p;
}

static void stash_close(stash *st, ct_ctx *ctx)
{
    while (st->chunks != NULL) {
        stash_chunk *next = st->chunks->next;
        free(st->chunks);
        st->chunks = next;
    }
    if (st->spilled > 0) /* room for the next call (no harm if it fails) */
        (void)ct_ctx_buffer(ctx, &buf_stash, st->used + st->spilled);
    ctx->call_extra += st->used + st->spilled;
}

typedef struct lanes {
    const ct_alltoallv_args *a;
    ct_ctx *ctx;
    ct_shm_stream *s;
    int N, n, h, Q;
    int leaders;       /* L, ranks per node that exchange between nodes */
    int S;             /* local indices this rank leads: h, h + L, ... < Q (0: not a leader) */
    int unplaced;      /* the intra-node phase could not place this rank's deferred blocks */
    int *rank_at;      /* [N Q] rank (m, l) at m Q + l */
    int *rank_of;      /* [N] the lane: rank (m, h) */
    ct_shm_want *want; /* [Q (1 + S (N-1))] the intra-node phase's */
    int *want_of;      /* [S Q N] want of rank j's block for (m, h_k), at (k Q + j) N + m;
                          -1: m = n */
    /* The delivery phase (L < Q). Its block b = (k - 1) N + m: */
    stash st;
    ct_shm_piece *piece; /* leader: [(S-1) N (Q+1)] block b's size table, then its blocks */
    uint64_t *sizes;     /* leader: [(S-1) N Q] the size tables */
    ct_shm_want *want3;  /* [N] the blocks a rank reads from its leader */
} lanes;

static int lane_rank(const lanes *L, int m, int l) { return L->rank_at[m * L->Q + l]; }

/* Lays out the tables and the TuNA engine's scratch in base (NULL:
 * measures only); returns the bytes. */
static size_t lanes_layout(lanes *L, char *base, const ct_tuna_group *grp, int radix,
                           char **engine)
{
    const size_t N = (size_t)L->N, Q = (size_t)L->Q, S = (size_t)L->S;
    const size_t later = S > 1 ? (S - 1) * N : 0; /* delivery blocks of a leader */
    size_t off = 0;
    CT_CARVE(base, off, L->rank_at, int, N * Q);
    CT_CARVE(base, off, L->rank_of, int, N);
    CT_CARVE(base, off, L->want, ct_shm_want, Q * (1 + S * (N - 1)));
    CT_CARVE(base, off, L->want_of, int, S * Q * N);
    CT_CARVE(base, off, L->piece, ct_shm_piece, later * (Q + 1));
    CT_CARVE(base, off, L->sizes, uint64_t, later * Q);
    CT_CARVE(base, off, L->want3, ct_shm_want, L->leaders < L->Q ? N : 0);
    CT_CARVE(base, off, *engine, char, S > 0 ? ct_tuna_scratch_bytes(grp, radix) : 0);
    return off;
}

static void lanes_tables(lanes *L)
{
    const ct_topo *topo = &L->ctx->topo;
    for (int r = 0; r < L->ctx->size; r++)
        L->rank_at[topo->node_of[r] * L->Q + topo->local_of[r]] = r;
    for (int m = 0; m < L->N; m++)
        L->rank_of[m] = lane_rank(L, m, L->h);
    if (L->S > 1) /* blocks of 0 bytes never arrive: empty until they do */
        memset(L->piece, 0, (size_t)(L->S - 1) * L->N * (L->Q + 1) * sizeof *L->piece);
}

/* The intra-node phase's wants: from each rank j of this node (the readers
 * start at different parts), j's block for this rank, then, on a leader,
 * j's blocks for the lane, placed later (dst NULL). Returns their number. */
static int lanes_wants(lanes *L)
{
    const ct_alltoallv_args *a = L->a;
    int nw = 0;
    for (int t = 0; t < L->Q; t++) {
        const int j = (L->h + 1 + t) % L->Q;
        const int src = lane_rank(L, L->n, j);
        L->want[nw++] = (ct_shm_want){
            .member = j,
            .block = L->ctx->rank,
            .dst = (char *)a->recvbuf + ct_vec_at(&a->rdispls, src),
            .cap = (size_t)ct_vec_at(&a->recvcounts, src),
        };
        for (int k = 0; k < L->S; k++)
            for (int m = 0; m < L->N; m++) {
                int *w = &L->want_of[(k * L->Q + j) * L->N + m];
                *w = m == L->n ? -1 : nw;
                if (m != L->n)
                    L->want[nw++] = (ct_shm_want){.member = j,
                                                  .block = lane_rank(L, m, L->h + k * L->leaders)};
            }
    }
    return nw;
}

/* ct_shm_place: with one round the deferred blocks stay in the window; with
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
    G = ct_ctx_buffer(L->ctx, &buf_lane, bytes > 0 ? bytes : 1);
    if (G == NULL) {
        L->unplaced = 1;
        return MPI_ERR_NO_MEM;
    }
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

/* Where a deferred block is after the exchange: in the window or in G. */
static const char *placed(const lanes *L, const ct_shm_want *want)
{
    return want->dst != NULL ? want->dst : ct_shm_stream_block(L->s, want);
}

/* Position c = k Q + j of the bundle this rank sends lane member m: rank
 * j's block for (m, h_k), in the window or in G. */
static const char *lane_source(void *arg, int m, int c, size_t *bytes)
{
    const lanes *L = arg;
    const int w = L->want_of[c * L->N + m];
    *bytes = 0;
    if (w < 0) /* this node: the intra-node phase delivered it */
        return NULL;
    *bytes = L->want[w].bytes;
    return placed(L, &L->want[w]);
}

/* Position c = k Q + j of the bundle from member m: rank (m, j)'s block for
 * (n, h_k), this rank's own (k = 0) or one it delivers (into the stash). */
static char *lane_target(void *arg, int m, int c, size_t bytes)
{
    lanes *L = arg;
    const int k = c / L->Q, j = c % L->Q;
    if (k > 0) {
        char *p = stash_put(&L->st, bytes);
        L->piece[((k - 1) * L->N + m) * (L->Q + 1) + 1 + j] = (ct_shm_piece){p, bytes};
        return p; /* NULL: out of memory (L->st.nomem) */
    }
    const int src = lane_rank(L, m, j);
    if (bytes > (size_t)ct_vec_at(&L->a->recvcounts, src))
        return NULL; /* longer than its buffer: MPI_ERR_TRUNCATE */
    return (char *)L->a->recvbuf + ct_vec_at(&L->a->rdispls, src);
}

/* Sizes of positions c < Q: this rank's own blocks. */
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

/* A leader's delivery stream: block (k - 1) N + m is the size table of the
 * Q blocks of ranks (m, j) for (n, h_k), then the blocks (pieces in the
 * stash); the other blocks are empty. */
static void delivery_out(lanes *L, ct_shm_out *out)
{
    const size_t table = (size_t)L->Q * sizeof(uint64_t);
    for (int k = 1; k < L->S; k++)
        for (int m = 0; m < L->N; m++) {
            const int b = (k - 1) * L->N + m;
            ct_shm_piece *pc = &L->piece[b * (L->Q + 1)];
            uint64_t *sz = &L->sizes[b * L->Q];
            if (m == L->n)
                continue;
            out[b] = (ct_shm_out){.bytes = table, .piece = pc, .npiece = L->Q + 1};
            for (int j = 0; j < L->Q; j++) {
                sz[j] = pc[1 + j].bytes;
                out[b].bytes += pc[1 + j].bytes;
            }
            pc[0] = (ct_shm_piece){(const char *)sz, table};
        }
}

/* What a rank that is not a leader reads in the delivery phase: from its
 * leader h mod L, block (k - 1) N + m for every other node m, k = h div L. */
static int delivery_wants(lanes *L)
{
    const int k = L->h / L->leaders, leader = L->h % L->leaders;
    int nw = 0;
    for (int m = 0; m < L->N; m++)
        if (m != L->n)
            L->want3[nw++] = (ct_shm_want){.member = leader, .block = (k - 1) * L->N + m};
    return nw;
}

/* Puts the blocks of each delivered block in the receive buffer. */
static int delivery_unpack(const lanes *L, int nw)
{
    const size_t table = (size_t)L->Q * sizeof(uint64_t);
    int truncated = 0;
    for (int w = 0; w < nw; w++) {
        const ct_shm_want *want = &L->want3[w];
        const int m = want->block % L->N;
        const char *blk = placed(L, want);
        if (want->bytes < table)
            return MPI_ERR_INTERN; /* not what a leader publishes */
        size_t left = want->bytes - table;
        for (int j = 0; j < L->Q; j++) {
            const int src = lane_rank(L, m, j);
            const size_t cap = (size_t)ct_vec_at(&L->a->recvcounts, src);
            uint64_t b;
            memcpy(&b, blk + j * sizeof b, sizeof b); /* the stream need not align it */
            if (b > left)
                return MPI_ERR_INTERN;
            if (b > cap)
                truncated = 1;
            ct_memcpy((char *)L->a->recvbuf + ct_vec_at(&L->a->rdispls, src),
                      blk + want->bytes - left, b < cap ? b : cap);
            left -= b;
        }
    }
    if (truncated)
        ct_log_once("node_aware: a block is longer than its receive buffer; the call returns "
                    "MPI_ERR_TRUNCATE");
    return truncated ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

/* The delivery phase, on every rank of the node; lane_rc is how the lane
 * exchange went on this rank (a leader that failed still takes part, so
 * that its node learns it). */
static int delivery(lanes *L, int lane_rc)
{
    int rc, nw = 0;
    ct_shm_out *out = L->s->out;
    const ct_shm_place place = {lanes_place, L};
    for (int b = 0; b < L->ctx->size; b++)
        out[b] = (ct_shm_out){0};
    if (lane_rc == MPI_SUCCESS && L->S > 1)
        delivery_out(L, out);
    if (L->h >= L->leaders)
        nw = delivery_wants(L);
    rc = ct_shm_stream_run(L->s, out, lane_rc, L->want3, nw, NULL, &place);
    if (lane_rc != MPI_SUCCESS || rc != MPI_SUCCESS)
        return lane_rc != MPI_SUCCESS ? lane_rc : rc;
    return delivery_unpack(L, nw);
}

static int node_aware_lanes(const ct_alltoallv_args *a, ct_ctx *ctx, ct_shm_stream *s,
                            int radix, int leaders)
{
    int local_rc = MPI_ERR_NO_MEM, nw = 0, rc1, rc, lane_rc = MPI_SUCCESS;
    const ct_topo *topo = &ctx->topo;
    lanes L = {.a = a, .ctx = ctx, .s = s, .N = topo->N, .n = topo->node,
               .h = topo->local_rank, .Q = topo->Q};
    L.leaders = leaders < L.Q ? leaders : L.Q;
    /* h, h + L, h + 2L, ... < Q: ceil((Q - h) / L) of them on a leader */
    L.S = L.h < L.leaders ? (L.Q - L.h + L.leaders - 1) / L.leaders : 0;
    ct_tuna_group grp = {.size = L.N, .index = L.n, .C = L.S * L.Q, .known_c = 0,
                         .known_n = L.Q, .arg = &L, .source = lane_source,
                         .target = lane_target, .known = lane_known};
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
    rc1 = ct_shm_stream_run(s, s->out, local_rc, scratch != NULL ? L.want : NULL, nw, NULL,
                            &place);
    /* An error in round 0 reached every rank of the node, and all stop here.
     * A block too long for this rank's buffer, or deferred blocks it could not
     * place, are this rank's alone: it goes on, so that no rank waits for it. */
    if ((rc1 != MPI_SUCCESS && rc1 != MPI_ERR_TRUNCATE && !L.unplaced) || L.N == 1)
        return rc1;
    if (L.S > 0) {
        grp.rank_of = L.rank_of;
        stash_open(&L.st, ctx);
        /* without its blocks a leader cannot take part: its lane waits, as
         * when the engine's own buffers fail */
        lane_rc = L.unplaced ? MPI_ERR_NO_MEM : ct_tuna_exchange(&grp, ctx, radix, engine);
        if (L.st.nomem)
            lane_rc = MPI_ERR_NO_MEM;
    }
    rc = L.leaders < L.Q ? delivery(&L, lane_rc) : lane_rc;
    if (L.S > 0)
        stash_close(&L.st, ctx);
    return rc1 != MPI_SUCCESS ? rc1 : rc;
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
    long msg_size;
    unsigned violations;
    /* the decision's own local facts, of the byte view (a failure here, which
     * MPI_BYTE cannot cause, counts as offsets that do not fit) */
    const int frc = ct_a2av_local_facts(a, ctx->size, &msg_size, &violations);
    long long in[2] = {frc == MPI_SUCCESS ? msg_size : 0,
                       frc != MPI_SUCCESS || (violations & CT_R_INT_OFFSETS) != 0},
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
    ct_alltoallv_args b = *a;
    b.msg_size = (long)M; /* what ct_tuna_hier_begin would ask for */
    CT_CALL(ct_tuna_hier_begin(&H, &b, ctx, &own));
    if (H.M == 0)
        return MPI_SUCCESS;
    char *scratch = ct_ctx_scratch(ctx, own);
    const size_t nwant = (size_t)H.Qn * (1 + (size_t)H.nd);
    ct_shm_out *out = NULL;
    ct_shm_want *want = NULL;
    int local_rc = MPI_ERR_NO_MEM, nw = 0;
    if (scratch != NULL) {
        ct_tuna_hier_tables(&H, scratch);
        out = ct_ctx_buffer(ctx, &ct_buf_shm_plan,
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
        CT_CALL(ct_tuna_hier_inter_run(&H, block_count, ct_tuna_hier_coalesced_inter));
out:
    return rc;
}

int ct_alltoallv_node_aware(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params)
{
    int rc;
    const int radix = (int)params[0], block_count = (int)params[1], leaders = (int)params[2];
    ct_shm_stream *s;
    CT_CALL(node_window(ctx, &s));
    if (s == NULL) /* some node has no window: every rank comes here */
        return ct_alltoallv_tuna(a, ctx, (const long[]){2});
    if (ctx->topo.uniform)
        return node_aware_lanes(a, ctx, s, radix, leaders);
    return node_aware_uneven(a, ctx, s, block_count);
out:
    return rc;
}
