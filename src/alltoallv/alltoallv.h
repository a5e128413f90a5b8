/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv.h - the MPI_Alltoallv / MPI_Alltoall driver (alltoallv.c): what
 * the entry points of src/shim and the direct API call. The algorithms do
 * not include it: what they share is in a2av_p2p.h and tuna.h.
 *
 * An algorithm never sees MPI_IN_PLACE: the driver serves it by copying the
 * receive blocks aside and running the algorithm out of the copy.
 */
#ifndef CT_ALLTOALLV_H
#define CT_ALLTOALLV_H

#include "algorithms.h"
#include "select/decide.h"
#include "select/spec.h"

/*
 * The driver of MPI_Alltoallv and MPI_Alltoall (a->coll): decides (forced
 * spec, environment, rules) and runs the chosen algorithm on comm, the user's
 * intra-communicator. Used by every entry point of src/shim and by the direct
 * API, each of which fills the description a.
 */
int ct_alltoallv_dispatch(const ct_alltoallv_args *a, const ct_spec *forced);

/* The nonblocking forms (a->coll CT_COLL_IALLTOALLV or CT_COLL_IALLTOALL,
 * a->request set): decides as ct_alltoallv_dispatch does and starts the
 * chosen algorithm's schedule as one of coltune's requests (core/request.h),
 * or forwards the call. */
int ct_ialltoallv_dispatch(const ct_alltoallv_args *a, const ct_spec *forced);

/* Nothing to do (select/decide.h): is a an MPI_Alltoall whose blocks are
 * empty (with MPI_IN_PLACE the receive arguments describe both sides)? The
 * shim asks first, before anything else. ct_alltoall_forward_empty then
 * returns MPI_SUCCESS at once, as the MPI library's routine would after
 * checking its arguments; it forwards the call to the library when an
 * argument is a null handle (MPI_COMM_NULL, MPI_DATATYPE_NULL: the library
 * reports the error), when coltune is disabled or finalizing, and with
 * COLTUNE_STATS, which counts it as pmpi. */
int ct_alltoall_is_empty(const ct_alltoallv_args *a);
int ct_alltoall_forward_empty(const ct_alltoallv_args *a);
/* Whether an MPI_Alltoall with these arguments is empty and returns at
 * once (as ct_alltoall_forward_empty would), from the arguments themselves:
 * the C entry points ask before they build the description, the cost of
 * which is then spared too. */
int ct_alltoall_empty_at_once(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm);

#endif
