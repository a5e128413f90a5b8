/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * info.h - coltune-info: what an installation holds, checked without mpirun.
 *
 * coltune-info.c prints the report (version, MPI library, intercepted entry
 * points, algorithms, rules file, environment); check.c checks a rules file
 * and answers what-would-run queries with the job's own decision function.
 * Both print for people, or one "key:value" per line (--parsable).
 */
#ifndef CT_INFO_H
#define CT_INFO_H

#include "select/config.h"

#include <stdio.h>

typedef struct info_out {
    int parsable;
    FILE *f;
} info_out;

/* --parsable: prints "key:value" (key already joined with ':'). */
void info_kv(const info_out *o, const char *key, const char *fmt, ...) CT_PRINTF(3, 4);

/* A size as the rules file writes it: 4096 -> "4k", 4097 -> "4097". */
void info_size(long v, char *buf, size_t len);

/* What --check FILE asks for. */
typedef struct check_query {
    const char *file;
    long P;         /* --np, 0 when not given */
    long nodes;     /* --nodes, 0 when not given */
    long ppn;       /* --ppn, 0 when not given */
    int cyclic;     /* --cyclic: ranks dealt round-robin over the nodes */
    long msg_size;  /* --msg-size, -1 when not given */
    int coll;       /* --coll, -1 for every collective */
} check_query;

/* coltune-info --check: returns the exit status (0 fine, 1 errors, 2 usage).
 * env is the job's configuration (its forced variables and COLTUNE_PPN are
 * honoured; its rules are replaced by q->file's). */
int info_check(const info_out *o, const check_query *q, const ct_config *env);

#endif
