/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spfft_3d.c - a real third-party library under coltune: SpFFT's distributed
 * 3-D FFT (Debian libspfft-dev), whose exchange between its z-column and
 * slab layouts is one MPI_Alltoallv per transform (SPFFT_EXCH_COMPACT_BUFFERED,
 * its default) or one MPI_Alltoall (SPFFT_EXCH_BUFFERED), chosen when the
 * grid is made, not timed: every run makes the same calls. Plain mpicc, no
 * coltune header; the demo runs it natively and under LD_PRELOAD.
 *
 *   spfft_3d N ITERS [alltoallv|alltoall]
 *
 * A dense N^3 complex grid: the N*N z-columns dealt round-robin over the
 * ranks in frequency space, the z planes in slabs in real space. Each
 * iteration is a backward transform (frequency to space: one exchange) and
 * a forward one with full scaling (space to frequency: one more), which
 * gives the input back. Prints the time of ITERS iterations (max over
 * ranks) and the largest round-trip error, and fails if that exceeds 1e-9.
 */
#include <spfft/spfft.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(SpfftError e, const char *what)
{
    if (e != SPFFT_SUCCESS) {
        fprintf(stderr, "spfft_3d: %s failed (SpFFT error %d)\n", what, (int)e);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (argc < 3 || argc > 4 ||
        (argc == 4 && strcmp(argv[3], "alltoallv") != 0 && strcmp(argv[3], "alltoall") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: spfft_3d N ITERS [alltoallv|alltoall]\n");
        MPI_Finalize();
        return 2;
    }
    const int N = atoi(argv[1]), iters = atoi(argv[2]);
    const int alltoall = argc == 4 && strcmp(argv[3], "alltoall") == 0;

    /* Frequency space: z-columns (x, y) with (x N + y) mod P == rank, whole. */
    int ncols = 0;
    for (int c = rank; c < N * N; c += P)
        ncols++;
    const int nelem = ncols * N;
    int *idx = malloc((size_t)nelem * 3 * sizeof(int));
    double *freq = malloc((size_t)nelem * 2 * sizeof(double));
    double *back = malloc((size_t)nelem * 2 * sizeof(double));
    if (idx == NULL || freq == NULL || back == NULL) {
        fprintf(stderr, "spfft_3d: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int e = 0;
    for (int c = rank; c < N * N; c += P)
        for (int z = 0; z < N; z++, e++) {
            idx[3 * e] = c / N;
            idx[3 * e + 1] = c % N;
            idx[3 * e + 2] = z;
            freq[2 * e] = sin(0.001 * (double)(c * N + z) + 0.5);
            freq[2 * e + 1] = cos(0.002 * (double)(c * N + z));
        }
    /* Real space: slabs of z planes, the first N mod P ranks one plane more. */
    const int zlen = N / P + (rank < N % P);

    SpfftGrid grid;
    SpfftTransform t;
    check(spfft_grid_create_distributed(&grid, N, N, N, ncols, zlen, SPFFT_PU_HOST, 1,
                                        MPI_COMM_WORLD,
                                        alltoall ? SPFFT_EXCH_BUFFERED
                                                 : SPFFT_EXCH_COMPACT_BUFFERED),
          "spfft_grid_create_distributed");
    check(spfft_transform_create(&t, grid, SPFFT_PU_HOST, SPFFT_TRANS_C2C, N, N, N, zlen, nelem,
                                 SPFFT_INDEX_TRIPLETS, idx),
          "spfft_transform_create");

    /* One untimed iteration, then ITERS timed. */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = 0.0;
    for (int it = 0; it <= iters; it++) {
        if (it == 1)
            t0 = MPI_Wtime();
        check(spfft_transform_backward(t, freq, SPFFT_PU_HOST), "spfft_transform_backward");
        check(spfft_transform_forward(t, SPFFT_PU_HOST, back, SPFFT_FULL_SCALING),
              "spfft_transform_forward");
    }
    double mine = MPI_Wtime() - t0, slowest, err = 0.0, worst;
    for (int i = 0; i < 2 * nelem; i++)
        err = fmax(err, fabs(back[i] - freq[i]));
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&err, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("spfft_3d N=%d P=%d %s: %d iterations time=%.4f s max round-trip error %.2e\n",
               N, P, alltoall ? "MPI_Alltoall" : "MPI_Alltoallv", iters, slowest, worst);
    spfft_transform_destroy(t);
    spfft_grid_destroy(grid);
    free(idx);
    free(freq);
    free(back);
    MPI_Bcast(&worst, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst > 1e-9 ? 1 : 0;
}
