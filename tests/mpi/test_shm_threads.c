/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_shm_threads.c - concurrent collectives on distinct communicators from
 * several threads (MPI_THREAD_MULTIPLE): each thread owns a duplicate of
 * MPI_COMM_WORLD and an intercommunicator, and runs every registered
 * Alltoallv, Alltoall and intercommunicator Allgather algorithm on them,
 * rounds times, checking every result. Contexts, shared windows and the
 * library's one state struct are then used from several threads at once.
 *
 * Run by tests/mpi/shm.sh. Arguments: threads (default 3), rounds (default
 * 4). Exits 77 when the MPI library does not provide MPI_THREAD_MULTIPLE.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coltune.h"

typedef struct worker {
    int id, rounds, bad, errors;
    MPI_Comm intra, inter; /* inter: MPI_COMM_NULL at P = 1 */
} worker;

static int value(int i, int j, int k, int salt) { return ((salt * 31 + i) * 1009 + j) * 8 + k; }

static void check(worker *w, int rc, const char *what, const char *spec)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "thread %d: %s %s returned %d\n", w->id, what, spec, rc);
        w->errors++;
    }
}

static void alltoallv(worker *w, const char *spec, int salt)
{
    int P, me, sp = 0, rp = 0;
    MPI_Comm_size(w->intra, &P);
    MPI_Comm_rank(w->intra, &me);
    int *cnt = malloc(4 * (size_t)P * sizeof(int)), *sd = cnt + P, *rc = sd + P, *rd = rc + P;
    int *sb = malloc(8 * (size_t)P * sizeof(int)), *rb = malloc(8 * (size_t)P * sizeof(int));
    for (int j = 0; j < P; j++) {
        cnt[j] = (me + 2 * j + salt) % 5; /* zeros included */
        rc[j] = (j + 2 * me + salt) % 5;
        sd[j] = sp;
        rd[j] = rp;
        for (int k = 0; k < cnt[j]; k++)
            sb[sp + k] = value(me, j, k, salt);
        sp += cnt[j];
        rp += rc[j];
    }
    check(w, coltune_alltoallv(spec, sb, cnt, sd, MPI_INT, rb, rc, rd, MPI_INT, w->intra),
          "alltoallv", spec);
    for (int i = 0; i < P; i++)
        for (int k = 0; k < rc[i]; k++)
            w->bad += rb[rd[i] + k] != value(i, me, k, salt);
    for (int j = 0; j < P; j++)
        for (int k = 0; k < 3; k++)
            sb[3 * j + k] = value(me, j, k, salt + 1);
    check(w, coltune_alltoall(spec, sb, 3, MPI_INT, rb, 3, MPI_INT, w->intra), "alltoall", spec);
    for (int i = 0; i < P; i++)
        for (int k = 0; k < 3; k++)
            w->bad += rb[3 * i + k] != value(i, me, k, salt + 1);
    free(cnt);
    free(sb);
    free(rb);
}

static void allgather(worker *w, const char *spec, int salt)
{
    int me, Pr, sb[2];
    MPI_Comm_rank(w->inter, &me);
    MPI_Comm_remote_size(w->inter, &Pr);
    int *rb = malloc(2 * (size_t)Pr * sizeof(int));
    sb[0] = value(me, 0, 0, salt);
    sb[1] = value(me, 0, 1, salt);
    check(w, coltune_allgather_inter(spec, sb, 2, MPI_INT, rb, 2, MPI_INT, w->inter),
          "allgather_inter", spec);
    for (int i = 0; i < Pr; i++)
        for (int k = 0; k < 2; k++)
            w->bad += rb[2 * i + k] != value(i, 0, k, salt);
    free(rb);
}

/* Every algorithm at its default parameters, in registry order: the same
 * order on every rank, so each communicator sees one sequence of calls. */
static void *work(void *arg)
{
    worker *w = arg;
    for (int r = 0; r < w->rounds; r++) {
        for (int i = 0; i < coltune_algorithm_count(); i++) {
            const char *coll, *name;
            int np;
            coltune_algorithm_info(i, &coll, &name, &np);
            if (strcmp(coll, "alltoallv") == 0)
                alltoallv(w, name, r * 7 + w->id);
            else if (strcmp(coll, "allgather_inter") == 0 && w->inter != MPI_COMM_NULL)
                allgather(w, name, r * 7 + w->id);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, P, me, failed = 0, all_failed;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (me == 0)
            printf("# SKIP: the MPI library does not provide MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 77;
    }
    const int T = argc > 1 ? atoi(argv[1]) : 3, rounds = argc > 2 ? atoi(argv[2]) : 4;
    worker *w = calloc((size_t)T, sizeof *w);
    pthread_t *tid = calloc((size_t)T, sizeof *tid);
    /* The communicators are made here, one thread: collective calls on one
     * communicator must not run concurrently. */
    for (int t = 0; t < T; t++) {
        w[t].id = t;
        w[t].rounds = rounds;
        MPI_Comm_dup(MPI_COMM_WORLD, &w[t].intra);
        w[t].inter = MPI_COMM_NULL;
        if (P >= 2) {
            MPI_Comm half;
            MPI_Comm_split(MPI_COMM_WORLD, me < P / 2, me, &half);
            MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me < P / 2 ? P / 2 : 0, 100 + t,
                                 &w[t].inter);
            MPI_Comm_free(&half);
        }
    }
    for (int t = 0; t < T; t++)
        pthread_create(&tid[t], NULL, work, &w[t]);
    for (int t = 0; t < T; t++) {
        pthread_join(tid[t], NULL);
        if (w[t].bad || w[t].errors) {
            fprintf(stderr, "rank %d thread %d: %d wrong elements, %d errors\n", me, t, w[t].bad,
                    w[t].errors);
            failed = 1;
        }
        MPI_Comm_free(&w[t].intra);
        if (w[t].inter != MPI_COMM_NULL)
            MPI_Comm_free(&w[t].inter);
    }
    MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0)
        printf("# %d threads x %d rounds, every algorithm: %s\n", T, rounds,
               all_failed ? "FAILED" : "ok");
    free(w);
    free(tid);
    MPI_Finalize();
    return all_failed ? 1 : 0;
}
