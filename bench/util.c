/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * util.c - error reports, notes and size formatting shared by coltune-bench.
 */
#include "bench.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_mpi_error(int rc, const char *what, const char *file, int line)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int rank = -1, len = 0;
    if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS)
        rank = -1;
    if (rc == MPI_ERR_NO_MEM || MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, rc == MPI_ERR_NO_MEM ? "out of memory" : "MPI error %d", rc);
    fprintf(stderr, "coltune-bench: rank %d: %s failed (%s:%d): %s\n", rank, what, file, line,
            msg);
    fflush(stderr);
}

void bench_note(int rank, const char *fmt, ...)
{
    va_list ap;
    if (rank != 0)
        return;
    va_start(ap, fmt);
    fputs("coltune-bench: note: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fflush(stderr);
    va_end(ap);
}

void bench_format_size(long bytes, char *buf, size_t len)
{
    static const struct {
        long unit;
        char suffix;
    } units[] = {{1L << 30, 'g'}, {1L << 20, 'm'}, {1L << 10, 'k'}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (bytes > 0 && bytes % units[i].unit == 0) {
            snprintf(buf, len, "%ld%c", bytes / units[i].unit, units[i].suffix);
            return;
        }
    snprintf(buf, len, "%ld", bytes);
}

int bench_parse_size(const char *text, size_t len, long max, long *out)
{
    long mult = 1, v = 0;
    if (len > 0) {
        switch (text[len - 1]) {
        case 'k': case 'K': mult = 1L << 10; len--; break;
        case 'm': case 'M': mult = 1L << 20; len--; break;
        case 'g': case 'G': mult = 1L << 30; len--; break;
        default: break;
        }
    }
    if (len == 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9' || v > (max - 9) / 10)
            return -1;
        v = v * 10 + (text[i] - '0');
    }
    if (v > max / mult)
        return -1;
    *out = v * mult;
    return 0;
}

int bench_preq_start(bench_preqs *p, bench_init_fn init, void *state, const char *spec,
                     MPI_Request *req)
{
    int i = 0, rc;
    const char *key = spec != NULL ? spec : ""; /* NULL: "rules", decided as intercepted */
    while (i < p->n && strcmp(p->spec[i], key) != 0)
        i++;
    if (i == p->n) {
        if (p->n == p->cap) {
            const int cap = p->cap ? 2 * p->cap : 8;
            char(*specs)[BENCH_SPEC_LEN] = realloc(p->spec, (size_t)cap * sizeof *specs);
            if (specs != NULL)
                p->spec = specs;
            MPI_Request *reqs = realloc(p->req, (size_t)cap * sizeof *reqs);
            if (reqs != NULL)
                p->req = reqs;
            if (specs == NULL || reqs == NULL)
                return MPI_ERR_NO_MEM;
            p->cap = cap;
        }
        snprintf(p->spec[i], BENCH_SPEC_LEN, "%s", key);
        rc = init(state, spec, &p->req[i]);
        if (rc != MPI_SUCCESS)
            return rc;
        p->n++;
    }
    *req = p->req[i];
    return MPI_Start(&p->req[i]);
}

void bench_preqs_free(bench_preqs *p)
{
    for (int i = 0; i < p->n; i++)
        MPI_Request_free(&p->req[i]);
    free(p->spec);
    free(p->req);
    memset(p, 0, sizeof *p);
}

int bench_start_wait(int (*start)(void *, const char *, MPI_Request *), void *state,
                     const char *spec)
{
    MPI_Request req;
    const int rc = start(state, spec, &req);
    return rc == MPI_SUCCESS ? MPI_Wait(&req, MPI_STATUS_IGNORE) : rc;
}
