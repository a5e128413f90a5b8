/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_decide.c - the decision without MPI (ct_decide_offline, which
 * coltune-info --check --np uses): rule order, conditions, msg_size,
 * communicator and local restrictions, parameter ranges, forced variables
 * and COLTUNE_FALLBACK, each candidate passed over reported with its reason.
 * tests/mpi/info.sh compares the same decisions with real jobs' logs. Also
 * ct_decide itself with deferred facts (the sparse exchanges' first try):
 * it never computes them, answers CT_DECIDE_NEEDS_FACTS where a rule needs
 * msg_size, and caches what it decided without them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/state.h"
#include "select/decide.h"

static const char rules_text[] =
    "alltoallv nodes=1 comm_size=3- msg_size=0-32k shm\n"        /* line 1 */
    "alltoallv nodes=2- node_aware\n"                            /* line 2 */
    "alltoallv msg_size=0-1k tuna_hier_coalesced:block_count=N\n" /* line 3 */
    "alltoallv comm_size=8- tuna:radix=Q+9\n"                    /* line 4 */
    "alltoallv pairwise\n"                                       /* line 5 */
    "alltoall comm_size=4 linear\n"                             /* line 6 */
    "neighbor_alltoallv nodes=2- degree=6- offnode=20-90 locality\n" /* line 7 */
    "neighbor_alltoallv degree=0-3 direct\n"                    /* line 8 */
    "neighbor_alltoall nodes=2- components=1 msg_size=0-1k locality\n"; /* line 9 */

typedef struct trace_log {
    int count;
    char lines[8][256];
} trace_log;

static void record(void *arg, const char *source, int line, const ct_spec *spec, const char *why)
{
    trace_log *t = arg;
    if (t->count < 8)
        snprintf(t->lines[t->count], sizeof t->lines[0], "%s:%d: %s: %s", source, line,
                 spec->alg->name, why);
    t->count++;
}

typedef struct fixture {
    ct_config cfg;
    ct_topo topo;
    ct_shape env;
    trace_log log;
    ct_choice choice;
    int used_msg_size;
    const ct_graph_facts *graph; /* the neighbourhood's, NULL: unknown */
} fixture;

/* A message of the parser: the rules above have none. */
static void rules_error(void *arg, const char *msg)
{
    (void)arg;
    fail_msg("%s", msg);
}

static int setup(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    if (ct_rules_parse_report(rules_text, "t.rules", &f.cfg.rules, rules_error, NULL) != 0)
        fail_msg("t.rules rejected");
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    ct_rules_free(&f->cfg.rules);
    ct_topo_free(&f->topo);
    return 0;
}

/* P ranks on nodes of ppn (blocks); shared when one node or emulated. */
static void place(fixture *f, int P, int ppn, int emulated)
{
    ct_topo_free(&f->topo);
    assert_int_equal(ct_topo_emulate(P, ppn, 0, &f->topo), MPI_SUCCESS);
    f->topo.emulated = emulated;
    f->topo.shared = emulated || f->topo.N == 1;
    f->env = (ct_shape){P, f->topo.Q, f->topo.N};
}

static int decide(fixture *f, ct_coll coll, long msg_size, unsigned violations)
{
    const ct_call_facts facts = {msg_size, violations, 0};
    const ct_decide_trace trace = {record, &f->log};
    memset(&f->log, 0, sizeof f->log);
    return ct_decide_offline(&f->cfg, coll, &f->env, &f->topo, &facts, 0, f->graph, &trace,
                             &f->choice, &f->used_msg_size);
}

static void assert_choice(const fixture *f, const char *name, int line)
{
    assert_string_equal(f->choice.alg->name, name);
    assert_int_equal(f->choice.rule_line, line);
}

static void test_first_match_one_node(void **state)
{
    fixture *f = *state;
    place(f, 8, 8, 0);
    assert_int_equal(decide(f, CT_COLL_ALLTOALLV, 100, 0), MPI_SUCCESS);
    assert_choice(f, "shm", 1);
    assert_true(f->used_msg_size);
    assert_int_equal(f->log.count, 0);
    /* Beyond 32k on one node: node_aware's nodes=2- fails, tuna_hier's
     * msg_size fails, tuna's radix Q+9 = 17 is beyond P = 8. */
    assert_int_equal(decide(f, CT_COLL_ALLTOALLV, 32 * 1024 + 1, 0), MPI_SUCCESS);
    assert_choice(f, "pairwise", 5);
    assert_int_equal(f->log.count, 1);
    assert_string_equal(f->log.lines[0], "t.rules:4: tuna: radix=17 out of range 2..8 at P=8");
    /* Two ranks: shm's comm_size=3- fails; no msg_size rule is reached
     * before tuna_hier's, which matches at 100 bytes. */
    place(f, 2, 2, 0);
    assert_int_equal(decide(f, CT_COLL_ALLTOALLV, 100, 0), MPI_SUCCESS);
    assert_choice(f, "tuna_hier_coalesced", 3);
}

static void test_nodes_and_restrictions(void **state)
{
    fixture *f = *state;
    /* Real nodes: node_aware serves. */
    place(f, 8, 2, 0);
    assert_int_equal(decide(f, CT_COLL_ALLTOALLV, 100, 0), MPI_SUCCESS);
    assert_choice(f, "node_aware", 2);
    assert_int_equal(f->choice.params[0], 2); /* radix defaults to 2 */
    assert_int_equal(f->choice.params[1], 4); /* block_count to N */
    assert_false(f->used_msg_size);           /* nodes=1 failed before msg_size was needed */
    /* Emulated nodes that span real ones cannot share memory. */
    f->topo.emulated = 1;
    f->topo.shared = 0;
    assert_int_equal(decide(f, CT_COLL_ALLTOALLV, 100, 0), MPI_SUCCESS);
    assert_choice(f, "tuna_hier_coalesced", 3);
    assert_int_equal(f->choice.params[1], 4); /* block_count=N */
    assert_int_equal(f->log.count, 1);
    assert_non_null(strstr(f->log.lines[0], "t.rules:2: node_aware: emulated nodes"));
    /* A rank whose offsets overflow int rules out tuna_hier_coalesced, which
     * needs int offsets, and not node_aware, which needs none. */
    place(f, 8, 2, 0);
    assert_int_equal(decide(f, CT_COLL_ALLTOALLV, 100, CT_R_INT_OFFSETS), MPI_SUCCESS);
    assert_choice(f, "node_aware", 2);
    f->topo.emulated = 1;
    f->topo.shared = 0;
    assert_int_equal(decide(f, CT_COLL_ALLTOALLV, 100, CT_R_INT_OFFSETS), MPI_SUCCESS);
    assert_choice(f, "pairwise", 5);
    assert_int_equal(f->log.count, 3);
    assert_string_equal(f->log.lines[1],
                        "t.rules:3: tuna_hier_coalesced: byte offsets overflow int");
}

static void test_other_collective_and_default(void **state)
{
    fixture *f = *state;
    place(f, 4, 4, 0);
    assert_int_equal(decide(f, CT_COLL_ALLTOALL, 16, 0), MPI_SUCCESS);
    assert_choice(f, "linear", 6);
    /* An empty Alltoall moves nothing: the MPI library's, whatever the rules
     * say, as a job runs it (decide.h, ct_decide_is_empty). */
    assert_int_equal(decide(f, CT_COLL_ALLTOALL, 0, 0), MPI_SUCCESS);
    assert_choice(f, "pmpi", 0);
    assert_false(f->choice.forced);
    place(f, 5, 5, 0);
    assert_int_equal(decide(f, CT_COLL_ALLTOALL, 16, 0), MPI_SUCCESS);
    assert_choice(f, "pmpi", 0); /* no rule: the default */
    assert_false(f->choice.forced);
    /* The sparse exchanges fall back to their reference algorithm. */
    assert_int_equal(decide(f, CT_COLL_ALLTOALLV_CRS, 0, 0), MPI_SUCCESS);
    assert_choice(f, "personalized", 0);
}

/* degree and offnode: facts of the graph, given or not known (then a rule
 * that names them matches nothing, as coltune-info --check without
 * --degree). */
static void test_graph_conditions(void **state)
{
    fixture *f = *state;
    const ct_graph_facts dense_off = {8, 30, 1}, dense_on = {8, 10, 1}, sparse = {2, 50, 1},
                         middle = {5, 50, 1}, edges = {6, 20, 1};
    place(f, 16, 4, 0);
    f->graph = &dense_off;
    assert_int_equal(decide(f, CT_COLL_NEIGHBOR_ALLTOALLV, 64, 0), MPI_SUCCESS);
    assert_choice(f, "locality", 7);
    f->graph = &edges; /* both bounds inclusive */
    assert_int_equal(decide(f, CT_COLL_NEIGHBOR_ALLTOALLV, 64, 0), MPI_SUCCESS);
    assert_choice(f, "locality", 7);
    f->graph = &dense_on;
    assert_int_equal(decide(f, CT_COLL_NEIGHBOR_ALLTOALLV, 64, 0), MPI_SUCCESS);
    assert_choice(f, "pmpi", 0);
    f->graph = &sparse;
    assert_int_equal(decide(f, CT_COLL_NEIGHBOR_ALLTOALLV, 64, 0), MPI_SUCCESS);
    assert_choice(f, "direct", 8);
    f->graph = &middle;
    assert_int_equal(decide(f, CT_COLL_NEIGHBOR_ALLTOALLV, 64, 0), MPI_SUCCESS);
    assert_choice(f, "pmpi", 0);
    f->graph = NULL; /* not known: neither rule */
    assert_int_equal(decide(f, CT_COLL_NEIGHBOR_ALLTOALLV, 64, 0), MPI_SUCCESS);
    assert_choice(f, "pmpi", 0);
    place(f, 16, 16, 0); /* one node: line 7's nodes=2- */
    f->graph = &dense_off;
    assert_int_equal(decide(f, CT_COLL_NEIGHBOR_ALLTOALLV, 64, 0), MPI_SUCCESS);
    assert_choice(f, "pmpi", 0);
    f->graph = &sparse; /* and the other collectives are not concerned */
    assert_int_equal(decide(f, CT_COLL_NEIGHBOR_ALLTOALL, 64, 0), MPI_SUCCESS);
    assert_choice(f, "pmpi", 0);
    f->graph = NULL;
}

/* components: a connected graph (1) or not; 0, not counted, matches no
 * components=1. */
static void test_graph_components(void **state)
{
    fixture *f = *state;
    const ct_graph_facts one = {8, 30, 1}, two = {8, 30, 2}, uncounted = {8, 30, 0};
    place(f, 16, 4, 0);
    f->graph = &one;
    assert_int_equal(decide(f, CT_COLL_NEIGHBOR_ALLTOALL, 64, 0), MPI_SUCCESS);
    assert_choice(f, "locality", 9);
    assert_int_equal(decide(f, CT_COLL_NEIGHBOR_ALLTOALL, 4096, 0), MPI_SUCCESS);
    assert_choice(f, "pmpi", 0);
    f->graph = &two;
    assert_int_equal(decide(f, CT_COLL_NEIGHBOR_ALLTOALL, 64, 0), MPI_SUCCESS);
    assert_choice(f, "pmpi", 0);
    f->graph = &uncounted;
    assert_int_equal(decide(f, CT_COLL_NEIGHBOR_ALLTOALL, 64, 0), MPI_SUCCESS);
    assert_choice(f, "pmpi", 0);
    f->graph = NULL;
}

static void test_forced(void **state)
{
    fixture *f = *state;
    ct_parse_error err;
    place(f, 8, 8, 0);
    const char good[] = "tuna:radix=4", bad[] = "tuna:radix=P+1";
    assert_int_equal(ct_spec_parse(good, strlen(good), CT_COLL_ALLTOALLV,
                                   &f->cfg.forced[CT_COLL_ALLTOALLV], &err), 0);
    f->cfg.forced_set[CT_COLL_ALLTOALLV] = 1;
    assert_int_equal(decide(f, CT_COLL_ALLTOALLV, 100, 0), MPI_SUCCESS);
    assert_choice(f, "tuna", 0);
    assert_true(f->choice.forced);
    assert_int_equal(f->choice.params[0], 4);
    /* Out of range at this P: pmpi (forced), or an error with COLTUNE_FALLBACK=error. */
    assert_int_equal(ct_spec_parse(bad, strlen(bad), CT_COLL_ALLTOALLV,
                                   &f->cfg.forced[CT_COLL_ALLTOALLV], &err), 0);
    assert_int_equal(decide(f, CT_COLL_ALLTOALLV, 100, 0), MPI_SUCCESS);
    assert_choice(f, "pmpi", 0);
    assert_true(f->choice.forced);
    assert_int_equal(f->log.count, 1);
    assert_string_equal(f->log.lines[0],
                        "COLTUNE_ALLTOALLV:0: tuna: radix=9 out of range 2..8 at P=8");
    f->cfg.set.fallback = CT_FALLBACK_ERROR;
    assert_int_equal(decide(f, CT_COLL_ALLTOALLV, 100, 0), MPI_ERR_ARG);
    f->cfg.set.fallback = CT_FALLBACK_PRINT;
    f->cfg.forced_set[CT_COLL_ALLTOALLV] = 0;
}

static int facts_not_wanted(const void *args, const ct_ctx *ctx, ct_call_facts *local)
{
    (void)args;
    (void)ctx;
    (void)local;
    fail_msg("a decision with deferred facts computed them");
    return MPI_ERR_INTERN;
}

/* ct_decide with defer_facts, on a context that has only what the decision
 * reads (no MPI: nothing may communicate), under this file's rules. */
static int decide_deferred(fixture *f, ct_ctx *ctx, int P, int ppn, int emulated)
{
    place(f, P, ppn, emulated);
    ct_ctx_ext_release(ctx);
    memset(ctx, 0, sizeof *ctx);
    ctx->topo = f->topo; /* borrowed: freed by the fixture */
    ctx->shape = f->env;
    ct_decide_input call = {.coll = CT_COLL_ALLTOALLV, .local_facts = facts_not_wanted,
                            .defer_facts = 1};
    memset(&f->choice, 0, sizeof f->choice);
    return ct_decide(ctx, &call, NULL, &f->choice);
}

static void test_deferred_facts(void **state)
{
    fixture *f = *state;
    static ct_ctx ctx;
    ct_config *cfg = ct_config_global();
    const ct_ruleset saved = cfg->rules;
    cfg->rules = f->cfg.rules;
    /* 4 emulated nodes: line 2 (no msg_size) decides, and is cached */
    assert_int_equal(decide_deferred(f, &ctx, 16, 4, 1), MPI_SUCCESS);
    assert_choice(f, "node_aware", 2);
    assert_true(ct_decide_is_cached(&ctx, CT_COLL_ALLTOALLV));
    /* one node: line 1 needs msg_size; nothing decided, nothing cached */
    assert_int_equal(decide_deferred(f, &ctx, 16, 16, 0), CT_DECIDE_NEEDS_FACTS);
    assert_null(f->choice.alg);
    assert_false(ct_decide_is_cached(&ctx, CT_COLL_ALLTOALLV));
    /* 2 ranks: line 1 does not hold (comm_size), line 3 needs msg_size */
    assert_int_equal(decide_deferred(f, &ctx, 2, 2, 0), CT_DECIDE_NEEDS_FACTS);
    ct_ctx_ext_release(&ctx);
    cfg->rules = saved;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_match_one_node),
        cmocka_unit_test(test_nodes_and_restrictions),
        cmocka_unit_test(test_other_collective_and_default),
        cmocka_unit_test(test_graph_conditions),
        cmocka_unit_test(test_graph_components),
        cmocka_unit_test(test_forced),
        cmocka_unit_test(test_deferred_facts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
