/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_isolation.c - coltune never disturbs the user's traffic.
 *
 * Rank 0 keeps an MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) pending on the
 * user's communicator while every algorithm runs a collective on that same
 * communicator; had any internal message travelled on it, the wildcard
 * receive would have taken it. Afterwards the user's own message must arrive
 * intact in that receive, and every collective result must be right.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coltune.h"
#include "harness.h"

enum { USER_TAG = 77, USER_VALUE = 424242 };

/* One Alltoallv through spec (NULL: the intercepted MPI_Alltoallv), checked
 * against PMPI_Alltoallv. Returns 1 when right on every rank. */
static int checked_alltoallv(const char *spec, int round)
{
    const int P = th_size(), me = th_rank();
    int *sc = malloc(P * sizeof(int)), *sd = malloc(P * sizeof(int));
    int *rcnt = malloc(P * sizeof(int)), *rd = malloc(P * sizeof(int));
    int ns = 0, nr = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = (me + j + round) % 4;
        rcnt[j] = (j + me + round) % 4;
        sd[j] = ns;
        rd[j] = nr;
        ns += sc[j];
        nr += rcnt[j];
    }
    int *sb = malloc((ns + 1) * sizeof(int)), *got = calloc(nr + 1, sizeof(int));
    int *want = calloc(nr + 1, sizeof(int));
    for (int i = 0; i < ns; i++)
        sb[i] = me * 100000 + round * 1000 + i;
    PMPI_Alltoallv(sb, sc, sd, MPI_INT, want, rcnt, rd, MPI_INT, MPI_COMM_WORLD);
    int rc = spec ? coltune_alltoallv(spec, sb, sc, sd, MPI_INT, got, rcnt, rd, MPI_INT,
                                      MPI_COMM_WORLD)
                  : MPI_Alltoallv(sb, sc, sd, MPI_INT, got, rcnt, rd, MPI_INT, MPI_COMM_WORLD);
    char what[200];
    snprintf(what, sizeof what, "isolation: %s, P=%d", spec ? spec : "MPI_Alltoallv", P);
    int ok = rc == MPI_SUCCESS && th_same_bytes(got, want, nr * sizeof(int), what);
    free(sc);
    free(sd);
    free(rcnt);
    free(rd);
    free(sb);
    free(got);
    free(want);
    return th_all(ok, MPI_COMM_WORLD);
}

static void test_wildcard_receive_survives(void **state)
{
    (void)state;
    const int P = th_size(), me = th_rank();
    char **specs;
    int nspecs = th_world_specs("alltoallv", &specs), bad = 0;
    for (int k = 0; k <= nspecs; k++) {
        const char *spec = k < nspecs ? specs[k] : NULL; /* last: the shim path */
        int value = -1;
        MPI_Request req = MPI_REQUEST_NULL;
        MPI_Status st;
        if (me == 0)
            MPI_Irecv(&value, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
        int ok = checked_alltoallv(spec, k);
        /* The pending receive must not have matched anything yet. */
        int flag = 0;
        if (me == 0) {
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
            if (flag)
                fprintf(stderr, "isolation: %s: the user's wildcard receive matched an "
                                "internal message (value %d)\n", spec ? spec : "shim", value);
        }
        ok = th_all(ok && !flag, MPI_COMM_WORLD);
        if (me == P - 1) {
            int v = USER_VALUE + k;
            MPI_Send(&v, 1, MPI_INT, 0, USER_TAG, MPI_COMM_WORLD);
        }
        if (me == 0) {
            if (!flag)
                MPI_Wait(&req, &st);
            int got_it = flag == 0 && value == USER_VALUE + k && st.MPI_SOURCE == P - 1 &&
                         st.MPI_TAG == USER_TAG;
            if (!got_it)
                fprintf(stderr, "isolation: %s: user message wrong (value %d)\n",
                        spec ? spec : "shim", value);
            ok = ok && got_it;
        }
        bad += !th_all(ok, MPI_COMM_WORLD);
    }
    th_specs_free(specs, nspecs);
    assert_int_equal(bad, 0);
}

int main(int argc, char **argv)
{
    th_init(&argc, &argv);
    struct CMUnitTest tests[] = {cmocka_unit_test(test_wildcard_receive_survives)};
    int failed = th_run("isolation", tests, 1);
    MPI_Finalize();
    return failed ? 1 : 0;
}
