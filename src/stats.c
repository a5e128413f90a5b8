/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stats.c - statistics table. Calls and time are the maximum over ranks,
 * bytes the sum over ranks, extra memory the maximum over ranks and calls.
 */
#include "stats.h"
#include "algorithms.h"
#include "core/cache.h"
#include "core/log.h"
#include "core/state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FIELDS = 4 };
_Static_assert(CT_COLL_COUNT <= CT_STATS_MAX_COLLS, "CT_STATS_MAX_COLLS too small");

/* The process's statistics, under ct_state_lock. */
static ct_stats the_stats;

void ct_stats_init(int count)
{
    ct_stats *s = &the_stats;
    s->count = count;
    s->entries = calloc((size_t)s->count, sizeof *s->entries);
    for (int c = 0; c < CT_STATS_MAX_COLLS; c++)
        s->device[c] = 0;
    if (s->entries == NULL)
        s->count = 0;
}

void ct_stats_free(void)
{
    ct_stats *s = &the_stats;
    free(s->entries);
    s->entries = NULL;
    s->count = 0;
}

void ct_stats_record(int alg_index, int calls, double bytes, double seconds, size_t extra_bytes)
{
    ct_state *st = ct_state_get();
    ct_state_lock(st);
    if (alg_index >= 0 && alg_index < the_stats.count) {
        ct_stat_entry *e = &the_stats.entries[alg_index];
        e->calls += calls;
        e->bytes += bytes;
        e->seconds += seconds;
        if ((double)extra_bytes > e->peak_extra)
            e->peak_extra = (double)extra_bytes;
    }
    ct_state_unlock(st);
}

void ct_stats_record_device(int coll)
{
    ct_state *st = ct_state_get();
    ct_state_lock(st);
    if (coll >= 0 && coll < CT_COLL_COUNT)
        the_stats.device[coll] += 1;
    ct_state_unlock(st);
}

/* The calls device memory took away from the algorithms, per collective:
 * those without an MPI routine (MPIX_*_crs, whose fallback is not pmpi)
 * refuse them, the others forward them (counted under pmpi too). */
static void print_device(const double *maxv)
{
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        if (maxv[c] == 0)
            continue;
        const int refused = !ct_coll_has_pmpi((ct_coll)c);
        /* the calls column of the rows above, under a wider label */
        printf("%-20s %-24s %8.0f\n", ct_coll_name((ct_coll)c),
               refused ? "refused: device memory" : "forwarded: device memory", maxv[c]);
    }
}

static void print_table(const double *maxv, const double *sumv, int n)
{
    /* What this rank printed before (the learners' table, often longer than
     * stdout's buffer on a pipe) leaves first, so that the table goes out
     * in one write of whole lines, which mpirun does not interleave with
     * another rank's output (neighbor.sh parses the rows). */
    fflush(stdout);
    printf("coltune statistics (calls and time: max over ranks; bytes sent: sum over ranks;"
           " extra memory: peak per call, max over ranks)\n");
    printf("%-20s %-22s %10s %14s %12s %14s\n", "collective", "algorithm", "calls", "bytes",
           "time [s]", "extra mem [B]");
    for (int i = 0; i < n; i++) {
        const double *mx = &maxv[FIELDS * i], *sm = &sumv[FIELDS * i];
        if (mx[0] == 0)
            continue;
        const ct_algorithm *a = ct_algorithm_at(i);
        printf("%-20s %-22s %10.0f %14.0f %12.6f %14.0f\n", ct_coll_name(a->coll), a->name,
               mx[0], sm[1], mx[2], mx[3]);
    }
    print_device(maxv + FIELDS * n);
    fflush(stdout);
}

/* Bytes in the unit that reads best (B, KiB, MiB, GiB). */
static void format_bytes(double b, char *out, size_t n)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB"};
    int u = 0;
    while (b >= 1024 && u < 3) {
        b /= 1024;
        u++;
    }
    snprintf(out, n, u == 0 ? "%.0f %s" : "%.1f %s", b, unit[u]);
}

/* One line on what coltune kept between calls (core/cache.h): the most any
 * rank kept at a call boundary, against the limit, and what the limit cost. */
static int report_cache(MPI_Comm comm, int rank)
{
    ct_cache_report r;
    int rc = MPI_SUCCESS;
    ct_cache_get_report(&r);
    double local[5] = {(double)r.peak, (double)r.limit, (double)r.released_buffers,
                       (double)r.refused_windows, (double)r.released_windows};
    double maxv[5];
    char peak[32], limit[32];
    CT_CALL(PMPI_Reduce(local, maxv, 5, MPI_DOUBLE, MPI_MAX, 0, comm));
    if (rank != 0)
        goto out;
    format_bytes(maxv[0], peak, sizeof peak);
    format_bytes(maxv[1], limit, sizeof limit);
    printf("coltune cache: kept between calls at peak %s per rank, limit %s%s; buffers "
           "released %.0f times, windows refused %.0f times, windows released %.0f times "
           "(max over ranks)\n",
           peak, limit, ct_settings_get()->cache_auto ? " (COLTUNE_CACHE=auto)" : "",
           maxv[2], maxv[3], maxv[4]);
    fflush(stdout);
out:
    return rc;
}

int ct_stats_report(MPI_Comm comm)
{
    ct_stats *s = &the_stats;
    int n = s->count, rank, rc = MPI_SUCCESS;
    double *local = NULL, *maxv = NULL, *sumv = NULL;
    /* Each algorithm's fields, then each collective's device count. */
    size_t bytes = ((size_t)FIELDS * (size_t)n + CT_COLL_COUNT) * sizeof(double);
    CT_ALLOC(local, bytes);
    CT_ALLOC(maxv, bytes);
    CT_ALLOC(sumv, bytes);
    for (int i = 0; i < n; i++) {
        local[FIELDS * i + 0] = s->entries[i].calls;
        local[FIELDS * i + 1] = s->entries[i].bytes;
        local[FIELDS * i + 2] = s->entries[i].seconds;
        local[FIELDS * i + 3] = s->entries[i].peak_extra;
    }
    for (int c = 0; c < CT_COLL_COUNT; c++)
        local[FIELDS * n + c] = s->device[c];
    CT_CALL(PMPI_Comm_rank(comm, &rank));
    CT_CALL(PMPI_Reduce(local, maxv, FIELDS * n + CT_COLL_COUNT, MPI_DOUBLE, MPI_MAX, 0, comm));
    CT_CALL(PMPI_Reduce(local, sumv, FIELDS * n + CT_COLL_COUNT, MPI_DOUBLE, MPI_SUM, 0, comm));
    if (rank == 0)
        print_table(maxv, sumv, n);
    CT_CALL(report_cache(comm, rank));
out:
    free(local);
    free(maxv);
    free(sumv);
    return rc;
}
