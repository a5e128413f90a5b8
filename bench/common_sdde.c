/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common_sdde.c - send patterns, outputs and reference of the sparse dynamic
 * data exchange drivers ([Geyko2023]).
 *
 * Every rank derives its own messages from (--seed, its rank) alone, as an
 * SDDE caller knows only what it sends:
 *   random:k   k distinct destinations other than itself (at most P-1),
 *              drawn uniformly (partial Fisher-Yates)
 *   random:k:f the same, f% of them (rounded) drawn among the other nodes'
 *              ranks and the rest among its own node's (the nodes as coltune
 *              sees them: --ppn, else shared memory)
 *   stencil2d  halo exchange on a px x py process grid, ranks row-major
 *              (x fastest), px >= py as square as P allows: one message to
 *              each grid neighbour, diagonals included (9-point stencil, not
 *              periodic), so with consecutive ranks per node the three
 *              messages to a neighbouring row often share a node, which is
 *              what locality-aware aggregation saves
 *   stencil3d  the same on px x py x pz, up to 26 neighbours (27-point)
 * Message sizes for S: alltoall_crs S/4 ints each (at least 1); alltoallv_crs
 * 1..S/4 ints drawn uniformly per message from (seed, rank, destination, S).
 *
 * The exact receive capacity comes from a PMPI_Alltoall of (count + 1, 0 for
 * no message) in setup, outside the timed calls; the reference data from
 * PMPI_Alltoallv, packed by source as coltune delivers it.
 */
#include "common_sdde.h"

#include <coltune.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64 /* bytes after each output that must stay untouched */
#define SENTINEL 0xa5

/* A rank's status in setup, agreed over the ranks before each exchange. */
enum { ST_OK = 0, ST_TOO_LARGE, ST_NO_MEM };

/* ------------------------------------------------------------------ */
/* Patterns                                                            */
/* ------------------------------------------------------------------ */

/* A counter-based draw from (seed, a, b, c). */
static uint64_t draw(unsigned long seed, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t h = bench_mix((uint64_t)seed ^ 0x5dde5dde5ddeull);
    h = bench_mix(h ^ a);
    h = bench_mix(h ^ (b << 20));
    return bench_mix(h ^ (c << 40));
}

/* The first k of cand[0..n) after a partial Fisher-Yates shuffle with the
 * draws of (seed, me, stream): k distinct ranks, uniform. */
static void draw_k(unsigned long seed, int me, int stream, int *cand, int n, int k)
{
    for (int j = 0; j < k; j++) {
        const int t = j + (int)(draw(seed, (uint64_t)me, (uint64_t)j, (uint64_t)stream) %
                                (uint64_t)(n - j));
        const int tmp = cand[j];
        cand[j] = cand[t];
        cand[t] = tmp;
    }
}

static int int_cmp(const void *x, const void *y)
{
    const int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

/*
 * k distinct ranks other than me, ascending: drawn among all ranks (off < 0),
 * or round(k off / 100) of them among the ranks of the other nodes and the
 * rest among those of me's node (node_of), one side making up what the other
 * lacks.
 */
static int random_dests(unsigned long seed, int P, const int *node_of, int me, int k, int off,
                        int *dest)
{
    const int n = P - 1;
    int *cand = malloc((size_t)(n > 0 ? n : 1) * sizeof *cand), n_on = 0, k_off, k_on;
    if (cand == NULL)
        return -1;
    k = k < n ? k : n;
    if (off < 0) {
        for (int j = 0; j < n; j++)
            cand[j] = j < me ? j : j + 1;
        draw_k(seed, me, 0, cand, n, k);
    } else { /* cand: me's node's ranks first, then the others' */
        for (int r = 0; r < P; r++)
            if (r != me && node_of[r] == node_of[me])
                cand[n_on++] = r;
        for (int r = 0, i = n_on; r < P; r++)
            if (node_of[r] != node_of[me])
                cand[i++] = r;
        k_off = (int)(((long)k * off + 50) / 100);
        k_off = k_off < n - n_on ? k_off : n - n_on;
        k_on = k - k_off < n_on ? k - k_off : n_on;
        k_off = k - k_on;
        draw_k(seed, me, 1, cand, n_on, k_on);
        draw_k(seed, me, 2, cand + n_on, n - n_on, k_off);
        memmove(cand + k_on, cand + n_on, (size_t)k_off * sizeof *cand);
    }
    qsort(cand, (size_t)k, sizeof *cand, int_cmp);
    memcpy(dest, cand, (size_t)k * sizeof *dest);
    free(cand);
    return k;
}

/* The largest divisor d of n with d^e <= n (e = 2 or 3). */
static int low_factor(int n, int e)
{
    int best = 1;
    for (long d = 1; (e == 2 ? d * d : d * d * d) <= n; d++)
        if (n % d == 0)
            best = (int)d;
    return best;
}

/* One message to each neighbour on the grid, ascending rank order. */
static int stencil_dests(int dims, int P, int me, int *dest)
{
    int g[3];
    g[2] = dims == 3 ? low_factor(P, 3) : 1;
    g[1] = low_factor(P / g[2], 2);
    g[0] = P / g[2] / g[1];
    const int c[3] = {me % g[0], me / g[0] % g[1], me / (g[0] * g[1])};
    int nnz = 0;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                const int x = c[0] + dx, y = c[1] + dy, z = c[2] + dz;
                if ((dx | dy | dz) == 0 || x < 0 || x >= g[0] || y < 0 || y >= g[1] || z < 0 ||
                    z >= g[2])
                    continue;
                dest[nnz++] = (z * g[1] + y) * g[0] + x;
            }
    return nnz;
}

int bench_pattern_dests(const bench_options *o, const bench_env *env, int me, int *dest)
{
    int k;
    const bench_pattern pat = bench_pattern_of(o, &k);
    if (pat == BENCH_PATTERN_RANDOM)
        return random_dests(o->seed, env->P, env->node_of, me, k, o->pattern_off, dest);
    return stencil_dests(pat == BENCH_PATTERN_STENCIL2D ? 2 : 3, env->P, me, dest);
}

/* dest, counts, displacements and values of this rank's messages: ST_*. */
static int make_sends(bench_sdde *s, const bench_options *o, const bench_env *env, long S)
{
    const long per = S / (long)sizeof(int) > 1 ? S / (long)sizeof(int) : 1;
    const size_t most = (size_t)s->P + 27; /* random: P-1, stencils: 26 */
    size_t total = 0;
    s->dest = malloc(most * sizeof(int));
    s->scounts = malloc(most * sizeof(int));
    s->sdispls = malloc(most * sizeof(int));
    if (s->dest == NULL || s->scounts == NULL || s->sdispls == NULL)
        return ST_NO_MEM;
    s->nnz = bench_pattern_dests(o, env, s->rank, s->dest);
    if (s->nnz < 0)
        return ST_NO_MEM;
    s->sendcount = (int)per; /* per <= S / 4 < INT_MAX */
    for (int i = 0; i < s->nnz; i++) {
        long c = s->v ? 1 + (long)(draw(o->seed, (uint64_t)s->rank, (uint64_t)s->dest[i],
                                        (uint64_t)S) % (uint64_t)per)
                      : per;
        s->scounts[i] = (int)c;
        s->sdispls[i] = (int)total;
        total += (size_t)c;
        if (total > (size_t)INT_MAX / sizeof(int))
            return ST_TOO_LARGE;
    }
    s->send_size = (int)total;
    s->sendvals = malloc(total ? total * sizeof(int) : 1);
    if (s->sendvals == NULL)
        return ST_NO_MEM;
    for (int i = 0; i < s->nnz; i++) {
        unsigned char *b = (unsigned char *)(s->sendvals + s->sdispls[i]);
        for (size_t off = 0; off < (size_t)s->scounts[i] * sizeof(int); off++)
            b[off] = bench_fill_byte(o->seed, s->rank, s->dest[i], off);
    }
    return ST_OK;
}

/* ------------------------------------------------------------------ */
/* The reference                                                       */
/* ------------------------------------------------------------------ */

/* Per-rank arrays of the plain MPI exchange. */
typedef struct dense {
    int *flag, *rflag, *sc, *sd, *rc, *rd;
} dense;

static void dense_free(dense *d)
{
    free(d->flag);
    free(d->rflag);
    free(d->sc);
    free(d->sd);
    free(d->rc);
    free(d->rd);
}

/* PMPI_Alltoall of (count + 1, 0 for no message): what arrives, by source. */
static int reference_counts(bench_sdde *s, dense *d)
{
    int rc = MPI_SUCCESS;
    const size_t bytes = (size_t)s->P * sizeof(int);
    BENCH_ALLOC(d->flag, bytes);
    BENCH_ALLOC(d->rflag, bytes);
    BENCH_ALLOC(d->sc, bytes);
    BENCH_ALLOC(d->sd, bytes);
    BENCH_ALLOC(d->rc, bytes);
    BENCH_ALLOC(d->rd, bytes);
    memset(d->flag, 0, bytes);
    memset(d->sc, 0, bytes);
    memset(d->sd, 0, bytes);
    for (int i = 0; i < s->nnz; i++) {
        d->flag[s->dest[i]] = s->scounts[i] + 1;
        d->sc[s->dest[i]] = s->scounts[i];
        d->sd[s->dest[i]] = s->sdispls[i];
    }
    BENCH_CALL(PMPI_Alltoall(d->flag, 1, MPI_INT, d->rflag, 1, MPI_INT, s->comm));
out:
    return rc;
}

/* The receive side of the reference, sorted by source: ST_*. */
static int capacity(bench_sdde *s, dense *d)
{
    size_t total = 0;
    s->ref_src = malloc((size_t)s->P * sizeof(int));
    s->ref_counts = malloc((size_t)s->P * sizeof(int));
    if (s->ref_src == NULL || s->ref_counts == NULL)
        return ST_NO_MEM;
    for (int j = 0; j < s->P; j++) {
        d->rc[j] = d->rflag[j] ? d->rflag[j] - 1 : 0;
        d->rd[j] = (int)total;
        if (d->rflag[j]) {
            s->ref_src[s->cap_nnz] = j;
            s->ref_counts[s->cap_nnz++] = d->rc[j];
        }
        total += (size_t)d->rc[j];
        if (total > (size_t)INT_MAX / sizeof(int))
            return ST_TOO_LARGE;
    }
    s->cap_size = (int)total;
    return ST_OK;
}

/* PMPI_Alltoallv of the data, packed by source. */
static int reference_data(bench_sdde *s, const dense *d)
{
    int rc = MPI_SUCCESS;
    BENCH_ALLOC(s->ref_vals, (size_t)s->cap_size * sizeof(int) + GUARD);
    memset(s->ref_vals, SENTINEL, (size_t)s->cap_size * sizeof(int) + GUARD);
    BENCH_CALL(PMPI_Alltoallv(s->sendvals, d->sc, d->sd, MPI_INT, s->ref_vals, d->rc, d->rd,
                              MPI_INT, s->comm));
out:
    return rc;
}

/* ------------------------------------------------------------------ */
/* Setup                                                               */
/* ------------------------------------------------------------------ */

void bench_sdde_teardown(void *state)
{
    bench_sdde *s = state;
    if (s == NULL)
        return;
    free(s->dest);
    free(s->scounts);
    free(s->sdispls);
    free(s->sendvals);
    free(s->ref_src);
    free(s->ref_counts);
    free(s->ref_vals);
    free(s->src);
    free(s->rcounts);
    free(s->rdispls);
    free(s->recvvals);
    free(s);
}

/* Outputs of exactly the reference's capacity, each with a guard. */
static int alloc_outputs(bench_sdde *s)
{
    int rc = MPI_SUCCESS;
    const size_t meta = (size_t)s->cap_nnz * sizeof(int) + GUARD;
    BENCH_ALLOC(s->src, meta);
    BENCH_ALLOC(s->rcounts, meta);
    BENCH_ALLOC(s->rdispls, meta);
    BENCH_ALLOC(s->recvvals, (size_t)s->cap_size * sizeof(int) + GUARD);
    bench_sdde_clear(s);
out:
    return rc;
}

/* Agrees on the ranks' worst status st. *stop when one has a problem; then
 * the return is this rank's answer to the framework: its own error (with the
 * message), or MPI_SUCCESS when the problem is another rank's (the
 * framework agrees once more and stops at that rank's answer). */
static int agree(const bench_sdde *s, int st, long S, int *stop, char *err, size_t errlen)
{
    int rc, worst;
    *stop = 1;
    BENCH_CALL(MPI_Allreduce(&st, &worst, 1, MPI_INT, MPI_MAX, s->comm));
    *stop = worst != ST_OK;
    if (st == ST_NO_MEM) {
        rc = MPI_ERR_NO_MEM;
        bench_mpi_error(rc, "malloc(messages)", __FILE__, __LINE__);
    } else if (st == ST_TOO_LARGE) {
        snprintf(err, errlen, "size %ld needs more than %d bytes of messages on rank %d "
                 "(int counts and displacements)", S, INT_MAX, s->rank);
        rc = BENCH_SETUP_UNUSABLE;
    }
out:
    return rc;
}

int bench_sdde_setup(const bench_options *o, const bench_env *env, long S, int v, void **state,
                     char *err, size_t errlen)
{
    int rc = MPI_SUCCESS, stop;
    bench_sdde *s = NULL;
    dense d = {0};
    *state = NULL;
    BENCH_ALLOC(s, sizeof *s);
    memset(s, 0, sizeof *s);
    *state = s;
    s->comm = env->comm;
    s->v = v;
    s->rank = env->rank;
    s->P = env->P;
    rc = agree(s, make_sends(s, o, env, S), S, &stop, err, errlen);
    if (stop)
        goto out;
    BENCH_CALL(reference_counts(s, &d));
    rc = agree(s, capacity(s, &d), S, &stop, err, errlen);
    if (stop)
        goto out;
    if (o->check)
        BENCH_CALL(reference_data(s, &d));
    BENCH_CALL(alloc_outputs(s));
out:
    dense_free(&d);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Check                                                               */
/* ------------------------------------------------------------------ */

void bench_sdde_clear(bench_sdde *s)
{
    const size_t meta = (size_t)s->cap_nnz * sizeof(int) + GUARD;
    memset(s->src, SENTINEL, meta);
    memset(s->rcounts, SENTINEL, meta);
    memset(s->rdispls, SENTINEL, meta);
    memset(s->recvvals, SENTINEL, (size_t)s->cap_size * sizeof(int) + GUARD);
}

/* The first guard byte after n bytes at p that was written, or -1. */
static long guard_hit(const void *p, size_t n)
{
    const unsigned char *g = (const unsigned char *)p + n;
    for (long i = 0; i < GUARD; i++)
        if (g[i] != SENTINEL)
            return i;
    return -1;
}

/* Messages, sources, counts, displacements, size: a description of the first
 * difference in m->what. */
static void compare_meta(const bench_sdde *s, bench_mismatch *m)
{
    const size_t meta = (size_t)s->cap_nnz * sizeof(int);
    int at = 0;
    long g;
    if (s->recv_nnz != s->cap_nnz) {
        snprintf(m->what, sizeof m->what, "%d messages received, expected %d", s->recv_nnz,
                 s->cap_nnz);
    } else if (s->v && s->recv_size != s->cap_size) {
        snprintf(m->what, sizeof m->what, "recv_size %d, expected %d", s->recv_size,
                 s->cap_size);
    } else {
        for (int k = 0; k < s->cap_nnz && !m->what[0]; k++) {
            if (s->src[k] != s->ref_src[k])
                snprintf(m->what, sizeof m->what, "src[%d] = %d, expected %d", k, s->src[k],
                         s->ref_src[k]);
            else if (s->v && s->rcounts[k] != s->ref_counts[k])
                snprintf(m->what, sizeof m->what, "recvcounts[%d] = %d (from rank %d), "
                         "expected %d", k, s->rcounts[k], s->src[k], s->ref_counts[k]);
            else if (s->v && s->rdispls[k] != at)
                snprintf(m->what, sizeof m->what, "rdispls[%d] = %d (from rank %d), "
                         "expected %d", k, s->rdispls[k], s->src[k], at);
            at += s->ref_counts[k];
        }
    }
    if (!m->what[0] && (g = guard_hit(s->src, meta)) >= 0)
        snprintf(m->what, sizeof m->what, "byte %ld past the end of src written", g);
    if (!m->what[0] && s->v && (g = guard_hit(s->rcounts, meta)) >= 0)
        snprintf(m->what, sizeof m->what, "byte %ld past the end of recvcounts written", g);
    if (!m->what[0] && s->v && (g = guard_hit(s->rdispls, meta)) >= 0)
        snprintf(m->what, sizeof m->what, "byte %ld past the end of rdispls written", g);
    m->found = m->what[0] != '\0';
}

void bench_sdde_compare(const bench_sdde *s, bench_mismatch *m)
{
    const unsigned char *got = (const unsigned char *)s->recvvals;
    const unsigned char *want = (const unsigned char *)s->ref_vals;
    const size_t n = (size_t)s->cap_size * sizeof(int), at_most = n + GUARD;
    compare_meta(s, m);
    if (m->found || memcmp(got, want, at_most) == 0)
        return;
    size_t i = 0, start = 0;
    while (got[i] == want[i])
        i++;
    m->found = 1;
    m->offset = i;
    m->peer = -1;
    m->block_offset = i - n;
    for (int k = 0; k < s->cap_nnz; start += (size_t)s->ref_counts[k++] * sizeof(int))
        if (i >= start && i < start + (size_t)s->ref_counts[k] * sizeof(int)) {
            m->peer = s->ref_src[k];
            m->block_offset = i - start;
            break;
        }
    m->expected = want[i];
    m->got = got[i];
}

int bench_sdde_internode_msgs(void *state, long *count)
{
    const bench_sdde *s = state;
    return coltune_sdde_internode_msgs(s->comm, count);
}
