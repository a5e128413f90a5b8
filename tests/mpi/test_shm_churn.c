/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_shm_churn.c - communicator churn with the shared-memory algorithms
 * chosen: creates, uses and frees thousands of communicators (MPI_Comm_dup,
 * MPI_Comm_split and intercommunicators), each used by the intercepted
 * MPI_Alltoallv, MPI_Alltoall and (intercommunicators) MPI_Allgather, whose
 * results are checked. The shared windows live and die with their
 * communicators: after a warm-up, this process's shared mappings, the files
 * in the job's shared-memory directory and the resident memory must stay
 * flat.
 *
 * Run by tests/mpi/shm.sh with COLTUNE_ALLTOALLV, COLTUNE_ALLTOALL and
 * COLTUNE_ALLGATHER_INTER forcing the algorithms. Arguments: iterations
 * (default 2000), and the directory whose files are counted (default none:
 * a directory only this job uses, such as Open MPI's
 * osc_sm_backing_directory pointed at a fresh one; other jobs' files would
 * make a shared one useless). Exits 0 on success, 1 on a wrong result or
 * growth.
 */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int files_in(const char *dir)
{
    DIR *d = dir != NULL ? opendir(dir) : NULL;
    int n = 0;
    if (d == NULL)
        return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Shared mappings of this process: every window maps one (or several). */
static int shared_mappings(void)
{
    char line[512], perms[8];
    int n = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL)
        n += sscanf(line, "%*s %7s", perms) == 1 && perms[3] == 's';
    fclose(f);
    return n;
}

static long resident_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* The value rank i sends rank j as element k in iteration it. */
static int value(int i, int j, int k, int it) { return ((it * 31 + i) * 1009 + j) * 8 + k; }

/* Alltoallv with counts (i + j + it) % 3 and Alltoall with 2 per block. */
static int use_intra(MPI_Comm comm, int it)
{
    int P, me, bad = 0, sp = 0, rp = 0;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    int *sc = malloc(4 * (size_t)P * sizeof(int)), *sd = sc + P, *rc = sd + P, *rd = rc + P;
    int *sb = malloc(4 * (size_t)P * sizeof(int)), *rb = malloc(4 * (size_t)P * sizeof(int));
    for (int j = 0; j < P; j++) {
        sc[j] = (me + j + it) % 3;
        rc[j] = (j + me + it) % 3;
        sd[j] = sp;
        rd[j] = rp;
        for (int k = 0; k < sc[j]; k++)
            sb[sp + k] = value(me, j, k, it);
        sp += sc[j];
        rp += rc[j];
    }
    MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm);
    for (int i = 0; i < P; i++)
        for (int k = 0; k < rc[i]; k++)
            bad += rb[rd[i] + k] != value(i, me, k, it);
    for (int j = 0; j < P; j++)
        for (int k = 0; k < 2; k++)
            sb[2 * j + k] = value(me, j, k, it + 1);
    MPI_Alltoall(sb, 2, MPI_INT, rb, 2, MPI_INT, comm);
    for (int i = 0; i < P; i++)
        for (int k = 0; k < 2; k++)
            bad += rb[2 * i + k] != value(i, me, k, it + 1);
    free(sc);
    free(sb);
    free(rb);
    return bad;
}

/* Allgather on an intercommunicator: 3 ints from every remote rank. */
static int use_inter(MPI_Comm inter, int it)
{
    int me, Pr, bad = 0, sb[3];
    MPI_Comm_rank(inter, &me);
    MPI_Comm_remote_size(inter, &Pr);
    int *rb = malloc(3 * (size_t)Pr * sizeof(int));
    for (int k = 0; k < 3; k++)
        sb[k] = value(me, 0, k, it);
    MPI_Allgather(sb, 3, MPI_INT, rb, 3, MPI_INT, inter);
    for (int i = 0; i < Pr; i++)
        for (int k = 0; k < 3; k++)
            bad += rb[3 * i + k] != value(i, 0, k, it);
    free(rb);
    return bad;
}

/* Iteration it's communicator: a dup, a split in two, or the
 * intercommunicator between the halves of a split (P >= 2). */
static int one_iteration(int it)
{
    int P, me, bad = 0;
    MPI_Comm c, half, inter;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    switch (P >= 2 ? it % 3 : 0) {
    case 0:
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        bad += use_intra(c, it);
        MPI_Comm_free(&c);
        break;
    case 1:
        MPI_Comm_split(MPI_COMM_WORLD, me % 2, P - me, &c);
        bad += use_intra(c, it);
        MPI_Comm_free(&c);
        break;
    default:
        MPI_Comm_split(MPI_COMM_WORLD, me < P / 2, me, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me < P / 2 ? P / 2 : 0, 77, &inter);
        bad += use_inter(inter, it);
        bad += use_intra(half, it);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
        break;
    }
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int iterations = argc > 1 ? atoi(argv[1]) : 2000;
    const char *dir = argc > 2 ? argv[2] : NULL;
    /* every kind of communicator (it % 3) used twice before measuring */
    const int warmup = iterations / 10 > 6 ? iterations / 10 : 6;
    int me, bad = 0, files0 = 0, files1 = 0, maps0 = 0, maps1 = 0, ok = 1, all_ok;
    long rss0 = 0, rss1 = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int it = 0; it < iterations; it++) {
        if (it == warmup) {
            MPI_Barrier(MPI_COMM_WORLD);
            files0 = files_in(dir);
            maps0 = shared_mappings();
            rss0 = resident_kib();
        }
        bad += one_iteration(it);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    files1 = files_in(dir);
    maps1 = shared_mappings();
    rss1 = resident_kib();
    /* Resident memory may wobble (allocator, library caches) but not grow
     * with the communicators: 0.9 * iterations windows of hundreds of KiB
     * each would be hundreds of MiB. */
    if (bad != 0) {
        fprintf(stderr, "rank %d: %d wrong elements\n", me, bad);
        ok = 0;
    }
    if (maps1 != maps0) {
        fprintf(stderr, "rank %d: %d shared mappings after the warm-up, %d at the end\n", me,
                maps0, maps1);
        ok = 0;
    }
    if (files1 != files0) {
        fprintf(stderr, "rank %d: %s held %d files after the warm-up, %d at the end\n", me, dir,
                files0, files1);
        ok = 0;
    }
#ifdef __SANITIZE_ADDRESS__
    /* AddressSanitizer's quarantine holds freed memory: resident memory
     * grows without a leak. The shared mappings above still count. */
    rss1 = rss0;
#endif
    if (rss1 - rss0 > 16 * 1024) {
        fprintf(stderr, "rank %d: resident memory grew from %ld to %ld KiB\n", me, rss0, rss1);
        ok = 0;
    }
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (me == 0)
        printf("# %d communicators, rank 0: shared mappings %d -> %d, files in %s %d -> %d, "
               "resident %ld -> %ld KiB: %s\n",
               iterations, maps0, maps1, dir ? dir : "(none)", files0, files1, rss0, rss1,
               all_ok ? "ok" : "FAILED");
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
