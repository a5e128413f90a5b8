/*
 * check.c - coltune-info --check FILE [--np P ...]: a rules file checked by
 * the job's own parser, and what a job's call would run, decided by the
 * job's own decision function (ct_decide_offline) without MPI.
 *
 * Without --msg-size, every message size range where the decision can change
 * (the bounds of the msg_size conditions of the collective's rules) is
 * decided once, and ranges with the same outcome are merged.
 */
#include "info/info.h"
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
    int count[CT_COLL_COUNT] = {0};
    for (int i = 0; i < rs->count; i++)
        count[rs->rules[i].coll]++;
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

/* ------------------------------------------------------------------ */
/* The communicator of a query                                         */
/* ------------------------------------------------------------------ */

/*
 * The topology a job of q->P ranks would see: N nodes of at most Q ranks,
 * placed in blocks (or round-robin with --cyclic); without --nodes and
 * --ppn, COLTUNE_PPN's emulated nodes on one host, else one node. Writes a
 * description to what. Returns 0, or -1 after a usage message.
 */
static int query_topology(const check_query *q, const ct_config *env, ct_topo *topo, ct_env *e,
                          char *what, size_t len)
{
    const long P = q->P;
    long Q;
    int emulated = 0, cyclic = q->cyclic;
    if (q->nodes || q->ppn) {
        Q = q->ppn ? q->ppn : (P + q->nodes - 1) / q->nodes;
        if (Q > P || (q->nodes && (P + Q - 1) / Q != q->nodes)) {
            fprintf(stderr, "coltune-info: cannot place %ld ranks on %ld nodes of at most %ld "
                            "ranks\n", P, q->nodes ? q->nodes : (P + Q - 1) / Q, Q);
            return -1;
        }
    } else if (env->ppn > 0) {
        Q = env->ppn < P ? env->ppn : P;
        cyclic = env->ppn_cyclic;
        emulated = 1;
    } else {
        Q = P;
    }
    if (P > INT_MAX || ct_topo_emulate((int)P, (int)Q, cyclic, topo) != MPI_SUCCESS) {
        fprintf(stderr, "coltune-info: cannot describe %ld ranks\n", P);
        return -1;
    }
    /* Emulated nodes of a job on one host share memory; real nodes do only
     * when there is one. */
    topo->emulated = emulated;
    topo->shared = emulated || topo->N == 1;
    *e = (ct_env){P, topo->Q, topo->N};
    snprintf(what, len, "P=%ld nodes=%d ppn=%d%s%s%s", P, topo->N, topo->Q,
             topo->uniform ? "" : " (uneven nodes)",
             topo->consecutive ? "" : " (ranks round-robin over the nodes)",
             emulated ? " (nodes emulated by COLTUNE_PPN on one host)" : "");
    return 0;
}

/* ------------------------------------------------------------------ */
/* Decisions                                                           */
/* ------------------------------------------------------------------ */

#define MAX_SKIPS 16

/* One decision and the candidates it passed over. */
typedef struct outcome {
    int rc;
    ct_choice choice;
    int used_msg_size;
    int nskips;
    char skips[MAX_SKIPS][320];
} outcome;

static void record_skip(void *arg, const char *source, int line, const ct_spec *spec,
                        const char *why)
{
    outcome *out = arg;
    if (out->nskips == MAX_SKIPS)
        return;
    char *s = out->skips[out->nskips++];
    if (line > 0)
        snprintf(s, sizeof out->skips[0], "%s:%d: %s skipped: %s", source, line,
                 spec->alg->name, why);
    else
        snprintf(s, sizeof out->skips[0], "%s: %s skipped: %s", source, spec->alg->name, why);
}

static void decide_at(const ct_config *cfg, ct_coll coll, const ct_env *e, const ct_topo *topo,
                      long msg_size, outcome *out)
{
    memset(out, 0, sizeof *out);
    /* A call with contiguous datatypes and offsets that fit in an int. */
    const ct_call_facts facts = {msg_size, 0};
    const ct_decide_trace trace = {record_skip, out};
    out->rc = ct_decide_offline(cfg, coll, e, topo, &facts, &trace, &out->choice,
                                &out->used_msg_size);
}

static int same_outcome(const outcome *a, const outcome *b)
{
    if (a->rc != b->rc || a->nskips != b->nskips)
        return 0;
    if (a->rc == MPI_SUCCESS &&
        (a->choice.alg != b->choice.alg || a->choice.rule_line != b->choice.rule_line ||
         a->choice.forced != b->choice.forced ||
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
    ct_spec_format_resolved(out->choice.alg, out->choice.params, spec, slen);
    if (out->choice.forced)
        snprintf(where, wlen, "forced");
    else if (out->choice.rule_line > 0)
        snprintf(where, wlen, "rule line %d", out->choice.rule_line);
    else
        snprintf(where, wlen, "default");
}

static void print_outcome(const info_out *o, ct_coll coll, const char *range,
                          const outcome *out)
{
    char spec[160], where[96];
    format_choice(out, spec, sizeof spec, where, sizeof where);
    if (o->parsable) {
        /* the spec last: it may hold ':' */
        info_kv(o, "decision", "%s:%s:%s:%s", ct_coll_name(coll), range, where, spec);
        for (int i = 0; i < out->nskips; i++)
            info_kv(o, "skipped", "%s:%s:%s", ct_coll_name(coll), range, out->skips[i]);
        return;
    }
    fprintf(o->f, "  %-22s %s [%s]\n", range, spec, where);
    for (int i = 0; i < out->nskips; i++)
        fprintf(o->f, "  %-22s   %s\n", "", out->skips[i]);
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The sizes where coll's decision may change: 0 and every msg_size bound. */
static int size_points(const ct_ruleset *rs, ct_coll coll, long **points)
{
    int n = 1;
    long *p = malloc((size_t)(2 * rs->count + 1) * sizeof *p);
    if (p == NULL)
        return -1;
    p[0] = 0;
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

/* Decides coll at every size range and prints the merged ranges. */
static int query_collective(const info_out *o, const check_query *q, const ct_config *cfg,
                            ct_coll coll, const ct_env *e, const ct_topo *topo)
{
    outcome cur, next;
    char range[80];
    if (q->msg_size >= 0) {
        decide_at(cfg, coll, e, topo, q->msg_size, &cur);
        range_text(q->msg_size, q->msg_size, range, sizeof range);
        print_outcome(o, coll, cur.used_msg_size ? range : "any msg_size", &cur);
        return 0;
    }
    long *points;
    int n = size_points(&cfg->rules, coll, &points);
    if (n < 0)
        return -1;
    decide_at(cfg, coll, e, topo, points[0], &cur);
    long lo = points[0];
    for (int i = 1; i <= n && cur.used_msg_size; i++) {
        if (i < n) {
            decide_at(cfg, coll, e, topo, points[i], &next);
            if (same_outcome(&cur, &next))
                continue;
        }
        range_text(lo, i < n ? points[i] - 1 : LONG_MAX, range, sizeof range);
        print_outcome(o, coll, range, &cur);
        if (i < n) {
            cur = next;
            lo = points[i];
        }
    }
    if (!cur.used_msg_size)
        print_outcome(o, coll, "any msg_size", &cur);
    free(points);
    return 0;
}

static int run_queries(const info_out *o, const check_query *q, const ct_config *cfg)
{
    ct_topo topo;
    ct_env e;
    char what[160];
    if (query_topology(q, cfg, &topo, &e, what, sizeof what) != 0)
        return 2;
    if (o->parsable)
        info_kv(o, "query", "%s", what);
    else
        fprintf(o->f, "What a call would run on %s (contiguous datatypes, offsets within "
                      "int; msg_size in bytes: coltune(7))\n", what);
    int rc = 0;
    for (int c = 0; c < CT_COLL_COUNT && rc == 0; c++) {
        if (q->coll >= 0 && q->coll != c)
            continue;
        if (!o->parsable)
            fprintf(o->f, "%s%s\n", ct_coll_name((ct_coll)c),
                    cfg->forced_set[c] ? " (forced by the environment)" : "");
        rc = query_collective(o, q, cfg, (ct_coll)c, &e, &topo);
    }
    ct_topo_free(&topo);
    return rc == 0 ? 0 : 1;
}

int info_check(const info_out *o, const check_query *q, const ct_config *env)
{
    ct_config cfg = *env; /* the job's variables, with q->file's rules */
    int nerrors = ct_rules_load_report(q->file, &cfg.rules, print_error, (void *)o);
    if (nerrors > 0) {
        if (o->parsable)
            info_kv(o, "check:status", "error:%d", nerrors);
        else
            fprintf(o->f, "%s: %d error%s: a job would ignore this file (every call uses "
                          "pmpi)\n", q->file, nerrors, nerrors == 1 ? "" : "s");
        return 1;
    }
    if (o->parsable)
        info_kv(o, "check:status", "ok");
    print_counts(o, q, &cfg.rules);
    int rc = q->P > 0 ? run_queries(o, q, &cfg) : 0;
    ct_rules_free(&cfg.rules);
    return rc;
}
