/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sdde.c - every registered MPIX_Alltoall_crs / MPIX_Alltoallv_crs
 * algorithm (sparse dynamic data exchange, [Geyko2023]), with caller-allocated
 * and library-allocated outputs, checked against a reference built from
 * PMPI_Alltoall of per-destination counts and PMPI_Alltoallv of the data.
 *
 * Patterns: random sparse (each rank sends to k distinct random ranks, k in
 * {0, 1, 3, P-1}), the 2D and 3D Poisson stencils of a row-partitioned
 * sparse matrix (the paper's use: message p -> q lists the columns p needs
 * from q; in the constant-size call, their number), an empty exchange,
 * all-to-one, zero-count messages and all-zero payloads; a contiguous and a
 * non-contiguous datatype. Misuse: outputs too small (MPI_ERR_TRUNCATE,
 * guard bytes untouched, the next call works), negative counts, destinations
 * out of range or listed twice (the offending rank gets MPI_ERR_ARG, the
 * others MPI_ERR_OTHER, nobody writes anything).
 *
 * Run by tests/mpi/sdde.sh under mpirun at many P and COLTUNE_PPN. Env:
 *   TEST_SEED, TEST_ALGS, TEST_FILTER as in test_alltoallv.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coltune.h"
#include "harness.h"

/* ------------------------------------------------------------------ */
/* Datatypes                                                           */
/* ------------------------------------------------------------------ */

typedef struct type_case {
    const char *name;
    MPI_Datatype type;
    MPI_Aint extent, true_lb, true_extent;
    int size;
} type_case;

static type_case t_int, t_vec;

static void type_case_init(type_case *t, const char *name, MPI_Datatype type)
{
    MPI_Aint lb;
    t->name = name;
    t->type = type;
    MPI_Type_get_extent(type, &lb, &t->extent);
    MPI_Type_get_true_extent(type, &t->true_lb, &t->true_extent);
    MPI_Type_size(type, &t->size);
}

/* Bytes spanned by n elements. */
static size_t span(const type_case *t, long n)
{
    return n <= 0 ? 0 : (size_t)((n - 1) * t->extent + t->true_lb + t->true_extent);
}

/* ------------------------------------------------------------------ */
/* Patterns: what this rank sends                                      */
/* ------------------------------------------------------------------ */

typedef enum pattern_kind {
    PAT_RANDOM,    /* k distinct random destinations */
    PAT_STENCIL2D, /* 5-point Poisson on an n x n grid, rows partitioned */
    PAT_STENCIL3D, /* 7-point Poisson on an n x n x n grid */
    PAT_TO_ONE,    /* every rank sends to one root */
} pattern_kind;

typedef struct pattern_case {
    const char *name;
    pattern_kind kind;
    int k;            /* PAT_RANDOM: destinations (-1: P-1) */
    int zero_counts;  /* every message has zero elements */
    int zero_payload; /* every byte sent is 0 */
    const type_case *type;
} pattern_case;

/* This rank's messages: nnz destinations, counts, displacements (elements)
 * into sendvals of size elements; for the constant-size call every count is
 * sendcount and message i sits at i * sendcount. */
typedef struct sends {
    int nnz, *dest, *counts, *displs, size, sendcount;
    unsigned char *vals;
    size_t vals_bytes;
    int *index_vals; /* stencil: the column indices (ints) the counts count */
} sends;

static void sends_free(sends *s)
{
    free(s->dest);
    free(s->counts);
    free(s->displs);
    free(s->vals);
    free(s->index_vals);
    memset(s, 0, sizeof *s);
}

/* Owner of row (or column) c of R rows split in P contiguous blocks. */
static int owner(long c, long R, int P)
{
    int p = (int)(c * P / R);
    while (p > 0 && c < (long)p * R / P)
        p--;
    while (p < P - 1 && c >= (long)(p + 1) * R / P)
        p++;
    return p;
}

/* Stencil: for each column owned by another rank that one of my rows
 * references, a message to its owner lists it (distinct columns, ascending). */
static void stencil_dests(int dims, int P, int me, sends *s)
{
    const long n = dims == 2 ? 12 : 6, R = dims == 2 ? n * n : n * n * n;
    long lo = (long)me * R / P, hi = (long)(me + 1) * R / P;
    const long offs3[] = {-1, 1, -n, n, -n * n, n * n};
    char *need = calloc((size_t)R, 1);
    assert_non_null(need);
    for (long r = lo; r < hi; r++) {
        long x = r % n, y = (r / n) % n;
        for (int d = 0; d < 2 * dims; d++) {
            long c = r + offs3[d];
            if (c < 0 || c >= R || (d == 0 && x == 0) || (d == 1 && x == n - 1) ||
                (d == 2 && y == 0) || (d == 3 && y == n - 1))
                continue;
            if (c < lo || c >= hi)
                need[c] = 1;
        }
    }
    s->dest = calloc((size_t)P, sizeof(int));
    s->counts = calloc((size_t)P, sizeof(int));
    s->index_vals = calloc((size_t)R + 1, sizeof(int));
    assert_true(s->dest && s->counts && s->index_vals);
    int nidx = 0;
    for (long c = 0; c < R; c++) {
        if (!need[c])
            continue;
        int q = owner(c, R, P);
        if (s->nnz == 0 || s->dest[s->nnz - 1] != q) {
            s->dest[s->nnz] = q;
            s->counts[s->nnz++] = 0;
        }
        s->counts[s->nnz - 1]++;
        s->index_vals[nidx++] = (int)c;
    }
    free(need);
}

static void random_dests(th_rng *r, int P, int k, sends *s)
{
    int *perm = malloc((size_t)P * sizeof *perm);
    assert_non_null(perm);
    for (int j = 0; j < P; j++)
        perm[j] = j;
    for (int j = 0; j < k; j++) { /* partial Fisher-Yates: k distinct ranks */
        int t = j + (int)th_below(r, P - j), v = perm[j];
        perm[j] = perm[t];
        perm[t] = v;
    }
    s->dest = malloc((size_t)(k ? k : 1) * sizeof(int));
    s->counts = malloc((size_t)(k ? k : 1) * sizeof(int));
    assert_true(s->dest && s->counts);
    memcpy(s->dest, perm, (size_t)k * sizeof(int));
    s->nnz = k;
    for (int i = 0; i < k; i++)
        s->counts[i] = (int)th_below(r, 7);
    free(perm);
}

/* Builds this rank's sends for case pc (stream: the case number). */
static void make_sends(const pattern_case *pc, int variable, uint64_t stream, sends *s)
{
    const int P = th_size(), me = th_rank();
    th_rng shared = th_rng_make(th_seed(), stream);
    th_rng mine = th_rng_make(th_seed(), stream * 1000003u + (uint64_t)me + 1);
    memset(s, 0, sizeof *s);
    s->sendcount = 1 + (int)th_below(&shared, 4);
    int root = (int)th_below(&shared, P);
    switch (pc->kind) {
    case PAT_RANDOM:
        random_dests(&mine, P, pc->k < 0 ? P - 1 : (pc->k < P ? pc->k : P), s);
        break;
    case PAT_STENCIL2D:
    case PAT_STENCIL3D:
        stencil_dests(pc->kind == PAT_STENCIL2D ? 2 : 3, P, me, s);
        if (!variable)
            s->sendcount = 1; /* the paper's constant-size use: one int, the count */
        break;
    case PAT_TO_ONE:
        random_dests(&mine, 1, 1, s);
        s->dest[0] = root;
        break;
    }
    s->displs = malloc((size_t)(s->nnz ? s->nnz : 1) * sizeof(int));
    int *ncols = malloc((size_t)(s->nnz ? s->nnz : 1) * sizeof(int));
    assert_true(s->displs && ncols);
    memcpy(ncols, s->counts, (size_t)s->nnz * sizeof(int)); /* stencil: columns listed */
    if (pc->zero_counts)
        s->sendcount = 0;
    for (int i = 0; i < s->nnz; i++)
        s->counts[i] = !variable ? s->sendcount : pc->zero_counts ? 0 : s->counts[i];
    /* variable: messages in a shuffled order with gaps; constant: packed */
    long at = variable ? th_below(&mine, 3) : 0;
    for (int i = 0; i < s->nnz; i++) {
        int j = variable ? s->nnz - 1 - i : i;
        s->displs[j] = (int)at;
        at += s->counts[j] + (variable ? th_below(&mine, 3) : 0);
    }
    s->size = (int)at;
    s->vals_bytes = span(pc->type, at) + 8;
    s->vals = malloc(s->vals_bytes);
    assert_non_null(s->vals);
    for (size_t b = 0; b < s->vals_bytes; b++)
        s->vals[b] = pc->zero_payload ? 0 : (unsigned char)th_next(&mine);
    /* Stencil payloads are the column indices themselves (ints). */
    if (s->index_vals && pc->type == &t_int && variable) {
        int *v = (int *)(void *)s->vals;
        for (int i = 0, c = 0; i < s->nnz; c += s->counts[i], i++)
            memcpy(v + s->displs[i], s->index_vals + c, (size_t)s->counts[i] * sizeof(int));
    } else if (s->index_vals && pc->type == &t_int) {
        int *v = (int *)(void *)s->vals;
        for (int i = 0; i < s->nnz; i++)
            v[i] = ncols[i];
    }
    free(ncols);
}

/* ------------------------------------------------------------------ */
/* The reference                                                       */
/* ------------------------------------------------------------------ */

typedef struct expect {
    int nnz, size; /* messages, elements */
    int *src, *counts;
    unsigned char *vals; /* span(size) bytes, received over garbage */
    size_t vals_bytes;
} expect;

static void expect_free(expect *e)
{
    free(e->src);
    free(e->counts);
    free(e->vals);
    memset(e, 0, sizeof *e);
}

/* PMPI_Alltoall of (count + 1, 0 for no message), then PMPI_Alltoallv. */
static void reference(const sends *s, const type_case *t, int variable, const unsigned char *fill,
                      size_t fill_bytes, expect *e)
{
    const int P = th_size();
    int *flag = calloc((size_t)P, sizeof(int)), *rflag = calloc((size_t)P, sizeof(int));
    int *sc = calloc((size_t)P, sizeof(int)), *sd = calloc((size_t)P, sizeof(int));
    int *rc = calloc((size_t)P, sizeof(int)), *rd = calloc((size_t)P, sizeof(int));
    assert_true(flag && rflag && sc && sd && rc && rd);
    for (int i = 0; i < s->nnz; i++) {
        flag[s->dest[i]] = s->counts[i] + 1;
        sc[s->dest[i]] = s->counts[i];
        sd[s->dest[i]] = variable ? s->displs[i] : i * s->sendcount;
    }
    assert_int_equal(PMPI_Alltoall(flag, 1, MPI_INT, rflag, 1, MPI_INT, MPI_COMM_WORLD),
                     MPI_SUCCESS);
    memset(e, 0, sizeof *e);
    e->src = malloc((size_t)P * sizeof(int));
    e->counts = malloc((size_t)P * sizeof(int));
    assert_true(e->src && e->counts);
    for (int j = 0; j < P; j++) {
        rc[j] = rflag[j] ? rflag[j] - 1 : 0;
        rd[j] = e->size;
        if (rflag[j]) {
            e->src[e->nnz] = j;
            e->counts[e->nnz++] = rc[j];
        }
        e->size += rc[j];
    }
    e->vals_bytes = span(t, e->size);
    e->vals = malloc(e->vals_bytes + 1);
    assert_non_null(e->vals);
    assert_true(fill_bytes >= e->vals_bytes);
    memcpy(e->vals, fill, e->vals_bytes);
    assert_int_equal(PMPI_Alltoallv(s->vals, sc, sd, t->type, e->vals, rc, rd, t->type,
                                    MPI_COMM_WORLD), MPI_SUCCESS);
    free(flag);
    free(rflag);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

/* ------------------------------------------------------------------ */
/* One call                                                            */
/* ------------------------------------------------------------------ */

enum { GUARD = 64, GUARD_BYTE = 0xA5 };

typedef struct run_opts {
    const char *spec; /* NULL: decided (rules, environment) */
    int variable, alloc;
    int hint; /* give the exact receive count as a hint */
} run_opts;

/* Caller-allocated outputs: capacity cap messages / cap_size elements, each
 * array followed by GUARD bytes of GUARD_BYTE. */
typedef struct outbufs {
    const unsigned char *fill; /* what vals held before the call */
    int cap, cap_size;
    int *src, *counts, *displs;
    unsigned char *vals;
    size_t vals_bytes; /* without the guard */
} outbufs;

static void *guarded(size_t bytes)
{
    unsigned char *p = malloc(bytes + GUARD);
    assert_non_null(p);
    memset(p, GUARD_BYTE, bytes + GUARD);
    return p;
}

static int guard_ok(const void *p, size_t bytes, const char *what)
{
    const unsigned char *g = (const unsigned char *)p + bytes;
    for (int i = 0; i < GUARD; i++)
        if (g[i] != GUARD_BYTE) {
            fprintf(stderr, "rank %d: %s: guard byte %d past the end overwritten (seed %llu)\n",
                    th_rank(), what, i, (unsigned long long)th_seed());
            return 0;
        }
    return 1;
}

static void outbufs_make(outbufs *o, const type_case *t, int cap, int cap_size,
                         const unsigned char *fill)
{
    o->cap = cap;
    o->cap_size = cap_size;
    o->src = guarded((size_t)cap * sizeof(int));
    o->counts = guarded((size_t)cap * sizeof(int));
    o->displs = guarded((size_t)cap * sizeof(int));
    o->vals_bytes = span(t, cap_size);
    o->vals = guarded(o->vals_bytes);
    memcpy(o->vals, fill, o->vals_bytes);
    o->fill = fill;
}

static const unsigned char *fill_of(const outbufs *o) { return o->fill; }

static int outbufs_guards_ok(const outbufs *o, const char *what)
{
    int ok = guard_ok(o->src, (size_t)o->cap * sizeof(int), what);
    ok = guard_ok(o->counts, (size_t)o->cap * sizeof(int), what) && ok;
    ok = guard_ok(o->displs, (size_t)o->cap * sizeof(int), what) && ok;
    return guard_ok(o->vals, o->vals_bytes, what) && ok;
}

static void outbufs_free(outbufs *o)
{
    free(o->src);
    free(o->counts);
    free(o->displs);
    free(o->vals);
}

/* The result of one call: where the outputs are. */
typedef struct result {
    int rc, nnz, size;
    int *src, *counts, *displs;
    unsigned char *vals;
} result;

static void call(const run_opts *ro, const sends *s, const type_case *t, outbufs *o,
                 MPIX_Info *info, result *r)
{
    memset(r, 0, sizeof *r);
    r->nnz = o->cap;
    r->size = o->cap_size;
    if (!ro->variable && !ro->alloc) {
        r->rc = coltune_alltoall_crs(ro->spec, s->nnz, s->dest, s->sendcount, t->type, s->vals,
                                     &r->nnz, o->src, s->sendcount, t->type, o->vals, info,
                                     MPI_COMM_WORLD);
        r->src = o->src;
        r->vals = o->vals;
    } else if (!ro->variable) {
        void *vals = NULL;
        r->rc = coltune_alltoall_crs_alloc(ro->spec, s->nnz, s->dest, s->sendcount, t->type,
                                           s->vals, &r->nnz, &r->src, s->sendcount, t->type,
                                           &vals, info, MPI_COMM_WORLD);
        r->vals = vals;
    } else if (!ro->alloc) {
        r->rc = coltune_alltoallv_crs(ro->spec, s->nnz, s->size, s->dest, s->counts, s->displs,
                                      t->type, s->vals, &r->nnz, &r->size, o->src, o->counts,
                                      o->displs, t->type, o->vals, info, MPI_COMM_WORLD);
        r->src = o->src;
        r->counts = o->counts;
        r->displs = o->displs;
        r->vals = o->vals;
    } else {
        void *vals = NULL;
        r->rc = coltune_alltoallv_crs_alloc(ro->spec, s->nnz, s->size, s->dest, s->counts,
                                            s->displs, t->type, s->vals, &r->nnz, &r->size,
                                            &r->src, &r->counts, &r->displs, t->type, &vals,
                                            info, MPI_COMM_WORLD);
        r->vals = vals;
    }
}

static void result_free(const run_opts *ro, result *r)
{
    if (!ro->alloc || r->rc != MPI_SUCCESS)
        return;
    MPIX_Free(r->src);
    MPIX_Free(r->counts);
    MPIX_Free(r->displs);
    MPIX_Free(r->vals);
}

/* Data bytes of n elements (packed: gaps of the type excluded). */
static int same_data(const void *got, const void *want, const type_case *t, int n,
                     const char *what)
{
    int bytes = n * t->size, pos = 0;
    if (n == 0)
        return 1;
    unsigned char *g = malloc((size_t)bytes), *w = malloc((size_t)bytes);
    assert_true(g && w);
    MPI_Pack(got, n, t->type, g, bytes, &pos, MPI_COMM_SELF);
    pos = 0;
    MPI_Pack(want, n, t->type, w, bytes, &pos, MPI_COMM_SELF);
    int ok = th_same_bytes(g, w, (size_t)bytes, what);
    free(g);
    free(w);
    return ok;
}

static int check_result(const run_opts *ro, const result *r, const expect *e,
                        const type_case *t, const outbufs *o, const char *what)
{
    char w[600];
    int ok = 1;
    if (r->nnz != e->nnz || (ro->variable && r->size != e->size)) {
        fprintf(stderr, "MISMATCH rank %d: %s: recv_nnz %d (expected %d), recv_size %d "
                        "(expected %d) (seed %llu)\n", th_rank(), what, r->nnz, e->nnz,
                r->size, e->size, (unsigned long long)th_seed());
        return 0;
    }
    snprintf(w, sizeof w, "%s: src", what);
    ok = th_same_bytes(r->src, e->src, (size_t)e->nnz * sizeof(int), w) && ok;
    if (ro->variable) {
        snprintf(w, sizeof w, "%s: recvcounts", what);
        ok = th_same_bytes(r->counts, e->counts, (size_t)e->nnz * sizeof(int), w) && ok;
        for (int k = 0, d = 0; k < e->nnz; d += e->counts[k], k++)
            if (r->displs[k] != d) {
                fprintf(stderr, "MISMATCH rank %d: %s: rdispls[%d] = %d, expected %d\n",
                        th_rank(), what, k, r->displs[k], d);
                ok = 0;
                break;
            }
    }
    snprintf(w, sizeof w, "%s: recvvals", what);
    if (ro->alloc) {
        ok = same_data(r->vals, e->vals, t, e->size, w) && ok;
    } else {
        /* the whole span: gaps of the type were not written either */
        ok = th_same_bytes(r->vals, e->vals, e->vals_bytes, w) && ok;
        ok = outbufs_guards_ok(o, what) && ok;
        /* the slack beyond what arrived is untouched as well */
        snprintf(w, sizeof w, "%s: recvvals beyond the received data", what);
        ok = th_same_bytes(o->vals + e->vals_bytes, fill_of(o) + e->vals_bytes,
                           o->vals_bytes - e->vals_bytes, w) && ok;
    }
    return ok;
}

enum { CASE_OK = 1, CASE_MISMATCH = 0 };

static int internode_ok(const char *spec, const sends *s, const char *what);

/* One case: sends, reference, the call, the check; agreed over ranks. */
static int run_case(const run_opts *ro, const pattern_case *pc, uint64_t stream)
{
    const int P = th_size();
    const type_case *t = pc->type;
    sends s;
    expect e;
    outbufs o = {0};
    result r;
    char what[400];
    th_rng mine = th_rng_make(th_seed(), stream * 7919u + (uint64_t)th_rank());
    make_sends(pc, ro->variable, stream, &s);
    /* garbage under the receive buffers, identical for got and want */
    size_t fill_bytes = span(t, (long)P * 64 + 64) + 64;
    unsigned char *fill = malloc(fill_bytes);
    assert_non_null(fill);
    for (size_t b = 0; b < fill_bytes; b++)
        fill[b] = (unsigned char)th_next(&mine);
    reference(&s, t, ro->variable, fill, fill_bytes, &e);
    /* capacity: what arrives, plus 0-2 of slack (exact with a hint) */
    int slack = ro->hint ? 0 : (int)th_below(&mine, 3);
    int cap = e.nnz + slack, cap_size = ro->variable ? e.size + slack : cap * s.sendcount;
    outbufs_make(&o, t, cap, cap_size, fill);
    MPIX_Info *info = NULL;
    if (ro->hint) {
        MPIX_Info_init(&info);
        MPIX_Info_set_recv_nnz_known(info, 1);
        MPIX_Info_set_recv_size_known(info, 1);
    }
    call(ro, &s, t, &o, info, &r);
    MPIX_Info_free(&info);
    snprintf(what, sizeof what, "%s %s%s%s, P=%d, pattern %s, type %s, case %llu",
             ro->variable ? "alltoallv_crs" : "alltoall_crs", ro->spec ? ro->spec : "(decided)",
             ro->alloc ? " _alloc" : "", ro->hint ? " hint" : "", P, pc->name, t->name,
             (unsigned long long)stream);
    int ok = r.rc == MPI_SUCCESS;
    if (!ok)
        fprintf(stderr, "rank %d: %s: returned %d (seed %llu)\n", th_rank(), what, r.rc,
                (unsigned long long)th_seed());
    ok = ok && check_result(ro, &r, &e, t, &o, what);
    if (ro->spec != NULL)
        ok = internode_ok(ro->spec, &s, what) && ok;
    result_free(ro, &r);
    outbufs_free(&o);
    expect_free(&e);
    sends_free(&s);
    free(fill);
    return th_all(ok, MPI_COMM_WORLD) ? CASE_OK : CASE_MISMATCH;
}

/* ------------------------------------------------------------------ */
/* Cases                                                               */
/* ------------------------------------------------------------------ */

#define NPATTERNS 12
static pattern_case patterns[NPATTERNS];

static void patterns_init(void)
{
    int i = 0;
    patterns[i++] = (pattern_case){"empty", PAT_RANDOM, 0, 0, 0, &t_int};
    patterns[i++] = (pattern_case){"random:1", PAT_RANDOM, 1, 0, 0, &t_int};
    patterns[i++] = (pattern_case){"random:3", PAT_RANDOM, 3, 0, 0, &t_int};
    patterns[i++] = (pattern_case){"random:P-1", PAT_RANDOM, -1, 0, 0, &t_int};
    patterns[i++] = (pattern_case){"stencil2d", PAT_STENCIL2D, 0, 0, 0, &t_int};
    patterns[i++] = (pattern_case){"stencil3d", PAT_STENCIL3D, 0, 0, 0, &t_int};
    patterns[i++] = (pattern_case){"all-to-one", PAT_TO_ONE, 0, 0, 0, &t_int};
    patterns[i++] = (pattern_case){"zero-count", PAT_RANDOM, 3, 1, 0, &t_int};
    patterns[i++] = (pattern_case){"zero-payload", PAT_RANDOM, 3, 0, 1, &t_int};
    patterns[i++] = (pattern_case){"random:3", PAT_RANDOM, 3, 0, 0, &t_vec};
    patterns[i++] = (pattern_case){"stencil2d", PAT_STENCIL2D, 0, 0, 0, &t_vec};
    patterns[i++] = (pattern_case){"zero-payload", PAT_RANDOM, -1, 0, 1, &t_vec};
}


/* Messages to other nodes the last call should have sent: one per
 * destination on another node, or (locality-aware) one per other node with
 * a destination. With COLTUNE_TEST_SDDE_PIECE the locality-aware aggregates
 * travel in pieces: between one per node and one per message. */
static int internode_ok(const char *spec, const sends *s, const char *what)
{
    const int P = th_size(), me = th_rank();
    long got = -1, want = 0, most = 0;
    int locality = spec != NULL && strncmp(spec, "locality", 8) == 0;
    int pieces = locality && getenv("COLTUNE_TEST_SDDE_PIECE") != NULL;
    char *seen = calloc((size_t)P, 1);
    assert_non_null(seen);
    for (int i = 0; i < s->nnz; i++) {
        int m = th_node_of(s->dest[i]);
        if (m != th_node_of(me) && !(locality && seen[m]))
            want++;
        most += m != th_node_of(me);
        seen[m] = 1;
    }
    free(seen);
    assert_int_equal(coltune_sdde_internode_msgs(MPI_COMM_NULL, &got), MPI_ERR_COMM);
    assert_int_equal(coltune_sdde_internode_msgs(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    assert_int_equal(coltune_sdde_internode_msgs(MPI_COMM_WORLD, &got), MPI_SUCCESS);
    if (pieces) {
        if (got < want || got > most)
            fprintf(stderr, "rank %d: %s: %ld inter-node messages, expected %ld to %ld\n", me,
                    what, got, want, most);
        return got >= want && got <= most;
    }
    if (got != want)
        fprintf(stderr, "rank %d: %s: %ld inter-node messages, expected %ld\n", me, what, got,
                want);
    return got == want;
}


/* Every algorithm of collective, every pattern, both ways of allocating. */
static void every_algorithm(const char *collective, int variable)
{
    int P = th_size(), Q, N, failures = 0;
    char **specs;
    th_topology(&Q, &N);
    int nspecs = th_algorithm_specs(collective, P, Q, N, &specs);
    assert_true(nspecs > 0);
    uint64_t stream = variable ? 500000 : 1;
    for (int k = 0; k < nspecs; k++) {
        for (int p = 0; p < NPATTERNS; p++)
            for (int alloc = 0; alloc <= 1; alloc++) {
                run_opts ro = {specs[k], variable, alloc, 0};
                failures += run_case(&ro, &patterns[p], stream++) != CASE_OK;
            }
        /* the exact count as a hint (personalized skips its reduction) */
        run_opts ro = {specs[k], variable, 0, 1};
        failures += run_case(&ro, &patterns[2], stream++) != CASE_OK;
        long internode = -2;
        coltune_sdde_internode_msgs(MPI_COMM_WORLD, &internode);
        assert_true(internode >= 0);
    }
    /* decided by the environment or the rules file of the run (sdde.rules
     * splits these cases by msg_size, which differs per rank) */
    for (int p = 0; p < NPATTERNS; p++) {
        run_opts ro = {NULL, variable, p % 2, 0};
        failures += run_case(&ro, &patterns[p], stream++) != CASE_OK;
    }
    if (th_rank() == 0)
        printf("# %s: %d algorithms x %d patterns checked at P=%d (Q=%d, N=%d)\n", collective,
               nspecs, NPATTERNS, P, Q, N);
    th_specs_free(specs, nspecs);
    assert_int_equal(failures, 0);
}

static void test_alltoall_crs(void **state)
{
    (void)state;
    every_algorithm("alltoall_crs", 0);
}

static void test_alltoallv_crs(void **state)
{
    (void)state;
    every_algorithm("alltoallv_crs", 1);
}

/* The MPIX_ entry points (MPIX_Comm, decided by environment or rules),
 * with and without hints, on a duplicate of MPI_COMM_WORLD. */
static void test_mpix_api(void **state)
{
    (void)state;
    const int P = th_size(), me = th_rank();
    MPI_Comm dup;
    MPIX_Comm *xcomm = NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    assert_int_equal(MPIX_Comm_init(&xcomm, dup), MPI_SUCCESS);
    int failures = 0;
    for (int rep = 0; rep < 6; rep++) {
        /* ring plus one: to me+1 and me+3 (distinct unless P is small) */
        int dest[2] = {(me + 1) % P, (me + 3) % P};
        int nnz = dest[0] == dest[1] ? 1 : 2;
        int vals[2 * 3] = {me, rep, 1, me, rep, 2}, counts[2] = {3, 3}, displs[2] = {0, 3};
        int from[2] = {(me - 1 + P) % P, (me - 3 + 3 * P) % P};
        int want_nnz = from[0] == from[1] ? 1 : 2;
        int src[4], rcounts[4], rdispls[4], got[12], rnnz = want_nnz, rsize = 3 * want_nnz;
        MPIX_Info *info = NULL;
        MPIX_Info_init(&info);
        /* odd reps: mixed hints, only even ranks give their (exact) count */
        int hinted = rep % 2 == 1 && me % 2 == 0;
        if (hinted)
            MPIX_Info_set_recv_nnz_known(info, 1);
        rnnz = hinted ? want_nnz : 4;
        rsize = 12;
        int rc;
        if (rep < 3) {
            rc = MPIX_Alltoall_crs(nnz, dest, 3, MPI_INT, vals, &rnnz, src, 3, MPI_INT, got,
                                   info, xcomm);
        } else {
            rc = MPIX_Alltoallv_crs(nnz, 6, dest, counts, displs, MPI_INT, vals, &rnnz, &rsize,
                                    src, rcounts, rdispls, MPI_INT, got, info, xcomm);
        }
        MPIX_Info_free(&info);
        int ok = rc == MPI_SUCCESS && rnnz == want_nnz;
        for (int k = 0; ok && k < rnnz; k++) {
            int s = src[k];
            ok = (k == 0 || src[k - 1] < s) && got[3 * k] == s && got[3 * k + 1] == rep &&
                 (s == from[0] || s == from[1]);
        }
        if (!ok)
            fprintf(stderr, "rank %d: MPIX_ call rep %d: rc %d, recv_nnz %d (want %d)\n", me,
                    rep, rc, rnnz, want_nnz);
        failures += !th_all(ok, MPI_COMM_WORLD);
    }
    /* the _alloc variants through MPIX_Comm */
    {
        int dest = (me + 1) % P, val = 100 + me, rnnz = -5, *src = NULL;
        void *vals = NULL;
        int rc = MPIX_Alltoall_crs_alloc(1, &dest, 1, MPI_INT, &val, &rnnz, &src, 1, MPI_INT,
                                         &vals, NULL, xcomm);
        int ok = rc == MPI_SUCCESS && rnnz == 1 && src[0] == (me - 1 + P) % P &&
                 ((int *)vals)[0] == 100 + src[0];
        MPIX_Free(src);
        MPIX_Free(vals);
        int *rc2 = NULL, *rd2 = NULL, rsize = -1;
        rc = MPIX_Alltoallv_crs_alloc(1, 1, &dest, &(int){1}, &(int){0}, MPI_INT, &val, &rnnz,
                                      &rsize, &src, &rc2, &rd2, MPI_INT, &vals, NULL, xcomm);
        ok = ok && rc == MPI_SUCCESS && rnnz == 1 && rsize == 1 && rc2[0] == 1 && rd2[0] == 0 &&
             ((int *)vals)[0] == 100 + src[0];
        MPIX_Free(src);
        MPIX_Free(rc2);
        MPIX_Free(rd2);
        MPIX_Free(vals);
        failures += !th_all(ok, MPI_COMM_WORLD);
    }
    assert_int_equal(MPIX_Comm_free(&xcomm), MPI_SUCCESS);
    assert_null(xcomm);
    MPI_Comm_free(&dup);
    assert_int_equal(failures, 0);
}

/* ------------------------------------------------------------------ */
/* Misuse                                                              */
/* ------------------------------------------------------------------ */

static int error_class(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

/* Outputs one message too small on a rank that receives: MPI_ERR_TRUNCATE
 * there, success elsewhere, needed sizes reported, buffers untouched, and
 * the next call on the communicator works. */
static void truncate_case(const char *spec, int variable, uint64_t stream, int *failures)
{
    const int P = th_size(), me = th_rank();
    pattern_case pc = {"random:3", PAT_RANDOM, 3, 0, 0, &t_int};
    sends s;
    expect e;
    outbufs o;
    result r;
    run_opts ro = {spec, variable, 0, 0};
    make_sends(&pc, variable, stream, &s);
    size_t fill_bytes = span(&t_int, (long)P * 64 + 64) + 64;
    unsigned char *fill = calloc(fill_bytes, 1);
    assert_non_null(fill);
    reference(&s, &t_int, variable, fill, fill_bytes, &e);
    /* the victim: the lowest rank that receives something */
    int victim, mine = e.nnz > 0 ? me : P;
    MPI_Allreduce(&mine, &victim, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int short_size = variable && e.size > 0 && stream % 2 == 0; /* recv_size short instead */
    int cap = e.nnz - (me == victim && !short_size);
    int cap_size = variable ? e.size - (me == victim && short_size) : cap * s.sendcount;
    outbufs_make(&o, &t_int, cap, cap_size, fill);
    unsigned char *before = malloc(o.vals_bytes + 1);
    assert_non_null(before);
    memcpy(before, o.vals, o.vals_bytes);
    call(&ro, &s, &t_int, &o, NULL, &r);
    int ok = 1;
    char what[300];
    snprintf(what, sizeof what, "%s %s, P=%d, truncation case %llu",
             variable ? "alltoallv_crs" : "alltoall_crs", spec, P, (unsigned long long)stream);
    if (me == victim) {
        ok = error_class(r.rc) == MPI_ERR_TRUNCATE && r.nnz == e.nnz &&
             (!variable || r.size == e.size);
        ok = ok && th_same_bytes(o.vals, before, o.vals_bytes, what);
        for (int k = 0; k < cap; k++)
            ok = ok && o.src[k] == (int)0xA5A5A5A5;
        if (!ok)
            fprintf(stderr, "rank %d: %s: rc %d, recv_nnz %d (needed %d)\n", me, what, r.rc,
                    r.nnz, e.nnz);
    } else if (victim < P) {
        ok = r.rc == MPI_SUCCESS && check_result(&ro, &r, &e, &t_int, &o, what);
    }
    ok = outbufs_guards_ok(&o, what) && ok;
    *failures += !th_all(ok, MPI_COMM_WORLD);
    free(before);
    outbufs_free(&o);
    expect_free(&e);
    sends_free(&s);
    free(fill);
    /* the next call on the same communicator works */
    pattern_case next = {"stencil2d", PAT_STENCIL2D, 0, 0, 0, &t_int};
    *failures += run_case(&ro, &next, stream + 1) != CASE_OK;
}

typedef enum misuse {
    NEG_COUNT,
    NEG_NNZ,
    DEST_RANGE,
    DEST_TWICE,
    NMISUSE
} misuse;

static const char *const misuse_names[NMISUSE] = {"negative count", "negative send_nnz",
                                                  "destination out of range",
                                                  "destination listed twice"};

/* One rank (the culprit) passes bad arguments: it returns MPI_ERR_ARG, the
 * others MPI_ERR_OTHER; no rank writes an output; nothing is left in flight. */
static void misuse_case(const char *spec, int variable, misuse m, int culprit, int *failures)
{
    const int P = th_size(), me = th_rank();
    int dest[3] = {(me + 1) % P, (me + 2) % P, me}, counts[3] = {1, 2, 1}, displs[3] = {0, 1, 3};
    int vals[4] = {1, 2, 3, 4}, nnz = P >= 3 ? 3 : P, sendcount = 1;
    if (me == culprit) {
        switch (m) {
        case NEG_COUNT:
            counts[0] = -1;
            sendcount = -1;
            break;
        case NEG_NNZ:
            nnz = -2;
            break;
        case DEST_RANGE:
            dest[0] = P;
            break;
        case DEST_TWICE:
            dest[0] = dest[nnz - 1];
            if (nnz == 1) { /* P == 1: add a second entry */
                nnz = 2;
                dest[1] = dest[0];
            }
            break;
        default:
            break;
        }
    }
    int src[8], rcounts[8], rdispls[8], got[32], rnnz = 8, rsize = 32;
    memset(src, 0x5A, sizeof src);
    memset(got, 0x5A, sizeof got);
    int rc;
    if (variable)
        rc = coltune_alltoallv_crs(spec, nnz, 4, dest, counts, displs, MPI_INT, vals, &rnnz,
                                   &rsize, src, rcounts, rdispls, MPI_INT, got, NULL,
                                   MPI_COMM_WORLD);
    else
        rc = coltune_alltoall_crs(spec, nnz, dest, sendcount, MPI_INT, vals, &rnnz, src, 1,
                                  MPI_INT, got, NULL, MPI_COMM_WORLD);
    int want = me == culprit ? MPI_ERR_ARG : MPI_ERR_OTHER;
    int ok = error_class(rc) == want && rnnz == 8 && src[0] == 0x5A5A5A5A &&
             got[0] == 0x5A5A5A5A;
    if (!ok)
        fprintf(stderr, "rank %d: %s %s, %s on rank %d: returned %d (class %d, expected %d)\n",
                me, variable ? "alltoallv_crs" : "alltoall_crs", spec, misuse_names[m], culprit,
                rc, error_class(rc), want);
    *failures += !th_all(ok, MPI_COMM_WORLD);
}

static void test_misuse(void **state)
{
    (void)state;
    const int P = th_size();
    int failures = 0, Q, N;
    uint64_t stream = 900000;
    th_topology(&Q, &N);
    for (int variable = 0; variable <= 1; variable++) {
        char **specs;
        int nspecs = th_algorithm_specs(variable ? "alltoallv_crs" : "alltoall_crs", P, Q, N,
                                        &specs);
        for (int k = 0; k < nspecs; k++) {
            truncate_case(specs[k], variable, stream, &failures);
            truncate_case(specs[k], variable, stream + 3, &failures);
            stream += 6;
            for (int m = 0; m < NMISUSE; m++)
                misuse_case(specs[k], variable, (misuse)m, (k + m) % P, &failures);
            /* still usable afterwards */
            run_opts ro = {specs[k], variable, 0, 0};
            failures += run_case(&ro, &patterns[3], stream++) != CASE_OK;
        }
        th_specs_free(specs, nspecs);
    }
    /* a bad spec is an argument error on every rank */
    int src[2], rnnz = 2, d = 0, v = 0;
    int rc = coltune_alltoallv_crs("rma", 0, 0, &d, &d, &d, MPI_INT, &v, &rnnz, &rnnz, src,
                                   src, src, MPI_INT, &v, NULL, MPI_COMM_WORLD);
    assert_int_equal(error_class(rc), MPI_ERR_ARG);
    assert_int_equal(failures, 0);
}

int main(int argc, char **argv)
{
    th_init(&argc, &argv);
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec); /* two ints of every four: holes */
    MPI_Type_commit(&vec);
    type_case_init(&t_int, "MPI_INT", MPI_INT);
    type_case_init(&t_vec, "vector(2,1,3,int)", vec);
    patterns_init();
    struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alltoall_crs),
        cmocka_unit_test(test_alltoallv_crs),
        cmocka_unit_test(test_mpix_api),
        cmocka_unit_test(test_misuse),
    };
    int failed = th_run("sdde", tests, sizeof tests / sizeof tests[0]);
    MPI_Type_free(&vec);
    MPI_Finalize();
    return failed ? 1 : 0;
}
