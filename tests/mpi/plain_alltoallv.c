/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * plain_alltoallv.c - an ordinary MPI program that knows nothing about
 * coltune (no coltune header, not linked with it). The preload test runs it
 * natively and under LD_PRELOAD=libcoltune.so and compares the output.
 *
 * It exchanges irregular blocks (counts with zeros) with MPI_Alltoallv,
 * repeats with MPI_IN_PLACE, exchanges uniform blocks with MPI_Alltoall (and
 * in place), and prints one checksum line per rank. With the argument "app"
 * it does so on the ranks of its own program only (MPI_APPNUM: one
 * communicator per program of an MPMD launch), and prints its program's
 * number too.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int P, me, app = 0;
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Init(&argc, &argv);
    if (argc > 1 && strcmp(argv[1], "app") == 0) {
        int *appnum, flag;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
        app = flag ? *appnum : 0;
        MPI_Comm_split(MPI_COMM_WORLD, app, 0, &comm);
    }
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    int *sc = malloc(P * sizeof(int)), *sd = malloc(P * sizeof(int));
    int *rc = malloc(P * sizeof(int)), *rd = malloc(P * sizeof(int));
    int ns = 0, nr = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = (3 * me + 5 * j) % 7; /* what me sends to j; zeros included */
        rc[j] = (3 * j + 5 * me) % 7;
        sd[j] = ns;
        rd[j] = nr;
        ns += sc[j];
        nr += rc[j];
    }
    double *sb = malloc((ns + 1) * sizeof(double)), *rb = malloc((nr + 1) * sizeof(double));
    for (int i = 0; i < ns; i++)
        sb[i] = me + i / 1000.0;
    double sum = 0;
    for (int iter = 0; iter < 3; iter++) {
        MPI_Alltoallv(sb, sc, sd, MPI_DOUBLE, rb, rc, rd, MPI_DOUBLE, comm);
        for (int i = 0; i < nr; i++)
            sum += rb[i] * (i + 1) * (iter + 1);
    }
    /* In place: symmetric counts (me sends to j what j sends to me). */
    for (int j = 0; j < P; j++)
        rc[j] = (me + j) % 4;
    nr = 0;
    for (int j = 0; j < P; j++) {
        rd[j] = nr;
        nr += rc[j];
    }
    double *ib = malloc((nr + 1) * sizeof(double));
    for (int i = 0; i < nr; i++)
        ib[i] = me * 10 + i;
    MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, ib, rc, rd, MPI_DOUBLE, comm);
    for (int i = 0; i < nr; i++)
        sum += ib[i] * (i + 7);
    /* Uniform blocks of 3 doubles, then the same in place. */
    double *ua = malloc(3 * P * sizeof(double)), *ub = malloc(3 * P * sizeof(double));
    for (int i = 0; i < 3 * P; i++)
        ua[i] = me * 100 + i;
    MPI_Alltoall(ua, 3, MPI_DOUBLE, ub, 3, MPI_DOUBLE, comm);
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ua, 3, MPI_DOUBLE, comm);
    double usum = 0;
    for (int i = 0; i < 3 * P; i++)
        usum += (ub[i] + 2 * ua[i]) * (i + 1);
    char program[32] = ""; /* one printf a line: the launcher forwards each whole */
    if (comm != MPI_COMM_WORLD)
        snprintf(program, sizeof program, "program %d ", app);
    printf("%srank %d checksum %.6f alltoall %.6f\n", program, me, sum, usum);
    free(ua);
    free(ub);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(sb);
    free(rb);
    free(ib);
    if (comm != MPI_COMM_WORLD)
        MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
