/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * out.h - how coltune-info prints (out.c): for people, or one "key:value"
 * per line (--parsable). Used by the report (coltune-info.c) and by the
 * checks (check.c).
 */
#ifndef CT_INFO_OUT_H
#define CT_INFO_OUT_H

#include "core/ct_common.h"

#include <stdio.h>

typedef struct info_out {
    int parsable;
    FILE *f;
} info_out;

/* --parsable: prints "key:value" (key already joined with ':'). */
void info_kv(const info_out *o, const char *key, const char *fmt, ...) CT_PRINTF(3, 4);

/* A size as the rules file writes it: 4096 -> "4k", 4097 -> "4097". */
void info_size(long v, char *buf, size_t len);

#endif
