# SPDX-License-Identifier: BSD-3-Clause
# common.sh - sourced by the MPI test scripts. Provides run_mpi NP PROG ARGS...
# using $MPIEXEC (set by the Makefile), with the flags this machine needs:
# Open MPI as root, and more ranks than cores (oversubscription with yielding).
# Every run has a time limit so a hang fails the test instead of CI.

: "${MPIEXEC:=mpirun}"
: "${MPI_IMPL:=openmpi}"
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${CT_TEST_TIMEOUT:=600}"

if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# The library under test: the shim must not pick up an installed rules file.
export COLTUNE_RULES="${COLTUNE_RULES-}"

# CT_CLUSTER_HOSTS=h0:4,h1:4,...: run on the emulated hosts of
# scripts/coltune-cluster (which must be up), with CT_CLUSTER_MAP as mpirun's
# --map-by (e.g. node: ranks dealt round-robin over the hosts).
run_mpi() {
    np=$1
    shift
    if [ -n "${CT_CLUSTER_HOSTS:-}" ]; then
        timeout "$CT_TEST_TIMEOUT" "$top_srcdir/scripts/coltune-cluster" mpirun \
            -H "$CT_CLUSTER_HOSTS" ${CT_CLUSTER_MAP:+--map-by "$CT_CLUSTER_MAP"} -np "$np" "$@"
    elif [ "$MPI_IMPL" = openmpi ]; then
        timeout "$CT_TEST_TIMEOUT" "$MPIEXEC" --oversubscribe --mca mpi_yield_when_idle 1 \
            --mca btl self,vader -np "$np" "$@"
    else
        timeout "$CT_TEST_TIMEOUT" "$MPIEXEC" -np "$np" "$@"
    fi
    rc=$?
    [ $rc = 124 ] && echo "TIMEOUT after ${CT_TEST_TIMEOUT}s: -np $np $*" >&2
    return $rc
}

# with_env VAR=value ... -- command: runs command with those variables set.
with_env() (
    while [ "$1" != "--" ]; do
        export "$1"
        shift
    done
    shift
    "$@"
)

# Runs one MPI test program and records the outcome; call finish at the end
# (which prints the script's time, for keeping the suite within its budget).
failures=0
ct_test_start=$(date +%s)
check_run() {
    label=$1
    shift
    echo "=== $label"
    run_start=$(date +%s)
    if "$@"; then
        echo "--- ok: $label ($(($(date +%s) - run_start)) s)"
    else
        echo "--- FAILED: $label" >&2
        echo "--- FAILED: $label"
        failures=$((failures + 1))
    fi
}

# skip_part NAME REASON: records that a part of this script does not run
# here, and why. scripts/check-all.sh counts and lists these lines (and,
# under CI=true, fails on any it does not expect), so nothing is left out
# silently: every condition that bypasses checks goes through here.
skip_part() {
    echo "SKIP-PART: $1: $2"
}

# need_progs PROG...: a script whose test programs were not built (configure
# found no cmocka, or their build failed) is a SKIP (exit 77) that names
# them and why, not a failure of every run.
need_progs() {
    for p in "$@"; do
        [ -x "$p" ] && continue
        echo "SKIP: $p was not built (it needs cmocka, libcmocka-dev, at configure time;" \
            "see configure's output and 'make check')"
        exit 77
    done
}

# valgrind_usable NAME: true when the MPI programs can run under valgrind
# here (VALGRIND set, Open MPI with its suppression file $vg_supp), else
# records the part NAME as skipped with the reason.
vg_supp=/usr/share/openmpi/openmpi-valgrind.supp
valgrind_usable() {
    if [ -z "${VALGRIND:-}" ]; then
        skip_part "$1" "VALGRIND is empty (configure found no valgrind, or this run sets VALGRIND=)"
    elif [ "$MPI_IMPL" != openmpi ]; then
        skip_part "$1" "needs Open MPI's valgrind suppressions (MPI_IMPL=$MPI_IMPL)"
    elif [ ! -r "$vg_supp" ]; then
        skip_part "$1" "no suppression file $vg_supp"
    else
        return 0
    fi
    return 1
}

# quick_finish NAME: with CT_TEST_QUICK=1, records the rest of the script
# (NAME) as skipped and finishes; otherwise returns.
quick_finish() {
    [ "${CT_TEST_QUICK:-0}" = 1 ] || return 0
    skip_part "$1" "CT_TEST_QUICK=1 runs only the part above"
    finish
}

finish() {
    echo "elapsed: $(($(date +%s) - ct_test_start)) s"
    if [ "$failures" -ne 0 ]; then
        echo "$failures run(s) failed"
        exit 1
    fi
    exit 0
}
