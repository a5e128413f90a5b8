/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pkgconfig_app.c - a program of an application developer who links coltune's
 * direct API: tests/mpi/install.sh builds it from the installed tree with a
 * plain C compiler and `pkg-config --cflags --libs coltune` only, and runs it
 * under mpirun. It checks its own results (exit 1 on any difference):
 *   - coltune_alltoallv with "tuna:radix=2" against the known pattern;
 *   - MPIX_Alltoall_crs: each rank sends one int to its two ring neighbours.
 */
#include <coltune.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Block j -> r holds 1 + (j + r) % 3 ints of value 1000 * j + r. */
static int count_of(int from, int to) { return 1 + (from + to) % 3; }

static int check_alltoallv(int P, int me)
{
    int *sc = malloc(P * sizeof(int)), *sd = malloc(P * sizeof(int));
    int *rc = malloc(P * sizeof(int)), *rd = malloc(P * sizeof(int));
    int ns = 0, nr = 0, bad = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = count_of(me, j);
        rc[j] = count_of(j, me);
        sd[j] = ns;
        rd[j] = nr;
        ns += sc[j];
        nr += rc[j];
    }
    int *sb = malloc(ns * sizeof(int)), *rb = malloc(nr * sizeof(int));
    for (int j = 0; j < P; j++)
        for (int k = 0; k < sc[j]; k++)
            sb[sd[j] + k] = 1000 * me + j;
    int err = coltune_alltoallv("tuna:radix=2", sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT,
                                MPI_COMM_WORLD);
    for (int j = 0; j < P && err == MPI_SUCCESS; j++)
        for (int k = 0; k < rc[j]; k++)
            bad += rb[rd[j] + k] != 1000 * j + me;
    free(sc), free(sd), free(rc), free(rd), free(sb), free(rb);
    return err != MPI_SUCCESS || bad != 0;
}

static int check_crs(int P, int me)
{
    MPIX_Comm *xcomm;
    int dest[2] = {(me + 1) % P, (me + P - 1) % P}, vals[2] = {me, me};
    int src[2], recv[2], nnz = 2, bad = 0; /* nnz: room in src and recv */
    int n = P > 2 ? 2 : P - 1; /* one neighbour at P = 2, none at P = 1 */
    if (MPIX_Comm_init(&xcomm, MPI_COMM_WORLD) != MPI_SUCCESS)
        return 1;
    int err = MPIX_Alltoall_crs(n, dest, 1, MPI_INT, vals, &nnz, src, 1, MPI_INT, recv, NULL,
                                xcomm);
    bad += err != MPI_SUCCESS || nnz != n;
    for (int i = 0; i < nnz && i < 2; i++)
        bad += recv[i] != src[i] || (src[i] != dest[0] && src[i] != dest[1]);
    MPIX_Comm_free(&xcomm);
    return bad != 0;
}

int main(int argc, char **argv)
{
    int P, me, bad, any;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    bad = coltune_algorithm_count() <= 0;
    bad |= check_alltoallv(P, me) << 1;
    bad |= check_crs(P, me) << 2;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD);
    if (me == 0)
        printf("pkgconfig_app: coltune %s, P=%d: %s (%d)\n", COLTUNE_VERSION, P,
               any ? "WRONG" : "ok", any);
    MPI_Finalize();
    return any != 0;
}
