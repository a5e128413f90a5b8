/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_api.c - the named Alltoallv wrappers of the direct API
 * (coltune_alltoallv_pairwise ... coltune_alltoallv_tuna_hier_staggered in
 * include/coltune.h), each called at every parameter value its comment in
 * the header allows on this communicator (P ranks on N nodes of at most Q, as
 * coltune sees them: COLTUNE_PPN's emulation included), on random counts
 * with zeros, shuffled displacements with gaps and three datatypes (one of
 * them non-contiguous), checked byte for byte against PMPI_Alltoallv on the
 * same inputs. Then their error returns (MPI_ERRORS_RETURN): a parameter
 * outside that range returns MPI_ERR_ARG under COLTUNE_FALLBACK=error and is
 * served right by the fallback otherwise (except one above the range whose
 * larger values act as its largest, as the header says: the algorithm serves
 * it, right, in both modes); MPI_COMM_NULL and an
 * intercommunicator return MPI_ERR_COMM. Last, coltune_decision's error
 * returns and its answers without a rules file.
 *
 * Rank 0 prints "api: exercised <function>" for each wrapper once its calls
 * (valid or out of range) passed: tests/mpi/alltoallv.sh checks that list
 * against the wrappers the header declares, so a new wrapper without a test
 * fails.
 *
 * Run by tests/mpi/alltoallv.sh. Environment: TEST_SEED (base seed).
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
/* The wrappers                                                        */
/* ------------------------------------------------------------------ */

#define A2AV_PARAMS                                                                          \
    const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, \
        void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,   \
        MPI_Comm comm
typedef int (*fn0)(A2AV_PARAMS);
typedef int (*fn1)(A2AV_PARAMS, int);
typedef int (*fn2)(A2AV_PARAMS, int, int);

/* The largest value a parameter may take, as the header states it. */
enum { MAX_P, MAX_Q1, MAX_N, MAX_NM1Q1 };

typedef struct wrapper {
    const char *name; /* as declared in include/coltune.h */
    int np;           /* parameters */
    fn0 f0;
    fn1 f1;
    fn2 f2;
    int lo[2], hi[2]; /* smallest value, MAX_* of the largest */
    int clamps[2];    /* a value above the largest acts as it (the header says so) */
} wrapper;

static const wrapper wrappers[] = {
    {"coltune_alltoallv_pairwise", 0, coltune_alltoallv_pairwise, NULL, NULL, {0}, {0}, {0}},
    {"coltune_alltoallv_nonblocking", 0, coltune_alltoallv_nonblocking, NULL, NULL, {0}, {0}, {0}},
    {"coltune_alltoallv_linear", 0, coltune_alltoallv_linear, NULL, NULL, {0}, {0}, {0}},
    {"coltune_alltoallv_scattered", 1, NULL, coltune_alltoallv_scattered, NULL, {1}, {MAX_P},
     {1}},
    {"coltune_alltoallv_multipair_blocking", 1, NULL, coltune_alltoallv_multipair_blocking,
     NULL, {1}, {MAX_P}, {0}},
    {"coltune_alltoallv_multipair_waitany", 1, NULL, coltune_alltoallv_multipair_waitany, NULL,
     {1}, {MAX_P}, {0}},
    {"coltune_alltoallv_multipair_testany", 1, NULL, coltune_alltoallv_multipair_testany, NULL,
     {1}, {MAX_P}, {0}},
    {"coltune_alltoallv_tuna", 1, NULL, coltune_alltoallv_tuna, NULL, {2}, {MAX_P}, {0}},
    {"coltune_alltoallv_tuna_hier_coalesced", 2, NULL, NULL,
     coltune_alltoallv_tuna_hier_coalesced, {2, 1}, {MAX_Q1, MAX_N}, {1, 1}},
    {"coltune_alltoallv_tuna_hier_staggered", 2, NULL, NULL,
     coltune_alltoallv_tuna_hier_staggered, {2, 1}, {MAX_Q1, MAX_NM1Q1}, {1, 1}},
};
enum { NWRAPPERS = sizeof wrappers / sizeof wrappers[0] };

static int max_value(int which)
{
    int Q, N;
    th_topology(&Q, &N);
    switch (which) {
    case MAX_Q1:
        return Q + 1;
    case MAX_N:
        return N;
    case MAX_NM1Q1:
        return (N - 1) * Q + 1;
    default:
        return th_size();
    }
}

/* One exchange on buffers and arrays as MPI_Alltoallv takes them. */
typedef struct call {
    const void *sb;
    const int *sc, *sd;
    MPI_Datatype st;
    void *rb;
    const int *rc, *rd;
    MPI_Datatype rt;
    MPI_Comm comm;
} call;

static int run(const wrapper *w, const int *v, const call *c)
{
    switch (w->np) {
    case 0:
        return w->f0(c->sb, c->sc, c->sd, c->st, c->rb, c->rc, c->rd, c->rt, c->comm);
    case 1:
        return w->f1(c->sb, c->sc, c->sd, c->st, c->rb, c->rc, c->rd, c->rt, c->comm, v[0]);
    default:
        return w->f2(c->sb, c->sc, c->sd, c->st, c->rb, c->rc, c->rd, c->rt, c->comm, v[0],
                     v[1]);
    }
}

/* ------------------------------------------------------------------ */
/* Inputs                                                              */
/* ------------------------------------------------------------------ */

typedef struct type_case {
    const char *name;
    MPI_Datatype type;
} type_case;

enum { NTYPES = 3 };
static type_case types[NTYPES];

static void types_create(void)
{
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec); /* two ints of every three */
    MPI_Type_commit(&vec);
    types[0] = (type_case){"MPI_INT", MPI_INT};
    types[1] = (type_case){"MPI_DOUBLE", MPI_DOUBLE};
    types[2] = (type_case){"vector(2,1,3,int)", vec};
}

/* One side of a call: counts, displacements (in extents) in shuffled order
 * with gaps, and the buffer's size in bytes. */
typedef struct side {
    int *counts, *displs;
    size_t bytes;
} side;

static side side_make(th_rng *r, const int *C, int P, int me, int sending, MPI_Aint extent)
{
    side s = {malloc((size_t)P * sizeof(int)), malloc((size_t)P * sizeof(int)), 0};
    int *order = malloc((size_t)P * sizeof(int)), at = 0;
    assert_non_null(s.counts);
    assert_non_null(s.displs);
    assert_non_null(order);
    for (int j = 0; j < P; j++) {
        s.counts[j] = sending ? C[me * P + j] : C[j * P + me];
        order[j] = j;
    }
    for (int j = P - 1; j > 0; j--) { /* Fisher-Yates */
        const int k = (int)th_below(r, j + 1), t = order[j];
        order[j] = order[k];
        order[k] = t;
    }
    for (int i = 0; i < P; i++) {
        at += (int)th_below(r, 3); /* a gap of 0-2 elements */
        s.displs[order[i]] = at;
        at += s.counts[order[i]];
    }
    s.bytes = (size_t)(at + 1) * (size_t)extent;
    free(order);
    return s;
}

static void side_free(side *s)
{
    free(s->counts);
    free(s->displs);
}

/* Count matrix C[i*P + j], what i sends to j, the same on every rank: about
 * a third zeros (a whole row of zeros now and then), small counts else. */
static int *count_matrix(th_rng *r, int P)
{
    int *C = malloc((size_t)P * P * sizeof *C);
    const int empty = th_below(r, 4) == 0 ? (int)th_below(r, P) : -1;
    assert_non_null(C);
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++)
            C[i * P + j] = i == empty || th_below(r, 3) == 0 ? 0 : 1 + (int)th_below(r, 9);
    return C;
}

/* ------------------------------------------------------------------ */
/* One case against PMPI_Alltoallv                                     */
/* ------------------------------------------------------------------ */

static MPI_Comm comm; /* MPI_COMM_WORLD's duplicate, MPI_ERRORS_RETURN */

/* Calls w with parameters v on random inputs of type t; 1 when every rank
 * gets MPI_SUCCESS and PMPI_Alltoallv's bytes (want_rc MPI_SUCCESS), or
 * when every rank gets an error of class want_rc. */
static int one_case(const wrapper *w, const int *v, const type_case *t, uint64_t stream,
                    int want_rc)
{
    const int P = th_size(), me = th_rank();
    th_rng r = th_rng_make(th_seed(), stream);
    MPI_Aint lb, extent;
    MPI_Type_get_extent(t->type, &lb, &extent);
    int *C = count_matrix(&r, P);
    side s = side_make(&r, C, P, me, 1, extent), d = side_make(&r, C, P, me, 0, extent);
    unsigned char *sb = malloc(s.bytes), *got = malloc(d.bytes), *want = malloc(d.bytes);
    assert_non_null(sb);
    assert_non_null(got);
    assert_non_null(want);
    for (size_t i = 0; i < s.bytes; i++)
        sb[i] = (unsigned char)(th_next(&r) >> 56);
    memset(got, 0xEE, d.bytes);
    memset(want, 0xEE, d.bytes);
    int ref = PMPI_Alltoallv(sb, s.counts, s.displs, t->type, want, d.counts, d.displs, t->type,
                             comm);
    const call c = {sb, s.counts, s.displs, t->type, got, d.counts, d.displs, t->type, comm};
    int rc = run(w, v, &c), cls = rc, ok;
    char what[200];
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    snprintf(what, sizeof what, "%s(%d, %d) P=%d %s stream %llu", w->name, w->np > 0 ? v[0] : 0,
             w->np > 1 ? v[1] : 0, P, t->name, (unsigned long long)stream);
    if (want_rc == MPI_SUCCESS) {
        ok = ref == MPI_SUCCESS && rc == MPI_SUCCESS && th_same_bytes(got, want, d.bytes, what);
        if (rc != MPI_SUCCESS)
            fprintf(stderr, "rank %d: %s: error class %d\n", me, what, cls);
    } else {
        ok = rc != MPI_SUCCESS && cls == want_rc;
        if (!ok)
            fprintf(stderr, "rank %d: %s: error class %d, want %d\n", me, what,
                    rc == MPI_SUCCESS ? MPI_SUCCESS : cls, want_rc);
    }
    free(sb);
    free(got);
    free(want);
    side_free(&s);
    side_free(&d);
    free(C);
    return th_all(ok, MPI_COMM_WORLD);
}

/* Every valid value (every pair for two parameters), every datatype. */
static int sweep(const wrapper *w, uint64_t *stream, int *ncalls)
{
    int v[2] = {0, 0}, failures = 0;
    const int hi0 = w->np > 0 ? max_value(w->hi[0]) : 0;
    const int hi1 = w->np > 1 ? max_value(w->hi[1]) : 0;
    for (v[0] = w->np > 0 ? w->lo[0] : 0; v[0] <= hi0; v[0]++)
        for (v[1] = w->np > 1 ? w->lo[1] : 0; v[1] <= hi1; v[1]++)
            for (int t = 0; t < NTYPES; t++, (*ncalls)++)
                failures += !one_case(w, v, &types[t], (*stream)++, MPI_SUCCESS);
    return failures;
}

static void test_every_wrapper(void **state)
{
    (void)state;
    uint64_t stream = 0;
    int failures = 0;
    for (int i = 0; i < NWRAPPERS; i++) {
        int ncalls = 0, f = sweep(&wrappers[i], &stream, &ncalls);
        if (f == 0 && ncalls > 0 && th_rank() == 0)
            printf("api: exercised %s (%d calls)\n", wrappers[i].name, ncalls);
        failures += f;
    }
    assert_int_equal(failures, 0);
}

/* ------------------------------------------------------------------ */
/* Error returns                                                       */
/* ------------------------------------------------------------------ */

/* Values just outside each parameter's range, the others at their smallest:
 * MPI_ERR_ARG under COLTUNE_FALLBACK=error, a right result otherwise. A
 * wrapper with no valid value at this P (tuna at P = 1) is all invalid. */
static void test_out_of_range(void **state)
{
    (void)state;
    const char *fb = getenv("COLTUNE_FALLBACK");
    const int want = fb != NULL && strcmp(fb, "error") == 0 ? MPI_ERR_ARG : MPI_SUCCESS;
    uint64_t stream = 1000000;
    int failures = 0, ncases = 0;
    for (int i = 0; i < NWRAPPERS; i++) {
        const wrapper *w = &wrappers[i];
        int f = 0;
        for (int k = 0; k < w->np; k++) {
            const int bad[3] = {w->lo[k] - 1, max_value(w->hi[k]) + 1, -7};
            for (int b = 0; b < 3; b++, ncases++) {
                int v[2] = {w->lo[0], w->np > 1 ? w->lo[1] : 0};
                v[k] = bad[b];
                /* above the largest, a clamping parameter serves the call itself */
                f += !one_case(w, v, &types[(size_t)b % NTYPES], stream++,
                               b == 1 && w->clamps[k] ? MPI_SUCCESS : want);
            }
        }
        /* (tuna has no valid radix at P = 1: these are its only calls) */
        if (f == 0 && w->np > 0 && th_rank() == 0)
            printf("api: exercised %s (%d out-of-range calls)\n", w->name, 3 * w->np);
        failures += f;
    }
    if (th_rank() == 0)
        printf("# %d out-of-range calls: %s\n", ncases,
               want == MPI_ERR_ARG ? "MPI_ERR_ARG" : "served by the fallback");
    assert_int_equal(failures, 0);
}

/* No communicator, or an intercommunicator: MPI_ERR_COMM from every wrapper. */
static void test_bad_communicator(void **state)
{
    (void)state;
    const int P = th_size(), me = th_rank();
    int *zeros = calloc((size_t)P, sizeof(int)), failures = 0, v[2] = {2, 1};
    char buf[8];
    MPI_Comm inter = MPI_COMM_NULL, half;
    assert_non_null(zeros);
    if (P >= 2) { /* two halves, joined by an intercommunicator */
        MPI_Comm_split(MPI_COMM_WORLD, me < P / 2, me, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me < P / 2 ? P / 2 : 0, 7, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        MPI_Comm_free(&half);
    }
    for (int i = 0; i < NWRAPPERS; i++) {
        const wrapper *w = &wrappers[i];
        call c = {buf, zeros, zeros, MPI_INT, buf, zeros, zeros, MPI_INT, MPI_COMM_NULL};
        int rc = run(w, v, &c), cls = rc;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_COMM) {
            fprintf(stderr, "rank %d: %s(MPI_COMM_NULL): %d, want MPI_ERR_COMM\n", me, w->name,
                    rc);
            failures++;
        }
        if (inter == MPI_COMM_NULL)
            continue;
        c.comm = inter;
        rc = run(w, v, &c);
        cls = rc;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_COMM) {
            fprintf(stderr, "rank %d: %s(intercommunicator): %d, want MPI_ERR_COMM\n", me,
                    w->name, rc);
            failures++;
        }
    }
    if (inter != MPI_COMM_NULL)
        MPI_Comm_free(&inter);
    free(zeros);
    assert_true(th_all(failures == 0, MPI_COMM_WORLD));
}

/* coltune_decision: its error returns, and the answers that hold without a
 * rules file (the tests run with COLTUNE_RULES empty): pmpi, an empty
 * Alltoall pmpi whatever decides. tests/mpi/bench.sh compares its answers
 * under a rules file with coltune-info --check (coltune-bench --sweep). */
static void test_decision(void **state)
{
    (void)state;
    char spec[160], tiny[2];
    int failures = 0;
    failures += coltune_decision(MPI_COMM_NULL, "alltoall", 16, spec, sizeof spec) !=
                MPI_ERR_COMM;
    failures += coltune_decision(comm, "nosuch", 16, spec, sizeof spec) != MPI_ERR_ARG;
    failures += coltune_decision(comm, NULL, 16, spec, sizeof spec) != MPI_ERR_ARG;
    failures += coltune_decision(comm, "alltoall", -1, spec, sizeof spec) != MPI_ERR_ARG;
    failures += coltune_decision(comm, "alltoall", 0, tiny, sizeof tiny) != MPI_ERR_ARG;
    failures += coltune_decision(comm, "alltoall", 0, spec, sizeof spec) != MPI_SUCCESS ||
                strcmp(spec, "pmpi") != 0;
    if (getenv("COLTUNE_ALLTOALLV") == NULL && (getenv("COLTUNE_RULES") == NULL ||
                                                getenv("COLTUNE_RULES")[0] == '\0'))
        failures += coltune_decision(comm, "alltoallv", 4096, spec, sizeof spec) !=
                        MPI_SUCCESS || strcmp(spec, "pmpi") != 0;
    if (failures != 0)
        fprintf(stderr, "rank %d: coltune_decision: %d wrong answers\n", th_rank(), failures);
    assert_true(th_all(failures == 0, MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    th_init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    types_create();
    struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_wrapper),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_bad_communicator),
        cmocka_unit_test(test_decision),
    };
    int failed = th_run("direct API wrappers", tests, sizeof tests / sizeof tests[0]);
    MPI_Type_free(&types[2].type);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return failed != 0;
}
