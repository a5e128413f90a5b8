/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common_sdde.h - what the sparse dynamic data exchange drivers share
 * (driver_alltoall_crs.c, driver_alltoallv_crs.c): the send patterns, the
 * caller-allocated outputs at exact capacity, the PMPI_ reference and the
 * check.
 */
#ifndef BENCH_COMMON_SDDE_H
#define BENCH_COMMON_SDDE_H

#include "bench.h"

#include <stddef.h>

/* One rank's side of the exchange. Elements are MPI_INT. */
typedef struct bench_sdde {
    MPI_Comm comm;
    int v;                 /* MPIX_Alltoallv_crs */
    int rank, P;
    /* send side: message i is scounts[i] ints at sendvals + sdispls[i], to dest[i] */
    int nnz, send_size, sendcount; /* sendcount: every message (alltoall_crs) */
    int *dest, *scounts, *sdispls, *sendvals;
    /* what arrives, from the reference exchange of counts in setup: exactly
     * the capacity handed to coltune, sorted by source */
    int cap_nnz, cap_size; /* messages, ints */
    int *ref_src, *ref_counts;
    int *ref_vals;         /* --check only: PMPI_Alltoallv's result, packed by source */
    /* coltune's outputs, each followed by a guard */
    int recv_nnz, recv_size;
    int *src, *rcounts, *rdispls, *recvvals;
} bench_sdde;

/* The destinations of rank me under --pattern, ascending (dest holds P + 27;
 * a pure function of the options and env's P and nodes, so any rank can
 * compute any rank's):
 * their number, or -1 when out of memory. The neighbourhood drivers'
 * graphs too (common_neighbor.c). */
int bench_pattern_dests(const bench_options *o, const bench_env *env, int me, int *dest);

/* Builds this rank's messages for --pattern and size S, the exact receive
 * capacity (PMPI_Alltoall of the counts) and, with --check, the reference
 * data (PMPI_Alltoallv). A bench_driver setup. */
int bench_sdde_setup(const bench_options *o, const bench_env *env, long S, int v, void **state,
                     char *err, size_t errlen);
void bench_sdde_teardown(void *state);

/* Before a checked call: outputs and guards to the sentinel. */
void bench_sdde_clear(bench_sdde *s);
/* The first difference from the reference: message count, sources, counts,
 * displacements, received size, then the bytes (guards included). */
void bench_sdde_compare(const bench_sdde *s, bench_mismatch *m);

/* coltune_sdde_internode_msgs on the communicator (bench_driver hook). */
int bench_sdde_internode_msgs(void *state, long *count);

#endif
