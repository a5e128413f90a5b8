/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * driver_allgather_inter.c - intercommunicator MPI_Allgather under
 * coltune_allgather_inter(spec, ...), and MPI_Iallgather under
 * coltune_iallgather_inter.
 *
 * Every rank of group A sends the same number of bytes, every rank of B too
 * ([Kang2019] settings 1-4, --setting; common_inter.c builds the
 * intercommunicator from --group-sizes and the buffers). The reference of
 * --check is PMPI_Allgather on the same intercommunicator and input, into a
 * buffer of the same size with the same sentinel after the blocks.
 */
#include "common_inter.h"

#include <coltune.h>
#include <string.h>

static int validate(const bench_options *o, const bench_env *env, char *err, size_t errlen)
{
    return bench_inter_validate(o, env, 0, err, errlen);
}

static int setup(const bench_options *o, const bench_env *env, long S, void **state, char *err,
                 size_t errlen)
{
    return bench_inter_setup(o, env, S, 0, state, err, errlen);
}

/* Every remote block has the same size: rcounts[0]. */
static int start(void *state, const char *spec, MPI_Request *req)
{
    bench_inter *s = state;
    return coltune_iallgather_inter(spec, s->sendbuf, s->scount, MPI_BYTE, s->recvbuf,
                                    s->rcounts[0], MPI_BYTE, s->comm, req);
}

static int run(void *state, const char *spec)
{
    bench_inter *s = state;
    if (!s->nonblocking)
        return coltune_allgather_inter(spec, s->sendbuf, s->scount, MPI_BYTE, s->recvbuf,
                                       s->rcounts[0], MPI_BYTE, s->comm);
    return bench_start_wait(start, state, spec);
}

static int check(void *state, const char *spec, bench_mismatch *m)
{
    bench_inter *s = state;
    int rc = MPI_SUCCESS;
    memset(m, 0, sizeof *m);
    if (!s->have_ref) {
        bench_inter_clear(s, 1);
        BENCH_CALL(PMPI_Allgather(s->sendbuf, s->scount, MPI_BYTE, s->refbuf, s->rcounts[0],
                                  MPI_BYTE, s->comm));
        s->have_ref = 1;
    }
    bench_inter_clear(s, 0);
    rc = run(s, spec);
    if (rc == MPI_SUCCESS)
        bench_inter_compare(s, m);
out:
    return rc;
}

const bench_driver bench_driver_allgather_inter = {
    .name = "allgather_inter",
    .uses = BENCH_USES_GROUPS | BENCH_USES_SETTING,
    .validate = validate,
    .setup = setup,
    .run = run,
    .check = check,
    .teardown = bench_inter_teardown,
};

/* The nonblocking form: the same calls, started and waited for at once (the
 * time of the exchange alone, without overlap). */
static int isetup(const bench_options *o, const bench_env *env, long S, void **state,
                  char *err, size_t errlen)
{
    return bench_inter_isetup(o, env, S, 0, state, err, errlen);
}

const bench_driver bench_driver_iallgather_inter = {
    .name = "iallgather_inter",
    .uses = BENCH_USES_GROUPS | BENCH_USES_SETTING,
    .validate = validate,
    .setup = isetup,
    .run = run,
    .start = start,
    .check = check,
    .teardown = bench_inter_teardown,
};
