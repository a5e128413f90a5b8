/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * neighbor_locality.c - locality-aware neighbourhood all-to-all
 * ([Collom2023]; the node-aware exchanges of Bienz et al.): a message to a
 * rank of another node travels in one aggregate per pair of nodes, through
 * one rank of each node, and is redistributed on the node that receives it.
 *
 * Who carries what. The messages from node A to node B go, in the node of
 * their origin, to the aggregator of B: A's rank of local index B mod |A|;
 * it sends them in one message to the receiver of A on B: B's rank of local
 * index A mod |B| (|A|: ranks on node A), which hands each rank of B its
 * part, one message per receiver and rank. So the pairs of nodes are spread
 * over the ranks of each node, as in [Geyko2023]'s locality-aware exchange
 * (sdde_locality.c), and any placement works. Messages between two ranks
 * of one node travel directly, as in the direct algorithm.
 *
 * Steps (parameter steps). The above is 3 steps: gather on the sending
 * node, one message between the nodes, hand out on the receiving node.
 * With 2 ([Bienz2020]'s two-step exchange) each rank is the aggregator of
 * its own messages: it sends those to node B in one message to B's rank of
 * its own local index modulo |B|, which hands them out. One inter-node
 * message per rank and destination node instead of per node pair, a hop
 * and its copy fewer. Both are the same plan and stages with another
 * choice of aggregator and receiver (aggregator_of, receiver_of); a
 * receiver's aggregates are grouped by the aggregator they come from.
 *
 * Order. An aggregate holds the messages of its node pair ordered by
 * origin, then destination, then edge (two ranks are joined by one edge at
 * most here, nbr_graph.h); what a receiver hands a rank is
 * that rank's messages from the receiver's source nodes, ordered by source
 * node, origin, edge. Both orders are computed by every rank that needs
 * them from the edge lists of its node, exchanged once per communicator
 * (plan_create): an aggregator learns which of its node's ranks send it
 * messages for which node, a receiver which messages its node's ranks
 * expect from the nodes it serves.
 *
 * A call, on bytes (CT_A_BYTES: the driver packs non-contiguous types):
 *   1. sizes, inside the node: each rank tells each aggregator the bytes of
 *      its chunks (its messages to one node) and each receiver the bytes of
 *      each message it expects from the nodes that receiver serves, in one
 *      message per pair of ranks: the receiver then knows how its
 *      aggregates split without any size crossing a node. Messages within
 *      the node are posted too, and so are the chunks: they travel with
 *      their sizes, not after them, and wait at their aggregator for its
 *      receives (so the sizes cost no round of their own). An aggregate
 *      that is one rank's chunk alone (every aggregate with 2 steps) leaves
 *      that rank at once too, to its receiver;
 *   2. the aggregators receive the chunks in place in the aggregates, and
 *      the receivers post the aggregates' receives;
 *   3. the aggregates, one message per node pair (3 steps) or per rank and
 *      destination node (2 steps);
 *   4. the receivers' parts to the ranks of their node, unpacked into the
 *      receive blocks.
 * Inter-node messages: one per pair of nodes that exchange anything, instead
 * of one per edge; the price is the two extra hops inside the nodes and
 * their copies.
 *
 * One block size (MPI_Neighbor_alltoall on a connected graph: one_block).
 * Every block of the call has the same bytes on every rank, so each rank
 * knows what the others would tell it in stage 1: a chunk's bytes are its
 * messages (counted in the plan) times the block, a message's the block.
 * Stage 1 then tells nothing and waits for nothing, and the call is the
 * persistent request's later starts below: where the blocks go directly
 * (large), nothing but the direct messages moves.
 *
 * Large blocks (parameter large): a block of at least `large` bytes to
 * another node travels directly, posted in stage 1 with the messages
 * inside the node, and counts 0 bytes in the sizes and chunks: aggregation
 * saves a message's latency, which a large block does not notice, and its
 * two extra copies and hops cost in proportion to its bytes. Both ends of
 * an edge know its size (MPI makes the two agree), so both take the same
 * way without telling each other. Where the ranks know that some block of
 * the call to another node has at least `large` bytes (call_largest: one
 * block size, a persistent request's init, an allreduce every 64 calls,
 * nonblocking or not, adopted 8 calls on), every block to another node
 * goes directly: where a call
 * mixes the two ways, its small blocks' hops and the sizes they need, behind
 * the large messages, outlast those (docs/cluster.md measured 0.84-0.87x
 * against 0.97-0.98x with every block direct, at blocks of 1-16 KiB), and a
 * call of every block direct tells no sizes: without a window it is
 * direct's messages alone (run_direct, and a request known to be such at
 * its build gets direct's schedule).
 *
 * Inside the node (parameter shm). With shm=1 the messages between two
 * ranks of one node do not travel point-to-point: every rank publishes them
 * in its node's shared-memory window (core/shm_stream.c), one block per
 * rank of the node, and reads from the part of every rank of the node its
 * message for itself, straight into its receive block: one synchronisation
 * of the node instead of a message per edge inside it. The blocking call
 * runs that exchange once stage 1 is posted (every rank of the node comes
 * to it without waiting for anything else); a request's exchange is a job
 * of the window's queue (shm_stream.h), begun at the start, advanced by
 * the tests and waits beside the stages, and complete before the request
 * is. Where the nodes are emulated across real ones (COLTUNE_PPN on several
 * hosts) or some node has no window, the messages travel point-to-point.
 * So do the messages of at least shm_large bytes (parameter shm_large),
 * which the MPI library copies once (CMA, XPMEM) where the window copies
 * twice: on one node it wins from 64 KiB (docs/defaults.md). Both ends of
 * an edge know its size and take the same way, as with large.
 *
 * The blocking call runs the four stages with a wait after each; the
 * nonblocking and persistent forms run the same stages as one step of a
 * request (core/sched.h): the start posts stage 1, each test or wait that
 * finds a stage's messages complete posts the next, the last unpacks (a
 * nonblocking call whose agreement on its largest block, call_largest, has
 * not completed at its start posts stage 1 once a test or wait finds it
 * complete). What moves when: at the start, the sizes, the chunks and the
 * messages inside the node; during progress, the aggregates and the parts;
 * at completion, the parts unpacked into the receive blocks. A request's
 * messages all carry its own tag (several may be in flight on a
 * communicator): between two ranks both sides post the kinds in the same
 * order (local, sizes, chunks, aggregates, parts), so they match as the
 * tags of the blocking call make them. Its memory is its own; a persistent
 * request's is made at its first start and reused, and so are its sizes:
 * the counts are the same at every start (bound at init), so the sizes are
 * told once, at the first start, and a later start posts the aggregators'
 * receives at once.
 */
#include "neighbor/nbr_graph.h"
#include "core/copy.h"
#include "core/log.h"
#include "core/sched.h"
#include "core/state.h"
#include "core/shm_stream.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* One tag per kind of message: between two ranks, the messages of one
 * kind match in the order both post them. */
enum {
    TAG_SIZES = CT_TAG_NEIGHBOR,
    TAG_CHUNK = CT_TAG_NEIGHBOR + 1,
    TAG_AGGREGATE = CT_TAG_NEIGHBOR + 2,
    TAG_PART = CT_TAG_NEIGHBOR + 3,
    TAG_DIRECT = CT_TAG_NEIGHBOR + 4, /* inside the node, and large blocks */
    TAG_PLAN = CT_TAG_NEIGHBOR + 5
};

/* An agreement of the ranks on the largest block to another node of the
 * calls (call_largest): made at once by a blocking call, or begun by a
 * nonblocking one (MPI_Iallreduce). Shared by the plan and by the requests
 * waiting for it to complete (counted in refs, atomic), whose progress may
 * come from any thread: lock guards its test. Each agreement has its own:
 * a thread that waits for one, testing it under its lock, leaves the
 * others to the requests that wait for them (the library's progress
 * engine runs those from within the test). */
typedef struct agreement {
    MPI_Request req; /* MPI_REQUEST_NULL once complete */
    int64_t mine, largest;
    long large;         /* of the call that began it, and its context: for the log */
    const ct_ctx *ctx;
    int refs;
    pthread_mutex_t lock;
    /* Begun (MPI_Iallreduce): listed until freed, so that MPI_Finalize
     * completes it where no call did (one begun ahead of its use, on a
     * communicator the program never frees) */
    ct_outstanding outstanding;
} agreement;

/* A list of groups: group g is items[first[g] .. first[g + 1]). */
typedef struct groups {
    int n;
    int *peer;  /* the rank each group is exchanged with */
    int *key;   /* the node it concerns (chunks, aggregates) */
    int *first; /* [n + 1] */
} groups;

typedef struct plan {
    int self; /* this rank's index among its node's ranks (by rank) */
    /* As an origin: chunks (one per destination node, by aggregator then
     * node: what each aggregator is told), peer the aggregator, key the
     * node; out[] the edges k of each, by destination then k. */
    groups chunk;
    int *out;
    /* As a destination: parts (one per receiver of this node, ascending
     * rank), peer the receiver; in[] the edges j of each, by source node,
     * origin, j. */
    groups part;
    int *in;
    /* As an aggregator: the chunks it gathers, one group per destination
     * node (ascending), peer the receiver there; contrib[] the origins by
     * rank, chunk_at[] where each chunk's size lands in asizes, own[] the
     * index of this rank's own chunk among its chunks (-1 for the others). */
    groups agg;
    int *contrib, *chunk_at, *own;
    /* The messages in each chunk it hears, in asizes' order: with one block
     * size (a call of one size) the chunk's bytes without being told. */
    int *chunk_msgs;
    /* As an origin, for each of its chunks that is its own aggregate's only
     * chunk (all of them with 2 steps): the receiver it goes to at once,
     * at stage 1; -1 for the others. */
    int *solo;
    /* The chunk sizes it hears: from each rank of its node (by rank; itself
     * included), asz.first into asizes. */
    groups asz;
    /* As a receiver: one group per source node (ascending), peer the
     * aggregator there; msg_at[] each message's place in rsizes, by origin,
     * destination, edge; msg_dest[] its destination's index in rsz. */
    groups src;
    int *msg_at, *msg_dest;
    /* The message sizes it hears: from each rank of its node (by rank;
     * itself included), the messages that rank expects of the nodes this one
     * serves, rsz.first into rsizes. */
    groups rsz;
    int n_asizes, n_rsizes, n_msgs;
    int max_reqs;
    /* Inside the node, by the local index of the other rank (the member
     * index of the node's window): the edge k of this rank's message to it,
     * and the edge j of its message to this rank, or -1. */
    int *to_member, *from_member;
    /* The calls' agreements on their largest block to another node
     * (call_largest): the calls that take one so far, and the agreement in
     * force (NULL: none yet; it may not have completed on this rank). The
     * only part of the plan a call changes: every rank of the communicator
     * makes the calls in the same order, in one thread at a time. */
    long calls;
    agreement *force, *next; /* next: begun, in force from AGREE_LAG calls on */
} plan;

/* ------------------------------------------------------------------ */
/* Who serves which pair of nodes                                      */
/* ------------------------------------------------------------------ */

/* The ranks of each node, and who carries the messages between two. */
typedef struct node_map {
    const ct_ctx *ctx;
    int *ranks; /* [P] the ranks of each node, by rank: ranks[first[n] ...] */
    int *first; /* [N + 1] */
    int *local; /* [P] each rank's index among its node's ranks */
    int steps;  /* 3 or 2 (parameter steps: the top of the file) */
} node_map;

static void node_map_free(node_map *m)
{
    free(m->ranks);
    free(m->first);
    free(m->local);
}

static int node_map_make(const ct_ctx *ctx, int steps, node_map *m)
{
    int rc = MPI_SUCCESS;
    const int P = ctx->size, N = ctx->topo.N;
    *m = (node_map){ctx, NULL, NULL, NULL, steps};
    CT_ALLOC(m->ranks, (size_t)P * sizeof(int));
    CT_ALLOC(m->first, (size_t)(N + 1) * sizeof(int));
    CT_ALLOC(m->local, (size_t)P * sizeof(int));
    m->first[0] = 0;
    for (int n = 0; n < N; n++)
        m->first[n + 1] = m->first[n] + ctx->topo.node_size[n];
    for (int n = 0; n < N; n++)
        m->local[n] = 0; /* the ranks placed on node n so far (reused below) */
    for (int r = 0; r < P; r++) {
        const int n = ctx->topo.node_of[r];
        m->ranks[m->first[n] + m->local[n]++] = r;
    }
    for (int n = 0; n < N; n++)
        for (int i = m->first[n]; i < m->first[n + 1]; i++)
            m->local[m->ranks[i]] = i - m->first[n];
out:
    return rc;
}

/* The rank of node `node` whose local index is `index` modulo its size. */
static int node_rank(const node_map *m, int node, int index)
{
    return m->ranks[m->first[node] + index % m->ctx->topo.node_size[node]];
}

/* The rank that aggregates origin's messages to node B: with 3 steps, the
 * rank of origin's node of local index B; with 2, origin itself. */
static int aggregator_of(const node_map *m, int origin, int B)
{
    return m->steps == 2 ? origin : node_rank(m, m->ctx->topo.node_of[origin], B);
}

/* The rank of node B that receives the aggregate of aggregator y (from
 * node A): with 3 steps, B's rank of local index A; with 2, B's rank of
 * y's local index ([Bienz2020]'s pairing). */
static int receiver_of(const node_map *m, int y, int B)
{
    return node_rank(m, B, m->steps == 2 ? m->local[y] : m->ctx->topo.node_of[y]);
}

/* ------------------------------------------------------------------ */
/* The plan, once per communicator                                     */
/* ------------------------------------------------------------------ */

static void groups_free(groups *g)
{
    free(g->peer);
    free(g->key);
    free(g->first);
}

static int groups_alloc(groups *g, int n)
{
    g->n = n;
    g->peer = calloc((size_t)n + 1, sizeof(int));
    g->key = calloc((size_t)n + 1, sizeof(int));
    g->first = calloc((size_t)n + 1, sizeof(int));
    return g->peer && g->key && g->first ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* Logs an agreement that has completed on this rank (COLTUNE_VERBOSE=2,
 * by the communicator's rank 0), with the way it gives the blocks. */
static void agreement_log(const agreement *g)
{
    const ct_ctx *ctx = g->ctx;
    if (ct_settings_get()->verbose >= 2 && ctx->decide_rank == 0)
        ct_log("%s#%d: neighbour locality: largest block to another node %lld bytes: %s",
               ctx->name, ctx->serial, (long long)g->largest,
               g->largest >= g->large ? "every block to another node directly"
                                      : "blocks under large aggregated");
}

static void agreement_hold(agreement *g) { __atomic_add_fetch(&g->refs, 1, __ATOMIC_RELAXED); }

/* Drops a reference to g; the last frees it, completed first if it has not
 * (only where a request that waited for it failed, or the plan goes). */
static void agreement_put(agreement *g)
{
    if (g == NULL || __atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    ct_outstanding_remove(&g->outstanding);
    if (g->req != MPI_REQUEST_NULL && PMPI_Wait(&g->req, MPI_STATUS_IGNORE) == MPI_SUCCESS)
        agreement_log(g);
    pthread_mutex_destroy(&g->lock);
    free(g);
}

static void plan_free(plan *p)
{
    if (p == NULL)
        return;
    agreement_put(p->force);
    agreement_put(p->next);
    groups_free(&p->chunk);
    groups_free(&p->part);
    groups_free(&p->agg);
    groups_free(&p->asz);
    groups_free(&p->src);
    groups_free(&p->rsz);
    free(p->out);
    free(p->in);
    free(p->contrib);
    free(p->chunk_at);
    free(p->own);
    free(p->chunk_msgs);
    free(p->solo);
    free(p->msg_at);
    free(p->msg_dest);
    free(p->to_member);
    free(p->from_member);
    free(p);
}

/* An edge, for sorting: keys a, b, c, then its index. */
typedef struct edge {
    int a, b, c, idx;
} edge;

static int edge_cmp(const void *x, const void *y)
{
    const edge *e = x, *f = y;
    if (e->a != f->a)
        return e->a < f->a ? -1 : 1;
    if (e->b != f->b)
        return e->b < f->b ? -1 : 1;
    if (e->c != f->c)
        return e->c < f->c ? -1 : 1;
    return (e->idx > f->idx) - (e->idx < f->idx);
}

/* Is edge i the first of its group: keyed by a, or with pair by (a, b)? */
static int group_starts(const edge *e, int i, int pair)
{
    return i == 0 || e[i].a != e[i - 1].a || (pair && e[i].b != e[i - 1].b);
}

/* Groups sorted edges by a (peer and key a), or with pair by (a, b) (peer a,
 * key b); items[i] is edge i's index. */
static int group_edges(const edge *e, int n, groups *g, int *items, int pair)
{
    int ng = 0;
    for (int i = 0; i < n; i++)
        ng += group_starts(e, i, pair);
    if (groups_alloc(g, ng) != MPI_SUCCESS)
        return MPI_ERR_NO_MEM;
    ng = 0;
    for (int i = 0; i < n; i++) {
        if (group_starts(e, i, pair)) {
            g->peer[ng] = e[i].a;
            g->key[ng] = pair ? e[i].b : e[i].a;
            g->first[ng++] = i;
        }
        items[i] = e[i].idx;
    }
    g->first[ng] = n;
    return MPI_SUCCESS;
}

/* This rank's chunks (edges k to other nodes, by aggregator, node,
 * destination, k) and parts (edges j from other nodes, by receiver, source
 * node, origin, j). */
static int plan_own(plan *p, const ct_nbr_graph *g, const node_map *m)
{
    int rc = MPI_SUCCESS, n = 0;
    const ct_ctx *ctx = m->ctx;
    const int *node_of = ctx->topo.node_of, me = ctx->topo.node;
    const int deg = g->outdegree > g->indegree ? g->outdegree : g->indegree;
    edge *e = NULL;
    CT_ALLOC(e, (size_t)deg * sizeof(edge));
    for (int k = 0; k < g->outdegree; k++) {
        const int d = g->destinations[k];
        if (d != MPI_PROC_NULL && node_of[d] != me)
            e[n++] = (edge){aggregator_of(m, ctx->rank, node_of[d]), node_of[d], d, k};
    }
    qsort(e, (size_t)n, sizeof *e, edge_cmp);
    CT_ALLOC(p->out, (size_t)n * sizeof(int));
    CT_CALL(group_edges(e, n, &p->chunk, p->out, 1));
    n = 0;
    for (int j = 0; j < g->indegree; j++) {
        const int s = g->sources[j];
        if (s != MPI_PROC_NULL && node_of[s] != me)
            e[n++] = (edge){receiver_of(m, aggregator_of(m, s, me), me), node_of[s], s, j};
    }
    qsort(e, (size_t)n, sizeof *e, edge_cmp);
    CT_ALLOC(p->in, (size_t)n * sizeof(int));
    CT_CALL(group_edges(e, n, &p->part, p->in, 0));
out:
    free(e);
    return rc;
}

/*
 * What this rank tells rank y of its node (tell[]: the two lengths first):
 * the node and the number of messages of each of its chunks whose
 * aggregator is y, then for each message it
 * expects through receiver y, its source node and origin, in its part's
 * order. y learns from it what it aggregates and receives.
 */
static int plan_tell(const plan *p, const ct_nbr_graph *g, const ct_ctx *ctx, int y, int *tell)
{
    int n = 2, nb = 0, ne = 0;
    for (int c = 0; c < p->chunk.n; c++) {
        if (p->chunk.peer[c] != y)
            continue;
        tell[n + 2 * nb] = p->chunk.key[c];
        tell[n + 2 * nb + 1] = p->chunk.first[c + 1] - p->chunk.first[c];
        nb++;
    }
    n += 2 * nb;
    for (int q = 0; q < p->part.n; q++) {
        if (p->part.peer[q] != y)
            continue;
        for (int i = p->part.first[q]; i < p->part.first[q + 1]; i++) {
            const int s = g->sources[p->in[i]];
            tell[n + 2 * ne] = ctx->topo.node_of[s];
            tell[n + 2 * ne + 1] = s;
            ne++;
        }
    }
    tell[0] = nb;
    tell[1] = ne;
    return n + 2 * ne;
}

/* Exchanges the tells with every rank of the node (two rounds: lengths,
 * then contents); heard[i] is what node rank i said (its length first).
 * Like every step of a collective, it leaves the node's other ranks waiting
 * if this rank fails halfway (out of memory); what it posted completes
 * before its buffers go. */
static int plan_exchange(const plan *p, const ct_nbr_graph *g, ct_ctx *ctx, const node_map *m,
                         int **heard)
{
    int rc = MPI_SUCCESS, posted = 0;
    const int me = ctx->topo.node, Q = ctx->topo.node_size[me];
    const int *mine = m->ranks + m->first[me];
    const int most = 2 + 2 * p->chunk.n + 2 * g->indegree;
    int *tells = NULL, *tlen = NULL, *hlen = NULL;
    MPI_Request *reqs = NULL;
    CT_ALLOC(tells, (size_t)Q * (size_t)most * sizeof(int));
    CT_ALLOC(tlen, (size_t)Q * 2 * sizeof(int));
    hlen = tlen + Q;
    CT_ALLOC(reqs, (size_t)Q * 2 * sizeof(MPI_Request));
    for (int i = 0; i < Q; i++)
        tlen[i] = plan_tell(p, g, ctx, mine[i], tells + (size_t)i * most);
    for (int i = 0; i < Q; i++) {
        CT_CALL(PMPI_Irecv(&hlen[i], 1, MPI_INT, mine[i], TAG_PLAN, ctx->comm, &reqs[posted]));
        posted++;
        CT_CALL(PMPI_Isend(&tlen[i], 1, MPI_INT, mine[i], TAG_PLAN, ctx->comm, &reqs[posted]));
        posted++;
    }
    posted = 0;
    CT_CALL(PMPI_Waitall(2 * Q, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < Q; i++)
        CT_ALLOC(heard[i], (size_t)hlen[i] * sizeof(int));
    for (int i = 0; i < Q; i++) {
        CT_CALL(PMPI_Irecv(heard[i], hlen[i], MPI_INT, mine[i], TAG_PLAN, ctx->comm,
                           &reqs[posted]));
        posted++;
        CT_CALL(PMPI_Isend(tells + (size_t)i * most, tlen[i], MPI_INT, mine[i], TAG_PLAN,
                           ctx->comm, &reqs[posted]));
        posted++;
    }
    posted = 0;
    CT_CALL(PMPI_Waitall(2 * Q, reqs, MPI_STATUSES_IGNORE));
out:
    if (posted > 0) /* a post failed: what was posted completes first */
        (void)PMPI_Waitall(posted, reqs, MPI_STATUSES_IGNORE);
    free(tells);
    free(tlen);
    free(reqs);
    return rc;
}

/* Is aggregate c this rank's own chunk alone? */
static int agg_solo(const plan *p, int c)
{
    return p->agg.first[c + 1] - p->agg.first[c] == 1 && p->own[p->agg.first[c]] >= 0;
}

/* As an aggregator: the chunks heard of, by destination node then origin
 * (an aggregate's order); each chunk's size lands at the origin's sizes
 * message, in the order the origin told them (ascending node). */
static int plan_aggregate(plan *p, int *const *heard, const node_map *m)
{
    int rc = MPI_SUCCESS, n = 0;
    const ct_ctx *ctx = m->ctx;
    const int me = ctx->topo.node, Q = ctx->topo.node_size[me];
    const int *mine = m->ranks + m->first[me];
    edge *e = NULL;
    CT_CALL(groups_alloc(&p->asz, Q));
    for (int i = 0; i < Q; i++) {
        p->asz.peer[i] = mine[i];
        p->asz.first[i] = n;
        n += heard[i][0];
    }
    p->asz.first[Q] = p->n_asizes = n;
    CT_ALLOC(e, (size_t)n * sizeof(edge));
    CT_ALLOC(p->chunk_msgs, (size_t)n * sizeof(int));
    for (int i = 0, x = 0; i < Q; i++)
        for (int b = 0; b < heard[i][0]; b++, x++) {
            e[x] = (edge){heard[i][2 + 2 * b], mine[i], 0, x};
            p->chunk_msgs[x] = heard[i][3 + 2 * b];
        }
    qsort(e, (size_t)n, sizeof *e, edge_cmp);
    CT_ALLOC(p->chunk_at, (size_t)n * sizeof(int));
    CT_ALLOC(p->contrib, (size_t)n * sizeof(int));
    CT_CALL(group_edges(e, n, &p->agg, p->chunk_at, 0));
    CT_ALLOC(p->own, (size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        p->contrib[i] = e[i].b;
        p->own[i] = -1;
        for (int ch = 0; e[i].b == ctx->rank && ch < p->chunk.n; ch++)
            if (p->chunk.key[ch] == e[i].a)
                p->own[i] = ch;
    }
    /* the receiver on each destination node B of this rank's aggregate */
    for (int c = 0; c < p->agg.n; c++)
        p->agg.peer[c] = receiver_of(m, ctx->rank, p->agg.key[c]);
    /* this rank's chunks that are their aggregate alone */
    CT_ALLOC(p->solo, (size_t)(p->chunk.n > 0 ? p->chunk.n : 1) * sizeof(int));
    for (int ch = 0; ch < p->chunk.n; ch++)
        p->solo[ch] = -1;
    for (int c = 0; c < p->agg.n; c++)
        if (agg_solo(p, c))
            p->solo[p->own[p->agg.first[c]]] = p->agg.peer[c];
out:
    free(e);
    return rc;
}

/* As a receiver: the messages its node's ranks expect through it, by
 * aggregator (one group per aggregate, peer the aggregator), origin,
 * destination, then their order at the destination (an aggregate's order);
 * each message's size lands at the destination's sizes message, in its
 * order. */
static int plan_receive(plan *p, int *const *heard, const node_map *m)
{
    int rc = MPI_SUCCESS, n = 0;
    const ct_ctx *ctx = m->ctx;
    const int me = ctx->topo.node, Q = ctx->topo.node_size[me];
    const int *mine = m->ranks + m->first[me];
    edge *e = NULL;
    CT_CALL(groups_alloc(&p->rsz, Q));
    for (int i = 0; i < Q; i++) {
        p->rsz.peer[i] = mine[i];
        p->rsz.first[i] = n;
        n += heard[i][1];
    }
    p->rsz.first[Q] = p->n_rsizes = p->n_msgs = n;
    CT_ALLOC(e, (size_t)n * sizeof(edge));
    for (int i = 0, y = 0; i < Q; i++) {
        const int *msgs = heard[i] + 2 + 2 * heard[i][0]; /* pairs: source node, origin */
        for (int x = 0; x < heard[i][1]; x++, y++) {
            const int origin = msgs[2 * x + 1];
            e[y] = (edge){aggregator_of(m, origin, me), origin, i, y};
        }
    }
    qsort(e, (size_t)n, sizeof *e, edge_cmp);
    CT_ALLOC(p->msg_at, (size_t)n * sizeof(int));
    CT_ALLOC(p->msg_dest, (size_t)n * sizeof(int));
    CT_CALL(group_edges(e, n, &p->src, p->msg_at, 0));
    for (int i = 0; i < n; i++)
        p->msg_dest[i] = e[i].c;
out:
    free(e);
    return rc;
}

/* The edges inside the node, by the other rank's local index (two ranks
 * are joined by one edge each way at most: nbr_graph.h). */
static int plan_members(plan *p, const ct_nbr_graph *g, const ct_ctx *ctx)
{
    int rc = MPI_SUCCESS;
    const ct_topo *t = &ctx->topo;
    const int Q = t->node_size[t->node];
    CT_ALLOC(p->to_member, (size_t)Q * sizeof(int));
    CT_ALLOC(p->from_member, (size_t)Q * sizeof(int));
    for (int i = 0; i < Q; i++)
        p->to_member[i] = p->from_member[i] = -1;
    for (int k = 0; k < g->outdegree; k++) {
        const int d = g->destinations[k];
        if (d != MPI_PROC_NULL && t->node_of[d] == t->node)
            p->to_member[t->local_of[d]] = k;
    }
    for (int j = 0; j < g->indegree; j++) {
        const int src = g->sources[j];
        if (src != MPI_PROC_NULL && t->node_of[src] == t->node)
            p->from_member[t->local_of[src]] = j;
    }
out:
    return rc;
}

static int plan_create(ct_ctx *ctx, const ct_nbr_graph *g, int steps, void **obj)
{
    int rc = MPI_SUCCESS;
    const int Q = ctx->topo.node_size[ctx->topo.node];
    int **heard = NULL;
    node_map m = {0};
    plan *p = calloc(1, sizeof *p);
    *obj = NULL;
    if (p == NULL)
        return MPI_ERR_NO_MEM;
    CT_CALL(node_map_make(ctx, steps, &m));
    p->self = m.local[ctx->rank];
    CT_CALL(plan_own(p, g, &m));
    heard = calloc((size_t)Q, sizeof *heard);
    if (heard == NULL) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    CT_CALL(plan_members(p, g, ctx));
    CT_CALL(plan_exchange(p, g, ctx, &m, heard));
    CT_CALL(plan_aggregate(p, heard, &m));
    CT_CALL(plan_receive(p, heard, &m));
    p->max_reqs = g->indegree + g->outdegree + 2 * p->chunk.n + 2 * p->part.n + 2 * Q +
                  p->n_asizes + 2 * p->src.n + p->agg.n;
    *obj = p;
    p = NULL;
out:
    for (int i = 0; heard != NULL && i < Q; i++)
        free(heard[i]);
    free(heard);
    node_map_free(&m);
    plan_free(p);
    return rc;
}

static int plan_create3(ct_ctx *ctx, void *arg, void **obj)
{
    return plan_create(ctx, arg, 3, obj);
}
static int plan_create2(ct_ctx *ctx, void *arg, void **obj)
{
    return plan_create(ctx, arg, 2, obj);
}
static void plan_release(void *obj) { plan_free(obj); }

/* One plan per communicator and number of steps. */
static const ct_ctx_key plan_key3 = {"neighbourhood locality plan", plan_create3, plan_release,
                                     NULL},
                        plan_key2 = {"neighbourhood locality plan (2 steps)", plan_create2,
                                     plan_release, NULL};

/* ------------------------------------------------------------------ */
/* A call                                                              */
/* ------------------------------------------------------------------ */

/* A call's state: its sizes (one buffer of the context), then its bytes
 * (another), carved once the sizes are known. */
typedef struct call {
    const ct_neighbor_args *a;
    const ct_nbr_graph *g;
    const plan *p;
    ct_ctx *ctx;
    int tag;   /* a request's one tag, or -1: a tag per kind (the blocking call) */
    long large; /* blocks of at least this many bytes go directly (0: none) */
    long shm_large; /* with a window: blocks inside the node of at least this many
                       bytes go point-to-point (0: none) */
    int all_direct; /* every block to another node goes directly, whatever its
                       size (call_largest) */
    int stage; /* the stage whose messages are in flight (requests) */
    int sized; /* the sizes and layout are known without telling them: a
                  persistent request one of whose starts completed (they
                  hold for every later start), or a call of one block size */
    int64_t block; /* a call of one block size: its bytes per block, else -1 */
    agreement *pending; /* a nonblocking call's agreement, not yet complete
                           here: its way (all_direct) and stage 1 wait for it */
    int from;  /* the requests that stage waits for: reqs[from .. nreqs) */
    int64_t *csizes;   /* [chunk.n] this rank's chunks */
    int64_t *msizes;   /* [in] the messages it expects through each receiver */
    int64_t *asizes;   /* [n_asizes] the chunks it aggregates */
    int64_t *rsizes;   /* [n_rsizes] the messages it receives as a receiver */
    int64_t *tell;     /* [chunk.n + in] csizes and msizes, by the rank told */
    int64_t *heard;    /* [n_asizes + n_rsizes] what each rank of the node told */
    int64_t *part_off; /* [n_rsizes] each one's place in its destination's part */
    int64_t *msg_off;  /* [n_msgs] each one's place among the aggregates received */
    int64_t *chunk_off, *agg_off, *ragg_off, *part_base, *piece_off;
    char *chunks; /* with the sizes: known at stage 1 */
    char *aggs, *raggs, *parts, *pieces;
    MPI_Request *reqs;
    int nreqs;
    /* Inside the node through its window (parameter shm), or NULL; a
     * request's exchange is its job (queued: not yet seen complete), and
     * win_rc how stage 1 went on this rank, which its round 0 tells;
     * job_rc how the exchange went. */
    ct_shm_stream *win;
    ct_shm_xchg xchg;
    ct_shm_job job;
    int queued, win_rc, job_rc;
    /* A request's own memory (the blocking call uses the context's) */
    ct_neighbor_args args;
    int64_t *own_sizes;
    MPI_Request *own_reqs;
    char *own_bytes;
    size_t own_bytes_cap;
} call;

static const ct_ctx_buf_key buf_sizes = {"neighbour locality sizes"},
                            buf_bytes = {"neighbour locality bytes"};

static MPI_Count send_len(const call *c, int k) { return ct_vec_at(&c->a->sendcounts, k); }
static MPI_Count recv_len(const call *c, int j) { return ct_vec_at(&c->a->recvcounts, j); }

/* Does a block of n bytes to or from another node travel directly? */
static int goes_direct(const call *c, MPI_Count n)
{
    return c->all_direct || (c->large > 0 && n >= c->large);
}

/* Does a block of n bytes between two ranks of this node go through the
 * node's window (else point-to-point)? Both ends of an edge know its size,
 * so both answer alike. */
static int in_window(const call *c, MPI_Count n)
{
    return c->win != NULL && !(c->shm_large > 0 && n >= c->shm_large);
}

/* The bytes of a block that go through the aggregates: 0 for one that goes
 * directly. */
static int64_t send_agg(const call *c, int k)
{
    const MPI_Count n = send_len(c, k);
    return goes_direct(c, n) ? 0 : n;
}
static int64_t recv_agg(const call *c, int j)
{
    const MPI_Count n = recv_len(c, j);
    return goes_direct(c, n) ? 0 : n;
}
static const char *send_at(const call *c, int k)
{
    return (const char *)c->a->sendbuf + (MPI_Aint)ct_vec_at(&c->a->sdispls, k);
}
static char *recv_at(const call *c, int j)
{
    return (char *)c->a->recvbuf + (MPI_Aint)ct_vec_at(&c->a->rdispls, j);
}

/* Does chunk ch leave this rank at stage 1 (to its aggregator, or as a solo
 * aggregate to its receiver)? */
static int chunk_sent(const call *c, int ch)
{
    return c->p->chunk.peer[ch] != c->ctx->rank || c->p->solo[ch] >= 0;
}

static int post(call *c, int send, const void *buf, int64_t n, MPI_Datatype type, int peer,
                int kind)
{
    MPI_Request *r = &c->reqs[c->nreqs++];
    const int tag = c->tag >= 0 ? c->tag : kind;
    if (send)
        return ct_isend(buf, n, type, peer, tag, c->ctx->comm, r);
    return ct_irecv((void *)buf, n, type, peer, tag, c->ctx->comm, r);
}

/* Completes the requests posted from index `from` on. */
static int wait_from(call *c, int from)
{
    const int rc = PMPI_Waitall(c->nreqs - from, c->reqs + from, MPI_STATUSES_IGNORE);
    c->nreqs = from;
    return rc;
}

static int64_t sum(const int64_t *v, int from, int to)
{
    int64_t s = 0;
    for (int i = from; i < to; i++)
        s += v[i];
    return s;
}

/* Packs chunk ch's blocks back to back at dst. */
static void pack_chunk(const call *c, int ch, char *dst)
{
    const plan *p = c->p;
    for (int i = p->chunk.first[ch]; i < p->chunk.first[ch + 1]; i++) {
        const size_t n = (size_t)send_agg(c, p->out[i]);
        if (n > 0)
            ct_memcpy(dst, send_at(c, p->out[i]), n);
        dst += n;
    }
}

/* Carves n int64 slots from *at. */
static int64_t *carve(int64_t **at, size_t n)
{
    int64_t *p = *at;
    *at += n;
    return p;
}

/* The bytes of chunk ch. */
static int64_t chunk_bytes(const call *c, int ch)
{
    int64_t b = 0;
    for (int i = c->p->chunk.first[ch]; i < c->p->chunk.first[ch + 1]; i++)
        b += send_agg(c, c->p->out[i]);
    return b;
}

/* The call's sizes and offsets, and the chunks this rank sends (the
 * bytes it knows alone), carved out of one buffer of the context; this
 * rank's own chunks and expected messages. */
static int call_sizes(call *c)
{
    const plan *p = c->p;
    const int nm = p->part.first[p->part.n];
    int64_t chunks = 0;
    for (int ch = 0; ch < p->chunk.n; ch++)
        if (chunk_sent(c, ch))
            chunks += chunk_bytes(c, ch);
    const size_t chunk_slots = ((size_t)chunks + sizeof(int64_t) - 1) / sizeof(int64_t);
    const size_t n = 2 * ((size_t)p->chunk.n + (size_t)nm + (size_t)p->n_asizes) +
                     3 * (size_t)p->n_rsizes + (size_t)p->n_msgs + (size_t)p->chunk.n +
                     (size_t)p->n_asizes + (size_t)p->src.n + (size_t)p->rsz.n +
                     (size_t)p->part.n + 5 + chunk_slots;
    int64_t *z;
    if (c->tag < 0) {
        z = ct_ctx_buffer(c->ctx, &buf_sizes, n * sizeof(int64_t));
        c->reqs = ct_ctx_requests(c->ctx, p->max_reqs);
        c->ctx->call_extra += n * sizeof(int64_t);
    } else { /* a request: made at its first start (its counts do not change) */
        if (c->own_sizes == NULL)
            c->own_sizes = malloc(n * sizeof(int64_t));
        if (c->own_reqs == NULL)
            c->own_reqs = malloc((size_t)(p->max_reqs > 0 ? p->max_reqs : 1) * sizeof(MPI_Request));
        z = c->own_sizes;
        c->reqs = c->own_reqs;
    }
    if (z == NULL || c->reqs == NULL)
        return MPI_ERR_NO_MEM;
    c->csizes = carve(&z, (size_t)p->chunk.n);
    c->msizes = carve(&z, (size_t)nm);
    c->asizes = carve(&z, (size_t)p->n_asizes);
    c->rsizes = carve(&z, (size_t)p->n_rsizes);
    c->tell = carve(&z, (size_t)p->chunk.n + (size_t)nm);
    c->heard = carve(&z, (size_t)p->n_asizes + (size_t)p->n_rsizes);
    c->part_off = carve(&z, (size_t)p->n_rsizes);
    c->msg_off = carve(&z, (size_t)p->n_msgs);
    c->chunk_off = carve(&z, (size_t)p->chunk.n + 1);
    c->agg_off = carve(&z, (size_t)p->n_asizes + 1);
    c->ragg_off = carve(&z, (size_t)p->src.n + 1);
    c->part_base = carve(&z, (size_t)p->rsz.n + 1);
    c->piece_off = carve(&z, (size_t)p->part.n + 1);
    c->chunks = (char *)carve(&z, chunk_slots);
    chunks = 0;
    for (int ch = 0; ch < p->chunk.n; ch++) {
        c->csizes[ch] = chunk_bytes(c, ch);
        c->chunk_off[ch] = chunks;
        chunks += chunk_sent(c, ch) ? c->csizes[ch] : 0;
    }
    for (int i = 0; i < nm; i++)
        c->msizes[i] = recv_agg(c, p->in[i]);
    return MPI_SUCCESS;
}

/* The sizes, one message each way between two ranks x, y of the node: x
 * tells y the sizes of its chunks that y aggregates, then those of the
 * messages it expects through y as a receiver. What node rank i told lands
 * in heard at asz.first[i] + rsz.first[i] (then spread, spread_sizes). */
static int exchange_sizes(call *c)
{
    int rc = MPI_SUCCESS, ch = 0, q = 0, told = 0;
    const plan *p = c->p;
    for (int i = 0; i < p->asz.n; i++) {
        const int y = p->asz.peer[i];
        const int at = p->asz.first[i] + p->rsz.first[i];
        const int hn = p->asz.first[i + 1] - p->asz.first[i] + p->rsz.first[i + 1] -
                       p->rsz.first[i];
        int64_t *tell = c->tell + told;
        int n = 0;
        /* chunks by aggregator and parts by receiver, both by rank (plan_own) */
        for (; ch < p->chunk.n && p->chunk.peer[ch] == y; ch++)
            tell[n++] = c->csizes[ch];
        if (q < p->part.n && p->part.peer[q] == y) {
            for (int m = p->part.first[q]; m < p->part.first[q + 1]; m++)
                tell[n++] = c->msizes[m];
            q++;
        }
        told += n;
        if (y == c->ctx->rank) {
            memcpy(c->heard + at, tell, (size_t)n * sizeof *tell);
            continue;
        }
        if (hn > 0)
            CT_CALL(post(c, 0, c->heard + at, hn, MPI_INT64_T, y, TAG_SIZES));
        if (n > 0)
            CT_CALL(post(c, 1, tell, n, MPI_INT64_T, y, TAG_SIZES));
    }
out:
    return rc;
}

/* What the ranks of the node told, spread into asizes and rsizes. */
static void spread_sizes(call *c)
{
    const plan *p = c->p;
    for (int i = 0; i < p->asz.n; i++) {
        const int at = p->asz.first[i] + p->rsz.first[i];
        const int na = p->asz.first[i + 1] - p->asz.first[i];
        memcpy(c->asizes + p->asz.first[i], c->heard + at, (size_t)na * sizeof(int64_t));
        memcpy(c->rsizes + p->rsz.first[i], c->heard + at + na,
               (size_t)(p->rsz.first[i + 1] - p->rsz.first[i]) * sizeof(int64_t));
    }
}

/* Moves the request just posted before the stage's: it completes at the end
 * of the call, with the messages inside the node. */
static void complete_at_end(call *c)
{
    const MPI_Request r = c->reqs[c->nreqs - 1];
    c->reqs[c->nreqs - 1] = c->reqs[c->from];
    c->reqs[c->from++] = r;
}

/* This rank's chunks to their aggregators; a chunk that is its aggregate
 * alone goes to its receiver as that aggregate, at once; its other own
 * chunks, where it is the aggregator, are packed in place at stage 2. */
static int post_chunks(call *c)
{
    int rc = MPI_SUCCESS;
    const plan *p = c->p;
    for (int ch = 0; ch < p->chunk.n; ch++) {
        const int solo = p->solo[ch] >= 0;
        if (!chunk_sent(c, ch) || c->csizes[ch] == 0)
            continue;
        pack_chunk(c, ch, c->chunks + c->chunk_off[ch]);
        CT_CALL(post(c, 1, c->chunks + c->chunk_off[ch], c->csizes[ch], MPI_BYTE,
                     solo ? p->solo[ch] : p->chunk.peer[ch], solo ? TAG_AGGREGATE : TAG_CHUNK));
        complete_at_end(c);
    }
out:
    return rc;
}

static int call_layout(call *c);

/* The messages that travel directly: inside the node (without a window)
 * and the large blocks. */
static int post_direct(call *c)
{
    int rc = MPI_SUCCESS;
    const ct_nbr_graph *g = c->g;
    const int *node_of = c->ctx->topo.node_of, node = c->ctx->topo.node;
    for (int j = 0; j < g->indegree; j++) {
        const int s = g->sources[j];
        const MPI_Count n = recv_len(c, j);
        if (s != MPI_PROC_NULL && n > 0 &&
            (node_of[s] == node ? !in_window(c, n) : goes_direct(c, n)))
            CT_CALL(post(c, 0, recv_at(c, j), n, MPI_BYTE, s, TAG_DIRECT));
    }
    for (int k = 0; k < g->outdegree; k++) {
        const int d = g->destinations[k];
        const MPI_Count n = send_len(c, k);
        if (d != MPI_PROC_NULL && n > 0 &&
            (node_of[d] == node ? !in_window(c, n) : goes_direct(c, n)))
            CT_CALL(post(c, 1, send_at(c, k), n, MPI_BYTE, d, TAG_DIRECT));
    }
out:
    return rc;
}

/* A call of one block size: what the ranks of the node would tell (every
 * message has the call's block, every chunk its messages' blocks), known
 * to each rank without a message; and a call whose blocks to other nodes
 * all go directly, where that is 0 bytes everywhere. */
static void known_sizes(call *c)
{
    const plan *p = c->p;
    const int64_t b = goes_direct(c, c->block) ? 0 : c->block;
    for (int i = 0; i < p->n_asizes; i++)
        c->asizes[i] = (int64_t)p->chunk_msgs[i] * b;
    for (int i = 0; i < p->n_rsizes; i++)
        c->rsizes[i] = b;
}

/* Stage 1: the call's sizes; the messages inside the node (without a
 * window) and the large blocks, posted; the sizes to the aggregators and
 * receivers of the node, posted; the chunks, packed and posted behind their
 * sizes. The stage waits for the sizes alone: a chunk's send completes at
 * the end of the call (its aggregator receives it at stage 2, once it knows
 * its size). */
static int stage_sizes(call *c)
{
    int rc;
    c->nreqs = 0;
    if (!c->sized) {
        CT_CALL(call_sizes(c));
        if (c->block >= 0 || c->all_direct) { /* nothing to tell */
            known_sizes(c);
            CT_CALL(call_layout(c));
            c->sized = 1;
        }
    }
    CT_CALL(post_direct(c));
    c->from = c->nreqs; /* the sizes: the messages inside the node complete at the end */
    if (c->sized)
        return post_chunks(c);
    CT_CALL(exchange_sizes(c));
    /* a request's one tag: between two ranks the chunks follow the sizes,
     * as the aggregator posts their receives */
    CT_CALL(post_chunks(c));
out:
    return rc;
}

/* Where everything goes, now that the sizes are known: offsets, and the
 * bytes of the call carved out of one buffer of the context. */
static int call_layout(call *c)
{
    const plan *p = c->p;
    const int me = c->ctx->rank;
    int64_t aggs = 0, raggs = 0, parts = 0, pieces = 0;
    /* an aggregate: its chunks by origin (agg_off per chunk, in agg order);
     * a solo aggregate takes no room (it left from the chunks at stage 1) */
    for (int i = 0; i < p->n_asizes; i++) {
        c->agg_off[i] = aggs;
        if (p->own[i] < 0 || p->solo[p->own[i]] < 0)
            aggs += c->asizes[p->chunk_at[i]];
    }
    c->agg_off[p->n_asizes] = aggs;
    for (int s = 0; s < p->src.n; s++) {
        c->ragg_off[s] = raggs;
        for (int i = p->src.first[s]; i < p->src.first[s + 1]; i++) {
            c->msg_off[i] = raggs;
            raggs += c->rsizes[p->msg_at[i]];
        }
    }
    c->ragg_off[p->src.n] = raggs;
    for (int x = 0; x < p->rsz.n; x++) {
        int64_t off = 0;
        c->part_base[x] = parts;
        for (int i = p->rsz.first[x]; i < p->rsz.first[x + 1]; i++) {
            c->part_off[i] = off;
            off += c->rsizes[i];
        }
        parts += x != p->self ? off : 0;
    }
    for (int q = 0; q < p->part.n; q++) {
        c->piece_off[q] = pieces;
        if (p->part.peer[q] != me)
            pieces += sum(c->msizes, p->part.first[q], p->part.first[q + 1]);
    }
    const size_t total = CT_ALIGN_UP((size_t)aggs) + CT_ALIGN_UP((size_t)raggs) +
                         CT_ALIGN_UP((size_t)parts) + CT_ALIGN_UP((size_t)pieces);
    /* a call without bytes to stage still has a base (one byte) */
    const size_t want = total > 0 ? total : 1;
    char *mem;
    if (c->tag < 0) {
        mem = ct_ctx_buffer(c->ctx, &buf_bytes, want);
        c->ctx->call_extra += total;
    } else { /* a request's own, kept from start to start */
        if (c->own_bytes_cap < want) {
            free(c->own_bytes);
            c->own_bytes = malloc(want);
            c->own_bytes_cap = c->own_bytes != NULL ? want : 0;
        }
        mem = c->own_bytes;
    }
    if (mem == NULL)
        return MPI_ERR_NO_MEM;
    c->aggs = mem;
    c->raggs = c->aggs + CT_ALIGN_UP((size_t)aggs);
    c->parts = c->raggs + CT_ALIGN_UP((size_t)raggs);
    c->pieces = c->parts + CT_ALIGN_UP((size_t)parts);
    return MPI_SUCCESS;
}

/* Stage 2: where everything goes (call_layout), then the aggregators
 * receive the chunks in place in their aggregates (this rank's own chunks
 * are packed there). */
static int stage_chunks(call *c)
{
    int rc;
    const plan *p = c->p;
    if (!c->sized) {
        spread_sizes(c);
        CT_CALL(call_layout(c));
    }
    c->from = c->nreqs;
    for (int i = 0; i < p->n_asizes; i++) {
        const int64_t n = c->agg_off[i + 1] - c->agg_off[i];
        if (p->own[i] >= 0) {
            if (p->solo[p->own[i]] < 0) /* else sent at stage 1 */
                pack_chunk(c, p->own[i], c->aggs + c->agg_off[i]);
        } else if (n > 0)
            CT_CALL(post(c, 0, c->aggs + c->agg_off[i], n, MPI_BYTE, p->contrib[i], TAG_CHUNK));
    }
out:
    return rc;
}

/* Stage 3: one aggregate per pair of nodes. */
static int stage_aggregates(call *c)
{
    int rc = MPI_SUCCESS;
    const plan *p = c->p;
    c->from = c->nreqs;
    for (int s = 0; s < p->src.n; s++) {
        const int64_t n = c->ragg_off[s + 1] - c->ragg_off[s];
        if (n > 0)
            CT_CALL(post(c, 0, c->raggs + c->ragg_off[s], n, MPI_BYTE, p->src.peer[s],
                         TAG_AGGREGATE));
    }
    for (int b = 0; b < p->agg.n; b++) {
        const int64_t lo = c->agg_off[p->agg.first[b]], hi = c->agg_off[p->agg.first[b + 1]];
        if (hi > lo && !agg_solo(p, b)) /* a solo aggregate went at stage 1 */
            CT_CALL(post(c, 1, c->aggs + lo, hi - lo, MPI_BYTE, p->agg.peer[b], TAG_AGGREGATE));
    }
out:
    return rc;
}

/* Stage 4: each rank of the node gets its part of the aggregates received
 * (this rank's own part goes to its receive blocks at once); it waits for
 * every message of the call still in flight. */
static int stage_parts(call *c)
{
    int rc = MPI_SUCCESS;
    const plan *p = c->p;
    const int me = c->ctx->rank;
    int self_part = -1;
    c->from = 0;
    for (int q = 0; q < p->part.n; q++) {
        const int64_t n = sum(c->msizes, p->part.first[q], p->part.first[q + 1]);
        if (p->part.peer[q] == me)
            self_part = q;
        else if (n > 0)
            CT_CALL(post(c, 0, c->pieces + c->piece_off[q], n, MPI_BYTE, p->part.peer[q],
                         TAG_PART));
    }
    for (int i = 0; i < p->n_msgs; i++) {
        const int li = p->msg_at[i], x = p->msg_dest[i];
        const size_t n = (size_t)c->rsizes[li];
        char *dst;
        if (n == 0)
            continue;
        if (x == p->self) /* li's place in this rank's own part: its edge */
            dst = recv_at(c, p->in[p->part.first[self_part] + (li - p->rsz.first[x])]);
        else
            dst = c->parts + c->part_base[x] + c->part_off[li];
        ct_memcpy(dst, c->raggs + c->msg_off[i], n);
    }
    for (int x = 0; x < p->rsz.n; x++) {
        const int64_t n = sum(c->rsizes, p->rsz.first[x], p->rsz.first[x + 1]);
        if (x != p->self && n > 0)
            CT_CALL(post(c, 1, c->parts + c->part_base[x], n, MPI_BYTE, p->rsz.peer[x],
                         TAG_PART));
    }
out:
    return rc;
}

/* Once every message has arrived: the parts received, unpacked. */
static void unpack_parts(const call *c)
{
    const plan *p = c->p;
    const int me = c->ctx->rank;
    for (int q = 0; q < p->part.n; q++) {
        const char *src = c->pieces + c->piece_off[q];
        if (p->part.peer[q] == me)
            continue;
        for (int i = p->part.first[q]; i < p->part.first[q + 1]; i++) {
            const size_t n = (size_t)c->msizes[i];
            if (n > 0)
                ct_memcpy(recv_at(c, p->in[i]), src, n);
            src += n;
        }
    }
}

/* The stages; each posts its messages, then its requests from c->from on
 * complete before the next starts. */
typedef int (*stage_fn)(call *c);
static const stage_fn stages[] = {stage_sizes, stage_chunks, stage_aggregates, stage_parts};
#define NSTAGES ((int)(sizeof stages / sizeof stages[0]))

/* ------------------------------------------------------------------ */
/* Inside the node, through the window (parameter shm)                 */
/* ------------------------------------------------------------------ */

/* The node's window (blocks: one per rank of the largest node), made
 * collectively by the first call that asks; NULL on every rank where the
 * nodes are emulated across real ones, or some node has none. */
static int node_window(ct_ctx *ctx, ct_shm_stream **win)
{
    static const ct_ctx_key window_key = CT_SHM_STREAM_KEY("neighbour locality window");
    *win = NULL;
    if (ctx->topo.emulated && !ctx->topo.shared) /* the same on every rank */
        return MPI_SUCCESS;
    return ct_shm_stream_get(ctx, &window_key, MPI_COMM_NULL, ctx->topo.Q, "locality", win);
}

/* This rank's stream (block i: its message to the node's rank of local
 * index i) and its wants (the block of each rank that has a message for
 * it), in the window's tables, but for the large blocks (shm_large), which
 * travel point-to-point; an empty stream where stage 1 failed here
 * (local_rc), which round 0 tells the node. Returns the number of wants. */
static int window_plan(call *c, int local_rc)
{
    ct_shm_stream *s = c->win;
    const plan *p = c->p;
    const int Q = c->ctx->topo.node_size[c->ctx->topo.node];
    int nw = 0;
    for (int i = 0; i < s->nblocks; i++)
        s->out[i] = (ct_shm_out){0};
    for (int i = 0; i < Q && local_rc == MPI_SUCCESS; i++) {
        const int k = p->to_member[i], j = p->from_member[i];
        if (k >= 0 && in_window(c, send_len(c, k)))
            s->out[i] = (ct_shm_out){.src = send_at(c, k), .bytes = (size_t)send_len(c, k)};
        if (j >= 0 && in_window(c, recv_len(c, j))) /* one want per member: grouped */
            s->want[nw++] = (ct_shm_want){.member = i, .block = c->ctx->topo.local_rank,
                                          .dst = recv_at(c, j),
                                          .cap = (size_t)recv_len(c, j), .req = -1};
    }
    return nw;
}

/* The blocking call's exchange through the window. */
static int window_run(call *c, int local_rc)
{
    const int nw = window_plan(c, local_rc);
    return ct_shm_stream_run(c->win, c->win->out, local_rc,
                             local_rc == MPI_SUCCESS ? c->win->want : NULL, nw, NULL, NULL);
}

/* A request's exchange, a job of the window's queue. */
static call *call_of(ct_shm_job *job) { return (call *)((char *)job - offsetof(call, job)); }

static int job_begin(ct_shm_job *job)
{
    call *c = call_of(job);
    const int nw = window_plan(c, c->win_rc);
    ct_shm_stream_begin(&c->xchg, c->win, c->win->out, c->win_rc,
                        c->win_rc == MPI_SUCCESS ? c->win->want : NULL, nw, NULL, 0);
    return 1;
}

static int job_advance(ct_shm_job *job, int *done)
{
    return ct_shm_stream_advance(&call_of(job)->xchg, NULL, 0, done);
}

/* Takes the request's job on (blocking: to its end); once it has
 * completed, it is not queued any more and its error class is in job_rc. */
static void job_progress(call *c, int block)
{
    if (c->queued && ct_shm_stream_progress(c->win, &c->job, block)) {
        c->queued = 0;
        c->job_rc = c->job.rc;
    }
}

/* ------------------------------------------------------------------ */
/* The blocking call                                                   */
/* ------------------------------------------------------------------ */

/* The bytes of each block of a call of one block size (MPI_Neighbor_alltoall)
 * on a connected graph, or -1. The standard makes every rank's send
 * signature the receive signature of every other, so every rank has the
 * same, and an aggregator or receiver knows the sizes of its node's chunks
 * and messages without being told. A rank whose counts no neighbour reads
 * (an isolated one: a graph of several components) may pass any, hence
 * the condition; so may a rank that sends to none (a star's leaf) on its
 * send side, hence the receive side first. */
static int64_t one_block(const ct_neighbor_args *a)
{
    const ct_nbr_graph *g = a->graph;
    if (!ct_coll_one_block_size(a->coll) || g->facts.components != 1)
        return -1;
    for (int j = 0; j < g->indegree; j++)
        if (g->sources[j] != MPI_PROC_NULL)
            return (int64_t)ct_vec_at(&a->recvcounts, j);
    for (int k = 0; k < g->outdegree; k++)
        if (g->destinations[k] != MPI_PROC_NULL)
            return (int64_t)ct_vec_at(&a->sendcounts, k);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Every block directly                                                */
/* ------------------------------------------------------------------ */

/* The calls of a plan agree their largest block anew at every
 * AGREE_EVERY-th call that has to (the first included). An agreement after
 * the first is adopted AGREE_LAG calls after the call that began it, the
 * calls between keeping the one before: by then it has completed (an
 * MPI_Iallreduce of the communicator, about half a small call on 4
 * emulated hosts, advanced by the calls between), so no call waits for it
 * (a nonblocking call of 16 KiB that did lost about 2%, docs/cluster.md). */
enum { AGREE_EVERY = 64, AGREE_LAG = 8 };

/* This rank's largest block to a rank of another node (bytes). */
static int64_t largest_off_node(const ct_neighbor_args *a, const ct_ctx *ctx)
{
    const ct_nbr_graph *g = a->graph;
    int64_t largest = 0;
    for (int k = 0; k < g->outdegree; k++) {
        const int d = g->destinations[k];
        const int64_t n = (int64_t)ct_vec_at(&a->sendcounts, k);
        if (d != MPI_PROC_NULL && ctx->topo.node_of[d] != ctx->topo.node && n > largest)
            largest = n;
    }
    return largest;
}

static void agreement_finish(ct_outstanding *o);

/* A new agreement on the largest block to another node over every rank:
 * made at once (block), or begun (MPI_Iallreduce). */
static int agreement_begin(const ct_neighbor_args *a, ct_ctx *ctx, long large, int block,
                           agreement **out)
{
    int rc;
    agreement *g = calloc(1, sizeof *g);
    if (g == NULL)
        return MPI_ERR_NO_MEM;
    *g = (agreement){.req = MPI_REQUEST_NULL, .mine = largest_off_node(a, ctx),
                     .large = large, .ctx = ctx, .refs = 1,
                     .outstanding = {.complete = agreement_finish}};
    pthread_mutex_init(&g->lock, NULL);
    if (block)
        CT_CALL(PMPI_Allreduce(&g->mine, &g->largest, 1, MPI_INT64_T, MPI_MAX,
                               ctx->decide_comm));
    else
        CT_CALL(PMPI_Iallreduce(&g->mine, &g->largest, 1, MPI_INT64_T, MPI_MAX,
                                ctx->decide_comm, &g->req));
    if (block)
        agreement_log(g);
    else
        ct_outstanding_add(&g->outstanding);
    *out = g;
    return MPI_SUCCESS;
out:
    pthread_mutex_destroy(&g->lock);
    free(g);
    return rc;
}

/* Has g completed on this rank (tested, not waited for)? Its lock held; an
 * error of the test counts as completion, with *rc. */
static int agreement_done(agreement *g, int *rc)
{
    int flag = 1;
    if (g->req == MPI_REQUEST_NULL)
        return 1;
    *rc = PMPI_Test(&g->req, &flag, MPI_STATUS_IGNORE);
    if (*rc != MPI_SUCCESS)
        return 1;
    if (flag)
        agreement_log(g);
    return flag;
}

/* Tests g under its lock: 1 once complete. Without block the lock is only
 * tried: held, it is another test of g (another thread's, or this one's,
 * whose test runs the progress engine and so this request's), and g counts
 * as not yet complete. */
static int agreement_test(agreement *g, int block, int *rc)
{
    int done;
    if (block)
        pthread_mutex_lock(&g->lock);
    else if (pthread_mutex_trylock(&g->lock) != 0)
        return 0;
    done = agreement_done(g, rc);
    pthread_mutex_unlock(&g->lock);
    return done;
}

/* Waits for g, a test at a time. */
static int agreement_wait(agreement *g)
{
    int rc = MPI_SUCCESS;
    while (!agreement_test(g, 1, &rc))
        ;
    return rc;
}

/* MPI_Finalize's completion of an agreement still listed (its plan, and so
 * it, live on: the communicator was not freed). */
static void agreement_finish(ct_outstanding *o)
{
    (void)agreement_wait((agreement *)((char *)o - offsetof(agreement, outstanding)));
}

/* Call i begins an agreement where i is a multiple of AGREE_EVERY: the
 * first (i = 0) in force at once (a blocking call makes it there, a
 * nonblocking one begins it: MPI_Iallreduce); a later one begun by either
 * form and kept as the next, which call i + AGREE_LAG puts in force. The
 * one it replaces has completed here (every call since it was adopted took
 * its answer), or a request that waits for it holds it. */
static int agreement_turn(const call *c, plan *p, long i)
{
    int rc = MPI_SUCCESS;
    agreement *g = NULL;
    if (i % AGREE_EVERY == 0) {
        CT_CALL(agreement_begin(c->a, c->ctx, c->large, i == 0 && c->a->request == NULL, &g));
        agreement **slot = i == 0 ? &p->force : &p->next;
        agreement_put(*slot);
        *slot = g;
    } else if (i % AGREE_EVERY == AGREE_LAG && p->next != NULL) {
        agreement_put(p->force);
        p->force = p->next;
        p->next = NULL;
    }
out:
    return rc;
}

/*
 * The call's largest block to another node over every rank (at least), as
 * every rank of the communicator knows it, or -1 where it knows none:
 *   - a call of one block size: its block;
 *   - a call whose facts the driver agreed (a rules condition on msg_size):
 *     msg_size, its largest block;
 *   - a persistent request: agreed once, at its init (which is collective),
 *     for every start (its counts are bound there);
 *   - the blocking and nonblocking calls: agreed at every AGREE_EVERY-th
 *     call, the first in force at once, a later one from AGREE_LAG calls
 *     on, until the next is (a halo exchange repeats its sizes, and one
 *     allreduce in 64 calls costs little: agreement_turn). Only a blocking
 *     first call makes its agreement at once; every other agreement is an
 *     MPI_Iallreduce (a nonblocking call's start is local), and a nonblocking
 *     call that finds the agreement in force not yet complete on this rank
 *     takes it as c->pending (*largest -1 meanwhile): its stage 1 waits for
 *     it (step_advance), every rank taking the same agreement for the call
 *     whenever it completes here. A blocking call waits for it at once.
 * The answer only chooses the way of each block (call_plan); a stale one
 * (sizes changed since the agreement) is as correct as a fresh one.
 */
static int call_largest(call *c, plan *p, int64_t *largest)
{
    int rc = MPI_SUCCESS;
    const ct_neighbor_args *a = c->a;
    *largest = -1;
    if (c->block >= 0 || a->msg_size >= 0) {
        *largest = c->block >= 0 ? c->block : a->msg_size;
    } else if (a->request != NULL && a->persistent) {
        agreement *g = NULL;
        CT_CALL(agreement_begin(a, c->ctx, c->large, 1, &g));
        *largest = g->largest;
        agreement_put(g);
    } else {
        CT_CALL(agreement_turn(c, p, p->calls++));
        agreement *g = p->force;
        if (g == NULL)
            return MPI_SUCCESS;
        if (a->request == NULL)
            CT_CALL(agreement_wait(g));
        if (agreement_test(g, 1, &rc)) {
            *largest = g->largest;
        } else {
            agreement_hold(g);
            c->pending = g;
        }
    }
out:
    return rc;
}

/* A nonblocking call's pending agreement, taken once it has completed
 * here (block: waited for): its way known (*known), the reference dropped. */
static int take_agreement(call *c, int block, int *known)
{
    int rc = MPI_SUCCESS;
    agreement *g = c->pending;
    if (block)
        rc = agreement_wait(g);
    *known = block || agreement_test(g, 0, &rc);
    if (*known) {
        c->all_direct = rc == MPI_SUCCESS && g->largest >= c->large;
        c->pending = NULL;
        agreement_put(g);
    }
    return rc;
}

/* The call's plan (per communicator, made at its first call), the way of
 * its blocks (where its largest block to another node is known and at
 * least large, every such block goes directly: none is aggregated, no size
 * is told, and no message waits for a hop that a large one outlasts; else
 * each by its own size), and the node's window where the call goes
 * through it. */
static int call_plan(call *c, const ct_neighbor_args *a, ct_ctx *ctx, const long *params)
{
    int rc;
    void *obj;
    c->a = a;
    c->g = a->graph;
    c->ctx = ctx;
    c->tag = -1;
    c->large = params[0];
    c->shm_large = params[3];
    c->block = one_block(a);
    CT_CALL(ct_ctx_ext(ctx, params[1] == 2 ? &plan_key2 : &plan_key3, (void *)a->graph, &obj));
    if (obj == NULL)
        rc = MPI_ERR_NO_MEM;
    c->p = obj;
    if (rc == MPI_SUCCESS && c->large > 0) {
        int64_t largest;
        rc = call_largest(c, obj, &largest);
        c->all_direct = largest >= c->large;
    }
    if (rc == MPI_SUCCESS && params[2] == 1)
        rc = node_window(ctx, &c->win);
out:
    return rc;
}

/* A blocking call whose every message travels directly (all_direct, no
 * window): direct's messages, posted at once and completed by one wait,
 * without the stages' bookkeeping (at 16 KiB on 4 emulated hosts,
 * 0.93-0.98x the library's through the stages and 0.95-0.98x without them:
 * a gain near the runs' spread, docs/cluster.md). */
static int run_direct(call *c)
{
    int rc;
    const int n = c->g->indegree + c->g->outdegree;
    c->nreqs = 0;
    c->reqs = ct_ctx_requests(c->ctx, n > 0 ? n : 1);
    if (c->reqs == NULL)
        return MPI_ERR_NO_MEM;
    CT_CALL(post_direct(c));
    CT_CALL(wait_from(c, 0));
out:
    return rc;
}

int ct_neighbor_locality(const ct_neighbor_args *a, ct_ctx *ctx, const long *params)
{
    int rc, wrc = MPI_SUCCESS;
    call c = {0};
    CT_CALL(call_plan(&c, a, ctx, params));
    if (c.all_direct && c.win == NULL) {
        rc = run_direct(&c);
        goto out;
    }
    if (c.win != NULL && !ct_shm_stream_idle(c.win)) /* the requests started before */
        ct_shm_stream_progress(c.win, NULL, 1);
    for (int st = 0; st < NSTAGES; st++) {
        rc = stages[st](&c);
        /* on every rank of the node, whatever rc; an error there (another
         * rank's, told in round 0) leaves the stages to go on, so that the
         * other nodes get this one's aggregates */
        if (st == 0 && c.win != NULL)
            wrc = window_run(&c, rc);
        CT_CALL(rc);
        CT_CALL(wait_from(&c, c.from));
    }
    unpack_parts(&c);
    rc = wrc;
out:
    if (rc != MPI_SUCCESS && c.nreqs > 0) /* nothing left pending on the call's buffers */
        (void)PMPI_Waitall(c.nreqs, c.reqs, MPI_STATUSES_IGNORE);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The request's step                                                  */
/* ------------------------------------------------------------------ */

/* Posts the next stage once the messages of the one in flight have all
 * completed (blocking: waits for them), until the last; then unpacks. A
 * start whose agreement had not completed (stage -1) posts stage 1 once it
 * has. */
static int step_advance(call *c, int block, int *done)
{
    int rc = MPI_SUCCESS, flag = 1;
    job_progress(c, 0); /* the node's messages, as they come, beside the stages */
    if (c->stage < 0) {
        CT_CALL(take_agreement(c, block, &flag));
        if (flag) {
            c->stage = 0;
            CT_CALL(stages[0](c));
        }
    }
    while (c->stage >= 0 && c->stage < NSTAGES) {
        const int n = c->nreqs - c->from;
        if (block)
            CT_CALL(PMPI_Waitall(n, c->reqs + c->from, MPI_STATUSES_IGNORE));
        else
            CT_CALL(PMPI_Testall(n, c->reqs + c->from, &flag, MPI_STATUSES_IGNORE));
        if (!flag)
            break;
        c->nreqs = c->from;
        if (++c->stage < NSTAGES) {
            CT_CALL(stages[c->stage](c));
        } else {
            unpack_parts(c);
            /* a persistent request's sizes and layout, once a start told them
             * and completed (on every rank, as a start that failed nowhere
             * does), hold for its later starts */
            c->sized = c->args.persistent;
        }
    }
    job_progress(c, block && c->stage >= NSTAGES);
    if (c->stage >= NSTAGES && !c->queued)
        rc = c->job_rc;
out:
    *done = c->stage >= NSTAGES && !c->queued;
    return rc;
}

/* A start that failed midway: its messages still in flight (on the
 * request's tag) and its job complete before the request is started again
 * or freed. */
static void settle(call *c)
{
    if (c->stage < NSTAGES && c->nreqs > 0)
        (void)PMPI_Waitall(c->nreqs, c->reqs, MPI_STATUSES_IGNORE);
    job_progress(c, 1);
}

static int step_start(void *state)
{
    call *c = state;
    settle(c);
    c->nreqs = 0;
    c->stage = c->pending != NULL ? -1 : 0; /* -1: stage 1 waits for the agreement */
    const int rc = c->stage == 0 ? stages[0](c) : MPI_SUCCESS;
    if (c->win != NULL) { /* on every rank of the node, whatever rc (told in round 0) */
        c->win_rc = rc;
        c->job_rc = MPI_SUCCESS;
        c->queued = 1;
        ct_shm_stream_enqueue(c->win, &c->job);
    }
    if (rc != MPI_SUCCESS || !c->sized || c->stage < 0)
        return rc;
    int done; /* sizes known: the chunks' receives go at once (nothing to wait for) */
    return step_advance(c, 0, &done);
}

static int step_test(void *state, int *done) { return step_advance(state, 0, done); }

static int step_wait(void *state)
{
    int done;
    return step_advance(state, 1, &done);
}

/* What a request's call holds, released (not the call itself). */
static void call_drop(call *c)
{
    settle(c);
    agreement_put(c->pending); /* a start that failed, or none: still held */
    free(c->own_sizes);
    free(c->own_reqs);
    free(c->own_bytes);
}

static void step_release(void *state)
{
    call *c = state;
    if (c == NULL)
        return;
    call_drop(c);
    free(c);
}

static const ct_step locality_step = {step_start, step_test, step_wait, step_release};

int ct_neighbor_locality_build(const ct_neighbor_args *a, ct_ctx *ctx, const long *params,
                               ct_sched *s)
{
    int rc;
    call planned = {.args = *a}, *c = &planned; /* the request's description, kept with it */
    CT_CALL(call_plan(c, &c->args, ctx, params));
    if (c->all_direct && c->win == NULL) {
        /* every message directly, known now (not pending: the call holds
         * nothing): direct's one round, as the blocking call's run_direct,
         * without the stages' bookkeeping (each start and test of a
         * request, about 4k instructions a call; docs/cluster.md). A rank
         * where the same agreement is still pending runs the stages, which
         * then post the same messages on the request's tag and nothing else
         * (stage_sizes: no size told, every chunk, aggregate and part
         * empty), so the two match. */
        return ct_neighbor_direct_build(a, ctx, params, s);
    }
    c = malloc(sizeof *c); /* the stages': the request's own */
    if (c == NULL) {
        rc = MPI_ERR_NO_MEM;
        c = &planned;
        goto out;
    }
    *c = planned;
    c->a = &c->args;
    c->tag = s->tag;
    c->job = (ct_shm_job){.begin = job_begin, .advance = job_advance};
    c->stage = NSTAGES; /* nothing in flight before the first start */
    CT_CALL(ct_sched_reserve(s, 1, 1));
    ct_sched_step(s, &locality_step, c, sizeof *c);
    return MPI_SUCCESS;
out:
    call_drop(c);
    if (c != &planned)
        free(c);
    return rc;
}
