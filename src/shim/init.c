/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * init.c - MPI_Init, MPI_Init_thread and MPI_Finalize: read the configuration
 * once, report its errors once (rank 0 of MPI_COMM_WORLD), print statistics
 * and release coltune's state at the end.
 */
#include "core/context.h"
#include "core/device.h"
#include "core/log.h"
#include "core/request.h"
#include "core/state.h"
#include "select/adapt.h"
#include "select/config.h"
#include "shim/shim.h"
#include "stats.h"

/* ------------------------------------------------------------------ */
/* The library's state: read once, released at the end                 */
/* ------------------------------------------------------------------ */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void read_config(void)
{
    ct_state *st = ct_state_get();
    ct_config *cfg = ct_config_global();
    ct_config_read(cfg, NULL);
    st->settings = &cfg->set;
    ct_stats_init(ct_algorithm_count());
    st->init_done = 1;
}

/* Reads the configuration once (thread safe); report_rank is the caller's rank
 * in a communicator all processes share (errors are printed by rank 0). */
static void state_init(int report_rank)
{
    ct_state *st = ct_state_get();
    pthread_once(&init_once, read_config);
    ct_state_lock(st);
    /* Errors in the configuration are reported once, by one rank: the first
     * caller that knows its rank decides (rank 0 prints, the others stay quiet). */
    int report = !st->errors_reported && report_rank == 0;
    if (report_rank >= 0)
        st->errors_reported = 1;
    ct_state_unlock(st);
    if (report)
        ct_config_report(ct_cfg());
}


/* CT_NO_INTERCEPT (the SimGrid SMPI build, smpi/): no MPI_* symbol is
 * defined, only what the rest of coltune calls (ct_shim_*, the pmpi
 * forwarders); coltune then initialises lazily on its first call. */
#ifndef CT_NO_INTERCEPT
/* Releases the configuration, statistics and the message set (after
 * PMPI_Finalize; the keyval is freed before it). */
static void state_free(void)
{
    ct_config_free(ct_config_global());
    ct_adapt_free();
    ct_stats_free();
    ct_device_release();
    ct_state_free();
}

static void after_init(void)
{
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    ct_log_set_rank(rank);
    ct_state_get()->mpi_init_seen = 1;
    state_init(rank);
    if (ct_settings_get()->verbose && rank == 0)
        ct_log("%s", ct_shim_fortran_note());
}

int ct_shim_init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        after_init();
    return rc;
}

int ct_shim_init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        after_init();
    return rc;
}

int ct_shim_finalize(void)
{
    ct_state *st = ct_state_get();
    if (st->init_done) {
        const ct_config *cfg = ct_cfg();
        if ((cfg->set.stats || cfg->adapt_out != NULL) && st->mpi_init_seen)
            ct_adapt_finish(MPI_COMM_WORLD, cfg->adapt_out, cfg->set.stats);
        if (cfg->set.stats && st->mpi_init_seen)
            ct_stats_report(MPI_COMM_WORLD);
        st->finalizing = 1;
        ct_outstanding_complete_all();
        ct_ctx_release_predefined();
        ct_ctx_keyval_free();
        ct_request_handles_free();
    }
    int rc = PMPI_Finalize();
    state_free();
    return rc;
}

CT_EXPORT int MPI_Init(int *argc, char ***argv) { return ct_shim_init(argc, argv); }

CT_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    return ct_shim_init_thread(argc, argv, required, provided);
}

CT_EXPORT int MPI_Finalize(void) { return ct_shim_finalize(); }
#endif /* CT_NO_INTERCEPT */

int ct_shim_active(MPI_Comm comm)
{
    ct_state *st = ct_state_get();
    if (comm == MPI_COMM_NULL || st->finalizing)
        return 0;
    if (!st->init_done) {
        /* Lazy initialisation: the rank in this communicator decides who
         * reports configuration errors. */
        int rank = -1;
        if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
            rank = -1;
        state_init(rank);
    }
    return !ct_settings_get()->disabled;
}

int ct_shim_serves_kind(MPI_Comm comm, int inter_wanted)
{
    int inter = 0;
    return ct_shim_active(comm) && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS &&
           inter == inter_wanted;
}

int ct_shim_serves_intra(MPI_Comm comm, ct_coll coll)
{
    if (ct_ctx_forwards(comm, coll))
        return 0; /* the pass-through: nothing else to look up */
    return ct_shim_serves_kind(comm, 0);
}

/* The user's error handler of comm, as the MPI library's own routine would
 * invoke it. MPI_ERRORS_RETURN does nothing, so it is not called: SimGrid's
 * SMPI (3.32) crashes calling it. */
int ct_shim_return(MPI_Comm comm, int rc)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    if (rc == MPI_SUCCESS || comm == MPI_COMM_NULL)
        return rc;
    if (PMPI_Comm_get_errhandler(comm, &eh) != MPI_SUCCESS || eh != MPI_ERRORS_RETURN)
        PMPI_Comm_call_errhandler(comm, rc);
    if (eh != MPI_ERRHANDLER_NULL)
        PMPI_Errhandler_free(&eh); /* the reference get_errhandler returned */
    return rc;
}
