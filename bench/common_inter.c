/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common_inter.c - the intercommunicator collectives' shared part: groups,
 * the settings of [Kang2019], buffers and the byte-for-byte check.
 *
 * The intercommunicator is built once per size in setup (MPI_Comm_split of
 * the world into A = [0, p) and B = [p, p+q), then MPI_Intercomm_create with
 * the local leaders 0 and the remote leaders at world ranks p and 0), so no
 * timed call pays for it; timing stays the framework's: barrier and slowest
 * rank over the world.
 *
 * Settings ([Kang2019] section 5). S is the block of the largest sender and
 * m = max(p, q):
 *   1, 2, 5, 7  every rank sends S (the paper: 1, 5 at p = q; 2, 7 at 25:7)
 *   3           A sends S, B sends S/4
 *   4           A sends S/4, B sends S
 *   6, 8        rank i of either group sends floor(S (i+1) / m): one common
 *               step k = S/m ("rank i sends ki"), the last rank of the larger
 *               group sends S (the paper: 6 at p = q, 8 at 25:7)
 * The paper gives no factor for settings 3 and 4; 4 is the one for which its
 * Eq. (5) yields the improvements it predicts at 25:7, 4.21 (k_A = 4 k_B) and
 * 6.68 (k_B = 4 k_A).
 */
#include "common_inter.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64 /* bytes after the receive blocks that must stay untouched */
#define SENTINEL 0xa5
#define TAG 4242

/* --group-sizes, or P/2 : P - P/2. */
static void group_sizes(const bench_options *o, const bench_env *env, int n[2])
{
    n[0] = o->group_p > 0 ? o->group_p : env->P / 2;
    n[1] = o->group_p > 0 ? o->group_q : env->P - env->P / 2;
}

int bench_inter_validate(const bench_options *o, const bench_env *env, int v, char *err,
                         size_t errlen)
{
    int n[2], setting = bench_setting(o);
    group_sizes(o, env, n);
    if (env->P < 2) {
        snprintf(err, errlen, "%s needs at least 2 ranks (two groups)", o->coll);
        return -1;
    }
    if ((long)n[0] + n[1] != env->P) {
        snprintf(err, errlen, "--group-sizes: %d:%d holds %ld ranks, the world has %d",
                 n[0], n[1], (long)n[0] + n[1], env->P);
        return -1;
    }
    if (setting > (v ? 8 : 4)) {
        snprintf(err, errlen, "--setting: %d is an Allgatherv setting ([Kang2019] settings "
                 "5-8): use --coll allgatherv_inter, or a setting 1-4", setting);
        return -1;
    }
    int paper_equal = setting == 1 || setting == 5 || setting == 6;
    if (paper_equal != (n[0] == n[1]))
        bench_note(env->rank,
                   "setting %d is the case %s of [Kang2019]; running it at p:q = %d:%d",
                   setting, paper_equal ? "p = q" : "p:q = 25:7", n[0], n[1]);
    return 0;
}

long bench_inter_bytes(int setting, long S, const int n[2], int g, int i)
{
    const int m = n[0] > n[1] ? n[0] : n[1];
    switch (setting) {
    case 3:
        return g == 0 ? S : S / 4;
    case 4:
        return g == 0 ? S / 4 : S;
    case 6:
    case 8:
        return S * (long)(i + 1) / m; /* S (i+1) fits: S <= INT_MAX, i < 2^31 */
    default:
        return S;
    }
}

int bench_inter_isetup(const bench_options *o, const bench_env *env, long S, int v,
                       void **state, char *err, size_t errlen)
{
    const int rc = bench_inter_setup(o, env, S, v, state, err, errlen);
    if (*state != NULL)
        ((bench_inter *)*state)->nonblocking = 1;
    return rc;
}

void bench_inter_teardown(void *state)
{
    bench_inter *s = state;
    if (s == NULL)
        return;
    if (s->comm != MPI_COMM_NULL) {
        int rc = MPI_Comm_free(&s->comm);
        if (rc != MPI_SUCCESS)
            bench_mpi_error(rc, "MPI_Comm_free(&inter)", __FILE__, __LINE__);
    }
    free(s->rcounts);
    free(s->rdispls);
    free(s->sendbuf);
    free(s->recvbuf);
    free(s->refbuf);
    free(s);
}

/* Splits the world into A and B and joins them (collective over the world). */
static int make_comm(bench_inter *s, const bench_env *env)
{
    MPI_Comm local = MPI_COMM_NULL;
    int rc, frc;
    s->group = env->rank < s->n[0] ? 0 : 1;
    BENCH_CALL(MPI_Comm_split(env->comm, s->group, env->rank, &local));
    BENCH_CALL(MPI_Comm_rank(local, &s->lrank));
    /* remote leader: world rank p for A, 0 for B */
    BENCH_CALL(MPI_Intercomm_create(local, 0, env->comm, s->group ? 0 : s->n[0], TAG,
                                    &s->comm));
    BENCH_CALL(MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN));
out:
    if (local != MPI_COMM_NULL && (frc = MPI_Comm_free(&local)) != MPI_SUCCESS) {
        bench_mpi_error(frc, "MPI_Comm_free(&local)", __FILE__, __LINE__);
        rc = rc == MPI_SUCCESS ? frc : rc;
    }
    return rc;
}

/* Counts and packed displacements of the remote group's blocks; -1 when a
 * count or the total exceeds an int. */
static int remote_layout(bench_inter *s, int setting, long S)
{
    const int rg = 1 - s->group;
    size_t at = 0;
    long mine = bench_inter_bytes(setting, S, s->n, s->group, s->lrank);
    if (mine > INT_MAX)
        return -1;
    s->scount = (int)mine;
    for (int j = 0; j < s->n[rg]; j++) {
        long c = bench_inter_bytes(setting, S, s->n, rg, j);
        if (c > INT_MAX || at > (size_t)INT_MAX)
            return -1;
        s->rcounts[j] = (int)c;
        s->rdispls[j] = (int)at;
        at += (size_t)c;
    }
    if (at > (size_t)INT_MAX)
        return -1;
    s->rbytes = at;
    return 0;
}

int bench_inter_setup(const bench_options *o, const bench_env *env, long S, int v,
                      void **state, char *err, size_t errlen)
{
    int rc = MPI_SUCCESS;
    bench_inter *s = NULL;
    *state = NULL;
    BENCH_ALLOC(s, sizeof *s);
    memset(s, 0, sizeof *s);
    s->comm = MPI_COMM_NULL;
    *state = s;
    s->v = v;
    group_sizes(o, env, s->n);
    BENCH_CALL(make_comm(s, env));
    const int nremote = s->n[1 - s->group];
    BENCH_ALLOC(s->rcounts, (size_t)nremote * sizeof(int));
    BENCH_ALLOC(s->rdispls, (size_t)nremote * sizeof(int));
    if (remote_layout(s, bench_setting(o), S) != 0) {
        snprintf(err, errlen, "size %ld with %d remote ranks needs more than %d bytes in "
                 "one buffer on rank %d (int counts and displacements)", S, nremote, INT_MAX,
                 env->rank);
        return BENCH_SETUP_UNUSABLE;
    }
    BENCH_ALLOC(s->sendbuf, (size_t)s->scount);
    BENCH_ALLOC(s->recvbuf, s->rbytes + GUARD);
    if (o->check)
        BENCH_ALLOC(s->refbuf, s->rbytes + GUARD);
    for (size_t off = 0; off < (size_t)s->scount; off++)
        s->sendbuf[off] = (char)bench_fill_byte(o->seed, env->rank, s->group, off);
    memset(s->recvbuf, SENTINEL, s->rbytes + GUARD);
out:
    return rc;
}

void bench_inter_clear(bench_inter *s, int ref)
{
    memset(ref ? s->refbuf : s->recvbuf, SENTINEL, s->rbytes + GUARD);
}

/* The world rank of remote rank j. */
static int remote_world_rank(const bench_inter *s, int j)
{
    return s->group == 0 ? s->n[0] + j : j;
}

void bench_inter_compare(const bench_inter *s, bench_mismatch *m)
{
    const unsigned char *got = (const unsigned char *)s->recvbuf;
    const unsigned char *want = (const unsigned char *)s->refbuf;
    const size_t n = s->rbytes + GUARD;
    const int nremote = s->n[1 - s->group];
    if (memcmp(got, want, n) == 0)
        return;
    size_t i = 0;
    while (got[i] == want[i])
        i++;
    m->found = 1;
    m->offset = i;
    m->peer = -1;
    m->block_offset = i - s->rbytes;
    for (int j = 0; j < nremote; j++)
        if (i >= (size_t)s->rdispls[j] && i < (size_t)s->rdispls[j] + (size_t)s->rcounts[j]) {
            m->peer = remote_world_rank(s, j);
            m->block_offset = i - (size_t)s->rdispls[j];
            break;
        }
    m->expected = want[i];
    m->got = got[i];
}
