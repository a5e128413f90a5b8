/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spec.c - parsing and resolving algorithm specs "name[:key=value,...]".
 *
 * A spec is parsed once (rules file, environment, direct API) into a
 * registry entry plus one expression per parameter, and resolved against
 * the communicator (P, Q, N) at call time. Parse errors carry the 0-based
 * column of the offending token so that callers (rules.c) can point at it.
 */
#include "select/spec.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* User text echoed in a message is cut to this many bytes, so that one long
 * token cannot push the useful part of the message out of the buffer. */
#define ECHO_MAX 48

/* Offsets of P/Q/N expressions are limited so that evaluation (P + k) can
 * never overflow a long; no sensible parameter is billions away from P. */
#define OFFSET_MAX ((long)INT_MAX)

/* ------------------------------------------------------------------ */
/* Numbers and expressions                                             */
/* ------------------------------------------------------------------ */

/* Multiplier of a k/m/g suffix character, 0 when c is not a suffix. */
static long suffix_multiplier(char c)
{
    switch (c) {
    case 'k': case 'K': return 1024L;
    case 'm': case 'M': return 1024L * 1024L;
    case 'g': case 'G': return 1024L * 1024L * 1024L;
    default: return 0;
    }
}

int ct_size_parse(const char *text, size_t len, long *out)
{
    long mult = 1;
    if (len > 0 && suffix_multiplier(text[len - 1]) != 0)
        mult = suffix_multiplier(text[--len]);
    if (len == 0)
        return -1; /* empty, or a suffix alone */

    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9')
            return -1;
        int d = text[i] - '0';
        if (v > (LONG_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (v > LONG_MAX / mult)
        return -1;
    *out = v * mult;
    return 0;
}

/* The words an expression may start with, longest spelling first where one
 * is a prefix of another ("sqrtQ" before "sqrt"). */
static const struct {
    const char *word;
    ct_term term;
} expr_words[] = {
    {"(N-1)*Q", CT_TERM_NM1_Q}, {"sqrtQ", CT_TERM_SQRT_Q}, {"sqrt", CT_TERM_SQRT_P},
    {"P", CT_TERM_P},           {"Q", CT_TERM_Q},          {"N", CT_TERM_N},
};

/* Parses "" (offset 0) or "+k" / "-k" after a word. */
static int parse_offset(const char *text, size_t len, long *out)
{
    if (len == 0) {
        *out = 0;
        return 0;
    }
    if (text[0] != '+' && text[0] != '-')
        return -1;
    long k;
    if (ct_size_parse(text + 1, len - 1, &k) != 0 || k > OFFSET_MAX)
        return -1;
    *out = text[0] == '-' ? -k : k;
    return 0;
}

int ct_expr_parse(const char *text, size_t len, ct_expr *out)
{
    long v;
    if (ct_size_parse(text, len, &v) == 0) {
        out->term = CT_TERM_CONST;
        out->offset = v;
        return 0;
    }
    for (size_t i = 0; i < sizeof expr_words / sizeof expr_words[0]; i++) {
        size_t wl = strlen(expr_words[i].word);
        if (wl > len || memcmp(text, expr_words[i].word, wl) != 0)
            continue;
        if (parse_offset(text + wl, len - wl, &v) == 0) {
            out->term = expr_words[i].term;
            out->offset = v;
            return 0;
        }
    }
    return -1;
}

/* ------------------------------------------------------------------ */
/* Error messages                                                      */
/* ------------------------------------------------------------------ */

static void set_error(ct_parse_error *err, size_t column, const char *fmt, ...)
    CT_PRINTF(3, 4);

static void set_error(ct_parse_error *err, size_t column, const char *fmt, ...)
{
    if (err == NULL)
        return;
    err->column = (int)column;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

/* Copies user text into buf for quoting, cut to ECHO_MAX bytes with "...". */
static const char *echo(const char *text, size_t len, char *buf, size_t buflen)
{
    if (len > ECHO_MAX)
        snprintf(buf, buflen, "%.*s...", ECHO_MAX, text);
    else
        snprintf(buf, buflen, "%.*s", (int)len, text);
    return buf;
}

/* Appends s to buf (capacity cap, NUL-terminated), separated by ", ". */
static void append_name(char *buf, size_t cap, const char *s)
{
    size_t used = strlen(buf);
    if (used < cap)
        snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", s);
}

/* Cuts a ", "-separated list to at most room characters at a name boundary,
 * ending it with "..." so a long registry never leaves half a name. */
static void fit_list(char *list, size_t room)
{
    if (strlen(list) <= room)
        return;
    size_t cut = room >= 5 ? room - 5 : 0; /* room for ", ..." */
    while (cut > 0 && list[cut] != ',')
        cut--;
    snprintf(list + cut, 6, "%s", cut ? ", ..." : "...");
}

/* Sets "<head>(<label>: <list>)" as the message, the list cut to fit. */
static void set_list_error(ct_parse_error *err, size_t column, const char *head,
                           const char *label, char *list)
{
    if (err == NULL)
        return;
    size_t fixed = strlen(head) + strlen(label) + 4; /* "(", ": ", ")" */
    size_t cap = sizeof err->message - 1;
    fit_list(list, fixed < cap ? cap - fixed : 0);
    set_error(err, column, "%s(%s: %s)", head, label, list);
}

static void error_unknown_algorithm(ct_parse_error *err, const char *name, size_t len,
                                    ct_coll coll)
{
    char known[1024] = "", head[160], quoted[ECHO_MAX + 4];
    for (int i = 0; i < ct_algorithm_count(); i++) {
        const ct_algorithm *a = ct_algorithm_at(i);
        if (a->coll == coll)
            append_name(known, sizeof known, a->name);
    }
    snprintf(head, sizeof head, "unknown algorithm '%s' for %s ",
             echo(name, len, quoted, sizeof quoted), ct_coll_name(coll));
    set_list_error(err, 0, head, "known", known);
}

static void error_unknown_param(ct_parse_error *err, size_t column, const char *key,
                                size_t len, const ct_algorithm *alg)
{
    char known[1024] = "", head[160], quoted[ECHO_MAX + 4];
    for (int i = 0; i < alg->nparams; i++)
        append_name(known, sizeof known, alg->params[i].name);
    snprintf(head, sizeof head, "unknown parameter '%s' for algorithm '%s' ",
             echo(key, len, quoted, sizeof quoted), alg->name);
    if (alg->nparams == 0)
        set_error(err, column, "%s(takes no parameters)", head);
    else
        set_list_error(err, column, head, "parameters", known);
}

/* ------------------------------------------------------------------ */
/* Parsing a spec                                                      */
/* ------------------------------------------------------------------ */

static int find_param(const ct_algorithm *alg, const char *key, size_t len)
{
    for (int i = 0; i < alg->nparams; i++)
        if (strlen(alg->params[i].name) == len && memcmp(alg->params[i].name, key, len) == 0)
            return i;
    return -1;
}

/* Parse-time range check: only a constant value against constant bounds can
 * be judged without a communicator; the rest waits for ct_spec_resolve(). */
static int check_const_range(const ct_algorithm *alg, int i, ct_expr v, size_t column,
                             ct_parse_error *err)
{
    const ct_param_desc *d = &alg->params[i];
    if (v.term != CT_TERM_CONST)
        return 0;
    int below = d->min.term == CT_TERM_CONST && v.offset < d->min.offset;
    int above = d->max.term == CT_TERM_CONST && v.offset > d->max.offset && !d->clamp;
    if (!below && !above)
        return 0;
    char lo[32], hi[32];
    ct_expr_format(d->min, lo, sizeof lo);
    ct_expr_format(d->max, hi, sizeof hi);
    set_error(err, column, "value %ld for parameter '%s' of '%s' is out of range (%s..%s)",
              v.offset, d->name, alg->name, lo, hi);
    return -1;
}

/* Parses one "key=value" item at text[start..end) into spec. */
static int parse_param(const char *text, size_t start, size_t end, ct_spec *spec,
                       ct_parse_error *err)
{
    const char *item = text + start;
    size_t len = end - start;
    char quoted[ECHO_MAX + 4];

    if (len == 0) {
        set_error(err, start, "empty parameter");
        return -1;
    }
    const char *eq = memchr(item, '=', len);
    if (eq == NULL) {
        set_error(err, start, "missing '=' in parameter '%s'", echo(item, len, quoted, sizeof quoted));
        return -1;
    }
    size_t klen = (size_t)(eq - item);
    int i = find_param(spec->alg, item, klen);
    if (i < 0) {
        error_unknown_param(err, start, item, klen, spec->alg);
        return -1;
    }
    if (spec->set_mask & (1u << i)) {
        set_error(err, start, "parameter '%s' given twice", spec->alg->params[i].name);
        return -1;
    }
    size_t vstart = start + klen + 1;
    ct_expr v;
    if (ct_expr_parse(text + vstart, end - vstart, &v) != 0) {
        set_error(err, vstart,
                  "bad value '%s' for parameter '%s' (expected an integer or P, Q, N, sqrt, "
                  "sqrtQ[+-k])",
                  echo(text + vstart, end - vstart, quoted, sizeof quoted),
                  spec->alg->params[i].name);
        return -1;
    }
    if (check_const_range(spec->alg, i, v, vstart, err) != 0)
        return -1;
    spec->values[i] = v;
    spec->set_mask |= 1u << i;
    return 0;
}

int ct_spec_parse(const char *text, size_t len, ct_coll coll, ct_spec *out,
                  ct_parse_error *err)
{
    const char *colon = memchr(text, ':', len);
    size_t nlen = colon ? (size_t)(colon - text) : len;
    if (nlen == 0) {
        set_error(err, 0, "empty algorithm name");
        return -1;
    }
    const ct_algorithm *alg = ct_algorithm_find(coll, text, nlen);
    if (alg == NULL) {
        error_unknown_algorithm(err, text, nlen, coll);
        return -1;
    }
    ct_spec spec;
    ct_spec_default(alg, &spec);
    if (colon != NULL) {
        /* Items are separated by ','; "name:" has one empty item. */
        size_t start = nlen + 1;
        for (;;) {
            const char *comma = memchr(text + start, ',', len - start);
            size_t end = comma ? (size_t)(comma - text) : len;
            if (parse_param(text, start, end, &spec, err) != 0)
                return -1;
            if (comma == NULL)
                break;
            start = end + 1;
        }
    }
    *out = spec;
    return 0;
}

void ct_spec_default(const ct_algorithm *alg, ct_spec *out)
{
    memset(out, 0, sizeof *out);
    out->alg = alg;
    for (int i = 0; i < alg->nparams; i++)
        out->values[i] = alg->params[i].def;
}

/* ------------------------------------------------------------------ */
/* Resolving against a communicator                                    */
/* ------------------------------------------------------------------ */

const char *ct_spec_resolve(const ct_spec *spec, const ct_shape *env, long *params,
                            char *why, size_t whylen)
{
    const ct_algorithm *alg = spec->alg;
    /* Without a buffer the caller still learns that resolution failed. */
    static const char fallback[] = "parameter out of range";

    for (int i = 0; i < alg->nparams; i++) {
        const ct_param_desc *d = &alg->params[i];
        long lo = ct_expr_eval(d->min, env), hi = ct_expr_eval(d->max, env);
        if (lo > hi) {
            if (why == NULL || whylen == 0)
                return fallback;
            snprintf(why, whylen, "%s range %ld..%ld is empty at P=%ld", d->name, lo, hi,
                     env->P);
            return why;
        }
        if (spec->set_mask & (1u << i)) {
            long v = ct_expr_eval(spec->values[i], env);
            if (v > hi && d->clamp)
                v = hi; /* acts as the maximum (coll_list.h, CT_CLAMP) */
            if (v < lo || v > hi) {
                if (why == NULL || whylen == 0)
                    return fallback;
                snprintf(why, whylen, "%s=%ld out of range %ld..%ld at P=%ld", d->name, v, lo,
                         hi, env->P);
                return why;
            }
            params[i] = v;
        } else {
            /* Defaults come from the registry, so a hand-made spec with only
             * alg set resolves like ct_spec_default(). */
            long v = ct_expr_eval(d->def, env);
            params[i] = v < lo ? lo : v > hi ? hi : v;
        }
    }
    return NULL;
}

void ct_spec_format_resolved(const ct_algorithm *alg, const long *params, char *buf,
                             size_t len)
{
    if (len == 0)
        return;
    size_t used = (size_t)snprintf(buf, len, "%s", alg->name);
    for (int i = 0; i < alg->nparams && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%c%s=%ld", i ? ',' : ':',
                                 alg->params[i].name, params[i]);
}
