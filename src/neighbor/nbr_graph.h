/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nbr_graph.h - a communicator's neighbourhood, read once from its topology
 * and kept on its context: what the neighbourhood collectives' algorithms
 * share (src/neighbor/neighbor_*.c).
 *
 * Block j of a call's send side goes to destinations[j], block j of its
 * receive side comes from sources[j] (MPI-4.0 section 8.6): the order of
 * MPI_Dist_graph_neighbors, of MPI_Graph_neighbors (both lists), or for a
 * Cartesian topology, per dimension, the rank below then the rank above
 * (MPI_Cart_shift by 1), MPI_PROC_NULL at a boundary that is not periodic.
 * A rank may appear several times (repeated edges): the libraries do not
 * agree on how their messages match (library_order below).
 */
#ifndef CT_NBR_GRAPH_H
#define CT_NBR_GRAPH_H

#include "algorithms.h"

typedef struct ct_nbr_graph {
    int kind;                 /* MPI_DIST_GRAPH, MPI_GRAPH or MPI_CART */
    int indegree, outdegree;
    int *sources, *destinations; /* ranks of the communicator, or MPI_PROC_NULL */
    /* Two edges join the same two ranks somewhere in the graph (a periodic
     * Cartesian dimension of one or two ranks makes the rank below the rank
     * above): which of their messages lands in which block is each MPI
     * library's convention (MPICH 4.0's MPI_Neighbor_alltoall matches them
     * in reverse, its Neighbor_alltoallv and Open MPI's in order), so
     * coltune leaves such a communicator's calls to the library. Agreed by
     * every rank when the graph is read. */
    int library_order;
    /* Some source is MPI_PROC_NULL (a Cartesian boundary): its receive block
     * keeps what it held, so a staged receive side starts as the user's. */
    int null_source;
    /* The rules' facts of the graph (select/rules.h), agreed when it is
     * read: the destinations per rank, MPI_PROC_NULL aside (the mean over
     * the ranks, rounded), the percentage of those edges that join two
     * nodes (rounded; 0 without edges), and its weakly connected components
     * (1 for a Cartesian grid; else counted by every rank from every rank's
     * edges, gathered; 0, not counted, past 4M edges or with library_order). */
    ct_graph_facts facts;
} ct_nbr_graph;

/* The neighbourhood of ctx's communicator, read at the first use (then
 * collective: one allreduce agrees library_order, degree and offnode, and
 * an allgather of the edges counts the components, so every rank must ask
 * in the same call); *out NULL when the communicator has no topology (the
 * MPI library reports the erroneous call). A rank that could not read its
 * own gets one with library_order set, as the others do. */
int ct_nbr_graph_get(ct_ctx *ctx, const ct_nbr_graph **out);

/* The neighbourhood of ctx's communicator if it was read (local), else NULL. */
const ct_nbr_graph *ct_nbr_graph_find(const ct_ctx *ctx);

/* The degrees of comm's neighbourhood without a context (local; 0 and 0
 * without a topology). */
int ct_nbr_degrees(MPI_Comm comm, int *indegree, int *outdegree);

#endif
