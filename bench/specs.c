/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * specs.c - expands --algs into a list of fully resolved algorithm specs.
 *
 * The list is the rules-file spec syntax with sweeps: "pmpi,pairwise,
 * scattered:block_count=1,2,4..P,multipair_waitany:stride=2..P". Commas
 * separate algorithms, parameters and values alike; an item is
 *   - a new algorithm when it holds ':' or is a registered name (or "all"),
 *   - a new parameter when it holds '=',
 *   - else one more value (or sweep) of the parameter before it.
 * Every value is evaluated here for the communicator (P, Q, N), checked
 * against the range coltune_algorithm_param() reports, and the spec handed
 * to coltune carries plain numbers, so the label in the table is exactly
 * what ran.
 */
#include "bench.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 8
#define MAX_VALUES 100000 /* per parameter, after a...b expansion */

typedef struct vlist {
    long *v;
    int n, cap;
} vlist;

/* The algorithm being read, with one value list per given parameter. */
typedef struct pending {
    int index; /* registry index, -1 when none */
    const char *name;
    int nparams;
    const char *pname[MAX_PARAMS];
    long lo[MAX_PARAMS], hi[MAX_PARAMS], def[MAX_PARAMS];
    int given[MAX_PARAMS];
    vlist values[MAX_PARAMS];
    int cur; /* parameter that bare values extend, -1 when none */
} pending;

static int fail(char *err, size_t len, const char *fmt, ...) BENCH_PRINTF(3, 4);
static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* ------------------------------------------------------------------ */
/* Registry look-ups                                                   */
/* ------------------------------------------------------------------ */

static int find_alg(const char *coll, const char *name, size_t len)
{
    for (int i = 0; i < coltune_algorithm_count(); i++) {
        const char *c, *n;
        int np;
        if (coltune_algorithm_info(i, &c, &n, &np) == 0 && strcmp(c, coll) == 0 &&
            strlen(n) == len && strncmp(n, name, len) == 0)
            return i;
    }
    return -1;
}

int bench_algs_registered(const char *coll)
{
    int count = 0;
    for (int i = 0; i < coltune_algorithm_count(); i++) {
        const char *c, *n;
        int np;
        if (coltune_algorithm_info(i, &c, &n, &np) == 0 && strcmp(c, coll) == 0)
            count++;
    }
    return count;
}

static void known_algs(const char *coll, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < coltune_algorithm_count() && used < len; i++) {
        const char *c, *n;
        int np;
        if (coltune_algorithm_info(i, &c, &n, &np) == 0 && strcmp(c, coll) == 0)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", n);
    }
}

/* ------------------------------------------------------------------ */
/* Values                                                              */
/* ------------------------------------------------------------------ */

/* round(sqrt(x)), as coltune evaluates "sqrt" (algorithms.c). */
static long isqrt_round(long x)
{
    long r = 0;
    if (x <= 0)
        return 0;
    while ((r + 1) * (r + 1) <= x)
        r++;
    return 4 * x >= (2 * r + 1) * (2 * r + 1) ? r + 1 : r;
}


/* An integer, or P, Q, N, sqrt, sqrtQ, (N-1)*Q with an optional +k / -k. */
static int eval_expr(const char *t, size_t len, const bench_env *e, long *out)
{
    const struct {
        const char *word;
        long value;
    } words[] = {
        {"(N-1)*Q", (long)(e->N - 1) * e->Q}, {"sqrtQ", isqrt_round(e->Q)},
        {"sqrt", isqrt_round(e->P)},          {"P", e->P},
        {"Q", e->Q},                          {"N", e->N},
    };
    long k;
    if (bench_parse_size(t, len, INT_MAX, out) == 0)
        return 0;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t wl = strlen(words[i].word);
        if (wl > len || memcmp(t, words[i].word, wl) != 0)
            continue;
        if (wl == len) {
            *out = words[i].value;
            return 0;
        }
        if ((t[wl] == '+' || t[wl] == '-') &&
            bench_parse_size(t + wl + 1, len - wl - 1, INT_MAX, &k) == 0) {
            *out = words[i].value + (t[wl] == '-' ? -k : k);
            return 0;
        }
    }
    return -1;
}

static int vlist_push(vlist *l, long v)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == v)
            return 0;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        long *nv = realloc(l->v, (size_t)cap * sizeof *nv);
        if (nv == NULL)
            return -1;
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = v;
    return 0;
}

/* Position of the first run of exactly `dots` dots in t[0..len), or -1. */
static long find_dots(const char *t, size_t len, int dots)
{
    for (size_t i = 0; i < len; i++) {
        size_t run = 0;
        while (i + run < len && t[i + run] == '.')
            run++;
        if (run == (size_t)dots)
            return (long)i;
        i += run;
    }
    return -1;
}

/* The value after v in the sweep a..b: 2v while below b, then b, then past b. */
static long next_doubling(long v, long b) { return (v < b && 2 * v > b) ? b : 2 * v; }

/* Appends the values of one element "v", "a..b" or "a...b" to l. */
static int parse_element(const char *t, size_t len, const bench_env *e, const char *key,
                         vlist *l, char *err, size_t errlen)
{
    long a, b, at;
    int dots = find_dots(t, len, 3) >= 0 ? 3 : find_dots(t, len, 2) >= 0 ? 2 : 0;
    if (dots == 0) {
        if (eval_expr(t, len, e, &a) != 0)
            goto bad;
        return vlist_push(l, a) == 0 ? 0 : fail(err, errlen, "out of memory");
    }
    at = find_dots(t, len, dots);
    if (eval_expr(t, (size_t)at, e, &a) != 0 ||
        eval_expr(t + at + dots, len - (size_t)at - (size_t)dots, e, &b) != 0)
        goto bad;
    if (dots == 2 && a < 1)
        return fail(err, errlen, "--algs: sweep '%.*s' for '%s' must start at 1 or more "
                    "(a..b doubles a)", (int)len, t, key);
    if (dots == 3 && b - a >= MAX_VALUES)
        return fail(err, errlen, "--algs: sweep '%.*s' for '%s' has more than %d values",
                    (int)len, t, key, MAX_VALUES);
    for (long v = a; v <= b; v = dots == 3 ? v + 1 : next_doubling(v, b))
        if (vlist_push(l, v) != 0)
            return fail(err, errlen, "out of memory");
    return 0;
bad:
    return fail(err, errlen, "--algs: bad value '%.*s' for parameter '%s' (expected an "
                "integer, P, Q, N, sqrt, sqrtQ or (N-1)*Q with optional +k/-k, a..b or a...b)",
                (int)len, t, key);
}

/* ------------------------------------------------------------------ */
/* The algorithm being read                                            */
/* ------------------------------------------------------------------ */

static void pending_clear(pending *p)
{
    for (int k = 0; k < MAX_PARAMS; k++)
        free(p->values[k].v);
    memset(p, 0, sizeof *p);
    p->index = -1;
    p->cur = -1;
}

static int pending_start(pending *p, int index, const bench_env *e, char *err, size_t len)
{
    const char *coll;
    pending_clear(p);
    p->index = index;
    coltune_algorithm_info(index, &coll, &p->name, &p->nparams);
    if (p->nparams > MAX_PARAMS)
        return fail(err, len, "--algs: algorithm '%s' has %d parameters; coltune-bench "
                    "handles %d", p->name, p->nparams, MAX_PARAMS);
    for (int k = 0; k < p->nparams; k++)
        coltune_algorithm_param(index, k, e->P, e->Q, e->N, &p->pname[k], &p->lo[k],
                                &p->hi[k], &p->def[k]);
    return 0;
}

/* "key=VALUES" (the first element of VALUES; more may follow as items). */
static int pending_key(pending *p, const char *item, size_t len, const bench_env *e, char *err,
                       size_t errlen)
{
    const char *eq = memchr(item, '=', len);
    size_t klen = (size_t)(eq - item);
    char names[256] = "";
    for (int k = 0; k < p->nparams; k++) {
        if (strlen(p->pname[k]) != klen || strncmp(p->pname[k], item, klen) != 0)
            continue;
        if (p->given[k])
            return fail(err, errlen, "--algs: parameter '%s' of '%s' given twice",
                        p->pname[k], p->name);
        p->given[k] = 1;
        p->cur = k;
        return parse_element(eq + 1, len - klen - 1, e, p->pname[k], &p->values[k], err,
                             errlen);
    }
    for (int k = 0; k < p->nparams; k++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? ", " : "",
                 p->pname[k]);
    if (p->nparams == 0)
        return fail(err, errlen, "--algs: unknown parameter '%.*s' for algorithm '%s' "
                    "(takes no parameters)", (int)klen, item, p->name);
    return fail(err, errlen, "--algs: unknown parameter '%.*s' for algorithm '%s' "
                "(parameters: %s)", (int)klen, item, p->name, names);
}

/* Drops values outside the range of parameter k, with a note. 0 when any remain. */
static int pending_filter(pending *p, int k, const bench_env *e)
{
    vlist *l = &p->values[k];
    int kept = 0;
    for (int i = 0; i < l->n; i++) {
        if (l->v[i] >= p->lo[k] && l->v[i] <= p->hi[k])
            l->v[kept++] = l->v[i];
        else
            bench_note(e->rank, "%s:%s=%ld dropped: out of range %ld..%ld at P=%d Q=%d N=%d",
                       p->name, p->pname[k], l->v[i], p->lo[k], p->hi[k], e->P, e->Q, e->N);
    }
    l->n = kept;
    if (kept == 0)
        bench_note(e->rank, "%s: no value of %s left; algorithm dropped", p->name,
                   p->pname[k]);
    return kept > 0 ? 0 : -1;
}

static int alglist_add(bench_alglist *l, int index, const char *name, const char *params)
{
    bench_alg a = {.index = index, .name = name};
    snprintf(a.params, sizeof a.params, "%s", params);
    snprintf(a.spec, sizeof a.spec, "%s%s%s", name, *params ? ":" : "", params);
    memcpy(a.label, a.spec, sizeof a.label);
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->v[i].spec, a.spec) == 0)
            return 0;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        bench_alg *nv = realloc(l->v, (size_t)cap * sizeof *nv);
        if (nv == NULL)
            return -1;
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = a;
    return 0;
}

/* Adds every combination of the pending algorithm's values to out. */
static int pending_flush(pending *p, const bench_env *e, bench_alglist *out)
{
    int pos[MAX_PARAMS] = {0};
    if (p->index < 0)
        return 0;
    for (int k = 0; k < p->nparams; k++) {
        if (p->lo[k] > p->hi[k]) {
            bench_note(e->rank, "%s cannot run at P=%d Q=%d N=%d (%s range %ld..%ld is "
                       "empty); dropped", p->name, e->P, e->Q, e->N, p->pname[k], p->lo[k],
                       p->hi[k]);
            return 0;
        }
        if (!p->given[k])
            p->values[k].n = 0;
        if (p->given[k] && pending_filter(p, k, e) != 0)
            return 0;
    }
    for (;;) {
        char params[BENCH_SPEC_LEN] = "";
        size_t used = 0;
        for (int k = 0; k < p->nparams; k++) {
            long v = p->given[k] ? p->values[k].v[pos[k]] : p->def[k];
            used += (size_t)snprintf(params + used, sizeof params - used, "%s%s=%ld",
                                     k ? "," : "", p->pname[k], v);
        }
        if (alglist_add(out, p->index, p->name, params) != 0)
            return -1;
        int k = p->nparams - 1; /* odometer over the given parameters' values */
        while (k >= 0 && (!p->given[k] || ++pos[k] == p->values[k].n)) {
            pos[k] = 0;
            k--;
        }
        if (k < 0)
            return 0;
    }
}

/* ------------------------------------------------------------------ */
/* The list                                                            */
/* ------------------------------------------------------------------ */

static int add_all(const char *coll, const bench_env *e, bench_alglist *out, pending *p,
                   char *err, size_t len)
{
    for (int i = 0; i < coltune_algorithm_count(); i++) {
        const char *c, *n;
        int np;
        if (coltune_algorithm_info(i, &c, &n, &np) != 0 || strcmp(c, coll) != 0)
            continue;
        if (pending_start(p, i, e, err, len) != 0 || pending_flush(p, e, out) != 0)
            return -1;
    }
    pending_clear(p);
    return 0;
}

/* Handles one comma-separated item of --algs. */
static int parse_item(const char *item, size_t len, const char *coll, const bench_env *e,
                      pending *p, bench_alglist *out, char *err, size_t errlen)
{
    const char *colon = memchr(item, ':', len);
    size_t nlen = colon ? (size_t)(colon - item) : len;
    int index = find_alg(coll, item, nlen);
    char known[512];

    if (len == 0)
        return fail(err, errlen, "--algs: empty item");
    if (colon == NULL && len == 5 && strncmp(item, "rules", 5) == 0) {
        /* not an algorithm: the call decided by coltune's rules (coltune-tune
         * validates the rules file it wrote this way) */
        if (pending_flush(p, e, out) != 0 || alglist_add(out, -1, "rules", "") != 0)
            return fail(err, errlen, "out of memory");
        return 0;
    }
    if (colon == NULL && len == 3 && strncmp(item, "all", 3) == 0) {
        if (pending_flush(p, e, out) != 0)
            return fail(err, errlen, "out of memory");
        return add_all(coll, e, out, p, err, errlen);
    }
    if (colon != NULL || index >= 0) {
        if (index < 0) {
            known_algs(coll, known, sizeof known);
            return fail(err, errlen, "--algs: unknown algorithm '%.*s' for %s (known: %s)",
                        (int)nlen, item, coll, known);
        }
        if (pending_flush(p, e, out) != 0)
            return fail(err, errlen, "out of memory");
        if (pending_start(p, index, e, err, errlen) != 0)
            return -1;
        if (colon == NULL)
            return 0;
        item = colon + 1;
        len -= nlen + 1;
        if (len == 0 || memchr(item, '=', len) == NULL)
            return fail(err, errlen, "--algs: expected key=value after '%s:'", p->name);
        return pending_key(p, item, len, e, err, errlen);
    }
    if (memchr(item, '=', len) != NULL)
        return pending_key(p, item, len, e, err, errlen);
    if (p->cur >= 0)
        return parse_element(item, len, e, p->pname[p->cur], &p->values[p->cur], err, errlen);
    known_algs(coll, known, sizeof known);
    return fail(err, errlen, "--algs: unknown algorithm '%.*s' for %s (known: %s)", (int)len,
                item, coll, known);
}

/* Puts the baseline (pmpi, or the collective's own) first when the list does
 * not have it. */
static int ensure_baseline(const char *coll, const char *baseline, bench_alglist *out,
                           char *err, size_t len)
{
    int index = find_alg(coll, baseline, strlen(baseline));
    for (int i = 0; i < out->n; i++)
        if (strcmp(out->v[i].name, baseline) == 0 && out->v[i].params[0] == '\0')
            return 0;
    if (index < 0)
        return fail(err, len, "coltune has no %s algorithm for %s", baseline, coll);
    if (alglist_add(out, index, baseline, "") != 0)
        return fail(err, len, "out of memory");
    bench_alg pm = out->v[out->n - 1];
    memmove(out->v + 1, out->v, (size_t)(out->n - 1) * sizeof *out->v);
    out->v[0] = pm;
    return 0;
}

/* A copy of the baseline at the list's middle (the A/A pair). */
static int add_aa_copy(const char *baseline, bench_alglist *out, char *err, size_t len)
{
    int base = 0, at = (out->n + 1) / 2;
    while (strcmp(out->v[base].name, baseline) != 0 || out->v[base].params[0] != '\0')
        base++; /* ensure_baseline put it in the list */
    bench_alg copy = out->v[base];
    if (out->n == out->cap) {
        int cap = out->cap ? 2 * out->cap : 16;
        bench_alg *nv = realloc(out->v, (size_t)cap * sizeof *nv);
        if (nv == NULL)
            return fail(err, len, "out of memory");
        out->v = nv;
        out->cap = cap;
    }
    snprintf(copy.label, sizeof copy.label, "%.*s#2", (int)sizeof copy.label - 3, copy.spec);
    copy.aa = 1;
    memmove(out->v + at + 1, out->v + at, (size_t)(out->n - at) * sizeof *out->v);
    out->v[at] = copy;
    out->n++;
    return 0;
}

int bench_algs_expand(const char *text, const char *coll, const char *baseline, int aa,
                      const bench_env *env, bench_alglist *out, char *err, size_t errlen)
{
    pending p;
    int rc = 0;
    memset(out, 0, sizeof *out);
    memset(&p, 0, sizeof p);
    pending_clear(&p);
    for (const char *item = text;;) {
        const char *comma = strchr(item, ',');
        size_t len = comma ? (size_t)(comma - item) : strlen(item);
        if ((rc = parse_item(item, len, coll, env, &p, out, err, errlen)) != 0)
            break;
        if (comma == NULL)
            break;
        item = comma + 1;
    }
    if (rc == 0 && pending_flush(&p, env, out) != 0)
        rc = fail(err, errlen, "out of memory");
    pending_clear(&p);
    if (rc == 0)
        rc = ensure_baseline(coll, baseline, out, err, errlen);
    if (rc == 0 && aa)
        rc = add_aa_copy(baseline, out, err, errlen);
    if (rc != 0)
        bench_alglist_free(out);
    return rc;
}

void bench_alglist_free(bench_alglist *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

void bench_algs_list(const char *coll, const bench_env *e)
{
    if (e->rank != 0)
        return;
    printf("%s algorithms at P=%d Q=%d N=%d:\n", coll, e->P, e->Q, e->N);
    for (int i = 0; i < coltune_algorithm_count(); i++) {
        const char *c, *n, *pn;
        int np;
        long lo, hi, def;
        if (coltune_algorithm_info(i, &c, &n, &np) != 0 || strcmp(c, coll) != 0)
            continue;
        printf("  %s", n);
        for (int k = 0; k < np; k++)
            if (coltune_algorithm_param(i, k, e->P, e->Q, e->N, &pn, &lo, &hi, &def) == 0)
                printf("%*s%s=%ld..%ld (default %ld)", k ? 1 : 24 - (int)strlen(n), "", pn,
                       lo, hi, def);
        printf("\n");
    }
}
