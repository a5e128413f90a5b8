/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stats.h - per-algorithm statistics, reported at MPI_Finalize with
 * COLTUNE_STATS=1: calls, bytes, time and peak extra memory per collective
 * and algorithm, reduced over MPI_COMM_WORLD.
 */
#ifndef CT_STATS_H
#define CT_STATS_H

#include "core/ct_common.h"

typedef struct ct_stat_entry {
    double calls;      /* this rank's calls */
    double bytes;      /* bytes this rank sent */
    double seconds;    /* this rank's total time inside the algorithm */
    double peak_extra; /* largest extra memory one call allocated, bytes */
} ct_stat_entry;

/* Room for every collective (stats.c checks CT_COLL_COUNT fits). */
#define CT_STATS_MAX_COLLS 16

typedef struct ct_stats {
    int count; /* one entry per registry entry */
    ct_stat_entry *entries;
    /* Calls per collective that a buffer in device memory took away from
     * coltune's algorithms: forwarded to the MPI library, or refused (the
     * sparse exchanges, which have no MPI routine). */
    double device[CT_STATS_MAX_COLLS];
} ct_stats;

/* Room for count registry entries (at initialisation); freed at the end. */
void ct_stats_init(int count);
void ct_stats_free(void);

/* Adds calls calls (1, or 0 for a persistent call's init, whose starts
 * count) of registry entry alg_index (thread safe). */
void ct_stats_record(int alg_index, int calls, double bytes, double seconds, size_t extra_bytes);

/* Counts one call of collective coll (a ct_coll) served elsewhere because of
 * device memory (thread safe). */
void ct_stats_record_device(int coll);

/* Collective over comm: reduces and prints the table on rank 0 of comm. */
int ct_stats_report(MPI_Comm comm);

#endif
