/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * decide.h - the one place that decides which algorithm serves a call.
 *
 * Every rank reaches the same decision: the rules are matched on values that
 * are identical on all ranks (P, node count, ranks per node, and msg_size,
 * which is computed with one small allreduce), and rank-local restrictions
 * (byte offsets) are combined over all ranks in that same allreduce.
 * The allreduce happens only when a rule that is reached depends on msg_size
 * or a candidate algorithm has a local restriction; otherwise the decision is
 * cached in the communicator's context and later calls cost nothing.
 */
#ifndef CT_DECIDE_H
#define CT_DECIDE_H

#include "core/context.h"
#include "select/adapt.h"
#include "select/config.h"
#include "select/spec.h"

/* A decision: the algorithm and its resolved parameter values. */
typedef struct ct_choice {
    const ct_algorithm *alg;
    long params[CT_MAX_PARAMS];
    int rule_line; /* rules-file line that chose it, 0 for none */
    int forced;    /* chosen through the environment or the direct API */
    int fallback;  /* alg is the collective's fallback (pmpi: the MPI library's
                      routine), as ct_decide_call() says */
    /* Online tuning (adapt.h): the call is a learner's, chosen because of
     * COLTUNE_ADAPT (adapt_rule NULL) or an adapt rule; turn says which of
     * the learner's calls it is (the driver times a timed one and reports it
     * with ct_adapt_record). */
    int adapt;
    const ct_rule *adapt_rule;
    ct_adapt_turn turn;
} ct_choice;

/* Facts about one call that rules and restrictions may depend on. */
typedef struct ct_call_facts {
    long msg_size;       /* largest block any rank sends, in bytes */
    unsigned violations; /* CT_R_* local restrictions some rank violates */
    unsigned device;     /* some rank's buffer is GPU memory: a CT_DEV_* runtime
                            (core/device.h) that says so, 0 for none */
} ct_call_facts;

/* The CT_DEV_* runtime that reports one of this rank's buffers of a call as
 * device or managed memory, 0 for none (no communication). Called only when
 * the process has a GPU runtime loaded. */
typedef unsigned (*ct_device_memory_fn)(const void *args, const ct_ctx *ctx);

/* Computes this rank's facts for a call (no communication). */
typedef int (*ct_local_facts_fn)(const void *args, const ct_ctx *ctx, ct_call_facts *local);

typedef struct ct_decide_input {
    ct_coll coll;
    const void *args;
    ct_local_facts_fn local_facts; /* NULL for a driver with defer_facts, no
                                      device_memory and no msg_size_is_global,
                                      which agrees on the facts itself */
    int have_facts; /* facts are global (allreduce done); a driver that already
                       agreed on them in its own allreduce may pre-fill facts
                       and set this (the decision is then not cached) */
    ct_call_facts facts;
    /* Set by a driver whose local_facts() yields the same msg_size on every
     * rank by the MPI standard's own rules (intercommunicator Allgather):
     * msg_size conditions then cost no communication. */
    int msg_size_is_global;
    /* A persistent call (its rules may say persistent=1): decided once at
     * its init, neither from nor into the cache of the nonblocking calls. */
    int persistent;
    /* Set by a driver that runs a persistent call's learner (src/learn.c):
     * under COLTUNE_ADAPT the call is then decided by a learner of its own
     * (ct_choice.turn.learner, the caller's to free), not by the rules. */
    int learns;
    int used_msg_size; /* the decision looked at msg_size: not cacheable */
    long own_msg_size; /* the msg_size it read without the facts (every rank
                          knows it alike), for COLTUNE_VERBOSE */
    int query; /* coltune_decision: a learner says what its next call runs
                  without counting the call */
    /* Set by a driver that would rather not communicate to decide: where the
     * facts would be needed, ct_decide returns CT_DECIDE_NEEDS_FACTS instead
     * of computing them (nothing is cached, and the decision is not logged;
     * in verbose jobs a rule passed over before that point is). */
    int defer_facts;
    /* Set by a driver whose calls the MPI library serves when a buffer is in
     * GPU memory (every collective with a pmpi algorithm). On a communicator
     * where some rank had a GPU runtime loaded when its context was made
     * (ctx->device_agree), a call for which an algorithm other than pmpi is
     * chosen agrees over all ranks whether any buffer is device memory (in
     * the facts' allreduce) and then chooses pmpi, whatever forced the
     * algorithm. Elsewhere nothing is asked. */
    ct_device_memory_fn device_memory;
    /* The neighbourhood collectives: the facts of the communicator's graph
     * that rules may name (rules.h). graph_facts reads them, collectively
     * at its first call on a communicator (every rank reaches it at the same
     * rule, as the rules are the same everywhere); offline they are given
     * instead (have_graph). A rule that names them matches no call whose
     * graph is unknown (neither). */
    void (*graph_facts)(ct_ctx *ctx, ct_graph_facts *out);
    int have_graph;
    ct_graph_facts graph;
} ct_decide_input;

/* ct_decide's answer to a call with defer_facts that needs its facts (never
 * an MPI error code, which are >= 0). */
#define CT_DECIDE_NEEDS_FACTS (-1)

/*
 * Chooses the algorithm for call. forced (may be NULL) is a spec from the
 * direct API; otherwise the environment variable of the collective, then the
 * rules, then pmpi. Returns MPI_SUCCESS, or an MPI error code when a forced
 * algorithm cannot serve the call and COLTUNE_FALLBACK=error.
 */
int ct_decide(ct_ctx *ctx, ct_decide_input *call, const ct_spec *forced, ct_choice *out);

/* Is a decision of coll cached on ctx (for the unit tests)? */
int ct_decide_is_cached(ct_ctx *ctx, ct_coll coll);

/* Observes a decision (coltune-info --check --np): each candidate that cannot
 * serve the call, with where it came from (the rules file and line, or the
 * collective's variable and line 0) and why. */
typedef struct ct_decide_trace {
    void (*skipped)(void *arg, const char *source, int line, const ct_spec *spec,
                    const char *why);
    void *arg;
} ct_decide_trace;

/*
 * The same decision without MPI, for a communicator known only by env (P, Q,
 * N) and topo's flags (N, Q, shared, emulated; its maps
 * are not read) and a call whose global facts are given: cfg's forced
 * variable of coll, then cfg's rules, then the fallback, through the same
 * functions ct_decide() uses; persistent: the persistent form of a
 * nonblocking coll (rule condition persistent=1); graph (may be NULL: not
 * known) a neighbourhood collective's graph facts. *used_msg_size (may be
 * NULL) tells whether the decision looked at msg_size. Returns MPI_SUCCESS,
 * or MPI_ERR_ARG where a job's call would return an error
 * (COLTUNE_FALLBACK=error).
 */
int ct_decide_offline(const ct_config *cfg, ct_coll coll, const ct_shape *env,
                      const ct_topo *topo, const ct_call_facts *given, int persistent,
                      const ct_graph_facts *graph, const ct_decide_trace *trace,
                      ct_choice *out, int *used_msg_size);

/*
 * What a call of coll on ctx whose largest block is msg_size bytes would
 * run, decided as ct_decide() decides a call without a forced spec (the
 * collective's variable, then the rules, then pmpi) on these facts: host
 * buffers, arguments every algorithm accepts; graph (may be NULL: not known,
 * its rules pass over) a neighbourhood collective's graph facts. An empty
 * MPI_Alltoall or intercommunicator MPI_Allgather runs pmpi (nothing to do, see below). No
 * communication (coltune_decision()). Returns MPI_SUCCESS or an MPI code.
 */
int ct_decide_query(ct_ctx *ctx, ct_coll coll, long msg_size, const ct_graph_facts *graph,
                    ct_choice *out);

/*
 * What every collective driver does first: finds (or creates) the context of
 * the user's communicator comm and decides. When no context can be had,
 * returns MPI_SUCCESS with *ctx NULL and *out set to the collective's pmpi,
 * which the driver then runs with the user's communicator. The decision's
 * msg_size, when it computed one, is in call->facts (call->have_facts).
 */
int ct_decide_call(MPI_Comm comm, ct_decide_input *call, const ct_spec *forced, ct_ctx **ctx,
                   ct_choice *out);

/*
 * Nothing to do, nothing done: a call that moves no byte on any rank, where
 * every rank can tell so from its own arguments (MPI_Alltoall and the
 * intercommunicator MPI_Allgather with empty blocks: the standard makes the
 * blocks of such a call the same size on every rank of a group), goes to
 * the MPI library at once, with no context and no decision; whatever a
 * variable or the direct API forces (ct_drive_empty, driver.h). Not their
 * nonblocking forms, which are decided as any call: the request the
 * decision's algorithm returns completes at once.
 *
 * Is a call of coll whose largest block is msg_size such an empty call?
 * ct_decide_query and ct_decide_offline answer pmpi for it, as a job does.
 */
int ct_decide_is_empty(ct_coll coll, long msg_size);

#endif
