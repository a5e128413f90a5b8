/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * harness.c - shared pieces of coltune's MPI tests.
 */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "coltune.h"

static struct {
    int rank, size;
    uint64_t seed;
    int Q, N;     /* coltune's view of MPI_COMM_WORLD */
    int *node_of; /* [size] */
} th;

/* The node of every rank, numbered by lowest rank as coltune numbers them:
 * COLTUNE_PPN's emulation when set, else the host each rank runs on. */
static void nodes_init(void)
{
    const char *ppn = getenv("COLTUNE_PPN");
    const int P = th.size, n = ppn ? atoi(ppn) : 0;
    char me[MPI_MAX_PROCESSOR_NAME] = {0};
    int len, nodes = 0;
    char *names = calloc((size_t)P, MPI_MAX_PROCESSOR_NAME);
    th.node_of = calloc((size_t)P, sizeof(int));
    assert_non_null(names);
    assert_non_null(th.node_of);
    MPI_Get_processor_name(me, &len);
    MPI_Allgather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  MPI_COMM_WORLD);
    for (int r = 0; r < P; r++) {
        if (n > 0) {
            th.node_of[r] = strstr(ppn, "cyclic") ? r % ((P + n - 1) / n) : r / n;
            continue;
        }
        th.node_of[r] = nodes;
        for (int q = 0; q < r; q++)
            if (strcmp(names + (size_t)r * MPI_MAX_PROCESSOR_NAME,
                       names + (size_t)q * MPI_MAX_PROCESSOR_NAME) == 0) {
                th.node_of[r] = th.node_of[q];
                break;
            }
        nodes += th.node_of[r] == nodes;
    }
    free(names);
    int P_;
    coltune_comm_topology(MPI_COMM_WORLD, &P_, &th.Q, &th.N);
}

int th_node_of(int r) { return th.node_of[r]; }

void th_topology(int *Q, int *N)
{
    *Q = th.Q;
    *N = th.N;
}

void th_init(int *argc, char ***argv)
{
    int provided;
    if (getenv("TEST_THREAD_MULTIPLE") != NULL) /* the tests that use threads */
        MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &th.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &th.size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unsigned long long seed = 0;
    if (th.rank == 0) {
        const char *s = getenv("TEST_SEED");
        seed = s ? strtoull(s, NULL, 0) : (unsigned long long)time(NULL);
        printf("# seed %llu (rerun with TEST_SEED=%llu), P=%d\n", seed, seed, th.size);
        fflush(stdout);
    }
    MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    th.seed = seed;
    nodes_init();
    /* One summary per run: rank 0 speaks for all (outcomes are agreed). */
    if (th.rank != 0 && freopen("/dev/null", "w", stdout) == NULL)
        perror("freopen");
}

int th_rank(void) { return th.rank; }
int th_size(void) { return th.size; }
uint64_t th_seed(void) { return th.seed; }

th_rng th_rng_make(uint64_t seed, uint64_t stream)
{
    th_rng r = {seed * 0x9E3779B97F4A7C15ull + stream * 0xD1B54A32D192ED03ull + 1};
    return r;
}

uint64_t th_next(th_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

long th_below(th_rng *r, long n) { return n <= 0 ? 0 : (long)(th_next(r) % (uint64_t)n); }

int th_all(int ok, MPI_Comm comm)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    return all;
}

int th_same_bytes(const void *got, const void *want, size_t n, const char *what)
{
    const unsigned char *g = got, *w = want;
    for (size_t i = 0; i < n; i++) {
        if (g[i] != w[i]) {
            fprintf(stderr,
                    "MISMATCH rank %d: %s: first differing byte at offset %zu: got 0x%02x, "
                    "expected 0x%02x (seed %llu)\n",
                    th.rank, what, i, g[i], w[i], (unsigned long long)th.seed);
            return 0;
        }
    }
    return 1;
}

void th_skip_note(const char *test, const char *why)
{
    if (th.rank == 0) {
        printf("SKIP-PART: %s: %s\n", test, why);
        fflush(stdout);
    }
}

int th_run(const char *group, struct CMUnitTest *tests, size_t n)
{
    const char *filter = getenv("TEST_FILTER");
    if (filter != NULL)
        cmocka_set_test_filter(filter);
    return _cmocka_run_group_tests(group, tests, n, NULL, NULL);
}

/* ------------------------------------------------------------------ */
/* Algorithm specs from the registry                                   */
/* ------------------------------------------------------------------ */

typedef struct spec_list {
    char **v;
    int n, cap;
} spec_list;

static void push(spec_list *l, const char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
        assert_non_null(l->v);
    }
    l->v[l->n] = strdup(s);
    assert_non_null(l->v[l->n]);
    l->n++;
}

/* TEST_ALGS: comma-separated algorithm names to keep (all when unset). */
static int wanted(const char *name)
{
    const char *f = getenv("TEST_ALGS");
    if (f == NULL || *f == '\0')
        return 1;
    size_t len = strlen(name);
    for (const char *p = f; *p;) {
        const char *end = strchr(p, ',');
        size_t l = end ? (size_t)(end - p) : strlen(p);
        if (l == len && strncmp(p, name, len) == 0)
            return 1;
        p += l + (end != NULL);
    }
    return 0;
}

/*
 * The values of a parameter to test: all of lo..hi when there are at most
 * SWEEP_MAX, else (a size threshold, such as shm's large) the values where
 * its behaviour changes against the test's blocks: lo, lo + 1, small and
 * block-sized thresholds, the default and hi. Returns how many (<= 7).
 */
#define SWEEP_MAX 64
static int param_values(long lo, long hi, long def, long *v)
{
    const long picks[] = {lo, lo + 1, 64, 1024, 16384, def, hi};
    int n = 0;
    if (hi - lo < SWEEP_MAX) {
        for (long x = lo; x <= hi; x++)
            v[n++] = x;
        return n;
    }
    for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i++) {
        int seen = picks[i] < lo || picks[i] > hi;
        for (int k = 0; k < n && !seen; k++)
            seen = v[k] == picks[i];
        if (!seen)
            v[n++] = picks[i];
    }
    return n;
}

/* One parameter's name and the values to test. */
typedef struct param_sweep {
    const char *key;
    long v[SWEEP_MAX];
    int n;
} param_sweep;

/* Appends ",key=value" (or ":key=value" first) for each parameter. */
static void format_spec(char *buf, size_t len, const char *name, const param_sweep *p,
                        const int *idx, int np)
{
    int at = snprintf(buf, len, "%s", name);
    for (int k = 0; k < np && at > 0 && (size_t)at < len; k++)
        at += snprintf(buf + at, len - (size_t)at, "%c%s=%ld", k == 0 ? ':' : ',', p[k].key,
                       p[k].v[idx[k]]);
}

/*
 * The specs of one algorithm. One or two parameters: every combination.
 * Three: every pair of values of any two of them (all-pairs), in |A| |B|
 * specs with A and B the two longest sweeps: spec (i, j) takes A's i-th
 * value, B's j-th and C's ((i + j) mod |C|)-th. For fixed i, j runs over
 * |B| >= |C| values, so every (A, C) pair occurs; likewise every (B, C).
 */
static void push_specs(spec_list *l, const char *name, param_sweep *p, int np)
{
    char buf[256];
    int idx[3] = {0, 0, 0}, order[3] = {0, 1, 2};
    assert_true(np <= 3); /* extend this enumeration for more parameters */
    if (np < 3) {
        for (idx[0] = 0; idx[0] < (np > 0 ? p[0].n : 1); idx[0]++)
            for (idx[1] = 0; idx[1] < (np > 1 ? p[1].n : 1); idx[1]++) {
                format_spec(buf, sizeof buf, name, p, idx, np);
                push(l, buf);
            }
        return;
    }
    for (int a = 0; a < 3; a++) /* order: the sweeps longest first */
        for (int b = a + 1; b < 3; b++)
            if (p[order[b]].n > p[order[a]].n) {
                const int t = order[a];
                order[a] = order[b];
                order[b] = t;
            }
    if (p[order[2]].n == 0)
        return; /* a parameter with an empty range at this P: none */
    for (int i = 0; i < p[order[0]].n; i++)
        for (int j = 0; j < p[order[1]].n; j++) {
            idx[order[0]] = i;
            idx[order[1]] = j;
            idx[order[2]] = (i + j) % p[order[2]].n;
            format_spec(buf, sizeof buf, name, p, idx, np);
            push(l, buf);
        }
}

int th_algorithm_specs(const char *collective, int P, int Q, int N, char ***specs)
{
    spec_list l = {0};
    for (int i = 0; i < coltune_algorithm_count(); i++) {
        const char *coll, *name;
        int np;
        param_sweep p[3];
        coltune_algorithm_info(i, &coll, &name, &np);
        if (strcmp(coll, collective) != 0 || !wanted(name))
            continue;
        for (int k = 0; k < np && k < 3; k++) {
            long lo = 0, hi = 0, def;
            coltune_algorithm_param(i, k, P, Q, N, &p[k].key, &lo, &hi, &def);
            p[k].n = param_values(lo, hi, def, p[k].v);
        }
        push_specs(&l, name, p, np);
    }
    *specs = l.v;
    return l.n;
}

int th_world_specs(const char *collective, char ***specs)
{
    return th_algorithm_specs(collective, th.size, th.Q, th.N, specs);
}

void th_specs_free(char **specs, int n)
{
    for (int i = 0; i < n; i++)
        free(specs[i]);
    free(specs);
}

long th_layout(th_rng *r, int n, const int *counts, int *displs, int shuffled)
{
    int *perm = malloc((size_t)(n > 0 ? n : 1) * sizeof *perm);
    if (perm == NULL)
        abort();
    for (int j = 0; j < n; j++)
        perm[j] = j;
    for (int j = n - 1; shuffled && j > 0; j--) {
        int k = (int)th_below(r, j + 1), t = perm[j];
        perm[j] = perm[k];
        perm[k] = t;
    }
    long at = shuffled ? th_below(r, 3) : 0;
    for (int k = 0; k < n; k++) {
        displs[perm[k]] = (int)at;
        at += counts[perm[k]] + (shuffled ? th_below(r, 3) : 0);
    }
    free(perm);
    return at;
}

size_t th_span_bytes(long elements, MPI_Datatype t)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    return (size_t)(elements * ext + tlb + text + 16);
}
