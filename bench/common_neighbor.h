/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common_neighbor.h - what the neighbourhood all-to-all drivers share
 * (driver_neighbor_alltoallv.c, driver_neighbor_alltoall.c), blocking,
 * nonblocking and persistent: the distributed graph of --pattern, the
 * buffers, the PMPI_ reference and the check.
 */
#ifndef BENCH_COMMON_NEIGHBOR_H
#define BENCH_COMMON_NEIGHBOR_H

#include "bench.h"

typedef struct bench_nbr {
    MPI_Comm comm; /* the graph communicator (MPI_Dist_graph_create_adjacent) */
    int v;         /* Neighbor_alltoallv: a size per edge */
    int rank, indegree, outdegree;
    int *sources, *dests;
    int *scounts, *sdispls, *rcounts, *rdispls; /* bytes */
    int scount;                                  /* Neighbor_alltoall: bytes per block */
    unsigned char *sendbuf, *recvbuf, *refbuf;
    size_t send_bytes, recv_bytes;
    int have_ref;
    int nonblocking; /* the Ineighbor forms: started, then MPI_Wait */
    int persistent;  /* --persistent: a request per spec, started per call */
    bench_preqs preqs;
} bench_nbr;

int bench_nbr_setup(const bench_options *o, const bench_env *env, long S, int v, void **state,
                    char *err, size_t errlen);
/* The same for the nonblocking forms (persistent with --persistent). */
int bench_nbr_setup_nonblocking(const bench_options *o, const bench_env *env, long S, int v,
                                void **state, char *err, size_t errlen);
void bench_nbr_teardown(void *state);
/* One call under spec (a nonblocking one: started, then MPI_Wait). */
int bench_nbr_run(void *state, const char *spec);
/* Starts one nonblocking call under spec (or the persistent request's). */
int bench_nbr_start(void *state, const char *spec, MPI_Request *req);
/* One call under spec against the PMPI_ result (computed once per size). */
int bench_nbr_check(void *state, const char *spec, bench_mismatch *m);

#endif
