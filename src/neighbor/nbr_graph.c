/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nbr_graph.c - a communicator's neighbourhood, read once (nbr_graph.h).
 */
#include "neighbor/nbr_graph.h"
#include "core/log.h"
#include "core/state.h"

#include <stdlib.h>
#include <string.h>

static void graph_free(ct_nbr_graph *g)
{
    if (g == NULL)
        return;
    free(g->sources);
    free(g->destinations);
    free(g);
}

static int read_dist_graph(MPI_Comm comm, ct_nbr_graph *g)
{
    int rc, weighted, *sw = NULL, *dw = NULL;
    CT_CALL(PMPI_Dist_graph_neighbors_count(comm, &g->indegree, &g->outdegree, &weighted));
    CT_ALLOC(g->sources, (size_t)g->indegree * sizeof(int));
    CT_ALLOC(g->destinations, (size_t)g->outdegree * sizeof(int));
    if (weighted) { /* the weights are asked for, and not used */
        CT_ALLOC(sw, (size_t)g->indegree * sizeof(int));
        CT_ALLOC(dw, (size_t)g->outdegree * sizeof(int));
    }
    CT_CALL(PMPI_Dist_graph_neighbors(comm, g->indegree, g->sources,
                                     weighted ? sw : MPI_UNWEIGHTED, g->outdegree,
                                     g->destinations, weighted ? dw : MPI_UNWEIGHTED));
out:
    free(sw);
    free(dw);
    return rc;
}

static int read_graph(MPI_Comm comm, int rank, ct_nbr_graph *g)
{
    int rc, n;
    CT_CALL(PMPI_Graph_neighbors_count(comm, rank, &n));
    g->indegree = g->outdegree = n;
    CT_ALLOC(g->sources, (size_t)n * sizeof(int));
    CT_ALLOC(g->destinations, (size_t)n * sizeof(int));
    CT_CALL(PMPI_Graph_neighbors(comm, rank, n, g->sources));
    for (int j = 0; j < n; j++)
        g->destinations[j] = g->sources[j];
out:
    return rc;
}

/* Per dimension, the rank below then the rank above, for both sides. */
static int read_cart(MPI_Comm comm, ct_nbr_graph *g)
{
    int rc, ndims, *dims = NULL, *periods = NULL, *coords = NULL;
    CT_CALL(PMPI_Cartdim_get(comm, &ndims));
    g->indegree = g->outdegree = 2 * ndims;
    CT_ALLOC(dims, (size_t)ndims * 3 * sizeof(int));
    periods = dims + ndims;
    coords = periods + ndims;
    CT_ALLOC(g->sources, (size_t)(2 * ndims) * sizeof(int));
    CT_ALLOC(g->destinations, (size_t)(2 * ndims) * sizeof(int));
    CT_CALL(PMPI_Cart_get(comm, ndims, dims, periods, coords));
    for (int d = 0; d < ndims; d++) {
        int below, above;
        CT_CALL(PMPI_Cart_shift(comm, d, 1, &below, &above));
        g->sources[2 * d] = g->destinations[2 * d] = below;
        g->sources[2 * d + 1] = g->destinations[2 * d + 1] = above;
        if (periods[d] && dims[d] <= 2) /* the same on every rank */
            g->library_order = 1;
    }
out:
    free(dims);
    return rc;
}

static int int_cmp(const void *x, const void *y)
{
    const int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

/* Does a rank other than MPI_PROC_NULL appear twice in v[0..n)? */
static int repeated(const int *v, int n, int *scratch)
{
    memcpy(scratch, v, (size_t)n * sizeof *v);
    qsort(scratch, (size_t)n, sizeof *scratch, int_cmp);
    for (int i = 1; i < n; i++)
        if (scratch[i] == scratch[i - 1] && scratch[i] != MPI_PROC_NULL)
            return 1;
    return 0;
}

/* Reads the neighbourhood of kind into g; whether a rank appears twice in
 * its lists goes to *twice. */
static int read_graph_kind(ct_ctx *ctx, int kind, ct_nbr_graph *g, int *twice)
{
    int rc, *scratch = NULL;
    g->kind = kind;
    if (kind == MPI_DIST_GRAPH)
        CT_CALL(read_dist_graph(ctx->comm, g));
    else if (kind == MPI_GRAPH)
        CT_CALL(read_graph(ctx->comm, ctx->rank, g));
    else
        CT_CALL(read_cart(ctx->comm, g));
    for (int j = 0; j < g->indegree; j++)
        g->null_source |= g->sources[j] == MPI_PROC_NULL;
    const int n = g->indegree > g->outdegree ? g->indegree : g->outdegree;
    CT_ALLOC(scratch, (size_t)n * sizeof(int));
    *twice = g->library_order || repeated(g->sources, g->indegree, scratch) ||
             repeated(g->destinations, g->outdegree, scratch);
out:
    free(scratch);
    return rc;
}

/* What a rank keeps that could not read its neighbourhood: its calls go to
 * the MPI library, as the others' do (they agreed so). */
static const ct_nbr_graph unreadable = {.library_order = 1};

/* This rank's edges to ranks (MPI_PROC_NULL aside), and those of them to
 * another node. */
static void count_edges(const ct_ctx *ctx, const ct_nbr_graph *g, long *edges, long *off)
{
    *edges = *off = 0;
    for (int k = 0; k < g->outdegree; k++) {
        const int d = g->destinations[k];
        if (d == MPI_PROC_NULL)
            continue;
        ++*edges;
        *off += ctx->topo.node_of[d] != ctx->topo.node;
    }
}

/* Graphs of at most this many edges have their components counted; a
 * larger one's count is 0 (not counted), which no rule of components=1
 * matches. The count gathers every edge on every rank, once per
 * communicator: 16 MiB at this bound. */
#define COMPONENTS_MAX_EDGES (1L << 22)

/* The root of v's set, halving the path on the way (union-find). */
static int find_root(int *parent, int v)
{
    while (parent[v] != v) {
        parent[v] = parent[parent[v]];
        v = parent[v];
    }
    return v;
}

/* This rank's destinations that are ranks (MPI_PROC_NULL aside), at dst. */
static void real_destinations(const ct_nbr_graph *g, int *dst)
{
    for (int k = 0; k < g->outdegree; k++)
        if (g->destinations[k] != MPI_PROC_NULL)
            *dst++ = g->destinations[k];
}

/*
 * The weakly connected components of the graph of every rank's edges (an
 * isolated rank is one), into *components; collective, after the allreduce
 * found every rank's graph read: every rank's destinations (own of them,
 * count_edges; edges of them in all) are gathered on every rank, so all
 * count the same. Like every step of a collective, a rank that runs out of
 * memory here leaves the others waiting.
 */
static int count_components(ct_ctx *ctx, const ct_nbr_graph *g, long own, long edges,
                            long *components)
{
    int rc, mine = (int)own, *count = NULL, *displ = NULL, *edge = NULL, *parent = NULL;
    const int P = ctx->size;
    CT_ALLOC(count, (size_t)P * 2 * sizeof(int));
    displ = count + P;
    CT_ALLOC(edge, (size_t)(edges > 0 ? edges : 1) * sizeof(int));
    CT_ALLOC(parent, (size_t)P * sizeof(int));
    CT_CALL(PMPI_Allgather(&mine, 1, MPI_INT, count, 1, MPI_INT, ctx->comm));
    for (int r = 0, at = 0; r < P; r++) {
        displ[r] = at;
        at += count[r];
    }
    real_destinations(g, edge + displ[ctx->rank]); /* in place: where it would receive it */
    CT_CALL(PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, edge, count, displ, MPI_INT,
                            ctx->comm));
    *components = P;
    for (int r = 0; r < P; r++)
        parent[r] = r;
    for (int r = 0; r < P; r++)
        for (int i = displ[r]; i < displ[r] + count[r]; i++) {
            const int a = find_root(parent, r), b = find_root(parent, edge[i]);
            if (a != b) {
                parent[a] = b;
                --*components;
            }
        }
out:
    free(count);
    free(edge);
    free(parent);
    return rc;
}

/*
 * Reads the neighbourhood and agrees, in one allreduce that every rank
 * reaches whatever happened before it, whether any rank's lists join two
 * ranks twice (library_order) or any rank could not read its own: either
 * way every rank leaves the communicator's calls to the MPI library, and
 * keeps that (a rank that could not read keeps `unreadable`), so that no
 * later call reads again on some ranks only. The same sum gives the rules'
 * facts of the graph, degree and offnode.
 */
static int graph_create(ct_ctx *ctx, void *arg, void **obj)
{
    (void)arg;
    int rc, kind, twice = 0;
    long mine[4] = {0, 0, 0, 0}, all[4]; /* failed, twice, edges, edges off node */
    *obj = NULL;
    CT_CALL(PMPI_Topo_test(ctx->comm, &kind));
    if (kind != MPI_DIST_GRAPH && kind != MPI_GRAPH && kind != MPI_CART)
        return MPI_SUCCESS; /* no neighbourhood: none kept, the call is forwarded */
    ct_nbr_graph *g = calloc(1, sizeof *g);
    const int rc_read = g != NULL ? read_graph_kind(ctx, kind, g, &twice) : MPI_ERR_NO_MEM;
    mine[0] = rc_read != MPI_SUCCESS;
    mine[1] = twice;
    if (rc_read == MPI_SUCCESS)
        count_edges(ctx, g, &mine[2], &mine[3]);
    rc = PMPI_Allreduce(mine, all, 4, MPI_LONG, MPI_SUM, ctx->comm);
    if (rc != MPI_SUCCESS || rc_read != MPI_SUCCESS) {
        graph_free(g);
        *obj = (void *)&unreadable; /* never written, never freed */
        return rc;
    }
    g->library_order = all[0] || all[1];
    if (!all[0]) { /* else every rank keeps unreadable's 0, 0 and 0, as the failed one */
        g->facts.degree = (all[2] + ctx->size / 2) / ctx->size;
        g->facts.offnode = all[2] ? (100 * all[3] + all[2] / 2) / all[2] : 0;
        /* a Cartesian grid is connected; the others are counted (collective:
         * the same branch on every rank, from the allreduce and the kind);
         * none where the library serves the calls (repeated edges) */
        if (kind == MPI_CART && !g->library_order)
            g->facts.components = 1;
        else if (!g->library_order && all[2] <= COMPONENTS_MAX_EDGES)
            rc = count_components(ctx, g, mine[2], all[2], &g->facts.components);
    }
    if (rc != MPI_SUCCESS) { /* the count failed (count_components) */
        graph_free(g);
        *obj = (void *)&unreadable;
        return rc;
    }
    if (ct_settings_get()->verbose && ctx->decide_rank == 0)
        ct_log("neighbourhood of %s#%d: degree=%ld offnode=%ld components=%ld (%ld edges, %ld "
               "between nodes)%s", ctx->name, ctx->serial, g->facts.degree, g->facts.offnode,
               g->facts.components, all[2], all[3],
               g->library_order ? "; repeated edges: its calls go to the MPI library" : "");
    *obj = g;
out:
    return rc;
}

static void graph_release(void *obj)
{
    if (obj != &unreadable)
        graph_free(obj);
}

static const ct_ctx_key graph_key = {"neighbourhood", graph_create, graph_release, NULL};

int ct_nbr_graph_get(ct_ctx *ctx, const ct_nbr_graph **out)
{
    void *obj = NULL;
    const int rc = ctx->is_inter ? MPI_SUCCESS : ct_ctx_ext(ctx, &graph_key, NULL, &obj);
    *out = obj;
    return rc;
}

const ct_nbr_graph *ct_nbr_graph_find(const ct_ctx *ctx)
{
    return ct_ctx_ext_find(ctx, &graph_key);
}

int ct_nbr_degrees(MPI_Comm comm, int *indegree, int *outdegree)
{
    int rc, kind, n, weighted;
    *indegree = *outdegree = 0;
    CT_CALL(PMPI_Topo_test(comm, &kind));
    if (kind == MPI_DIST_GRAPH) {
        CT_CALL(PMPI_Dist_graph_neighbors_count(comm, indegree, outdegree, &weighted));
    } else if (kind == MPI_GRAPH) {
        int rank;
        CT_CALL(PMPI_Comm_rank(comm, &rank));
        CT_CALL(PMPI_Graph_neighbors_count(comm, rank, &n));
        *indegree = *outdegree = n;
    } else if (kind == MPI_CART) {
        CT_CALL(PMPI_Cartdim_get(comm, &n));
        *indegree = *outdegree = 2 * n;
    }
out:
    return rc;
}
