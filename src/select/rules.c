/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rules.c - the tuning rules file parser.
 *
 *   # collective  conditions (any order, each at most once)   algorithm spec
 *   alltoallv     comm_size=2-64  msg_size=0-511  ppn=*       scattered:block_count=8
 *
 * Unlike Open MPI's positional dynamic-rules file, every condition is named,
 * comments are allowed anywhere, and an error rejects the whole file with
 * "<name>:<line>:<column>: <what>: '<offending text>'" for each bad line instead
 * of a silent fallback.
 */
#include "select/rules.h"

#include "core/readfile.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const key_names[CT_KEY_COUNT] = {
    [CT_KEY_COMM_SIZE] = "comm_size",
    [CT_KEY_MSG_SIZE] = "msg_size",
    [CT_KEY_NODES] = "nodes",
    [CT_KEY_PPN] = "ppn",
    [CT_KEY_PERSISTENT] = "persistent",
    [CT_KEY_DEGREE] = "degree",
    [CT_KEY_OFFNODE] = "offnode",
    [CT_KEY_COMPONENTS] = "components",
};

/* ------------------------------------------------------------------ */
/* Lines and tokens                                                    */
/* ------------------------------------------------------------------ */

/* One line of the file with its comment and line ending removed. */
typedef struct line {
    const char *text;
    size_t len;
    int number; /* 1-based */
} line;

/* A token of a line: text[0..len) starting at 0-based column col. */
typedef struct token {
    const char *text;
    size_t len;
    size_t col;
} token;

/* Where parse errors go, the file label that prefixes them, and how many. */
typedef struct reporter {
    const char *name;
    ct_rules_error_fn on_error;
    void *arg;
    int count;
} reporter;

static int is_blank(char c) { return c == ' ' || c == '\t'; }

/* Finds the next token at or after *pos in ln; 0 when there is none. */
static int next_token(const line *ln, size_t *pos, token *tok)
{
    size_t i = *pos;
    while (i < ln->len && is_blank(ln->text[i]))
        i++;
    if (i == ln->len)
        return 0;
    tok->text = ln->text + i;
    tok->col = i;
    while (i < ln->len && !is_blank(ln->text[i]))
        i++;
    tok->len = (size_t)(ln->text + i - tok->text);
    *pos = i;
    return 1;
}

/* True when a token follows position pos on the line. */
static int more_tokens(const line *ln, size_t pos)
{
    token t = {0};
    return next_token(ln, &pos, &t);
}

/* Copies text[0..len) into out, bytes outside printable ASCII as \xHH (a
 * carriage return or a UTF-8 space would otherwise hide in the message). */
static void escape(const char *text, size_t len, char *out, size_t outlen)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 5 < outlen; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 0x20 && c < 0x7f)
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
    }
    out[o] = '\0';
}

/* Reports "<name>:<line>:<col+1>: <what>: '<text>'" and returns -1. */
static int report(reporter *rp, const line *ln, size_t col, const char *text, size_t len,
                  const char *fmt, ...) CT_PRINTF(6, 7);

static int report(reporter *rp, const line *ln, size_t col, const char *text, size_t len,
                  const char *fmt, ...)
{
    char what[512], raw[CT_RULES_MSG_MAX], msg[CT_RULES_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(raw, sizeof raw, "%s:%d:%zu: %s: '%.*s'", rp->name, ln->number, col + 1, what,
             (int)len, text);
    escape(raw, strlen(raw), msg, sizeof msg);
    rp->count++;
    if (rp->on_error != NULL)
        rp->on_error(rp->arg, msg);
    return -1;
}

/* ------------------------------------------------------------------ */
/* Conditions: key=range                                               */
/* ------------------------------------------------------------------ */

static int find_key(const char *text, size_t len)
{
    for (int k = 0; k < CT_KEY_COUNT; k++)
        if (strlen(key_names[k]) == len && memcmp(key_names[k], text, len) == 0)
            return k;
    return -1;
}

/* Parses one bound of a range; the token is only used for the report. */
static int parse_bound(reporter *rp, const line *ln, const char *text, size_t len,
                       long *out)
{
    if (ct_size_parse(text, len, out) == 0)
        return 0;
    return report(rp, ln, (size_t)(text - ln->text), text, len,
                  "bad number (expected a non-negative integer with optional k/m/g suffix)");
}

/* Parses "*", "a", "a-b", "a-" or "-b" at text[0..len). */
static int parse_range(reporter *rp, const line *ln, const char *text, size_t len,
                       ct_range *r)
{
    const size_t col = (size_t)(text - ln->text);
    r->lo = 0;
    r->hi = LONG_MAX;
    if (len == 1 && text[0] == '*')
        return 0;
    const char *dash = memchr(text, '-', len);
    if (dash == NULL) {
        if (parse_bound(rp, ln, text, len, &r->lo) != 0)
            return -1;
        r->hi = r->lo;
        return 0;
    }
    size_t llen = (size_t)(dash - text), hlen = len - llen - 1;
    if (llen == 0 && hlen == 0)
        return report(rp, ln, col, text, len, "bad range (expected *, a, a-b, a- or -b)");
    if (llen > 0 && parse_bound(rp, ln, text, llen, &r->lo) != 0)
        return -1;
    if (hlen > 0 && parse_bound(rp, ln, dash + 1, hlen, &r->hi) != 0)
        return -1;
    if (r->lo > r->hi)
        return report(rp, ln, col, text, len, "empty range (%ld > %ld)", r->lo, r->hi);
    return 0;
}

/* Parses one middle token "key=range" into rule. given tracks the keys seen
 * on the line; key_mask only gets the keys whose range excludes something,
 * so "msg_size=*" costs decide.c no message-size computation. */
static int parse_condition(reporter *rp, const line *ln, const token *t, ct_rule *rule,
                           unsigned *given)
{
    const char *eq = memchr(t->text, '=', t->len);
    const char *colon = memchr(t->text, ':', t->len);
    if (eq == NULL && find_key(t->text, t->len) >= 0)
        return report(rp, ln, t->col, t->text, t->len, "missing '=' after condition key");
    if (eq == NULL || (colon != NULL && colon < eq))
        return report(rp, ln, t->col, t->text, t->len,
                      "expected key=range (the algorithm spec comes last)");
    size_t klen = (size_t)(eq - t->text);
    int k = find_key(t->text, klen);
    if (k < 0) {
        char known[128] = "";
        for (int i = 0; i < CT_KEY_COUNT; i++) {
            size_t used = strlen(known);
            snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", key_names[i]);
        }
        return report(rp, ln, t->col, t->text, klen, "unknown key (known: %s)", known);
    }
    if (*given & (1u << k))
        return report(rp, ln, t->col, t->text, klen, "key given twice");
    *given |= 1u << k;
    size_t rlen = t->len - klen - 1;
    if (rlen == 0)
        return report(rp, ln, t->col, t->text, t->len, "missing range after '='");
    ct_range *r = &rule->range[k];
    if (parse_range(rp, ln, eq + 1, rlen, r) != 0)
        return -1;
    if (k == CT_KEY_PERSISTENT && !ct_coll_nonblocking(rule->coll))
        return report(rp, ln, t->col, t->text, t->len,
                      "persistent is a condition of the nonblocking collectives (ialltoallv, "
                      "ialltoall, iallgather_inter, iallgatherv_inter, ineighbor_alltoallv, "
                      "ineighbor_alltoall), whose persistent forms they serve");
    if (k == CT_KEY_PERSISTENT && r->lo > 1)
        return report(rp, ln, t->col, t->text, t->len, "persistent is 0 or 1");
    if ((k == CT_KEY_DEGREE || k == CT_KEY_OFFNODE || k == CT_KEY_COMPONENTS) &&
        !ct_coll_neighbor(rule->coll))
        return report(rp, ln, t->col, t->text, t->len,
                      "%s is a condition of the neighbourhood collectives (neighbor_alltoallv, "
                      "neighbor_alltoall, ineighbor_alltoallv, ineighbor_alltoall)",
                      key_names[k]);
    if (k == CT_KEY_OFFNODE && (r->lo > 100 || (r->hi != LONG_MAX && r->hi > 100)))
        return report(rp, ln, t->col, t->text, t->len, "offnode is a percentage, 0-100");
    if (r->lo != 0 || r->hi != LONG_MAX)
        rule->key_mask |= 1u << k;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Rules                                                               */
/* ------------------------------------------------------------------ */

static int parse_collective(reporter *rp, const line *ln, const token *t, ct_coll *out)
{
    if (ct_coll_from_name(t->text, t->len, out) == 0)
        return 0;
    char known[512] = "";
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        size_t used = strlen(known);
        snprintf(known + used, sizeof known - used, "%s%s", c ? ", " : "",
                 ct_coll_name((ct_coll)c));
    }
    return report(rp, ln, t->col, t->text, t->len, "unknown collective (known: %s)", known);
}

/* A last token that looks like a condition (a '=' before any ':') means the
 * spec was left out; reporting it as an unknown algorithm would mislead. */
static int looks_like_condition(const token *t)
{
    const char *eq = memchr(t->text, '=', t->len);
    const char *colon = memchr(t->text, ':', t->len);
    return eq != NULL && (colon == NULL || eq < colon);
}

#define ADAPT "adapt"
#define ADAPT_LEN (sizeof ADAPT - 1)

static int is_adapt(const token *t)
{
    return t->len >= ADAPT_LEN && memcmp(t->text, ADAPT, ADAPT_LEN) == 0 &&
           (t->len == ADAPT_LEN || t->text[ADAPT_LEN] == ':');
}

/* "adapt" or "adapt:spec|spec|...": the candidates are parsed as specs. */
static int parse_adapt(reporter *rp, const line *ln, const token *t, ct_rule *rule)
{
    if (!ct_coll_has_pmpi(rule->coll) || ct_coll_nonblocking(rule->coll))
        return report(rp, ln, t->col, t->text, t->len,
                      "adapt serves the blocking collectives that have a pmpi algorithm");
    rule->adapt = 1;
    ct_spec_default(ct_algorithm_fallback(rule->coll), &rule->spec);
    if (t->len == ADAPT_LEN)
        return 0;
    ct_spec cands[CT_RULE_MAX_CANDS];
    size_t pos = ADAPT_LEN + 1;
    int n = 0;
    while (pos <= t->len) {
        const char *bar = memchr(t->text + pos, '|', t->len - pos);
        size_t end = bar ? (size_t)(bar - t->text) : t->len;
        ct_parse_error perr;
        if (n == CT_RULE_MAX_CANDS)
            return report(rp, ln, t->col + pos, t->text, t->len,
                          "more than %d adapt candidates", CT_RULE_MAX_CANDS);
        if (ct_spec_parse(t->text + pos, end - pos, rule->coll, &cands[n++], &perr) != 0)
            return report(rp, ln, t->col + pos + (size_t)perr.column, t->text, t->len, "%s",
                          perr.message);
        pos = end + 1;
    }
    rule->cands = malloc((size_t)n * sizeof *rule->cands);
    if (rule->cands == NULL)
        return report(rp, ln, t->col, t->text, t->len, "out of memory");
    memcpy(rule->cands, cands, (size_t)n * sizeof *cands);
    rule->ncands = n;
    return 0;
}

static int parse_spec_token(reporter *rp, const line *ln, const token *t, ct_rule *rule)
{
    if (looks_like_condition(t))
        return report(rp, ln, t->col, t->text, t->len, "missing algorithm spec");
    if (find_key(t->text, t->len) >= 0)
        return report(rp, ln, t->col, t->text, t->len,
                      "missing algorithm spec (a condition is key=range)");
    if (is_adapt(t))
        return parse_adapt(rp, ln, t, rule);
    ct_parse_error perr;
    if (ct_spec_parse(t->text, t->len, rule->coll, &rule->spec, &perr) == 0)
        return 0;
    return report(rp, ln, t->col + (size_t)perr.column, t->text, t->len, "%s", perr.message);
}

/* Parses a non-blank line into rule. */
static int parse_rule(reporter *rp, const line *ln, ct_rule *rule)
{
    size_t pos = 0;
    unsigned given = 0;
    token t = {0};
    memset(rule, 0, sizeof *rule);
    rule->line = ln->number;
    for (int k = 0; k < CT_KEY_COUNT; k++)
        rule->range[k] = (ct_range){0, LONG_MAX};

    next_token(ln, &pos, &t);
    if (parse_collective(rp, ln, &t, &rule->coll) != 0)
        return -1;
    if (!more_tokens(ln, pos))
        return report(rp, ln, t.col, t.text, t.len, "missing algorithm spec");
    while (next_token(ln, &pos, &t)) {
        if (!more_tokens(ln, pos))
            return parse_spec_token(rp, ln, &t, rule);
        if (parse_condition(rp, ln, &t, rule, &given) != 0)
            return -1;
    }
    return 0; /* not reached: the loop returns at the last token */
}

/* Appends rule to rs, growing the array geometrically. */
static int append_rule(ct_ruleset *rs, int *cap, const ct_rule *rule)
{
    if (rs->count == *cap) {
        int ncap = *cap ? 2 * *cap : 8;
        ct_rule *n = realloc(rs->rules, (size_t)ncap * sizeof *n);
        if (n == NULL)
            return -1;
        rs->rules = n;
        *cap = ncap;
    }
    rs->rules[rs->count++] = *rule;
    return 0;
}

/* Cuts the next line off *text: strips "\r\n" or "\n" and any comment. */
static void take_line(const char **text, line *ln)
{
    const char *s = *text, *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    *text = nl ? nl + 1 : s + len;
    if (len > 0 && s[len - 1] == '\r')
        len--;
    const char *hash = memchr(s, '#', len);
    ln->text = s;
    ln->len = hash ? (size_t)(hash - s) : len;
    ln->number++;
}

static char *dup_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

static int out_of_memory(reporter *rp)
{
    char msg[CT_RULES_MSG_MAX];
    snprintf(msg, sizeof msg, "%s: out of memory while reading rules", rp->name);
    rp->count++;
    if (rp->on_error != NULL)
        rp->on_error(rp->arg, msg);
    return -1;
}

int ct_rules_parse_report(const char *text, const char *name, ct_ruleset *out,
                          ct_rules_error_fn on_error, void *arg)
{
    reporter rp = {name ? name : "(rules)", on_error, arg, 0};
    ct_ruleset rs = {0};
    int cap = 0;
    line ln = {NULL, 0, 0};

    memset(out, 0, sizeof *out);
    if (text == NULL)
        text = "";
    /* Every line is parsed, so one pass reports every bad line. */
    while (*text != '\0') {
        take_line(&text, &ln);
        size_t pos = 0;
        token t = {0};
        if (!next_token(&ln, &pos, &t))
            continue; /* blank or comment only */
        ct_rule rule;
        if (parse_rule(&rp, &ln, &rule) != 0)
            continue;
        if (append_rule(&rs, &cap, &rule) != 0) {
            free(rule.cands);
            out_of_memory(&rp);
            break;
        }
    }
    if (rp.count == 0 && (rs.name = dup_string(rp.name)) == NULL)
        out_of_memory(&rp);
    if (rp.count > 0) {
        ct_rules_free(&rs);
        return rp.count;
    }
    *out = rs;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

/* Reports "<path>: <what>: <reason>" as the file's one error; returns 1. */
static int file_error(ct_rules_error_fn on_error, void *arg, const char *path, const char *what,
                      const char *reason)
{
    char msg[CT_RULES_MSG_MAX];
    snprintf(msg, sizeof msg, "%s: %s: %s", path, what, reason);
    if (on_error != NULL)
        on_error(arg, msg);
    return 1;
}

int ct_rules_load_report(const char *path, ct_ruleset *out, ct_rules_error_fn on_error,
                         void *arg)
{
    memset(out, 0, sizeof *out);
    char *text, why[256];
    size_t len;
    ct_read_status st = ct_read_file(path, CT_RULES_MAX_BYTES, &text, &len, why, sizeof why);
    if (st == CT_READ_CANNOT_OPEN)
        return file_error(on_error, arg, path, "cannot open rules file", why);
    if (st != CT_READ_OK)
        return file_error(on_error, arg, path, "cannot read rules file", why);
    int n;
    if (memchr(text, '\0', len) != NULL) /* a NUL would silently end the text early */
        n = file_error(on_error, arg, path, "cannot read rules file", "contains a NUL byte");
    else
        n = ct_rules_parse_report(text, path, out, on_error, arg);
    free(text);
    return n;
}

void ct_rules_count(const ct_ruleset *rs, int *count)
{
    for (int c = 0; c < CT_COLL_COUNT; c++)
        count[c] = 0;
    for (int i = 0; i < rs->count; i++)
        count[rs->rules[i].coll]++;
}

void ct_rules_free(ct_ruleset *rs)
{
    if (rs == NULL)
        return;
    for (int i = 0; i < rs->count; i++)
        free(rs->rules[i].cands);
    free(rs->rules);
    free(rs->name);
    memset(rs, 0, sizeof *rs);
}
