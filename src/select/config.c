/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.c - reads the COLTUNE_* environment variables and the rules file.
 *
 * Bad input never stops a job: each bad variable is reported (with its value
 * and what was expected) and ignored; a bad rules file is reported with
 * file:line:column and ignored whole, so every call runs pmpi.
 */
#include "select/config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CT_DEFAULT_RULES
#define CT_DEFAULT_RULES "/etc/coltune/coltune.rules"
#endif

static const char *const forced_env[CT_COLL_COUNT] = {
#define CT_COLLECTIVE(ID, name, call, fallback, msg_size_known) [CT_COLL_##ID] = "COLTUNE_" #ID,
#include "coll_list.h"
};

const char *ct_config_env_name(ct_coll coll) { return forced_env[coll]; }

/* The configuration of the process (shim/init.c reads it once). */
static ct_config the_config;

const ct_config *ct_cfg(void) { return &the_config; }
ct_config *ct_config_global(void) { return &the_config; }

/* The variables coltune reads besides the forced ones. */
static const char *const plain_vars[] = {
    "COLTUNE_RULES",    "COLTUNE_DISABLE", "COLTUNE_VERBOSE",    "COLTUNE_STATS",
    "COLTUNE_FALLBACK", "COLTUNE_PPN",     "COLTUNE_SHM_WINDOW", "COLTUNE_TEST_SHM_FAIL",
    "COLTUNE_TEST_SDDE_PIECE", "COLTUNE_DEVICE", "COLTUNE_ADAPT", "COLTUNE_ADAPT_OUT",
    "COLTUNE_ADAPT_CALLS", "COLTUNE_ADAPT_SHARE", "COLTUNE_ADAPT_RECHECK",
    "COLTUNE_TEST_ADAPT_DELAY", "COLTUNE_TEST_ADAPT_PHASE", "COLTUNE_CACHE",
    "COLTUNE_TEST_TAGS",
};

int ct_config_known_variable(const char *name)
{
    for (size_t i = 0; i < sizeof plain_vars / sizeof plain_vars[0]; i++)
        if (strcmp(name, plain_vars[i]) == 0)
            return 1;
    for (int c = 0; c < CT_COLL_COUNT; c++)
        if (strcmp(name, forced_env[c]) == 0)
            return 1;
    return 0;
}

/* Records a message about variable about ("" for the rules file). */
static void add_error(ct_config *cfg, const char *about, const char *fmt, ...) CT_PRINTF(3, 4);
static void add_error(ct_config *cfg, const char *about, const char *fmt, ...)
{
    va_list ap;
    if (cfg->nerrors >= (int)(sizeof cfg->errors / sizeof cfg->errors[0]))
        return;
    snprintf(cfg->error_about[cfg->nerrors], sizeof cfg->error_about[0], "%s", about);
    va_start(ap, fmt);
    vsnprintf(cfg->errors[cfg->nerrors++], sizeof cfg->errors[0], fmt, ap);
    va_end(ap);
}

/* Parses an integer in [lo, hi] from the whole string. */
static int parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    if (*s == '\0')
        return -1;
    long v = strtol(s, &end, 10);
    if (*end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static void read_int(ct_config *cfg, const char *(*get)(const char *), const char *name,
                     long lo, long hi, const char *expected, int *out)
{
    const char *v = get(name);
    long x;
    if (v == NULL)
        return;
    if (parse_int(v, lo, hi, &x) == 0)
        *out = (int)x;
    else
        add_error(cfg, name, "%s='%s': expected %s; variable ignored", name, v, expected);
}

/* name=one of words (NULL-terminated): its index, or -1 when name is unset
 * or another word (recorded as an error). */
static int read_word(ct_config *cfg, const char *(*get)(const char *), const char *name,
                     const char *const *words, const char *expected)
{
    const char *v = get(name);
    if (v == NULL)
        return -1;
    for (int i = 0; words[i] != NULL; i++)
        if (strcmp(v, words[i]) == 0)
            return i;
    add_error(cfg, name, "%s='%s': expected %s; variable ignored", name, v, expected);
    return -1;
}

/* COLTUNE_PPN=n or n:cyclic */
static void read_ppn(ct_config *cfg, const char *(*get)(const char *))
{
    const char *v = get("COLTUNE_PPN");
    char num[32];
    long n;
    if (v == NULL)
        return;
    const char *colon = strchr(v, ':');
    size_t len = colon ? (size_t)(colon - v) : strlen(v);
    int cyclic = colon != NULL && strcmp(colon + 1, "cyclic") == 0;
    if (len < sizeof num) {
        memcpy(num, v, len);
        num[len] = '\0';
    }
    if (len >= sizeof num || (colon != NULL && !cyclic) || parse_int(num, 1, 1L << 30, &n) != 0) {
        add_error(cfg, "COLTUNE_PPN",
                  "COLTUNE_PPN='%s': expected a rank count n >= 1, optionally followed by "
                  ":cyclic; variable ignored", v);
        return;
    }
    cfg->set.ppn = (int)n;
    cfg->set.ppn_cyclic = cyclic;
}

/* COLTUNE_SHM_WINDOW=bytes, with an optional k, m or g suffix (as rules sizes) */
static void read_shm_window(ct_config *cfg, const char *(*get)(const char *))
{
    const char *v = get("COLTUNE_SHM_WINDOW");
    long n;
    if (v == NULL)
        return;
    if (ct_size_parse(v, strlen(v), &n) != 0 || (size_t)n < CT_SHM_WINDOW_MIN ||
        (size_t)n > CT_SHM_WINDOW_MAX) {
        add_error(cfg, "COLTUNE_SHM_WINDOW",
                  "COLTUNE_SHM_WINDOW='%s': expected a size from %zu bytes to 1g (bytes, or "
                  "with a k, m or g suffix); variable ignored", v, CT_SHM_WINDOW_MIN);
        return;
    }
    cfg->set.shm_window = (size_t)n;
}

static void read_forced(ct_config *cfg, const char *(*get)(const char *))
{
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        const char *v = get(forced_env[c]);
        ct_parse_error err;
        if (v == NULL || *v == '\0')
            continue;
        if (ct_spec_parse(v, strlen(v), (ct_coll)c, &cfg->forced[c], &err) == 0) {
            cfg->forced_set[c] = 1;
            continue;
        }
        add_error(cfg, forced_env[c], "%s='%s': column %d: %s; variable ignored", forced_env[c],
                  v, err.column + 1, err.message);
    }
}

/* A broken rules file: each bad line is reported (the first few), and the
 * last message says the file is ignored. */
#define RULES_ERRORS_SHOWN 5

typedef struct rules_errors {
    ct_config *cfg;
    int count;
} rules_errors;

static void add_rules_error(void *arg, const char *msg)
{
    rules_errors *re = arg;
    if (re->count++ < RULES_ERRORS_SHOWN)
        add_error(re->cfg, "", "%s", msg);
}

static void read_rules(ct_config *cfg, const char *(*get)(const char *))
{
    const char *path = get("COLTUNE_RULES");
    rules_errors re = {cfg, 0};
    cfg->rules_origin = "COLTUNE_RULES";
    if (path == NULL) {
        path = CT_DEFAULT_RULES;
        cfg->rules_origin = "default";
        if (access(path, F_OK) != 0)
            return; /* no installed default: every call uses pmpi */
    }
    if (*path == '\0')
        return; /* COLTUNE_RULES= (empty) turns the rules off */
    cfg->rules_path = path;
    if (ct_rules_load_report(path, &cfg->rules, add_rules_error, &re) == 0)
        return;
    if (re.count > RULES_ERRORS_SHOWN)
        add_error(cfg, "", "%s: %d more error%s (coltune-info --check %s lists them all)", path,
                  re.count - RULES_ERRORS_SHOWN, re.count - RULES_ERRORS_SHOWN > 1 ? "s" : "",
                  path);
    char *last = cfg->errors[cfg->nerrors - 1];
    size_t used = strlen(last);
    snprintf(last + used, sizeof cfg->errors[0] - used,
             "; rules file ignored, every call uses pmpi");
}

/* COLTUNE_CACHE=auto, or bytes with an optional k, m or g suffix (0: keep
 * nothing between calls) */
static void read_cache(ct_config *cfg, const char *(*get)(const char *))
{
    const char *v = get("COLTUNE_CACHE");
    long n;
    if (v == NULL || strcmp(v, "auto") == 0)
        return;
    if (ct_size_parse(v, strlen(v), &n) != 0 || n < 0) {
        add_error(cfg, "COLTUNE_CACHE",
                  "COLTUNE_CACHE='%s': expected auto or a size (bytes, or with a k, m or g "
                  "suffix; 0 keeps nothing between calls); variable ignored", v);
        return;
    }
    cfg->set.cache = (size_t)n;
    cfg->set.cache_auto = 0;
}

static void set_defaults(ct_config *cfg)
{
    cfg->set.cache_auto = 1;
    cfg->set.shm_window = CT_SHM_WINDOW_DEFAULT;
    cfg->set.test_shm_fail = -1;
    cfg->set.adapt_calls = CT_ADAPT_CALLS_DEFAULT;
    cfg->set.adapt_share = CT_ADAPT_SHARE_DEFAULT;
    cfg->set.adapt_recheck = CT_ADAPT_RECHECK_DEFAULT;
}

/* The online tuning's variables (select/adapt.h). */
static void read_adapt(ct_config *cfg, const char *(*get)(const char *))
{
    read_int(cfg, get, "COLTUNE_ADAPT", 0, 1, "0 or 1", &cfg->set.adapt);
    read_int(cfg, get, "COLTUNE_ADAPT_CALLS", 1, INT_MAX, "a call count >= 1",
             &cfg->set.adapt_calls);
    read_int(cfg, get, "COLTUNE_ADAPT_SHARE", 1, 100, "a percentage from 1 to 100",
             &cfg->set.adapt_share);
    read_int(cfg, get, "COLTUNE_ADAPT_RECHECK", 0, INT_MAX, "a call count >= 0 (0: never)",
             &cfg->set.adapt_recheck);
    read_int(cfg, get, "COLTUNE_TEST_ADAPT_DELAY", 1, 1000000, "microseconds from 1 to 1000000",
             &cfg->set.test_adapt_delay);
    read_int(cfg, get, "COLTUNE_TEST_ADAPT_PHASE", 1, INT_MAX, "a call count >= 1",
             &cfg->set.test_adapt_phase);
    const char *out = get("COLTUNE_ADAPT_OUT");
    if (out != NULL && *out != '\0')
        cfg->adapt_out = out;
}

static const char *plain_getenv(const char *name) { return getenv(name); }

void ct_config_read(ct_config *cfg, const char *(*getenv_fn)(const char *name))
{
    static const char *const fallbacks[] = {"print", "silent", "error", NULL}; /* ct_fallback */
    static const char *const devices[] = {"auto", "always", NULL}; /* device_always 0, 1 */
    const char *(*get)(const char *) = getenv_fn ? getenv_fn : plain_getenv;
    memset(cfg, 0, sizeof *cfg);
    set_defaults(cfg);
    read_int(cfg, get, "COLTUNE_DISABLE", 0, 1, "0 or 1", &cfg->set.disabled);
    read_int(cfg, get, "COLTUNE_VERBOSE", 0, 2, "0, 1 or 2", &cfg->set.verbose);
    read_int(cfg, get, "COLTUNE_STATS", 0, 1, "0 or 1", &cfg->set.stats);
    int w = read_word(cfg, get, "COLTUNE_FALLBACK", fallbacks, "print, silent or error");
    if (w >= 0)
        cfg->set.fallback = (ct_fallback)w;
    w = read_word(cfg, get, "COLTUNE_DEVICE", devices, "auto or always");
    if (w >= 0)
        cfg->set.device_always = w;
    read_ppn(cfg, get);
    read_shm_window(cfg, get);
    read_cache(cfg, get);
    read_int(cfg, get, "COLTUNE_TEST_SHM_FAIL", 0, INT_MAX, "a rank >= 0",
             &cfg->set.test_shm_fail);
    read_int(cfg, get, "COLTUNE_TEST_SDDE_PIECE", 1, INT_MAX, "a byte count >= 1",
             &cfg->set.test_sdde_piece);
    read_int(cfg, get, "COLTUNE_TEST_TAGS", 1, CT_TAG_PERSISTENT_SPAN,
             "a count of tags, 1-8192", &cfg->set.test_tags);
    read_adapt(cfg, get);
    read_forced(cfg, get);
    read_rules(cfg, get);
}

void ct_config_report(const ct_config *cfg)
{
    for (int i = 0; i < cfg->nerrors; i++)
        fprintf(stderr, "coltune: error: %s\n", cfg->errors[i]);
    if (cfg->nerrors)
        fflush(stderr);
}

void ct_config_free(ct_config *cfg)
{
    ct_rules_free(&cfg->rules);
    memset(cfg, 0, sizeof *cfg);
    set_defaults(cfg);
}
