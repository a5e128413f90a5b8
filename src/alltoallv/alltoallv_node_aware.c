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
 * One description of a call (na_call, below) serves every form: its phases
 * (the intra-node exchange, the lane's TuNA or Algorithm 3's batches, the
 * delivery) run at once in a blocking call and, for the nonblocking and
 * persistent forms, as a job of the node's window (ct_shm_job, as shm's
 * calls): the window is the call's from its round 0 to its delivery, so the
 * calls on it run one at a time, in the order they started; a blocking call
 * first completes those started before it.
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
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The buffers of the lanes' G and of the stash: the context's (a blocking
 * call) or a request's own, kept from start to start. */
enum { MEM_LANE, MEM_STASH, NMEM };
static const ct_ctx_buf_key buf_key[NMEM] = {{"node_aware lane"}, {"node_aware stash"}};

typedef struct own_mem {
    char *p[NMEM];
    size_t cap[NMEM];
} own_mem;

/* Buffer which of at least bytes (contents kept), own's or ctx's; NULL on failure. */
static char *mem_buffer(ct_ctx *ctx, own_mem *own, int which, size_t bytes)
{
    if (own == NULL)
        return ct_ctx_buffer(ctx, &buf_key[which], bytes);
    if (bytes > own->cap[which]) {
        char *p = realloc(own->p[which], bytes);
        if (p == NULL)
            return NULL;
        own->p[which] = p;
        own->cap[which] = bytes;
    }
    return own->p[which];
}

static size_t mem_size(const ct_ctx *ctx, const own_mem *own, int which)
{
    return own == NULL ? ct_ctx_buffer_size(ctx, &buf_key[which]) : own->cap[which];
}

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
 * (any order, any size): in a buffer cached in the context (a request's
 * own), as large as the calls before needed; what does not fit goes to
 * chunks of at least STASH_CHUNK bytes, freed after the call, and the
 * buffer grows for the next one. */
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

static void stash_open(stash *st, ct_ctx *ctx, own_mem *own)
{
    *st = (stash){0};
    st->base = mem_buffer(ctx, own, MEM_STASH, 1);
    st->cap = st->base != NULL ? mem_size(ctx, own, MEM_STASH) : 0;
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

static void stash_close(stash *st, ct_ctx *ctx, own_mem *own)
{
    while (st->chunks != NULL) {
        stash_chunk *next = st->chunks->next;
        free(st->chunks);
        st->chunks = next;
    }
    if (st->spilled > 0) /* room for the next call (no harm if it fails) */
        (void)mem_buffer(ctx, own, MEM_STASH, st->used + st->spilled);
    if (own == NULL)
        ctx->call_extra += st->used + st->spilled;
}

typedef struct lanes {
    const ct_alltoallv_args *a;
    ct_ctx *ctx;
    own_mem *own;      /* a request's buffers; NULL: the context's */
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

/* Lays out the tables and the TuNA engine's scratch (none with grp NULL:
 * a request's lane has its own) in base (NULL: measures only); returns the
 * bytes. */
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
    const size_t engine_bytes = S > 0 && grp != NULL ? ct_tuna_scratch_bytes(grp, radix) : 0;
    CT_CARVE(base, off, *engine, char, engine_bytes);
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
    G = mem_buffer(L->ctx, L->own, MEM_LANE, bytes > 0 ? bytes : 1);
    if (G == NULL) {
        L->unplaced = 1;
        return MPI_ERR_NO_MEM;
    }
    if (L->own == NULL)
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

/* ------------------------------------------------------------------ */
/* A call, blocking or a request's                                     */
/* ------------------------------------------------------------------ */

/* Where a call is. */
enum { PH_INTRA, PH_LANE, PH_LANE_END, PH_DELIVERY, PH_INTER, PH_DONE };

/*
 * One call on either path: the lanes (equal nodes) or Algorithm 3 between
 * nodes of different sizes (uneven). A blocking call runs its phases at
 * once on the context's buffers; a request (ct_alltoallv_node_aware_build)
 * holds its own and runs them as a job of the window's queue: the intra-node
 * exchange, then the lane's TuNA or the inter-node batches, then the
 * delivery, all while the window is this call's.
 */
typedef struct na_call {
    ct_alltoallv_args args; /* a request's own copy of the description */
    const ct_alltoallv_args *a;
    ct_ctx *ctx;
    ct_shm_stream *s;
    int request;     /* a request's: its own memory, its lane a ct_tuna_run */
    int uneven;
    int radix, block_count;
    lanes L;
    ct_tuna_group grp;
    char *engine;    /* a blocking call's lane scratch */
    ct_tuna_run *run; /* a request's lane */
    ct_tuna_hier H;   /* uneven */
    ct_sched inter;   /* uneven, a request's inter-node batches (memory kept) */
    ct_shm_out *out;  /* uneven: this rank's stream, and its wants */
    ct_shm_want *want;
    char *tables;     /* a request's tables (lanes or H) and plan */
    own_mem mem;      /* a request's G and stash */
    ct_shm_place place;
    ct_shm_xchg xchg;
    int local_rc, nw, phase, rc1, lane_rc, rc;
    ct_shm_job job;
} na_call;

/* Lanes: the call's start: tables, this rank's stream, its wants, round 0
 * published. */
static void lanes_begin(na_call *c, int blocking)
{
    lanes *L = &c->L;
    L->unplaced = 0;
    c->nw = 0;
    if (c->local_rc == MPI_SUCCESS) {
        lanes_tables(L);
        stream_out(c->a, c->ctx->size, c->s->out);
        c->nw = lanes_wants(L);
    }
    c->place = (ct_shm_place){lanes_place, L};
    ct_shm_stream_begin(&c->xchg, c->s, c->s->out, c->local_rc,
                        c->local_rc == MPI_SUCCESS ? L->want : NULL, c->nw, &c->place, blocking);
}

/* Uneven: the same for Algorithm 3's intra-node phase. */
static void uneven_begin(na_call *c, int blocking)
{
    c->nw = 0;
    if (c->local_rc == MPI_SUCCESS) {
        stream_out(c->a, c->ctx->size, c->out);
        c->nw = stream_wants(&c->H, c->want);
    }
    ct_shm_stream_begin(&c->xchg, c->s, c->out, c->local_rc, c->want, c->nw, NULL, blocking);
}

static void call_begin(na_call *c, int blocking)
{
    c->phase = PH_INTRA;
    c->rc1 = c->lane_rc = c->rc = MPI_SUCCESS;
    if (c->uneven)
        uneven_begin(c, blocking);
    else
        lanes_begin(c, blocking);
}

/* The delivery phase's start (L < Q), on every rank of the node; lane_rc is
 * how the lane exchange went on this rank (a leader that failed still
 * takes part, so that its node learns it). */
static void delivery_begin(na_call *c)
{
    lanes *L = &c->L;
    ct_shm_out *out = c->s->out;
    for (int b = 0; b < c->ctx->size; b++)
        out[b] = (ct_shm_out){0};
    if (c->lane_rc == MPI_SUCCESS && L->S > 1)
        delivery_out(L, out);
    c->nw = L->h >= L->leaders ? delivery_wants(L) : 0;
    c->place = (ct_shm_place){lanes_place, L};
    ct_shm_stream_begin(&c->xchg, c->s, out, c->lane_rc, L->want3, c->nw, &c->place,
                        !c->request);
}

/* The lane exchange's start, after the intra-node phase (rc1). */
static void lane_begin(na_call *c)
{
    lanes *L = &c->L;
    c->phase = PH_LANE_END;
    if (L->S == 0)
        return;
    stash_open(&L->st, c->ctx, c->request ? &c->mem : NULL);
    /* without its blocks a leader cannot take part: its lane waits, as
     * when the engine's own buffers fail */
    if (L->unplaced) {
        c->lane_rc = MPI_ERR_NO_MEM;
    } else if (!c->request) {
        c->grp.rank_of = L->rank_of;
        c->lane_rc = ct_tuna_exchange(&c->grp, c->ctx, c->radix, c->engine);
    } else {
        c->lane_rc = ct_tuna_run_start(c->run);
        c->phase = c->lane_rc == MPI_SUCCESS ? PH_LANE : PH_LANE_END;
    }
}

/* Uneven: the G block sizes the inter-node phase sends (stream_wants'
 * order), then its batches. */
static int inter_begin(na_call *c)
{
    ct_tuna_hier *H = &c->H;
    for (int t = 0, w = 0; t < H->Qn; t++) {
        const int j = c->want[w].member;
        w++; /* its block for this rank */
        for (int d = 0; d < H->nd; d++, w++)
            H->gsz[d * H->Qn + j] = (int)c->want[w].bytes; /* <= M: fits an int */
    }
    if (H->N == 1)
        return MPI_SUCCESS;
    if (!c->request)
        return ct_tuna_hier_inter_run(H, c->block_count, ct_tuna_hier_coalesced_inter);
    int rc = ct_tuna_hier_coalesced_inter(H, c->block_count, &c->inter);
    return rc == MPI_SUCCESS ? ct_sched_start(&c->inter) : rc;
}

/* The call's end on the lanes path: its stash freed, its error class. */
static void lanes_end(na_call *c, int rc)
{
    if (c->L.S > 0)
        stash_close(&c->L.st, c->ctx, c->request ? &c->mem : NULL);
    c->rc = c->rc1 != MPI_SUCCESS ? c->rc1 : rc;
    c->phase = PH_DONE;
}

/* Takes the call on, phase by phase: blocking, to its end; else as far as it
 * goes without waiting. Returns its error class once *done. */
static int call_advance(na_call *c, int block, int *done)
{
    int rc, xdone;
    lanes *L = &c->L;
    while (c->phase != PH_DONE) {
        switch (c->phase) {
        case PH_INTRA:
            rc = ct_shm_stream_advance(&c->xchg, NULL, block, &xdone);
            if (!xdone)
                goto wait;
            c->rc1 = rc;
            if (c->uneven) {
                /* a block too long for this rank's buffer is its error alone:
                 * it still sends the other nodes theirs */
                const int goes_on = rc == MPI_SUCCESS || rc == MPI_ERR_TRUNCATE;
                const int irc = goes_on ? inter_begin(c) : MPI_SUCCESS;
                c->rc = rc != MPI_SUCCESS ? rc : irc;
                c->phase = goes_on && irc == MPI_SUCCESS && c->request && c->H.N > 1 ? PH_INTER
                                                                                     : PH_DONE;
            } else if ((rc != MPI_SUCCESS && rc != MPI_ERR_TRUNCATE && !L->unplaced) ||
                       L->N == 1) {
                /* An error in round 0 reached every rank of the node, and all
                 * stop here. A block too long for this rank's buffer, or
                 * deferred blocks it could not place, are this rank's alone:
                 * it goes on, so that no rank waits for it. */
                c->rc = rc;
                c->phase = PH_DONE;
            } else {
                lane_begin(c);
            }
            break;
        case PH_LANE:
            rc = ct_tuna_run_advance(c->run, block, &xdone);
            if (!xdone)
                goto wait;
            c->lane_rc = rc;
            c->phase = PH_LANE_END;
            break;
        case PH_LANE_END:
            if (L->S > 0 && L->st.nomem)
                c->lane_rc = MPI_ERR_NO_MEM;
            if (L->leaders < L->Q) {
                delivery_begin(c);
                c->phase = PH_DELIVERY;
            } else {
                lanes_end(c, c->lane_rc);
            }
            break;
        case PH_DELIVERY:
            rc = ct_shm_stream_advance(&c->xchg, NULL, block, &xdone);
            if (!xdone)
                goto wait;
            if (c->lane_rc == MPI_SUCCESS && rc == MPI_SUCCESS)
                rc = delivery_unpack(L, c->nw);
            lanes_end(c, c->lane_rc != MPI_SUCCESS ? c->lane_rc : rc);
            break;
        default: /* PH_INTER */
            if (block) {
                xdone = 1;
                rc = ct_sched_wait(&c->inter);
            } else {
                rc = ct_sched_test(&c->inter, &xdone);
            }
            if (!xdone && rc == MPI_SUCCESS)
                goto wait;
            c->rc = c->rc != MPI_SUCCESS ? c->rc : rc; /* the intra-node phase's first */
            c->phase = PH_DONE;
            break;
        }
    }
    *done = 1;
    return c->rc;
wait:
    *done = 0;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* The blocking call                                                   */
/* ------------------------------------------------------------------ */

static int node_aware_lanes(na_call *c, int leaders)
{
    ct_ctx *ctx = c->ctx;
    const ct_topo *topo = &ctx->topo;
    lanes *L = &c->L;
    int done;
    *L = (lanes){.a = c->a, .ctx = ctx, .s = c->s, .N = topo->N, .n = topo->node,
                 .h = topo->local_rank, .Q = topo->Q};
    L->leaders = leaders < L->Q ? leaders : L->Q;
    /* h, h + L, h + 2L, ... < Q: ceil((Q - h) / L) of them on a leader */
    L->S = L->h < L->leaders ? (L->Q - L->h + L->leaders - 1) / L->leaders : 0;
    c->grp = (ct_tuna_group){.size = L->N, .index = L->n, .C = L->S * L->Q, .known_c = 0,
                             .known_n = L->Q, .arg = L, .source = lane_source,
                             .target = lane_target, .known = lane_known};
    const size_t bytes = lanes_layout(L, NULL, &c->grp, c->radix, &c->engine);
    char *scratch = ct_ctx_scratch(ctx, bytes);
    c->local_rc = scratch != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (scratch != NULL)
        lanes_layout(L, scratch, &c->grp, c->radix, &c->engine);
    ctx->call_extra += bytes + ct_shm_stream_bytes(ctx->size);
    call_begin(c, 1);
    return call_advance(c, 1, &done);
}

static int node_aware_uneven(na_call *c)
{
    int rc, fits, done;
    ct_ctx *ctx = c->ctx;
    const int P = ctx->size;
    size_t own, M;
    CT_CALL(uneven_agree(c->a, ctx, &M, &fits));
    if (!fits) /* on every rank: TuNA needs no int offsets */
        return ct_alltoallv_tuna(c->a, ctx, (const long[]){2});
    c->args = *c->a;
    c->args.msg_size = (long)M; /* what ct_tuna_hier_begin would ask for */
    CT_CALL(ct_tuna_hier_begin(&c->H, &c->args, ctx, &own));
    if (c->H.M == 0)
        return MPI_SUCCESS;
    char *scratch = ct_ctx_scratch(ctx, own);
    const size_t nwant = (size_t)c->H.Qn * (1 + (size_t)c->H.nd);
    c->local_rc = MPI_ERR_NO_MEM;
    if (scratch != NULL) {
        ct_tuna_hier_tables(&c->H, scratch);
        c->out = ct_ctx_buffer(ctx, &ct_buf_shm_plan,
                               (size_t)P * sizeof *c->out + nwant * sizeof *c->want);
    }
    if (c->out != NULL) {
        c->want = (ct_shm_want *)(c->out + P);
        c->local_rc = MPI_SUCCESS;
    }
    ctx->call_extra += own + ct_shm_stream_bytes(P);
    c->uneven = 1;
    call_begin(c, 1);
    rc = call_advance(c, 1, &done);
out:
    return rc;
}

int ct_alltoallv_node_aware(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params)
{
    int rc;
    na_call c = {.a = a, .ctx = ctx, .radix = (int)params[0], .block_count = (int)params[1]};
    CT_CALL(node_window(ctx, &c.s));
    if (c.s == NULL) /* some node has no window: every rank comes here */
        return ct_alltoallv_tuna(a, ctx, (const long[]){2});
    if (!ct_shm_stream_idle(c.s)) /* the nonblocking calls started before this one */
        ct_shm_stream_progress(c.s, NULL, 1);
    if (ctx->topo.uniform)
        return node_aware_lanes(&c, (int)params[2]);
    return node_aware_uneven(&c);
out:
    return rc;
}

/* ------------------------------------------------------------------ */
/* The nonblocking and persistent forms: one step, a job of the window */
/* ------------------------------------------------------------------ */

static na_call *call_of(ct_shm_job *job)
{
    return (na_call *)((char *)job - offsetof(na_call, job));
}

static int job_begin(ct_shm_job *job)
{
    call_begin(call_of(job), 0);
    return 1;
}

static int job_advance(ct_shm_job *job, int *done) { return call_advance(call_of(job), 0, done); }

static int step_start(void *state)
{
    na_call *c = state;
    ct_shm_stream_enqueue(c->s, &c->job);
    return MPI_SUCCESS;
}

static int step_test(void *state, int *done)
{
    na_call *c = state;
    *done = ct_shm_stream_progress(c->s, &c->job, 0);
    return *done ? c->job.rc : MPI_SUCCESS;
}

static int step_wait(void *state)
{
    na_call *c = state;
    ct_shm_stream_progress(c->s, &c->job, 1);
    return c->job.rc;
}

static void step_free(void *state)
{
    na_call *c = state;
    if (c->uneven && c->tables != NULL)
        ct_tuna_hier_free_types(&c->H);
    ct_sched_free(&c->inter);
    ct_tuna_run_free(c->run);
    for (int m = 0; m < NMEM; m++)
        free(c->mem.p[m]);
    free(c->tables);
    free(c);
}

static const ct_step na_step = {step_start, step_test, step_wait, step_free};

/* A request's lanes: tables of its own, its lane a ct_tuna_run. */
static int lanes_plan(na_call *c, int leaders, size_t *bytes)
{
    ct_ctx *ctx = c->ctx;
    const ct_topo *topo = &ctx->topo;
    lanes *L = &c->L;
    *L = (lanes){.a = c->a, .ctx = ctx, .own = &c->mem, .s = c->s, .N = topo->N,
                 .n = topo->node, .h = topo->local_rank, .Q = topo->Q};
    L->leaders = leaders < L->Q ? leaders : L->Q;
    L->S = L->h < L->leaders ? (L->Q - L->h + L->leaders - 1) / L->leaders : 0;
    *bytes = lanes_layout(L, NULL, NULL, c->radix, &c->engine);
    c->tables = malloc(*bytes > 0 ? *bytes : 1);
    if (c->tables == NULL)
        return MPI_ERR_NO_MEM;
    lanes_layout(L, c->tables, NULL, c->radix, &c->engine);
    lanes_tables(L);
    if (L->S == 0)
        return MPI_SUCCESS;
    const ct_tuna_group grp = {.size = L->N, .index = L->n, .C = L->S * L->Q, .known_c = 0,
                               .known_n = L->Q, .arg = L, .rank_of = L->rank_of,
                               .source = lane_source, .target = lane_target,
                               .known = lane_known};
    return ct_tuna_run_new(&grp, c->inter.comm, c->radix, c->inter.tag, &c->run);
}

/* A request's Algorithm 3: M and whether offsets fit agreed here, at the
 * init (one allreduce, as the blocking call's), tables, G and plan of its
 * own. *fallback: offsets that exceed an int, served by TuNA. */
static int uneven_plan(na_call *c, size_t *bytes, int *fallback)
{
    int rc, fits;
    size_t own, M;
    const int P = c->ctx->size;
    CT_CALL(uneven_agree(&c->args, c->ctx, &M, &fits));
    *fallback = !fits;
    if (!fits)
        return MPI_SUCCESS;
    c->args.msg_size = (long)M;
    CT_CALL(ct_tuna_hier_begin(&c->H, &c->args, c->ctx, &own));
    if (c->H.M == 0)
        return MPI_SUCCESS;
    const size_t nwant = (size_t)c->H.Qn * (1 + (size_t)c->H.nd);
    const size_t plan = (size_t)P * sizeof *c->out + nwant * sizeof *c->want;
    *bytes = own + plan;
    c->tables = malloc(*bytes);
    if (c->tables == NULL)
        CT_CALL(MPI_ERR_NO_MEM);
    ct_tuna_hier_tables(&c->H, c->tables);
    c->out = (ct_shm_out *)(c->tables + own);
    c->want = (ct_shm_want *)(c->out + P);
    c->uneven = 1;
out:
    return rc;
}

/*
 * What moves when: at the start, the request joins the window's queue and,
 * once the window is its own, publishes its stream (round 0) into it; at
 * each test or wait, it reads what its node published, then runs the
 * lane's TuNA (or Algorithm 3's batches between nodes of different sizes)
 * and the delivery through the window as their messages arrive; at
 * completion, the last lane digit or batch and the delivered blocks. The
 * window is the call's from its round 0 to its delivery, so the calls on
 * it run one at a time, in the order they started (as shm's). Made with
 * memory of its own: a persistent request's later starts allocate nothing.
 */
int ct_alltoallv_node_aware_build(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params,
                                  ct_sched *s)
{
    int rc, fallback = 0;
    size_t bytes = 0;
    ct_shm_stream *win;
    CT_CALL(node_window(ctx, &win));
    if (win == NULL) /* some node has no window: every rank comes here */
        return ct_alltoallv_tuna_build(a, ctx, (const long[]){2}, s);
    na_call *c = calloc(1, sizeof *c);
    if (c == NULL)
        return MPI_ERR_NO_MEM;
    c->args = *a;
    c->a = &c->args;
    c->ctx = ctx;
    c->s = win;
    c->request = 1;
    c->radix = (int)params[0];
    c->block_count = (int)params[1];
    c->job = (ct_shm_job){.begin = job_begin, .advance = job_advance};
    ct_sched_prepare(&c->inter, ctx, s->tag, 1);
    if (ctx->topo.uniform)
        rc = lanes_plan(c, (int)params[2], &bytes);
    else
        rc = uneven_plan(c, &bytes, &fallback);
    if (rc != MPI_SUCCESS || fallback || (c->uneven == 0 && !ctx->topo.uniform)) {
        step_free(c);
        if (rc != MPI_SUCCESS)
            return rc;
        if (fallback) /* on every rank alike */
            return ct_alltoallv_tuna_build(a, ctx, (const long[]){2}, s);
        return ct_sched_reserve(s, 1, 1); /* every block empty on every rank */
    }
    rc = ct_sched_reserve(s, 1, 1);
    if (rc != MPI_SUCCESS) {
        step_free(c);
        return rc;
    }
    ct_sched_step(s, &na_step, c,
                  sizeof *c + bytes + (c->run != NULL ? ct_tuna_run_bytes(c->run) : 0));
    return MPI_SUCCESS;
out:
    return rc;
}
