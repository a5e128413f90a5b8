/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * driver_alltoallv.c - MPI_Alltoallv under coltune_alltoallv(spec, ...), and
 * MPI_Ialltoallv under coltune_ialltoallv(spec, ...) then MPI_Wait.
 *
 * Blocks are MPI_BYTE, packed back to back in rank order on both sides. The
 * block sizes come from dist.c (every rank derives its row and column of the
 * count matrix from the seed), the send bytes from bench_fill_byte(). Every
 * spec, pmpi included, runs through coltune_alltoallv(); the reference of
 * --check is PMPI_Alltoallv itself, on the same input, into a buffer of the
 * same size with the same sentinel, so a stray write past the last block is
 * caught as well.
 */
#include "bench.h"

#include <coltune.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64          /* bytes after the receive blocks that must stay untouched */
#define SENTINEL 0xa5

typedef struct a2av {
    MPI_Comm comm;
    int P, rank;
    int *scounts, *sdispls, *rcounts, *rdispls;
    char *sendbuf, *recvbuf, *refbuf; /* refbuf only with --check */
    size_t sbytes, rbytes;            /* data bytes; receive buffers hold rbytes + GUARD */
    int have_ref;
    int nonblocking; /* bench_driver_ialltoallv: MPI_Ialltoallv, then MPI_Wait */
    int persistent;  /* --persistent: a request per spec, started per call */
    bench_preqs preqs;
} a2av;

static void a2av_teardown(void *state)
{
    a2av *s = state;
    if (s == NULL)
        return;
    bench_preqs_free(&s->preqs);
    free(s->scounts);
    free(s->sdispls);
    free(s->rcounts);
    free(s->rdispls);
    free(s->sendbuf);
    free(s->recvbuf);
    free(s->refbuf);
    free(s);
}

/* Packs counts into displacements; -1 when the total exceeds an int. */
static int pack_displs(int P, const int *counts, int *displs, size_t *total)
{
    size_t at = 0;
    for (int j = 0; j < P; j++) {
        displs[j] = (int)at;
        at += (size_t)counts[j];
        if (at > INT_MAX)
            return -1;
    }
    *total = at;
    return 0;
}

static void fill_send(const a2av *s, unsigned long seed)
{
    for (int j = 0; j < s->P; j++) {
        unsigned char *block = (unsigned char *)s->sendbuf + s->sdispls[j];
        for (size_t off = 0; off < (size_t)s->scounts[j]; off++)
            block[off] = bench_fill_byte(seed, s->rank, j, off);
    }
}

static int a2av_setup(const bench_options *o, const bench_env *env, long S, void **state,
                      char *err, size_t errlen)
{
    int rc = MPI_SUCCESS;
    const int P = env->P;
    a2av *s = NULL;
    *state = NULL;
    BENCH_ALLOC(s, sizeof *s);
    memset(s, 0, sizeof *s);
    *state = s;
    s->comm = env->comm;
    s->P = P;
    s->rank = env->rank;
    BENCH_ALLOC(s->scounts, (size_t)P * sizeof(int));
    BENCH_ALLOC(s->sdispls, (size_t)P * sizeof(int));
    BENCH_ALLOC(s->rcounts, (size_t)P * sizeof(int));
    BENCH_ALLOC(s->rdispls, (size_t)P * sizeof(int));
    for (int j = 0; j < P; j++) {
        s->scounts[j] = (int)bench_block_bytes(o->dist, o->seed, S, P, s->rank, j);
        s->rcounts[j] = (int)bench_block_bytes(o->dist, o->seed, S, P, j, s->rank);
    }
    if (pack_displs(P, s->scounts, s->sdispls, &s->sbytes) != 0 ||
        pack_displs(P, s->rcounts, s->rdispls, &s->rbytes) != 0) {
        snprintf(err, errlen, "size %ld with P=%d needs more than %d bytes in one buffer on "
                 "rank %d (int displacements)", S, P, INT_MAX, s->rank);
        return BENCH_SETUP_UNUSABLE;
    }
    BENCH_ALLOC(s->sendbuf, s->sbytes);
    BENCH_ALLOC(s->recvbuf, s->rbytes + GUARD);
    if (o->check)
        BENCH_ALLOC(s->refbuf, s->rbytes + GUARD);
    fill_send(s, o->seed);
    memset(s->recvbuf, SENTINEL, s->rbytes + GUARD);
out:
    return rc;
}

static int a2av_init(void *state, const char *spec, MPI_Request *req)
{
    a2av *s = state;
    return coltune_alltoallv_init(spec, s->sendbuf, s->scounts, s->sdispls, MPI_BYTE,
                                  s->recvbuf, s->rcounts, s->rdispls, MPI_BYTE, s->comm,
                                  MPI_INFO_NULL, req);
}

static int a2av_start(void *state, const char *spec, MPI_Request *req)
{
    a2av *s = state;
    if (s->persistent)
        return bench_preq_start(&s->preqs, a2av_init, s, spec, req);
    return coltune_ialltoallv(spec, s->sendbuf, s->scounts, s->sdispls, MPI_BYTE, s->recvbuf,
                              s->rcounts, s->rdispls, MPI_BYTE, s->comm, req);
}

static int a2av_run(void *state, const char *spec)
{
    a2av *s = state;
    if (!s->nonblocking)
        return coltune_alltoallv(spec, s->sendbuf, s->scounts, s->sdispls, MPI_BYTE,
                                 s->recvbuf, s->rcounts, s->rdispls, MPI_BYTE, s->comm);
    return bench_start_wait(a2av_start, state, spec);
}

/* The rank whose receive block holds byte off, or -1 (the guard area). */
static int block_of(const a2av *s, size_t off)
{
    for (int j = 0; j < s->P; j++)
        if (off >= (size_t)s->rdispls[j] && off < (size_t)s->rdispls[j] + (size_t)s->rcounts[j])
            return j;
    return -1;
}

static void compare(const a2av *s, bench_mismatch *m)
{
    const unsigned char *got = (const unsigned char *)s->recvbuf;
    const unsigned char *want = (const unsigned char *)s->refbuf;
    size_t n = s->rbytes + GUARD;
    if (memcmp(got, want, n) == 0)
        return;
    for (size_t i = 0; i < n; i++) {
        if (got[i] == want[i])
            continue;
        m->found = 1;
        m->offset = i;
        m->peer = block_of(s, i);
        m->block_offset = m->peer >= 0 ? i - (size_t)s->rdispls[m->peer] : i - s->rbytes;
        m->expected = want[i];
        m->got = got[i];
        return;
    }
}

static int a2av_check(void *state, const char *spec, bench_mismatch *m)
{
    a2av *s = state;
    int rc = MPI_SUCCESS;
    memset(m, 0, sizeof *m);
    if (!s->have_ref) {
        memset(s->refbuf, SENTINEL, s->rbytes + GUARD);
        BENCH_CALL(PMPI_Alltoallv(s->sendbuf, s->scounts, s->sdispls, MPI_BYTE, s->refbuf,
                                  s->rcounts, s->rdispls, MPI_BYTE, s->comm));
        s->have_ref = 1;
    }
    memset(s->recvbuf, SENTINEL, s->rbytes + GUARD);
    rc = a2av_run(s, spec);
    if (rc == MPI_SUCCESS)
        compare(s, m);
out:
    return rc;
}

const bench_driver bench_driver_alltoallv = {
    .name = "alltoallv",
    .uses = BENCH_USES_DIST,
    .setup = a2av_setup,
    .run = a2av_run,
    .check = a2av_check,
    .teardown = a2av_teardown,
};

/* The nonblocking form: the same calls, started and waited for at once (the
 * time of the exchange alone, without overlap). */
static int ia2av_setup(const bench_options *o, const bench_env *env, long S, void **state,
                       char *err, size_t errlen)
{
    const int rc = a2av_setup(o, env, S, state, err, errlen);
    if (*state != NULL) {
        ((a2av *)*state)->nonblocking = 1;
        ((a2av *)*state)->persistent = o->persistent;
    }
    return rc;
}

const bench_driver bench_driver_ialltoallv = {
    .name = "ialltoallv",
    .uses = BENCH_USES_DIST | BENCH_USES_PERSISTENT,
    .setup = ia2av_setup,
    .run = a2av_run,
    .start = a2av_start,
    .check = a2av_check,
    .teardown = a2av_teardown,
};
