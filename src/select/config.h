/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.h - coltune's configuration: environment variables and the rules
 * file, read once at initialisation and immutable afterwards.
 */
#ifndef CT_CONFIG_H
#define CT_CONFIG_H

#include "core/settings.h"
#include "select/rules.h"

typedef struct ct_config {
    ct_settings set; /* every variable but the forcing ones */
    ct_ruleset rules;
    const char *rules_origin; /* "COLTUNE_RULES" or "default", for messages */
    const char *rules_path;   /* the file read (NULL: none), for coltune-info */
    const char *adapt_out;    /* COLTUNE_ADAPT_OUT: where MPI_Finalize writes what the
                                 learners found (NULL: nowhere) */
    int forced_set[CT_COLL_COUNT];
    ct_spec forced[CT_COLL_COUNT];
    /* Messages about bad input, reported once by one rank (ct_config_report). */
    int nerrors;
    char errors[24][1024]; /* enough for every variable and a few bad rules lines */
    char error_about[24][32]; /* the variable each message is about, "" for the rules file */
} ct_config;

/* The configuration read once at initialisation (read-only afterwards; the
 * unit tests and coltune-info write it through ct_config_global). */
const ct_config *ct_cfg(void);
ct_config *ct_config_global(void);

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
