/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_topology.c - coltune_comm_topology against the hosts the ranks really
 * run on: N is the number of distinct host names of the communicator's ranks
 * and Q the most ranks on one host, for MPI_COMM_WORLD and for splits of it:
 * every other rank, and thirds in reverse order (ranks not in world order).
 * Run by tests/mpi/cluster.sh on emulated hosts (coltune-cluster), without
 * COLTUNE_PPN, with any placement, and by tests/mpi/shm.sh on this host.
 * The first context, MPI_COMM_WORLD's, teaches each process its node; the
 * splits' contexts gather what the processes learnt. With the argument
 * "spawn", MPI_COMM_WORLD's rank 0 also starts two more processes
 * (MPI_Comm_spawn), a second world whose processes learn their nodes from
 * their own MPI_COMM_WORLD, and the check runs on both worlds merged, whose
 * nodes cannot be compared (the worlds' names differ): that context asks
 * the MPI library.
 * Prints "# topology P=.. Q=.. N=.." for the script; exits 1 on a mismatch.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coltune.h"

/* Distinct host names among comm's ranks, and the most ranks on one. */
static void hosts_of(MPI_Comm comm, int *Q, int *N)
{
    int P, len;
    char me[MPI_MAX_PROCESSOR_NAME] = {0};
    MPI_Comm_size(comm, &P);
    MPI_Get_processor_name(me, &len);
    char *all = calloc((size_t)P, MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  comm);
    *Q = 0;
    *N = 0;
    for (int i = 0; i < P; i++) {
        const char *h = all + (size_t)i * MPI_MAX_PROCESSOR_NAME;
        int first = 1, on_h = 0;
        for (int j = 0; j < P; j++) {
            const int same = strcmp(h, all + (size_t)j * MPI_MAX_PROCESSOR_NAME) == 0;
            on_h += same;
            first &= !(same && j < i);
        }
        *N += first;
        *Q = on_h > *Q ? on_h : *Q;
    }
    free(all);
}

static int check(MPI_Comm comm, const char *what)
{
    int P, Q, N, wantQ, wantN, rank;
    MPI_Comm_rank(comm, &rank);
    hosts_of(comm, &wantQ, &wantN);
    if (coltune_comm_topology(comm, &P, &Q, &N) != MPI_SUCCESS) {
        fprintf(stderr, "%s: coltune_comm_topology failed\n", what);
        return 0;
    }
    if (Q != wantQ || N != wantN) {
        fprintf(stderr, "%s rank %d: coltune_comm_topology says Q=%d N=%d, the hosts Q=%d N=%d\n",
                what, rank, Q, N, wantQ, wantN);
        return 0;
    }
    if (rank == 0)
        printf("# topology %s P=%d Q=%d N=%d\n", what, P, Q, N);
    return 1;
}

/* One intercepted Alltoallv on comm, checked, for the decision log. */
static int alltoallv_once(MPI_Comm comm)
{
    int size, rank, ok = 1;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    int *buf = calloc(4 * (size_t)size, sizeof(int)), *cnt = buf + 2 * size, *dsp = cnt + size;
    for (int j = 0; j < size; j++) {
        cnt[j] = 1;
        dsp[j] = j;
        buf[j] = rank;
    }
    MPI_Alltoallv(buf, cnt, dsp, MPI_INT, buf + size, cnt, dsp, MPI_INT, comm);
    for (int j = 0; j < size; j++)
        ok &= buf[size + j] == j;
    free(buf);
    return ok;
}

/* The spawned processes and their parents, merged (parents first). */
static int spawned_worlds(MPI_Comm parent, const char *self)
{
    MPI_Comm inter, merged;
    int ok = 1, all_ok;
    char *argv[] = {"spawn", NULL};
    if (parent == MPI_COMM_NULL) {
        MPI_Comm_spawn(self, argv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       MPI_ERRCODES_IGNORE);
    } else {
        /* The spawned world's first context: its processes learn their
         * nodes too, so that only the worlds' names tell the two apart. */
        ok = check(MPI_COMM_WORLD, "spawned world");
        inter = parent;
    }
    MPI_Intercomm_merge(inter, parent != MPI_COMM_NULL, &merged);
    ok &= check(merged, "spawned");
    ok &= alltoallv_once(merged);
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, merged);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&inter);
    return all_ok;
}

int main(int argc, char **argv)
{
    int rank, ok, all_ok;
    MPI_Comm half, third, parent;
    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) { /* a spawned process */
        ok = spawned_worlds(parent, argv[0]);
        MPI_Finalize();
        return ok ? 0 : 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    ok = check(MPI_COMM_WORLD, "world");
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    ok &= check(half, rank % 2 ? "odd" : "even");
    MPI_Comm_free(&half);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 3, -rank, &third);
    ok &= check(third, "third");
    ok &= alltoallv_once(third);
    MPI_Comm_free(&third);
    ok &= alltoallv_once(MPI_COMM_WORLD);
    if (argc > 1 && strcmp(argv[1], "spawn") == 0)
        ok &= spawned_worlds(MPI_COMM_NULL, argv[0]);
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
