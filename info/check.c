/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check.c - coltune-info --check FILE [--np P ...]: a rules file checked by
 * the job's own parser, and what a job's call would run, decided by the
 * job's own decision function (ct_decide_offline) without MPI.
 *
 * Without --msg-size, every message size range where the decision can change
 * (the bounds of the msg_size conditions of the collective's rules) is
 * decided once, and ranges with the same outcome are merged.
 */
#include "info/check.h"
#include "info/out.h"
#include "select/decide.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Parsing                                                             */
/* ------------------------------------------------------------------ */

static void print_error(void *arg, const char *msg)
{
    const info_out *o = arg;
    if (o->parsable)
        info_kv(o, "check:error", "%s", msg);
    else
        fprintf(o->f, "%s\n", msg);
}

static void print_counts(const info_out *o, const check_query *q, const ct_ruleset *rs)
{
    int count[CT_COLL_COUNT];
    ct_rules_count(rs, count);
    if (!o->parsable)
        fprintf(o->f, "%s: %d rule%s:", q->file, rs->count, rs->count == 1 ? "" : "s");
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        if (o->parsable)
            info_kv(o, "check:count", "%s:%d", ct_coll_name((ct_coll)c), count[c]);
        else
            fprintf(o->f, "%s %s %d", c ? "," : "", ct_coll_name((ct_coll)c), count[c]);
    }
    if (!o->parsable)
        fprintf(o->f, "\n");
}

/* Rule lines for a note, "3, 5, 9" (then ", ..." past its room). */
typedef struct line_list {
    char text[200];
    size_t used;
    int n;
} line_list;

static void line_list_add(line_list *l, int line)
{
    l->n++;
    if (l->used < sizeof l->text - 16)
        l->used += (size_t)snprintf(l->text + l->used, sizeof l->text - l->used, "%s%d",
                                    l->n > 1 ? ", " : "", line);
}

static const char *line_list_more(const line_list *l)
{
    return l->used >= sizeof l->text - 16 ? ", ..." : "";
}

/* Does a call that reaches r pay an allreduce for its msg_size condition?
 * Not where every rank knows it (ct_coll_msg_size_known), nor for a rule of
 * MPI_Neighbor_alltoall that matches connected graphs only (components=1:
 * one block size, ct_coll_one_block_size). */
static int msg_size_costs(const ct_rule *r)
{
    const ct_range *c = &r->range[CT_KEY_COMPONENTS];
    if (!(r->key_mask & (1u << CT_KEY_MSG_SIZE)) || ct_coll_msg_size_known(r->coll))
        return 0;
    return !(ct_coll_one_block_size(r->coll) && (r->key_mask & (1u << CT_KEY_COMPONENTS)) &&
             c->lo == 1 && c->hi == 1);
}

/*
 * The rules whose msg_size condition costs communication: for a collective
 * whose message size differs from rank to rank (ct_coll_msg_size_known), a
 * call that reaches such a rule pays one allreduce to agree on it, every
 * time, where a rule without one is decided once and cached
 * (MPI_Neighbor_alltoall's, on a graph of several components only). Returns
 * how many there are.
 */
static int print_allreduce_rules(const info_out *o, const check_query *q, const ct_ruleset *rs)
{
    int n = 0;
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        line_list l = {.n = 0};
        for (int i = 0; i < rs->count; i++) {
            const ct_rule *r = &rs->rules[i];
            if (r->coll != (ct_coll)c || !msg_size_costs(r))
                continue;
            if (o->parsable)
                info_kv(o, "check:allreduce", "%s:%d:%s", ct_coll_name(r->coll), r->line,
                        q->file);
            line_list_add(&l, r->line);
        }
        if (l.n > 0 && !o->parsable)
            fprintf(o->f, "%s: note: %s rule%s on line%s %s%s: a call that reaches one costs "
                          "an allreduce to agree on msg_size (it differs from rank to rank%s)\n",
                    q->file, ct_coll_name((ct_coll)c), l.n > 1 ? "s" : "", l.n > 1 ? "s" : "",
                    l.text, line_list_more(&l),
                    ct_coll_one_block_size((ct_coll)c) ? " on a graph of several components"
                                                       : "");
        n += l.n;
    }
    return n;
}

/* ------------------------------------------------------------------ */
/* The communicator of a query                                         */
/* ------------------------------------------------------------------ */

/* The largest --np answered: the description costs a few ints per rank. */
#define MAX_QUERY_P (1L << 22)

/*
 * The nodes a job of q->P ranks would see: --nodes N and --ppn Q give nodes
 * of Q ranks, the last one holding the rest (blocks of consecutive ranks, or
 * ranks dealt round-robin with --cyclic); without them COLTUNE_PPN's emulated
 * nodes on one host, else one node. Sets *Q, *cyclic and *emulated, or
 * prints why not and returns -1 (a usage error).
 */
static int query_nodes(const check_query *q, const ct_config *env, long *Q, int *cyclic,
                       int *emulated)
{
    const long P = q->P;
    *cyclic = q->cyclic;
    *emulated = 0;
    if (P > MAX_QUERY_P) {
        fprintf(stderr, "coltune-info: --np %ld: at most %ld ranks are described\n", P,
                MAX_QUERY_P);
        return -1;
    }
    if (q->ppn > P || q->nodes > P) {
        fprintf(stderr, "coltune-info: %s %ld is more than --np %ld\n",
                q->ppn > P ? "--ppn" : "--nodes", q->ppn > P ? q->ppn : q->nodes, P);
        return -1;
    }
    if (q->nodes || q->ppn) {
        *Q = q->ppn ? q->ppn : (P + q->nodes - 1) / q->nodes;
        if (q->nodes && (P + *Q - 1) / *Q != q->nodes) {
            fprintf(stderr, "coltune-info: %ld ranks in nodes of %ld make %ld node%s, not "
                            "%ld (every node holds --ppn ranks but the last)\n",
                    P, *Q, (P + *Q - 1) / *Q, (P + *Q - 1) / *Q == 1 ? "" : "s", q->nodes);
            return -1;
        }
    } else if (env->set.ppn > 0) {
        *Q = env->set.ppn < P ? env->set.ppn : P;
        *cyclic |= env->set.ppn_cyclic;
        *emulated = 1;
    } else {
        *Q = P;
    }
    return 0;
}

/* The topology of query_nodes() as the decision sees it; what describes it. */
static int query_topology(const check_query *q, const ct_config *env, ct_topo *topo, ct_shape *e,
                          char *what, size_t len)
{
    long Q;
    int cyclic, emulated;
    if (query_nodes(q, env, &Q, &cyclic, &emulated) != 0)
        return -1;
    if (ct_topo_emulate((int)q->P, (int)Q, cyclic, topo) != MPI_SUCCESS) {
        fprintf(stderr, "coltune-info: out of memory describing %ld ranks\n", q->P);
        return -1;
    }
    /* Emulated nodes of a job on one host share memory; real nodes do only
     * when there is one. */
    topo->emulated = emulated;
    topo->shared = emulated || topo->N == 1;
    *e = (ct_shape){q->P, topo->Q, topo->N};
    snprintf(what, len, "P=%ld nodes=%d ppn=%d%s%s%s", q->P, topo->N, topo->Q,
             topo->uniform ? "" : " (uneven nodes)",
             topo->consecutive ? "" : " (ranks round-robin over the nodes)",
             emulated ? " (nodes emulated by COLTUNE_PPN on one host)" : "");
    return 0;
}

/* ------------------------------------------------------------------ */
/* Decisions                                                           */
/* ------------------------------------------------------------------ */

#define MAX_SKIPS 16

/* One decision and the candidates it passed over (the first MAX_SKIPS, and
 * how many more). */
typedef struct outcome {
    int rc;
    ct_choice choice;
    int used_msg_size;
    int empty; /* nothing to do: the MPI library's (decide.h) */
    int nskips, more_skips;
    char skips[MAX_SKIPS][1024];
} outcome;

static void record_skip(void *arg, const char *source, int line, const ct_spec *spec,
                        const char *why)
{
    outcome *out = arg;
    if (out->nskips == MAX_SKIPS) {
        out->more_skips++;
        return;
    }
    char *s = out->skips[out->nskips++];
    if (line > 0)
        snprintf(s, sizeof out->skips[0], "%s:%d: %s skipped: %s", source, line,
                 spec->alg->name, why);
    else
        snprintf(s, sizeof out->skips[0], "%s: %s skipped: %s", source, spec->alg->name, why);
}

/*
 * The byte offsets of a call of msg_size: for Alltoall(v), P blocks of
 * msg_size back to back (Alltoall's exactly, Alltoallv's at most); for the
 * intercommunicator Allgather(v), msg_size is the larger group's total. The
 * smallest msg_size whose offsets overflow an int (CT_R_INT_OFFSETS).
 */
static long int_offsets_limit(ct_coll coll, const ct_shape *e)
{
    if (coll == CT_COLL_ALLTOALLV || coll == CT_COLL_ALLTOALL)
        return INT_MAX / e->P + 1;
    return (long)INT_MAX + 1;
}

/* The graph a query names (--degree, --offnode, --components), NULL when
 * not given. */
static const ct_graph_facts *query_graph(const check_query *q, ct_graph_facts *graph)
{
    if (q->degree < 0)
        return NULL;
    *graph = (ct_graph_facts){q->degree, q->offnode, q->components};
    return graph;
}

static void decide_at(const ct_config *cfg, const check_query *q, ct_coll coll, int persistent,
                      const ct_shape *e, const ct_topo *topo, long msg_size, outcome *out)
{
    ct_graph_facts graph;
    memset(out, 0, sizeof *out);
    /* Contiguous datatypes; offsets as int_offsets_limit() describes. */
    const ct_call_facts facts = {msg_size,
                                 msg_size >= int_offsets_limit(coll, e) ? CT_R_INT_OFFSETS : 0,
                                 0 /* host memory */};
    const ct_decide_trace trace = {record_skip, out};
    out->rc = ct_decide_offline(cfg, coll, e, topo, &facts, persistent, query_graph(q, &graph),
                                &trace, &out->choice, &out->used_msg_size);
    out->empty = ct_decide_is_empty(coll, msg_size);
}

static int same_outcome(const outcome *a, const outcome *b)
{
    if (a->rc != b->rc || a->empty != b->empty || a->nskips != b->nskips ||
        a->more_skips != b->more_skips)
        return 0;
    if (a->rc == MPI_SUCCESS &&
        (a->choice.alg != b->choice.alg || a->choice.rule_line != b->choice.rule_line ||
         a->choice.forced != b->choice.forced || a->choice.adapt != b->choice.adapt ||
         memcmp(a->choice.params, b->choice.params,
                (size_t)a->choice.alg->nparams * sizeof a->choice.params[0]) != 0))
        return 0;
    for (int i = 0; i < a->nskips; i++)
        if (strcmp(a->skips[i], b->skips[i]) != 0)
            return 0;
    return 1;
}

/* "alg:params [rule line N]" as a job's verbose log writes it. */
static void format_choice(const outcome *out, char *spec, size_t slen, char *where, size_t wlen)
{
    if (out->rc != MPI_SUCCESS) {
        snprintf(spec, slen, "error");
        snprintf(where, wlen, "the call returns an error (COLTUNE_FALLBACK=error)");
        return;
    }
    if (out->choice.adapt && out->choice.adapt_rule != NULL && out->choice.adapt_rule->ncands)
        snprintf(spec, slen, "adapt (learns online among the %d candidates it lists, and pmpi)",
                 out->choice.adapt_rule->ncands);
    else if (out->choice.adapt)
        snprintf(spec, slen, "adapt (learns online among every algorithm)");
    else
        ct_spec_format_resolved(out->choice.alg, out->choice.params, spec, slen);
    if (out->empty)
        snprintf(where, wlen, "empty call, no byte to move");
    else if (out->choice.forced)
        snprintf(where, wlen, "forced");
    else if (out->choice.adapt && out->choice.rule_line == 0)
        snprintf(where, wlen, "COLTUNE_ADAPT");
    else if (out->choice.rule_line > 0)
        snprintf(where, wlen, "rule line %d", out->choice.rule_line);
    else
        snprintf(where, wlen, "default");
}

/* label: the collective's name, with " persistent=1" for its persistent form. */
static void print_outcome(const info_out *o, const char *label, const char *range,
                          const outcome *out)
{
    char spec[160], where[96];
    format_choice(out, spec, sizeof spec, where, sizeof where);
    if (o->parsable) {
        /* the spec last: it may hold ':' */
        info_kv(o, "decision", "%s:%s:%s:%s", label, range, where, spec);
        for (int i = 0; i < out->nskips; i++)
            info_kv(o, "skipped", "%s:%s:%s", label, range, out->skips[i]);
        if (out->more_skips)
            info_kv(o, "skipped", "%s:%s:%d more", label, range, out->more_skips);
        return;
    }
    fprintf(o->f, "  %-22s %s [%s]\n", range, spec, where);
    for (int i = 0; i < out->nskips; i++)
        fprintf(o->f, "  %-22s   %s\n", "", out->skips[i]);
    if (out->more_skips)
        fprintf(o->f, "  %-22s   (and %d more skipped)\n", "", out->more_skips);
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The sizes where coll's decision may change: 0, 1 (after an empty call),
 * every msg_size bound, and where offsets stop fitting an int. */
static int size_points(const ct_ruleset *rs, ct_coll coll, const ct_shape *e, long **points)
{
    int n = 3;
    long *p = malloc((size_t)(2 * rs->count + 3) * sizeof *p);
    if (p == NULL)
        return -1;
    p[0] = 0;
    p[1] = int_offsets_limit(coll, e);
    p[2] = ct_decide_is_empty(coll, 0) ? 1 : 0;
    for (int i = 0; i < rs->count; i++) {
        const ct_rule *r = &rs->rules[i];
        if (r->coll != coll || !(r->key_mask & (1u << CT_KEY_MSG_SIZE)))
            continue;
        p[n++] = r->range[CT_KEY_MSG_SIZE].lo;
        if (r->range[CT_KEY_MSG_SIZE].hi < LONG_MAX)
            p[n++] = r->range[CT_KEY_MSG_SIZE].hi + 1;
    }
    qsort(p, (size_t)n, sizeof *p, cmp_long);
    int u = 0;
    for (int i = 0; i < n; i++)
        if (u == 0 || p[i] != p[u - 1])
            p[u++] = p[i];
    *points = p;
    return u;
}

static void range_text(long lo, long hi, char *buf, size_t len)
{
    char a[32], b[32] = "";
    info_size(lo, a, sizeof a);
    if (hi < LONG_MAX)
        info_size(hi, b, sizeof b);
    if (lo == hi)
        snprintf(buf, len, "msg_size=%s", a);
    else
        snprintf(buf, len, "msg_size=%s-%s", a, b);
}

/* Says that deciding coll here costs every call an allreduce: a reached rule
 * has a msg_size condition, and ranks do not know the message size alike
 * (MPI_Neighbor_alltoall's ranks do on a connected graph: components=1). */
static void print_decision_cost(const info_out *o, const check_query *q, ct_coll coll,
                                int persistent, int used_msg_size)
{
    const int one_size = ct_coll_one_block_size(coll);
    if (!used_msg_size || ct_coll_msg_size_known(coll) ||
        (one_size && q->degree >= 0 && q->components == 1))
        return;
    /* without the graph: it depends on it */
    const char *unless = one_size && q->degree < 0 ? ", except on a connected graph" : "";
    if (o->parsable)
        info_kv(o, "decision:allreduce", "%s%s%s", ct_coll_name(coll),
                persistent ? " persistent=1" : "", *unless ? " components>1" : "");
    else if (persistent)
        fprintf(o->f, "  (its init call costs one allreduce to agree on msg_size%s, its starts "
                      "none)\n", unless);
    else
        fprintf(o->f, "  (each call costs one allreduce to agree on msg_size%s)\n", unless);
}

/* Says which of coll's rules name the graph (degree, offnode, components)
 * when the query does not: a job applies them, the answers above did not. */
static void print_graph_rules(const info_out *o, const check_query *q, const ct_config *cfg,
                              ct_coll coll)
{
    const unsigned keys =
        (1u << CT_KEY_DEGREE) | (1u << CT_KEY_OFFNODE) | (1u << CT_KEY_COMPONENTS);
    line_list l = {.n = 0};
    if (q->degree >= 0)
        return;
    for (int i = 0; i < cfg->rules.count; i++) {
        const ct_rule *r = &cfg->rules.rules[i];
        if (r->coll != coll || !(r->key_mask & keys))
            continue;
        if (o->parsable)
            info_kv(o, "decision:graph", "%s:%d", ct_coll_name(coll), r->line);
        line_list_add(&l, r->line);
    }
    if (l.n > 0 && !o->parsable)
        fprintf(o->f, "  (not applied: the rule%s on line%s %s%s, which name%s the graph; "
                      "--degree D --offnode F apply them)\n",
                l.n > 1 ? "s" : "", l.n > 1 ? "s" : "", l.text, line_list_more(&l),
                l.n > 1 ? "" : "s");
}

/* Decides coll at every size range and prints the merged ranges. Returns 1
 * when some call would return an error, 0, or -1 out of memory. */
static int query_collective(const info_out *o, const check_query *q, const ct_config *cfg,
                            ct_coll coll, int persistent, const ct_shape *e,
                            const ct_topo *topo)
{
    outcome cur, next;
    char range[80], label[64];
    int failing = 0; /* some call would return an error */
    snprintf(label, sizeof label, "%s%s", ct_coll_name(coll), persistent ? " persistent=1" : "");
    if (q->msg_size >= 0) {
        decide_at(cfg, q, coll, persistent, e, topo, q->msg_size, &cur);
        range_text(q->msg_size, q->msg_size, range, sizeof range);
        print_outcome(o, label, cur.used_msg_size ? range : "any msg_size", &cur);
        print_decision_cost(o, q, coll, persistent, cur.used_msg_size);
        print_graph_rules(o, q, cfg, coll);
        return cur.rc != MPI_SUCCESS;
    }
    long *points;
    int n = size_points(&cfg->rules, coll, e, &points);
    if (n < 0)
        return -1;
    decide_at(cfg, q, coll, persistent, e, topo, points[0], &cur);
    long lo = points[0];
    int used = cur.used_msg_size, printed = 0;
    for (int i = 1; i <= n; i++) {
        if (i < n) {
            decide_at(cfg, q, coll, persistent, e, topo, points[i], &next);
            used |= next.used_msg_size;
            if (same_outcome(&cur, &next))
                continue;
        }
        if (i == n && printed == 0 && !used)
            snprintf(range, sizeof range, "any msg_size"); /* one range, no rule asked */
        else
            range_text(lo, i < n ? points[i] - 1 : LONG_MAX, range, sizeof range);
        print_outcome(o, label, range, &cur);
        printed++;
        failing |= cur.rc != MPI_SUCCESS;
        if (i < n) {
            cur = next;
            lo = points[i];
        }
    }
    free(points);
    print_decision_cost(o, q, coll, persistent, used);
    print_graph_rules(o, q, cfg, coll);
    return failing;
}

/* The job's messages about its variables, which shape the answers. */
static void variable_warnings(const info_out *o, const ct_config *cfg)
{
    for (int i = 0; i < cfg->nerrors; i++) {
        if (cfg->error_about[i][0] == '\0')
            continue; /* the rules file of the environment: not the one checked */
        if (o->parsable)
            info_kv(o, "query:warning", "%s", cfg->errors[i]);
        else
            fprintf(stderr, "coltune: error: %s\n", cfg->errors[i]);
    }
    if (!cfg->set.disabled)
        return;
    if (o->parsable)
        info_kv(o, "query:warning", "COLTUNE_DISABLE=1: jobs forward every intercepted call");
    else
        fprintf(o->f, "COLTUNE_DISABLE=1: a job forwards every intercepted call to the MPI "
                      "library; below is what the rules would choose\n");
}

static int has_persistent_rule(const ct_ruleset *rs, ct_coll coll)
{
    for (int i = 0; i < rs->count; i++)
        if (rs->rules[i].coll == coll && (rs->rules[i].key_mask & (1u << CT_KEY_PERSISTENT)))
            return 1;
    return 0;
}

/* Returns 0, 1 when some call would return an error, 2 on a usage error. */
static int run_queries(const info_out *o, const check_query *q, const ct_config *cfg,
                       const ct_topo *topo, const ct_shape *e, const char *what)
{
    variable_warnings(o, cfg);
    if (o->parsable)
        info_kv(o, "query", "%s", what);
    else
        fprintf(o->f, "What a call would run on %s (contiguous datatypes; offsets of P blocks "
                      "of msg_size; msg_size in bytes: coltune-info(1))\n", what);
    int rc = 0;
    for (int c = 0; c < CT_COLL_COUNT && rc >= 0; c++) {
        if (q->coll >= 0 && q->coll != c)
            continue;
        if (!o->parsable)
            fprintf(o->f, "%s%s\n", ct_coll_name((ct_coll)c),
                    cfg->forced_set[c] ? " (forced by the environment)" : "");
        int r = query_collective(o, q, cfg, (ct_coll)c, 0, e, topo);
        rc = r < 0 ? r : rc | r;
        /* The persistent form, decided once at init: where a rule tells it
         * apart (condition persistent). */
        if (rc >= 0 && has_persistent_rule(&cfg->rules, (ct_coll)c)) {
            if (!o->parsable)
                fprintf(o->f, "%s, persistent (its _init call)\n", ct_coll_name((ct_coll)c));
            r = query_collective(o, q, cfg, (ct_coll)c, 1, e, topo);
            rc = r < 0 ? r : rc | r;
        }
    }
    return rc < 0 ? 1 : rc;
}

int info_check(const info_out *o, const check_query *q, const ct_config *env)
{
    ct_config cfg = *env; /* the job's variables, with q->file's rules */
    ct_topo topo = {0};
    ct_shape e;
    char what[200];
    /* The options first: a usage error prints nothing else. */
    if (q->P > 0 && query_topology(q, env, &topo, &e, what, sizeof what) != 0)
        return 2;
    int nerrors = ct_rules_load_report(q->file, &cfg.rules, print_error, (void *)o);
    int rc = 0;
    if (nerrors > 0) {
        if (o->parsable)
            info_kv(o, "check:status", "error:%d", nerrors);
        else
            fprintf(o->f, "%s: %d error%s: a job would ignore this file (every call uses "
                          "pmpi)\n", q->file, nerrors, nerrors == 1 ? "" : "s");
        rc = 1;
    } else {
        if (o->parsable)
            info_kv(o, "check:status", "ok");
        print_counts(o, q, &cfg.rules);
        print_allreduce_rules(o, q, &cfg.rules);
        if (q->P > 0)
            rc = run_queries(o, q, &cfg, &topo, &e, what);
    }
    ct_rules_free(&cfg.rules);
    ct_topo_free(&topo);
    return rc;
}
