/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * driver_allgatherv_inter.c - intercommunicator MPI_Allgatherv under
 * coltune_allgatherv_inter(spec, ...), and MPI_Iallgatherv under
 * coltune_iallgatherv_inter.
 *
 * Block sizes per [Kang2019] settings 1-8 (--setting, default 5): S is the
 * block of the largest sender; settings 6 and 8 give every rank its own size
 * (an arithmetic sequence). Receive blocks are packed in the remote group's
 * rank order. The reference of --check is PMPI_Allgatherv on the same
 * intercommunicator and input, into a buffer with the same sentinel.
 */
#include "common_inter.h"

#include <coltune.h>
#include <string.h>

static int validate(const bench_options *o, const bench_env *env, char *err, size_t errlen)
{
    return bench_inter_validate(o, env, 1, err, errlen);
}

static int setup(const bench_options *o, const bench_env *env, long S, void **state, char *err,
                 size_t errlen)
{
    return bench_inter_setup(o, env, S, 1, state, err, errlen);
}

static int start(void *state, const char *spec, MPI_Request *req)
{
    bench_inter *s = state;
    return coltune_iallgatherv_inter(spec, s->sendbuf, s->scount, MPI_BYTE, s->recvbuf,
                                     s->rcounts, s->rdispls, MPI_BYTE, s->comm, req);
}

static int run(void *state, const char *spec)
{
    bench_inter *s = state;
    if (!s->nonblocking)
        return coltune_allgatherv_inter(spec, s->sendbuf, s->scount, MPI_BYTE, s->recvbuf,
                                        s->rcounts, s->rdispls, MPI_BYTE, s->comm);
    return bench_start_wait(start, state, spec);
}

static int check(void *state, const char *spec, bench_mismatch *m)
{
    bench_inter *s = state;
    int rc = MPI_SUCCESS;
    memset(m, 0, sizeof *m);
    if (!s->have_ref) {
        bench_inter_clear(s, 1);
        BENCH_CALL(PMPI_Allgatherv(s->sendbuf, s->scount, MPI_BYTE, s->refbuf, s->rcounts,
                                   s->rdispls, MPI_BYTE, s->comm));
        s->have_ref = 1;
    }
    bench_inter_clear(s, 0);
    rc = run(s, spec);
    if (rc == MPI_SUCCESS)
        bench_inter_compare(s, m);
out:
    return rc;
}

const bench_driver bench_driver_allgatherv_inter = {
    .name = "allgatherv_inter",
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
    return bench_inter_isetup(o, env, S, 1, state, err, errlen);
}

const bench_driver bench_driver_iallgatherv_inter = {
    .name = "iallgatherv_inter",
    .uses = BENCH_USES_GROUPS | BENCH_USES_SETTING,
    .validate = validate,
    .setup = isetup,
    .run = run,
    .start = start,
    .check = check,
    .teardown = bench_inter_teardown,
};
