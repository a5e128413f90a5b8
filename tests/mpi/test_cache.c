/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cache.c - many communicators kept alive, as multigrid, AMR and
 * pencil codes keep theirs: ncomms duplicates of MPI_COMM_WORLD, each used
 * by the intercepted MPI_Alltoallv and MPI_Alltoall in turn, passes times
 * over all of them, every result checked byte for byte against the MPI
 * library's own (PMPI_) on the same communicator. The memory coltune keeps
 * between calls must stay within its limit (COLTUNE_CACHE, core/cache.h):
 * the resident memory this process gains over the intercepted calls (the
 * reference calls ran on every communicator before) may exceed the limit by
 * slack MiB at most (the allocator's and the MPI library's own; not under a
 * sanitizer, whose shadow memory and quarantine grow with every allocation).
 *
 * Run by tests/mpi/cache.sh with COLTUNE_ALLTOALLV and COLTUNE_ALLTOALL
 * forcing the algorithms. Arguments: ncomms (default 40), passes (default 2),
 * the largest block in bytes (default 1 MiB; the counts are random, zeros
 * included, and the same on every pass), the limit in MiB the growth is
 * held to (default: not checked) and slack MiB (default 32). With
 * TEST_CACHE_FREE_HALFWAY=k, the first k communicators are freed after half
 * the passes, and this process's shared mappings must be more at the end
 * than right after (windows refused before, made once room was given back:
 * Open MPI and MPICH map a segment per window). Exits 0 on success, 1 on a wrong result,
 * growth beyond the limit or no window made.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#else
#define UNDER_SANITIZER 0
#endif

/* Resident memory of this process in KiB (VmRSS), -1 unknown. */
static long resident_kib(void)
{
    char line[256];
    long kib = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
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

/* A deterministic count from 0 to max for block (i -> j) of communicator c:
 * about one block in seven empty. */
static int count_of(int c, int i, int j, int max)
{
    unsigned x = (unsigned)(c * 7919 + i * 131 + j * 31 + 17);
    x ^= x >> 7;
    x *= 2654435761u;
    return x % 7 == 0 ? 0 : (int)((x >> 8) % (unsigned)max) + 1;
}

typedef struct layout {
    int *scount, *sdispl, *rcount, *rdispl;
    size_t sbytes, rbytes;
} layout;

static void make_layout(int c, int P, int me, int max, layout *l)
{
    int s = 0, r = 0;
    for (int j = 0; j < P; j++) {
        l->scount[j] = count_of(c, me, j, max);
        l->rcount[j] = count_of(c, j, me, max);
        l->sdispl[j] = s;
        l->rdispl[j] = r;
        s += l->scount[j];
        r += l->rcount[j];
    }
    l->sbytes = (size_t)s;
    l->rbytes = (size_t)r;
}

static void fill(unsigned char *b, size_t n, int c, int me)
{
    for (size_t k = 0; k < n; k++)
        b[k] = (unsigned char)(k * 13 + (size_t)c * 7 + (size_t)me * 101);
}

int main(int argc, char **argv)
{
    int P, me, bad = 0, errors = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const int ncomms = argc > 1 ? atoi(argv[1]) : 40;
    const int passes = argc > 2 ? atoi(argv[2]) : 2;
    const int max = argc > 3 ? atoi(argv[3]) : 1 << 20;
    const long limit_mib = argc > 4 ? atol(argv[4]) : -1;
    const long slack_mib = argc > 5 ? atol(argv[5]) : 32;
    MPI_Comm *comm = malloc((size_t)ncomms * sizeof *comm);
    int *ints = malloc(4 * (size_t)P * sizeof(int));
    layout l = {ints, ints + P, ints + 2 * P, ints + 3 * P, 0, 0};
    const size_t most = (size_t)P * (size_t)max;
    unsigned char *sb = malloc(most), *rb = malloc(most), *ref = malloc(most);
    if (comm == NULL || ints == NULL || sb == NULL || rb == NULL || ref == NULL)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int c = 0; c < ncomms; c++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comm[c]);
    /* The reference calls first, on every communicator: the MPI library's
     * own memory is then in place before the growth is measured. */
    for (int c = 0; c < ncomms; c++) {
        make_layout(c, P, me, max, &l);
        fill(sb, l.sbytes, c, me);
        PMPI_Alltoallv(sb, l.scount, l.sdispl, MPI_BYTE, ref, l.rcount, l.rdispl, MPI_BYTE,
                       comm[c]);
        PMPI_Alltoall(sb, max / 4, MPI_BYTE, ref, max / 4, MPI_BYTE, comm[c]);
    }
    memset(rb, 0, most);
    memset(ref, 0, most);
    const char *halfway = getenv("TEST_CACHE_FREE_HALFWAY");
    const int nfree = halfway != NULL ? atoi(halfway) : 0;
    int first = 0, mapped_after_free = -1;
    const long before = resident_kib();
    for (int pass = 0; pass < passes; pass++) {
        if (nfree > 0 && pass == passes / 2) {
            for (; first < nfree && first < ncomms; first++)
                MPI_Comm_free(&comm[first]);
            mapped_after_free = shared_mappings();
        }
        for (int c = first; c < ncomms; c++) {
            make_layout(c, P, me, max, &l);
            fill(sb, l.sbytes, c, me);
            PMPI_Alltoallv(sb, l.scount, l.sdispl, MPI_BYTE, ref, l.rcount, l.rdispl,
                           MPI_BYTE, comm[c]);
            memset(rb, 0xee, l.rbytes);
            errors += MPI_Alltoallv(sb, l.scount, l.sdispl, MPI_BYTE, rb, l.rcount, l.rdispl,
                                    MPI_BYTE, comm[c]) != MPI_SUCCESS;
            bad += memcmp(rb, ref, l.rbytes) != 0;
            const int n = (pass + c) % 3 == 0 ? 0 : max / (4 + c % 5); /* an empty call too */
            PMPI_Alltoall(sb, n, MPI_BYTE, ref, n, MPI_BYTE, comm[c]);
            memset(rb, 0xee, (size_t)n * (size_t)P);
            errors += MPI_Alltoall(sb, n, MPI_BYTE, rb, n, MPI_BYTE, comm[c]) != MPI_SUCCESS;
            bad += memcmp(rb, ref, (size_t)n * (size_t)P) != 0;
        }
    }
    const long after = resident_kib();
    const int made_later = mapped_after_free < 0 || shared_mappings() > mapped_after_free;
    long grown = after - before, most_grown;
    MPI_Allreduce(&grown, &most_grown, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (!made_later)
        fprintf(stderr, "rank %d: no window made after communicators were freed (%d shared "
                "mappings before and after)\n", me, mapped_after_free);
    int local_fail = bad != 0 || errors != 0 || !made_later, any_fail;
    MPI_Allreduce(&local_fail, &any_fail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    const int checked = limit_mib >= 0 && !UNDER_SANITIZER;
    const int too_big = checked && most_grown > (limit_mib + slack_mib) * 1024;
    if (me == 0)
        printf("test_cache: P=%d, %d communicators, %d passes, blocks up to %d B: resident "
               "memory grew by %.1f MiB at most over the intercepted calls%s; %s\n",
               P, ncomms, passes, max, most_grown / 1024.0,
               checked            ? " (limit and slack checked)"
               : limit_mib >= 0 ? " (not checked under a sanitizer)"
                                : "",
               any_fail ? "FAILED" : too_big ? "TOO MUCH MEMORY" : "ok");
    if (bad != 0 || errors != 0)
        fprintf(stderr, "rank %d: %d wrong results, %d errors\n", me, bad, errors);
    for (int c = first; c < ncomms; c++)
        MPI_Comm_free(&comm[c]);
    free(comm);
    free(ints);
    free(sb);
    free(rb);
    free(ref);
    MPI_Finalize();
    return any_fail || too_big ? 1 : 0;
}
