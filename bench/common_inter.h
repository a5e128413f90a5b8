/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common_inter.h - what the intercommunicator drivers share
 * (driver_allgather_inter.c, driver_allgatherv_inter.c): the intercommunicator
 * built from the world, the block-size settings of [Kang2019], the buffers, the
 * check against PMPI_.
 */
#ifndef BENCH_COMMON_INTER_H
#define BENCH_COMMON_INTER_H

#include "bench.h"

#include <stddef.h>

/* Group A = world ranks [0, p), group B = [p, p + q) ([Kang2019]: A has p
 * ranks, B q). Blocks are MPI_BYTE; receive blocks are packed in the remote
 * group's rank order, as PMPI_Allgather(v) delivers them. */
typedef struct bench_inter {
    MPI_Comm comm;        /* the intercommunicator, errors return */
    int v;                /* Allgatherv */
    int group, lrank;     /* this rank's group (0: A, 1: B) and rank in it */
    int n[2];             /* {p, q} */
    int scount;           /* bytes this rank sends */
    int *rcounts, *rdispls; /* [remote size] bytes from each remote rank */
    char *sendbuf, *recvbuf, *refbuf; /* refbuf only with --check */
    size_t rbytes;        /* data bytes; receive buffers hold rbytes + guard */
    int have_ref;
    int nonblocking; /* the nonblocking form: started and waited for at once */
} bench_inter;

/* --group-sizes against the world size, --setting against the collective
 * (v: Allgatherv, settings 1-8; else 1-4). 0, or -1 with a message. */
int bench_inter_validate(const bench_options *o, const bench_env *env, int v, char *err,
                         size_t errlen);

/* Bytes rank i of group g (0: A, 1: B) sends under setting with size S. */
long bench_inter_bytes(int setting, long S, const int n[2], int g, int i);

/* Builds the intercommunicator and the buffers of size S (bench_driver setup). */
int bench_inter_setup(const bench_options *o, const bench_env *env, long S, int v,
                      void **state, char *err, size_t errlen);
/* The same, for the nonblocking form (started and waited for at once). */
int bench_inter_isetup(const bench_options *o, const bench_env *env, long S, int v,
                       void **state, char *err, size_t errlen);
void bench_inter_teardown(void *state);

/* Before a checked call: both receive buffers to the sentinel. */
void bench_inter_clear(bench_inter *s, int ref);
/* The first byte where recvbuf and refbuf differ, guard included. */
void bench_inter_compare(const bench_inter *s, bench_mismatch *m);

#endif
