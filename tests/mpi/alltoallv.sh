#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every MPI_Alltoallv algorithm at every parameter value, checked against
# PMPI_Alltoallv (tests/mpi/test_alltoallv.c), at many P.
#   CT_TEST_NP      the P values (default below)
#   CT_TEST_QUICK=1 only the strict sweep and the direct API wrappers at
#                   those P (used for the MPICH and AddressSanitizer runs)
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
prog="$top_builddir/tests/mpi/test_alltoallv"
need_progs "$prog"
rules="$top_srcdir/tests/mpi/test.rules"

# Strict: an algorithm that cannot serve a case returns an error, so every
# case an algorithm accepts is really run by it.
for P in ${CT_TEST_NP:-1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 33}; do
    check_run "alltoallv P=$P strict" \
        with_env COLTUNE_FALLBACK=error COLTUNE_RULES="$rules" -- run_mpi "$P" "$prog"
done

# The one byte view of a call's blocks (src/core/datatype.h), which the
# byte-level algorithms of every collective see calls through.
check_run "byte view (ct_bytes)" run_mpi 1 "$top_builddir/tests/mpi/test_bytes"

# The named wrappers of the direct API (tests/mpi/test_api.c) at odd and
# prime P: every parameter value against PMPI_Alltoallv, out-of-range ones
# MPI_ERR_ARG. Every coltune_alltoallv_* the header declares without a spec
# argument must be among those the program exercised.
api_run() { # api_run P VAR=value...
    P=$1
    shift
    out=$(mktemp)
    with_env "$@" -- run_mpi "$P" "$top_builddir/tests/mpi/test_api" > "$out"
    rc=$?
    cat "$out"
    declared=$(sed -n 's/^int \(coltune_alltoallv_[a-z_]*\)(.*/\1 &/p' \
        "$top_srcdir/include/coltune.h" | grep -v '(const char \*spec' | cut -d' ' -f1 | sort)
    exercised=$(sed -n 's/^api: exercised \(coltune_[a-z_]*\) .*/\1/p' "$out" | sort -u)
    rm -f "$out"
    [ $rc = 0 ] || return 1
    [ "$(echo "$declared" | wc -l)" -ge 10 ] || { echo "only $declared declared?" >&2; return 1; }
    [ "$declared" = "$exercised" ] || {
        echo "declared in include/coltune.h but not exercised:" >&2
        echo "$declared" | grep -v -x -F "$exercised" >&2
        return 1
    }
}
for P in ${CT_TEST_NP:-1 2 3 5 7 8 13}; do
    check_run "direct API wrappers P=$P strict" api_run "$P" COLTUNE_FALLBACK=error
done
quick_finish "emulated nodes, valgrind and fallback runs"

# The wrappers on emulated nodes (the hierarchical ones' parameters range
# over N and Q), and out-of-range parameters served by the fallback.
check_run "direct API wrappers P=7 COLTUNE_PPN=3 strict" api_run 7 COLTUNE_FALLBACK=error \
    COLTUNE_PPN=3
check_run "direct API wrappers P=8 COLTUNE_PPN=3:cyclic fallback" api_run 8 \
    COLTUNE_FALLBACK=silent COLTUNE_PPN=3:cyclic

# Emulated nodes for the hierarchical algorithms: ppn in {1, 2, 3, 4, P},
# P not divisible by ppn (a short last node), and ranks dealt round-robin
# over the nodes (non-consecutive placement, nodes of unequal size).
hier=tuna,tuna_hier_coalesced,tuna_hier_staggered,node_aware
for P in ${CT_TEST_NP_NODES:-7 13 16}; do
    for ppn in 1 2 3 4 "$P" 4:cyclic 3:cyclic; do
        check_run "alltoallv P=$P COLTUNE_PPN=$ppn ($hier)" \
            with_env COLTUNE_FALLBACK=error COLTUNE_PPN="$ppn" TEST_ALGS="$hier" -- \
            run_mpi "$P" "$prog"
    done
done

# Under valgrind (Open MPI ships a suppression file for its own internals;
# tests/mpi/pmix-valgrind.supp covers its launcher channel): no invalid access
# or uninitialised read in any algorithm. The test program is a libtool
# wrapper script, so libtool --mode=execute puts valgrind on the real binary.
supp=$vg_supp
if valgrind_usable "valgrind"; then
    for P in 2 3; do
        check_run "alltoallv P=$P under valgrind" \
            with_env COLTUNE_FALLBACK=error COLTUNE_RULES="$rules" -- \
            run_mpi "$P" "$top_builddir/libtool" --mode=execute "$VALGRIND" --quiet \
            --error-exitcode=3 --suppressions="$supp" \
            --suppressions="$top_srcdir/tests/mpi/pmix-valgrind.supp" "$prog"
    done
    check_run "direct API wrappers P=3 under valgrind" \
        with_env COLTUNE_FALLBACK=error -- \
        run_mpi 3 "$top_builddir/libtool" --mode=execute "$VALGRIND" --quiet \
        --error-exitcode=3 --suppressions="$supp" \
        --suppressions="$top_srcdir/tests/mpi/pmix-valgrind.supp" "$top_builddir/tests/mpi/test_api"
fi

# Fallback: cases an algorithm cannot serve are routed elsewhere, and the
# results are still right.
for P in 3 8; do
    check_run "alltoallv P=$P fallback" \
        with_env COLTUNE_FALLBACK=silent COLTUNE_RULES="$rules" -- run_mpi "$P" "$prog"
done
finish
