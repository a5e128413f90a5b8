/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * neighbor_direct.c - one receive per source and one send per destination,
 * posted at once and completed by one wait: what Open MPI's and MPICH's
 * neighbourhood collectives do, and the reference [Collom2023] measures its
 * aggregation against.
 *
 * Receives are posted in the order of the sources and sends in the order
 * of the destinations, all on one tag (two edges between the same two
 * ranks never reach an algorithm: nbr_graph.h); an empty block is no
 * message on either side. MPI_PROC_NULL neighbours (Cartesian
 * boundaries) move nothing and leave their receive blocks as they are.
 *
 * One round (core/sched.h): every message is posted at the start.
 */
#include "neighbor/nbr_graph.h"
#include "core/sched.h"

int ct_neighbor_direct_build(const ct_neighbor_args *a, ct_ctx *ctx, const long *params,
                             ct_sched *s)
{
    (void)params;
    (void)ctx;
    int rc;
    const ct_nbr_graph *g = a->graph;
    ct_typeinfo st, rt;
    CT_CALL(ct_type_info(a->recvtype, &rt));
    CT_CALL(ct_type_info(a->sendtype, &st));
    CT_CALL(ct_sched_reserve(s, g->indegree + g->outdegree, 1));
    ct_sched_round(s, 0);
    for (int j = 0; j < g->indegree; j++) {
        const MPI_Count n = ct_vec_at(&a->recvcounts, j);
        if (g->sources[j] != MPI_PROC_NULL && n * rt.size > 0)
            ct_sched_recv(s, ct_elem_ptr(a->recvbuf, (MPI_Aint)ct_vec_at(&a->rdispls, j),
                                         rt.extent),
                          n, a->recvtype, g->sources[j]);
    }
    for (int k = 0; k < g->outdegree; k++) {
        const MPI_Count n = ct_vec_at(&a->sendcounts, k);
        if (g->destinations[k] != MPI_PROC_NULL && n * st.size > 0)
            ct_sched_send(s, ct_elem_ptr(a->sendbuf, (MPI_Aint)ct_vec_at(&a->sdispls, k),
                                         st.extent),
                          n, a->sendtype, g->destinations[k]);
    }
out:
    return rc;
}
