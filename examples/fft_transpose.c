/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fft_transpose.c - an FFT-style transpose, as an unmodified MPI application
 * would do it (no coltune header, not linked with coltune).
 *
 * The exchange follows the N1 pattern of [Fan2024] (section VI-A): with
 * N1 = ceil(0.78125 P) * ceil(0.625 P) * 8, the ranks below ceil(0.625 P)
 * ("workers") each send 8 * scale doubles to each of the first
 * ceil(0.78125 P) ranks; every other block is empty. That is the irregular
 * all-to-all FFTW performs when the problem size is not a multiple of P^2.
 *
 * usage: fft_transpose [iterations=200] [scale=1]
 * prints the slowest rank's time for all iterations and a checksum (equal
 * for every correct run with the same P, iterations and scale).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int ceil_frac(int P, double f)
{
    int n = (int)(P * f);
    return n < P * f ? n + 1 : n;
}

int main(int argc, char **argv)
{
    int P, me;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int iters = argc > 1 ? atoi(argv[1]) : 200, scale = argc > 2 ? atoi(argv[2]) : 1;
    int workers = ceil_frac(P, 0.625), targets = ceil_frac(P, 0.78125), block = 8 * scale;

    int *sc = calloc(P, sizeof(int)), *sd = calloc(P, sizeof(int));
    int *rc = calloc(P, sizeof(int)), *rd = calloc(P, sizeof(int));
    int ns = 0, nr = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = (me < workers && j < targets) ? block : 0;
        rc[j] = (j < workers && me < targets) ? block : 0;
        sd[j] = ns;
        rd[j] = nr;
        ns += sc[j];
        nr += rc[j];
    }
    double *sb = malloc((ns + 1) * sizeof(double)), *rb = malloc((nr + 1) * sizeof(double));
    for (int i = 0; i < ns; i++)
        sb[i] = me + 0.001 * i;

    double checksum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        MPI_Alltoallv(sb, sc, sd, MPI_DOUBLE, rb, rc, rd, MPI_DOUBLE, MPI_COMM_WORLD);
        for (int i = 0; i < nr; i++) /* stands in for the local FFT */
            checksum += rb[i] * ((i % 7) + 1);
        if (ns > 0)
            sb[it % ns] += 1.0;
    }
    double t = MPI_Wtime() - t0, tmax, total;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&checksum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("fft_transpose: P=%d iterations=%d block=%d doubles time=%.6f s "
               "checksum=%.6f\n", P, iters, block, tmax, total);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(sb);
    free(rb);
    MPI_Finalize();
    return 0;
}
