/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_spec.c - algorithm specs: sizes, expressions, parsing, resolving.
 *
 * Exact error messages are asserted with the algorithms registered today
 * (pmpi, pairwise, ..., scattered:block_count, multipair_*:stride); lists
 * that grow with the registry are built from the registry itself, so new
 * entries do not break these tests.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "select/spec.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const ct_algorithm *alg(const char *name)
{
    const ct_algorithm *a = ct_algorithm_find(CT_COLL_ALLTOALLV, name, strlen(name));
    assert_non_null(a);
    return a;
}

/* ------------------------------------------------------------------ */
/* ct_size_parse                                                       */
/* ------------------------------------------------------------------ */

static void test_size_parse_valid(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        long value;
    } cases[] = {
        {"0", 0},
        {"7", 7},
        {"123", 123},
        {"007", 7},
        {"4k", 4096},
        {"4K", 4096},
        {"0k", 0},
        {"2m", 2L * 1024 * 1024},
        {"2M", 2L * 1024 * 1024},
        {"1g", 1024L * 1024 * 1024},
        {"3G", 3L * 1024 * 1024 * 1024},
        {"9223372036854775807", LONG_MAX},
        {"8589934591g", 8589934591L * 1024 * 1024 * 1024},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        long v = -1;
        if (ct_size_parse(cases[i].text, strlen(cases[i].text), &v) != 0)
            fail_msg("ct_size_parse rejected '%s'", cases[i].text);
        if (v != cases[i].value)
            fail_msg("ct_size_parse('%s') = %ld, want %ld", cases[i].text, v, cases[i].value);
    }
}

static void test_size_parse_invalid(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "",    "k",     "K",    "-1",  "+1",   "1x",   "1kb",  "1kk", " 1", "1 ",
        "1.5", "0x10",  "1e3",  "k1",  "1 k",  "9223372036854775808",
        "99999999999999999999999", "8589934592g", "8796093022208m", "9007199254740992k",
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        long v = 42;
        if (ct_size_parse(cases[i], strlen(cases[i]), &v) == 0)
            fail_msg("ct_size_parse accepted '%s' as %ld", cases[i], v);
        assert_int_equal(v, 42); /* untouched on error */
    }
}

static void test_size_parse_respects_len(void **state)
{
    (void)state;
    long v = 0;
    assert_int_equal(ct_size_parse("123abc", 3, &v), 0);
    assert_int_equal(v, 123);
    assert_int_equal(ct_size_parse("2kx", 2, &v), 0);
    assert_int_equal(v, 2048);
    assert_int_equal(ct_size_parse("5", 0, &v), -1);
}

/* ------------------------------------------------------------------ */
/* ct_expr_parse / ct_expr_format / ct_expr_eval                       */
/* ------------------------------------------------------------------ */

static void test_expr_parse_valid(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        ct_term term;
        long offset;
        const char *formatted; /* ct_expr_format of the result */
    } cases[] = {
        {"0", CT_TERM_CONST, 0, "0"},
        {"5", CT_TERM_CONST, 5, "5"},
        {"4k", CT_TERM_CONST, 4096, "4096"},
        {"1M", CT_TERM_CONST, 1048576, "1048576"},
        {"P", CT_TERM_P, 0, "P"},
        {"P-1", CT_TERM_P, -1, "P-1"},
        {"P+3", CT_TERM_P, 3, "P+3"},
        {"P+0", CT_TERM_P, 0, "P"},
        {"Q", CT_TERM_Q, 0, "Q"},
        {"Q-1", CT_TERM_Q, -1, "Q-1"},
        {"N", CT_TERM_N, 0, "N"},
        {"N-1", CT_TERM_N, -1, "N-1"},
        {"N+12", CT_TERM_N, 12, "N+12"},
        {"sqrt", CT_TERM_SQRT_P, 0, "sqrt"},
        {"sqrt+1", CT_TERM_SQRT_P, 1, "sqrt+1"},
        {"sqrt-2", CT_TERM_SQRT_P, -2, "sqrt-2"},
        {"sqrtQ", CT_TERM_SQRT_Q, 0, "sqrtQ"},
        {"sqrtQ-1", CT_TERM_SQRT_Q, -1, "sqrtQ-1"},
        {"(N-1)*Q", CT_TERM_NM1_Q, 0, "(N-1)*Q"},
        {"(N-1)*Q+1", CT_TERM_NM1_Q, 1, "(N-1)*Q+1"},
        {"(N-1)*Q-2", CT_TERM_NM1_Q, -2, "(N-1)*Q-2"},
        {"P+2147483647", CT_TERM_P, 2147483647L, "P+2147483647"},
        {"P-2147483647", CT_TERM_P, -2147483647L, "P-2147483647"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        ct_expr e = {CT_TERM_P, 99};
        if (ct_expr_parse(cases[i].text, strlen(cases[i].text), &e) != 0)
            fail_msg("ct_expr_parse rejected '%s'", cases[i].text);
        if (e.term != cases[i].term || e.offset != cases[i].offset)
            fail_msg("ct_expr_parse('%s') = {%d, %ld}", cases[i].text, (int)e.term, e.offset);
        char buf[64];
        ct_expr_format(e, buf, sizeof buf);
        assert_string_equal(buf, cases[i].formatted);
        /* What ct_expr_format writes parses back to the same expression. */
        ct_expr back;
        assert_int_equal(ct_expr_parse(buf, strlen(buf), &back), 0);
        assert_int_equal(back.term, e.term);
        assert_true(back.offset == e.offset);
    }
}

static void test_expr_parse_invalid(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "",          "p",        "q",       "n",         "SQRT",     "sqrtq",
        "sqr",       "sqrtP",    "P+",      "P-",        "P+-1",     "P--1",
        "P*2",       "P/2",      "-1",      "+1",        "+P",       "PP",
        "P 1",       " P",       "P ",      "Q-1x",      "P+1.5",    "(N-1)*Q-",
        "(N-1)",     "(N-1)*P",  "(n-1)*Q", "N-1*Q",     "x",        "P+2147483648",
        "P-2147483648", "sqrt(P)", "P1",     "1P",        "4kk",
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        ct_expr e;
        if (ct_expr_parse(cases[i], strlen(cases[i]), &e) == 0)
            fail_msg("ct_expr_parse accepted '%s'", cases[i]);
    }
}

static void test_expr_parse_respects_len(void **state)
{
    (void)state;
    ct_expr e;
    assert_int_equal(ct_expr_parse("P-1,stride=2", 3, &e), 0);
    assert_int_equal(e.term, CT_TERM_P);
    assert_true(e.offset == -1);
    /* "sqrtQ" cut to 4 characters is "sqrt", not "sqrtQ". */
    assert_int_equal(ct_expr_parse("sqrtQ", 4, &e), 0);
    assert_int_equal(e.term, CT_TERM_SQRT_P);
}

static long eval_text(const char *text, long P, long Q, long N)
{
    ct_expr e;
    ct_shape env = {P, Q, N};
    assert_int_equal(ct_expr_parse(text, strlen(text), &e), 0);
    return ct_expr_eval(e, &env);
}

static void test_expr_eval_sqrt_rounding(void **state)
{
    (void)state;
    static const long want[][2] = {
        {1, 1}, {2, 1}, {3, 2}, {4, 2}, {6, 2},  {7, 3},  {8, 3},
        {9, 3}, {12, 3}, {13, 4}, {16, 4}, {20, 4}, {21, 5}, {64, 8},
    };
    for (size_t i = 0; i < ARRAY_LEN(want); i++) {
        long P = want[i][0];
        if (eval_text("sqrt", P, 1, P) != want[i][1])
            fail_msg("sqrt at P=%ld: got %ld, want %ld", P, eval_text("sqrt", P, 1, P),
                     want[i][1]);
        /* sqrtQ uses Q the same way. */
        if (eval_text("sqrtQ", 1000, P, 1) != want[i][1])
            fail_msg("sqrtQ at Q=%ld: got %ld, want %ld", P, eval_text("sqrtQ", 1000, P, 1),
                     want[i][1]);
    }
}

static void test_expr_eval_terms(void **state)
{
    (void)state;
    /* P=12 ranks as N=3 nodes of Q=4. */
    assert_int_equal(eval_text("7", 12, 4, 3), 7);
    assert_int_equal(eval_text("2k", 12, 4, 3), 2048);
    assert_int_equal(eval_text("P", 12, 4, 3), 12);
    assert_int_equal(eval_text("P-1", 12, 4, 3), 11);
    assert_int_equal(eval_text("P+5", 12, 4, 3), 17);
    assert_int_equal(eval_text("Q", 12, 4, 3), 4);
    assert_int_equal(eval_text("Q-1", 12, 4, 3), 3);
    assert_int_equal(eval_text("N", 12, 4, 3), 3);
    assert_int_equal(eval_text("N-1", 12, 4, 3), 2);
    assert_int_equal(eval_text("sqrt", 12, 4, 3), 3);
    assert_int_equal(eval_text("sqrt+1", 12, 4, 3), 4);
    assert_int_equal(eval_text("sqrtQ", 12, 4, 3), 2);
    assert_int_equal(eval_text("(N-1)*Q", 12, 4, 3), 8);
    assert_int_equal(eval_text("(N-1)*Q+1", 12, 4, 3), 9);
    /* Other communicators. */
    assert_int_equal(eval_text("P-1", 1, 1, 1), 0);
    assert_int_equal(eval_text("(N-1)*Q", 1, 1, 1), 0);
    assert_int_equal(eval_text("(N-1)*Q", 64, 16, 4), 48);
    assert_int_equal(eval_text("sqrtQ", 64, 16, 4), 4);
    assert_int_equal(eval_text("sqrt", 64, 16, 4), 8);
    assert_int_equal(eval_text("N+2", 64, 16, 4), 6);
    assert_int_equal(eval_text("sqrt-1", 2, 2, 1), 0);
}

/* ------------------------------------------------------------------ */
/* ct_spec_parse                                                       */
/* ------------------------------------------------------------------ */

static void parse_ok(const char *text, ct_spec *spec)
{
    ct_parse_error err = {0, ""};
    if (ct_spec_parse(text, strlen(text), CT_COLL_ALLTOALLV, spec, &err) != 0)
        fail_msg("ct_spec_parse('%s') failed: %d: %s", text, err.column, err.message);
}

static void test_spec_parse_plain_names(void **state)
{
    (void)state;
    static const char *const names[] = {"pmpi", "pairwise", "nonblocking", "linear",
                                        "scattered", "multipair_blocking",
                                        "multipair_waitany", "multipair_testany"};
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        ct_spec s;
        parse_ok(names[i], &s);
        assert_ptr_equal(s.alg, alg(names[i]));
        assert_int_equal(s.set_mask, 0);
        /* Unset parameters hold the registry default. */
        for (int p = 0; p < s.alg->nparams; p++) {
            assert_int_equal(s.values[p].term, s.alg->params[p].def.term);
            assert_true(s.values[p].offset == s.alg->params[p].def.offset);
        }
    }
}

static void test_spec_parse_with_params(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *alg;
        ct_term term;
        long offset;
    } cases[] = {
        {"scattered:block_count=4", "scattered", CT_TERM_CONST, 4},
        {"scattered:block_count=1", "scattered", CT_TERM_CONST, 1},
        {"scattered:block_count=1k", "scattered", CT_TERM_CONST, 1024},
        {"scattered:block_count=P-1", "scattered", CT_TERM_P, -1},
        {"scattered:block_count=sqrtQ+1", "scattered", CT_TERM_SQRT_Q, 1},
        {"multipair_blocking:stride=sqrt", "multipair_blocking", CT_TERM_SQRT_P, 0},
        {"multipair_waitany:stride=Q", "multipair_waitany", CT_TERM_Q, 0},
        {"multipair_testany:stride=(N-1)*Q", "multipair_testany", CT_TERM_NM1_Q, 0},
        {"multipair_testany:stride=N+1", "multipair_testany", CT_TERM_N, 1},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        ct_spec s;
        parse_ok(cases[i].text, &s);
        assert_ptr_equal(s.alg, alg(cases[i].alg));
        assert_int_equal(s.set_mask, 1);
        assert_int_equal(s.values[0].term, cases[i].term);
        assert_true(s.values[0].offset == cases[i].offset);
    }
}

static void test_spec_parse_respects_len(void **state)
{
    (void)state;
    ct_spec s;
    ct_parse_error err;
    const char *line = "scattered:block_count=8 # comment";
    assert_int_equal(ct_spec_parse(line, 23, CT_COLL_ALLTOALLV, &s, &err), 0);
    assert_ptr_equal(s.alg, alg("scattered"));
    assert_true(s.values[0].offset == 8);
    assert_int_equal(ct_spec_parse("pairwise linear", 8, CT_COLL_ALLTOALLV, &s, &err), 0);
    assert_ptr_equal(s.alg, alg("pairwise"));
}

/* "pmpi, pairwise, ..." for coll, in registry order. */
static void known_algorithms(ct_coll coll, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; i < ct_algorithm_count(); i++) {
        const ct_algorithm *a = ct_algorithm_at(i);
        if (a->coll != coll)
            continue;
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", used ? ", " : "", a->name);
    }
}

static void expect_error(const char *text, int column, const char *message)
{
    ct_spec s;
    ct_parse_error err = {-7, "untouched"};
    if (ct_spec_parse(text, strlen(text), CT_COLL_ALLTOALLV, &s, &err) == 0)
        fail_msg("ct_spec_parse accepted '%s'", text);
    /* The message buffer holds 255 characters; compare what fits. */
    char want[sizeof err.message];
    snprintf(want, sizeof want, "%s", message);
    if (strcmp(err.message, want) != 0 || err.column != column)
        fail_msg("ct_spec_parse('%s'):\n  got  %d: %s\n  want %d: %s", text, err.column,
                 err.message, column, want);
}

/* "unknown algorithm '<quoted>' for alltoallv (known: <registry>)". A message
 * that would pass 255 characters (a registry grown long) must be cut at a
 * name boundary and end in ", ...)". */
static void expect_unknown_algorithm(const char *text, const char *quoted)
{
    char known[2048], want[2400];
    known_algorithms(CT_COLL_ALLTOALLV, known, sizeof known);
    snprintf(want, sizeof want, "unknown algorithm '%s' for alltoallv (known: %s)", quoted, known);
    if (strlen(want) < sizeof(((ct_parse_error *)0)->message)) {
        expect_error(text, 0, want);
        return;
    }
    ct_spec s;
    ct_parse_error err;
    assert_int_equal(ct_spec_parse(text, strlen(text), CT_COLL_ALLTOALLV, &s, &err), -1);
    assert_int_equal(err.column, 0);
    size_t n = strlen(err.message);
    assert_true(n >= 6 && strcmp(err.message + n - 6, ", ...)") == 0);
    assert_int_equal(strncmp(err.message, want, n - 6), 0);
    assert_true(want[n - 6] == ','); /* cut after a whole name */
}

static void test_spec_parse_unknown_algorithm(void **state)
{
    (void)state;
    char known[2048];
    known_algorithms(CT_COLL_ALLTOALLV, known, sizeof known);
    /* Today's registry, in registry order (new entries go after these). */
    const char *today = "pmpi, pairwise, nonblocking, linear, scattered, multipair_blocking, "
                        "multipair_waitany, multipair_testany";
    assert_int_equal(strncmp(known, today, strlen(today)), 0);

    expect_unknown_algorithm("bogus", "bogus");
    expect_unknown_algorithm("bogus:block_count=2", "bogus");
    expect_unknown_algorithm("PMPI", "PMPI");
    expect_unknown_algorithm("pmpi ", "pmpi ");
    expect_unknown_algorithm("pair wise", "pair wise");
    expect_unknown_algorithm("pmpi=1", "pmpi=1");
    expect_unknown_algorithm("scattered,block_count=2", "scattered,block_count=2");
    /* A long name is echoed cut to 48 characters. */
    expect_unknown_algorithm(
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...");
}

static void test_spec_parse_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int column;
        const char *message;
    } cases[] = {
        {"", 0, "empty algorithm name"},
        {":block_count=4", 0, "empty algorithm name"},
        {":", 0, "empty algorithm name"},
        {"pmpi:x=1", 5, "unknown parameter 'x' for algorithm 'pmpi' (takes no parameters)"},
        {"pairwise:stride=2", 9,
         "unknown parameter 'stride' for algorithm 'pairwise' (takes no parameters)"},
        {"scattered:stride=2", 10,
         "unknown parameter 'stride' for algorithm 'scattered' (parameters: block_count)"},
        {"scattered:Block_count=2", 10,
         "unknown parameter 'Block_count' for algorithm 'scattered' (parameters: block_count)"},
        {"scattered:=2", 10,
         "unknown parameter '' for algorithm 'scattered' (parameters: block_count)"},
        {"multipair_blocking:block_count=2", 19,
         "unknown parameter 'block_count' for algorithm 'multipair_blocking' (parameters: "
         "stride)"},
        {"scattered:block_count=x", 22,
         "bad value 'x' for parameter 'block_count' (expected an integer or P, Q, N, sqrt, "
         "sqrtQ[+-k])"},
        {"scattered:block_count=", 22,
         "bad value '' for parameter 'block_count' (expected an integer or P, Q, N, sqrt, "
         "sqrtQ[+-k])"},
        {"scattered:block_count=-1", 22,
         "bad value '-1' for parameter 'block_count' (expected an integer or P, Q, N, sqrt, "
         "sqrtQ[+-k])"},
        {"scattered:block_count=4 ", 22,
         "bad value '4 ' for parameter 'block_count' (expected an integer or P, Q, N, sqrt, "
         "sqrtQ[+-k])"},
        {"scattered:block_count=P*2", 22,
         "bad value 'P*2' for parameter 'block_count' (expected an integer or P, Q, N, sqrt, "
         "sqrtQ[+-k])"},
        {"multipair_waitany:stride=sqrtq", 25,
         "bad value 'sqrtq' for parameter 'stride' (expected an integer or P, Q, N, sqrt, "
         "sqrtQ[+-k])"},
        {"scattered:block_count=4=5", 22,
         "bad value '4=5' for parameter 'block_count' (expected an integer or P, Q, N, sqrt, "
         "sqrtQ[+-k])"},
        {"scattered:block_count=4:5", 22,
         "bad value '4:5' for parameter 'block_count' (expected an integer or P, Q, N, sqrt, "
         "sqrtQ[+-k])"},
        {"scattered:block_count=0", 22,
         "value 0 for parameter 'block_count' of 'scattered' is out of range (1..P)"},
        {"multipair_testany:stride=0", 25,
         "value 0 for parameter 'stride' of 'multipair_testany' is out of range (1..P)"},
        {"scattered:block_count=4,block_count=5", 24, "parameter 'block_count' given twice"},
        {"scattered:block_count=P,block_count=P", 24, "parameter 'block_count' given twice"},
        {"scattered:block_count", 10, "missing '=' in parameter 'block_count'"},
        {"scattered:block_count=2,x", 24, "missing '=' in parameter 'x'"},
        {"scattered:", 10, "empty parameter"},
        {"scattered:block_count=4,", 24, "empty parameter"},
        {"scattered:,block_count=4", 10, "empty parameter"},
        {"scattered:block_count=4,,", 24, "empty parameter"},
        {"pmpi:", 5, "empty parameter"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        expect_error(cases[i].text, cases[i].column, cases[i].message);
}

static void test_spec_parse_null_err(void **state)
{
    (void)state;
    ct_spec s;
    assert_int_equal(ct_spec_parse("bogus", 5, CT_COLL_ALLTOALLV, &s, NULL), -1);
    assert_int_equal(ct_spec_parse("pmpi", 4, CT_COLL_ALLTOALLV, &s, NULL), 0);
}

/* ------------------------------------------------------------------ */
/* ct_spec_default / ct_spec_resolve / ct_spec_format_resolved          */
/* ------------------------------------------------------------------ */

static void test_spec_default(void **state)
{
    (void)state;
    ct_spec s;
    memset(&s, 0xa5, sizeof s);
    ct_spec_default(alg("scattered"), &s);
    assert_ptr_equal(s.alg, alg("scattered"));
    assert_int_equal(s.set_mask, 0);
    assert_int_equal(s.values[0].term, CT_TERM_CONST);
    assert_true(s.values[0].offset == 32);

    ct_spec_default(alg("pmpi"), &s);
    assert_ptr_equal(s.alg, alg("pmpi"));
    assert_int_equal(s.set_mask, 0);
}

/* Resolves text at env; returns the resolved first parameter. */
static long resolve_ok(const char *text, long P, long Q, long N)
{
    ct_spec s;
    ct_shape env = {P, Q, N};
    long params[CT_MAX_PARAMS] = {-1, -1, -1, -1};
    char why[128] = "";
    parse_ok(text, &s);
    if (ct_spec_resolve(&s, &env, params, why, sizeof why) != NULL)
        fail_msg("resolving '%s' at P=%ld Q=%ld N=%ld failed: %s", text, P, Q, N, why);
    return params[0];
}

static void resolve_fails(const char *text, long P, long Q, long N, const char *want)
{
    ct_spec s;
    ct_shape env = {P, Q, N};
    long params[CT_MAX_PARAMS];
    char why[128] = "";
    parse_ok(text, &s);
    const char *r = ct_spec_resolve(&s, &env, params, why, sizeof why);
    if (r == NULL)
        fail_msg("resolving '%s' at P=%ld succeeded, want '%s'", text, P, want);
    assert_ptr_equal(r, why);
    assert_string_equal(why, want);
}

static void test_resolve_clamps_defaults(void **state)
{
    (void)state;
    /* scattered's block_count default 32 acts as min(32, P). */
    assert_int_equal(resolve_ok("scattered", 4, 4, 1), 4);
    assert_int_equal(resolve_ok("scattered", 1, 1, 1), 1);
    assert_int_equal(resolve_ok("scattered", 31, 31, 1), 31);
    assert_int_equal(resolve_ok("scattered", 32, 16, 2), 32);
    assert_int_equal(resolve_ok("scattered", 64, 16, 4), 32);
    /* multipair stride default 8. */
    assert_int_equal(resolve_ok("multipair_blocking", 3, 3, 1), 3);
    assert_int_equal(resolve_ok("multipair_waitany", 100, 10, 10), 8);
}

static void test_resolve_given_values(void **state)
{
    (void)state;
    assert_int_equal(resolve_ok("scattered:block_count=4", 4, 4, 1), 4);
    assert_int_equal(resolve_ok("scattered:block_count=1", 1, 1, 1), 1);
    assert_int_equal(resolve_ok("scattered:block_count=P", 9, 3, 3), 9);
    assert_int_equal(resolve_ok("scattered:block_count=P-1", 8, 8, 1), 7);
    assert_int_equal(resolve_ok("multipair_blocking:stride=sqrt", 12, 4, 3), 3);
    assert_int_equal(resolve_ok("multipair_waitany:stride=sqrt", 64, 8, 8), 8);
    assert_int_equal(resolve_ok("multipair_testany:stride=(N-1)*Q", 12, 4, 3), 8);
    assert_int_equal(resolve_ok("multipair_testany:stride=Q+1", 12, 4, 3), 5);
    assert_int_equal(resolve_ok("multipair_testany:stride=N", 12, 4, 3), 3);
    assert_int_equal(resolve_ok("multipair_testany:stride=sqrtQ", 64, 16, 4), 4);
}

/* A CT_CLAMP parameter given above its range acts as its maximum (as
 * MPICH's throttle: scattered:block_count=32 is min(32, P)); below its
 * range it is still out of range (test_resolve_out_of_range). */
static void test_resolve_clamps_above(void **state)
{
    (void)state;
    assert_int_equal(resolve_ok("scattered:block_count=100", 8, 8, 1), 8);
    assert_int_equal(resolve_ok("scattered:block_count=5", 4, 2, 2), 4);
    assert_int_equal(resolve_ok("scattered:block_count=P+1", 16, 4, 4), 16);
    assert_int_equal(resolve_ok("scattered:block_count=32", 64, 64, 1), 32);
    assert_int_equal(resolve_ok("tuna_hier_coalesced:radix=Q+5", 64, 16, 4), 17);
}

static void test_resolve_out_of_range(void **state)
{
    (void)state;
    resolve_fails("scattered:block_count=P-1", 1, 1, 1, "block_count=0 out of range 1..1 at P=1");
    resolve_fails("scattered:block_count=P-9", 8, 8, 1, "block_count=-1 out of range 1..8 at P=8");
    resolve_fails("multipair_blocking:stride=(N-1)*Q", 4, 4, 1,
                  "stride=0 out of range 1..4 at P=4");
    resolve_fails("multipair_waitany:stride=sqrt-1", 2, 2, 1, "stride=0 out of range 1..2 at P=2");
    resolve_fails("multipair_testany:stride=4k", 64, 8, 8, "stride=4096 out of range 1..64 at P=64");
}

/* Algorithms that exist only in this test, to cover bounds the registry
 * does not use today (a constant minimum above 1, two parameters). */
static const ct_algorithm fake_tuna = {
    .name = "tuna",
    .coll = CT_COLL_ALLTOALLV,
    .summary = "test only",
    .nparams = 1,
    .params = {{"radix", {CT_TERM_CONST, 2}, {CT_TERM_P, 0}, {CT_TERM_CONST, 2}, "digits",
                CT_RANGE}},
};

static const ct_algorithm fake_two = {
    .name = "two",
    .coll = CT_COLL_ALLTOALLV,
    .summary = "test only",
    .nparams = 2,
    .params = {{"a", {CT_TERM_CONST, 0}, {CT_TERM_Q, 0}, {CT_TERM_Q, 1}, "a", CT_RANGE},
               {"b", {CT_TERM_N, 0}, {CT_TERM_P, 0}, {CT_TERM_CONST, 0}, "b", CT_RANGE}},
};

static void test_resolve_fake_algorithms(void **state)
{
    (void)state;
    ct_spec s;
    long params[CT_MAX_PARAMS] = {0};
    char why[128];

    /* radix 2..P is empty at P=1: no default can be clamped into it. */
    ct_shape p1 = {1, 1, 1};
    ct_spec_default(&fake_tuna, &s);
    assert_ptr_equal(ct_spec_resolve(&s, &p1, params, why, sizeof why), why);
    assert_string_equal(why, "radix range 2..1 is empty at P=1");

    ct_shape p8 = {8, 8, 1};
    assert_null(ct_spec_resolve(&s, &p8, params, why, sizeof why));
    assert_int_equal(params[0], 2);

    /* The example of spec.h. */
    s.set_mask = 1;
    s.values[0] = (ct_expr){CT_TERM_CONST, 9};
    assert_ptr_equal(ct_spec_resolve(&s, &p8, params, why, sizeof why), why);
    assert_string_equal(why, "radix=9 out of range 2..8 at P=8");

    /* Defaults clamp from above (a: Q+1 -> Q) and from below (b: 0 -> N). */
    ct_shape e = {12, 4, 3};
    ct_spec_default(&fake_two, &s);
    assert_null(ct_spec_resolve(&s, &e, params, why, sizeof why));
    assert_int_equal(params[0], 4);
    assert_int_equal(params[1], 3);

    /* The second parameter set, the first default. */
    s.set_mask = 2;
    s.values[1] = (ct_expr){CT_TERM_P, -1};
    assert_null(ct_spec_resolve(&s, &e, params, why, sizeof why));
    assert_int_equal(params[0], 4);
    assert_int_equal(params[1], 11);
    s.values[1] = (ct_expr){CT_TERM_CONST, 2};
    assert_non_null(ct_spec_resolve(&s, &e, params, why, sizeof why));
    assert_string_equal(why, "b=2 out of range 3..12 at P=12");
}

static void test_resolve_hand_made_spec(void **state)
{
    (void)state;
    /* A spec with only alg set (values zeroed) resolves like the default. */
    ct_spec s;
    memset(&s, 0, sizeof s);
    s.alg = alg("scattered");
    ct_shape env = {64, 8, 8};
    long params[CT_MAX_PARAMS] = {0};
    char why[64];
    assert_null(ct_spec_resolve(&s, &env, params, why, sizeof why));
    assert_int_equal(params[0], 32);
}

static void test_resolve_small_or_missing_why(void **state)
{
    (void)state;
    ct_spec s;
    ct_shape env = {8, 8, 1};
    long params[CT_MAX_PARAMS];
    char why[8];
    parse_ok("multipair_waitany:stride=100", &s);
    assert_ptr_equal(ct_spec_resolve(&s, &env, params, why, sizeof why), why);
    assert_string_equal(why, "stride="); /* truncated, still terminated */
    const char *r = ct_spec_resolve(&s, &env, params, NULL, 0);
    assert_non_null(r);
    assert_true(strlen(r) > 0);
}

static void test_format_resolved(void **state)
{
    (void)state;
    char buf[64];
    long p[CT_MAX_PARAMS] = {4, 7};
    ct_spec_format_resolved(alg("pmpi"), p, buf, sizeof buf);
    assert_string_equal(buf, "pmpi");
    ct_spec_format_resolved(alg("scattered"), p, buf, sizeof buf);
    assert_string_equal(buf, "scattered:block_count=4");
    ct_spec_format_resolved(alg("multipair_testany"), p, buf, sizeof buf);
    assert_string_equal(buf, "multipair_testany:stride=4");
    ct_spec_format_resolved(&fake_two, p, buf, sizeof buf);
    assert_string_equal(buf, "two:a=4,b=7");

    /* Truncation keeps the buffer terminated. */
    char small[8];
    ct_spec_format_resolved(alg("scattered"), p, small, sizeof small);
    assert_string_equal(small, "scatter");
    ct_spec_format_resolved(&fake_two, p, small, 6);
    assert_string_equal(small, "two:a");
    ct_spec_format_resolved(&fake_two, p, small, 4);
    assert_string_equal(small, "two");
}

static void test_format_resolved_parses_back(void **state)
{
    (void)state;
    /* What the library logs can be pasted into a rules file. */
    ct_shape env = {24, 6, 4};
    for (int i = 0; i < ct_algorithm_count(); i++) {
        const ct_algorithm *a = ct_algorithm_at(i);
        ct_spec s, back;
        long params[CT_MAX_PARAMS], again[CT_MAX_PARAMS];
        char buf[256], why[128];
        ct_spec_default(a, &s);
        if (ct_spec_resolve(&s, &env, params, why, sizeof why) != NULL)
            continue; /* not runnable at this P */
        ct_spec_format_resolved(a, params, buf, sizeof buf);
        ct_parse_error err;
        if (ct_spec_parse(buf, strlen(buf), a->coll, &back, &err) != 0)
            fail_msg("'%s' does not parse back: %s", buf, err.message);
        assert_ptr_equal(back.alg, a);
        assert_null(ct_spec_resolve(&back, &env, again, why, sizeof why));
        assert_memory_equal(params, again, (size_t)a->nparams * sizeof params[0]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_parse_valid),
        cmocka_unit_test(test_size_parse_invalid),
        cmocka_unit_test(test_size_parse_respects_len),
        cmocka_unit_test(test_expr_parse_valid),
        cmocka_unit_test(test_expr_parse_invalid),
        cmocka_unit_test(test_expr_parse_respects_len),
        cmocka_unit_test(test_expr_eval_sqrt_rounding),
        cmocka_unit_test(test_expr_eval_terms),
        cmocka_unit_test(test_spec_parse_plain_names),
        cmocka_unit_test(test_spec_parse_with_params),
        cmocka_unit_test(test_spec_parse_respects_len),
        cmocka_unit_test(test_spec_parse_unknown_algorithm),
        cmocka_unit_test(test_spec_parse_errors),
        cmocka_unit_test(test_spec_parse_null_err),
        cmocka_unit_test(test_spec_default),
        cmocka_unit_test(test_resolve_clamps_defaults),
        cmocka_unit_test(test_resolve_given_values),
        cmocka_unit_test(test_resolve_clamps_above),
        cmocka_unit_test(test_resolve_out_of_range),
        cmocka_unit_test(test_resolve_fake_algorithms),
        cmocka_unit_test(test_resolve_hand_made_spec),
        cmocka_unit_test(test_resolve_small_or_missing_why),
        cmocka_unit_test(test_format_resolved),
        cmocka_unit_test(test_format_resolved_parses_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
