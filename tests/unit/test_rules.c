/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_rules.c - the rules file parser: good files, every error message
 * (file, line, column, what, offending text), and loading real files.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/readfile.h"
#include "select/rules.h"

/* The collectives in registry order, as "unknown collective" lists them:
 * extend when a collective is added to src/coll_list.h. */
#define KNOWN_COLLS                                                                         \
    "alltoallv, alltoall, ialltoallv, ialltoall, allgather_inter, allgatherv_inter, "      \
    "iallgather_inter, iallgatherv_inter, alltoall_crs, alltoallv_crs, neighbor_alltoallv, " \
    "neighbor_alltoall, ineighbor_alltoallv, ineighbor_alltoall"
/* The condition keys, as the parser lists them. */
#define KNOWN_KEYS "comm_size, msg_size, nodes, ppn, persistent, degree, offnode, components"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define KB 1024L
#define MB (1024L * 1024L)
#define GB (1024L * 1024L * 1024L)
#define BIT(k) (1u << (k))

/* The parser and the loader keeping only the first message (in msg), as
 * most checks want; return 0 or -1. */
typedef struct first_error {
    char *msg;
    size_t msglen;
    int seen;
} first_error;

static void keep_first(void *arg, const char *msg)
{
    first_error *fe = arg;
    if (!fe->seen++ && fe->msg != NULL && fe->msglen > 0)
        snprintf(fe->msg, fe->msglen, "%s", msg);
}

static int rules_parse(const char *text, const char *name, ct_ruleset *out, char *msg,
                       size_t msglen)
{
    first_error fe = {msg, msglen, 0};
    return ct_rules_parse_report(text, name, out, keep_first, &fe) == 0 ? 0 : -1;
}

static int rules_load(const char *path, ct_ruleset *out, char *msg, size_t msglen)
{
    first_error fe = {msg, msglen, 0};
    return ct_rules_load_report(path, out, keep_first, &fe) == 0 ? 0 : -1;
}

static const ct_algorithm *alg(const char *name)
{
    const ct_algorithm *a = ct_algorithm_find(CT_COLL_ALLTOALLV, name, strlen(name));
    assert_non_null(a);
    return a;
}

static void parse_ok(const char *text, ct_ruleset *rs)
{
    char msg[512] = "";
    if (rules_parse(text, "t.rules", rs, msg, sizeof msg) != 0)
        fail_msg("rules rejected: %s\n--- text ---\n%s", msg, text);
    assert_string_equal(rs->name, "t.rules");
}

static void assert_range(const ct_rule *r, ct_key k, long lo, long hi)
{
    if (r->range[k].lo != lo || r->range[k].hi != hi)
        fail_msg("line %d key %d: got %ld..%ld, want %ld..%ld", r->line, (int)k,
                 r->range[k].lo, r->range[k].hi, lo, hi);
}

/* Keys not in key_mask match everything. */
static void assert_unset(const ct_rule *r, ct_key k)
{
    assert_false(r->key_mask & BIT(k));
    assert_range(r, k, 0, LONG_MAX);
}

/* ------------------------------------------------------------------ */
/* Good files                                                          */
/* ------------------------------------------------------------------ */

static void test_parse_multiple_rules(void **state)
{
    (void)state;
    const char *text =
        "# coltune rules: first match wins\n"
        "alltoallv comm_size=2-64 msg_size=0-511 nodes=1- ppn=* scattered:block_count=8  # small\n"
        "\n"
        "   # an indented comment\n"
        "alltoallv msg_size=512- pairwise\n"
        "\talltoallv   comm_size=-16\t\tmultipair_waitany:stride=sqrt\n"
        "alltoallv pmpi\n";
    ct_ruleset rs;
    parse_ok(text, &rs);
    assert_int_equal(rs.count, 4);

    const ct_rule *r = &rs.rules[0];
    assert_int_equal(r->line, 2);
    assert_int_equal(r->coll, CT_COLL_ALLTOALLV);
    /* ppn=* matches everything: no condition. */
    assert_int_equal(r->key_mask,
                     BIT(CT_KEY_COMM_SIZE) | BIT(CT_KEY_MSG_SIZE) | BIT(CT_KEY_NODES));
    assert_range(r, CT_KEY_COMM_SIZE, 2, 64);
    assert_range(r, CT_KEY_MSG_SIZE, 0, 511);
    assert_range(r, CT_KEY_NODES, 1, LONG_MAX);
    assert_unset(r, CT_KEY_PPN);
    assert_ptr_equal(r->spec.alg, alg("scattered"));
    assert_int_equal(r->spec.set_mask, 1);
    assert_int_equal(r->spec.values[0].term, CT_TERM_CONST);
    assert_true(r->spec.values[0].offset == 8);

    r = &rs.rules[1];
    assert_int_equal(r->line, 5);
    assert_int_equal(r->key_mask, BIT(CT_KEY_MSG_SIZE));
    assert_range(r, CT_KEY_MSG_SIZE, 512, LONG_MAX);
    assert_unset(r, CT_KEY_COMM_SIZE);
    assert_unset(r, CT_KEY_NODES);
    assert_unset(r, CT_KEY_PPN);
    assert_ptr_equal(r->spec.alg, alg("pairwise"));
    assert_int_equal(r->spec.set_mask, 0);

    r = &rs.rules[2];
    assert_int_equal(r->line, 6);
    assert_int_equal(r->key_mask, BIT(CT_KEY_COMM_SIZE));
    assert_range(r, CT_KEY_COMM_SIZE, 0, 16);
    assert_ptr_equal(r->spec.alg, alg("multipair_waitany"));
    assert_int_equal(r->spec.set_mask, 1);
    assert_int_equal(r->spec.values[0].term, CT_TERM_SQRT_P);
    assert_true(r->spec.values[0].offset == 0);

    r = &rs.rules[3];
    assert_int_equal(r->line, 7);
    assert_int_equal(r->key_mask, 0);
    for (int k = 0; k < CT_KEY_COUNT; k++)
        assert_unset(r, (ct_key)k);
    assert_ptr_equal(r->spec.alg, alg("pmpi"));
    ct_rules_free(&rs);
    assert_null(rs.rules);
    assert_null(rs.name);
    assert_int_equal(rs.count, 0);
}

static void test_parse_range_forms(void **state)
{
    (void)state;
    const char *text = "alltoallv comm_size=5 msg_size=* nodes=-3 ppn=2- pmpi\n"
                       "alltoallv ppn=0-0 nodes=7-7 comm_size=0 linear\n"
                       "alltoallv msg_size=0- comm_size=-0 nonblocking\n";
    ct_ruleset rs;
    parse_ok(text, &rs);
    assert_int_equal(rs.count, 3);
    const ct_rule *r = &rs.rules[0];
    assert_range(r, CT_KEY_COMM_SIZE, 5, 5);
    assert_unset(r, CT_KEY_MSG_SIZE); /* "*" is no condition */
    assert_range(r, CT_KEY_NODES, 0, 3);
    assert_range(r, CT_KEY_PPN, 2, LONG_MAX);
    r = &rs.rules[1];
    assert_range(r, CT_KEY_PPN, 0, 0);
    assert_range(r, CT_KEY_NODES, 7, 7);
    assert_range(r, CT_KEY_COMM_SIZE, 0, 0);
    assert_ptr_equal(r->spec.alg, alg("linear"));
    r = &rs.rules[2];
    assert_unset(r, CT_KEY_MSG_SIZE); /* "0-" is everything too */
    assert_range(r, CT_KEY_COMM_SIZE, 0, 0);
    assert_int_equal(r->key_mask, BIT(CT_KEY_COMM_SIZE));
    assert_unset(r, CT_KEY_PPN);
    assert_ptr_equal(r->spec.alg, alg("nonblocking"));

    assert_true(ct_range_contains(rs.rules[0].range[CT_KEY_NODES], 3));
    assert_false(ct_range_contains(rs.rules[0].range[CT_KEY_NODES], 4));
    assert_true(ct_range_contains(rs.rules[0].range[CT_KEY_PPN], LONG_MAX));
    assert_false(ct_range_contains(rs.rules[0].range[CT_KEY_PPN], 1));
    ct_rules_free(&rs);
}

static void test_parse_suffixes(void **state)
{
    (void)state;
    const char *text = "alltoallv msg_size=1k-2m nodes=1g pmpi\n"
                       "alltoallv msg_size=4K- comm_size=-3M ppn=2G-3g pairwise\n"
                       "alltoallv msg_size=0-1023 scattered:block_count=1k\n";
    ct_ruleset rs;
    parse_ok(text, &rs);
    assert_int_equal(rs.count, 3);
    assert_range(&rs.rules[0], CT_KEY_MSG_SIZE, KB, 2 * MB);
    assert_range(&rs.rules[0], CT_KEY_NODES, GB, GB);
    assert_range(&rs.rules[1], CT_KEY_MSG_SIZE, 4 * KB, LONG_MAX);
    assert_range(&rs.rules[1], CT_KEY_COMM_SIZE, 0, 3 * MB);
    assert_range(&rs.rules[1], CT_KEY_PPN, 2 * GB, 3 * GB);
    assert_range(&rs.rules[2], CT_KEY_MSG_SIZE, 0, 1023);
    assert_true(rs.rules[2].spec.values[0].offset == KB);
    ct_rules_free(&rs);
}

static void test_parse_expressions_in_specs(void **state)
{
    (void)state;
    const char *text = "alltoallv comm_size=4- multipair_blocking:stride=P-1\n"
                       "alltoallv scattered:block_count=sqrtQ+1\n"
                       "alltoallv multipair_testany:stride=(N-1)*Q\n"
                       "alltoallv multipair_waitany:stride=N\n"
                       "alltoallv scattered:block_count=Q-1\n";
    static const struct {
        const char *alg;
        ct_term term;
        long offset;
    } want[] = {
        {"multipair_blocking", CT_TERM_P, -1}, {"scattered", CT_TERM_SQRT_Q, 1},
        {"multipair_testany", CT_TERM_NM1_Q, 0}, {"multipair_waitany", CT_TERM_N, 0},
        {"scattered", CT_TERM_Q, -1},
    };
    ct_ruleset rs;
    parse_ok(text, &rs);
    assert_int_equal(rs.count, (int)ARRAY_LEN(want));
    for (int i = 0; i < rs.count; i++) {
        assert_int_equal(rs.rules[i].line, i + 1);
        assert_ptr_equal(rs.rules[i].spec.alg, alg(want[i].alg));
        assert_int_equal(rs.rules[i].spec.values[0].term, want[i].term);
        assert_true(rs.rules[i].spec.values[0].offset == want[i].offset);
    }
    ct_rules_free(&rs);
}

static void test_parse_crlf_and_edges(void **state)
{
    (void)state;
    /* CRLF endings, comment glued to a token, no final newline. */
    const char *text = "# windows file\r\n"
                       "alltoallv comm_size=4 pairwise\r\n"
                       "\r\n"
                       "alltoallv pmpi#glued comment\r\n"
                       "alltoallv msg_size=2-3 linear";
    ct_ruleset rs;
    parse_ok(text, &rs);
    assert_int_equal(rs.count, 3);
    assert_int_equal(rs.rules[0].line, 2);
    assert_ptr_equal(rs.rules[0].spec.alg, alg("pairwise"));
    assert_range(&rs.rules[0], CT_KEY_COMM_SIZE, 4, 4);
    assert_int_equal(rs.rules[1].line, 4);
    assert_ptr_equal(rs.rules[1].spec.alg, alg("pmpi"));
    assert_int_equal(rs.rules[2].line, 5);
    assert_ptr_equal(rs.rules[2].spec.alg, alg("linear"));
    assert_range(&rs.rules[2], CT_KEY_MSG_SIZE, 2, 3);
    ct_rules_free(&rs);
}

static void test_parse_empty_files(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "", "\n", "\n\n\n", "   \t \n", "# only a comment", "# a\n\n   # b\n\t# c\r\n", "\r\n",
    };
    for (size_t i = 0; i < ARRAY_LEN(texts); i++) {
        ct_ruleset rs;
        parse_ok(texts[i], &rs);
        assert_int_equal(rs.count, 0);
        assert_null(rs.rules);
        ct_rules_free(&rs);
    }
}

static void test_parse_many_rules(void **state)
{
    (void)state;
    /* Enough rules to grow the array several times. */
    enum { NRULES = 300 };
    char *text = malloc(NRULES * 64);
    assert_non_null(text);
    size_t used = 0;
    for (int i = 0; i < NRULES; i++)
        used += (size_t)sprintf(text + used, "alltoallv comm_size=%d scattered:block_count=%d\n",
                                i, i + 1);
    ct_ruleset rs;
    parse_ok(text, &rs);
    free(text);
    assert_int_equal(rs.count, NRULES);
    for (int i = 0; i < NRULES; i++) {
        assert_int_equal(rs.rules[i].line, i + 1);
        assert_range(&rs.rules[i], CT_KEY_COMM_SIZE, i, i);
        assert_true(rs.rules[i].spec.values[0].offset == i + 1);
    }
    ct_rules_free(&rs);
}

static void test_parse_null_name(void **state)
{
    (void)state;
    ct_ruleset rs;
    char msg[512];
    assert_int_equal(rules_parse("alltoallv pmpi\n", NULL, &rs, msg, sizeof msg), 0);
    assert_non_null(rs.name);
    assert_int_equal(rs.count, 1);
    ct_rules_free(&rs);
    assert_int_equal(rules_parse("nope\n", NULL, &rs, msg, sizeof msg), -1);
    assert_string_equal(msg, "(rules):1:1: unknown collective (known: " KNOWN_COLLS "): 'nope'");
}

/* ------------------------------------------------------------------ */
/* Malformed files: the exact message                                  */
/* ------------------------------------------------------------------ */

static void expect_error(const char *text, const char *want)
{
    ct_ruleset rs;
    memset(&rs, 0x5a, sizeof rs); /* garbage in: must come back empty */
    char msg[1024] = "";
    if (rules_parse(text, "t.rules", &rs, msg, sizeof msg) == 0)
        fail_msg("accepted:\n%s", text);
    assert_int_equal(rs.count, 0);
    assert_null(rs.rules);
    assert_null(rs.name);
    if (strcmp(msg, want) != 0)
        fail_msg("input: '%s'\n  got  %s\n  want %s", text, msg, want);
}

/* Malformed one-line files and the exact message (file name "t.rules"); also
 * written out by --write-cases for the coltune-info and job tests. */
typedef struct malformed {
    const char *text;
    const char *msg;
} malformed;

static const malformed bad_conditions[] = {
        {"alltogether pmpi",
         "t.rules:1:1: unknown collective (known: " KNOWN_COLLS "): 'alltogether'"},
        {"Alltoallv pmpi", "t.rules:1:1: unknown collective (known: " KNOWN_COLLS "): 'Alltoallv'"},
        {"comm_size=4 alltoallv pmpi",
         "t.rules:1:1: unknown collective (known: " KNOWN_COLLS "): 'comm_size=4'"},
        {"alltoallv", "t.rules:1:1: missing algorithm spec: 'alltoallv'"},
        {"  alltoallv   # pmpi", "t.rules:1:3: missing algorithm spec: 'alltoallv'"},
        {"alltoallv\r\n", "t.rules:1:1: missing algorithm spec: 'alltoallv'"},
        {"alltoallv comm_size=2-4", "t.rules:1:11: missing algorithm spec: 'comm_size=2-4'"},
        {"alltoallv comm_size=2 # pmpi", "t.rules:1:11: missing algorithm spec: 'comm_size=2'"},
        {"alltoallv ppn=1 foo=3", "t.rules:1:17: missing algorithm spec: 'foo=3'"},
        {"alltoallv msg_size",
         "t.rules:1:11: missing algorithm spec (a condition is key=range): 'msg_size'"},
        {"alltoallv nodes=2 pmpi\rX",
         "t.rules:1:19: unknown algorithm 'pmpi\\x0dX' for alltoallv (known: pmpi, pairwise, "
         "nonblocking, linear, scattered, multipair_blocking, multipair_waitany, "
         "multipair_testany, tuna, tuna_hier_coalesced, tuna_hier_staggered, shm, node_aware): "
         "'pmpi\\x0dX'"},
        {"\xef\xbb\xbf" "alltoallv pmpi",
         "t.rules:1:1: unknown collective (known: " KNOWN_COLLS "): '\\xef\\xbb\\xbfalltoallv'"},
        {"alltoallv foo=1-2 pmpi",
         "t.rules:1:11: unknown key (known: " KNOWN_KEYS "): 'foo'"},
        {"alltoallv Comm_size=1 pmpi",
         "t.rules:1:11: unknown key (known: " KNOWN_KEYS "): 'Comm_size'"},
        {"alltoallv =5 pmpi",
         "t.rules:1:11: unknown key (known: " KNOWN_KEYS "): ''"},
        {"alltoallv comm_size=2 comm_size=3 pmpi", "t.rules:1:23: key given twice: 'comm_size'"},
        {"alltoallv ppn=* nodes=1 ppn=* pmpi", "t.rules:1:25: key given twice: 'ppn'"},
        {"alltoallv comm_size 2-4 pmpi",
         "t.rules:1:11: missing '=' after condition key: 'comm_size'"},
        {"alltoallv pairwise pmpi",
         "t.rules:1:11: expected key=range (the algorithm spec comes last): 'pairwise'"},
        {"alltoallv scattered:block_count=4 comm_size=2",
         "t.rules:1:11: expected key=range (the algorithm spec comes last): "
         "'scattered:block_count=4'"},
        {"alltoallv comm_size= pmpi", "t.rules:1:11: missing range after '=': 'comm_size='"},
        {"alltoallv comm_size=64-2 pmpi", "t.rules:1:21: empty range (64 > 2): '64-2'"},
        {"alltoallv msg_size=1k-1 pmpi", "t.rules:1:20: empty range (1024 > 1): '1k-1'"},
        {"alltoallv comm_size=x pmpi",
         "t.rules:1:21: bad number (expected a non-negative integer with optional k/m/g "
         "suffix): 'x'"},
        {"alltoallv comm_size=2-x pmpi",
         "t.rules:1:23: bad number (expected a non-negative integer with optional k/m/g "
         "suffix): 'x'"},
        {"alltoallv msg_size=1-2-3 pmpi",
         "t.rules:1:22: bad number (expected a non-negative integer with optional k/m/g "
         "suffix): '2-3'"},
        {"alltoallv msg_size=-5- pmpi",
         "t.rules:1:21: bad number (expected a non-negative integer with optional k/m/g "
         "suffix): '5-'"},
        {"alltoallv msg_size=** pmpi",
         "t.rules:1:20: bad number (expected a non-negative integer with optional k/m/g "
         "suffix): '**'"},
        {"alltoallv msg_size=1.5k pmpi",
         "t.rules:1:20: bad number (expected a non-negative integer with optional k/m/g "
         "suffix): '1.5k'"},
        {"alltoallv ppn=0x10 pmpi",
         "t.rules:1:15: bad number (expected a non-negative integer with optional k/m/g "
         "suffix): '0x10'"},
        {"alltoallv nodes=+1 pmpi",
         "t.rules:1:17: bad number (expected a non-negative integer with optional k/m/g "
         "suffix): '+1'"},
        {"alltoallv msg_size=99999999999999999999 pmpi",
         "t.rules:1:20: bad number (expected a non-negative integer with optional k/m/g "
         "suffix): '99999999999999999999'"},
        {"alltoallv msg_size=0-8589934592g pmpi",
         "t.rules:1:22: bad number (expected a non-negative integer with optional k/m/g "
         "suffix): '8589934592g'"},
        {"alltoallv comm_size=- pmpi",
         "t.rules:1:21: bad range (expected *, a, a-b, a- or -b): '-'"},
        {"alltoallv\tcomm_size=2\t\tfoo=1 pmpi",
         "t.rules:1:24: unknown key (known: " KNOWN_KEYS "): 'foo'"},
};

/* persistent: a condition of the nonblocking collectives only, 0 or 1. */
static void test_parse_persistent(void **state)
{
    (void)state;
    ct_ruleset rs;
    parse_ok("ialltoallv persistent=1 linear\n"
             "ialltoall nodes=1 persistent=0 shm\n"
             "ialltoallv persistent=* pmpi\n",
             &rs);
    assert_int_equal(rs.count, 3);
    assert_range(&rs.rules[0], CT_KEY_PERSISTENT, 1, 1);
    assert_range(&rs.rules[1], CT_KEY_PERSISTENT, 0, 0);
    assert_unset(&rs.rules[2], CT_KEY_PERSISTENT);
    ct_rules_free(&rs);
    expect_error("alltoallv persistent=1 pmpi",
                 "t.rules:1:11: persistent is a condition of the nonblocking collectives "
                 "(ialltoallv, ialltoall, iallgather_inter, iallgatherv_inter, "
                 "ineighbor_alltoallv, ineighbor_alltoall), whose persistent forms they "
                 "serve: 'persistent=1'");
    expect_error("ialltoallv persistent=2 pmpi", "t.rules:1:12: persistent is 0 or 1: "
                                                 "'persistent=2'");
}

/* degree, offnode and components: conditions of the neighbourhood
 * collectives only, offnode a percentage. */
static void test_parse_graph_keys(void **state)
{
    (void)state;
    ct_ruleset rs;
    parse_ok("neighbor_alltoallv degree=8- offnode=20-100 locality\n"
             "ineighbor_alltoall persistent=1 offnode=0-10 direct\n"
             "neighbor_alltoall degree=* offnode=0- pmpi\n"
             "neighbor_alltoall components=1 msg_size=0-1k locality\n",
             &rs);
    assert_int_equal(rs.count, 4);
    assert_range(&rs.rules[3], CT_KEY_COMPONENTS, 1, 1);
    assert_range(&rs.rules[3], CT_KEY_MSG_SIZE, 0, 1024);
    assert_unset(&rs.rules[2], CT_KEY_COMPONENTS);
    assert_range(&rs.rules[0], CT_KEY_DEGREE, 8, LONG_MAX);
    assert_range(&rs.rules[0], CT_KEY_OFFNODE, 20, 100);
    assert_unset(&rs.rules[1], CT_KEY_DEGREE);
    assert_range(&rs.rules[1], CT_KEY_OFFNODE, 0, 10);
    assert_range(&rs.rules[1], CT_KEY_PERSISTENT, 1, 1);
    assert_unset(&rs.rules[2], CT_KEY_DEGREE);
    assert_unset(&rs.rules[2], CT_KEY_OFFNODE);
    ct_rules_free(&rs);
    expect_error("alltoallv degree=8 pmpi",
                 "t.rules:1:11: degree is a condition of the neighbourhood collectives "
                 "(neighbor_alltoallv, neighbor_alltoall, ineighbor_alltoallv, "
                 "ineighbor_alltoall): 'degree=8'");
    expect_error("ialltoall offnode=5 pmpi",
                 "t.rules:1:11: offnode is a condition of the neighbourhood collectives "
                 "(neighbor_alltoallv, neighbor_alltoall, ineighbor_alltoallv, "
                 "ineighbor_alltoall): 'offnode=5'");
    expect_error("alltoall components=1 pmpi",
                 "t.rules:1:10: components is a condition of the neighbourhood collectives "
                 "(neighbor_alltoallv, neighbor_alltoall, ineighbor_alltoallv, "
                 "ineighbor_alltoall): 'components=1'");
    expect_error("neighbor_alltoallv offnode=101- pmpi",
                 "t.rules:1:20: offnode is a percentage, 0-100: 'offnode=101-'");
    expect_error("neighbor_alltoallv offnode=50-200 pmpi",
                 "t.rules:1:20: offnode is a percentage, 0-100: 'offnode=50-200'");
}

static void test_malformed_conditions(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(bad_conditions); i++)
        expect_error(bad_conditions[i].text, bad_conditions[i].msg);
}

/* The message for an unknown algorithm lists the whole registry, which
 * grows: the rules layer is checked against what ct_spec_parse says (its
 * exact text is test_spec's business), plus today's entries as a prefix. */
static void expect_spec_error(const char *text, const char *spec, int line, int col)
{
    ct_spec s;
    ct_parse_error err;
    char want[1024];
    assert_int_equal(ct_spec_parse(spec, strlen(spec), CT_COLL_ALLTOALLV, &s, &err), -1);
    snprintf(want, sizeof want, "t.rules:%d:%d: %s: '%s'", line, col + err.column, err.message,
             spec);
    expect_error(text, want);
}

static const malformed bad_specs[] = {
        {"alltoallv pmpi:x=1",
         "t.rules:1:16: unknown parameter 'x' for algorithm 'pmpi' (takes no parameters): "
         "'pmpi:x=1'"},
        {"alltoallv scattered:stride=2",
         "t.rules:1:21: unknown parameter 'stride' for algorithm 'scattered' (parameters: "
         "block_count): 'scattered:stride=2'"},
        {"alltoallv comm_size=2 scattered:block_count=zz",
         "t.rules:1:45: bad value 'zz' for parameter 'block_count' (expected an integer or P, "
         "Q, N, sqrt, sqrtQ[+-k]): 'scattered:block_count=zz'"},
        {"alltoallv scattered:block_count=0",
         "t.rules:1:33: value 0 for parameter 'block_count' of 'scattered' is out of range "
         "(1..P): 'scattered:block_count=0'"},
        {"alltoallv scattered:block_count=2,block_count=3",
         "t.rules:1:35: parameter 'block_count' given twice: "
         "'scattered:block_count=2,block_count=3'"},
        {"alltoallv scattered:block_count",
         "t.rules:1:21: missing '=' in parameter 'block_count': 'scattered:block_count'"},
        {"alltoallv scattered:", "t.rules:1:21: empty parameter: 'scattered:'"},
        {"alltoallv multipair_waitany:stride=4,",
         "t.rules:1:38: empty parameter: 'multipair_waitany:stride=4,'"},
        {"alltoallv :block_count=2", "t.rules:1:11: empty algorithm name: ':block_count=2'"},
        {"alltoallv multipair_blocking:stride=sqrtq\r\n",
         "t.rules:1:37: bad value 'sqrtq' for parameter 'stride' (expected an integer or P, Q, "
         "N, sqrt, sqrtQ[+-k]): 'multipair_blocking:stride=sqrtq'"},
};

static void test_malformed_specs(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(bad_specs); i++)
        expect_error(bad_specs[i].text, bad_specs[i].msg);

    expect_spec_error("alltoallv bogus", "bogus", 1, 11);
    expect_spec_error("alltoallv ppn=2-8 scatterd:block_count=4", "scatterd:block_count=4", 1, 19);
    expect_spec_error("\n\n  alltoallv\tPMPI", "PMPI", 3, 13);

    /* With today's registry in front. */
    char msg[1024];
    ct_ruleset rs;
    assert_int_equal(rules_parse("alltoallv bogus", "t.rules", &rs, msg, sizeof msg), -1);
    const char *prefix = "t.rules:1:11: unknown algorithm 'bogus' for alltoallv (known: pmpi, "
                         "pairwise, nonblocking, linear, scattered, multipair_blocking, "
                         "multipair_waitany, multipair_testany";
    assert_int_equal(strncmp(msg, prefix, strlen(prefix)), 0);
    const char *tail = ": 'bogus'";
    assert_string_equal(msg + strlen(msg) - strlen(tail), tail);
}

static void test_malformed_later_line(void **state)
{
    (void)state;
    /* The error names the right line after good rules (which are freed). */
    expect_error("# c\r\n"
                 "alltoallv pmpi\r\n"
                 "\r\n"
                 "alltoallv comm_size=1-4 pairwise\r\n"
                 "alltoallv scattered:block_count=2 # ok\r\n"
                 "alltoallv nodes=4-1 linear\r\n"
                 "alltoallv bogus\r\n",
                 "t.rules:6:17: empty range (4 > 1): '4-1'");
    /* A rule after enough good ones to have grown the array. */
    char text[4096] = "";
    for (int i = 0; i < 20; i++)
        strcat(text, "alltoallv comm_size=3 linear\n");
    strcat(text, "   alltoallv comm_size=3 linear extra\n");
    expect_error(text, "t.rules:21:26: expected key=range (the algorithm spec comes last): "
                       "'linear'");
}

/* Every bad line is reported, in order, and nothing is kept. */
typedef struct collected {
    int count;
    char msgs[4][CT_RULES_MSG_MAX];
} collected;

static void collect(void *arg, const char *msg)
{
    collected *c = arg;
    if (c->count < 4)
        snprintf(c->msgs[c->count], sizeof c->msgs[0], "%s", msg);
    c->count++;
}

static void test_every_error_reported(void **state)
{
    (void)state;
    ct_ruleset rs;
    collected c = {0};
    const char *text = "alltoallv comm_size=4-2 pmpi\n"
                       "alltoallv pairwise\n"
                       "# fine\n"
                       "alltoallv bogus=1 pmpi\n"
                       "alltoallv linear\n"
                       "alltoallv\n";
    assert_int_equal(ct_rules_parse_report(text, "t.rules", &rs, collect, &c), 3);
    assert_int_equal(c.count, 3);
    assert_string_equal(c.msgs[0], "t.rules:1:21: empty range (4 > 2): '4-2'");
    assert_string_equal(c.msgs[1], "t.rules:4:11: unknown key (known: " KNOWN_KEYS "): 'bogus'");
    assert_string_equal(c.msgs[2], "t.rules:6:1: missing algorithm spec: 'alltoallv'");
    assert_int_equal(rs.count, 0);
    assert_null(rs.rules);
    assert_null(rs.name);
    /* Without a callback the count is still right; a good text gives 0. */
    assert_int_equal(ct_rules_parse_report(text, "t.rules", &rs, NULL, NULL), 3);
    assert_int_equal(ct_rules_parse_report("alltoallv pmpi\n", "t.rules", &rs, NULL, NULL), 0);
    assert_int_equal(rs.count, 1);
    ct_rules_free(&rs);
    /* A missing file is one error through the same callback. */
    c.count = 0;
    assert_int_equal(ct_rules_load_report("/nonexistent/x.rules", &rs, collect, &c), 1);
    assert_string_equal(c.msgs[0], "/nonexistent/x.rules: cannot open rules file: No such file "
                                   "or directory");
}

static void test_message_buffer(void **state)
{
    (void)state;
    ct_ruleset rs;
    /* A short buffer is filled and terminated. */
    char small[16];
    assert_int_equal(rules_parse("alltoallv", "t.rules", &rs, small, sizeof small), -1);
    assert_string_equal(small, "t.rules:1:1: mi");
    /* No buffer at all. */
    assert_int_equal(rules_parse("alltoallv", "t.rules", &rs, NULL, 0), -1);
    assert_int_equal(rs.count, 0);
    assert_int_equal(rules_parse("alltoallv pmpi", "t.rules", &rs, NULL, 0), 0);
    assert_int_equal(rs.count, 1);
    ct_rules_free(&rs);
}

static void test_rules_free(void **state)
{
    (void)state;
    ct_ruleset rs;
    memset(&rs, 0, sizeof rs);
    ct_rules_free(&rs);
    ct_rules_free(&rs);
    ct_rules_free(NULL);
}

/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

/* Writes len bytes of text to a new temporary file; returns its path. */
static char *write_temp(const char *text, size_t len)
{
    char *path = strdup("/tmp/coltune_test_rules_XXXXXX");
    assert_non_null(path);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    assert_int_equal(close(fd), 0);
    return path;
}

static void test_load_file(void **state)
{
    (void)state;
    const char *text = "# test\nalltoallv comm_size=2-8 scattered:block_count=4\nalltoallv pmpi\n";
    char *path = write_temp(text, strlen(text));
    ct_ruleset rs;
    char msg[512] = "";
    if (rules_load(path, &rs, msg, sizeof msg) != 0)
        fail_msg("load failed: %s", msg);
    assert_string_equal(rs.name, path);
    assert_int_equal(rs.count, 2);
    assert_int_equal(rs.rules[0].line, 2);
    assert_range(&rs.rules[0], CT_KEY_COMM_SIZE, 2, 8);
    assert_ptr_equal(rs.rules[0].spec.alg, alg("scattered"));
    assert_ptr_equal(rs.rules[1].spec.alg, alg("pmpi"));
    ct_rules_free(&rs);
    unlink(path);
    free(path);
}

static void test_load_large_file(void **state)
{
    (void)state;
    /* Far beyond any initial read buffer. */
    enum { NRULES = 5000 };
    size_t cap = NRULES * 48, used = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (int i = 0; i < NRULES; i++)
        used += (size_t)snprintf(text + used, cap - used, "alltoallv msg_size=%d-%dk pairwise\n",
                                 i, i + 1);
    char *path = write_temp(text, used);
    free(text);
    ct_ruleset rs;
    char msg[512] = "";
    if (rules_load(path, &rs, msg, sizeof msg) != 0)
        fail_msg("load failed: %s", msg);
    assert_int_equal(rs.count, NRULES);
    assert_range(&rs.rules[NRULES - 1], CT_KEY_MSG_SIZE, NRULES - 1, NRULES * KB);
    ct_rules_free(&rs);
    unlink(path);
    free(path);
}

static void test_load_empty_file(void **state)
{
    (void)state;
    char *path = write_temp("", 0);
    ct_ruleset rs;
    char msg[512] = "";
    assert_int_equal(rules_load(path, &rs, msg, sizeof msg), 0);
    assert_int_equal(rs.count, 0);
    assert_string_equal(rs.name, path);
    ct_rules_free(&rs);
    unlink(path);
    free(path);
}

static void test_load_file_with_error(void **state)
{
    (void)state;
    const char *text = "alltoallv pmpi\nalltoallv ppn=2 ppn=3 pmpi\n";
    char *path = write_temp(text, strlen(text));
    ct_ruleset rs;
    char msg[512], want[600];
    assert_int_equal(rules_load(path, &rs, msg, sizeof msg), -1);
    assert_int_equal(rs.count, 0);
    assert_null(rs.rules);
    assert_null(rs.name);
    snprintf(want, sizeof want, "%s:2:17: key given twice: 'ppn'", path);
    assert_string_equal(msg, want);
    unlink(path);
    free(path);
}

static void test_load_nul_byte(void **state)
{
    (void)state;
    static const char text[] = "alltoallv pmpi\n\0alltoallv bogus\n";
    char *path = write_temp(text, sizeof text - 1);
    ct_ruleset rs;
    char msg[512], want[600];
    assert_int_equal(rules_load(path, &rs, msg, sizeof msg), -1);
    assert_int_equal(rs.count, 0);
    snprintf(want, sizeof want, "%s: cannot read rules file: contains a NUL byte", path);
    assert_string_equal(msg, want);
    unlink(path);
    free(path);
}

static void test_load_missing_file(void **state)
{
    (void)state;
    ct_ruleset rs;
    char msg[512], want[600];
    const char *path = "/nonexistent/coltune/no.rules";
    assert_int_equal(rules_load(path, &rs, msg, sizeof msg), -1);
    assert_int_equal(rs.count, 0);
    assert_null(rs.rules);
    assert_null(rs.name);
    snprintf(want, sizeof want, "%s: cannot open rules file: %s", path, strerror(ENOENT));
    assert_string_equal(msg, want);
}

/* Files that are not rules files. A path may name anything; loading one
 * that is not a regular file of at most CT_RULES_MAX_BYTES must neither
 * block nor read without end: each is one error naming the path and the
 * reason, and nothing is parsed. The tests run under alarm(): a regression
 * that blocks kills the test instead of hanging the suite. */
#define FILE_TEST_SECONDS 60

/* Loads path, which must give exactly the one error want and no rules. */
static void assert_refused(const char *path, const char *want)
{
    ct_ruleset rs;
    collected c = {0};
    assert_int_equal(ct_rules_load_report(path, &rs, collect, &c), 1);
    assert_int_equal(c.count, 1);
    assert_string_equal(c.msgs[0], want);
    assert_int_equal(rs.count, 0);
    assert_null(rs.rules);
    assert_null(rs.name);
}

/* assert_refused with want = "<path>: <what>: <reason>". */
static void assert_refused_as(const char *path, const char *what, const char *reason)
{
    char want[CT_RULES_MSG_MAX];
    snprintf(want, sizeof want, "%s: %s: %s", path, what, reason);
    assert_refused(path, want);
}

static void test_load_directory(void **state)
{
    (void)state;
    char dir[] = "/tmp/coltune_test_dir_XXXXXX";
    assert_non_null(mkdtemp(dir));
    alarm(FILE_TEST_SECONDS);
    assert_refused_as(dir, "cannot read rules file", "a directory, not a regular file");
    alarm(0);
    assert_int_equal(rmdir(dir), 0);
}

static void test_load_fifo_without_writer(void **state)
{
    (void)state;
    char dir[] = "/tmp/coltune_test_fifo_XXXXXX", fifo[64];
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/rules", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    alarm(FILE_TEST_SECONDS); /* the old fopen() waited here for a writer forever */
    assert_refused_as(fifo, "cannot read rules file", "a FIFO, not a regular file");
    alarm(0);
    assert_int_equal(unlink(fifo), 0);
    assert_int_equal(rmdir(dir), 0);
}

/* Endless character devices: the old reader grew its buffer without end. */
static void test_load_devices(void **state)
{
    (void)state;
    alarm(FILE_TEST_SECONDS);
    assert_refused_as("/dev/zero", "cannot read rules file", "a character device, not a "
                                                             "regular file");
    assert_refused_as("/dev/urandom", "cannot read rules file", "a character device, not a "
                                                                "regular file");
    /* Even the empty one: COLTUNE_RULES= (empty) is how to turn rules off. */
    assert_refused_as("/dev/null", "cannot read rules file", "a character device, not a "
                                                             "regular file");
    alarm(0);
}

/* A sparse file of the given size (its bytes are NULs); returns its path. */
static char *sparse_temp(size_t size)
{
    char *path = write_temp("", 0);
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)size), 0);
    assert_int_equal(close(fd), 0);
    return path;
}

static void test_load_size_limit(void **state)
{
    (void)state;
    /* One byte over: refused from fstat, before anything is read. */
    char *path = sparse_temp(CT_RULES_MAX_BYTES + 1);
    assert_refused_as(path, "cannot read rules file", "larger than the limit of 4 MiB");
    unlink(path);
    free(path);
    /* Exactly the limit is read (and then refused for its NUL bytes). */
    path = sparse_temp(CT_RULES_MAX_BYTES);
    assert_refused_as(path, "cannot read rules file", "contains a NUL byte");
    unlink(path);
    free(path);
}

/* /proc/self/maps is a regular file whose stat size is 0: it is read (up to
 * the limit) like any text and rejected by the parser at its first line,
 * "<address range> <perms> ...", never taken for rules. */
static void test_load_proc_file(void **state)
{
    (void)state;
    char first[256] = "", want[CT_RULES_MSG_MAX];
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%255s", first), 1);
    assert_int_equal(fclose(f), 0);
    snprintf(want, sizeof want, "/proc/self/maps:1:1: unknown collective (known: "
             KNOWN_COLLS "): '%s'", first);
    ct_ruleset rs;
    collected c = {0};
    alarm(FILE_TEST_SECONDS);
    assert_true(ct_rules_load_report("/proc/self/maps", &rs, collect, &c) >= 1);
    alarm(0);
    assert_string_equal(c.msgs[0], want);
    assert_int_equal(rs.count, 0);
    assert_null(rs.rules);
    assert_null(rs.name);
}

static void test_load_unreadable_paths(void **state)
{
    (void)state;
    assert_refused_as("/nonexistent/coltune/no.rules", "cannot open rules file",
                      strerror(ENOENT));
    char *file = write_temp("alltoallv pmpi\n", 15), below[64];
    snprintf(below, sizeof below, "%s/x.rules", file); /* a path through a file */
    assert_refused_as(below, "cannot open rules file", strerror(ENOTDIR));
    /* Without permission (root reads anything: then the file is good). */
    assert_int_equal(chmod(file, 0), 0);
    if (geteuid() != 0) {
        assert_refused_as(file, "cannot open rules file", strerror(EACCES));
    } else {
        ct_ruleset rs;
        char msg[CT_RULES_MSG_MAX] = "";
        if (rules_load(file, &rs, msg, sizeof msg) != 0)
            fail_msg("root could not load %s: %s", file, msg);
        assert_int_equal(rs.count, 1);
        ct_rules_free(&rs);
    }
    unlink(file);
    free(file);
}

/* The reader itself at a small limit: exactly max bytes are read, one more
 * is refused; a file whose stat size is 0 but which holds more than max
 * bytes (/proc) is refused by the bounded read loop, and one within the
 * limit is read whole. */
static void test_read_file_bounds(void **state)
{
    (void)state;
    char *text, why[128];
    size_t len;
    char *path = write_temp("0123456789abcdef", 16);
    assert_int_equal(ct_read_file(path, 16, &text, &len, why, sizeof why), CT_READ_OK);
    assert_int_equal(len, 16);
    assert_string_equal(text, "0123456789abcdef");
    free(text);
    assert_int_equal(ct_read_file(path, 15, &text, &len, why, sizeof why), CT_READ_CANNOT_READ);
    assert_null(text);
    assert_string_equal(why, "larger than the limit of 15 bytes");
    unlink(path);
    free(path);
    alarm(FILE_TEST_SECONDS);
    assert_int_equal(ct_read_file("/proc/self/maps", 1024, &text, &len, why, sizeof why),
                     CT_READ_CANNOT_READ);
    alarm(0);
    assert_null(text);
    assert_string_equal(why, "larger than the limit of 1 KiB");
    /* Another size-0 file, larger than the first buffer: read whole, growing. */
    assert_int_equal(ct_read_file("/proc/self/smaps", CT_RULES_MAX_BYTES, &text, &len, why,
                                  sizeof why),
                     CT_READ_OK);
    assert_true(len > 4096);
    assert_int_equal(strlen(text), len);
    free(text);
    assert_int_equal(ct_read_file("/nonexistent", 16, &text, &len, why, sizeof why),
                     CT_READ_CANNOT_OPEN);
    assert_string_equal(why, strerror(ENOENT));
}

/* Writes every malformed case as DIR/NN.rules with DIR/NN.msg, its message
 * with the file named by its path (tests/mpi/info.sh). */
static int write_cases(const char *dir)
{
    const malformed *tables[] = {bad_conditions, bad_specs};
    const size_t sizes[] = {ARRAY_LEN(bad_conditions), ARRAY_LEN(bad_specs)};
    int n = 0;
    for (size_t t = 0; t < 2; t++) {
        for (size_t i = 0; i < sizes[t]; i++, n++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%02d.rules", dir, n);
            FILE *f = fopen(path, "w");
            if (f == NULL || fputs(tables[t][i].text, f) == EOF || fclose(f) != 0)
                return perror(path), 1;
            const char *msg = tables[t][i].msg;
            snprintf(path, sizeof path, "%s/%02d.msg", dir, n);
            f = fopen(path, "w");
            /* every message starts with "t.rules:" */
            if (f == NULL || fprintf(f, "%s/%02d.rules%s\n", dir, n, msg + 7) < 0 ||
                fclose(f) != 0)
                return perror(path), 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-cases") == 0)
        return write_cases(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_multiple_rules),
        cmocka_unit_test(test_parse_range_forms),
        cmocka_unit_test(test_parse_persistent),
        cmocka_unit_test(test_parse_graph_keys),
        cmocka_unit_test(test_parse_suffixes),
        cmocka_unit_test(test_parse_expressions_in_specs),
        cmocka_unit_test(test_parse_crlf_and_edges),
        cmocka_unit_test(test_parse_empty_files),
        cmocka_unit_test(test_parse_many_rules),
        cmocka_unit_test(test_parse_null_name),
        cmocka_unit_test(test_malformed_conditions),
        cmocka_unit_test(test_malformed_specs),
        cmocka_unit_test(test_malformed_later_line),
        cmocka_unit_test(test_every_error_reported),
        cmocka_unit_test(test_message_buffer),
        cmocka_unit_test(test_rules_free),
        cmocka_unit_test(test_load_file),
        cmocka_unit_test(test_load_large_file),
        cmocka_unit_test(test_load_empty_file),
        cmocka_unit_test(test_load_file_with_error),
        cmocka_unit_test(test_load_nul_byte),
        cmocka_unit_test(test_load_missing_file),
        cmocka_unit_test(test_load_directory),
        cmocka_unit_test(test_load_fifo_without_writer),
        cmocka_unit_test(test_load_devices),
        cmocka_unit_test(test_load_size_limit),
        cmocka_unit_test(test_load_proc_file),
        cmocka_unit_test(test_load_unreadable_paths),
        cmocka_unit_test(test_read_file_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
