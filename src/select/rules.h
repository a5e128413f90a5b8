/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rules.h - the tuning rules file.
 *
 * Line oriented, '#' starts a comment, one rule per line, first match wins:
 *
 *   alltoallv  comm_size=2-64  msg_size=0-511  nodes=1-  ppn=*  tuna:radix=2
 *
 * The first token is a collective name, the last an algorithm spec (spec.h);
 * between them any of the condition keys comm_size, msg_size, nodes, ppn
 * (persistent for the nonblocking collectives, degree, offnode and components
 * for the neighbourhood ones), each at most once, with an inclusive range: "a-b",
 * "a-", "-b", "a" or "*".
 * Numbers take k/m/g suffixes (powers of 1024). A key left out matches all.
 * The spec "adapt", or "adapt:" and specs separated by '|', makes the calls
 * the rule matches learn their algorithm online (select/adapt.h).
 */
#ifndef CT_RULES_H
#define CT_RULES_H

#include "select/spec.h"

typedef enum ct_key {
    CT_KEY_COMM_SIZE = 0,
    CT_KEY_MSG_SIZE,
    CT_KEY_NODES,
    CT_KEY_PPN,
    CT_KEY_PERSISTENT, /* 1: a persistent call (MPI_Alltoallv_init ...), 0: a
                          nonblocking one; the nonblocking collectives only */
    /* The neighbourhood collectives only, facts of the communicator's graph
     * agreed once when it is read (neighbor/nbr_graph.h): */
    CT_KEY_DEGREE,  /* destinations per rank, the mean over the ranks, rounded */
    CT_KEY_OFFNODE, /* percentage of the graph's edges that join two nodes */
    CT_KEY_COMPONENTS, /* its weakly connected components (an isolated rank
                          is one; 0: not counted, a graph of more than 4M
                          edges); with 1, MPI_Neighbor_alltoall's msg_size
                          is known on every rank without communication */
    CT_KEY_COUNT
} ct_key;

typedef struct ct_range {
    long lo, hi; /* inclusive; hi == LONG_MAX when open */
} ct_range;

typedef struct ct_rule {
    ct_coll coll;
    unsigned key_mask; /* bit k set: range[k] is a condition ("*" and "0-" match
                          everything, so they leave the bit clear) */
    ct_range range[CT_KEY_COUNT];
    ct_spec spec; /* for an adapt rule: the fallback (pmpi) */
    int line;     /* 1-based line in the file */
    /* "adapt" or "adapt:spec|spec|...": the matched calls learn online
     * (select/adapt.h) among ncands candidates, or among every algorithm of
     * the collective when ncands is 0. */
    int adapt;
    int ncands;
    ct_spec *cands; /* owned by the rule set */
} ct_rule;

/* Candidates one adapt rule may list. */
#define CT_RULE_MAX_CANDS 32

typedef struct ct_ruleset {
    char *name; /* file path (or a label for in-memory text) */
    ct_rule *rules;
    int count;
} ct_ruleset;

/* Longest message the parser writes. */
#define CT_RULES_MSG_MAX 900

/* Receives each error message (arg is the caller's). */
typedef void (*ct_rules_error_fn)(void *arg, const char *message);

/*
 * Parses a whole rules text, every line of it. On success returns 0 and fills
 * *out (free with ct_rules_free). Otherwise leaves *out empty (the whole file
 * is rejected), passes one message per bad line to on_error (may be NULL):
 *   "<name>:<line>:<column>: <what>: '<offending text>'"
 * (column 1-based), and returns how many there were.
 */
int ct_rules_parse_report(const char *text, const char *name, ct_ruleset *out,
                          ct_rules_error_fn on_error, void *arg);

/*
 * The largest rules file read: 4 MiB. A hand-written file is a few hundred
 * bytes; coltune-tune writes at most a rule and a comment, some 120 bytes,
 * per measured cell, so 4 MiB holds some 35,000 cells, more than a tuning
 * run measures in days. Every rank of a job reads the file in MPI_Init, so
 * the limit also bounds what a job start reads from a shared file system.
 * (man/coltune.rules.5 documents it.)
 */
#define CT_RULES_MAX_BYTES ((size_t)4 << 20)

/* Reads (core/readfile.h: only a regular file of at most CT_RULES_MAX_BYTES,
 * never blocking) and parses a file, as ct_rules_parse_report; a file that
 * cannot be used at all is one error with its own message:
 *   "<path>: cannot open rules file: <strerror>"
 *   "<path>: cannot read rules file: a FIFO, not a regular file" (a directory, ...)
 *   "<path>: cannot read rules file: larger than the limit of 4 MiB"
 *   "<path>: cannot read rules file: contains a NUL byte" */
int ct_rules_load_report(const char *path, ct_ruleset *out, ct_rules_error_fn on_error,
                         void *arg);

void ct_rules_free(ct_ruleset *rs);

/* count[c] = the number of rules of collective c (count has CT_COLL_COUNT). */
void ct_rules_count(const ct_ruleset *rs, int *count);

/* True when value lies in r. */
static inline int ct_range_contains(ct_range r, long v) { return v >= r.lo && v <= r.hi; }

#endif
