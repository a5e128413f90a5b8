#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# coltune's lazily made state under MPI_THREAD_MULTIPLE (test_threads.c):
# 8 threads per process, each on communicators of its own and all asking
# coltune_decision about one shared communicator whose first use they race
# for (made once per process: one context in the COLTUNE_VERBOSE=2 log, and
# every context's number distinct), while the main thread runs collectives
# on it; under the default decision, shm and node_aware (COLTUNE_PPN=2),
# tuna and tuna_hier, a rules file with COLTUNE_VERBOSE=1 and COLTUNE_STATS=1,
# and COLTUNE_ADAPT=1; each thread's MPI_Ialltoallv requests are completed by
# another thread. Every result is checked element by element.
# The same script runs the ThreadSanitizer build (configure --enable-tsan,
# scripts/check-all.sh): TSAN_OPTIONS below make a report fail the run; the
# MPI library is not instrumented, so what happens inside it is not checked
# (ignore_noninstrumented_modules, tests/mpi/tsan.supp), coltune's own code is.
#   CT_TEST_THREADS  threads per process (default 8)
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
prog="$top_builddir/tests/mpi/test_threads"
need_progs "$prog"
T=${CT_TEST_THREADS:-8}
: "${TSAN_OPTIONS=halt_on_error=0 exitcode=66 ignore_noninstrumented_modules=1 suppressions=$top_srcdir/tests/mpi/tsan.supp}"
export TSAN_OPTIONS
tmp=$(mktemp -d /tmp/coltune-threads.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

# The run exits 77 where the MPI library has no MPI_THREAD_MULTIPLE.
probe() {
    run_mpi 1 "$prog" 1 1 1 > "$tmp/probe" 2>&1
    rc=$?
    [ $rc = 77 ] && { sed -n 's/^# SKIP: /SKIP: /p' "$tmp/probe"; exit 77; }
    [ $rc = 0 ] || { cat "$tmp/probe"; echo "--- FAILED: P=1 probe"; exit 1; }
}
probe

# One context for the shared communicator however many threads reach its
# first use, and no two contexts of a process with one number.
once() {
    with_env COLTUNE_VERBOSE=2 -- run_mpi "$1" "$prog" "$T" 2 4 > "$tmp/once" 2>&1 ||
        { cat "$tmp/once"; return 1; }
    grep '^# P=' "$tmp/once"
    made=$(grep -c '^coltune\[[0-9]*\]: shared#[0-9]*: P=' "$tmp/once")
    [ "$made" = 1 ] || { echo "the shared communicator got $made contexts, not 1:"; \
        grep ': shared#[0-9]*: P=' "$tmp/once"; return 1; }
    dup=$(sed -n 's/^coltune\[\([0-9]*\)\]: [^ ]*#\([0-9]*\): P=.*/\1 \2/p' "$tmp/once" |
        sort | uniq -d)
    [ -z "$dup" ] || { echo "contexts numbered twice (rank serial): $dup"; return 1; }
}
check_run "threads P=2: $T threads, first use of a shared communicator, one context" once 2
check_run "threads P=4: $T threads, first use of a shared communicator, one context" once 4

check_run "threads P=3: $T threads, shm (COLTUNE_ALLTOALLV, COLTUNE_ALLTOALL) and the direct API" \
    with_env COLTUNE_FALLBACK=error COLTUNE_ALLTOALLV=shm COLTUNE_ALLTOALL=shm \
    TEST_SPECS=-,shm,node_aware,tuna,pairwise,scattered -- run_mpi 3 "$prog" "$T" 2 4
# A cache limit of a few windows (core/cache.h): the threads' contexts free
# each other's idle buffers, refuse windows and ask them back, and the
# windows asked back are released while other threads' windows are in use.
check_run "threads P=3: $T threads, shm and tuna under COLTUNE_CACHE=100k" \
    with_env COLTUNE_FALLBACK=error COLTUNE_ALLTOALLV=shm COLTUNE_ALLTOALL=shm \
    COLTUNE_CACHE=100k COLTUNE_SHM_WINDOW=16k TEST_SPECS=-,shm,tuna -- \
    run_mpi 3 "$prog" "$T" 2 8
# The nonblocking calls each thread hands to the next (the default rules:
# shm on one node), by the shared window in rounds and by a schedule.
check_run "threads P=3: $T threads, MPI_Ialltoallv by shm in rounds, completed by other threads" \
    with_env COLTUNE_IALLTOALLV=shm:large=64 COLTUNE_SHM_WINDOW=64 COLTUNE_ALLTOALLV=shm \
    TEST_SPECS=-,shm -- run_mpi 3 "$prog" "$T" 1 2
check_run "threads P=4: $T threads, MPI_Ialltoallv by pairwise, completed by other threads" \
    with_env COLTUNE_IALLTOALLV=pairwise TEST_SPECS=-,pairwise -- run_mpi 4 "$prog" "$T" 1 2
check_run "threads P=4 COLTUNE_PPN=2: $T threads, node_aware, tuna_hier" \
    with_env COLTUNE_FALLBACK=error COLTUNE_PPN=2 COLTUNE_ALLTOALLV=node_aware \
    TEST_SPECS=-,node_aware,tuna_hier_coalesced,tuna_hier_staggered,tuna -- \
    run_mpi 4 "$prog" "$T" 1 4
check_run "threads P=4: $T threads, rules file, COLTUNE_VERBOSE=1 COLTUNE_STATS=1" \
    with_env COLTUNE_RULES="$top_srcdir/tests/mpi/test.rules" COLTUNE_VERBOSE=1 \
    COLTUNE_STATS=1 -- run_mpi 4 "$prog" "$T" 2 4

# Learners on every thread's communicators (30 calls: their first rounds),
# their records gathered at MPI_Finalize.
adapt() {
    with_env COLTUNE_ADAPT=1 COLTUNE_STATS=1 -- run_mpi 3 "$prog" "$T" 1 30 0 \
        > "$tmp/adapt" 2>&1 || { cat "$tmp/adapt"; return 1; }
    grep '^# P=' "$tmp/adapt"
    rows=$(grep -c '^alltoallv  *3 ' "$tmp/adapt")
    # a learner per communicator of every thread: 2 a thread
    [ "$rows" -ge $((2 * T)) ] ||
        { cat "$tmp/adapt"; echo "$rows alltoallv learners, not $((2 * T))"; return 1; }
}
check_run "threads P=3 COLTUNE_ADAPT=1: $T threads, learners and their records" adapt
# Questions while the main thread's calls advance the shared communicator's
# learners (its first rounds: 40 calls of each collective).
check_run "threads P=3 COLTUNE_ADAPT=1: questions while the learners they read advance" \
    with_env COLTUNE_ADAPT=1 TEST_ANSWERS_MOVE=1 -- run_mpi 3 "$prog" "$T" 1 6 40
finish
