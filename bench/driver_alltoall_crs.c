/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * driver_alltoall_crs.c - MPIX_Alltoall_crs ([Geyko2023]) under
 * coltune_alltoall_crs(spec, ...).
 *
 * Every message is S/4 ints (at least 1) to the destinations of --pattern
 * (common_sdde.c). Outputs are caller-allocated with exactly the capacity
 * that arrives (known from setup's reference exchange, not given to coltune
 * as a hint: the call still discovers its senders). --check compares the
 * message count, the sources (sorted) and the data with PMPI_Alltoall of the
 * counts + PMPI_Alltoallv of the data. There is no native MPI call, so
 * speedups are over personalized (Alg. 1 of [Geyko2023]); the table also
 * shows the most inter-node messages a rank sent (the paper's red dots).
 */
#include "common_sdde.h"

#include <coltune.h>
#include <string.h>

static int setup(const bench_options *o, const bench_env *env, long S, void **state, char *err,
                 size_t errlen)
{
    return bench_sdde_setup(o, env, S, 0, state, err, errlen);
}

static int run(void *state, const char *spec)
{
    bench_sdde *s = state;
    s->recv_nnz = s->cap_nnz; /* in: the capacity of src */
    return coltune_alltoall_crs(spec, s->nnz, s->dest, s->sendcount, MPI_INT, s->sendvals,
                                &s->recv_nnz, s->src, s->sendcount, MPI_INT, s->recvvals, NULL,
                                s->comm);
}

static int check(void *state, const char *spec, bench_mismatch *m)
{
    bench_sdde *s = state;
    memset(m, 0, sizeof *m);
    bench_sdde_clear(s);
    int rc = run(s, spec);
    if (rc == MPI_SUCCESS)
        bench_sdde_compare(s, m);
    return rc;
}

const bench_driver bench_driver_alltoall_crs = {
    .name = "alltoall_crs",
    .uses = BENCH_USES_PATTERN,
    .baseline = "personalized",
    .setup = setup,
    .run = run,
    .check = check,
    .teardown = bench_sdde_teardown,
    .internode_msgs = bench_sdde_internode_msgs,
};
