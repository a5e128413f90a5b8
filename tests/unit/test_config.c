/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_config.c - the COLTUNE_* environment reader (select/config.c), fed a
 * fake environment: every variable's accepted values, and the exact message
 * for every bad value (each bad variable is reported and ignored alone).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "select/config.h"

/* The fake environment: NULL-terminated name/value pairs. */
static const char *const *fake_env;

static const char *fake_getenv(const char *name)
{
    for (const char *const *e = fake_env; e[0] != NULL; e += 2)
        if (strcmp(e[0], name) == 0)
            return e[1];
    return NULL;
}

/* Reads a config from pairs; COLTUNE_RULES defaults to "" (no rules file) so
 * that an installed default file never leaks into the test. */
static void read_env(ct_config *cfg, const char *const *pairs)
{
    static const char *with_rules[64];
    int n = 0, has_rules = 0;
    for (; pairs[n] != NULL; n += 2) {
        with_rules[n] = pairs[n];
        with_rules[n + 1] = pairs[n + 1];
        has_rules |= strcmp(pairs[n], "COLTUNE_RULES") == 0;
    }
    if (!has_rules) {
        with_rules[n++] = "COLTUNE_RULES";
        with_rules[n++] = "";
    }
    with_rules[n] = NULL;
    fake_env = with_rules;
    ct_config_read(cfg, fake_getenv);
}

static void test_defaults(void **state)
{
    (void)state;
    ct_config cfg;
    const char *env[] = {NULL};
    read_env(&cfg, env);
    assert_int_equal(cfg.nerrors, 0);
    assert_int_equal(cfg.set.disabled, 0);
    assert_int_equal(cfg.set.verbose, 0);
    assert_int_equal(cfg.set.stats, 0);
    assert_int_equal(cfg.set.fallback, CT_FALLBACK_PRINT);
    assert_int_equal(cfg.set.ppn, 0);
    assert_int_equal(cfg.rules.count, 0);
    for (int c = 0; c < CT_COLL_COUNT; c++)
        assert_int_equal(cfg.forced_set[c], 0);
    ct_config_free(&cfg);
}

static void test_good_values(void **state)
{
    (void)state;
    ct_config cfg;
    const char *env[] = {"COLTUNE_DISABLE", "1",         "COLTUNE_VERBOSE", "2",
                         "COLTUNE_STATS",   "1",         "COLTUNE_FALLBACK", "error",
                         "COLTUNE_PPN",     "4:cyclic",  "COLTUNE_ALLTOALLV",
                         "scattered:block_count=sqrt",   NULL};
    read_env(&cfg, env);
    assert_int_equal(cfg.nerrors, 0);
    assert_int_equal(cfg.set.disabled, 1);
    assert_int_equal(cfg.set.verbose, 2);
    assert_int_equal(cfg.set.stats, 1);
    assert_int_equal(cfg.set.fallback, CT_FALLBACK_ERROR);
    assert_int_equal(cfg.set.ppn, 4);
    assert_int_equal(cfg.set.ppn_cyclic, 1);
    assert_int_equal(cfg.forced_set[CT_COLL_ALLTOALLV], 1);
    assert_string_equal(cfg.forced[CT_COLL_ALLTOALLV].alg->name, "scattered");
    assert_int_equal(cfg.forced[CT_COLL_ALLTOALLV].values[0].term, CT_TERM_SQRT_P);
    assert_int_equal(cfg.set.device_always, 0);
    ct_config_free(&cfg);

    const char *env2[] = {"COLTUNE_FALLBACK", "silent", "COLTUNE_PPN", "7",
                          "COLTUNE_DEVICE", "always", NULL};
    read_env(&cfg, env2);
    assert_int_equal(cfg.nerrors, 0);
    assert_int_equal(cfg.set.device_always, 1);
    assert_int_equal(cfg.set.fallback, CT_FALLBACK_SILENT);
    assert_int_equal(cfg.set.ppn, 7);
    assert_int_equal(cfg.set.ppn_cyclic, 0);
    ct_config_free(&cfg);
}

/* COLTUNE_SHM_WINDOW: bytes with an optional k, m or g suffix. */
static void test_shm_window(void **state)
{
    (void)state;
    ct_config cfg;
    read_env(&cfg, (const char *[]){NULL});
    assert_int_equal(cfg.set.shm_window, CT_SHM_WINDOW_DEFAULT);
    assert_int_equal(cfg.set.test_shm_fail, -1);
    ct_config_free(&cfg);
    const struct {
        const char *text;
        size_t bytes;
    } good[] = {{"64", 64}, {"4096", 4096}, {"32k", 32 << 10}, {"2M", 2 << 20},
                {"1g", 1 << 30}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        read_env(&cfg, (const char *[]){"COLTUNE_SHM_WINDOW", good[i].text, NULL});
        assert_int_equal(cfg.nerrors, 0);
        assert_int_equal(cfg.set.shm_window, good[i].bytes);
        ct_config_free(&cfg);
    }
    /* COLTUNE_CACHE: auto (the default), or a size, 0 included */
    read_env(&cfg, (const char *[]){NULL});
    assert_int_equal(cfg.set.cache_auto, 1);
    ct_config_free(&cfg);
    read_env(&cfg, (const char *[]){"COLTUNE_CACHE", "auto", NULL});
    assert_int_equal(cfg.nerrors, 0);
    assert_int_equal(cfg.set.cache_auto, 1);
    ct_config_free(&cfg);
    const struct {
        const char *text;
        size_t bytes;
    } caches[] = {{"0", 0}, {"100k", 100 << 10}, {"256m", (size_t)256 << 20},
                  {"2g", (size_t)2 << 30}};
    for (size_t i = 0; i < sizeof caches / sizeof caches[0]; i++) {
        read_env(&cfg, (const char *[]){"COLTUNE_CACHE", caches[i].text, NULL});
        assert_int_equal(cfg.nerrors, 0);
        assert_int_equal(cfg.set.cache_auto, 0);
        assert_int_equal(cfg.set.cache, caches[i].bytes);
        ct_config_free(&cfg);
    }
    read_env(&cfg, (const char *[]){"COLTUNE_TEST_SHM_FAIL", "3", NULL});
    assert_int_equal(cfg.set.test_shm_fail, 3);
    ct_config_free(&cfg);
    read_env(&cfg, (const char *[]){"COLTUNE_TEST_SDDE_PIECE", "16", NULL});
    assert_int_equal(cfg.set.test_sdde_piece, 16);
    ct_config_free(&cfg);
}

/* One bad variable: exactly one message, and the variable is ignored. */
static void expect_one_error(const char *name, const char *value, const char *message)
{
    ct_config cfg;
    const char *env[] = {name, value, NULL};
    read_env(&cfg, env);
    if (cfg.nerrors != 1)
        fail_msg("%s='%s': %d messages", name, value, cfg.nerrors);
    if (strcmp(cfg.errors[0], message) != 0)
        fail_msg("%s='%s':\n  got  %s\n  want %s", name, value, cfg.errors[0], message);
    assert_int_equal(cfg.set.disabled, 0);
    assert_int_equal(cfg.set.verbose, 0);
    assert_int_equal(cfg.set.ppn, 0);
    assert_int_equal(cfg.set.fallback, CT_FALLBACK_PRINT);
    for (int c = 0; c < CT_COLL_COUNT; c++)
        assert_int_equal(cfg.forced_set[c], 0);
    ct_config_free(&cfg);
}

static void test_bad_values(void **state)
{
    (void)state;
    expect_one_error("COLTUNE_DISABLE", "yes",
                     "COLTUNE_DISABLE='yes': expected 0 or 1; variable ignored");
    expect_one_error("COLTUNE_DISABLE", "",
                     "COLTUNE_DISABLE='': expected 0 or 1; variable ignored");
    expect_one_error("COLTUNE_VERBOSE", "3",
                     "COLTUNE_VERBOSE='3': expected 0, 1 or 2; variable ignored");
    expect_one_error("COLTUNE_VERBOSE", "1x",
                     "COLTUNE_VERBOSE='1x': expected 0, 1 or 2; variable ignored");
    expect_one_error("COLTUNE_STATS", "-1",
                     "COLTUNE_STATS='-1': expected 0 or 1; variable ignored");
    expect_one_error("COLTUNE_FALLBACK", "abort",
                     "COLTUNE_FALLBACK='abort': expected print, silent or error; variable "
                     "ignored");
    expect_one_error("COLTUNE_DEVICE", "yes",
                     "COLTUNE_DEVICE='yes': expected auto or always; variable ignored");
    expect_one_error("COLTUNE_PPN", "0",
                     "COLTUNE_PPN='0': expected a rank count n >= 1, optionally followed by "
                     ":cyclic; variable ignored");
    expect_one_error("COLTUNE_PPN", "4:round",
                     "COLTUNE_PPN='4:round': expected a rank count n >= 1, optionally "
                     "followed by :cyclic; variable ignored");
    expect_one_error("COLTUNE_PPN", "four",
                     "COLTUNE_PPN='four': expected a rank count n >= 1, optionally followed "
                     "by :cyclic; variable ignored");
    const char *bad_windows[] = {"0", "63", "2g", "4x", "k", "-1", "16kb", ""};
    for (size_t i = 0; i < sizeof bad_windows / sizeof bad_windows[0]; i++) {
        char msg[256];
        snprintf(msg, sizeof msg,
                 "COLTUNE_SHM_WINDOW='%s': expected a size from 64 bytes to 1g (bytes, or "
                 "with a k, m or g suffix); variable ignored",
                 bad_windows[i]);
        expect_one_error("COLTUNE_SHM_WINDOW", bad_windows[i], msg);
    }
    expect_one_error("COLTUNE_CACHE", "-1m",
                     "COLTUNE_CACHE='-1m': expected auto or a size (bytes, or with a k, m or g "
                     "suffix; 0 keeps nothing between calls); variable ignored");
    expect_one_error("COLTUNE_CACHE", "lots",
                     "COLTUNE_CACHE='lots': expected auto or a size (bytes, or with a k, m or g "
                     "suffix; 0 keeps nothing between calls); variable ignored");
    expect_one_error("COLTUNE_TEST_SHM_FAIL", "-2",
                     "COLTUNE_TEST_SHM_FAIL='-2': expected a rank >= 0; variable ignored");
    expect_one_error("COLTUNE_TEST_SDDE_PIECE", "0",
                     "COLTUNE_TEST_SDDE_PIECE='0': expected a byte count >= 1; variable ignored");
    expect_one_error("COLTUNE_ALLTOALLV", "scattered:block_count=0",
                     "COLTUNE_ALLTOALLV='scattered:block_count=0': column 23: value 0 for "
                     "parameter 'block_count' of 'scattered' is out of range (1..P); variable "
                     "ignored");
    expect_one_error("COLTUNE_ALLTOALLV", "pairwise:stride=2",
                     "COLTUNE_ALLTOALLV='pairwise:stride=2': column 10: unknown parameter "
                     "'stride' for algorithm 'pairwise' (takes no parameters); variable "
                     "ignored");
}

/* Several bad variables: each reported once; the good ones still apply. */
static void test_errors_are_independent(void **state)
{
    (void)state;
    ct_config cfg;
    const char *env[] = {"COLTUNE_VERBOSE", "9", "COLTUNE_STATS", "1", "COLTUNE_PPN", "x",
                         "COLTUNE_ALLTOALLV", "linear", NULL};
    read_env(&cfg, env);
    assert_int_equal(cfg.nerrors, 2);
    assert_int_equal(cfg.set.stats, 1);
    assert_int_equal(cfg.forced_set[CT_COLL_ALLTOALLV], 1);
    /* Each message says which variable it is about (coltune-info sorts them). */
    assert_string_equal(cfg.error_about[0], "COLTUNE_VERBOSE");
    assert_string_equal(cfg.error_about[1], "COLTUNE_PPN");
    ct_config_free(&cfg);
}

static void test_known_variables(void **state)
{
    (void)state;
    static const char *const known[] = {
        "COLTUNE_RULES", "COLTUNE_DISABLE", "COLTUNE_VERBOSE", "COLTUNE_STATS",
        "COLTUNE_FALLBACK", "COLTUNE_PPN", "COLTUNE_SHM_WINDOW", "COLTUNE_TEST_SHM_FAIL",
        "COLTUNE_TEST_SDDE_PIECE", "COLTUNE_ALLTOALLV", "COLTUNE_ALLTOALL", "COLTUNE_ALLGATHER_INTER",
        "COLTUNE_ALLGATHERV_INTER", "COLTUNE_ALLTOALL_CRS", "COLTUNE_ALLTOALLV_CRS",
        "COLTUNE_DEVICE", "COLTUNE_ADAPT", "COLTUNE_ADAPT_OUT", "COLTUNE_ADAPT_CALLS",
        "COLTUNE_ADAPT_SHARE", "COLTUNE_ADAPT_RECHECK", "COLTUNE_TEST_ADAPT_DELAY",
        "COLTUNE_CACHE",
        "COLTUNE_TEST_ADAPT_PHASE", "COLTUNE_TEST_TAGS"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        assert_true(ct_config_known_variable(known[i]));
    assert_false(ct_config_known_variable("COLTUNE_VERBSE"));
    assert_false(ct_config_known_variable("COLTUNE_"));
    assert_false(ct_config_known_variable("coltune_verbose"));
}

/* Replaces the file at path with text. */
static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

static void test_rules_file(void **state)
{
    (void)state;
    char path[] = "/tmp/coltune-test-config-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char good[] = "alltoallv comm_size=2- pairwise\n";
    assert_int_equal(write(fd, good, sizeof good - 1), (ssize_t)(sizeof good - 1));
    close(fd);

    ct_config cfg;
    const char *env[] = {"COLTUNE_RULES", path, NULL};
    read_env(&cfg, env);
    assert_int_equal(cfg.nerrors, 0);
    assert_int_equal(cfg.rules.count, 1);
    ct_config_free(&cfg);

    /* A broken file: one message naming file:line:column, no rules at all. */
    write_file(path, "# comment\nalltoallv pairwise\nalltoallv nodes=3-1 pmpi\n");
    read_env(&cfg, env);
    assert_int_equal(cfg.nerrors, 1);
    assert_int_equal(cfg.rules.count, 0);
    char want[512];
    snprintf(want, sizeof want,
             "%s:3:17: empty range (3 > 1): '3-1'; rules file ignored, every call uses pmpi",
             path);
    assert_string_equal(cfg.errors[0], want);
    ct_config_free(&cfg);

    /* Every bad line is reported; the last message says the file is ignored. */
    write_file(path, "alltoallv nodes=3-1 pmpi\nalltoallv pairwise\nfoo pmpi\n");
    read_env(&cfg, env);
    assert_int_equal(cfg.nerrors, 2);
    assert_int_equal(cfg.rules.count, 0);
    snprintf(want, sizeof want, "%s:1:17: empty range (3 > 1): '3-1'", path);
    assert_string_equal(cfg.errors[0], want);
    assert_string_equal(cfg.error_about[0], "");
    snprintf(want, sizeof want,
             "%s:3:1: unknown collective (known: alltoallv, alltoall, ialltoallv, ialltoall, "
             "allgather_inter, allgatherv_inter, iallgather_inter, iallgatherv_inter, "
             "alltoall_crs, alltoallv_crs, neighbor_alltoallv, neighbor_alltoall, "
             "ineighbor_alltoallv, ineighbor_alltoall): 'foo'; rules file ignored, every call "
             "uses pmpi", path);
    assert_string_equal(cfg.errors[1], want);
    ct_config_free(&cfg);

    /* Beyond five, the rest are counted and coltune-info named. */
    char nine[9 * 16 + 1] = "";
    for (int i = 0; i < 9; i++)
        strcat(nine, "alltoallv bogus\n");
    write_file(path, nine);
    read_env(&cfg, env);
    assert_int_equal(cfg.nerrors, 6);
    snprintf(want, sizeof want,
             "%s: 4 more errors (coltune-info --check %s lists them all); rules file ignored, "
             "every call uses pmpi", path, path);
    assert_string_equal(cfg.errors[5], want);
    ct_config_free(&cfg);

    /* A missing file named by COLTUNE_RULES is an error too. */
    unlink(path);
    read_env(&cfg, env);
    assert_int_equal(cfg.nerrors, 1);
    snprintf(want, sizeof want,
             "%s: cannot open rules file: No such file or directory; rules file ignored, "
             "every call uses pmpi",
             path);
    assert_string_equal(cfg.errors[0], want);
    ct_config_free(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_good_values),
        cmocka_unit_test(test_known_variables),
        cmocka_unit_test(test_shm_window),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_errors_are_independent),
        cmocka_unit_test(test_rules_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
