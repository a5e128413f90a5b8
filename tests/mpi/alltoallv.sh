#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every MPI_Alltoallv algorithm at every parameter value, checked against
# PMPI_Alltoallv (tests/mpi/test_alltoallv.c), at many P.
#   CT_TEST_NP      the P values (default below)
#   CT_TEST_QUICK=1 only the strict sweep (used for the MPICH smoke run)
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
prog="$top_builddir/tests/mpi/test_alltoallv"
rules="$top_srcdir/tests/mpi/test.rules"

# Strict: an algorithm that cannot serve a case returns an error, so every
# case an algorithm accepts is really run by it.
for P in ${CT_TEST_NP:-1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 33}; do
    check_run "alltoallv P=$P strict" \
        with_env COLTUNE_FALLBACK=error COLTUNE_RULES="$rules" -- run_mpi "$P" "$prog"
done

quick_finish "emulated nodes, valgrind and fallback runs"

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
fi

# Fallback: cases an algorithm cannot serve are routed elsewhere, and the
# results are still right.
for P in 3 8; do
    check_run "alltoallv P=$P fallback" \
        with_env COLTUNE_FALLBACK=silent COLTUNE_RULES="$rules" -- run_mpi "$P" "$prog"
done
finish
