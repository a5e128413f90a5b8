/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fftw_3d.c - a real third-party library under coltune: FFTW's MPI 3-D FFT
 * (Debian libfftw3-dev and libfftw3-mpi-dev), whose transposes call
 * MPI_Alltoall. Plain mpicc, no coltune header; the demo runs it natively
 * and under LD_PRELOAD.
 *
 *   fftw_3d N ITERS WISDOM
 *
 * Plans an out-of-place N^3 complex forward FFT on MPI_COMM_WORLD with
 * FFTW_MEASURE | FFTW_DESTROY_INPUT (the planner times its transposes,
 * MPI_Alltoall among them, and keeps the fastest). The plan is stored in the
 * wisdom file WISDOM on the first run and imported on later ones, so the
 * native and the coltune runs execute the same plan. Prints the time of
 * ITERS transforms (max over ranks) and a checksum of the result.
 */
#include <fftw3-mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 4) {
        fprintf(stderr, "usage: fftw_3d N ITERS WISDOM\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const ptrdiff_t N = atol(argv[1]);
    const int iters = atoi(argv[2]);
    int rank, have_wisdom = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fftw_mpi_init();
    if (rank == 0)
        have_wisdom = fftw_import_wisdom_from_filename(argv[3]);
    MPI_Bcast(&have_wisdom, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (have_wisdom)
        fftw_mpi_broadcast_wisdom(MPI_COMM_WORLD);

    ptrdiff_t n0, start0;
    const ptrdiff_t alloc = fftw_mpi_local_size_3d(N, N, N, MPI_COMM_WORLD, &n0, &start0);
    fftw_complex *in = fftw_alloc_complex(alloc), *out = fftw_alloc_complex(alloc);
    const unsigned flags = FFTW_MEASURE | FFTW_DESTROY_INPUT | (have_wisdom ? FFTW_WISDOM_ONLY : 0);
    fftw_plan plan = fftw_mpi_plan_dft_3d(N, N, N, in, out, MPI_COMM_WORLD, FFTW_FORWARD, flags);
    if (plan == NULL) {
        if (rank == 0)
            fprintf(stderr, "fftw_3d: no plan from the wisdom in %s (remove it)\n", argv[3]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (!have_wisdom) {
        fftw_mpi_gather_wisdom(MPI_COMM_WORLD);
        if (rank == 0)
            fftw_export_wisdom_to_filename(argv[3]);
    }

    double t = 0, sum = 0;
    for (int k = 0; k < iters; k++) {
        for (ptrdiff_t i = 0; i < n0 * N * N; i++) { /* the input is destroyed: refill */
            const ptrdiff_t g = start0 * N * N + i;
            in[i][0] = (double)(g % 17) - 8;
            in[i][1] = (double)(g % 5);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        fftw_execute(plan);
        t += MPI_Wtime() - t0;
    }
    for (ptrdiff_t i = 0; i < n0 * N * N; i++)
        sum += fabs(out[i][0]) + fabs(out[i][1]);
    double tmax, total;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("fftw_3d N=%ld: %d transforms time=%.4f s checksum %.6e\n", (long)N, iters, tmax,
               total);
    fftw_destroy_plan(plan);
    fftw_free(in);
    fftw_free(out);
    fftw_mpi_cleanup();
    MPI_Finalize();
    return 0;
}
