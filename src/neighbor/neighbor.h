/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * neighbor.h - the driver of MPI_Neighbor_alltoallv and
 * MPI_Neighbor_alltoall (neighbor.c): what the entry points of src/shim and
 * the direct API call. What its algorithms share is in nbr_graph.h.
 */
#ifndef CT_NEIGHBOR_H
#define CT_NEIGHBOR_H

#include "algorithms.h"
#include "select/spec.h"

/*
 * Decides (forced spec, environment, rules) and runs the chosen algorithm
 * on the neighbourhood of comm, the user's communicator. A communicator
 * without a topology, or one whose messages the MPI library matches by a
 * convention of its own (repeated edges: nbr_graph.h, library_order), goes
 * to the library.
 */
int ct_neighbor_dispatch(const ct_neighbor_args *a, const ct_spec *forced);

/*
 * The same for the nonblocking and persistent forms (a->coll
 * CT_COLL_INEIGHBOR_ALLTOALL(V), a->request set, a->persistent): the chosen
 * algorithm's schedule becomes one of coltune's requests (core/request.h),
 * started at once, or at each MPI_Start of a persistent one; pmpi forwards
 * the call, whose request is then the library's.
 */
int ct_ineighbor_dispatch(const ct_neighbor_args *a, const ct_spec *forced);

#endif
