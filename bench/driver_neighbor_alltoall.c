/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * driver_neighbor_alltoall.c - MPI_Neighbor_alltoall under
 * coltune_neighbor_alltoall(spec, ...), and MPI_Ineighbor_alltoall (or the
 * persistent MPI_Neighbor_alltoall_init) under coltune's, on the
 * distributed graph of --pattern (S bytes per neighbour; common_neighbor.c).
 */
#include "common_neighbor.h"

static int setup(const bench_options *o, const bench_env *env, long S, void **state, char *err,
                 size_t errlen)
{
    return bench_nbr_setup(o, env, S, 0, state, err, errlen);
}

const bench_driver bench_driver_neighbor_alltoall = {
    .name = "neighbor_alltoall",
    .uses = BENCH_USES_PATTERN,
    .setup = setup,
    .run = bench_nbr_run,
    .check = bench_nbr_check,
    .teardown = bench_nbr_teardown,
};

/* The nonblocking form, MPI_Ineighbor_alltoall (persistent with --persistent):
 * started and waited for at once. */
static int setup_nonblocking(const bench_options *o, const bench_env *env, long S, void **state,
                             char *err, size_t errlen)
{
    return bench_nbr_setup_nonblocking(o, env, S, 0, state, err, errlen);
}

const bench_driver bench_driver_ineighbor_alltoall = {
    .name = "ineighbor_alltoall",
    .uses = BENCH_USES_PATTERN | BENCH_USES_PERSISTENT,
    .setup = setup_nonblocking,
    .run = bench_nbr_run,
    .start = bench_nbr_start,
    .check = bench_nbr_check,
    .teardown = bench_nbr_teardown,
};
