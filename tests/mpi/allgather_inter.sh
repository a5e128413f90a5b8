#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Intercommunicator MPI_Allgather / MPI_Allgatherv: every algorithm through
# the direct API and through the intercepted calls, checked against PMPI_
# (tests/mpi/test_allgather_inter.c). The group sizes (1,7) (2,6) (3,5)
# (4,4) at 8 ranks, (6,3) (7,2) at 9 and (4,9) at 13; for the MPICH and
# AddressSanitizer runs also (1,3) (2,2) (3,1) at 4 and (2,5) (5,2) at 7.
#   CT_TEST_NP      the world sizes (default below)
#   CT_TEST_QUICK=1 only the strict runs, without the 250000-element blocks
#                   (the MPICH and AddressSanitizer runs)
#                   and the direct API on the first group split alone
#   CT_TEST_BIG_NP  the world size that also runs the 250000-element blocks
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
prog="$top_builddir/tests/mpi/test_allgather_inter"
need_progs "$prog"

# Strict: an algorithm that cannot serve a case returns an error, which the
# test counts as a failure; the intercepted calls are forced to segmented,
# their nonblocking and persistent forms to direct (blocks up to 1000
# elements: the schedule is the blocking direct's).
# The 250000-element blocks (many segments per rank) run at one world size,
# CT_TEST_BIG_NP (13: groups of 4 and 9), where they take over a minute
# oversubscribed; every size runs the blocks up to 1000 elements.
splits=0
[ "${CT_TEST_QUICK:-0}" = 1 ] && splits=1
for P in ${CT_TEST_NP:-8 9 13}; do
    quick=${CT_TEST_QUICK:-0}
    [ "$P" = "${CT_TEST_BIG_NP:-13}" ] || quick=1
    check_run "allgather_inter P=$P strict$([ "$quick" = 1 ] && echo ', blocks up to 1000')" \
        with_env COLTUNE_FALLBACK=error COLTUNE_ALLGATHER_INTER=segmented \
        COLTUNE_ALLGATHERV_INTER=segmented COLTUNE_IALLGATHER_INTER=direct \
        COLTUNE_IALLGATHERV_INTER=direct TEST_QUICK="$quick" TEST_SPLITS="$splits" -- \
        run_mpi "$P" "$prog"
done
# The nonblocking and persistent forms served by the library (pmpi); the
# strict runs above force them to direct.
P=${CT_TEST_NP:-7}
P=${P##* } # the last of CT_TEST_NP (4 under MPICH), else 7
check_run "allgather_inter P=$P nonblocking and persistent, pmpi" \
    with_env COLTUNE_IALLGATHER_INTER=pmpi COLTUNE_IALLGATHERV_INTER=pmpi TEST_QUICK=1 \
    TEST_FILTER='test_iallgather_*intercepted' -- run_mpi "$P" "$prog"
quick_finish "forced algorithms, rules files and valgrind runs"

# The intercepted calls forced to the linear intra-group step, to the
# direct exchange and to the shared-memory exchange as well.
check_run "allgather_inter P=9 strict, segmented:linear=1" \
    with_env COLTUNE_FALLBACK=error COLTUNE_ALLGATHER_INTER=segmented:linear=1 \
    COLTUNE_ALLGATHERV_INTER=segmented:linear=1 TEST_FILTER='*intercepted' -- run_mpi 9 "$prog"
# The nonblocking and persistent forms by segmented (two rounds: the
# pieces and segments between the groups, then the intra-group step).
for linear in 0 1; do
    check_run "allgather_inter P=9 nonblocking and persistent, segmented:linear=$linear" \
        with_env COLTUNE_FALLBACK=error COLTUNE_IALLGATHER_INTER=segmented:linear=$linear \
        COLTUNE_IALLGATHERV_INTER=segmented:linear=$linear \
        TEST_FILTER='test_iallgather_*intercepted' -- run_mpi 9 "$prog"
done
check_run "allgather_inter P=13 strict, direct" \
    with_env COLTUNE_FALLBACK=error COLTUNE_ALLGATHER_INTER=direct \
    COLTUNE_ALLGATHERV_INTER=direct TEST_FILTER='*intercepted' -- run_mpi 13 "$prog"
check_run "allgather_inter P=8 strict, shm" \
    with_env COLTUNE_FALLBACK=error COLTUNE_ALLGATHER_INTER=shm \
    COLTUNE_ALLGATHERV_INTER=shm TEST_FILTER='*intercepted' -- run_mpi 8 "$prog"

# A persistent MPI_Allgatherv_init learns under COLTUNE_ADAPT=1 (unpaced, 100
# calls in rounds): every start's result checked, and the learner decides.
rules=$(mktemp)
log=$(mktemp)
trap 'rm -f "$rules" "$log"' EXIT
learns() {
    with_env COLTUNE_ADAPT=1 COLTUNE_ADAPT_SHARE=100 COLTUNE_ADAPT_CALLS=100 COLTUNE_VERBOSE=1 \
        TEST_FILTER=test_iallgatherv_init_learns -- run_mpi 8 "$prog" > "$log" 2>&1 ||
        { cat "$log"; return 1; }
    grep -q 'iallgatherv_inter .*: adapt: \(chose\|kept\)' "$log" ||
        { cat "$log"; echo "the persistent request's learner did not decide"; return 1; }
}
check_run "allgather_inter P=8 a persistent Allgatherv learns (COLTUNE_ADAPT)" learns

# Chosen by a rules file: the decision log must name the rule, and the
# intercepted results must still be right (only those tests run).
cat >"$rules" <<'EOF'
allgather_inter   comm_size=2-  segmented
allgatherv_inter  msg_size=0-   segmented
EOF
rules_run() {
    with_env COLTUNE_FALLBACK=error COLTUNE_RULES="$rules" COLTUNE_VERBOSE=1 \
        TEST_RULES_PATH=1 TEST_QUICK=1 TEST_FILTER='*intercepted' -- run_mpi 8 "$prog" \
        2>"$log"
    rc=$?
    cat "$log" >&2
    [ $rc = 0 ] && grep -q 'allgather_inter .*segmented:linear=0 \[rule line 1\]' "$log" &&
        grep -q 'allgatherv_inter .*segmented:linear=0 \[rule line 2\]' "$log"
}
check_run "allgather_inter P=8 rules file" rules_run

# The shipped default rules: on one node both calls go to the shared-memory
# exchange, but Allgathers of up to 8 KiB per group to the direct exchange.
default_rules_run() {
    with_env COLTUNE_FALLBACK=error COLTUNE_RULES="$top_srcdir/conf/coltune.rules" \
        COLTUNE_VERBOSE=1 TEST_RULES_PATH=1 TEST_QUICK=1 TEST_FILTER='*intercepted' -- \
        run_mpi 8 "$prog" 2>"$log"
    rc=$?
    cat "$log" >&2
    [ $rc = 0 ] && grep -q 'allgather_inter .*nodes=1.*: direct \[rule line' "$log" &&
        grep -q 'allgather_inter .*nodes=1.*: shm \[rule line' "$log" &&
        grep -q 'allgatherv_inter .*nodes=1.*: shm \[rule line' "$log" &&
        ! grep -q '_inter .*: segmented' "$log"
}
check_run "allgather_inter P=8 default rules, one node" default_rules_run

# Under valgrind (Open MPI ships a suppression file for its own internals;
# tests/mpi/pmix-valgrind.supp covers its launcher channel): no invalid
# access or uninitialised read. The test program is a libtool wrapper script:
# libtool --mode=execute runs valgrind on the real binary, not on the shell.
supp=$vg_supp
if valgrind_usable "valgrind"; then
    check_run "allgather_inter P=8 under valgrind" \
        with_env COLTUNE_FALLBACK=error TEST_QUICK=1 TEST_FILTER='*_api' -- run_mpi 8 \
        "$top_builddir/libtool" --mode=execute "$VALGRIND" --quiet --error-exitcode=3 \
        --suppressions="$supp" --suppressions="$top_srcdir/tests/mpi/pmix-valgrind.supp" "$prog"
fi
finish
