/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * driver_alltoallv_crs.c - MPIX_Alltoallv_crs ([Geyko2023]) under
 * coltune_alltoallv_crs(spec, ...).
 *
 * Messages of 1..S/4 ints, drawn per message, to the destinations of
 * --pattern (common_sdde.c), packed in sendvals. Outputs are caller-allocated
 * with exactly the message count and size that arrive (known from setup's
 * reference exchange, not given to coltune as hints). --check compares the
 * count, sources, recvcounts, rdispls, recv_size and data with PMPI_Alltoall
 * of the counts + PMPI_Alltoallv of the data, sorted by source. Speedups are
 * over personalized (Alg. 1 of [Geyko2023]); the table also shows the most
 * inter-node messages a rank sent.
 */
#include "common_sdde.h"

#include <coltune.h>
#include <string.h>

static int setup(const bench_options *o, const bench_env *env, long S, void **state, char *err,
                 size_t errlen)
{
    return bench_sdde_setup(o, env, S, 1, state, err, errlen);
}

static int run(void *state, const char *spec)
{
    bench_sdde *s = state;
    s->recv_nnz = s->cap_nnz;   /* in: capacity of src, recvcounts, rdispls */
    s->recv_size = s->cap_size; /* in: capacity of recvvals */
    return coltune_alltoallv_crs(spec, s->nnz, s->send_size, s->dest, s->scounts, s->sdispls,
                                 MPI_INT, s->sendvals, &s->recv_nnz, &s->recv_size, s->src,
                                 s->rcounts, s->rdispls, MPI_INT, s->recvvals, NULL, s->comm);
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

const bench_driver bench_driver_alltoallv_crs = {
    .name = "alltoallv_crs",
    .uses = BENCH_USES_PATTERN,
    .baseline = "personalized",
    .setup = setup,
    .run = run,
    .check = check,
    .teardown = bench_sdde_teardown,
    .internode_msgs = bench_sdde_internode_msgs,
};
