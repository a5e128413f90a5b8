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

int th_algorithm_specs(const char *collective, int P, int Q, int N, char ***specs)
{
    spec_list l = {0};
    for (int i = 0; i < coltune_algorithm_count(); i++) {
        const char *coll, *name, *k0, *k1;
        int np, n0, n1;
        long lo0 = 0, hi0 = 0, d0, lo1 = 0, hi1 = 0, d1;
        long v0[SWEEP_MAX], v1[SWEEP_MAX];
        char buf[256];
        coltune_algorithm_info(i, &coll, &name, &np);
        if (strcmp(coll, collective) != 0 || !wanted(name))
            continue;
        if (np == 0) {
            push(&l, name);
            continue;
        }
        coltune_algorithm_param(i, 0, P, Q, N, &k0, &lo0, &hi0, &d0);
        n0 = param_values(lo0, hi0, d0, v0);
        if (np == 1) {
            for (int a = 0; a < n0; a++) {
                snprintf(buf, sizeof buf, "%s:%s=%ld", name, k0, v0[a]);
                push(&l, buf);
            }
            continue;
        }
        /* Two parameters: every combination (ranges are small at test P). */
        assert_true(np <= 2); /* extend this enumeration for more parameters */
        coltune_algorithm_param(i, 1, P, Q, N, &k1, &lo1, &hi1, &d1);
        n1 = param_values(lo1, hi1, d1, v1);
        for (int a = 0; a < n0; a++)
            for (int b = 0; b < n1; b++) {
                snprintf(buf, sizeof buf, "%s:%s=%ld,%s=%ld", name, k0, v0[a], k1, v1[b]);
                push(&l, buf);
            }
    }
    *specs = l.v;
    return l.n;
}

void th_specs_free(char **specs, int n)
{
    for (int i = 0; i < n; i++)
        free(specs[i]);
    free(specs);
}
