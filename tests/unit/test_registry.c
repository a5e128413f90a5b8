/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_registry.c - consistency of the algorithm registry (algorithms.c, from
 * the list in coll_list.h).
 *
 * Every check loops over the whole registry, so entries added later are
 * checked the same way without editing this file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "algorithms.h"
#include "select/spec.h"

#define MAX_P 64

static void test_indexing(void **state)
{
    (void)state;
    int n = ct_algorithm_count();
    assert_true(n > 0);
    for (int i = 0; i < n; i++) {
        const ct_algorithm *a = ct_algorithm_at(i);
        assert_non_null(a);
        assert_int_equal(ct_algorithm_index(a), i);
    }
    assert_null(ct_algorithm_at(n));
    assert_null(ct_algorithm_at(-1));
}

/* Names end up in rules files and COLTUNE_* variables: no separators. */
static int is_plain_name(const char *s)
{
    if (s == NULL || *s == '\0')
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

static void test_entries_well_formed(void **state)
{
    (void)state;
    for (int i = 0; i < ct_algorithm_count(); i++) {
        const ct_algorithm *a = ct_algorithm_at(i);
        if (!is_plain_name(a->name))
            fail_msg("entry %d: bad name '%s'", i, a->name ? a->name : "(null)");
        assert_true(a->coll >= 0 && a->coll < CT_COLL_COUNT);
        assert_non_null(a->summary);
        assert_true(strlen(a->summary) > 0);
        if (a->nparams < 0 || a->nparams > CT_MAX_PARAMS)
            fail_msg("%s: nparams %d", a->name, a->nparams);
        switch (a->coll) {
        case CT_COLL_ALLTOALLV:
        case CT_COLL_ALLTOALL:
            /* its own function, a schedule (CT_ALLTOALLV_SPLIT_ALG), or both
             * (CT_ALLTOALLV_STEP_ALG) */
            if (a->run.alltoallv == NULL && a->build.alltoallv == NULL)
                fail_msg("%s: needs a run or a build function", a->name);
            break;
        case CT_COLL_IALLTOALLV:
        case CT_COLL_IALLTOALL:
            /* a schedule, or pmpi forwarding the nonblocking call */
            if (a->build.alltoallv == NULL &&
                (strcmp(a->name, "pmpi") != 0 || a->run.alltoallv == NULL))
                fail_msg("%s: serves a nonblocking form without a schedule", a->name);
            break;
        case CT_COLL_ALLGATHER_INTER:
            if (a->run.allgather == NULL)
                fail_msg("%s: no run function", a->name);
            break;
        case CT_COLL_ALLGATHERV_INTER:
            if (a->run.allgatherv == NULL)
                fail_msg("%s: no run function", a->name);
            break;
        case CT_COLL_IALLGATHER_INTER:
            if (a->build.allgather == NULL &&
                (strcmp(a->name, "pmpi") != 0 || a->run.allgather == NULL))
                fail_msg("%s: serves a nonblocking form without a schedule", a->name);
            break;
        case CT_COLL_IALLGATHERV_INTER:
            if (a->build.allgatherv == NULL &&
                (strcmp(a->name, "pmpi") != 0 || a->run.allgatherv == NULL))
                fail_msg("%s: serves a nonblocking form without a schedule", a->name);
            break;
        case CT_COLL_ALLTOALL_CRS:
        case CT_COLL_ALLTOALLV_CRS:
            if (a->run.sdde == NULL)
                fail_msg("%s: no run function", a->name);
            break;
        case CT_COLL_NEIGHBOR_ALLTOALLV:
        case CT_COLL_NEIGHBOR_ALLTOALL:
            if (a->run.neighbor == NULL && a->build.neighbor == NULL)
                fail_msg("%s: neither a run function nor a schedule", a->name);
            break;
        case CT_COLL_INEIGHBOR_ALLTOALLV:
        case CT_COLL_INEIGHBOR_ALLTOALL:
            if (a->build.neighbor == NULL &&
                (strcmp(a->name, "pmpi") != 0 || a->run.neighbor == NULL))
                fail_msg("%s: serves a nonblocking form without a schedule", a->name);
            break;
        default:
            fail_msg("%s: collective %d not covered by this test", a->name, (int)a->coll);
        }
        /* The allgather(v)_inter byte view uses int byte offsets
         * (allgather_inter.c); the Alltoall(v) one does not (alltoallv.c). */
        if ((a->coll == CT_COLL_ALLGATHER_INTER || a->coll == CT_COLL_ALLGATHERV_INTER) &&
            (a->restrictions & CT_A_BYTES) && !(a->restrictions & CT_R_INT_OFFSETS))
            fail_msg("%s: CT_A_BYTES without CT_R_INT_OFFSETS", a->name);
    }
}

static void test_names_unique_per_collective(void **state)
{
    (void)state;
    for (int i = 0; i < ct_algorithm_count(); i++) {
        const ct_algorithm *a = ct_algorithm_at(i);
        for (int j = 0; j < i; j++) {
            const ct_algorithm *b = ct_algorithm_at(j);
            if (a->coll == b->coll && strcmp(a->name, b->name) == 0)
                fail_msg("'%s' registered twice for %s", a->name, ct_coll_name(a->coll));
        }
        /* Lookup by name finds this very entry. */
        assert_ptr_equal(ct_algorithm_find(a->coll, a->name, strlen(a->name)), a);
    }
}

static void test_param_names(void **state)
{
    (void)state;
    for (int i = 0; i < ct_algorithm_count(); i++) {
        const ct_algorithm *a = ct_algorithm_at(i);
        for (int p = 0; p < a->nparams; p++) {
            const ct_param_desc *d = &a->params[p];
            if (!is_plain_name(d->name))
                fail_msg("%s: parameter %d has a bad name", a->name, p);
            assert_non_null(d->help);
            for (int q = 0; q < p; q++)
                if (strcmp(d->name, a->params[q].name) == 0)
                    fail_msg("%s: parameter '%s' declared twice", a->name, d->name);
        }
    }
}

/* Checks one parameter at one communicator shape: returns 0 when its range
 * is empty there, 2 when the default lies in range as written, else 1. */
static int check_param_at(const ct_algorithm *a, int p, const ct_shape *env)
{
    const ct_param_desc *d = &a->params[p];
    long lo = ct_expr_eval(d->min, env), hi = ct_expr_eval(d->max, env);
    long def = ct_expr_eval(d->def, env);
    if (lo > hi)
        return 0;
    /* A default may exceed the maximum (it is clamped: block_count 32 acts
     * as min(32, P)), but one below the minimum would be a typo. */
    if (def < lo)
        fail_msg("%s: %s default %ld below minimum %ld at P=%ld Q=%ld N=%ld", a->name, d->name,
                 def, lo, env->P, env->Q, env->N);
    return def <= hi ? 2 : 1;
}

/* Resolving the default spec succeeds exactly when every range is non-empty,
 * and then yields values inside the ranges. */
static void check_default_resolves(const ct_algorithm *a, const ct_shape *env, int all_nonempty)
{
    ct_spec s;
    long params[CT_MAX_PARAMS];
    char why[128];
    ct_spec_default(a, &s);
    const char *r = ct_spec_resolve(&s, env, params, why, sizeof why);
    if (all_nonempty && r != NULL)
        fail_msg("%s: default does not resolve at P=%ld Q=%ld N=%ld: %s", a->name, env->P,
                 env->Q, env->N, r);
    if (!all_nonempty && r == NULL)
        fail_msg("%s: resolved with an empty range at P=%ld", a->name, env->P);
    for (int p = 0; all_nonempty && p < a->nparams; p++) {
        long lo = ct_expr_eval(a->params[p].min, env), hi = ct_expr_eval(a->params[p].max, env);
        if (params[p] < lo || params[p] > hi)
            fail_msg("%s: %s resolved to %ld outside %ld..%ld", a->name, a->params[p].name,
                     params[p], lo, hi);
    }
}

static void test_param_ranges(void **state)
{
    (void)state;
    for (int i = 0; i < ct_algorithm_count(); i++) {
        const ct_algorithm *a = ct_algorithm_at(i);
        int usable[CT_MAX_PARAMS] = {0}, fits[CT_MAX_PARAMS] = {0};
        for (long P = 1; P <= MAX_P; P++) {
            /* N nodes holding up to Q = ceil(P/N) ranks each. */
            for (long N = 1; N <= P; N++) {
                ct_shape env = {P, (P + N - 1) / N, N};
                int all = 1;
                for (int p = 0; p < a->nparams; p++) {
                    int r = check_param_at(a, p, &env);
                    usable[p] += r > 0;
                    fits[p] += r == 2;
                    all &= r > 0;
                }
                check_default_resolves(a, &env, all);
            }
        }
        /* Each parameter has a usable range somewhere, and somewhere its
         * default lies in range as written (a default that is always clamped
         * is a typo). */
        for (int p = 0; p < a->nparams; p++) {
            if (usable[p] == 0)
                fail_msg("%s: %s has an empty range at every P <= %d", a->name,
                         a->params[p].name, MAX_P);
            if (fits[p] == 0)
                fail_msg("%s: %s default is out of range at every P <= %d", a->name,
                         a->params[p].name, MAX_P);
        }
    }
}

/* A parameter clamps (CT_CLAMP) exactly where its help promises that values
 * above a bound "act as" it, and then a value set above its range resolves
 * to the maximum at every shape; any other parameter set above its range
 * makes the spec unable to serve the call. */
static void test_clamp_as_help_says(void **state)
{
    (void)state;
    int clamping = 0;
    for (int i = 0; i < ct_algorithm_count(); i++) {
        const ct_algorithm *a = ct_algorithm_at(i);
        for (int p = 0; p < a->nparams; p++) {
            const ct_param_desc *d = &a->params[p];
            if ((d->clamp != 0) != (strstr(d->help, "act as") != NULL))
                fail_msg("%s: %s: clamp %d, help \"%s\"", a->name, d->name, d->clamp, d->help);
            clamping += d->clamp != 0;
            for (long P = 1; P <= MAX_P; P++)
                for (long N = 1; N <= P; N++) {
                    const ct_shape env = {P, (P + N - 1) / N, N};
                    long params[CT_MAX_PARAMS], lo = ct_expr_eval(d->min, &env),
                         hi = ct_expr_eval(d->max, &env);
                    ct_spec s;
                    ct_spec_default(a, &s);
                    s.values[p] = (ct_expr){CT_TERM_CONST, hi + 3};
                    s.set_mask = 1u << p;
                    const char *why = ct_spec_resolve(&s, &env, params, NULL, 0);
                    int empty = 0; /* some range is empty: nothing can serve */
                    for (int q = 0; q < a->nparams; q++)
                        empty |= ct_expr_eval(a->params[q].min, &env) >
                                 ct_expr_eval(a->params[q].max, &env);
                    if (empty || lo > hi)
                        continue;
                    if (d->clamp && (why != NULL || params[p] != hi))
                        fail_msg("%s:%s=%ld at P=%ld N=%ld: %s, not the maximum %ld", a->name,
                                 d->name, hi + 3, P, N, why ? why : "resolved", hi);
                    if (!d->clamp && why == NULL)
                        fail_msg("%s:%s=%ld at P=%ld N=%ld resolved above its range", a->name,
                                 d->name, hi + 3, P, N);
                }
        }
    }
    assert_true(clamping >= 6); /* scattered, tuna_hier_*, node_aware (coll_list.h) */
}

static void test_specs_round_trip(void **state)
{
    (void)state;
    /* Every entry can be named in a spec, and every parameter set to its
     * default as written by ct_expr_format. */
    for (int i = 0; i < ct_algorithm_count(); i++) {
        const ct_algorithm *a = ct_algorithm_at(i);
        char text[256];
        size_t used = (size_t)snprintf(text, sizeof text, "%s", a->name);
        for (int p = 0; p < a->nparams; p++) {
            char v[64];
            ct_expr_format(a->params[p].def, v, sizeof v);
            used += (size_t)snprintf(text + used, sizeof text - used, "%c%s=%s", p ? ',' : ':',
                                     a->params[p].name, v);
        }
        ct_spec s;
        ct_parse_error err;
        if (ct_spec_parse(text, strlen(text), a->coll, &s, &err) != 0)
            fail_msg("'%s' does not parse: %s", text, err.message);
        assert_ptr_equal(s.alg, a);
        assert_int_equal(s.set_mask, (1u << a->nparams) - 1);
        for (int p = 0; p < a->nparams; p++) {
            assert_int_equal(s.values[p].term, a->params[p].def.term);
            assert_true(s.values[p].offset == a->params[p].def.offset);
        }
    }
}

static void test_fallback_per_collective(void **state)
{
    (void)state;
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        const ct_algorithm *a = ct_algorithm_fallback((ct_coll)c);
        if (a == NULL)
            fail_msg("%s has no fallback entry", ct_coll_name((ct_coll)c));
        assert_int_equal(a->coll, c);
        assert_int_equal(a->nparams, 0);
        assert_int_equal(a->restrictions, 0); /* the fallback must always be able to run */
    }
}

/* The sparse dynamic data exchanges ([Geyko2023]): the MPIX calls have no PMPI
 * routine, so personalized serves them by default; rma is constant-size only;
 * every other algorithm serves both collectives. */
static void test_sdde_entries(void **state)
{
    (void)state;
    static const char *const both[] = {"personalized", "nonblocking", "locality_personalized",
                                       "locality_nonblocking", "locality_dense"};
    assert_string_equal(ct_algorithm_fallback(CT_COLL_ALLTOALL_CRS)->name, "personalized");
    assert_string_equal(ct_algorithm_fallback(CT_COLL_ALLTOALLV_CRS)->name, "personalized");
    assert_non_null(ct_algorithm_find(CT_COLL_ALLTOALL_CRS, "rma", 3));
    assert_null(ct_algorithm_find(CT_COLL_ALLTOALLV_CRS, "rma", 3));
    /* only locality_dense carries the agreement in its own exchange */
    for (int i = 0; i < ct_algorithm_count(); i++) {
        const ct_algorithm *a = ct_algorithm_at(i);
        int agrees = (a->restrictions & CT_A_AGREES) != 0;
        assert_int_equal(agrees, (a->coll == CT_COLL_ALLTOALL_CRS ||
                                  a->coll == CT_COLL_ALLTOALLV_CRS) &&
                                     strcmp(a->name, "locality_dense") == 0);
    }
    for (size_t i = 0; i < sizeof both / sizeof both[0]; i++) {
        assert_non_null(ct_algorithm_find(CT_COLL_ALLTOALL_CRS, both[i], strlen(both[i])));
        assert_non_null(ct_algorithm_find(CT_COLL_ALLTOALLV_CRS, both[i], strlen(both[i])));
    }
    ct_coll c;
    assert_int_equal(ct_coll_from_name("alltoall_crs", 12, &c), 0);
    assert_int_equal(c, CT_COLL_ALLTOALL_CRS);
    assert_int_equal(ct_coll_from_name("alltoallv_crs", 13, &c), 0);
    assert_int_equal(c, CT_COLL_ALLTOALLV_CRS);
}

static void test_coll_names(void **state)
{
    (void)state;
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        const char *name = ct_coll_name((ct_coll)c);
        ct_coll back = CT_COLL_COUNT;
        assert_true(is_plain_name(name));
        assert_int_equal(ct_coll_from_name(name, strlen(name), &back), 0);
        assert_int_equal(back, c);
    }
    assert_string_equal(ct_coll_name(CT_COLL_ALLTOALLV), "alltoallv");
    assert_string_equal(ct_coll_name(CT_COLL_COUNT), "?");

    static const char *const bad[] = {"", "alltoal", "alltoallvv", "ALLTOALLV", "alltoallv "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ct_coll out;
        if (ct_coll_from_name(bad[i], strlen(bad[i]), &out) == 0)
            fail_msg("'%s' accepted as a collective", bad[i]);
    }
    /* Only len characters count. */
    ct_coll out = CT_COLL_COUNT;
    assert_int_equal(ct_coll_from_name("alltoallv comm_size=2", 9, &out), 0);
    assert_int_equal(out, CT_COLL_ALLTOALLV);
}

/* MPI_Ialltoallv and MPI_Ialltoall are served by pmpi and by exactly the
 * Alltoallv algorithms that split, under the same name, parameters,
 * restrictions (the nonblocking forms' own, CT_R_PROGRESS, aside) and
 * schedule. */
static void test_nonblocking_forms_are_the_split_ones(void **state)
{
    (void)state;
    const ct_coll forms[2] = {CT_COLL_IALLTOALLV, CT_COLL_IALLTOALL};
    for (int f = 0; f < 2; f++) {
        int split = 0, n = 0;
        assert_true(ct_coll_nonblocking(forms[f]));
        assert_non_null(ct_algorithm_find(forms[f], "pmpi", 4));
        for (int i = 0; i < ct_algorithm_count(); i++) {
            const ct_algorithm *v = ct_algorithm_at(i);
            n += v->coll == forms[f] && strcmp(v->name, "pmpi") != 0;
            if (v->coll != CT_COLL_ALLTOALLV || v->build.alltoallv == NULL)
                continue;
            split++;
            const ct_algorithm *a = ct_algorithm_find(forms[f], v->name, strlen(v->name));
            if (a == NULL)
                fail_msg("%s splits but does not serve %s", v->name, ct_coll_name(forms[f]));
            assert_ptr_equal(a->build.alltoallv, v->build.alltoallv);
            assert_int_equal(a->restrictions & ~CT_R_PROGRESS, v->restrictions);
            assert_int_equal(a->nparams, v->nparams);
        }
        assert_int_equal(n, split);
        assert_true(split >= 7);
    }
    assert_false(ct_coll_nonblocking(CT_COLL_ALLTOALLV));
    assert_false(ct_coll_nonblocking(CT_COLL_ALLTOALL));
}

/* The intercommunicator MPI_Iallgather(v) are served by pmpi and by the
 * Allgather(v) algorithms that split (a build function of the nonblocking
 * entry), under the same name, parameters and restrictions. */
static void test_iallgather_forms(void **state)
{
    (void)state;
    const ct_coll forms[2] = {CT_COLL_IALLGATHER_INTER, CT_COLL_IALLGATHERV_INTER};
    const ct_coll blocking[2] = {CT_COLL_ALLGATHER_INTER, CT_COLL_ALLGATHERV_INTER};
    for (int f = 0; f < 2; f++) {
        int n = 0;
        assert_true(ct_coll_nonblocking(forms[f]));
        assert_false(ct_coll_nonblocking(blocking[f]));
        assert_non_null(ct_algorithm_find(forms[f], "pmpi", 4));
        for (int i = 0; i < ct_algorithm_count(); i++) {
            const ct_algorithm *a = ct_algorithm_at(i);
            if (a->coll != forms[f] || strcmp(a->name, "pmpi") == 0)
                continue;
            n++;
            const ct_algorithm *b = ct_algorithm_find(blocking[f], a->name, strlen(a->name));
            if (b == NULL)
                fail_msg("%s serves %s but not its blocking form", a->name,
                         ct_coll_name(forms[f]));
            /* the nonblocking form's own restriction: progress (several rounds) */
            assert_int_equal(a->restrictions & ~CT_R_PROGRESS, b->restrictions);
            assert_int_equal(a->nparams, b->nparams);
        }
        assert_true(n >= 2); /* direct, segmented */
    }
}

/* MPI_Alltoall is served by every Alltoallv algorithm under the same name,
 * parameters, restrictions and function, and by nothing else. */
static void test_alltoall_mirrors_alltoallv(void **state)
{
    (void)state;
    int nv = 0, n = 0;
    for (int i = 0; i < ct_algorithm_count(); i++) {
        const ct_algorithm *v = ct_algorithm_at(i);
        nv += v->coll == CT_COLL_ALLTOALLV;
        n += v->coll == CT_COLL_ALLTOALL;
        if (v->coll != CT_COLL_ALLTOALLV)
            continue;
        const ct_algorithm *a = ct_algorithm_find(CT_COLL_ALLTOALL, v->name, strlen(v->name));
        if (a == NULL)
            fail_msg("alltoallv algorithm '%s' does not serve alltoall", v->name);
        assert_ptr_equal(a->run.alltoallv, v->run.alltoallv);
        assert_ptr_equal(a->build.alltoallv, v->build.alltoallv);
        assert_int_equal(a->restrictions, v->restrictions);
        assert_int_equal(a->nparams, v->nparams);
        assert_string_equal(a->summary, v->summary);
        for (int k = 0; k < v->nparams; k++) {
            assert_string_equal(a->params[k].name, v->params[k].name);
            assert_memory_equal(&a->params[k].min, &v->params[k].min, sizeof(ct_expr));
            assert_memory_equal(&a->params[k].max, &v->params[k].max, sizeof(ct_expr));
            assert_memory_equal(&a->params[k].def, &v->params[k].def, sizeof(ct_expr));
        }
    }
    assert_int_equal(n, nv);
    assert_true(nv >= 11);
    assert_ptr_equal(ct_algorithm_fallback(CT_COLL_ALLTOALL),
                     ct_algorithm_find(CT_COLL_ALLTOALL, "pmpi", 4));
}

static void test_find_respects_len(void **state)
{
    (void)state;
    assert_null(ct_algorithm_find(CT_COLL_ALLTOALLV, "pmp", 3));
    assert_null(ct_algorithm_find(CT_COLL_ALLTOALLV, "pmpix", 5));
    assert_null(ct_algorithm_find(CT_COLL_ALLTOALLV, "", 0));
    assert_ptr_equal(ct_algorithm_find(CT_COLL_ALLTOALLV, "pmpix", 4),
                     ct_algorithm_fallback(CT_COLL_ALLTOALLV));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_indexing),
        cmocka_unit_test(test_entries_well_formed),
        cmocka_unit_test(test_names_unique_per_collective),
        cmocka_unit_test(test_param_names),
        cmocka_unit_test(test_param_ranges),
        cmocka_unit_test(test_clamp_as_help_says),
        cmocka_unit_test(test_specs_round_trip),
        cmocka_unit_test(test_fallback_per_collective),
        cmocka_unit_test(test_sdde_entries),
        cmocka_unit_test(test_coll_names),
        cmocka_unit_test(test_alltoall_mirrors_alltoallv),
        cmocka_unit_test(test_nonblocking_forms_are_the_split_ones),
        cmocka_unit_test(test_iallgather_forms),
        cmocka_unit_test(test_find_respects_len),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
