/*
 * decide.h - the one place that decides which algorithm serves a call.
 *
 * Every rank reaches the same decision: the rules are matched on values that
 * are identical on all ranks (P, node count, ranks per node, and msg_size,
 * which is computed with one small allreduce), and rank-local restrictions
 * (datatypes, offsets) are combined over all ranks in that same allreduce.
 * The allreduce happens only when a rule that is reached depends on msg_size
 * or a candidate algorithm has a local restriction; otherwise the decision is
 * cached in the communicator's context and later calls cost nothing.
 */
#ifndef CT_DECIDE_H
#define CT_DECIDE_H

#include "core/context.h"
#include "select/spec.h"

/* Facts about one call that rules and restrictions may depend on. */
typedef struct ct_call_facts {
    long msg_size;       /* largest block any rank sends, in bytes */
    unsigned violations; /* CT_R_* local restrictions some rank violates */
} ct_call_facts;

/* Computes this rank's facts for a call (no communication). */
typedef int (*ct_local_facts_fn)(const void *args, const ct_ctx *ctx, ct_call_facts *local);

typedef struct ct_call {
    ct_coll coll;
    const void *args;
    ct_local_facts_fn local_facts;
    int have_facts; /* facts are global (allreduce done); a driver that already
                       agreed on them in its own allreduce may pre-fill facts
                       and set this (the decision is then not cached) */
    ct_call_facts facts;
    /* Set by a driver whose local_facts() yields the same msg_size on every
     * rank by the MPI standard's own rules (intercommunicator Allgather):
     * msg_size conditions then cost no communication. */
    int msg_size_is_global;
    int used_msg_size; /* the decision looked at msg_size: not cacheable */
} ct_call;

/*
 * Chooses the algorithm for call. forced (may be NULL) is a spec from the
 * direct API; otherwise the environment variable of the collective, then the
 * rules, then pmpi. Returns MPI_SUCCESS, or an MPI error code when a forced
 * algorithm cannot serve the call and COLTUNE_FALLBACK=error.
 */
int ct_decide(ct_ctx *ctx, ct_call *call, const ct_spec *forced, ct_choice *out);

/*
 * What every collective driver does first: finds (or creates) the context of
 * the user's communicator comm and decides. When no context can be had,
 * returns MPI_SUCCESS with *ctx NULL and *out set to the collective's pmpi,
 * which the driver then runs with the user's communicator. Also sets
 * ctx->call_msg_size from the decision's facts (-1 when not computed).
 */
int ct_decide_call(MPI_Comm comm, ct_call *call, const ct_spec *forced, ct_ctx **ctx,
                   ct_choice *out);

#endif
