#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The nonblocking all-to-all and coltune's requests (tests/mpi/test_nbc.c):
# every algorithm that splits at every parameter value, against PMPI_, at
# many P; the completion calls, with the intercepted MPI_Ialltoallv served by
# a one-round, a many-round and a windowed schedule, by TuNA (whose rounds
# depend on the sizes that arrive), by the shared window (one round and
# several) and by the MPI library. Under MPICH the many-round
# and windowed schedules do not serve the nonblocking calls (restriction
# progress): there test_every_algorithm checks that they are refused, and
# the runs that force them get the library's routine.
#   CT_TEST_QUICK=1 fewer P (the MPICH and sanitizer builds)
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
prog="$top_builddir/tests/mpi/test_nbc"
need_progs "$prog"

if [ "${CT_TEST_QUICK:-0}" = 1 ]; then
    nps=${CT_TEST_NP:-1 3 4 7}
else
    nps=${CT_TEST_NP:-1 2 3 4 5 7 8 13 16}
fi
for P in $nps; do
    check_run "nbc P=$P every algorithm" \
        with_env COLTUNE_FALLBACK=error TEST_FILTER=test_every_algorithm -- run_mpi "$P" "$prog"
done
# The hierarchical algorithms on emulated nodes (ranks dealt in blocks, and
# round-robin: nodes of unequal size), small blocks and large; node_aware
# on equal nodes (its lanes, and leaders that deliver) too, and with a small
# window (several rounds, its blocks placed after round 0), and completing
# in every completion call, blocking node_aware calls between.
# (Runs of more ranks than CT_TEST_MAXNP are left out: MPICH, which spins
# when oversubscribed and refuses these algorithms their nonblocking form.)
hier=tuna_hier_coalesced,tuna_hier_staggered,node_aware
maxnp=${CT_TEST_MAXNP:-64}
if [ "${CT_TEST_QUICK:-0}" = 1 ]; then nodes_nps=7; else nodes_nps="7 13"; fi
for P in ${CT_TEST_NP_NODES:-$nodes_nps}; do
    [ "$P" -le "$maxnp" ] || continue
    for ppn in 2 3:cyclic; do
        check_run "nbc P=$P COLTUNE_PPN=$ppn ($hier)" \
            with_env COLTUNE_PPN="$ppn" COLTUNE_FALLBACK=error TEST_ALGS="$hier" \
            TEST_FILTER=test_every_algorithm -- run_mpi "$P" "$prog"
    done
done
if [ 7 -le "$maxnp" ] && [ "${CT_TEST_QUICK:-0}" != 1 ]; then
    check_run "nbc P=7 COLTUNE_PPN=3 ($hier) large blocks" \
        with_env COLTUNE_PPN=3 COLTUNE_FALLBACK=error TEST_ALGS="$hier" \
        TEST_FILTER=test_large_blocks -- run_mpi 7 "$prog"
fi
if [ 8 -le "$maxnp" ]; then
    for ppn in 2 4:cyclic; do
        check_run "nbc P=8 COLTUNE_PPN=$ppn node_aware" \
            with_env COLTUNE_PPN="$ppn" COLTUNE_FALLBACK=error TEST_ALGS=node_aware \
            TEST_FILTER=test_every_algorithm -- run_mpi 8 "$prog"
    done
fi
if [ 8 -le "$maxnp" ] && [ "${CT_TEST_QUICK:-0}" != 1 ]; then
    check_run "nbc P=8 COLTUNE_PPN=4 node_aware, a window of 256 bytes, large blocks" \
        with_env COLTUNE_PPN=4 COLTUNE_SHM_WINDOW=256 COLTUNE_FALLBACK=error \
        TEST_ALGS=node_aware TEST_FILTER=test_large_blocks -- run_mpi 8 "$prog"
    for leaders in 1 4; do
        check_run "nbc P=8 COLTUNE_PPN=4 completion calls, node_aware:leaders=$leaders" \
            with_env COLTUNE_PPN=4 COLTUNE_IALLTOALLV=node_aware:leaders=$leaders \
            COLTUNE_ALLTOALLV=node_aware TEST_FILTER='test_req_*' -- run_mpi 8 "$prog"
    done
fi
# Blocks of up to 80 KB: TuNA's large rounds (sizes and data apart), the
# window in rounds (P = 7: the hierarchical run above).
check_run "nbc P=4 large blocks, every algorithm" \
    with_env COLTUNE_FALLBACK=error TEST_FILTER=test_large_blocks -- run_mpi 4 "$prog"
for spec in pairwise scattered:block_count=2 multipair_waitany:stride=2 linear pmpi \
    shm shm:large=64 tuna:radix=2 tuna:radix=3; do
    for P in ${CT_TEST_NP:-1 4 7}; do
        check_run "nbc P=$P completion calls, MPI_Ialltoallv by $spec" \
            with_env COLTUNE_IALLTOALLV="$spec" COLTUNE_ALLTOALLV=shm \
            TEST_FILTER='test_req_*' -- run_mpi "$P" "$prog"
    done
done
# shm in rounds: a window of 64 bytes a rank, so every call runs several,
# advanced by the completion calls.
for P in ${CT_TEST_NP:-4 7}; do
    check_run "nbc P=$P shm in rounds, every parameter value" \
        with_env COLTUNE_SHM_WINDOW=64 COLTUNE_FALLBACK=error TEST_ALGS=shm \
        TEST_FILTER=test_every_algorithm -- run_mpi "$P" "$prog"
    check_run "nbc P=$P shm in rounds, completion calls" \
        with_env COLTUNE_SHM_WINDOW=64 COLTUNE_IALLTOALLV=shm:large=64 COLTUNE_ALLTOALLV=shm \
        TEST_FILTER='test_req_*' -- run_mpi "$P" "$prog"
done
# shm's runs without the window (test_shm_runs): 1040 calls whose blocks
# change, nonblocking, blocking and persistent, some in flight together;
# with a window of 64 bytes a rank too (the window's calls in two rounds).
for P in ${CT_TEST_NP:-1 3 4 7}; do
    check_run "nbc P=$P shm's runs without the window" \
        with_env TEST_FILTER=test_shm_runs -- run_mpi "$P" "$prog"
done
check_run "nbc P=4 shm's runs without the window, in rounds" \
    with_env COLTUNE_SHM_WINDOW=64 TEST_FILTER=test_shm_runs -- run_mpi 4 "$prog"
# A persistent request's window is not asked back while the request lives:
# three communicators take blocking calls in turn under a limit that does
# not hold their three windows (each asks the least recently used back),
# the first holding a persistent request started between them (its start
# once ran on the window the cache had freed).
check_run "nbc P=4 a persistent request's window kept under COLTUNE_CACHE=80k" \
    with_env COLTUNE_CACHE=80k COLTUNE_SHM_WINDOW=16k COLTUNE_ALLTOALLV=shm \
    COLTUNE_IALLTOALLV=shm TEST_FILTER=test_req_persistent_window_kept -- run_mpi 4 "$prog"
# A rule of the persistent calls' own (persistent=1) before one for both:
# the persistent request runs the first, the nonblocking calls the second.
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
printf 'ialltoallv persistent=1 linear\nialltoallv shm\n' > "$tmp/persistent.rules"
persistent_rule() {
    with_env COLTUNE_RULES="$tmp/persistent.rules" COLTUNE_VERBOSE=1 \
        TEST_FILTER='test_req_*' -- \
        run_mpi 3 "$prog" > "$tmp/out" 2>&1 || { cat "$tmp/out"; return 1; }
    grep -q 'ialltoallv on comm#[0-9]* .*: linear \[rule line 1\]' "$tmp/out" &&
        grep -q 'ialltoallv on MPI_COMM_WORLD#0 .*: shm:large=49152 \[rule line 2\]' "$tmp/out" ||
        { cat "$tmp/out"; echo "the persistent call did not take rule 1, or the others rule 2"; return 1; }
}
check_run "nbc P=3 persistent=1 rules the persistent call only" persistent_rule
# The same where the nonblocking calls go to the library: the persistent call
# on their communicator is still decided by its own rule, not forwarded with
# them.
printf 'ialltoallv persistent=1 linear\nialltoallv pmpi\n' > "$tmp/apart.rules"
persistent_apart() {
    with_env COLTUNE_RULES="$tmp/apart.rules" COLTUNE_VERBOSE=1 \
        TEST_FILTER='test_req_persistent_apart' -- \
        run_mpi 3 "$prog" > "$tmp/out" 2>&1 || { cat "$tmp/out"; return 1; }
    grep -q 'ialltoallv on comm#[0-9]* .*: linear \[rule line 1\]' "$tmp/out" ||
        { cat "$tmp/out"; echo "the persistent call was not decided by rule 1"; return 1; }
}
check_run "nbc P=3 persistent=1 after nonblocking calls forwarded" persistent_apart
# A persistent request that outlives N - 1 nonblocking calls on its
# communicator, started beside the next one (test_req_persistent_tags), and
# one that outlives N - 1 persistent requests made and freed, started beside
# the next one made (test_req_persistent_tag_reuse): by a schedule of rounds
# where the library has the progress hook, so messages of the two calls
# would cross if they shared a tag. N: 64 tags (COLTUNE_TEST_TAGS), so that
# the counts wrap within a second (the arithmetic is the same as at 16384
# and 8192, and so was the wrong answer before the fixes).
if [ "$MPI_IMPL" = openmpi ]; then wrap_alg=pairwise; else wrap_alg=linear; fi
check_run "nbc P=4 persistent requests beside the 64th nonblocking call and the 65th \
persistent one ($wrap_alg)" \
    with_env COLTUNE_IALLTOALLV=$wrap_alg COLTUNE_FALLBACK=error TEST_TAG_WRAP=1 \
    COLTUNE_TEST_TAGS=64 -- run_mpi 4 "$prog"
# Four tags (COLTUNE_TEST_TAGS): four live persistent requests
# hold them all, the fifth goes to the library (said once), the sixth takes
# the tag the freed second gave back (test_req_persistent_tags_held).
tags_held() {
    with_env COLTUNE_IALLTOALLV=$wrap_alg COLTUNE_FALLBACK=error TEST_TAGS_HELD=1 \
        COLTUNE_TEST_TAGS=4 COLTUNE_VERBOSE=1 -- run_mpi 4 "$prog" > "$tmp/out" 2>&1 ||
        { cat "$tmp/out"; return 1; }
    [ "$(grep -c 'every one of coltune.s 4 tags of persistent calls is held' "$tmp/out")" = 1 ] ||
        { cat "$tmp/out"; echo "expected one message: every tag held"; return 1; }
    # the fifth call (the count then at 8) went to the library, the sixth did not
    [ "$(grep -c 'persistent call [0-9]*: every tag held' "$tmp/out")" = 1 ] &&
        grep -q 'persistent call 8: every tag held' "$tmp/out" ||
        { cat "$tmp/out"; echo "expected the fifth call alone to find every tag held"; return 1; }
}
check_run "nbc P=4 every persistent tag held, then one given back ($wrap_alg)" tags_held
# A persistent request learns under COLTUNE_ADAPT=1 (unpaced, 300 calls in
# rounds): every start's result checked; the learner decides, and
# COLTUNE_ADAPT_OUT has its rule, with persistent=1.
learns() {
    with_env COLTUNE_ADAPT=1 COLTUNE_ADAPT_SHARE=100 COLTUNE_ADAPT_CALLS=300 COLTUNE_VERBOSE=1 \
        COLTUNE_STATS=1 COLTUNE_ADAPT_OUT="$tmp/learned.rules" \
        TEST_FILTER=test_persistent_learns -- \
        run_mpi "$1" "$prog" > "$tmp/out" 2>&1 || { cat "$tmp/out"; return 1; }
    # COLTUNE_STATS: each of the 600 starts a call of the candidate it ran
    awk '$1 == "ialltoallv" && $2 ~ /^[a-z]/ {n += $3} END {exit n != 600}' "$tmp/out" ||
        { cat "$tmp/out"; echo "the statistics do not count the 600 starts"; return 1; }
    # "ialltoallv (16-31 B) on comm#1: ...": its size class, agreed at the init
    grep -q 'ialltoallv ([0-9]*-[0-9]* B) on comm#[0-9]*.*: adapt: \(chose\|kept\)' "$tmp/out" ||
        { cat "$tmp/out"; echo "the persistent request's learner did not decide"; return 1; }
    grep -v '^#' "$tmp/learned.rules" |
        grep -q "^ialltoallv *comm_size=$1 .* msg_size=[0-9]*-[0-9]* persistent=1 " ||
        { cat "$tmp/learned.rules"; echo "no persistent=1 rule learned"; return 1; }
    # read back: coltune-info finds it clean, and the persistent call takes it
    "$top_builddir/info/coltune-info" --check "$tmp/learned.rules" > "$tmp/check" 2>&1 ||
        { cat "$tmp/check"; echo "coltune-info --check failed on the learned rules"; return 1; }
    # the same seed, so the same counts: the same size class (a run in the
    # next second drew others, and found no rule for them)
    seed=$(sed -n 's/^# seed \([0-9]*\).*/\1/p' "$tmp/out" | head -n 1)
    with_env COLTUNE_RULES="$tmp/learned.rules" COLTUNE_VERBOSE=1 TEST_STARTS=20 \
        TEST_SEED="$seed" TEST_FILTER=test_persistent_learns -- \
        run_mpi "$1" "$prog" > "$tmp/again" 2>&1 ||
        { cat "$tmp/again"; return 1; }
    grep -q 'ialltoallv on comm#[0-9]* .*\[rule line [0-9]*\]' "$tmp/again" &&
        ! grep -q ': adapt:' "$tmp/again" ||
        { cat "$tmp/again"; echo "the learned rule was not used"; return 1; }
}
# COLTUNE_STATS counts each start of a persistent request that coltune serves
# as a call of its algorithm (the init is none), each init of one the library
# serves (its starts go to the library unseen).
stats_starts() {
    with_env COLTUNE_STATS=1 COLTUNE_IALLTOALLV="$1" TEST_STARTS=20 \
        TEST_FILTER=test_persistent_learns -- run_mpi 3 "$prog" > "$tmp/stats" 2>&1 ||
        { cat "$tmp/stats"; return 1; }
    grep -q "^ialltoallv  *$1  *$2 " "$tmp/stats" ||
        { cat "$tmp/stats"; echo "not $2 calls of $1"; return 1; }
}
check_run "nbc P=3 COLTUNE_STATS counts a persistent request's starts" stats_starts linear 20
check_run "nbc P=3 COLTUNE_STATS counts the library's persistent request once" \
    stats_starts pmpi 1
learn_nps="4 5"
[ "${CT_TEST_QUICK:-0}" = 1 ] && learn_nps=4
for P in $learn_nps; do
    check_run "nbc P=$P a persistent request learns (COLTUNE_ADAPT)" learns "$P"
done
quick_finish "valgrind runs"

# Under valgrind (as alltoallv.sh): every algorithm at P = 3, and the
# completion calls with a many-round schedule.
if valgrind_usable "valgrind"; then
    vg() { # vg P VAR=value...
        P=$1
        shift
        check_run "nbc P=$P $* under valgrind" with_env "$@" -- \
            run_mpi "$P" "$top_builddir/libtool" --mode=execute "$VALGRIND" --quiet \
            --error-exitcode=3 --suppressions="$vg_supp" \
            --suppressions="$top_srcdir/tests/mpi/pmix-valgrind.supp" "$prog"
    }
    vg 3 COLTUNE_FALLBACK=error TEST_FILTER=test_every_algorithm
    vg 3 COLTUNE_IALLTOALLV=pairwise TEST_FILTER='test_req_*'
    vg 3 COLTUNE_IALLTOALLV=shm:large=64 COLTUNE_SHM_WINDOW=64 TEST_FILTER='test_req_*'
    vg 3 COLTUNE_ADAPT=1 COLTUNE_ADAPT_SHARE=100 COLTUNE_ADAPT_CALLS=200 TEST_STARTS=300 \
        TEST_FILTER=test_persistent_learns
fi
finish
