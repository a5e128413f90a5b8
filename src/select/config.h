/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.h - coltune's configuration: environment variables and the rules
 * file, read once at initialisation and immutable afterwards.
 */
#ifndef CT_CONFIG_H
#define CT_CONFIG_H

#include "select/rules.h"

typedef enum ct_fallback {
    CT_FALLBACK_PRINT = 0, /* one warning per distinct reason, run pmpi */
    CT_FALLBACK_SILENT,    /* run pmpi quietly */
    CT_FALLBACK_ERROR      /* the call returns an MPI error */
} ct_fallback;

typedef struct ct_config {
    int disabled; /* COLTUNE_DISABLE=1: forward everything */
    int verbose;  /* COLTUNE_VERBOSE: 0, 1 (each distinct decision), 2 (every call) */
    int stats;    /* COLTUNE_STATS=1: table at MPI_Finalize */
    int device_always; /* COLTUNE_DEVICE=always: every communicator agrees on
                          device memory, GPU runtime loaded or not; auto (0):
                          those where some rank had one when the context was
                          made (ctx->device_agree, select/decide.h) */
    ct_fallback fallback;
    int ppn;        /* COLTUNE_PPN=n: emulated ranks per node, 0 = real topology */
    int ppn_cyclic; /* COLTUNE_PPN=n:cyclic: ranks dealt round-robin over the nodes */
    size_t shm_window; /* COLTUNE_SHM_WINDOW: data bytes per rank per half of the
                          Alltoall(v) shared windows (core/shm_stream.h) */
    int test_shm_fail; /* COLTUNE_TEST_SHM_FAIL=r: rank r of every communicator
                          cannot use a shared window (tests only); -1 none */
    int test_sdde_piece; /* COLTUNE_TEST_SDDE_PIECE=b: the locality-aware sparse
                            exchanges cut aggregates into pieces of at most b
                            bytes (tests only); 0 none */
    ct_ruleset rules;
    const char *rules_origin; /* "COLTUNE_RULES" or "default", for messages */
    const char *rules_path;   /* the file read (NULL: none), for coltune-info */
    int forced_set[CT_COLL_COUNT];
    ct_spec forced[CT_COLL_COUNT];
    /* Messages about bad input, reported once by one rank (ct_config_report). */
    int nerrors;
    char errors[24][1024]; /* enough for every variable and a few bad rules lines */
    char error_about[24][32]; /* the variable each message is about, "" for the rules file */
} ct_config;

/* Default of COLTUNE_SHM_WINDOW, and its bounds. */
#define CT_SHM_WINDOW_DEFAULT ((size_t)256 << 10)
#define CT_SHM_WINDOW_MIN ((size_t)64)
#define CT_SHM_WINDOW_MAX ((size_t)1 << 30)

/* True when name is a variable coltune reads. */
int ct_config_known_variable(const char *name);

/* The environment variable that forces an algorithm for coll. */
const char *ct_config_env_name(ct_coll coll);

/* Reads every COLTUNE_* variable and the rules file. getenv_fn lets the unit
 * tests supply their own environment (NULL means getenv). */
void ct_config_read(ct_config *cfg, const char *(*getenv_fn)(const char *name));

/* Prints the collected error messages (call on one rank only). */
void ct_config_report(const ct_config *cfg);

void ct_config_free(ct_config *cfg);

#endif
