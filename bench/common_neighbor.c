/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common_neighbor.c - the neighbourhood all-to-all drivers' graph, buffers
 * and reference.
 *
 * The graph is --pattern's (common_sdde.c: random:k destinations drawn per
 * rank, random:k:f with f% of them off the rank's node, or the 9- and
 * 27-point stencils), made with
 * MPI_Dist_graph_create_adjacent: each rank's destinations are its
 * pattern's, its sources the ranks whose pattern names it (every rank
 * computes every rank's pattern). With --ppn the emulated nodes hold
 * consecutive ranks, so the stencils' neighbours are mostly on the node and
 * random:k's mostly off it; random:k:f chooses. Blocks: S bytes each (Neighbor_alltoall), or
 * 1..S bytes drawn per edge (Neighbor_alltoallv). --check compares with
 * PMPI_Neighbor_alltoall(v) on the same communicator and input.
 */
#include "common_neighbor.h"
#include "common_sdde.h"

#include <coltune.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 0xa5

/* Bytes of the block from rank `from` to rank `to` (both sides compute it). */
static int block_bytes(const bench_options *o, int v, long S, int from, int to)
{
    if (!v)
        return (int)S;
    return 1 + (int)(bench_mix(bench_mix((uint64_t)o->seed ^ 0x6e6272ull) ^
                               ((uint64_t)from << 32 | (uint64_t)to)) %
                     (uint64_t)S);
}

/* The graph: this rank's destinations, and the ranks that name it. */
static int make_graph(bench_nbr *s, const bench_options *o, const bench_env *env)
{
    const int P = env->P;
    int *d = malloc(((size_t)P + 27) * sizeof(int));
    if (d == NULL)
        return MPI_ERR_NO_MEM;
    s->dests = malloc(((size_t)P + 27) * sizeof(int));
    s->sources = malloc(((size_t)P + 27) * sizeof(int));
    if (s->dests == NULL || s->sources == NULL) {
        free(d);
        return MPI_ERR_NO_MEM;
    }
    s->outdegree = bench_pattern_dests(o, env, env->rank, s->dests);
    s->indegree = 0;
    for (int r = 0; r < P && s->outdegree >= 0; r++) {
        const int n = bench_pattern_dests(o, env, r, d);
        for (int i = 0; i < n; i++)
            if (d[i] == env->rank)
                s->sources[s->indegree++] = r;
    }
    if (s->outdegree < 0) {
        free(d);
        return MPI_ERR_NO_MEM;
    }
    /* weights of 1 (GCC takes MPI_UNWEIGHTED, a made-up address, for an
     * array it reads) */
    for (int i = 0; i < P + 27; i++)
        d[i] = 1;
    const int rc = PMPI_Dist_graph_create_adjacent(env->comm, s->indegree, s->sources, d,
                                                   s->outdegree, s->dests, d, MPI_INFO_NULL, 0,
                                                   &s->comm);
    free(d);
    return rc;
}

/* Counts and displacements in bytes, the send data and the sentinels. */
static int make_buffers(bench_nbr *s, const bench_options *o, long S, char *err, size_t errlen)
{
    s->scounts = malloc(((size_t)s->outdegree * 2 + 1) * sizeof(int));
    s->rcounts = malloc(((size_t)s->indegree * 2 + 1) * sizeof(int));
    if (s->scounts == NULL || s->rcounts == NULL)
        return MPI_ERR_NO_MEM;
    s->sdispls = s->scounts + s->outdegree;
    s->rdispls = s->rcounts + s->indegree;
    for (int side = 0; side < 2; side++) {
        const int n = side ? s->indegree : s->outdegree;
        int *counts = side ? s->rcounts : s->scounts, *displs = side ? s->rdispls : s->sdispls;
        size_t total = 0;
        for (int i = 0; i < n; i++) {
            counts[i] = side ? block_bytes(o, s->v, S, s->sources[i], s->rank)
                             : block_bytes(o, s->v, S, s->rank, s->dests[i]);
            displs[i] = (int)total;
            total += (size_t)counts[i];
            if (total > INT_MAX) {
                bench_format_size(S, err, errlen);
                return BENCH_SETUP_UNUSABLE;
            }
        }
        *(side ? &s->recv_bytes : &s->send_bytes) = total;
    }
    s->scount = (int)S;
    s->sendbuf = malloc(s->send_bytes + 1);
    s->recvbuf = malloc(s->recv_bytes + 1);
    s->refbuf = malloc(s->recv_bytes + 1);
    if (s->sendbuf == NULL || s->recvbuf == NULL || s->refbuf == NULL)
        return MPI_ERR_NO_MEM;
    for (int k = 0; k < s->outdegree; k++)
        for (int b = 0; b < s->scounts[k]; b++)
            s->sendbuf[s->sdispls[k] + b] = bench_fill_byte(o->seed, s->rank, s->dests[k],
                                                            (size_t)b);
    memset(s->recvbuf, SENTINEL, s->recv_bytes + 1);
    return MPI_SUCCESS;
}

int bench_nbr_setup(const bench_options *o, const bench_env *env, long S, int v, void **state,
                    char *err, size_t errlen)
{
    int rc = MPI_SUCCESS, ok, all;
    bench_nbr *s = calloc(1, sizeof *s);
    *state = s;
    if (s == NULL)
        return MPI_ERR_NO_MEM;
    s->v = v;
    s->rank = env->rank;
    s->comm = MPI_COMM_NULL;
    BENCH_CALL(make_graph(s, o, env));
    rc = make_buffers(s, o, S > 0 ? S : 1, err, errlen);
    ok = rc == MPI_SUCCESS;
    BENCH_CALL(PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, env->comm));
    if (!all)
        return rc == BENCH_SETUP_UNUSABLE || rc == MPI_SUCCESS ? BENCH_SETUP_UNUSABLE : rc;
out:
    return rc;
}

void bench_nbr_teardown(void *state)
{
    bench_nbr *s = state;
    if (s == NULL)
        return;
    bench_preqs_free(&s->preqs);
    if (s->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&s->comm);
    free(s->sources);
    free(s->dests);
    free(s->scounts);
    free(s->rcounts);
    free(s->sendbuf);
    free(s->recvbuf);
    free(s->refbuf);
    free(s);
}

int bench_nbr_setup_nonblocking(const bench_options *o, const bench_env *env, long S, int v,
                                void **state, char *err, size_t errlen)
{
    const int rc = bench_nbr_setup(o, env, S, v, state, err, errlen);
    bench_nbr *s = *state;
    if (s != NULL) {
        s->nonblocking = 1;
        s->persistent = o->persistent;
    }
    return rc;
}

static int nbr_init(void *state, const char *spec, MPI_Request *req)
{
    bench_nbr *s = state;
    if (s->v)
        return coltune_neighbor_alltoallv_init(spec, s->sendbuf, s->scounts, s->sdispls,
                                               MPI_BYTE, s->recvbuf, s->rcounts, s->rdispls,
                                               MPI_BYTE, s->comm, MPI_INFO_NULL, req);
    return coltune_neighbor_alltoall_init(spec, s->sendbuf, s->scount, MPI_BYTE, s->recvbuf,
                                          s->scount, MPI_BYTE, s->comm, MPI_INFO_NULL, req);
}

int bench_nbr_start(void *state, const char *spec, MPI_Request *req)
{
    bench_nbr *s = state;
    if (s->persistent)
        return bench_preq_start(&s->preqs, nbr_init, s, spec, req);
    if (s->v)
        return coltune_ineighbor_alltoallv(spec, s->sendbuf, s->scounts, s->sdispls, MPI_BYTE,
                                           s->recvbuf, s->rcounts, s->rdispls, MPI_BYTE,
                                           s->comm, req);
    return coltune_ineighbor_alltoall(spec, s->sendbuf, s->scount, MPI_BYTE, s->recvbuf,
                                      s->scount, MPI_BYTE, s->comm, req);
}

int bench_nbr_run(void *state, const char *spec)
{
    bench_nbr *s = state;
    if (s->nonblocking)
        return bench_start_wait(bench_nbr_start, state, spec);
    if (s->v)
        return coltune_neighbor_alltoallv(spec, s->sendbuf, s->scounts, s->sdispls, MPI_BYTE,
                                          s->recvbuf, s->rcounts, s->rdispls, MPI_BYTE,
                                          s->comm);
    return coltune_neighbor_alltoall(spec, s->sendbuf, s->scount, MPI_BYTE, s->recvbuf,
                                     s->scount, MPI_BYTE, s->comm);
}

int bench_nbr_check(void *state, const char *spec, bench_mismatch *m)
{
    bench_nbr *s = state;
    int rc = MPI_SUCCESS;
    memset(m, 0, sizeof *m);
    if (!s->have_ref) {
        memset(s->refbuf, SENTINEL, s->recv_bytes + 1);
        if (s->v)
            BENCH_CALL(PMPI_Neighbor_alltoallv(s->sendbuf, s->scounts, s->sdispls, MPI_BYTE,
                                               s->refbuf, s->rcounts, s->rdispls, MPI_BYTE,
                                               s->comm));
        else
            BENCH_CALL(PMPI_Neighbor_alltoall(s->sendbuf, s->scount, MPI_BYTE, s->refbuf,
                                              s->scount, MPI_BYTE, s->comm));
        s->have_ref = 1;
    }
    memset(s->recvbuf, SENTINEL, s->recv_bytes + 1);
    rc = bench_nbr_run(s, spec);
    if (rc != MPI_SUCCESS)
        goto out;
    for (size_t i = 0; i <= s->recv_bytes; i++) {
        if (s->recvbuf[i] == s->refbuf[i])
            continue;
        m->found = 1;
        m->offset = i;
        m->peer = -1;
        for (int j = 0; j < s->indegree; j++)
            if (i >= (size_t)s->rdispls[j] && i < (size_t)s->rdispls[j] + (size_t)s->rcounts[j]) {
                m->peer = s->sources[j];
                m->block_offset = i - (size_t)s->rdispls[j];
            }
        m->expected = s->refbuf[i];
        m->got = s->recvbuf[i];
        break;
    }
out:
    return rc;
}
