#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every MPIX_Alltoall_crs / MPIX_Alltoallv_crs algorithm (tests/mpi/test_sdde.c)
# at many P and emulated node layouts, checked against PMPI_Alltoall of the
# counts plus PMPI_Alltoallv of the data; misuse and its messages; valgrind.
#   CT_TEST_NP      the P values of the one-node sweep (default below)
#   CT_TEST_QUICK=1 only the one-node sweep and one run on emulated nodes
#                   (the MPICH smoke run, the ASan build)
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
prog="$top_builddir/tests/mpi/test_sdde"
need_progs "$prog"
rules="$top_srcdir/tests/mpi/sdde.rules"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Strict (COLTUNE_FALLBACK=error): an algorithm that could not serve a case
# would return an error instead of being replaced. One node (every rank on
# this machine):
for P in ${CT_TEST_NP:-1 2 3 4 7 8 13 16}; do
    check_run "sdde P=$P strict" \
        with_env COLTUNE_FALLBACK=error COLTUNE_RULES="$rules" -- run_mpi "$P" "$prog"
done
if [ "${CT_TEST_QUICK:-0}" = 1 ]; then
    check_run "sdde P=4 COLTUNE_PPN=3 strict" \
        with_env COLTUNE_FALLBACK=error COLTUNE_RULES="$rules" COLTUNE_PPN=3 -- run_mpi 4 "$prog"
    quick_finish "emulated nodes, forced algorithms, misuse and valgrind runs"
fi

# Emulated nodes (COLTUNE_PPN): 1, 2, 4 and 5 ranks per node, short last
# nodes (7/2, 13/4, 13/5, 16/5), and cyclic placement with uneven nodes
# (13 ranks on 4 nodes of 4, 3, 3, 3) where a destination node may have no
# rank of the sender's local index.
for run in 4:1 8:1 7:2 8:2 8:4 13:4 16:4 13:5 16:5 13:4:cyclic; do
    P=${run%%:*}
    ppn=${run#*:}
    check_run "sdde P=$P COLTUNE_PPN=$ppn strict" \
        with_env COLTUNE_FALLBACK=error COLTUNE_RULES="$rules" COLTUNE_PPN="$ppn" -- \
        run_mpi "$P" "$prog"
done

# Forced through the environment: the decided calls (MPIX_ entry points,
# spec NULL) run these algorithms.
check_run "sdde P=8 COLTUNE_PPN=3 forced rma / locality_nonblocking" \
    with_env COLTUNE_FALLBACK=error COLTUNE_PPN=3 COLTUNE_ALLTOALL_CRS=rma \
    COLTUNE_ALLTOALLV_CRS=locality_nonblocking -- run_mpi 8 "$prog"

# locality_dense chosen by rules without msg_size: the decision is cached
# and the driver skips its agreement allreduce (the exchange carries it).
# (sdde.rules reaches it after an agreement, through a msg_size rule.)
printf 'alltoall_crs nodes=2- locality_dense\nalltoall_crs personalized\nalltoallv_crs locality_dense\n' \
    > "$tmp/dense.rules"
for run in 7:3 13:4:cyclic; do
    P=${run%%:*}
    check_run "sdde P=$P COLTUNE_PPN=${run#*:} locality_dense by rules without msg_size" \
        with_env COLTUNE_FALLBACK=error COLTUNE_RULES="$tmp/dense.rules" \
        COLTUNE_PPN="${run#*:}" -- run_mpi "$P" "$prog"
done

# Aggregates cut into pieces of at most 16 bytes (a test-only setting): one
# record per piece, the END record of the lanes in a piece of its own.
for run in 8:3 13:4:cyclic; do
    P=${run%%:*}
    check_run "sdde P=$P COLTUNE_PPN=${run#*:} locality-aware, 16-byte pieces" \
        with_env COLTUNE_FALLBACK=error COLTUNE_TEST_SDDE_PIECE=16 COLTUNE_PPN="${run#*:}" \
        TEST_ALGS=locality_personalized,locality_nonblocking,locality_dense -- \
        run_mpi "$P" "$prog"
done

# Misuse: each offending rank prints one line naming the index and value.
# (Run through check_run:)
# shellcheck disable=SC2317
misuse_messages() {
    with_env COLTUNE_FALLBACK=error TEST_FILTER=test_misuse -- run_mpi 4 "$prog" \
        > "$tmp/misuse.out" 2> "$tmp/misuse.err" || {
        cat "$tmp/misuse.out" "$tmp/misuse.err"
        return 1
    }
    for want in "sendcounts\[0\] = -1 is negative" "sendcount = -1 is negative" \
        "send_nnz = -2 is negative" "dest\[0\] = 4 is not a rank of the communicator (size 4)" \
        "is listed twice (also dest\[" "another rank passed invalid arguments" \
        "arrived, but recv_nnz = [0-9]* gives room for fewer" \
        "recv_size = [0-9]* give room for fewer"; do
        grep -q "$want" "$tmp/misuse.err" || {
            echo "no message matching '$want' in:" >&2
            cat "$tmp/misuse.err" >&2
            return 1
        }
    done
}
check_run "sdde P=4 misuse messages" misuse_messages
# Misuse across emulated nodes: locality_dense's exchange must tell every rank.
check_run "sdde P=5 COLTUNE_PPN=2 misuse" \
    with_env COLTUNE_FALLBACK=error COLTUNE_PPN=2 TEST_FILTER=test_misuse -- run_mpi 5 "$prog"

# Under valgrind (Open MPI's suppression file covers its own internals, ours
# the PMIx launcher channel): no invalid access or uninitialised read in any
# algorithm, misuse included. The test program is a libtool wrapper script:
# libtool --mode=execute runs valgrind on the real binary, not on the shell.
supp=$vg_supp
if valgrind_usable "valgrind"; then
    for run in 2: 3:2; do
        P=${run%%:*}
        ppn=${run#*:}
        check_run "sdde P=$P ${ppn:+COLTUNE_PPN=$ppn }under valgrind" \
            with_env COLTUNE_FALLBACK=error COLTUNE_RULES="$rules" ${ppn:+COLTUNE_PPN=$ppn} -- \
            run_mpi "$P" "$top_builddir/libtool" --mode=execute "$VALGRIND" --quiet \
            --error-exitcode=3 --suppressions="$supp" \
            --suppressions="$top_srcdir/tests/mpi/pmix-valgrind.supp" "$prog"
    done
fi
finish
