/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_neighbor.c - MPI_Neighbor_alltoallv and MPI_Neighbor_alltoall as
 * coltune intercepts them, checked byte for byte against
 * PMPI_Neighbor_alltoallv / PMPI_Neighbor_alltoall on the same inputs, with
 * the receive buffers pre-filled with the same random bytes for both (so a
 * stray write shows) and the send buffer checked unmodified.
 *
 * Topologies, each made from MPI_COMM_WORLD (reorder 0) and freed after:
 *   - MPI_Dist_graph_create_adjacent on random directed graphs drawn from the
 *     shared seed (every rank draws the same global edge list, then passes its
 *     own sources and destinations in a shuffled order of its own): out-degrees
 *     0 to 8, self-loops, the same edge twice or three times, isolated ranks,
 *     weighted and MPI_UNWEIGHTED, the empty graph; a 9-point stencil on the
 *     2-D grid of MPI_Dims_create, periodic (on a side of 1 or 2 a neighbour
 *     comes more than once) and not; a star (rank 0 to and from every rank,
 *     itself twice);
 *   - MPI_Dist_graph_create: random graphs whose edges are each given by a
 *     random rank (most often neither end);
 *   - MPI_Graph_create: symmetric random multigraphs (self-loops, repeated
 *     edges) on every rank and on P - 1 (the last rank outside), and a ring;
 *   - MPI_Cart_create in 1, 2 and 3 dimensions, periodic and not (a missing
 *     neighbour is MPI_PROC_NULL: its receive block stays as it was), on P and
 *     on P - 1 ranks, with periodic dimensions of size 1 and 2.
 * Per topology, for MPI_INT, MPI_DOUBLE, vector(2,1,3,int) and int<->vector
 * (one vector against two ints): Neighbor_alltoallv with 0-8, 0-1000, mostly
 * zero and all-zero units per edge, displacements shuffled with gaps (and
 * packed, MPI_INT); Neighbor_alltoall with 0, 1, 7 and 300 units per block.
 * test_large_blocks: 16000-20000 ints per edge; test_large_count: the MPI-4
 * _c forms; test_comm_churn: communicators alive together, called in turn,
 * duplicated and freed (a plan cached per communicator must follow it), and
 * one call repeated with new data; test_halo_loop (TEST_HALO_LOOP=1 only):
 * 200 calls on one grid whose block sizes change between locality's
 * agreements on them.
 *
 * An edge's count is drawn from a key both of its ends compute. On a graph
 * the key is (source, destination, k) for the k-th edge between that pair in
 * the source's destination list and in the destination's source list: the
 * MPI library matches them in that order in Neighbor_alltoallv (Open MPI 4.1
 * and MPICH 4.0 do; MPICH 4.0's Neighbor_alltoall matches the receives of a
 * repeated pair in reverse order, whose blocks are of one size). On a
 * Cartesian grid it is (source, dimension, direction), the block sent towards
 * +1 arriving in the receiver's -1 slot; the two edges of a periodic
 * dimension of size 1 or 2 join the same two ranks, matched as the library
 * does it (coltune forwards these), and share one count.
 *
 * Run by tests/mpi/neighbor.sh under mpirun at many P. Environment:
 *   TEST_SEED     base seed (printed at start; every failure names it)
 *   TEST_QUICK=1  fewer cases and no large blocks (valgrind, smoke runs)
 *   TEST_FORM     blocking (default), nonblocking (MPI_Ineighbor_alltoall(v),
 *                 completed by MPI_Wait, MPI_Test, MPI_Waitall, MPI_Testsome
 *                 or MPI_Waitany in turn, in arrays with point-to-point
 *                 requests and MPI_REQUEST_NULL; the reference is then
 *                 PMPI_Ineighbor_alltoall(v)), or persistent
 *                 (MPI_Neighbor_alltoall(v)_init, Open MPI 4.1: MPIX_,
 *                 started twice, then freed)
 *   COLTUNE_NEIGHBOR_ALLTOALLV / COLTUNE_NEIGHBOR_ALLTOALL  the algorithm
 *                 of the intercepted blocking calls, and
 *                 COLTUNE_INEIGHBOR_ALLTOALLV / COLTUNE_INEIGHBOR_ALLTOALL of
 *                 the other forms (unset: coltune's own choice)
 *   COLTUNE_FALLBACK=error  an algorithm that cannot serve a case returns
 *                 an error, which fails the test.
 *   TEST_TAGS_HELD=1  only test_tags_held (with COLTUNE_TEST_TAGS=4)
 *   TEST_ONE_SIZE=1  only test_one_block_size (with its rules)
 *   TEST_HALO_LOOP=1  only test_halo_loop (run by no other way)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "harness.h"

#include <coltune.h>

static int quick(void)
{
    const char *q = getenv("TEST_QUICK");
    return q != NULL && strcmp(q, "1") == 0;
}

static size_t at_least_1(int n) { return n > 0 ? (size_t)n : 1; }

static uint64_t mix(uint64_t h, uint64_t x)
{
    th_rng r = th_rng_make(h, x);
    return th_next(&r);
}

/* ------------------------------------------------------------------ */
/* Datatype cases                                                      */
/* ------------------------------------------------------------------ */

/* A block of c units is c * send_mult elements of send, c * recv_mult of recv. */
typedef struct type_case {
    const char *name;
    MPI_Datatype send, recv;
    int send_mult, recv_mult;
} type_case;

enum { NTYPES = 5 };
static type_case types[NTYPES];
static MPI_Datatype vec;

static void types_create(void)
{
    /* two ints out of every three: 8 bytes of data in a 16-byte extent */
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    types[0] = (type_case){"MPI_INT", MPI_INT, MPI_INT, 1, 1};
    types[1] = (type_case){"MPI_DOUBLE", MPI_DOUBLE, MPI_DOUBLE, 1, 1};
    types[2] = (type_case){"vector(2,1,3,int)", vec, vec, 1, 1};
    types[3] = (type_case){"int->vector", MPI_INT, vec, 2, 1};
    types[4] = (type_case){"vector->int", vec, MPI_INT, 1, 2};
}

/* ------------------------------------------------------------------ */
/* Topologies                                                          */
/* ------------------------------------------------------------------ */

/* A communicator with a topology, and this rank's neighbours in the order
 * the neighbourhood collectives use (the topology's query functions). */
typedef struct topo {
    char desc[160];
    MPI_Comm comm;      /* MPI_COMM_NULL on the ranks outside it */
    int repeats;        /* this rank has some neighbour more than once */
    int indeg, outdeg;
    int *src, *dst;     /* neighbour ranks in comm, or MPI_PROC_NULL */
    uint64_t *in_key, *out_key; /* an edge's key, the same at both ends */
} topo;

/* An empty description, before a topology is made. */
static void topo_init(topo *t)
{
    memset(t, 0, sizeof *t);
    t->comm = MPI_COMM_NULL;
}

static void topo_alloc(topo *t, int indeg, int outdeg)
{
    t->indeg = indeg;
    t->outdeg = outdeg;
    t->src = malloc(at_least_1(indeg) * sizeof(int));
    t->dst = malloc(at_least_1(outdeg) * sizeof(int));
    t->in_key = malloc(at_least_1(indeg) * sizeof(uint64_t));
    t->out_key = malloc(at_least_1(outdeg) * sizeof(uint64_t));
    assert_true(t->src && t->dst && t->in_key && t->out_key);
}

static void topo_free(topo *t)
{
    if (t->comm != MPI_COMM_NULL)
        assert_int_equal(MPI_Comm_free(&t->comm), MPI_SUCCESS);
    free(t->src);
    free(t->dst);
    free(t->in_key);
    free(t->out_key);
    topo_init(t);
}

/* A duplicate of t's communicator (the same topology) with t's neighbours. */
static void topo_dup(const topo *t, topo *d)
{
    *d = *t;
    snprintf(d->desc, sizeof d->desc, "MPI_Comm_dup of %.140s", t->desc);
    d->comm = MPI_COMM_NULL;
    if (t->comm != MPI_COMM_NULL)
        assert_int_equal(MPI_Comm_dup(t->comm, &d->comm), MPI_SUCCESS);
    topo_alloc(d, t->indeg, t->outdeg);
    memcpy(d->src, t->src, at_least_1(t->indeg) * sizeof(int));
    memcpy(d->dst, t->dst, at_least_1(t->outdeg) * sizeof(int));
    memcpy(d->in_key, t->in_key, at_least_1(t->indeg) * sizeof(uint64_t));
    memcpy(d->out_key, t->out_key, at_least_1(t->outdeg) * sizeof(uint64_t));
}

static uint64_t edge_key(int a, int b, int k)
{
    return mix(mix(mix(0x6e656967ull, (uint64_t)a), (uint64_t)b), (uint64_t)k);
}

/* Graph keys: the k-th edge from a to b in a's destinations and b's sources. */
static void keys_by_occurrence(topo *t)
{
    int me;
    MPI_Comm_rank(t->comm, &me);
    for (int i = 0; i < t->outdeg; i++) {
        int k = 0;
        for (int j = 0; j < i; j++)
            k += t->dst[j] == t->dst[i];
        t->repeats |= k > 0;
        t->out_key[i] = edge_key(me, t->dst[i], k);
    }
    for (int i = 0; i < t->indeg; i++) {
        int k = 0;
        for (int j = 0; j < i; j++)
            k += t->src[j] == t->src[i];
        t->repeats |= k > 0;
        t->in_key[i] = edge_key(t->src[i], me, k);
    }
}

/* The neighbours of a distributed graph, as MPI_Dist_graph_neighbors gives them. */
static void query_dist_graph(topo *t)
{
    int in, out, weighted;
    assert_int_equal(MPI_Dist_graph_neighbors_count(t->comm, &in, &out, &weighted),
                     MPI_SUCCESS);
    topo_alloc(t, in, out);
    int *sw = malloc(at_least_1(in) * sizeof(int)), *dw = malloc(at_least_1(out) * sizeof(int));
    assert_true(sw && dw);
    assert_int_equal(MPI_Dist_graph_neighbors(t->comm, in, t->src, sw, out, t->dst, dw),
                     MPI_SUCCESS);
    free(sw);
    free(dw);
    keys_by_occurrence(t);
}

/* An edge weight array for MPI_Dist_graph_create(_adjacent). */
static const int *weights(int weighted, int n, const int *w)
{
    return weighted ? (n > 0 ? w : MPI_WEIGHTS_EMPTY) : MPI_UNWEIGHTED;
}

/* Shuffles a[0..n) and w[0..n) alike. */
static void shuffle2(th_rng *r, int *a, int *w, int n)
{
    for (int j = n - 1; j > 0; j--) {
        const int k = (int)th_below(r, j + 1), ta = a[j], tw = w[j];
        a[j] = a[k];
        w[j] = w[k];
        a[k] = ta;
        w[k] = tw;
    }
}

typedef struct edge {
    int from, to, weight;
} edge;

/* Random directed graphs: each rank not isolated has maxdeg + 1 out-degrees
 * to choose from, a destination is itself with self_pct % chance, else a
 * rank not isolated, and an edge is given two or three times with
 * repeat_pct % chance. */
typedef struct graph_params {
    const char *name;
    int maxdeg, self_pct, repeat_pct, isolated_pct, weighted;
} graph_params;

static const graph_params graphs[] = {
    {"sparse, degrees 0-2, isolated ranks", 2, 10, 10, 25, 0},
    {"degrees 0-4, self-loops, repeated edges, weighted", 4, 15, 25, 10, 1},
    {"degrees 0-8", 8, 5, 10, 0, 0},
    {"degrees 0-6, many repeated edges, weighted", 6, 20, 50, 0, 1},
    {"mostly isolated ranks", 3, 10, 20, 60, 0},
    {"empty", 0, 0, 0, 100, 1},
};
#define NGRAPHS ((int)(sizeof graphs / sizeof graphs[0]))

/* The same global edge list on every rank (drawn from the shared seed). */
static int random_edges(const graph_params *g, uint64_t stream, int P, edge **out)
{
    th_rng r = th_rng_make(th_seed(), stream);
    int *live = malloc((size_t)P * sizeof(int)), nlive = 0, n = 0;
    edge *e = malloc(((size_t)P * (size_t)g->maxdeg * 3 + 1) * sizeof(edge));
    assert_true(live && e);
    for (int a = 0; a < P; a++)
        if (th_below(&r, 100) >= g->isolated_pct)
            live[nlive++] = a;
    for (int i = 0; i < nlive; i++) {
        const long d = th_below(&r, g->maxdeg + 1);
        for (long k = 0; k < d; k++) {
            const int a = live[i];
            const int b = th_below(&r, 100) < g->self_pct ? a : live[th_below(&r, nlive)];
            const long reps = th_below(&r, 100) < g->repeat_pct ? 2 + th_below(&r, 2) : 1;
            for (long j = 0; j < reps; j++)
                e[n++] = (edge){a, b, 1 + (int)th_below(&r, 100)};
        }
    }
    free(live);
    *out = e;
    return n;
}

/* MPI_Dist_graph_create_adjacent from a global edge list: this rank's
 * sources and destinations (with weights) in a shuffled order of its own. */
static void create_adjacent(topo *t, const edge *e, int n, int weighted, uint64_t stream)
{
    topo_init(t);
    const int me = th_rank();
    int in = 0, out = 0;
    for (int i = 0; i < n; i++) {
        in += e[i].to == me;
        out += e[i].from == me;
    }
    int *src = malloc(at_least_1(in) * sizeof(int)), *sw = malloc(at_least_1(in) * sizeof(int));
    int *dst = malloc(at_least_1(out) * sizeof(int));
    int *dw = malloc(at_least_1(out) * sizeof(int));
    assert_true(src && sw && dst && dw);
    in = out = 0;
    for (int i = 0; i < n; i++) {
        if (e[i].to == me) {
            src[in] = e[i].from;
            sw[in++] = e[i].weight;
        }
        if (e[i].from == me) {
            dst[out] = e[i].to;
            dw[out++] = e[i].weight;
        }
    }
    th_rng r = th_rng_make(mix(th_seed(), stream), 1000u + (uint64_t)me);
    shuffle2(&r, src, sw, in);
    shuffle2(&r, dst, dw, out);
    assert_int_equal(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, in, src,
                                                    weights(weighted, in, sw), out, dst,
                                                    weights(weighted, out, dw), MPI_INFO_NULL,
                                                    0, &t->comm),
                     MPI_SUCCESS);
    MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_RETURN);
    free(src);
    free(sw);
    free(dst);
    free(dw);
    query_dist_graph(t);
}

static void make_adjacent(topo *t, const graph_params *g, uint64_t stream)
{
    edge *e;
    const int n = random_edges(g, stream, th_size(), &e);
    create_adjacent(t, e, n, g->weighted, stream);
    snprintf(t->desc, sizeof t->desc, "dist_graph_adjacent random %s (%d edges)", g->name, n);
    free(e);
}

/* The 9-point stencil on the grid of MPI_Dims_create(P, 2): edges to the
 * (up to) 8 ranks around, wrapping around if periodic; weight 1 for a side,
 * 2 for a corner. */
static void make_stencil(topo *t, int periodic, uint64_t stream)
{
    const int P = th_size();
    int dims[2] = {0, 0}, n = 0;
    MPI_Dims_create(P, 2, dims);
    edge *e = malloc((size_t)P * 8 * sizeof(edge));
    assert_non_null(e);
    for (int a = 0; a < P; a++)
        for (int dx = -1; dx <= 1; dx++)
            for (int dy = -1; dy <= 1; dy++) {
                int x = a / dims[1] + dx, y = a % dims[1] + dy;
                if (dx == 0 && dy == 0)
                    continue;
                if (periodic) {
                    x = (x + dims[0]) % dims[0];
                    y = (y + dims[1]) % dims[1];
                } else if (x < 0 || x >= dims[0] || y < 0 || y >= dims[1]) {
                    continue;
                }
                e[n++] = (edge){a, x * dims[1] + y, dx != 0 && dy != 0 ? 2 : 1};
            }
    create_adjacent(t, e, n, 1, stream);
    snprintf(t->desc, sizeof t->desc, "dist_graph_adjacent 9-point stencil %dx%d%s", dims[0],
             dims[1], periodic ? " periodic" : "");
    free(e);
}

/* Rank 0 sends to and receives from every rank (itself included). */
static void make_star(topo *t, uint64_t stream)
{
    const int P = th_size();
    edge *e = malloc((size_t)P * 2 * sizeof(edge));
    assert_non_null(e);
    for (int a = 0; a < P; a++) {
        e[2 * a] = (edge){0, a, 1};
        e[2 * a + 1] = (edge){a, 0, 1};
    }
    create_adjacent(t, e, 2 * P, 0, stream);
    snprintf(t->desc, sizeof t->desc, "dist_graph_adjacent star around rank 0");
    free(e);
}

/* MPI_Dist_graph_create: each edge of a random graph given by a random rank,
 * a rank's edges passed as runs of one source. */
static void make_dist_graph(topo *t, const graph_params *g, uint64_t stream)
{
    topo_init(t);
    const int P = th_size(), me = th_rank();
    edge *e;
    const int n = random_edges(g, stream, P, &e);
    int *sources = malloc(at_least_1(n) * sizeof(int));
    int *degrees = malloc(at_least_1(n) * sizeof(int));
    int *dests = malloc(at_least_1(n) * sizeof(int)), *w = malloc(at_least_1(n) * sizeof(int));
    assert_true(sources && degrees && dests && w);
    th_rng r = th_rng_make(mix(th_seed(), stream), 77);
    int nsrc = 0, ndst = 0;
    for (int i = 0; i < n; i++) {
        if (th_below(&r, P) != me)
            continue;
        if (nsrc == 0 || sources[nsrc - 1] != e[i].from) {
            sources[nsrc] = e[i].from;
            degrees[nsrc++] = 0;
        }
        degrees[nsrc - 1]++;
        dests[ndst] = e[i].to;
        w[ndst++] = e[i].weight;
    }
    assert_int_equal(MPI_Dist_graph_create(MPI_COMM_WORLD, nsrc, sources, degrees, dests,
                                           weights(g->weighted, ndst, w), MPI_INFO_NULL, 0,
                                           &t->comm),
                     MPI_SUCCESS);
    MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_RETURN);
    snprintf(t->desc, sizeof t->desc, "dist_graph random %s (%d edges)", g->name, n);
    free(sources);
    free(degrees);
    free(dests);
    free(w);
    free(e);
    query_dist_graph(t);
}

/* MPI_Graph_create on the first nnodes ranks: a symmetric multigraph, each
 * node's list shuffled (the same on every rank). ring: each node's
 * neighbours are the next and the previous; else random undirected edges
 * (up to maxdeg per node, self-loops, edges twice or three times). */
static void make_graph(topo *t, int nnodes, int ring, int maxdeg, uint64_t stream)
{
    topo_init(t);
    th_rng r = th_rng_make(th_seed(), stream);
    const int cap = nnodes * (ring ? 1 : maxdeg * 3);
    int *ue = malloc(at_least_1(2 * cap) * sizeof(int)), nu = 0;
    int *index = calloc((size_t)nnodes, sizeof(int)), *fill = calloc((size_t)nnodes, sizeof(int));
    assert_true(ue && index && fill);
    for (int u = 0; u < nnodes; u++) {
        const long d = ring ? 1 : th_below(&r, maxdeg + 1);
        for (long k = 0; k < d; k++) {
            const int v = ring ? (u + 1) % nnodes
                               : th_below(&r, 6) == 0 ? u : (int)th_below(&r, nnodes);
            const long reps = !ring && th_below(&r, 5) == 0 ? 2 + th_below(&r, 2) : 1;
            for (long j = 0; j < reps; j++) {
                ue[2 * nu] = u;
                ue[2 * nu + 1] = v;
                nu++;
            }
        }
    }
    for (int i = 0; i < nu; i++) { /* a self-loop once in its node's list */
        index[ue[2 * i]]++;
        if (ue[2 * i] != ue[2 * i + 1])
            index[ue[2 * i + 1]]++;
    }
    for (int u = 1; u < nnodes; u++)
        index[u] += index[u - 1];
    const int nedges = index[nnodes - 1];
    int *edges = malloc(at_least_1(nedges) * sizeof(int));
    int *dummy = malloc(at_least_1(nedges) * sizeof(int));
    assert_true(edges && dummy);
    for (int i = 0; i < nu; i++) {
        const int u = ue[2 * i], v = ue[2 * i + 1];
        edges[(u ? index[u - 1] : 0) + fill[u]++] = v;
        if (u != v)
            edges[(v ? index[v - 1] : 0) + fill[v]++] = u;
    }
    for (int u = 0; u < nnodes; u++) {
        const int at = u ? index[u - 1] : 0;
        shuffle2(&r, edges + at, dummy + at, index[u] - at);
    }
    assert_int_equal(MPI_Graph_create(MPI_COMM_WORLD, nnodes, index, edges, 0, &t->comm),
                     MPI_SUCCESS);
    if (ring)
        snprintf(t->desc, sizeof t->desc, "graph ring of %d", nnodes);
    else
        snprintf(t->desc, sizeof t->desc,
                 "graph random symmetric on %d ranks, degrees 0-%d (%d edges)", nnodes,
                 maxdeg, nedges);
    if (t->comm != MPI_COMM_NULL) {
        int me, n;
        MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_RETURN);
        MPI_Comm_rank(t->comm, &me);
        assert_int_equal(MPI_Graph_neighbors_count(t->comm, me, &n), MPI_SUCCESS);
        topo_alloc(t, n, n);
        assert_int_equal(MPI_Graph_neighbors(t->comm, me, n, t->src), MPI_SUCCESS);
        memcpy(t->dst, t->src, at_least_1(n) * sizeof(int));
        keys_by_occurrence(t);
    } else {
        topo_alloc(t, 0, 0);
    }
    free(ue);
    free(index);
    free(fill);
    free(edges);
    free(dummy);
}

/* A Cartesian grid: dims with 0s are filled by MPI_Dims_create for nnodes. */
typedef struct cart_cfg {
    int nnodes, ndims, dims[3], periods[3];
} cart_cfg;

/* A grid of nnodes ranks: the 0s of dims filled by MPI_Dims_create. */
static cart_cfg cart_grid(int nnodes, int ndims, const int *dims, const int *periods)
{
    cart_cfg g = {nnodes, ndims, {0, 0, 0}, {0, 0, 0}};
    memcpy(g.dims, dims, (size_t)ndims * sizeof(int));
    memcpy(g.periods, periods, (size_t)ndims * sizeof(int));
    MPI_Dims_create(nnodes, ndims, g.dims);
    return g;
}

/* The grids for P ranks: returns how many (at most 24). For 1, 2 and 3
 * dimensions MPI_Dims_create's grid periodic in every dimension, in none,
 * and in those of size 3 or more (no neighbour twice), in 2 and 3 the first
 * and last periodic; then periodic grids with a dimension of size 1 and of
 * size 2, and grids on P - 1 ranks (the last outside). */
static int cart_configs(int P, cart_cfg *c)
{
    const cart_cfg special[] = {
        {P, 2, {1, 0}, {1, 1}},    {P, 3, {0, 1, 0}, {1, 1, 0}}, {P, 2, {0, 2}, {1, 1}},
        {P, 3, {2, 2, 0}, {1, 1, 0}}, {P - 1, 1, {0}, {1}},      {P - 1, 2, {0, 0}, {1, 1}},
    };
    cart_cfg all[24];
    int n = 0, m = 0;
    for (int nd = 1; nd <= 3; nd++)
        for (int v = 0; v < (nd == 1 ? 2 : 4); v++) {
            cart_cfg g = cart_grid(P, nd, (const int[]){0, 0, 0}, (const int[]){0, 0, 0});
            for (int d = 0; d < nd; d++)
                g.periods[d] = v == 0 || (v == 2 && g.dims[d] >= 3) || (v == 3 && d != 1);
            all[m++] = g;
        }
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
        const cart_cfg *g = &special[i];
        int fixed = 1;
        for (int d = 0; d < g->ndims; d++)
            fixed *= g->dims[d] ? g->dims[d] : 1;
        /* on P - 1 ranks: from P = 3 */
        if (g->nnodes % fixed == 0 && (g->nnodes == P || P >= 3))
            all[m++] = cart_grid(g->nnodes, g->ndims, g->dims, g->periods);
    }
    for (int i = 0; i < m; i++) {
        int seen = 0; /* another entry gave the same grid at this P */
        for (int k = 0; k < n && !seen; k++)
            seen = memcmp(&c[k], &all[i], sizeof all[i]) == 0;
        if (!seen)
            c[n++] = all[i];
    }
    return n;
}

static void make_cart(topo *t, const cart_cfg *g)
{
    topo_init(t);
    int at = snprintf(t->desc, sizeof t->desc, "cart "), degenerate = 0;
    for (int d = 0; d < g->ndims; d++) {
        at += snprintf(t->desc + at, sizeof t->desc - (size_t)at, "%s%d", d ? "x" : "",
                       g->dims[d]);
        degenerate |= g->periods[d] && g->dims[d] <= 2;
    }
    for (int d = 0; d < g->ndims; d++)
        at += snprintf(t->desc + at, sizeof t->desc - (size_t)at, "%s%d",
                       d ? "," : " periods ", g->periods[d]);
    snprintf(t->desc + at, sizeof t->desc - (size_t)at, " on %d ranks%s", g->nnodes,
             degenerate ? " (a periodic dimension of size 1 or 2)" : "");
    assert_int_equal(MPI_Cart_create(MPI_COMM_WORLD, g->ndims, g->dims, g->periods, 0, &t->comm),
                     MPI_SUCCESS);
    if (t->comm == MPI_COMM_NULL) {
        topo_alloc(t, 0, 0);
        return;
    }
    int me;
    MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(t->comm, &me);
    topo_alloc(t, 2 * g->ndims, 2 * g->ndims);
    for (int d = 0; d < g->ndims; d++) {
        int neg, pos;
        assert_int_equal(MPI_Cart_shift(t->comm, d, 1, &neg, &pos), MPI_SUCCESS);
        /* direction 0: towards -1, 1: towards +1; 2: either (a neighbour twice) */
        const int two = g->periods[d] && g->dims[d] <= 2;
        t->repeats |= two;
        t->src[2 * d] = t->dst[2 * d] = neg;
        t->src[2 * d + 1] = t->dst[2 * d + 1] = pos;
        t->out_key[2 * d] = edge_key(me, d, two ? 2 : 0);
        t->out_key[2 * d + 1] = edge_key(me, d, two ? 2 : 1);
        /* the -1 neighbour sent this block towards +1, the +1 one towards -1 */
        t->in_key[2 * d] = neg == MPI_PROC_NULL ? edge_key(-1, me, 2 * d)
                                                : edge_key(neg, d, two ? 2 : 1);
        t->in_key[2 * d + 1] = pos == MPI_PROC_NULL ? edge_key(-1, me, 2 * d + 1)
                                                    : edge_key(pos, d, two ? 2 : 0);
    }
}

/* ------------------------------------------------------------------ */
/* Cases                                                               */
/* ------------------------------------------------------------------ */

/* Units per edge of a Neighbor_alltoallv. */
enum { CNT_SMALL, CNT_RANDOM, CNT_ZERO_HEAVY, CNT_ZERO, CNT_LARGE };
static const char *const profile_names[] = {"0-8", "0-1000 (a fifth 0)", "mostly 0", "all 0",
                                            "16000-20000"};

typedef struct nb_case {
    int v;              /* Neighbor_alltoallv, else Neighbor_alltoall */
    const type_case *type;
    int profile;        /* v: the units per edge */
    int shuffled;       /* v: displacements in a random order with gaps */
    long uniform;       /* alltoall: units per block */
    int large;          /* through the MPI-4 large-count form (_c) */
    uint64_t counts;    /* stream of the counts */
    uint64_t data;      /* stream of the buffers' bytes and the layout */
    int nonblocking;    /* the nonblocking call, whatever TEST_FORM */
} nb_case;

static long edge_units(const nb_case *c, uint64_t key)
{
    th_rng r = th_rng_make(mix(th_seed(), c->counts), key);
    switch (c->profile) {
    case CNT_SMALL:
        return th_below(&r, 9);
    case CNT_RANDOM:
        return th_below(&r, 5) == 0 ? 0 : 1 + th_below(&r, 1000);
    case CNT_ZERO_HEAVY:
        return th_below(&r, 4) == 0 ? 1 + th_below(&r, 300) : 0;
    case CNT_LARGE:
        return 16000 + th_below(&r, 4001);
    default:
        return 0;
    }
}

static void fill_random(th_rng *r, unsigned char *buf, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x = th_next(r);
        memcpy(buf + i, &x, 8);
    }
    for (; i < n; i++)
        buf[i] = (unsigned char)th_next(r);
}

/* One call's arguments. */
typedef struct nb_args {
    int scount, rcount;       /* alltoall */
    int *sc, *sd, *rc, *rd;   /* alltoallv: [outdeg], [indeg] */
    unsigned char *send;
} nb_args;

#if MPI_VERSION >= 4
/* The call through MPI_Neighbor_alltoall(v)_c, or with req
 * MPI_Ineighbor_alltoall(v)_c, the counts and displacements widened to
 * MPI_Count and MPI_Aint (the nonblocking call keeps them until it
 * completes: *wide holds them, freed by the caller). */
static int call_c(const nb_case *c, const topo *t, const nb_args *a, void *rb,
                  MPI_Request *req, void **wide)
{
    MPI_Datatype st = c->type->send, rt = c->type->recv;
    *wide = NULL;
    if (!c->v)
        return req ? MPI_Ineighbor_alltoall_c(a->send, a->scount, st, rb, a->rcount, rt,
                                              t->comm, req)
                   : MPI_Neighbor_alltoall_c(a->send, a->scount, st, rb, a->rcount, rt,
                                             t->comm);
    const size_t n = at_least_1(t->outdeg) + at_least_1(t->indeg);
    char *mem = malloc(n * (sizeof(MPI_Count) + sizeof(MPI_Aint)));
    assert_non_null(mem);
    MPI_Count *sc = (MPI_Count *)mem, *rc = sc + at_least_1(t->outdeg);
    MPI_Aint *sd = (MPI_Aint *)(mem + n * sizeof(MPI_Count)), *rd = sd + at_least_1(t->outdeg);
    for (int i = 0; i < t->outdeg; i++) {
        sc[i] = a->sc[i];
        sd[i] = a->sd[i];
    }
    for (int j = 0; j < t->indeg; j++) {
        rc[j] = a->rc[j];
        rd[j] = a->rd[j];
    }
    *wide = mem;
    return req ? MPI_Ineighbor_alltoallv_c(a->send, sc, sd, st, rb, rc, rd, rt, t->comm, req)
               : MPI_Neighbor_alltoallv_c(a->send, sc, sd, st, rb, rc, rd, rt, t->comm);
}
#endif

/* TEST_FORM: the form of the intercepted calls. */
enum { FORM_BLOCKING, FORM_NONBLOCKING, FORM_PERSISTENT };
static const char *const form_names[] = {"blocking", "nonblocking", "persistent"};

static int form(void)
{
    static int f = -1;
    if (f < 0) {
        const char *e = getenv("TEST_FORM");
        f = FORM_BLOCKING;
        for (int i = 0; e != NULL && i < 3; i++)
            if (strcmp(e, form_names[i]) == 0)
                f = i;
    }
    return f;
}

/* The persistent forms: MPI 4's, or Open MPI 4.1's MPIX_ (mpi-ext.h). */
#if defined(CT_HAVE_PCOLL_MPIX)
#include <mpi-ext.h>
#define NEIGHBOR_ALLTOALLV_INIT MPIX_Neighbor_alltoallv_init
#define NEIGHBOR_ALLTOALL_INIT MPIX_Neighbor_alltoall_init
#elif defined(CT_HAVE_PCOLL_MPI4)
#define NEIGHBOR_ALLTOALLV_INIT MPI_Neighbor_alltoallv_init
#define NEIGHBOR_ALLTOALL_INIT MPI_Neighbor_alltoall_init
#endif

/* Completes req by one of five completion calls, taken in turn: MPI_Wait,
 * MPI_Test in a loop, MPI_Waitall, MPI_Testsome and MPI_Waitany of an array
 * that mixes it with a point-to-point pair on MPI_COMM_SELF and
 * MPI_REQUEST_NULL. 1 when every request completed (a persistent one left
 * inactive) and the pair's message arrived. (A collective's status is undefined where the library serves it,
 * MPI 4.0 section 6.12: tests/mpi/test_nbc.c checks coltune's.) */
static int complete(MPI_Request *req)
{
    static int turn;
    const int how = turn++ % 5;
    MPI_Status st[4];
    int ok = 1, flag = 0, in = -1, out = 7, left = 3, n, idx[4];
    MPI_Request reqs[4] = {MPI_REQUEST_NULL, *req, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (how >= 2) {
        MPI_Irecv(&in, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &reqs[2]);
        MPI_Isend(&out, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &reqs[3]);
    } else
        left = 1;
    switch (how) {
    case 0:
        ok = MPI_Wait(&reqs[1], &st[1]) == MPI_SUCCESS;
        break;
    case 1:
        do
            ok = MPI_Test(&reqs[1], &flag, &st[1]) == MPI_SUCCESS;
        while (ok && !flag);
        break;
    case 2:
        ok = MPI_Waitall(4, reqs, st) == MPI_SUCCESS;
        break;
    case 3:
        while (ok && left > 0) {
            ok = MPI_Testsome(4, reqs, &n, idx, st) == MPI_SUCCESS && n != MPI_UNDEFINED;
            left -= ok ? n : 0;
        }
        break;
    default:
        while (ok && left > 0) {
            ok = MPI_Waitany(4, reqs, &n, &st[0]) == MPI_SUCCESS && n != MPI_UNDEFINED;
            left--;
        }
        break;
    }
    ok = ok && (how < 2 || in == 7);
    for (int i = 0; i < 4; i++) /* a persistent request stays, inactive */
        ok = ok && (reqs[i] == MPI_REQUEST_NULL || (i == 1 && form() == FORM_PERSISTENT));
    if (!ok)
        fprintf(stderr, "rank %d: completion call %d: a request did not complete\n", th_rank(),
                how);
    *req = reqs[1];
    return ok;
}

/* The reference: PMPI_ in the test's form (the nonblocking call where the
 * form is one: on a graph with repeated edges the library's blocking and
 * nonblocking routines may match them differently, MPICH 4.0's do). */
static int call_ref(const nb_case *c, const topo *t, const nb_args *a, void *rb)
{
    MPI_Datatype st = c->type->send, rt = c->type->recv;
    MPI_Request r;
    int rcode;
    if (form() == FORM_BLOCKING)
        return c->v ? PMPI_Neighbor_alltoallv(a->send, a->sc, a->sd, st, rb, a->rc, a->rd, rt,
                                              t->comm)
                    : PMPI_Neighbor_alltoall(a->send, a->scount, st, rb, a->rcount, rt,
                                             t->comm);
    rcode = c->v ? PMPI_Ineighbor_alltoallv(a->send, a->sc, a->sd, st, rb, a->rc, a->rd, rt,
                                            t->comm, &r)
                 : PMPI_Ineighbor_alltoall(a->send, a->scount, st, rb, a->rcount, rt, t->comm,
                                           &r);
    return rcode != MPI_SUCCESS ? rcode : PMPI_Wait(&r, MPI_STATUS_IGNORE);
}

/* The intercepted nonblocking call, completed. */
static int call_nonblocking(const nb_case *c, const topo *t, const nb_args *a, void *rb)
{
    MPI_Datatype st = c->type->send, rt = c->type->recv;
    MPI_Request r = MPI_REQUEST_NULL;
    void *wide = NULL;
    int rcode;
#if MPI_VERSION >= 4
    if (c->large)
        rcode = call_c(c, t, a, rb, &r, &wide);
    else
#endif
        rcode = c->v ? MPI_Ineighbor_alltoallv(a->send, a->sc, a->sd, st, rb, a->rc, a->rd, rt,
                                               t->comm, &r)
                     : MPI_Ineighbor_alltoall(a->send, a->scount, st, rb, a->rcount, rt,
                                              t->comm, &r);
    if (rcode == MPI_SUCCESS && !complete(&r))
        rcode = MPI_ERR_OTHER;
    free(wide);
    return rcode;
}

#ifdef NEIGHBOR_ALLTOALLV_INIT
/* The intercepted persistent call: started twice, rb refilled with its
 * first bytes between the two starts, then freed. */
static int call_persistent(const nb_case *c, const topo *t, const nb_args *a, void *rb,
                           size_t rbytes)
{
    MPI_Datatype st = c->type->send, rt = c->type->recv;
    MPI_Request r = MPI_REQUEST_NULL;
    int rcode = c->v ? NEIGHBOR_ALLTOALLV_INIT(a->send, a->sc, a->sd, st, rb, a->rc, a->rd, rt,
                                               t->comm, MPI_INFO_NULL, &r)
                     : NEIGHBOR_ALLTOALL_INIT(a->send, a->scount, st, rb, a->rcount, rt,
                                              t->comm, MPI_INFO_NULL, &r);
    unsigned char *first = malloc(rbytes > 0 ? rbytes : 1);
    assert_non_null(first);
    memcpy(first, rb, rbytes);
    for (int k = 0; k < 2 && rcode == MPI_SUCCESS; k++) {
        memcpy(rb, first, rbytes);
        rcode = MPI_Start(&r);
        if (rcode == MPI_SUCCESS && !complete(&r))
            rcode = MPI_ERR_OTHER;
    }
    if (r != MPI_REQUEST_NULL && MPI_Request_free(&r) != MPI_SUCCESS)
        rcode = MPI_ERR_OTHER;
    free(first);
    return rcode;
}
#endif

/* The intercepted call, in the test's form. */
static int call(const nb_case *c, const topo *t, const nb_args *a, void *rb, size_t rbytes)
{
    MPI_Datatype st = c->type->send, rt = c->type->recv;
    if (form() == FORM_NONBLOCKING || c->nonblocking)
        return call_nonblocking(c, t, a, rb);
#ifdef NEIGHBOR_ALLTOALLV_INIT
    if (form() == FORM_PERSISTENT)
        return call_persistent(c, t, a, rb, rbytes);
#endif
    (void)rbytes;
#if MPI_VERSION >= 4
    if (c->large) {
        void *wide;
        const int rcode = call_c(c, t, a, rb, NULL, &wide);
        free(wide);
        return rcode;
    }
#endif
    return c->v ? MPI_Neighbor_alltoallv(a->send, a->sc, a->sd, st, rb, a->rc, a->rd, rt,
                                         t->comm)
                : MPI_Neighbor_alltoall(a->send, a->scount, st, rb, a->rcount, rt, t->comm);
}

static const char *algorithm(int v)
{
    static const char *const vars[2][2] = {
        {"COLTUNE_NEIGHBOR_ALLTOALL", "COLTUNE_NEIGHBOR_ALLTOALLV"},
        {"COLTUNE_INEIGHBOR_ALLTOALL", "COLTUNE_INEIGHBOR_ALLTOALLV"}};
    const char *a = getenv(vars[form() != FORM_BLOCKING][v != 0]);
    return a != NULL ? a : "(coltune's choice)";
}

static void describe(char *what, size_t len, const nb_case *c, const topo *t)
{
    char counts[64];
    if (c->v)
        snprintf(counts, sizeof counts, "units %s, %s displs", profile_names[c->profile],
                 c->shuffled ? "shuffled" : "packed");
    else
        snprintf(counts, sizeof counts, "%ld units per block", c->uniform);
    snprintf(what, len,
             "%s neighbor_alltoall%s%s %s on %s, P=%d rank %d (in %d, out %d%s): type %s, %s "
             "(case %llu) seed %llu",
             form_names[c->nonblocking ? FORM_NONBLOCKING : form()], c->v ? "v" : "",
             c->large ? "_c" : "", algorithm(c->v), t->desc, th_size(),
             th_rank(), t->indeg, t->outdeg, t->repeats ? ", a neighbour more than once" : "",
             c->type->name, counts, (unsigned long long)c->data, (unsigned long long)th_seed());
}

/* This rank's part of one case; 1 when it got the reference. */
static int run_local(const nb_case *c, const topo *t)
{
    const type_case *ty = c->type;
    nb_args a = {0};
    a.sc = malloc(at_least_1(t->outdeg) * sizeof(int));
    a.sd = malloc(at_least_1(t->outdeg) * sizeof(int));
    a.rc = malloc(at_least_1(t->indeg) * sizeof(int));
    a.rd = malloc(at_least_1(t->indeg) * sizeof(int));
    assert_true(a.sc && a.sd && a.rc && a.rd);
    long sspan, rspan;
    th_rng lay = th_rng_make(mix(th_seed(), c->data), 2 * (uint64_t)th_rank() + 1);
    if (c->v) {
        for (int i = 0; i < t->outdeg; i++)
            a.sc[i] = (int)(edge_units(c, t->out_key[i]) * ty->send_mult);
        for (int j = 0; j < t->indeg; j++)
            a.rc[j] = (int)(edge_units(c, t->in_key[j]) * ty->recv_mult);
        sspan = th_layout(&lay, t->outdeg, a.sc, a.sd, c->shuffled);
        rspan = th_layout(&lay, t->indeg, a.rc, a.rd, c->shuffled);
    } else {
        a.scount = (int)(c->uniform * ty->send_mult);
        a.rcount = (int)(c->uniform * ty->recv_mult);
        sspan = (long)t->outdeg * a.scount;
        rspan = (long)t->indeg * a.rcount;
    }
    const size_t sbytes = th_span_bytes(sspan, ty->send), rbytes = th_span_bytes(rspan, ty->recv);
    unsigned char *sb_copy = malloc(sbytes), *got = malloc(rbytes), *want = malloc(rbytes);
    a.send = malloc(sbytes);
    assert_true(a.send && sb_copy && got && want);
    th_rng fill = th_rng_make(mix(th_seed(), c->data), 2 * (uint64_t)th_rank());
    fill_random(&fill, a.send, sbytes);
    memcpy(sb_copy, a.send, sbytes);
    fill_random(&fill, got, rbytes);
    memcpy(want, got, rbytes);

    const int rc_ref = call_ref(c, t, &a, want);
    const int rc = call(c, t, &a, got, rbytes);

    char what[512], err[MPI_MAX_ERROR_STRING];
    int len, ok = 1;
    describe(what, sizeof what, c, t);
    if (rc_ref != MPI_SUCCESS) {
        MPI_Error_string(rc_ref, err, &len);
        fprintf(stderr, "FAILED rank %d: %s: the PMPI_ reference returned %d (%s)\n",
                th_rank(), what, rc_ref, err);
        ok = 0;
    }
    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, err, &len);
        fprintf(stderr, "FAILED rank %d: %s: returned error %d (%s)\n", th_rank(), what, rc,
                err);
        ok = 0;
    }
    if (ok) {
        ok = th_same_bytes(got, want, rbytes, what);
        char what2[600];
        snprintf(what2, sizeof what2, "%s: send buffer modified", what);
        ok = th_same_bytes(a.send, sb_copy, sbytes, what2) && ok;
    }
    free(a.sc);
    free(a.sd);
    free(a.rc);
    free(a.rd);
    free(a.send);
    free(sb_copy);
    free(got);
    free(want);
    return ok;
}

/* Runs one case on every rank (those outside t's communicator only agree);
 * returns 1 when every rank got the reference. */
static int run_case(const nb_case *c, const topo *t)
{
    return th_all(t->comm == MPI_COMM_NULL || run_local(c, t), MPI_COMM_WORLD);
}

/* A case whose counts and bytes are drawn from the next stream. */
static nb_case make_case(int v, int type, int profile, int shuffled, long uniform,
                         uint64_t *stream)
{
    const nb_case c = {v, &types[type], profile, shuffled, uniform, 0, *stream, *stream, 0};
    (*stream)++;
    return c;
}

static const long uniform_units[] = {0, 1, 7, 300};

/* Every case of one topology; the number of failures. TEST_QUICK=1 keeps
 * MPI_INT and the two mixed types, units 0-8 and 0-1000 (all zero for
 * MPI_INT), 0, 7 and 300 units per block (0 for MPI_INT); a case keeps its
 * number (stream) either way. */
static int sweep(const topo *t, uint64_t *stream, int *ncases)
{
    int failures = 0, nv = 0, na = 0;
    for (int ty = 0; ty < NTYPES; ty++) {
        const int skip_type = quick() && (ty == 1 || ty == 2);
        for (int p = CNT_SMALL; p <= CNT_ZERO; p++) {
            const int skip_profile =
                quick() && (p == CNT_ZERO_HEAVY || (p == CNT_ZERO && ty != 0));
            /* packed displacements: MPI_INT only */
            for (int sh = ty == 0 ? 0 : 1; sh <= 1; sh++) {
                const nb_case c = make_case(1, ty, p, sh, 0, stream);
                if (skip_type || skip_profile)
                    continue;
                failures += !run_case(&c, t);
                nv++;
            }
        }
        for (size_t u = 0; u < sizeof uniform_units / sizeof uniform_units[0]; u++) {
            const nb_case c = make_case(0, ty, 0, 0, uniform_units[u], stream);
            if (skip_type || (quick() && (u == 1 || (u == 0 && ty != 0))))
                continue;
            failures += !run_case(&c, t);
            na++;
        }
    }
    if (th_rank() == 0)
        printf("# %s, P=%d: %d cases (Neighbor_alltoallv %d, Neighbor_alltoall %d)\n", t->desc,
               th_size(), nv + na, nv, na);
    *ncases += nv + na;
    return failures;
}

static void sweep_free(topo *t, uint64_t *stream, int *failures, int *ncases)
{
    *failures += sweep(t, stream, ncases);
    topo_free(t);
}

static void report(const char *test, int failures, int ncases)
{
    if (th_rank() == 0)
        printf("# %s: %d cases, %d failed\n", test, ncases, failures);
    assert_int_equal(failures, 0);
    assert_true(ncases > 0);
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

static void test_dist_graph_adjacent(void **state)
{
    (void)state;
    uint64_t stream = 1000000;
    int failures = 0, ncases = 0;
    topo t;
    for (int g = 0; g < NGRAPHS; g++) {
        make_adjacent(&t, &graphs[g], 100 + (uint64_t)g);
        sweep_free(&t, &stream, &failures, &ncases);
    }
    for (int periodic = 0; periodic <= 1; periodic++) {
        make_stencil(&t, periodic, 200 + (uint64_t)periodic);
        sweep_free(&t, &stream, &failures, &ncases);
    }
    make_star(&t, 300);
    sweep_free(&t, &stream, &failures, &ncases);
    report(__func__, failures, ncases);
}

static void test_dist_graph(void **state)
{
    (void)state;
    uint64_t stream = 2000000;
    int failures = 0, ncases = 0;
    topo t;
    const int picks[] = {1, 2, 3};
    for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i++) {
        make_dist_graph(&t, &graphs[picks[i]], 400 + (uint64_t)i);
        sweep_free(&t, &stream, &failures, &ncases);
    }
    report(__func__, failures, ncases);
}

static void test_graph(void **state)
{
    (void)state;
    const int P = th_size();
    uint64_t stream = 3000000;
    int failures = 0, ncases = 0;
    topo t;
    make_graph(&t, P, 0, 3, 500);
    sweep_free(&t, &stream, &failures, &ncases);
    if (P >= 3) {
        make_graph(&t, P - 1, 0, 2, 501);
        sweep_free(&t, &stream, &failures, &ncases);
    }
    make_graph(&t, P, 1, 0, 502);
    sweep_free(&t, &stream, &failures, &ncases);
    report(__func__, failures, ncases);
}

static void test_cart(void **state)
{
    (void)state;
    uint64_t stream = 4000000;
    int failures = 0, ncases = 0;
    cart_cfg cfg[24];
    const int n = cart_configs(th_size(), cfg);
    topo t;
    for (int i = 0; i < n; i++) {
        make_cart(&t, &cfg[i]);
        sweep_free(&t, &stream, &failures, &ncases);
    }
    report(__func__, failures, ncases);
}

/*
 * Blocks of 16000-20000 ints per edge (Neighbor_alltoallv, MPI_INT and
 * int->vector) and of 20000 ints (Neighbor_alltoall), on a random graph
 * with repeated edges, the periodic stencil and a 2-D periodic grid.
 */
static void test_large_blocks(void **state)
{
    (void)state;
    if (quick()) {
        if (th_rank() == 0)
            printf("# TEST_QUICK=1: no large blocks\n");
        skip();
    }
    uint64_t stream = 5000000;
    int failures = 0, ncases = 0;
    cart_cfg grid = cart_grid(th_size(), 2, (const int[]){0, 0}, (const int[]){0, 0});
    for (int d = 0; d < 2; d++) /* periodic where no neighbour comes twice */
        grid.periods[d] = grid.dims[d] >= 3;
    for (int k = 0; k < 3; k++) {
        topo t;
        if (k == 0)
            make_adjacent(&t, &graphs[1], 600);
        else if (k == 1)
            make_stencil(&t, 1, 601);
        else
            make_cart(&t, &grid);
        nb_case c = make_case(1, 0, CNT_LARGE, 1, 0, &stream);
        failures += !run_case(&c, &t);
        c = make_case(1, 3, CNT_LARGE, 1, 0, &stream); /* int->vector */
        failures += !run_case(&c, &t);
        c = make_case(0, 0, 0, 0, 20000, &stream);
        failures += !run_case(&c, &t);
        ncases += 3;
        if (th_rank() == 0)
            printf("# %s, P=%d: 3 cases of large blocks\n", t.desc, th_size());
        topo_free(&t);
    }
    report(__func__, failures, ncases);
}

/* The MPI-4 large-count forms MPI_Neighbor_alltoallv_c and
 * MPI_Neighbor_alltoall_c, against PMPI_Neighbor_alltoall(v) on the same
 * inputs, on a random graph, a graph, and grids with and without a
 * neighbour twice. */
static void test_large_count(void **state)
{
    (void)state;
#if MPI_VERSION >= 4
    if (form() == FORM_PERSISTENT) {
        th_skip("the MPI library has no persistent large-count neighbourhood inits here (the "
                "blocking and nonblocking runs check the _c forms)");
    }
    uint64_t stream = 6000000;
    int failures = 0, ncases = 0;
    const int P = th_size();
    cart_cfg grids[2] = {cart_grid(P, 2, (const int[]){0, 0}, (const int[]){0, 0}),
                         cart_grid(P, 2, (const int[]){1, 0}, (const int[]){1, 1})};
    for (int d = 0; d < 2; d++) /* periodic where no neighbour comes twice */
        grids[0].periods[d] = grids[0].dims[d] >= 3;
    for (int k = 0; k < 5; k++) {
        topo t;
        if (k == 0)
            make_adjacent(&t, &graphs[3], 700);
        else if (k == 1)
            make_graph(&t, P, 0, 3, 701);
        else if (k == 2)
            make_stencil(&t, 0, 702);
        else
            make_cart(&t, &grids[k - 3]);
        int n = 0;
        for (int ty = 0; ty < NTYPES; ty++) {
            nb_case c = make_case(1, ty, ty % 2 ? CNT_SMALL : CNT_RANDOM, 1, 0, &stream);
            c.large = 1;
            failures += !run_case(&c, &t);
            c = make_case(0, ty, 0, 0, ty == 0 ? 0 : 7, &stream);
            c.large = 1;
            failures += !run_case(&c, &t);
            n += 2;
        }
        if (th_rank() == 0)
            printf("# %s, P=%d: %d cases (_c)\n", t.desc, th_size(), n);
        ncases += n;
        topo_free(&t);
    }
    report(__func__, failures, ncases);
#else
    th_skip("the MPI library has no MPI-4 large-count routines");
#endif
}

/*
 * Communicators alive together and called in turn, so that a plan cached
 * per communicator must follow its own: in each round a random graph A, a
 * grid B and B's duplicate D; calls on A, B, D, A (another type), A again
 * with the counts of its first call and new data, Neighbor_alltoall on each;
 * then A is freed and a graph E made (often on A's handle), called with D;
 * B freed, D and E called, both freed.
 */
static void test_comm_churn(void **state)
{
    (void)state;
    const int rounds = quick() ? 2 : 5;
    uint64_t stream = 7000000;
    int failures = 0, ncases = 0;
    cart_cfg cfg[24];
    const int ncfg = cart_configs(th_size(), cfg);
    for (int r = 0; r < rounds; r++) {
        topo a, b, d, e;
        make_adjacent(&a, &graphs[(r + 1) % NGRAPHS], 800 + 3 * (uint64_t)r);
        make_cart(&b, &cfg[(5 * r + 3) % ncfg]);
        topo_dup(&b, &d);
        nb_case first = make_case(1, 0, CNT_RANDOM, 1, 0, &stream);
        const nb_case grid = make_case(1, 4, CNT_SMALL, 1, 0, &stream);
        const nb_case other = make_case(1, 3, CNT_RANDOM, 1, 0, &stream);
        const nb_case uniform = make_case(0, 2, 0, 0, 5, &stream);
        failures += !run_case(&first, &a);
        failures += !run_case(&grid, &b);
        failures += !run_case(&grid, &d);
        failures += !run_case(&other, &a);
        failures += !run_case(&uniform, &b);
        first.data = stream++; /* the same counts, new data */
        failures += !run_case(&first, &a);
        for (const topo *const *x = (const topo *const[]){&a, &b, &d, NULL}; *x; x++) {
            const nb_case c = make_case(0, 0, 0, 0, 3, &stream);
            failures += !run_case(&c, *x);
        }
        ncases += 9;
        topo_free(&a);
        make_adjacent(&e, &graphs[(r + 3) % NGRAPHS], 801 + 3 * (uint64_t)r);
        for (int k = 0; k < 2; k++) {
            const nb_case c = make_case(1, 3 + k, CNT_SMALL, 1, 0, &stream);
            failures += !run_case(&c, &e);
            failures += !run_case(&c, &d);
        }
        topo_free(&b);
        const nb_case c1 = make_case(1, 0, CNT_ZERO_HEAVY, 1, 0, &stream);
        const nb_case c2 = make_case(0, 1, 0, 0, 2, &stream);
        failures += !run_case(&c1, &d);
        failures += !run_case(&c2, &e);
        failures += !run_case(&c2, &d);
        ncases += 7;
        topo_free(&d);
        topo_free(&e);
    }
    report(__func__, failures, ncases);
}

/* The int at i of call k's send buffer on rank r. */
static int batch_value(int r, int k, int i) { return r * 1000003 + k * 7919 + i; }

/*
 * BATCH MPI_Ineighbor_alltoallv on a new periodic ring (P >= 3: two
 * neighbours), blocks of `ints` ints, started back to back and completed by
 * one MPI_Waitall in the reverse order: the communicator's first calls, so
 * the first begins locality's agreement on the largest block and the others
 * find it, most likely, not yet complete, and wait for it with the first.
 * 0 or 1 failure.
 */
enum { BATCH = 3 };
static int pending_batch(int ints)
{
    const int P = th_size(), me = th_rank();
    const int left = (me + P - 1) % P, right = (me + 1) % P;
    int dims = P, periods = 1, bad = 0;
    int counts[2] = {ints, ints}, sdispls[2] = {0, ints}, rdispls[2] = {0, ints};
    int *sb[BATCH], *rb[BATCH];
    MPI_Request req[BATCH], rev[BATCH];
    MPI_Comm ring;
    if (P < 3)
        return 0;
    assert_int_equal(MPI_Cart_create(MPI_COMM_WORLD, 1, &dims, &periods, 0, &ring),
                     MPI_SUCCESS);
    for (int k = 0; k < BATCH; k++) {
        sb[k] = malloc(2 * (size_t)ints * sizeof(int));
        rb[k] = malloc(2 * (size_t)ints * sizeof(int));
        assert_true(sb[k] != NULL && rb[k] != NULL);
        for (int i = 0; i < 2 * ints; i++) {
            sb[k][i] = batch_value(me, k, i);
            rb[k][i] = -1;
        }
        bad |= MPI_Ineighbor_alltoallv(sb[k], counts, sdispls, MPI_INT, rb[k], counts,
                                       rdispls, MPI_INT, ring, &req[k]) != MPI_SUCCESS;
    }
    for (int k = 0; k < BATCH; k++)
        rev[k] = req[BATCH - 1 - k];
    bad |= MPI_Waitall(BATCH, rev, MPI_STATUSES_IGNORE) != MPI_SUCCESS;
    /* block 0 from the left neighbour (its block 1, sent right), block 1
     * from the right one (its block 0) */
    for (int k = 0; k < BATCH; k++) {
        for (int i = 0; i < ints && !bad; i++)
            bad |= rb[k][i] != batch_value(left, k, ints + i) ||
                   rb[k][ints + i] != batch_value(right, k, i);
        free(sb[k]);
        free(rb[k]);
    }
    if (bad)
        fprintf(stderr, "rank %d: %d MPI_Ineighbor_alltoallv of %d-int blocks started at "
                        "once on a ring of %d: wrong blocks (seed %llu)\n",
                me, BATCH, ints, P, (unsigned long long)th_seed());
    MPI_Comm_free(&ring);
    return bad;
}

/*
 * MPI's progress rule across locality's agreements, on a new periodic ring
 * (P >= 3): every rank makes AHEAD MPI_Ineighbor_alltoallv then one
 * MPI_Neighbor_alltoallv, blocks of 3 ints. Rank 0 starts its calls at
 * once, and makes the blocking one before it completes any; the others
 * start theirs 0.2 s later, and complete their first AGREE_EVERY before
 * they start the rest. On rank 0 all AHEAD wait for the agreement the
 * first begins (calls AGREE_EVERY to AHEAD - 1 keep it in force), which
 * completes only once the others have started; its blocking call (call
 * AGREE_EVERY + AGREE_LAG, which adopts the agreement call AGREE_EVERY
 * begins) waits for that agreement, which the others begin only once rank
 * 0's first AGREE_EVERY have run their stages: rank 0 must advance those
 * while it waits. 0 or 1 failure.
 */
enum { AGREE_EVERY = 64, AGREE_LAG = 8 }; /* as neighbor_locality.c's */
enum { AHEAD = AGREE_EVERY + AGREE_LAG };
static int pending_ahead(void)
{
    const int P = th_size(), me = th_rank(), ints = 3;
    const int left = (me + P - 1) % P, right = (me + 1) % P;
    int dims = P, periods = 1, bad = 0;
    int counts[2] = {ints, ints}, sdispls[2] = {0, ints}, rdispls[2] = {0, ints};
    int *sb, *rb;
    MPI_Request req[AHEAD];
    MPI_Comm ring;
    if (P < 3)
        return 0;
    sb = malloc((AHEAD + 1) * 2 * (size_t)ints * sizeof(int));
    rb = malloc((AHEAD + 1) * 2 * (size_t)ints * sizeof(int));
    assert_true(sb != NULL && rb != NULL);
    assert_int_equal(MPI_Cart_create(MPI_COMM_WORLD, 1, &dims, &periods, 0, &ring),
                     MPI_SUCCESS);
    for (int k = 0; k <= AHEAD; k++)
        for (int i = 0; i < 2 * ints; i++) {
            sb[(size_t)k * 2 * ints + i] = batch_value(me, k, i);
            rb[(size_t)k * 2 * ints + i] = -1;
        }
    if (me != 0)
        nanosleep(&(struct timespec){.tv_nsec = 200000000L}, NULL);
    for (int k = 0; k < AHEAD; k++) {
        const size_t at = (size_t)k * 2 * ints;
        bad |= MPI_Ineighbor_alltoallv(sb + at, counts, sdispls, MPI_INT, rb + at, counts,
                                       rdispls, MPI_INT, ring, &req[k]) != MPI_SUCCESS;
        if (me != 0 && k == AGREE_EVERY - 1)
            bad |= MPI_Waitall(AGREE_EVERY, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS;
    }
    const size_t last = (size_t)AHEAD * 2 * ints;
    bad |= MPI_Neighbor_alltoallv(sb + last, counts, sdispls, MPI_INT, rb + last, counts,
                                  rdispls, MPI_INT, ring) != MPI_SUCCESS;
    if (me == 0)
        bad |= MPI_Waitall(AHEAD, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS;
    else
        bad |= MPI_Waitall(AHEAD - AGREE_EVERY, req + AGREE_EVERY, MPI_STATUSES_IGNORE) !=
               MPI_SUCCESS;
    for (int k = 0; k <= AHEAD && !bad; k++)
        for (int i = 0; i < ints; i++)
            bad |= rb[(size_t)k * 2 * ints + i] != batch_value(left, k, ints + i) ||
                   rb[(size_t)k * 2 * ints + ints + i] != batch_value(right, k, i);
    if (bad)
        fprintf(stderr, "rank %d: %d calls on a ring of %d, rank 0 ahead: wrong blocks "
                        "(seed %llu)\n",
                me, AHEAD + 1, P, (unsigned long long)th_seed());
    free(sb);
    free(rb);
    MPI_Comm_free(&ring);
    return bad;
}

/*
 * An agreement begun and never adopted, on a communicator the program does
 * not free: AGREE_EVERY + 1 MPI_Neighbor_alltoallv on a new periodic ring
 * (blocks of 2 ints), whose last begins an agreement (MPI_Iallreduce) that
 * no call waits for. MPI_Finalize must complete it (COLTUNE_VERBOSE=2 logs
 * it then: neighbor.sh's halo runs count it). The ring is left for
 * MPI_Finalize on purpose. 0 or 1 failure.
 */
static int unfreed_ring(void)
{
    const int P = th_size(), me = th_rank(), ints = 2;
    const int left = (me + P - 1) % P, right = (me + 1) % P;
    int dims = P, periods = 1, bad = 0;
    int counts[2] = {ints, ints}, displs[2] = {0, ints};
    int sb[2 * 2], rb[2 * 2];
    MPI_Comm ring;
    if (P < 3)
        return 0;
    assert_int_equal(MPI_Cart_create(MPI_COMM_WORLD, 1, &dims, &periods, 0, &ring),
                     MPI_SUCCESS);
    for (int k = 0; k <= AGREE_EVERY && !bad; k++) {
        for (int i = 0; i < 2 * ints; i++) {
            sb[i] = batch_value(me, k, i);
            rb[i] = -1;
        }
        bad |= MPI_Neighbor_alltoallv(sb, counts, displs, MPI_INT, rb, counts, displs, MPI_INT,
                                      ring) != MPI_SUCCESS;
        for (int i = 0; i < ints && !bad; i++)
            bad |= rb[i] != batch_value(left, k, ints + i) ||
                   rb[ints + i] != batch_value(right, k, i);
    }
    if (bad)
        fprintf(stderr, "rank %d: %d calls on a ring of %d left to MPI_Finalize: wrong "
                        "blocks (seed %llu)\n",
                me, AGREE_EVERY + 1, P, (unsigned long long)th_seed());
    return bad;
}

/*
 * A halo loop: 200 Neighbor_alltoallv on one grid (the 9-point stencil, not
 * periodic: no neighbour twice), whose blocks are small (0-8 ints) in calls
 * 0-39, large (16000-20000 ints) in calls 40-99 and small again from 100;
 * calls 3, 7, 11, ... and 64, 72 and 192 are MPI_Ineighbor_alltoallv.
 * locality agrees the largest block at every 64th call it serves, the
 * first in force at once, a later one from 8 calls on: where it serves
 * both forms (Open MPI) calls 0 (blocking, small: made there), 64
 * (nonblocking, large: its start begins the agreement, call 72 adopts it,
 * its stage 1 waiting for it if it has not completed), 128 (blocking,
 * small: begun there, adopted by call 136, which waits for it) and 192
 * (nonblocking, small: never adopted, complete once the communicator is
 * freed), so calls 100-135 send their small blocks directly; where it
 * serves the blocking calls only (MPICH), calls 0, 88 (adopted by 98) and
 * 173 (by 184): small, large, small. COLTUNE_VERBOSE=2 logs each. Then two
 * batches of nonblocking calls started at once (pending_batch), of large
 * blocks and of small ones, on communicators of their own: one agreement
 * each (all directly, then aggregated) where locality serves them; then
 * pending_ahead, two agreements (small blocks) where locality serves both
 * forms, one (the blocking call's) where it serves the blocking form
 * alone; then unfreed_ring, two (small blocks: the second completed by
 * MPI_Finalize). Run alone, by TEST_HALO_LOOP=1, in neighbor.sh's halo runs,
 * which check the log and force the nonblocking calls' algorithm apart.
 */
static void test_halo_loop(void **state)
{
    (void)state;
    enum { CALLS = 200 };
    uint64_t stream = 8000000;
    int failures = 0;
    topo t;
    make_stencil(&t, 0, 400);
    for (int i = 0; i < CALLS; i++) {
        const int big = i >= 40 && i < 100;
        nb_case c = make_case(1, 0, big ? CNT_LARGE : CNT_SMALL, i % 2, 0, &stream);
        c.nonblocking = i % 4 == 3 || i % 128 == 64 || i % 128 == 72;
        failures += !run_case(&c, &t);
    }
    topo_free(&t);
    failures += !th_all(!pending_batch(16000), MPI_COMM_WORLD);
    failures += !th_all(!pending_batch(3), MPI_COMM_WORLD);
    failures += !th_all(!pending_ahead(), MPI_COMM_WORLD);
    failures += !th_all(!unfreed_ring(), MPI_COMM_WORLD);
    report(__func__, failures, CALLS + 4);
}

/*
 * TEST_DECISION=spec (neighbor.sh, with a rules file whose rule names the
 * graph's degree): coltune_decision on a ring (degree 1) passes the graph's
 * rules over before the communicator's first neighbourhood call, which
 * reads the graph, and answers spec after it.
 */
static void test_decision(void **state)
{
    (void)state;
    const int P = th_size(), me = th_rank();
    const int src = (me + P - 1) % P, dst = (me + 1) % P;
    int failures = 0, sbuf = me, rbuf = -1, weight = 1;
    char before[160], after[160];
    MPI_Comm ring;
    assert_int_equal(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, &weight, 1, &dst,
                                                    &weight, MPI_INFO_NULL, 0, &ring),
                     MPI_SUCCESS);
    failures += coltune_decision(ring, "neighbor_alltoall", 4, before, sizeof before) !=
                    MPI_SUCCESS || strcmp(before, "pmpi") != 0;
    failures += MPI_Neighbor_alltoall(&sbuf, 1, MPI_INT, &rbuf, 1, MPI_INT, ring) !=
                    MPI_SUCCESS || rbuf != src;
    failures += coltune_decision(ring, "neighbor_alltoall", 4, after, sizeof after) !=
                    MPI_SUCCESS || strcmp(after, getenv("TEST_DECISION")) != 0;
    if (failures)
        fprintf(stderr, "rank %d: coltune_decision before the first call '%s' (want pmpi), "
                        "after '%s' (want %s), received %d (want %d)\n",
                me, before, after, getenv("TEST_DECISION"), rbuf, src);
    MPI_Comm_free(&ring);
    assert_true(th_all(failures == 0, MPI_COMM_WORLD));
}

/*
 * TEST_ONE_SIZE=1 (neighbor.sh, with rules that give direct the calls of
 * MPI_Neighbor_alltoall and MPI_Ineighbor_alltoall of at most 1 KiB on a
 * connected graph, components=1): ONE_SIZE_CALLS calls of each form with
 * blocks of 16 B and as many of 2 KiB, in turn, on a star (rank 0 sends to every other
 * rank, which send nothing: their msg_size is their receive block's) and on
 * two rings, of the even and of the odd ranks (two components from P = 2).
 * Every block is checked; neighbor.sh reads COLTUNE_STATS: on the star the
 * 16-byte calls are direct's, every other call pmpi's. A rank that took
 * another msg_size than the others would choose another algorithm.
 */
#define ONE_SIZE_CALLS 5

/* One call of ints ints per block, blocking or not; 0 or 1 failure. */
static int one_size_call(MPI_Comm comm, int in, const int *src, int out, int ints, int nb,
                         int call)
{
    const int me = th_rank();
    int *sbuf = malloc(((size_t)out * ints + 1) * sizeof(int));
    int *rbuf = malloc(((size_t)in * ints + 1) * sizeof(int));
    int bad = sbuf == NULL || rbuf == NULL;
    for (int i = 0; !bad && i < out * ints; i++)
        sbuf[i] = me * 1000003 + call * 7919 + i % ints;
    for (int i = 0; !bad && i < in * ints; i++)
        rbuf[i] = -1;
    if (!bad && nb) {
        MPI_Request r;
        bad = MPI_Ineighbor_alltoall(sbuf, ints, MPI_INT, rbuf, ints, MPI_INT, comm, &r) !=
                  MPI_SUCCESS || MPI_Wait(&r, MPI_STATUS_IGNORE) != MPI_SUCCESS;
    } else if (!bad) {
        bad = MPI_Neighbor_alltoall(sbuf, ints, MPI_INT, rbuf, ints, MPI_INT, comm) !=
              MPI_SUCCESS;
    }
    for (int j = 0; !bad && j < in; j++)
        for (int i = 0; i < ints; i++)
            bad |= rbuf[j * ints + i] != src[j] * 1000003 + call * 7919 + i;
    if (bad)
        fprintf(stderr, "rank %d: %s call %d of %d-int blocks: wrong blocks\n", me,
                nb ? "MPI_Ineighbor_alltoall" : "MPI_Neighbor_alltoall", call, ints);
    free(sbuf);
    free(rbuf);
    return bad;
}

/* The calls of both forms on comm, the sizes in turn (each call decided
 * anew or from the decision of a size of the same range); the number of
 * failures. */
static int one_size_calls(MPI_Comm comm, int in, const int *src, int out)
{
    int failures = 0;
    for (int nb = 0; nb < 2; nb++)
        for (int call = 0; call < ONE_SIZE_CALLS; call++)
            for (int ints = 4; ints <= 512; ints *= 128)
                failures += one_size_call(comm, in, src, out, ints, nb, call);
    return failures;
}

static void test_one_block_size(void **state)
{
    (void)state;
    const int P = th_size(), me = th_rank();
    int failures = 0, weight = 1, *leaves = malloc((size_t)P * sizeof(int));
    int *weights = malloc((size_t)P * sizeof(int)), root = 0;
    MPI_Comm star, rings;
    assert_non_null(leaves);
    assert_non_null(weights);
    for (int r = 1; r < P; r++) {
        leaves[r - 1] = r;
        weights[r - 1] = 1;
    }
    /* the star: rank 0 to every other */
    assert_int_equal(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, me ? 1 : 0, &root,
                                                    &weight, me ? 0 : P - 1, leaves, weights,
                                                    MPI_INFO_NULL, 0, &star),
                     MPI_SUCCESS);
    failures += one_size_calls(star, me ? 1 : 0, &root, me ? 0 : P - 1);
    MPI_Comm_free(&star);
    /* two rings: rank r to the next rank of its parity (cyclically) */
    const int n = (P - me % 2 + 1) / 2, at = me / 2; /* its ring's size, its place */
    const int next = (at + 1) % n * 2 + me % 2, prev = (at + n - 1) % n * 2 + me % 2;
    assert_int_equal(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &prev, &weight, 1, &next,
                                                    &weight, MPI_INFO_NULL, 0, &rings),
                     MPI_SUCCESS);
    failures += one_size_calls(rings, 1, &prev, 1);
    MPI_Comm_free(&rings);
    free(leaves);
    free(weights);
    assert_true(th_all(failures == 0, MPI_COMM_WORLD));
}

/*
 * TEST_TAGS_HELD=1 (neighbor.sh, with COLTUNE_TEST_TAGS=4): six persistent
 * MPI_Neighbor_alltoall(v) requests alive together on a ring; the fifth and
 * sixth find every persistent tag held and go to the MPI library (said
 * once), and all six are started together twice, with new data, and give
 * the ring's values.
 */
static void test_tags_held(void **state)
{
    (void)state;
#ifndef NEIGHBOR_ALLTOALLV_INIT
    th_skip("the MPI library has no persistent neighbourhood collectives");
#else
    enum { NREQ = 6 };
    const int P = th_size(), me = th_rank();
    const int src = (me + P - 1) % P, dst = (me + 1) % P, one = 1, zero = 0;
    int sbuf[NREQ], rbuf[NREQ], ok = 1, weight = 1;
    MPI_Comm ring;
    MPI_Request reqs[NREQ];
    assert_int_equal(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, &weight, 1, &dst,
                                                    &weight, MPI_INFO_NULL, 0, &ring),
                     MPI_SUCCESS);
    for (int k = 0; k < NREQ; k++) {
        const int rc = k % 2 ? NEIGHBOR_ALLTOALLV_INIT(&sbuf[k], &one, &zero, MPI_INT, &rbuf[k],
                                                       &one, &zero, MPI_INT, ring,
                                                       MPI_INFO_NULL, &reqs[k])
                             : NEIGHBOR_ALLTOALL_INIT(&sbuf[k], 1, MPI_INT, &rbuf[k], 1,
                                                      MPI_INT, ring, MPI_INFO_NULL, &reqs[k]);
        assert_int_equal(rc, MPI_SUCCESS);
    }
    for (int round = 0; round < 2; round++) {
        for (int k = 0; k < NREQ; k++) {
            sbuf[k] = 1000 * round + 10 * me + k;
            rbuf[k] = -1;
        }
        assert_int_equal(MPI_Startall(NREQ, reqs), MPI_SUCCESS);
        assert_int_equal(MPI_Waitall(NREQ, reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        for (int k = 0; k < NREQ; k++)
            ok &= rbuf[k] == 1000 * round + 10 * src + k;
    }
    for (int k = 0; k < NREQ; k++)
        MPI_Request_free(&reqs[k]);
    MPI_Comm_free(&ring);
    assert_true(th_all(ok, MPI_COMM_WORLD));
#endif
}

/*
 * The persistent form (TEST_FORM=persistent, by an algorithm of coltune's,
 * forced): a request whose graph communicator the application frees before
 * starting it (MPI lets it: the request keeps the communicator), started
 * three times with new data. Each rank sends to me + 1 and, from P = 3 (no
 * repeated edge, which the library would serve), me + 3 (mod P) a block of
 * 1 to 5 ints that both ends compute.
 */
static void test_persistent_comm_freed(void **state)
{
    (void)state;
    const char *alg = getenv("COLTUNE_INEIGHBOR_ALLTOALLV");
    /* a part of the persistent runs of a forced algorithm: the library's own
     * request may not survive its communicator (Open MPI 4.1's does not) */
    if (form() != FORM_PERSISTENT || alg == NULL || strncmp(alg, "pmpi", 4) == 0)
        skip();
#ifndef NEIGHBOR_ALLTOALLV_INIT
    th_skip("the MPI library has no persistent neighbourhood collectives");
#else
    const int P = th_size(), me = th_rank();
    int dst[2], src[2], sc[2], rc[2], sd[2], rd[2], w[2] = {1, 1}, ok = 1;
    int sb[10], rb[10];
    const int n = P >= 3 ? 2 : 1;
    for (int i = 0; i < n; i++) {
        const int hop = i == 0 ? 1 : 3;
        dst[i] = (me + hop) % P;
        src[i] = (me - hop % P + P) % P;
        sc[i] = 1 + (me * 7 + dst[i]) % 5;
        rc[i] = 1 + (src[i] * 7 + me) % 5;
        sd[i] = 5 * i;
        rd[i] = 5 * i;
    }
    MPI_Comm g;
    MPI_Request req;
    assert_int_equal(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n, src, w, n, dst, w,
                                                    MPI_INFO_NULL, 0, &g),
                     MPI_SUCCESS);
    assert_int_equal(NEIGHBOR_ALLTOALLV_INIT(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, g,
                                             MPI_INFO_NULL, &req),
                     MPI_SUCCESS);
    MPI_Comm_free(&g);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < n; i++)
            for (int k = 0; k < 5; k++) {
                sb[5 * i + k] = 100000 * round + 1000 * me + 10 * dst[i] + k;
                rb[5 * i + k] = -1;
            }
        assert_int_equal(MPI_Start(&req), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
        for (int i = 0; i < n; i++)
            for (int k = 0; k < 5; k++)
                ok &= rb[5 * i + k] ==
                      (k < rc[i] ? 100000 * round + 1000 * src[i] + 10 * me + k : -1);
    }
    MPI_Request_free(&req);
    if (!ok)
        fprintf(stderr, "rank %d: %s, started after MPI_Comm_free: wrong blocks\n", me, alg);
    assert_true(th_all(ok, MPI_COMM_WORLD));
#endif
}

int main(int argc, char **argv)
{
    th_init(&argc, &argv);
    if (getenv("TEST_TAGS_HELD") != NULL) {
        struct CMUnitTest only[] = {cmocka_unit_test(test_tags_held)};
        const int failed = th_run("neighbor", only, 1);
        MPI_Finalize();
        return failed ? 1 : 0;
    }
    if (getenv("TEST_ONE_SIZE") != NULL) {
        struct CMUnitTest only[] = {cmocka_unit_test(test_one_block_size)};
        const int failed = th_run("neighbor", only, 1);
        MPI_Finalize();
        return failed ? 1 : 0;
    }
    if (getenv("TEST_HALO_LOOP") != NULL) {
        types_create();
        struct CMUnitTest only[] = {cmocka_unit_test(test_halo_loop)};
        const int failed = th_run("neighbor", only, 1);
        MPI_Type_free(&vec);
        MPI_Finalize();
        return failed ? 1 : 0;
    }
    if (getenv("TEST_DECISION") != NULL) {
        struct CMUnitTest only[] = {cmocka_unit_test(test_decision)};
        const int failed = th_run("neighbor", only, 1);
        MPI_Finalize();
        return failed ? 1 : 0;
    }
#ifndef NEIGHBOR_ALLTOALLV_INIT
    if (form() == FORM_PERSISTENT) {
        th_skip_note("test_neighbor", "the MPI library has no persistent neighbourhood "
                                      "collectives");
        MPI_Finalize();
        return 0;
    }
#endif
    types_create();
    if (th_rank() == 0)
        printf("# %s forms; intercepted Neighbor_alltoallv: %s, Neighbor_alltoall: %s\n",
               form_names[form()], algorithm(1), algorithm(0));
    struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dist_graph_adjacent),
        cmocka_unit_test(test_dist_graph),
        cmocka_unit_test(test_graph),
        cmocka_unit_test(test_cart),
        cmocka_unit_test(test_large_blocks),
        cmocka_unit_test(test_large_count),
        cmocka_unit_test(test_comm_churn),
        cmocka_unit_test(test_persistent_comm_freed),
    };
    int failed = th_run("neighbor", tests, sizeof tests / sizeof tests[0]);
    MPI_Type_free(&vec);
    MPI_Finalize();
    return failed ? 1 : 0;
}
