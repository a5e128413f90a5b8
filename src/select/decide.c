/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * decide.c - the decision function (see decide.h for the guarantees).
 */
#include "select/decide.h"
#include "core/device.h"
#include "core/log.h"
#include "core/request.h"
#include "core/state.h"
#include "stats.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* What the decision keeps per communicator (a context object)        */
/* ------------------------------------------------------------------ */

#define MAX_LOGGED 32

typedef struct decide_state {
    struct {
        int valid;
        ct_choice choice;
    } cached[CT_COLL_COUNT];
    /* A decision by the rules that looked at a msg_size every rank knows
     * alike (call_msg_size without the facts' allreduce), with the range of
     * msg_size [lo, hi] that would have decided alike: it holds for the
     * next calls of a size in that range. Only the collective's own calls
     * read and write it (MPI orders a communicator's collectives), not
     * coltune_decision's queries. */
    struct {
        int valid;
        long lo, hi;
        ct_choice choice;
    } sized[CT_COLL_COUNT];
    /* ct_algorithm_fallback() of each collective, looked up once: the
     * decision compares every choice with it. */
    const ct_algorithm *fallback[CT_COLL_COUNT];
    int nlogged;
    char *logged[MAX_LOGGED]; /* decisions already logged (COLTUNE_VERBOSE=1) */
} decide_state;

static int state_create(ct_ctx *ctx, void *arg, void **obj)
{
    (void)ctx;
    (void)arg;
    decide_state *s = calloc(1, sizeof *s);
    *obj = s;
    if (s == NULL)
        return MPI_ERR_NO_MEM;
    for (int c = 0; c < CT_COLL_COUNT; c++)
        s->fallback[c] = ct_algorithm_fallback((ct_coll)c);
    return MPI_SUCCESS;
}

static void state_release(void *obj)
{
    decide_state *s = obj;
    for (int i = 0; i < s->nlogged; i++)
        free(s->logged[i]);
    free(s);
}

static const ct_ctx_key state_key = {"decisions", state_create, state_release, NULL};

/* The context's decision state; NULL when out of memory (nothing is then
 * cached, and verbose jobs log every decision). */
static decide_state *state_of(ct_ctx *ctx)
{
    void *s;
    (void)ct_ctx_ext(ctx, &state_key, NULL, &s);
    return s;
}

/* The collective's fallback (pmpi, or the MPIX calls' reference). */
static const ct_algorithm *fallback_of(ct_ctx *ctx, ct_coll coll)
{
    const decide_state *s = state_of(ctx);
    return s != NULL ? s->fallback[coll] : ct_algorithm_fallback(coll);
}

int ct_decide_is_cached(ct_ctx *ctx, ct_coll coll)
{
    const decide_state *s = state_of(ctx);
    return s != NULL && s->cached[coll].valid;
}

/* Local restriction bits, in the order they travel in the allreduce. */
static const struct {
    unsigned bit;
    const char *why;
} local_restrictions[] = {
    {CT_R_INT_OFFSETS, "byte offsets overflow int"},
};
#define NLOCAL ((int)(sizeof local_restrictions / sizeof local_restrictions[0]))

/* This rank's device-memory fact: asked only of a driver that can forward
 * and when the process has a GPU runtime loaded (no cost otherwise). */
static unsigned local_device(const ct_ctx *ctx, const ct_decide_input *call)
{
    if (call->device_memory == NULL || ct_device_runtimes() == 0)
        return 0;
    return call->device_memory(call->args, ctx);
}

/*
 * One allreduce (MPI_MAX) combines msg_size, one flag per restriction, a
 * failure flag (a rank whose local facts cannot be computed still takes
 * part, so every rank returns the error instead of some waiting forever) and
 * the device-memory runtime (0 on ranks with none loaded).
 */
static int ensure_facts(ct_ctx *ctx, ct_decide_input *call)
{
    int rc;
    ct_call_facts local = {0, 0, 0};
    long long in[3 + NLOCAL], res[3 + NLOCAL];
    if (call->have_facts)
        return MPI_SUCCESS;
    int local_rc = call->local_facts(call->args, ctx, &local);
    in[0] = local.msg_size;
    for (int i = 0; i < NLOCAL; i++)
        in[1 + i] = (local.violations & local_restrictions[i].bit) != 0;
    in[1 + NLOCAL] = local_rc != MPI_SUCCESS;
    in[2 + NLOCAL] = local_rc == MPI_SUCCESS ? local_device(ctx, call) : 0;
    CT_CALL(PMPI_Allreduce(in, res, 3 + NLOCAL, MPI_LONG_LONG, MPI_MAX, ctx->decide_comm));
    if (res[1 + NLOCAL]) {
        rc = local_rc != MPI_SUCCESS ? local_rc : MPI_ERR_OTHER;
        if (local_rc == MPI_SUCCESS)
            ct_log_once("%s: another rank could not examine its arguments",
                        ct_coll_name(call->coll));
        goto out;
    }
    call->facts.msg_size = (long)res[0];
    call->facts.violations = 0;
    for (int i = 0; i < NLOCAL; i++)
        if (res[1 + i])
            call->facts.violations |= local_restrictions[i].bit;
    call->facts.device = (unsigned)res[2 + NLOCAL];
    call->have_facts = 1;
out:
    return rc;
}

/*
 * Device memory wins over every choice (decide.h): does some rank of this
 * call hold a buffer in GPU memory? Agreed in the facts' allreduce, run for
 * this when not done already on a communicator where some rank had a GPU
 * runtime loaded when its context was made (ctx->device_agree, the same on
 * every rank: a rank without a runtime takes part and answers no).
 */
static int device_agreed(ct_ctx *ctx, ct_decide_input *call, int *device)
{
    *device = 0;
    if (call->device_memory == NULL)
        return MPI_SUCCESS;
    if (!call->have_facts) {
        if (!ctx->device_agree)
            return MPI_SUCCESS;
        int rc = ensure_facts(ctx, call);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    *device = call->facts.device != 0;
    return MPI_SUCCESS;
}

/* One decision in progress: the configuration it follows, what it sees of
 * the communicator, and the call. ctx is NULL when the decision is made
 * without MPI (ct_decide_offline): the call's facts are given then. */
typedef struct decision {
    const ct_config *cfg;
    ct_ctx *ctx;
    const ct_shape *env;
    const ct_topo *topo;
    ct_decide_input *call;
    const ct_decide_trace *trace; /* NULL in jobs */
    /* The walk of the rules for a learner's incumbent (adapt_prior): adapt
     * rules are passed over and nothing is logged; its call defers the facts. */
    int incumbent;
    /* The msg_size values for which the rules' msg_size conditions read so
     * far answer as for this call's (rule_matches). */
    long size_lo, size_hi;
} decision;

/* A decision of the call, for the rules and the cache (ct_decide). */
static decision decision_of(const ct_config *cfg, ct_ctx *ctx, const ct_shape *env,
                            const ct_topo *topo, ct_decide_input *call,
                            const ct_decide_trace *trace, int incumbent)
{
    return (decision){cfg, ctx, env, topo, call, trace, incumbent, 0, LONG_MAX};
}

/* Narrows d's msg_size range to the values on the same side of r's range as
 * msg_size. */
static void narrow_sizes(decision *d, ct_range r, long msg_size)
{
    long lo = r.lo, hi = r.hi;
    if (msg_size < r.lo) {
        lo = 0;
        hi = r.lo - 1;
    } else if (msg_size > r.hi) {
        lo = r.hi + 1;
        hi = LONG_MAX;
    }
    d->size_lo = lo > d->size_lo ? lo : d->size_lo;
    d->size_hi = hi < d->size_hi ? hi : d->size_hi;
}

static int facts(decision *d)
{
    if (d->call->have_facts)
        return MPI_SUCCESS;
    if (d->ctx == NULL)
        return MPI_ERR_INTERN; /* offline decisions are given their facts */
    if (d->call->defer_facts)
        return CT_DECIDE_NEEDS_FACTS;
    return ensure_facts(d->ctx, d->call);
}

/* The restrictions that depend only on the communicator (and the MPI
 * library): why alg cannot serve it, or NULL. online: in a job, where the
 * progress hook is registered at once (offline, coltune-info only looks
 * for it: Open MPI's runtime is not initialised there). */
static const char *comm_restriction(const ct_algorithm *alg, const ct_topo *topo, int online)
{
    if ((alg->restrictions & CT_R_SHARED_MEMORY) && !topo->shared)
        return "the ranks do not all share memory (more than one node)";
    if ((alg->restrictions & CT_R_NODE_SHARED_MEMORY) && topo->emulated && !topo->shared)
        return "emulated nodes (COLTUNE_PPN) span real nodes: a node's ranks may not share "
               "memory";
    if ((alg->restrictions & CT_R_PROGRESS) && ct_coll_nonblocking(alg->coll) &&
        !(online ? ct_request_hooked() : ct_request_hookable()))
        return "its later rounds start as earlier ones complete, and this MPI library's "
               "progress engine does not call coltune's: a rank blocked in another MPI call "
               "would not start them";
    return NULL;
}

/*
 * Can spec serve this call? Returns MPI_SUCCESS and sets *why to NULL when it
 * can (params filled), or a reason in why. May compute the call's facts.
 */
static int check_candidate(decision *d, const ct_spec *spec, long *params, const char **why,
                           char *buf, size_t len)
{
    const ct_algorithm *alg = spec->alg;
    *why = ct_spec_resolve(spec, d->env, params, buf, len);
    if (*why == NULL)
        *why = comm_restriction(alg, d->topo, d->ctx != NULL);
    if (*why != NULL || !(alg->restrictions & CT_R_LOCAL_MASK))
        return MPI_SUCCESS;
    int rc = facts(d);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < NLOCAL; i++)
        if (alg->restrictions & d->call->facts.violations & local_restrictions[i].bit) {
            *why = local_restrictions[i].why;
            break;
        }
    return MPI_SUCCESS;
}

static void set_choice(ct_choice *out, const ct_algorithm *alg, const long *params,
                       int rule_line, int forced)
{
    memset(out, 0, sizeof *out);
    out->alg = alg;
    if (params != NULL)
        memcpy(out->params, params, sizeof out->params);
    out->rule_line = rule_line;
    out->forced = forced;
}

/* A call with device memory: the fallback (pmpi) serves it, said once. */
static void forward_device(ct_ctx *ctx, const ct_decide_input *call, ct_choice *out)
{
    const ct_config *cfg = ct_cfg();
    if (cfg->set.verbose && ctx->decide_rank == 0)
        ct_log_once("%s on %s#%d: a buffer is %s device or managed memory on some rank; "
                    "forwarded to the MPI library", ct_coll_name(call->coll), ctx->name,
                    ctx->serial, ct_device_name(call->facts.device));
    if (cfg->set.stats)
        ct_stats_record_device(call->coll);
    set_choice(out, fallback_of(ctx, call->coll), NULL, 0, out->forced);
}

/* The facts of the call's graph (neighbourhood collectives): read at the
 * first rule that needs them, collectively (decide.h, graph_facts); 0 where
 * unknown. */
static int call_graph(decision *d)
{
    ct_decide_input *call = d->call;
    if (!call->have_graph && call->graph_facts != NULL && d->ctx != NULL) {
        call->graph_facts(d->ctx, &call->graph);
        call->have_graph = 1;
    }
    return call->have_graph;
}

/* Does this rank's own msg_size hold on every rank? Where the driver says
 * so, and for the calls of one block size on a connected graph
 * (ct_coll_one_block_size). */
static int msg_size_global(decision *d)
{
    const ct_decide_input *call = d->call;
    if (call->msg_size_is_global)
        return 1;
    return ct_coll_one_block_size(call->coll) && call_graph(d) && call->graph.components == 1;
}

/* The call's global msg_size: from this rank's own arguments when they
 * determine it (msg_size_global), else through the decision's allreduce. */
static int call_msg_size(decision *d, long *msg_size)
{
    ct_decide_input *call = d->call;
    call->used_msg_size = 1;
    if (!call->have_facts && msg_size_global(d)) {
        ct_call_facts local;
        int rc = call->local_facts(call->args, d->ctx, &local);
        if (rc == MPI_SUCCESS) {
            *msg_size = call->own_msg_size = local.msg_size;
            return MPI_SUCCESS;
        }
        /* a local failure must be agreed on: fall through to the allreduce */
    }
    int rc = facts(d);
    *msg_size = call->facts.msg_size;
    return rc;
}

#define KEY(k) (1u << (k))
#define SHAPE_KEYS (KEY(CT_KEY_COMM_SIZE) | KEY(CT_KEY_NODES) | KEY(CT_KEY_PPN) | \
                    KEY(CT_KEY_PERSISTENT))
#define GRAPH_KEYS (KEY(CT_KEY_DEGREE) | KEY(CT_KEY_OFFNODE) | KEY(CT_KEY_COMPONENTS))

/* Do r's conditions on the keys of mask hold for values? */
static int keys_match(const ct_rule *r, unsigned mask, const long values[CT_KEY_COUNT])
{
    for (int k = 0; k < CT_KEY_COUNT; k++)
        if ((r->key_mask & mask & KEY(k)) && !ct_range_contains(r->range[k], values[k]))
            return 0;
    return 1;
}

/* Do r's conditions on P, nodes, ppn and persistence hold (msg_size and the
 * graph aside)? */
static int shape_matches(const ct_rule *r, const ct_shape *env, const ct_topo *topo,
                         const ct_decide_input *call)
{
    const long values[CT_KEY_COUNT] = {
        [CT_KEY_COMM_SIZE] = env->P,
        [CT_KEY_NODES] = topo->N,
        [CT_KEY_PPN] = topo->Q,
        [CT_KEY_PERSISTENT] = call->persistent,
    };
    return keys_match(r, SHAPE_KEYS, values);
}

/* Do r's conditions on the neighbourhood's graph hold? Reads the graph's
 * facts when r names them and they are not known yet. */
static int graph_matches(decision *d, const ct_rule *r)
{
    ct_decide_input *call = d->call;
    if (!(r->key_mask & GRAPH_KEYS))
        return 1;
    if (!call_graph(d))
        return 0;
    const long values[CT_KEY_COUNT] = {
        [CT_KEY_DEGREE] = call->graph.degree,
        [CT_KEY_OFFNODE] = call->graph.offnode,
        [CT_KEY_COMPONENTS] = call->graph.components,
    };
    return keys_match(r, GRAPH_KEYS, values);
}

/* Does rule r's condition hold? Fetches msg_size only when r needs it. */
static int rule_matches(decision *d, const ct_rule *r, int *match)
{
    int rc;
    *match = 0;
    if (r->coll != d->call->coll || !shape_matches(r, d->env, d->topo, d->call))
        return MPI_SUCCESS;
    if (!graph_matches(d, r))
        return MPI_SUCCESS;
    if (r->key_mask & (1u << CT_KEY_MSG_SIZE)) {
        long msg_size;
        if ((rc = call_msg_size(d, &msg_size)) != MPI_SUCCESS)
            return rc;
        narrow_sizes(d, r->range[CT_KEY_MSG_SIZE], msg_size);
        if (!ct_range_contains(r->range[CT_KEY_MSG_SIZE], msg_size))
            return MPI_SUCCESS;
    }
    *match = 1;
    return MPI_SUCCESS;
}

/* A candidate that cannot serve the call: traced, or logged in verbose jobs. */
static void skipped(const decision *d, const char *source, int line, const ct_spec *spec,
                    const char *why)
{
    const ct_ctx *ctx = d->ctx;
    if (d->incumbent)
        return;
    if (d->trace != NULL)
        d->trace->skipped(d->trace->arg, source, line, spec, why);
    else if (d->cfg->set.verbose && ctx != NULL && ctx->decide_rank == 0)
        ct_log_once("%s on %s#%d: %s:%d: %s skipped: %s", ct_coll_name(d->call->coll),
                    ctx->name, ctx->serial, source, line, spec->alg->name, why);
}

/* First matching rule whose algorithm can serve the call (an adapt rule:
 * the call learns), else pmpi. */
static int decide_by_rules(decision *d, ct_choice *out)
{
    const ct_ruleset *rs = &d->cfg->rules;
    char buf[160];
    for (int i = 0; i < rs->count; i++) {
        const ct_rule *r = &rs->rules[i];
        int match, rc;
        const char *why;
        if (r->adapt && d->incumbent) /* before its msg_size, which may need facts */
            continue;
        if ((rc = rule_matches(d, r, &match)) != MPI_SUCCESS)
            return rc;
        if (!match)
            continue;
        if (r->adapt) {
            set_choice(out, r->spec.alg, NULL, r->line, 0);
            out->adapt = 1;
            out->adapt_rule = r;
            return MPI_SUCCESS;
        }
        /* zeroed for each rule: a choice's unused parameters are 0, and
         * adapt_prior compares them whole */
        long params[CT_MAX_PARAMS] = {0};
        rc = check_candidate(d, &r->spec, params, &why, buf, sizeof buf);
        if (rc != MPI_SUCCESS)
            return rc;
        if (why == NULL) {
            set_choice(out, r->spec.alg, params, r->line, 0);
            return MPI_SUCCESS;
        }
        skipped(d, rs->name, r->line, &r->spec, why);
    }
    set_choice(out, ct_algorithm_fallback(d->call->coll), NULL, 0, 0);
    return MPI_SUCCESS;
}

/* A forced algorithm that cannot serve the call: COLTUNE_FALLBACK decides. */
static int forced_fallback(const decision *d, const ct_spec *spec, const char *why,
                           ct_choice *out)
{
    const ct_config *cfg = d->cfg;
    ct_ctx *ctx = d->ctx;
    const char *coll = ct_coll_name(d->call->coll);
    int report = d->trace == NULL && ctx != NULL && ctx->decide_rank == 0;
    if (d->trace != NULL)
        d->trace->skipped(d->trace->arg, ct_config_env_name(d->call->coll), 0, spec, why);
    if (cfg->set.fallback == CT_FALLBACK_PRINT && report)
        ct_log_once("%s: forced algorithm '%s' cannot serve this call on %s (%s); using pmpi",
                    coll, spec->alg->name, ctx->name, why);
    if (cfg->set.fallback == CT_FALLBACK_ERROR && ctx != NULL) {
        /* The MPI library serves a call with device memory: no error. */
        int device, rc = device_agreed(ctx, d->call, &device);
        if (rc != MPI_SUCCESS)
            return rc;
        if (device) {
            out->forced = 1;
            forward_device(ctx, d->call, out);
            return MPI_SUCCESS;
        }
    }
    if (cfg->set.fallback == CT_FALLBACK_ERROR) {
        if (report)
            ct_log_once("%s: forced algorithm '%s' cannot serve this call on %s (%s);"
                        " returning an error (COLTUNE_FALLBACK=error)",
                        coll, spec->alg->name, ctx->name, why);
        return MPI_ERR_ARG;
    }
    set_choice(out, ct_algorithm_fallback(d->call->coll), NULL, 0, 1);
    return MPI_SUCCESS;
}

static void log_decision(ct_ctx *ctx, const ct_decide_input *call, const ct_choice *c)
{
    const ct_config *cfg = ct_cfg();
    char spec[160], key[256], where[32] = "default";
    if (!cfg->set.verbose || ctx->decide_rank != 0)
        return;
    ct_spec_format_resolved(c->alg, c->params, spec, sizeof spec);
    if (c->forced)
        snprintf(where, sizeof where, "forced");
    else if (c->rule_line > 0)
        snprintf(where, sizeof where, "rule line %d", c->rule_line);
    snprintf(key, sizeof key, "%s %s %s", ct_coll_name(call->coll), spec, where);
    decide_state *s = state_of(ctx);
    if (cfg->set.verbose == 1 && s != NULL) {
        /* Under the lock: coltune_decision may log from several threads. */
        ct_state *st = ct_state_get();
        int seen = 0;
        ct_state_lock(st);
        for (int i = 0; i < s->nlogged && !seen; i++)
            seen = strcmp(s->logged[i], key) == 0;
        if (!seen && s->nlogged < MAX_LOGGED)
            s->logged[s->nlogged++] = strdup(key);
        ct_state_unlock(st);
        if (seen)
            return;
    }
    char facts[48] = "";
    if (call->have_facts)
        snprintf(facts, sizeof facts, " msg_size=%ld", call->facts.msg_size);
    else if (call->used_msg_size)
        snprintf(facts, sizeof facts, " msg_size=%ld", call->own_msg_size);
    ct_log("%s on %s#%d (P=%d nodes=%d ppn=%d%s): %s [%s]", ct_coll_name(call->coll),
           ctx->name, ctx->serial, (int)ctx->shape.P, ctx->topo.N, ctx->topo.Q, facts, spec,
           where);
}

/* ------------------------------------------------------------------ */
/* Online tuning (adapt.h)                                             */
/* ------------------------------------------------------------------ */

/* Can alg be a candidate on ctx? Not pmpi (always there), not an algorithm
 * with a per-call restriction (checking it would cost every call an
 * allreduce), nor one the communicator rules out, nor, unless an adapt rule
 * lists it, on one node, one that only adds a setup of its own to what
 * another candidate does there (CT_L_ACROSS_NODES). */
static int candidate_ok(const ct_ctx *ctx, const ct_algorithm *alg, int listed)
{
    return alg != ct_algorithm_fallback(alg->coll) && !(alg->restrictions & CT_R_LOCAL_MASK) &&
           (listed || !(alg->restrictions & CT_L_ACROSS_NODES) || ctx->topo.N >= 2) &&
           comm_restriction(alg, &ctx->topo, 1) == NULL;
}

static int add_candidate(ct_adapt_cand *c, int n, const ct_algorithm *alg, const long *params)
{
    for (int i = 0; i < n; i++)
        if (c[i].alg == alg && memcmp(c[i].params, params, sizeof c[i].params) == 0)
            return n;
    if (n == CT_ADAPT_MAX_SLOTS - 2)
        return n;
    c[n].alg = alg;
    memcpy(c[n].params, params, sizeof c[n].params);
    return n + 1;
}

static int add_value(long *v, int n, long x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return n;
    v[n] = x;
    return n + 1;
}

/* A parameter whose range is wider than this is a size in bytes (shm's
 * large), a threshold of the machine: only its default is tried (as
 * coltune-tune's SIZE_PARAM_SPAN). */
#define SIZE_PARAM_SPAN (1L << 20)

/* alg with a small sweep of its parameters: each takes its default and the
 * ends of its range (tuna's radix at P = 16: 2 and 16). */
static int sweep(const ct_ctx *ctx, const ct_algorithm *alg, ct_adapt_cand *c, int n)
{
    long def[CT_MAX_PARAMS] = {0}, vals[CT_MAX_PARAMS][3];
    int nv[CT_MAX_PARAMS], idx[CT_MAX_PARAMS] = {0};
    ct_spec spec;
    ct_spec_default(alg, &spec);
    if (ct_spec_resolve(&spec, &ctx->shape, def, NULL, 0) != NULL)
        return n; /* a parameter's range is empty on this communicator */
    for (int i = 0; i < alg->nparams; i++) {
        const long lo = ct_expr_eval(alg->params[i].min, &ctx->shape);
        const long hi = ct_expr_eval(alg->params[i].max, &ctx->shape);
        nv[i] = add_value(vals[i], 0, def[i]);
        if (hi - lo > SIZE_PARAM_SPAN)
            continue;
        nv[i] = add_value(vals[i], nv[i], lo);
        nv[i] = add_value(vals[i], nv[i], hi);
    }
    for (;;) { /* every combination, the last parameter fastest */
        long params[CT_MAX_PARAMS] = {0};
        for (int i = 0; i < alg->nparams; i++)
            params[i] = vals[i][idx[i]];
        n = add_candidate(c, n, alg, params);
        int i = alg->nparams - 1;
        while (i >= 0 && ++idx[i] == nv[i])
            idx[i--] = 0;
        if (i < 0)
            return n;
    }
}

/* The candidates of a learner on ctx: those an adapt rule lists, or every
 * algorithm of the collective with its sweep (COLTUNE_ADAPT, or "adapt"). */
static int adapt_candidates(const ct_ctx *ctx, ct_coll coll, const ct_rule *r, ct_adapt_cand *c)
{
    int n = 0;
    if (r != NULL && r->ncands > 0) {
        for (int i = 0; i < r->ncands; i++) {
            long params[CT_MAX_PARAMS] = {0};
            if (candidate_ok(ctx, r->cands[i].alg, 1) &&
                ct_spec_resolve(&r->cands[i], &ctx->shape, params, NULL, 0) == NULL)
                n = add_candidate(c, n, r->cands[i].alg, params);
        }
        return n;
    }
    for (int i = 0; i < ct_algorithm_count(); i++) {
        const ct_algorithm *alg = ct_algorithm_at(i);
        if (alg->coll == coll && candidate_ok(ctx, alg, 0))
            n = sweep(ctx, alg, c, n);
    }
    return n;
}

/* The learner's incumbent (ct_adapt_create): the slot of what the rules give
 * the call when nothing learns (decide_by_rules with the site's rules file or
 * the shipped one, adapt rules passed over; pmpi, CT_ADAPT_BASE, where no
 * rule serves it), -1 for none. Found without communicating (the facts
 * deferred), so every rank finds the same: the rules and the msg_size of a
 * collective that knows it locally are alike on every rank. No rules file,
 * a matching rule that needs a msg_size the collective cannot know locally
 * (msg_size < 0) or an algorithm's per-call restriction, or a choice that is
 * not among the candidates c[0, n) gives none. A learner of a size class
 * takes its first call's. */
static int adapt_prior(ct_ctx *ctx, ct_coll coll, long msg_size, int persistent,
                       const ct_adapt_cand *c, int n)
{
    const ct_config *cfg = ct_cfg();
    if (cfg->rules.count == 0)
        return -1;
    ct_decide_input call = {.coll = coll,
                            .have_facts = msg_size >= 0,
                            .facts = {msg_size, 0, 0},
                            .persistent = persistent, /* its persistent=1 rules */
                            .defer_facts = 1};
    decision d = decision_of(cfg, ctx, &ctx->shape, &ctx->topo, &call, NULL, 1);
    ct_choice rules;
    if (decide_by_rules(&d, &rules) != MPI_SUCCESS) /* CT_DECIDE_NEEDS_FACTS */
        return -1;
    if (rules.alg == ct_algorithm_fallback(coll))
        return CT_ADAPT_BASE;
    for (int j = 0; j < n; j++) /* an algorithm with a per-call restriction is none */
        if (c[j].alg == rules.alg && memcmp(c[j].params, rules.params, sizeof rules.params) == 0)
            return CT_ADAPT_AA + 1 + j;
    return -1;
}

/* A persistent call's learner, made at its init (adapt.h,
 * ct_adapt_create_own): the choice names what its first start runs. */
static int adapt_own(ct_ctx *ctx, ct_decide_input *call, int cls, long msg_size,
                     ct_choice *out)
{
    ct_adapt_cand cands[CT_ADAPT_MAX_SLOTS - 2], c;
    if (msg_size < 0 && !call->query) {
        /* A size no rank knows alone (Alltoallv): agreed once, here, at the
         * init, so that the learner has a size class (its learned rule a
         * msg_size range) and its incumbent the rules' choice for it. */
        decision d = decision_of(ct_cfg(), ctx, &ctx->shape, &ctx->topo, call, NULL, 0);
        const int rc = facts(&d);
        if (rc != MPI_SUCCESS)
            return rc;
        msg_size = call->facts.msg_size;
        cls = ct_adapt_size_class(msg_size);
    }
    const int n = adapt_candidates(ctx, call->coll, out->adapt_rule, cands);
    const int prior = adapt_prior(ctx, call->coll, msg_size, 1, cands, n);
    if (call->query) {
        ct_adapt_first(call->coll, cands, n, prior, &c);
    } else {
        struct ct_learner *l =
            ct_adapt_create_own(ctx, call->coll, cls, out->adapt_rule, cands, n, prior);
        if (l == NULL)
            return MPI_ERR_NO_MEM;
        ct_adapt_next(l, 0, &out->turn, &c); /* looks, counts nothing */
    }
    out->alg = c.alg;
    memcpy(out->params, c.params, sizeof out->params);
    return MPI_SUCCESS;
}

/* A learner's call: its class (the message size where every rank knows it
 * without communicating), its learner (made on the first call), and the
 * candidate the learner runs now. */
static int adapt_turn(ct_ctx *ctx, ct_decide_input *call, ct_choice *out)
{
    long msg_size = -1;
    if (ct_coll_msg_size_known(call->coll)) {
        ct_call_facts local = call->facts;
        if (!call->have_facts) {
            int rc = call->local_facts(call->args, ctx, &local);
            if (rc != MPI_SUCCESS)
                return rc;
        }
        msg_size = local.msg_size;
    }
    const int cls = ct_adapt_class(call->coll, msg_size);
    ct_adapt_cand c;
    if (call->persistent) /* its own learner: its starts run the candidates */
        return adapt_own(ctx, call, cls, msg_size, out);
    struct ct_learner *l = ct_adapt_find(ctx, call->coll, cls, out->adapt_rule);
    if (l == NULL) {
        ct_adapt_cand cands[CT_ADAPT_MAX_SLOTS - 2];
        const int n = adapt_candidates(ctx, call->coll, out->adapt_rule, cands);
        const int prior = adapt_prior(ctx, call->coll, msg_size, 0, cands, n);
        if (call->query) { /* made by the first call only: a query changes nothing */
            ct_adapt_first(call->coll, cands, n, prior, &c);
        } else {
            l = ct_adapt_create(ctx, call->coll, cls, out->adapt_rule, cands, n, prior);
            if (l == NULL)
                return MPI_ERR_NO_MEM;
        }
    }
    if (l != NULL)
        ct_adapt_next(l, !call->query, &out->turn, &c);
    out->alg = c.alg;
    memcpy(out->params, c.params, sizeof out->params);
    return MPI_SUCCESS;
}

/* The decision itself: a forced spec (direct API, then the collective's
 * variable), else COLTUNE_ADAPT, else the rules. */
static int decide(decision *d, const ct_spec *forced, ct_choice *out)
{
    const ct_config *cfg = d->cfg;
    const ct_coll coll = d->call->coll;
    if (forced == NULL && cfg->forced_set[coll])
        forced = &cfg->forced[coll];
    /* The collectives that learn: the blocking ones the MPI library also
     * serves (a learner times calls to their completion), and the
     * persistent forms whose driver runs a learner (its starts). */
    if (forced == NULL && cfg->set.adapt && ct_coll_has_pmpi(coll) &&
        (!ct_coll_nonblocking(coll) || (d->call->persistent && d->call->learns))) {
        set_choice(out, ct_algorithm_fallback(coll), NULL, 0, 0);
        out->adapt = 1; /* COLTUNE_ADAPT: every call of coll learns */
        return MPI_SUCCESS;
    }
    if (forced == NULL)
        return decide_by_rules(d, out);
    long params[CT_MAX_PARAMS] = {0};
    char buf[160];
    const char *why;
    int rc = check_candidate(d, forced, params, &why, buf, sizeof buf);
    if (rc != MPI_SUCCESS)
        return rc;
    if (why != NULL)
        return forced_fallback(d, forced, why, out);
    set_choice(out, forced->alg, params, 0, 1);
    return MPI_SUCCESS;
}

/* The decision of an earlier call whose msg_size range holds this call's
 * (decide_state.sized): its own msg_size, which every rank knows alike
 * there (the range was read without the facts' allreduce, and whether
 * ranks know it alike is the same for every call on the communicator). */
static int sized_hit(decide_state *s, ct_ctx *ctx, ct_decide_input *call, ct_choice *out)
{
    ct_call_facts local;
    if (call->have_facts || call->query || !s->sized[call->coll].valid || /* queries first */
        call->local_facts == NULL || call->local_facts(call->args, ctx, &local) != MPI_SUCCESS ||
        local.msg_size < s->sized[call->coll].lo || local.msg_size > s->sized[call->coll].hi)
        return 0;
    *out = s->sized[call->coll].choice;
    call->used_msg_size = 1;
    call->own_msg_size = local.msg_size;
    return 1;
}

int ct_decide(ct_ctx *ctx, ct_decide_input *call, const ct_spec *forced, ct_choice *out)
{
    const ct_config *cfg = ct_cfg();
    const int cacheable = forced == NULL && !cfg->forced_set[call->coll] && !call->persistent;
    int rc;
    decide_state *s = state_of(ctx);
    /* Acquire: a coltune_decision in another thread may read the cache the
     * collective's thread fills (the choice first, then valid). */
    if (cacheable && s != NULL &&
        __atomic_load_n(&s->cached[call->coll].valid, __ATOMIC_ACQUIRE)) {
        *out = s->cached[call->coll].choice;
        rc = MPI_SUCCESS;
    } else if (cacheable && s != NULL && sized_hit(s, ctx, call, out)) {
        rc = MPI_SUCCESS;
    } else {
        decision d = decision_of(cfg, ctx, &ctx->shape, &ctx->topo, call, NULL, 0);
        rc = decide(&d, forced, out);
        /* A decision by the rules that needed no per-call facts holds for
         * every call; one that read a msg_size every rank knows, for the
         * calls of a size in the range that decides alike. */
        if (cacheable && s != NULL && rc == MPI_SUCCESS && !call->have_facts &&
            !call->used_msg_size) {
            s->cached[call->coll].choice = *out;
            __atomic_store_n(&s->cached[call->coll].valid, 1, __ATOMIC_RELEASE);
            /* Forwarded every time, and nothing to count: the shim may skip
             * the driver (ct_ctx_forwards). */
            if (out->alg == s->fallback[call->coll] && !out->adapt && !cfg->set.stats)
                ctx->forwards |= 1u << call->coll;
        } else if (cacheable && s != NULL && rc == MPI_SUCCESS && !call->have_facts &&
                   !call->query) {
            s->sized[call->coll].choice = *out;
            s->sized[call->coll].lo = d.size_lo;
            s->sized[call->coll].hi = d.size_hi;
            s->sized[call->coll].valid = 1;
        }
    }
    if (rc == MPI_SUCCESS && out->adapt)
        return adapt_turn(ctx, call, out); /* the learner logs its decisions */
    if (rc == MPI_SUCCESS && cfg->set.verbose) /* tested here: the call is the hot path */
        log_decision(ctx, call, out);
    return rc;
}

int ct_decide_offline(const ct_config *cfg, ct_coll coll, const ct_shape *env,
                      const ct_topo *topo, const ct_call_facts *given, int persistent,
                      const ct_graph_facts *graph, const ct_decide_trace *trace,
                      ct_choice *out, int *used_msg_size)
{
    ct_decide_input call = {.coll = coll, .have_facts = 1, .facts = *given,
                            .persistent = persistent, .have_graph = graph != NULL,
                            .graph = graph != NULL ? *graph : (ct_graph_facts){0, 0, 0}};
    decision d = decision_of(cfg, NULL, env, topo, &call, trace, 0);
    if (ct_decide_is_empty(coll, given->msg_size)) {
        set_choice(out, ct_algorithm_fallback(coll), NULL, 0, 0);
        if (used_msg_size != NULL)
            *used_msg_size = 1;
        return MPI_SUCCESS;
    }
    int rc = decide(&d, NULL, out);
    if (used_msg_size != NULL)
        *used_msg_size = call.used_msg_size;
    return rc;
}

int ct_decide_is_empty(ct_coll coll, long msg_size)
{
    return msg_size == 0 && ct_coll_msg_size_known(coll) && !ct_coll_nonblocking(coll);
}

int ct_decide_query(ct_ctx *ctx, ct_coll coll, long msg_size, const ct_graph_facts *graph,
                    ct_choice *out)
{
    ct_decide_input call = {.coll = coll, .have_facts = 1, .facts = {msg_size, 0, 0},
                            .query = 1, .have_graph = graph != NULL,
                            .graph = graph != NULL ? *graph : (ct_graph_facts){0, 0, 0}};
    if (ct_decide_is_empty(coll, msg_size)) {
        set_choice(out, ct_algorithm_fallback(coll), NULL, 0, 0);
        return MPI_SUCCESS;
    }
    return ct_decide(ctx, &call, NULL, out);
}

int ct_decide_call(MPI_Comm comm, ct_decide_input *call, const ct_spec *forced, ct_ctx **ctx,
                   ct_choice *out)
{
    int rc = ct_ctx_get(comm, ctx);
    if (rc != MPI_SUCCESS) {
        ct_log_once("%s: no coltune context for this communicator; forwarding to the MPI "
                    "library", ct_coll_name(call->coll));
        *ctx = NULL;
        set_choice(out, ct_algorithm_fallback(call->coll), NULL, 0, 0);
        out->fallback = 1;
        return MPI_SUCCESS;
    }
    rc = ct_decide(*ctx, call, forced, out);
    /* A persistent call's learner runs pmpi as one of its candidates: its
     * call is not forwarded, whatever the first start runs. */
    const int own_learner = rc == MPI_SUCCESS && call->persistent && out->turn.learner != NULL;
    out->fallback = rc == MPI_SUCCESS && !own_learner && out->alg == fallback_of(*ctx, call->coll);
    if (rc == MPI_SUCCESS && !out->fallback) {
        int device;
        rc = device_agreed(*ctx, call, &device);
        if (own_learner && (rc != MPI_SUCCESS || device)) {
            /* failed, or device memory, which the MPI library serves: no learner */
            ct_adapt_release(out->turn.learner);
            out->turn.learner = NULL;
        }
        if (rc == MPI_SUCCESS && device) {
            forward_device(*ctx, call, out);
            out->fallback = 1;
        }
    }
    return rc;
}
