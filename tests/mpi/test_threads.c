/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_threads.c - coltune's lazily made state under MPI_THREAD_MULTIPLE
 * (issue 50): T threads per process (default 8) start at once and
 *   - each asks coltune_decision and coltune_comm_topology about one shared
 *     communicator that no coltune call has seen yet: its first use is
 *     collective, and every thread of a process reaches it at the same
 *     time, so the context, its topology and its decision cache are made
 *     while the threads race (once per process: tests/mpi/threads.sh counts
 *     the contexts in the COLTUNE_VERBOSE=2 log); then they keep asking
 *     between their own calls (local, on a communicator others use too);
 *   - at the end each starts 4 intercepted MPI_Ialltoallv on a communicator
 *     of its own and hands the requests to the next thread, which completes
 *     them with MPI_Waitall while its own are completed by the thread before
 *     (coltune's requests, their table and a shared window's queue, advanced
 *     by a thread that did not start them; COLTUNE_IALLTOALLV chooses);
 *   - each makes its own communicators, rounds times, from a parent the main
 *     thread made for it (MPI_Comm_dup, and MPI_Comm_split with the ranks
 *     reversed), and on each runs coltune_alltoallv and coltune_alltoall
 *     with every spec of TEST_SPECS ("-": no spec, decided as the
 *     intercepted call would) and the intercepted MPI_Alltoallv and
 *     MPI_Alltoall calls times each (what the environment makes them run:
 *     COLTUNE_ADAPT's learners, a COLTUNE_ALLTOALLV algorithm), then frees
 *     them. The first calls of the threads race for what the process keeps
 *     (the attribute keyval, contexts' numbers, its node, the once-only
 *     messages, statistics, the learners' records).
 * Every result is checked element by element against the values each rank
 * computes for itself (counts and data drawn from the seed, printed on
 * failure); the decision answers of every thread must equal the one the
 * main thread gets once they are done, and be the same on every rank.
 *
 * The main thread meanwhile runs shared_calls intercepted MPI_Alltoallv and
 * MPI_Alltoall calls on the shared communicator: the threads' questions are
 * local, so they may overlap them (under COLTUNE_ADAPT too, whose answer is
 * what the learner the calls advance has published: TEST_ANSWERS_MOVE=1
 * then accepts any algorithm of the collective from the threads).
 *
 * Arguments: threads (8), rounds (2), calls (6), shared_calls (calls).
 * TEST_SPECS: comma-separated
 * specs (default "-,pairwise,tuna,scattered,linear"). TEST_SEED: the seed.
 * Exits 77 when the MPI library does not provide MPI_THREAD_MULTIPLE.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coltune.h"

#define SPEC_LEN 160
#define MAX_SPECS 16
#define MAX_COUNT 64 /* ints per block at most */

/* The questions every thread asks about the shared communicator. */
static const struct {
    const char *coll;
    MPI_Count msg_size;
} query[] = {
    {"alltoallv", 0},   {"alltoallv", 8},   {"alltoallv", 40},  {"alltoallv", 600},
    {"alltoallv", 1L << 20}, {"alltoall", 0},   {"alltoall", 8},    {"alltoall", 40},
    {"alltoall", 600},  {"alltoall", 1L << 20},
};
#define NQ ((int)(sizeof query / sizeof query[0]))

static int P, me, calls, rounds, nspecs;
static uint64_t seed;
static const char *specs[MAX_SPECS]; /* NULL: no spec */
static MPI_Comm shared;
static pthread_barrier_t start;

typedef struct worker {
    int id;
    MPI_Comm parent; /* made by the main thread for this thread alone */
    int errors;      /* calls that returned an error, wrong answers */
    long bad;        /* wrong elements */
    char first[256]; /* the first failure */
    char answer[NQ][SPEC_LEN];
    int topo[3];
} worker;

static void fail(worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(worker *w, const char *fmt, ...)
{
    va_list ap;
    w->errors++;
    if (w->first[0] != '\0')
        return;
    va_start(ap, fmt);
    vsnprintf(w->first, sizeof w->first, fmt, ap);
    va_end(ap);
}

/* SplitMix64 of a few numbers: the same on every rank. */
static uint64_t mix(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    uint64_t x = seed ^ a * 0x9E3779B97F4A7C15ull ^ b * 0xD1B54A32D192ED03ull ^
                 c * 0xABC98388FB8FAC03ull ^ d * 0x8CB92BA72F3D8DD7ull;
    x = (x ^ x >> 30) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ x >> 27) * 0x94d049bb133111ebull;
    return x ^ x >> 31;
}

/* Element k of the block rank i sends rank j in exchange salt. */
static int value(int i, int j, int k, uint64_t salt) { return (int)(mix(salt, i, j, k) >> 33); }

/* Ints rank i sends rank j in exchange salt: up to MAX_COUNT, zeros too; the
 * exchange's size class (salt % 4) keeps some small and some large. */
static int count(int i, int j, uint64_t salt)
{
    static const int most[4] = {0, 2, 12, MAX_COUNT};
    const int m = most[salt % 4];
    return m == 0 ? 0 : (int)(mix(salt, i, j, 1u << 20) % (uint64_t)(m + 1));
}

/* One Alltoallv's arguments on comm (rank r of n) in exchange salt, its
 * receive buffer filled with -1. */
typedef struct exchange {
    MPI_Comm comm;
    int n, r;
    uint64_t salt;
    int *sc, *sd, *rc, *rd, *sb, *rb;
} exchange;

static void exchange_make(exchange *x, MPI_Comm comm, uint64_t salt)
{
    int sp = 0, rp = 0;
    x->comm = comm;
    x->salt = salt;
    MPI_Comm_size(comm, &x->n);
    MPI_Comm_rank(comm, &x->r);
    const int n = x->n, r = x->r;
    x->sc = malloc(4 * (size_t)n * sizeof(int));
    x->sd = x->sc + n;
    x->rc = x->sd + n;
    x->rd = x->rc + n;
    x->sb = malloc((size_t)n * MAX_COUNT * sizeof(int) + 1);
    x->rb = malloc((size_t)n * MAX_COUNT * sizeof(int) + 1);
    for (int j = 0; j < n; j++) {
        x->sc[j] = count(r, j, salt);
        x->rc[j] = count(j, r, salt);
        x->sd[j] = sp;
        x->rd[j] = rp;
        for (int k = 0; k < x->sc[j]; k++)
            x->sb[sp + k] = value(r, j, k, salt);
        sp += x->sc[j];
        rp += x->rc[j];
    }
    for (int k = 0; k < rp; k++)
        x->rb[k] = -1;
}

/* Checks the received blocks element by element, and frees x. */
static void exchange_check(worker *w, exchange *x, const char *how)
{
    for (int i = 0; i < x->n; i++)
        for (int k = 0; k < x->rc[i]; k++)
            if (x->rb[x->rd[i] + k] != value(i, x->r, k, x->salt)) {
                if (w->bad++ == 0)
                    fail(w, "thread %d: alltoallv %s on %d ranks, salt %llu: from rank %d "
                            "element %d is %d, not %d", w->id, how, x->n,
                         (unsigned long long)x->salt, i, k, x->rb[x->rd[i] + k],
                         value(i, x->r, k, x->salt));
            }
    free(x->sc);
    free(x->sb);
    free(x->rb);
}

/* One Alltoallv on comm, by spec (NULL: decided) or, with intercepted, by
 * MPI_Alltoallv itself; checked element by element. */
static void alltoallv(worker *w, MPI_Comm comm, const char *spec, int intercepted, uint64_t salt)
{
    exchange x;
    exchange_make(&x, comm, salt);
    const int err = intercepted ? MPI_Alltoallv(x.sb, x.sc, x.sd, MPI_INT, x.rb, x.rc, x.rd,
                                                MPI_INT, comm)
                                : coltune_alltoallv(spec, x.sb, x.sc, x.sd, MPI_INT, x.rb, x.rc,
                                                    x.rd, MPI_INT, comm);
    const char *how = intercepted ? "MPI_Alltoallv" : spec != NULL ? spec : "(no spec)";
    if (err != MPI_SUCCESS)
        fail(w, "thread %d: alltoallv %s on %d ranks returned %d", w->id, how, x.n, err);
    exchange_check(w, &x, how);
}

/* One Alltoall of count(0, 0, salt) + 1 ints a block, as alltoallv. */
static void alltoall(worker *w, MPI_Comm comm, const char *spec, int intercepted, uint64_t salt)
{
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    const int c = count(0, 0, salt) + 1;
    int *sb = malloc((size_t)n * (size_t)c * sizeof(int));
    int *rb = malloc((size_t)n * (size_t)c * sizeof(int));
    for (int j = 0; j < n; j++)
        for (int k = 0; k < c; k++) {
            sb[j * c + k] = value(r, j, k, salt);
            rb[j * c + k] = -1;
        }
    const int err = intercepted ? MPI_Alltoall(sb, c, MPI_INT, rb, c, MPI_INT, comm)
                                : coltune_alltoall(spec, sb, c, MPI_INT, rb, c, MPI_INT, comm);
    const char *how = intercepted ? "MPI_Alltoall" : spec != NULL ? spec : "(no spec)";
    if (err != MPI_SUCCESS)
        fail(w, "thread %d: alltoall %s on %d ranks returned %d", w->id, how, n, err);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < c; k++)
            if (rb[i * c + k] != value(i, r, k, salt) && w->bad++ == 0)
                fail(w, "thread %d: alltoall %s on %d ranks, salt %llu: from rank %d "
                        "element %d is %d, not %d", w->id, how, n, (unsigned long long)salt,
                     i, k, rb[i * c + k], value(i, r, k, salt));
    free(sb);
    free(rb);
}

/* Asks query q about the shared communicator into out; 0 on an error. */
static int ask(int q, char *out)
{
    return coltune_decision(shared, query[q].coll, query[q].msg_size, out, SPEC_LEN) ==
           MPI_SUCCESS;
}

/* TEST_ANSWERS_MOVE=1: the main thread's calls advance learners the
 * questions read, so an answer may change between two questions. */
static int may_move;

/* Is spec one of coll's algorithms (its name, up to a ':')? */
static int names_algorithm(const char *coll, const char *spec)
{
    const size_t len = strcspn(spec, ":");
    for (int i = 0; i < coltune_algorithm_count(); i++) {
        const char *c, *name;
        int np;
        if (coltune_algorithm_info(i, &c, &name, &np) == 0 && strcmp(c, coll) == 0 &&
            strlen(name) == len && strncmp(name, spec, len) == 0)
            return 1;
    }
    return 0;
}

/* Asks every question again: the answers must not change (may_move: they
 * must name an algorithm of the collective). */
static void ask_again(worker *w)
{
    char spec[SPEC_LEN];
    for (int q = 0; q < NQ; q++) {
        if (!ask(q, spec))
            fail(w, "thread %d: coltune_decision(%s, %lld) failed", w->id, query[q].coll,
                 (long long)query[q].msg_size);
        else if (may_move ? !names_algorithm(query[q].coll, spec)
                          : strcmp(spec, w->answer[q]) != 0)
            fail(w, "thread %d: coltune_decision(%s, %lld) said '%s', then '%s'", w->id,
                 query[q].coll, (long long)query[q].msg_size, w->answer[q], spec);
    }
}

/* Every exchange on one of the thread's communicators. */
static void exchanges(worker *w, MPI_Comm comm, uint64_t stream)
{
    uint64_t salt = stream * 1000;
    for (int s = 0; s < nspecs; s++) {
        alltoallv(w, comm, specs[s], 0, salt++);
        alltoall(w, comm, specs[s], 0, salt++);
    }
    for (int c = 0; c < calls; c++) {
        alltoallv(w, comm, NULL, 1, salt++);
        alltoall(w, comm, NULL, 1, salt++);
        if (c % 2 == 0)
            ask_again(w);
    }
}

/*
 * Nonblocking calls completed by another thread: each thread starts NHAND
 * intercepted MPI_Ialltoallv on a communicator of its own; the next thread
 * (id + 1) completes them with MPI_Waitall (while its own are completed by
 * the one before it); then each checks its own results.
 */
enum { NHAND = 4 };
typedef struct handed {
    exchange x[NHAND];
    MPI_Request req[NHAND];
} handed;
static handed *hands; /* [threads] */
static int nthreads;
static pthread_barrier_t handoff;

static void hand_over(worker *w)
{
    handed *mine = &hands[w->id], *next = &hands[(w->id + 1) % nthreads];
    MPI_Comm comm;
    MPI_Comm_dup(w->parent, &comm);
    for (int i = 0; i < NHAND; i++) {
        exchange *x = &mine->x[i];
        exchange_make(x, comm, (uint64_t)w->id * 100000 + 90000 + (uint64_t)i);
        if (MPI_Ialltoallv(x->sb, x->sc, x->sd, MPI_INT, x->rb, x->rc, x->rd, MPI_INT, comm,
                           &mine->req[i]) != MPI_SUCCESS)
            fail(w, "thread %d: MPI_Ialltoallv %d failed", w->id, i);
    }
    pthread_barrier_wait(&handoff);
    if (MPI_Waitall(NHAND, next->req, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
        fail(w, "thread %d: MPI_Waitall of thread %d's requests failed", w->id,
             (w->id + 1) % nthreads);
    pthread_barrier_wait(&handoff);
    for (int i = 0; i < NHAND; i++) {
        if (mine->req[i] != MPI_REQUEST_NULL)
            fail(w, "thread %d: request %d not MPI_REQUEST_NULL after another's MPI_Waitall",
                 w->id, i);
        exchange_check(w, &mine->x[i], "MPI_Ialltoallv completed by another thread");
    }
    MPI_Comm_free(&comm);
}

static void *work(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(&start);
    /* The first use of the shared communicator, in every thread at once. */
    for (int q = 0; q < NQ; q++)
        if (!ask(q, w->answer[q]))
            fail(w, "thread %d: coltune_decision(%s, %lld) failed", w->id, query[q].coll,
                 (long long)query[q].msg_size);
    if (coltune_comm_topology(shared, &w->topo[0], &w->topo[1], &w->topo[2]) != MPI_SUCCESS)
        fail(w, "thread %d: coltune_comm_topology failed", w->id);
    for (int r = 0; r < rounds; r++) {
        MPI_Comm own[2];
        char name[MPI_MAX_OBJECT_NAME];
        MPI_Comm_dup(w->parent, &own[0]);
        MPI_Comm_split(w->parent, 0, P - 1 - me, &own[1]); /* ranks reversed */
        for (int i = 0; i < 2; i++) {
            snprintf(name, sizeof name, "t%d.r%d.%s", w->id, r, i == 0 ? "dup" : "split");
            MPI_Comm_set_name(own[i], name);
            exchanges(w, own[i], ((uint64_t)w->id * 16 + (uint64_t)r) * 2 + (uint64_t)i);
            MPI_Comm_free(&own[i]);
        }
    }
    hand_over(w);
    return NULL;
}

/* Splits TEST_SPECS into specs ("-": NULL). */
static void read_specs(void)
{
    static char text[1024];
    const char *env = getenv("TEST_SPECS");
    snprintf(text, sizeof text, "%s", env != NULL ? env : "-,pairwise,tuna,scattered,linear");
    nspecs = 0;
    for (char *save = NULL, *s = strtok_r(text, ",", &save); s != NULL && nspecs < MAX_SPECS;
         s = strtok_r(NULL, ",", &save))
        specs[nspecs++] = strcmp(s, "-") == 0 ? NULL : s;
}

/* FNV-1a of a string. */
static long long hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (long long)(h >> 1);
}

/* After the threads: the answers each gave, against the main thread's
 * (with TEST_ANSWERS_MOVE=1, where the main thread's calls advanced a
 * learner while the threads asked: an algorithm of the collective), and the
 * same on every rank. Returns the failures on this rank. */
static int check_answers(const worker *w, int T)
{
    int failures = 0, topo[3];
    char want[NQ][SPEC_LEN];
    long long h[NQ + 1], lo[NQ + 1], hi[NQ + 1];
    for (int q = 0; q < NQ; q++) {
        if (!ask(q, want[q])) {
            fprintf(stderr, "rank %d: coltune_decision(%s, %lld) failed\n", me, query[q].coll,
                    (long long)query[q].msg_size);
            want[q][0] = '\0';
            failures++;
        }
        h[q] = hash(want[q]);
        for (int t = 0; t < T; t++)
            if ((may_move ? !names_algorithm(query[q].coll, w[t].answer[q])
                          : strcmp(w[t].answer[q], want[q]) != 0) &&
                failures++ < 10)
                fprintf(stderr, "rank %d thread %d: coltune_decision(%s, %lld) said '%s', "
                                "the main thread after it '%s'\n", me, t, query[q].coll,
                        (long long)query[q].msg_size, w[t].answer[q], want[q]);
    }
    coltune_comm_topology(shared, &topo[0], &topo[1], &topo[2]);
    h[NQ] = (long long)topo[0] << 40 | (long long)topo[1] << 20 | topo[2];
    for (int t = 0; t < T; t++)
        if (memcmp(w[t].topo, topo, sizeof topo) != 0 && failures++ < 10)
            fprintf(stderr, "rank %d thread %d: topology P=%d Q=%d N=%d, not P=%d Q=%d N=%d\n",
                    me, t, w[t].topo[0], w[t].topo[1], w[t].topo[2], topo[0], topo[1], topo[2]);
    MPI_Allreduce(h, lo, NQ + 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(h, hi, NQ + 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    for (int q = 0; q <= NQ; q++)
        if (lo[q] != hi[q] && failures++ < 10)
            fprintf(stderr, "rank %d: the ranks disagree on %s\n", me,
                    q < NQ ? query[q].coll : "the topology");
    if (me == 0)
        for (int q = 0; q < NQ; q++)
            printf("# coltune_decision(%s, %lld) = %s\n", query[q].coll,
                   (long long)query[q].msg_size, want[q]);
    return failures;
}

int main(int argc, char **argv)
{
    int provided, failures = 0, all;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    const char *moves = getenv("TEST_ANSWERS_MOVE");
    may_move = moves != NULL && strcmp(moves, "1") == 0;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (me == 0)
            printf("# SKIP: the MPI library does not provide MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 77;
    }
    const int T = argc > 1 ? atoi(argv[1]) : 8;
    rounds = argc > 2 ? atoi(argv[2]) : 2;
    calls = argc > 3 ? atoi(argv[3]) : 6;
    const int shared_calls = argc > 4 ? atoi(argv[4]) : calls;
    const char *s = getenv("TEST_SEED");
    unsigned long long sd = s != NULL ? strtoull(s, NULL, 0) : (unsigned long long)time(NULL);
    MPI_Bcast(&sd, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    seed = sd;
    read_specs();
    worker *w = calloc((size_t)T, sizeof *w);
    pthread_t *tid = calloc((size_t)T, sizeof *tid);
    /* Every communicator a thread uses is made here, in one order on every
     * rank: collective calls on one communicator must not overlap. No
     * coltune call has seen any of them (nor any other communicator). */
    MPI_Comm_dup(MPI_COMM_WORLD, &shared);
    MPI_Comm_set_name(shared, "shared");
    for (int t = 0; t < T; t++) {
        w[t].id = t;
        MPI_Comm_dup(MPI_COMM_WORLD, &w[t].parent);
    }
    pthread_barrier_init(&start, NULL, (unsigned)T);
    pthread_barrier_init(&handoff, NULL, (unsigned)T);
    nthreads = T;
    hands = calloc((size_t)T, sizeof *hands);
    for (int t = 0; t < T; t++)
        pthread_create(&tid[t], NULL, work, &w[t]);
    /* Meanwhile the main thread's collectives on the shared communicator:
     * its first may be the one that makes the context, and their decision
     * cache and shared windows are made while the threads ask. */
    worker main_w = {.id = -1};
    for (int c = 0; c < shared_calls; c++) {
        alltoallv(&main_w, shared, NULL, 1, (uint64_t)c * 2 + 999999);
        alltoall(&main_w, shared, NULL, 1, (uint64_t)c * 2 + 1000000);
    }
    if (main_w.errors || main_w.bad) {
        fprintf(stderr, "rank %d main thread (P=%d, TEST_SEED=%llu): %d failures, %ld wrong "
                        "elements; first: %s\n", me, P, sd, main_w.errors, main_w.bad,
                main_w.first);
        failures++;
    }
    for (int t = 0; t < T; t++) {
        pthread_join(tid[t], NULL);
        if (w[t].errors || w[t].bad) {
            fprintf(stderr, "rank %d thread %d (P=%d, TEST_SEED=%llu): %d failures, %ld wrong "
                            "elements; first: %s\n", me, t, P, sd, w[t].errors, w[t].bad,
                    w[t].first);
            failures++;
        }
        MPI_Comm_free(&w[t].parent);
    }
    pthread_barrier_destroy(&start);
    pthread_barrier_destroy(&handoff);
    free(hands);
    failures += check_answers(w, T);
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("# P=%d: %d threads x %d rounds x 2 communicators, %d specs, %d calls each, "
               "TEST_SEED=%llu: %s\n", P, T, rounds, nspecs, calls, sd,
               all ? "FAILED" : "ok");
    MPI_Comm_free(&shared);
    free(w);
    free(tid);
    MPI_Finalize();
    return all ? 1 : 0;
}
