/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allgather_inter.h - drivers of the intercommunicator Allgather and
 * Allgatherv (allgather_inter.c); what their algorithms share is in
 * ag_exchange.h.
 *
 * The context of an intercommunicator has ctx->comm (private duplicate of
 * the intercommunicator: the remote group's ranks), ctx->local_comm (the
 * local group, by local rank) and ctx->union_comm (both groups), each created
 * once per communicator. MPI_IN_PLACE never reaches these drivers: it has no
 * meaning on intercommunicators, and the shim forwards it to PMPI_ so the
 * user gets exactly what the MPI library does.
 *
 * The decision's msg_size for both collectives is the larger of the two
 * group totals, max(K_A, K_B) in bytes (M of [Kang2019]): every rank knows the
 * remote group's total from its receive arguments, and one MAX over both
 * groups (the decision's allreduce on union_comm) gives both groups the same
 * value. For Allgather no rank needs to communicate to know it.
 */
#ifndef CT_ALLGATHER_INTER_H
#define CT_ALLGATHER_INTER_H

#include "algorithms.h"
#include "select/spec.h"

int ct_allgather_inter_dispatch(const ct_allgather_args *a, const ct_spec *forced);
int ct_allgatherv_inter_dispatch(const ct_allgatherv_args *a, const ct_spec *forced);
/* The nonblocking forms (a->request set; a->persistent for MPI_Allgather(v)_init):
 * the call's request, coltune's (core/request.h) or the library's (pmpi). */
int ct_iallgather_inter_dispatch(const ct_allgather_args *a, const ct_spec *forced);
int ct_iallgatherv_inter_dispatch(const ct_allgatherv_args *a, const ct_spec *forced);

#endif
