/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check.h - coltune-info --check (check.c): checks a rules file and answers
 * what-would-run queries with the job's own decision function.
 */
#ifndef CT_INFO_CHECK_H
#define CT_INFO_CHECK_H

#include "info/out.h"
#include "select/config.h"

/* What --check FILE asks for. */
typedef struct check_query {
    const char *file;
    long P;         /* --np, 0 when not given */
    long nodes;     /* --nodes, 0 when not given */
    long ppn;       /* --ppn, 0 when not given */
    int cyclic;     /* --cyclic: ranks dealt round-robin over the nodes */
    long msg_size;  /* --msg-size, -1 when not given */
    long degree;    /* --degree, -1 when not given (then offnode is too) */
    long offnode;   /* --offnode, -1 when not given */
    long components; /* --components, 1 when not given */
    int coll;       /* --coll, -1 for every collective */
} check_query;

/* coltune-info --check: returns the exit status (0 fine, 1 errors, 2 usage).
 * env is the job's configuration (its forced variables and COLTUNE_PPN are
 * honoured; its rules are replaced by q->file's). */
int info_check(const info_out *o, const check_query *q, const ct_config *env);

#endif
