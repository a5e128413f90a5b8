#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# check-all.sh - builds coltune three ways and runs the whole test suite:
#   1. Open MPI (the default mpicc), -Werror: every test (unit tests under
#      valgrind, MPI tests at P = 1..17 and 33, valgrind, preload).
#   2. MPICH (mpicc.mpich), -Werror: a smoke run of the MPI tests at 4 ranks
#      (with the large-count tests, which only MPICH has), the Fortran tests,
#      coltune-info and the installed tree (pkg-config, man pages),
#      and the shared-memory tests at up to 4 ranks (make check runs two
#      scripts at once, and MPICH spins when its ranks outnumber the cores).
#   3. AddressSanitizer (Open MPI): unit tests and the MPI tests at small P.
# Ends with one line "N passed, N failed" and exits non-zero on any failure.
# Run from the source tree; builds go to build/, build-mpich/, build-asan/.
set -u
cd "$(dirname "$0")/.."
top=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)
passed=0
failed=0
failed_names=""

step() { # step NAME COMMAND...: runs a build step, fails the run if it fails
    echo "### $1"
    shift
    if ! "$@"; then
        echo "### FAILED: $*" >&2
        failed=$((failed + 1))
        failed_names="$failed_names [build: $*]"
        return 1
    fi
}

tally() { # tally BUILDDIR: counts automake's PASS/FAIL lines of the last check
    log="$1/test-suite.log"
    [ -f "$log" ] || return 0
    p=$(grep -c '^PASS: ' "$1/check.out" || true)
    f=$(grep -c -E '^(FAIL|ERROR|XPASS): ' "$1/check.out" || true)
    passed=$((passed + p))
    failed=$((failed + f))
    [ "$f" -gt 0 ] && failed_names="$failed_names $(grep -E '^(FAIL|ERROR|XPASS): ' "$1/check.out" | sed "s|^|[$1] |" | tr '\n' ' ')"
    # On failure, show the failing logs (CI has nothing else to look at).
    [ "$f" -gt 0 ] && cat "$log"
    return 0
}

build() { # build DIR CONFIGURE-ARGS...
    dir=$1
    shift
    mkdir -p "$dir"
    (cd "$dir" && "$top/configure" --enable-werror "$@" > configure.out 2>&1) ||
        { cat "$dir/configure.out"; return 1; }
    make -C "$dir" -j"$jobs" > "$dir/make.out" 2>&1 || { cat "$dir/make.out"; return 1; }
    if grep -E 'warning:' "$dir/make.out"; then
        echo "compiler warnings in $dir" >&2
        return 1
    fi
}

check() { # check DIR MAKE-ARGS...: runs make check, keeping its output
    dir=$1
    shift
    make -C "$dir" -j"$jobs" check "$@" > "$dir/check.out" 2>&1
    grep -E '^(PASS|FAIL|ERROR|SKIP|XFAIL|XPASS): |^# ' "$dir/check.out"
    return 0
}

step "autogen" ./autogen.sh > /dev/null 2>&1 || { echo "0 passed, 1 failed"; exit 1; }

if step "build: Open MPI" build build; then
    check build
    tally build
fi

if step "build: MPICH" build build-mpich MPICC=mpicc.mpich; then
    check build-mpich TESTS="tests/unit/test_rules tests/mpi/alltoallv.sh \
        tests/mpi/isolation.sh tests/mpi/preload.sh tests/mpi/sdde.sh \
        tests/mpi/allgather_inter.sh tests/fortran/fortran.sh tests/mpi/shm.sh \
        tests/mpi/info.sh tests/mpi/install.sh" \
        CT_TEST_NP=4 CT_TEST_QUICK=1 CT_TEST_NP_TINY="1 3 4" CT_TEST_MAXNP=4 \
        CT_TEST_CHURN=50
    tally build-mpich
fi

# ASan: the MPI library itself is not instrumented and keeps memory until
# exit, so leak detection is on for the unit tests only.
if step "build: AddressSanitizer" build build-asan --enable-asan; then
    ASAN_OPTIONS=detect_leaks=1 check build-asan TESTS="tests/unit/test_spec \
        tests/unit/test_rules tests/unit/test_registry tests/unit/test_config \
        tests/unit/test_tuna tests/unit/test_segments tests/unit/test_decide"
    tally build-asan
    mv build-asan/check.out build-asan/check-unit.out
    ASAN_OPTIONS=detect_leaks=0 check build-asan \
        TESTS="tests/mpi/alltoallv.sh tests/mpi/isolation.sh tests/mpi/sdde.sh \
        tests/mpi/allgather_inter.sh tests/mpi/shm.sh" \
        CT_TEST_NP="1 3 4 7" CT_TEST_NP_TINY="1 3 7" CT_TEST_NP_NODES_TINY=7 \
        CT_TEST_NP_NODES_EVEN=6 \
        CT_TEST_CHURN=300 CT_TEST_QUICK=1 \
        VALGRIND=
    tally build-asan
fi

echo
[ -n "$failed_names" ] && echo "failed:$failed_names"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
