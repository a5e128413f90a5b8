/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * out.c - how coltune-info prints (out.h).
 */
#include "info/out.h"

#include <stdarg.h>

void info_kv(const info_out *o, const char *key, const char *fmt, ...)
{
    va_list ap;
    fprintf(o->f, "%s:", key);
    va_start(ap, fmt);
    vfprintf(o->f, fmt, ap);
    va_end(ap);
    fputc('\n', o->f);
}

void info_size(long v, char *buf, size_t len)
{
    static const char suffix[] = "gmk";
    for (int i = 0; i < 3; i++) {
        long unit = 1L << (10 * (3 - i));
        if (v > 0 && v % unit == 0) {
            snprintf(buf, len, "%ld%c", v / unit, suffix[i]);
            return;
        }
    }
    snprintf(buf, len, "%ld", v);
}
