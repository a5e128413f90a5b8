/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * driver_alltoall.c - MPI_Alltoall under coltune_alltoall(spec, ...), and
 * MPI_Ialltoall under coltune_ialltoall(spec, ...) then MPI_Wait.
 *
 * Every block is S bytes of MPI_BYTE (--dist does not apply: the blocks of
 * an Alltoall are uniform), block j at j * S on both sides. Every spec, pmpi
 * included, runs through coltune_alltoall(); the reference of --check is
 * PMPI_Alltoall on the same input, into a buffer with the same sentinel and
 * guard, so a stray write past the last block is caught as well.
 */
#include "bench.h"

#include <coltune.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64 /* bytes after the receive blocks that must stay untouched */
#define SENTINEL 0xa5

typedef struct a2a {
    MPI_Comm comm;
    int P, rank, S;
    char *sendbuf, *recvbuf, *refbuf; /* refbuf only with --check */
    size_t bytes;                     /* P * S; receive buffers hold bytes + GUARD */
    int have_ref;
    int nonblocking; /* bench_driver_ialltoall: MPI_Ialltoall, then MPI_Wait */
    int persistent;  /* --persistent: a request per spec, started per call */
    bench_preqs preqs;
} a2a;

static void a2a_teardown(void *state)
{
    a2a *s = state;
    if (s == NULL)
        return;
    bench_preqs_free(&s->preqs);
    free(s->sendbuf);
    free(s->recvbuf);
    free(s->refbuf);
    free(s);
}

static int a2a_setup(const bench_options *o, const bench_env *env, long S, void **state,
                     char *err, size_t errlen)
{
    int rc = MPI_SUCCESS;
    a2a *s = NULL;
    *state = NULL;
    if (S > INT_MAX) {
        snprintf(err, errlen, "size %ld does not fit an int count", S);
        return BENCH_SETUP_UNUSABLE;
    }
    BENCH_ALLOC(s, sizeof *s);
    memset(s, 0, sizeof *s);
    *state = s;
    s->comm = env->comm;
    s->P = env->P;
    s->rank = env->rank;
    s->S = (int)S;
    s->bytes = (size_t)env->P * (size_t)S;
    BENCH_ALLOC(s->sendbuf, s->bytes);
    BENCH_ALLOC(s->recvbuf, s->bytes + GUARD);
    if (o->check)
        BENCH_ALLOC(s->refbuf, s->bytes + GUARD);
    for (int j = 0; j < s->P; j++)
        for (size_t off = 0; off < (size_t)S; off++)
            s->sendbuf[(size_t)j * (size_t)S + off] = (char)bench_fill_byte(o->seed, s->rank, j,
                                                                            off);
    memset(s->recvbuf, SENTINEL, s->bytes + GUARD);
out:
    return rc;
}

static int a2a_init(void *state, const char *spec, MPI_Request *req)
{
    a2a *s = state;
    return coltune_alltoall_init(spec, s->sendbuf, s->S, MPI_BYTE, s->recvbuf, s->S, MPI_BYTE,
                                 s->comm, MPI_INFO_NULL, req);
}

static int a2a_start(void *state, const char *spec, MPI_Request *req)
{
    a2a *s = state;
    if (s->persistent)
        return bench_preq_start(&s->preqs, a2a_init, s, spec, req);
    return coltune_ialltoall(spec, s->sendbuf, s->S, MPI_BYTE, s->recvbuf, s->S, MPI_BYTE,
                             s->comm, req);
}

static int a2a_run(void *state, const char *spec)
{
    a2a *s = state;
    if (!s->nonblocking)
        return coltune_alltoall(spec, s->sendbuf, s->S, MPI_BYTE, s->recvbuf, s->S, MPI_BYTE,
                                s->comm);
    return bench_start_wait(a2a_start, state, spec);
}

static void compare(const a2a *s, bench_mismatch *m)
{
    const unsigned char *got = (const unsigned char *)s->recvbuf;
    const unsigned char *want = (const unsigned char *)s->refbuf;
    const size_t n = s->bytes + GUARD;
    if (memcmp(got, want, n) == 0)
        return;
    for (size_t i = 0; i < n; i++) {
        if (got[i] == want[i])
            continue;
        m->found = 1;
        m->offset = i;
        m->peer = i < s->bytes ? (int)(i / (size_t)s->S) : -1;
        m->block_offset = i < s->bytes ? i % (size_t)s->S : i - s->bytes;
        m->expected = want[i];
        m->got = got[i];
        return;
    }
}

static int a2a_check(void *state, const char *spec, bench_mismatch *m)
{
    a2a *s = state;
    int rc = MPI_SUCCESS;
    memset(m, 0, sizeof *m);
    if (!s->have_ref) {
        memset(s->refbuf, SENTINEL, s->bytes + GUARD);
        BENCH_CALL(PMPI_Alltoall(s->sendbuf, s->S, MPI_BYTE, s->refbuf, s->S, MPI_BYTE, s->comm));
        s->have_ref = 1;
    }
    memset(s->recvbuf, SENTINEL, s->bytes + GUARD);
    rc = a2a_run(s, spec);
    if (rc == MPI_SUCCESS)
        compare(s, m);
out:
    return rc;
}

const bench_driver bench_driver_alltoall = {
    .name = "alltoall",
    .setup = a2a_setup,
    .run = a2a_run,
    .check = a2a_check,
    .teardown = a2a_teardown,
};

/* The nonblocking form: the same calls, started and waited for at once (the
 * time of the exchange alone, without overlap). */
static int ia2a_setup(const bench_options *o, const bench_env *env, long S, void **state,
                      char *err, size_t errlen)
{
    const int rc = a2a_setup(o, env, S, state, err, errlen);
    if (*state != NULL) {
        ((a2a *)*state)->nonblocking = 1;
        ((a2a *)*state)->persistent = o->persistent;
    }
    return rc;
}

const bench_driver bench_driver_ialltoall = {
    .name = "ialltoall",
    .uses = BENCH_USES_PERSISTENT,
    .setup = ia2a_setup,
    .run = a2a_run,
    .start = a2a_start,
    .check = a2a_check,
    .teardown = a2a_teardown,
};
