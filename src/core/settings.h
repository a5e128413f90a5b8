/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * settings.h - the COLTUNE_* variables that are plain values, as core, the
 * algorithms and the drivers read them (ct_settings_get(), core/state.h).
 * select/config.c reads them, with the rules file and the forcing
 * variables, once at initialisation; they are immutable afterwards.
 */
#ifndef CT_SETTINGS_H
#define CT_SETTINGS_H

#include "core/ct_common.h"

typedef enum ct_fallback {
    CT_FALLBACK_PRINT = 0, /* one warning per distinct reason, run pmpi */
    CT_FALLBACK_SILENT,    /* run pmpi quietly */
    CT_FALLBACK_ERROR      /* the call returns an MPI error */
} ct_fallback;

typedef struct ct_settings {
    int disabled; /* COLTUNE_DISABLE=1: forward everything */
    int verbose;  /* COLTUNE_VERBOSE: 0, 1 (each distinct decision), 2 (every call) */
    int stats;    /* COLTUNE_STATS=1: table at MPI_Finalize */
    int device_always; /* COLTUNE_DEVICE=always: every communicator agrees on
                          device memory, GPU runtime loaded or not; auto (0):
                          those where some rank had one when the context was
                          made (ctx->device_agree, select/decide.h) */
    ct_fallback fallback;
    int ppn;        /* COLTUNE_PPN=n: emulated ranks per node, 0 = real topology */
    int ppn_cyclic; /* COLTUNE_PPN=n:cyclic: ranks dealt round-robin over the nodes */
    size_t shm_window; /* COLTUNE_SHM_WINDOW: data bytes per rank per half of the
                          Alltoall(v) shared windows (core/shm_stream.h) */
    /* COLTUNE_CACHE: what coltune may keep between calls, process-wide
     * (core/cache.h): cache bytes, or cache_auto (the default) for the larger
     * of CT_CACHE_FLOOR and twice the largest need of one call seen. */
    size_t cache;
    int cache_auto;
    int test_shm_fail; /* COLTUNE_TEST_SHM_FAIL=r: rank r of every communicator
                          cannot use a shared window (tests only); -1 none */
    int test_sdde_piece; /* COLTUNE_TEST_SDDE_PIECE=b: the locality-aware sparse
                            exchanges cut aggregates into pieces of at most b
                            bytes (tests only); 0 none */
    int test_tags; /* COLTUNE_TEST_TAGS=n: a communicator's nonblocking calls
                      count their tags modulo n, and so do its persistent
                      calls, not modulo CT_TAG_NBC_SPAN and
                      CT_TAG_PERSISTENT_SPAN (tests only); 0 none */
    /* Online tuning (select/adapt.h). */
    int adapt;         /* COLTUNE_ADAPT=1: every collective no variable forces learns */
    int adapt_calls;   /* COLTUNE_ADAPT_CALLS: calls a learner's rounds may take */
    int adapt_share;   /* COLTUNE_ADAPT_SHARE: percent of the collective's time its
                          rounds may take while learning (100: no pacing) */
    int adapt_recheck; /* COLTUNE_ADAPT_RECHECK: calls after a decision before it is
                          re-checked (doubling while it holds); 0 never */
    int test_adapt_delay; /* COLTUNE_TEST_ADAPT_DELAY=us: the last rank sleeps up to
                             us microseconds in each timed call (tests only) */
    int test_adapt_phase; /* COLTUNE_TEST_ADAPT_PHASE=n: timed calls of pmpi are slow
                             before a learner's call n, those of the others from it
                             on (tests only); 0 none */
} ct_settings;

/* Defaults of the online tuning's budget (coltune(7), Online tuning). The
 * share is of the learner's own collective's time, as it measures it; what
 * its rounds cost the run is more: a slow candidate also delays the ranks'
 * calls on the other communicators (16 ranks on 2 cores, pencil_fft's
 * learners at 5%: runs of 5000 iterations 3% slower than with the rules
 * alone, 1.4% at 20000; at 2%, 1.6% and 0.7%, their first round waiting for
 * 8192 iterations; timed in blocks of 5000 iterations, some 4% slower while
 * they explore, twice the share, and as fast once they have decided). */
#define CT_ADAPT_CALLS_DEFAULT 2000
#define CT_ADAPT_SHARE_DEFAULT 2
#define CT_ADAPT_RECHECK_DEFAULT 20000

/* Default of COLTUNE_SHM_WINDOW, and its bounds. */
#define CT_SHM_WINDOW_DEFAULT ((size_t)256 << 10)
#define CT_SHM_WINDOW_MIN ((size_t)64)
#define CT_SHM_WINDOW_MAX ((size_t)1 << 30)

/* COLTUNE_CACHE=auto: at least this much, and twice the largest need of
 * one call (core/cache.h). */
#define CT_CACHE_FLOOR ((size_t)64 << 20)

#endif
