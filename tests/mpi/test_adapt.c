/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_adapt.c - online tuning (COLTUNE_ADAPT=1 or an adapt rule, set by
 * tests/mpi/adapt.sh) under mpirun. Before every call each rank asks
 * coltune_decision which candidate the call will run, and all ranks check
 * they agree; every call's result is compared byte for byte with the MPI
 * library's own (PMPI_) on random counts with zeros. Over the calls the
 * learners run all their candidates (the first judged round runs each
 * algorithm with its defaults, a winner's sweep its parameters' ends), so
 * every candidate's result is checked. Also: several communicators learning
 * at once, created and freed mid-learning; intercommunicator Allgather(v);
 * MPI_THREAD_MULTIPLE with a communicator per thread (TEST_THREAD_MULTIPLE=1).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coltune.h"
#include "harness.h"

/* Calls per test and communicator (TEST_CALLS, default 160). */
static int calls_per_test(void)
{
    const char *v = getenv("TEST_CALLS");
    return v != NULL ? atoi(v) : 160;
}
#define CALLS calls_per_test()

/* The candidate the next call of collective on comm runs, the same on every
 * rank (checked: rank 0 of all, an intra-communicator holding every rank of
 * comm, broadcasts its answer and each rank compares). */
static int agreed_on(MPI_Comm comm, MPI_Comm all, const char *collective, long msg_size,
                     char *spec)
{
    char root[160];
    if (coltune_decision(comm, collective, msg_size, spec, 160) != MPI_SUCCESS)
        return 0;
    memcpy(root, spec, sizeof root);
    MPI_Bcast(root, sizeof root, MPI_CHAR, 0, all);
    const int same = strcmp(root, spec) == 0;
    if (!same)
        fprintf(stderr, "%s: this rank runs %s, rank 0 runs %s\n", collective, spec, root);
    return th_all(same, all);
}

static int agreed_choice(MPI_Comm comm, const char *collective, long msg_size, char *spec)
{
    return agreed_on(comm, comm, collective, msg_size, spec);
}

/* Keeps the distinct algorithm names seen. */
typedef struct seen {
    char names[64][64];
    int n;
} seen;

static int seen_has(const seen *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0)
            return 1;
    return 0;
}

static void see(seen *s, const char *spec)
{
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(spec, ":"), spec);
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0)
            return;
    if (s->n < 64)
        memcpy(s->names[s->n++], name, sizeof name);
}

/* One MPI_Alltoallv of type (elements of elem bytes) with random counts,
 * zeros included, against PMPI_Alltoallv. */
static int alltoallv_once(MPI_Comm comm, MPI_Datatype type, int elem, th_rng *g, int call,
                          const char *spec)
{
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    int *sc = malloc(4 * (size_t)P * sizeof *sc), *sd = sc + P, *rc = sd + P, *rd = rc + P;
    int *all = malloc((size_t)P * (size_t)P * sizeof *all);
    /* every rank draws the whole matrix from the shared seed: counts match */
    th_rng m = th_rng_make(th_seed(), (uint64_t)call * 7919u + (uint64_t)P);
    const long maxc = 1 + th_below(&m, 4) * 40; /* blocks up to 1, 41, 81 or 121 elements */
    for (int i = 0; i < P * P; i++)
        all[i] = th_below(&m, 3) == 0 ? 0 : (int)th_below(&m, maxc + 1);
    int st = 0, rt = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = all[me * P + j];
        rc[j] = all[j * P + me];
        sd[j] = st;
        rd[j] = rt;
        st += sc[j];
        rt += rc[j];
    }
    unsigned char *sb = malloc((size_t)st * elem + 1), *got = malloc((size_t)rt * elem + 1),
                  *want = malloc((size_t)rt * elem + 1);
    for (long i = 0; i < (long)st * elem; i++)
        sb[i] = (unsigned char)th_below(g, 256);
    memset(got, 0xa5, (size_t)rt * elem + 1);
    memset(want, 0xa5, (size_t)rt * elem + 1);
    int ok = MPI_Alltoallv(sb, sc, sd, type, got, rc, rd, type, comm) == MPI_SUCCESS;
    ok = PMPI_Alltoallv(sb, sc, sd, type, want, rc, rd, type, comm) == MPI_SUCCESS && ok;
    char what[256];
    snprintf(what, sizeof what, "alltoallv call %d (%s) P=%d", call, spec, P);
    ok = ok && th_same_bytes(got, want, (size_t)rt * elem + 1, what);
    free(sc);
    free(all);
    free(sb);
    free(got);
    free(want);
    return th_all(ok, comm);
}

/* CALLS Alltoallv calls on comm, checked; the names of what ran in *s. */
static int alltoallv_calls(MPI_Comm comm, int calls, seen *s, uint64_t stream)
{
    MPI_Datatype shorts3;
    MPI_Type_contiguous(3, MPI_SHORT, &shorts3);
    MPI_Type_commit(&shorts3);
    th_rng g = th_rng_make(th_seed(), stream);
    int ok = 1;
    for (int c = 0; c < calls && ok; c++) {
        char spec[160];
        ok = agreed_choice(comm, "alltoallv", 0, spec);
        see(s, spec);
        const int pick = c % 3;
        ok = ok && alltoallv_once(comm, pick == 0 ? MPI_INT : pick == 1 ? MPI_DOUBLE : shorts3,
                                  pick == 0 ? 4 : pick == 1 ? 8 : 6, &g, c, spec);
    }
    MPI_Type_free(&shorts3);
    return ok;
}

static void test_alltoallv(void **state)
{
    (void)state;
    MPI_Comm comm;
    seen s = {.n = 0};
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    assert_true(alltoallv_calls(comm, CALLS, &s, 1));
    MPI_Comm_free(&comm);
    if (th_rank() == 0) {
        printf("# alltoallv ran:");
        for (int i = 0; i < s.n; i++)
            printf(" %s", s.names[i]);
        printf("\n");
    }
    /* The first round runs every algorithm: COLTUNE_ADAPT offers at least pmpi,
     * pairwise, nonblocking, linear, scattered, tuna and shm at every P;
     * node_aware only across nodes (TEST_RAN, TEST_NOT_RAN: an algorithm
     * that must have run, or not; TEST_MAX_ALGS: before the first round,
     * only the incumbent). */
    const char *min = getenv("TEST_MIN_ALGS"), *max = getenv("TEST_MAX_ALGS"),
               *ran = getenv("TEST_RAN"), *not_ran = getenv("TEST_NOT_RAN");
    assert_true(s.n >= (min ? atoi(min) : 1));
    if (max != NULL)
        assert_true(s.n <= atoi(max));
    if (ran != NULL)
        assert_true(seen_has(&s, ran));
    if (not_ran != NULL)
        assert_false(seen_has(&s, not_ran));
}

/* Alltoall with blocks of three size classes, interleaved: each class has a
 * learner of its own, all checked. */
static void test_alltoall_classes(void **state)
{
    (void)state;
    const int P = th_size(), me = th_rank();
    static const int blocks[] = {1, 25, 700}; /* ints: 4 B, 100 B, 2800 B */
    int ok = 1;
    seen s = {.n = 0};
    th_rng g = th_rng_make(th_seed(), 2);
    for (int c = 0; c < 3 * CALLS / 2 && ok; c++) {
        const int n = blocks[c % 3];
        char spec[160];
        ok = agreed_choice(MPI_COMM_WORLD, "alltoall", (long)n * 4, spec);
        see(&s, spec);
        int *sb = malloc((size_t)n * P * sizeof *sb), *got = malloc((size_t)n * P * sizeof *got),
            *want = malloc((size_t)n * P * sizeof *want);
        for (int i = 0; i < n * P; i++)
            sb[i] = (int)th_next(&g) ^ me;
        ok = ok && MPI_Alltoall(sb, n, MPI_INT, got, n, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS;
        ok = ok && PMPI_Alltoall(sb, n, MPI_INT, want, n, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS;
        char what[200];
        snprintf(what, sizeof what, "alltoall call %d block %d (%s)", c, n, spec);
        ok = th_all(ok && th_same_bytes(got, want, (size_t)n * P * sizeof *got, what),
                    MPI_COMM_WORLD);
        free(sb);
        free(got);
        free(want);
    }
    assert_true(ok);
}

/* coltune_decision asked on rank 0 alone, of an Alltoall of 16384-byte
 * blocks, before any call: then every rank calls with 20000-byte blocks,
 * of the same size class (16384 to 32767 bytes), checked and agreed. Under
 * rules that give 16384 one algorithm and 20000 another (adapt.sh), the
 * query must not make the learner, or rank 0's incumbent would differ from
 * the others'. */
static void test_query_one_rank(void **state)
{
    (void)state;
    const int P = th_size(), me = th_rank(), n = 5000; /* ints: 20000 B */
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    char spec[160];
    if (me == 0)
        assert_int_equal(coltune_decision(comm, "alltoall", 16384, spec, sizeof spec),
                         MPI_SUCCESS);
    int *sb = malloc((size_t)n * P * sizeof *sb), *got = malloc((size_t)n * P * sizeof *got),
        *want = malloc((size_t)n * P * sizeof *want);
    th_rng g = th_rng_make(th_seed(), 3);
    int ok = 1;
    for (int c = 0; c < CALLS && ok; c++) {
        ok = agreed_choice(comm, "alltoall", (long)n * 4, spec);
        for (int i = 0; i < n * P; i++)
            sb[i] = (int)th_next(&g) ^ me;
        ok = ok && MPI_Alltoall(sb, n, MPI_INT, got, n, MPI_INT, comm) == MPI_SUCCESS;
        ok = ok && PMPI_Alltoall(sb, n, MPI_INT, want, n, MPI_INT, comm) == MPI_SUCCESS;
        char what[200];
        snprintf(what, sizeof what, "alltoall call %d (%s)", c, spec);
        ok = th_all(ok && th_same_bytes(got, want, (size_t)n * P * sizeof *got, what), comm);
    }
    free(sb);
    free(got);
    free(want);
    MPI_Comm_free(&comm);
    assert_true(ok);
}

/* Row and column communicators of a grid learning at once, calls
 * interleaved; one is freed in the middle of a round and another made. */
static void test_many_comms(void **state)
{
    (void)state;
    const int me = th_rank(), cols = th_size() >= 4 ? 2 : 1;
    MPI_Comm row, col, extra;
    seen s = {.n = 0};
    MPI_Comm_split(MPI_COMM_WORLD, me / cols, me, &row);
    MPI_Comm_split(MPI_COMM_WORLD, me % cols, me, &col);
    int ok = 1;
    for (int c = 0; c < CALLS && ok; c++) {
        ok = alltoallv_calls(row, 1, &s, 100 + (uint64_t)c);
        ok = ok && alltoallv_calls(col, 1, &s, 500 + (uint64_t)c);
        if (c == 37) { /* mid-learning: a learner with a round in progress goes */
            MPI_Comm_free(&row);
            MPI_Comm_dup(MPI_COMM_WORLD, &row);
        }
    }
    MPI_Comm_dup(col, &extra); /* a new communicator of the same shape learns too */
    ok = ok && alltoallv_calls(extra, CALLS / 2, &s, 900);
    MPI_Comm_free(&extra);
    MPI_Comm_free(&row);
    MPI_Comm_free(&col);
    assert_true(th_all(ok, MPI_COMM_WORLD));
}

/* Intercommunicator Allgather and Allgatherv (P >= 2): the two halves. */
static void test_allgather_inter(void **state)
{
    (void)state;
    const int P = th_size(), me = th_rank();
    if (P < 2)
        skip();
    MPI_Comm half, inter;
    const int lower = me < P / 2;
    MPI_Comm_split(MPI_COMM_WORLD, lower, me, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, lower ? P / 2 : 0, 7, &inter);
    int R;
    MPI_Comm_remote_size(inter, &R);
    int ok = 1;
    th_rng g = th_rng_make(th_seed(), 3);
    for (int c = 0; c < CALLS && ok; c++) {
        const int n = 1 + (c % 4) * 30;
        char spec[160];
        /* the size that picks an Allgather's class: the larger group's total */
        const long size = (long)n * 4 * (P - P / 2 > P / 2 ? P - P / 2 : P / 2);
        ok = agreed_on(inter, MPI_COMM_WORLD, c % 2 ? "allgather_inter" : "allgatherv_inter",
                       size, spec);
        int *sb = malloc((size_t)n * sizeof *sb), *got = malloc((size_t)n * R * sizeof *got),
            *want = malloc((size_t)n * R * sizeof *want);
        int *counts = malloc(2 * (size_t)R * sizeof *counts), *displs = counts + R;
        for (int i = 0; i < n; i++)
            sb[i] = (int)th_next(&g);
        for (int i = 0; i < R; i++) {
            counts[i] = n;
            displs[i] = (R - 1 - i) * n; /* reversed: the v form's own layout */
        }
        if (c % 2) {
            ok = ok && MPI_Allgather(sb, n, MPI_INT, got, n, MPI_INT, inter) == MPI_SUCCESS;
            ok = ok && PMPI_Allgather(sb, n, MPI_INT, want, n, MPI_INT, inter) == MPI_SUCCESS;
        } else {
            ok = ok && MPI_Allgatherv(sb, n, MPI_INT, got, counts, displs, MPI_INT, inter) ==
                           MPI_SUCCESS;
            ok = ok && PMPI_Allgatherv(sb, n, MPI_INT, want, counts, displs, MPI_INT, inter) ==
                           MPI_SUCCESS;
        }
        char what[120];
        snprintf(what, sizeof what, "allgather%s inter call %d", c % 2 ? "" : "v", c);
        ok = th_all(ok && th_same_bytes(got, want, (size_t)n * R * sizeof *got, what),
                    MPI_COMM_WORLD);
        free(sb);
        free(got);
        free(want);
        free(counts);
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    assert_true(ok);
}

/* MPI_THREAD_MULTIPLE: each thread learns on a communicator of its own. */
typedef struct worker {
    MPI_Comm comm;
    int ok;
    uint64_t stream;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    seen s = {.n = 0};
    w->ok = alltoallv_calls(w->comm, CALLS, &s, w->stream);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    int level;
    MPI_Query_thread(&level);
    if (getenv("TEST_THREAD_MULTIPLE") == NULL)
        skip(); /* the script runs this test alone, with the variable set */
    if (level < MPI_THREAD_MULTIPLE)
        th_skip("the MPI library does not provide MPI_THREAD_MULTIPLE");
    enum { NT = 2 };
    worker w[NT];
    pthread_t t[NT];
    for (int i = 0; i < NT; i++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &w[i].comm);
        w[i].stream = 1000 + (uint64_t)i;
    }
    for (int i = 0; i < NT; i++)
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    int ok = 1;
    for (int i = 0; i < NT; i++) {
        pthread_join(t[i], NULL);
        ok = ok && w[i].ok;
        MPI_Comm_free(&w[i].comm);
    }
    assert_true(th_all(ok, MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    th_init(&argc, &argv);
    struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alltoallv),       cmocka_unit_test(test_alltoall_classes),
        cmocka_unit_test(test_many_comms),      cmocka_unit_test(test_allgather_inter),
        cmocka_unit_test(test_threads),         cmocka_unit_test(test_query_one_rank),
    };
    int rc = th_run("adapt", tests, sizeof tests / sizeof tests[0]);
    MPI_Finalize();
    return rc;
}
