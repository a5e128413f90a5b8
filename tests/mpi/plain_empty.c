/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * plain_empty.c - an ordinary MPI program (no coltune in it) whose calls
 * move no byte: tests/mpi/preload.sh runs it under LD_PRELOAD with forced
 * algorithms and reads coltune's statistics, which must count every empty
 * call under pmpi (the MPI library served it at once) and every other call
 * under the forced algorithm.
 *
 * Calls: 4 MPI_Alltoall with empty blocks (count 0; MPI_BYTE, MPI_INT;
 * MPI_IN_PLACE), then 1 with 2 ints a block; on an intercommunicator of the
 * even and odd ranks (P >= 2), 3 MPI_Allgather with empty blocks, then 1
 * with 1 int. Every result is compared with the PMPI_ routine's. Then
 * erroneous empty MPI_Alltoall calls (MPI_DATATYPE_NULL, MPI_COMM_NULL,
 * with MPI_ERRORS_RETURN), which must fail exactly when the PMPI_ routine
 * fails: an empty call that returns at once must not hide an error the MPI
 * library reports. Prints "plain_empty: ok" on rank 0 when all matched.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void expect_same(const char *what, const int *got, const int *want, int n, int me)
{
    if (memcmp(got, want, (size_t)n * sizeof(int)) != 0) {
        fprintf(stderr, "plain_empty: rank %d: %s differs from PMPI_\n", me, what);
        failures++;
    }
}

static void alltoall_calls(int P, int me)
{
    int *s = malloc(2 * P * sizeof(int)), *r = malloc(2 * P * sizeof(int));
    int *want = malloc(2 * P * sizeof(int));
    for (int i = 0; i < 2 * P; i++) {
        s[i] = me * 1000 + i;
        r[i] = want[i] = -1;
    }
    MPI_Alltoall(s, 0, MPI_BYTE, r, 0, MPI_BYTE, MPI_COMM_WORLD);
    MPI_Alltoall(s, 0, MPI_INT, r, 0, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoall(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, 0, MPI_INT, MPI_COMM_WORLD);
    expect_same("empty MPI_Alltoall (receive buffer touched)", r, want, 2 * P, me);
    PMPI_Alltoall(s, 2, MPI_INT, want, 2, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoall(s, 2, MPI_INT, r, 2, MPI_INT, MPI_COMM_WORLD);
    expect_same("MPI_Alltoall", r, want, 2 * P, me);
    free(s);
    free(r);
    free(want);
}

/* An empty call with a null handle: coltune's answer (success or not) must
 * be the MPI library's. */
static void erroneous_calls(int P, int me)
{
    int s[1], r[1];
    MPI_Comm dup;
    (void)P;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    const struct {
        const char *what;
        MPI_Datatype st, rt;
        MPI_Comm comm;
    } c[] = {{"send type MPI_DATATYPE_NULL", MPI_DATATYPE_NULL, MPI_INT, dup},
             {"receive type MPI_DATATYPE_NULL", MPI_INT, MPI_DATATYPE_NULL, dup},
             {"MPI_COMM_NULL", MPI_INT, MPI_INT, MPI_COMM_NULL}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const int want = PMPI_Alltoall(s, 0, c[i].st, r, 0, c[i].rt, c[i].comm) != MPI_SUCCESS;
        const int got = MPI_Alltoall(s, 0, c[i].st, r, 0, c[i].rt, c[i].comm) != MPI_SUCCESS;
        if (got != want) {
            fprintf(stderr, "plain_empty: rank %d: empty MPI_Alltoall with %s %s, PMPI_ %s\n",
                    me, c[i].what, got ? "failed" : "succeeded", want ? "failed" : "succeeded");
            failures++;
        }
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_free(&dup);
}

static void allgather_calls(int P, int me)
{
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
    /* the remote leader: world rank 1 for the evens, 0 for the odds */
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 == 0 ? 1 : 0, 7, &inter);
    int remote;
    MPI_Comm_remote_size(inter, &remote);
    int s = me, *r = malloc(P * sizeof(int)), *want = malloc(P * sizeof(int));
    for (int i = 0; i < P; i++)
        r[i] = want[i] = -1;
    for (int k = 0; k < 3; k++)
        MPI_Allgather(&s, 0, MPI_INT, r, 0, MPI_INT, inter);
    expect_same("empty MPI_Allgather (receive buffer touched)", r, want, P, me);
    PMPI_Allgather(&s, 1, MPI_INT, want, 1, MPI_INT, inter);
    MPI_Allgather(&s, 1, MPI_INT, r, 1, MPI_INT, inter);
    expect_same("MPI_Allgather", r, want, remote, me);
    free(r);
    free(want);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

int main(int argc, char **argv)
{
    int P, me, all;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    alltoall_calls(P, me);
    erroneous_calls(P, me);
    if (P >= 2)
        allgather_calls(P, me);
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0 && all == 0)
        printf("plain_empty: ok\n");
    MPI_Finalize();
    return all != 0;
}
