#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Fortran callers reach coltune: tests/fortran/exchange.F90 built three ways
# (include 'mpif.h', use mpi, use mpi_f08) with the MPI library's own mpifort,
# a plain program that knows nothing of coltune, run under LD_PRELOAD with
# forced algorithms for MPI_ALLTOALLV, MPI_ALLTOALL and the intercommunicator
# MPI_ALLGATHER / MPI_ALLGATHERV. Every run must compute the right values
# (the program checks them itself), the verbose log must show coltune serving
# each collective with the forced algorithm, and coltune's statistics must
# count exactly the calls the program made: none missed, none served twice.
# Skipped (77) without a Fortran MPI compiler.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
lib="$top_builddir/src/.libs/libcoltune.so"
src="$top_srcdir/tests/fortran/exchange.F90"
P=${CT_FORTRAN_NP:-5} # odd: intercommunicator groups of 3 and 2
if [ -z "${MPIFC:-}" ] || ! command -v "$MPIFC" > /dev/null 2>&1; then
    echo "SKIP: no Fortran MPI compiler (configure looks for mpifort; apt-get install gfortran)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# gfortran >= 10 rejects the argument mismatches mpif.h code makes (MPI_IN_PLACE
# for a buffer) unless told to allow them; -w silences the warnings it still gives.
for b in MPIFH USEMPI F08; do
    "$MPIFC" -cpp -DB_$b -fallow-argument-mismatch -w -o "$tmp/exchange_$b" "$src" || {
        echo "$MPIFC failed to build the $b program" >&2
        exit 1
    }
done

# check_binding B ALLTOALLV ALLTOALL ALLGATHER ALLGATHERV [VAR=value...]
check_binding() {
    b=$1 a2av=$2 a2a=$3 ag=$4 agv=$5
    shift 5
    with_env LD_PRELOAD="$lib" COLTUNE_VERBOSE=1 COLTUNE_STATS=1 COLTUNE_FALLBACK=error \
        COLTUNE_ALLTOALLV="$a2av" COLTUNE_ALLTOALL="$a2a" COLTUNE_ALLGATHER_INTER="$ag" \
        COLTUNE_ALLGATHERV_INTER="$agv" "$@" -- run_mpi "$P" "$tmp/exchange_$b" \
        > "$tmp/out" 2>&1 || { cat "$tmp/out" >&2; return 1; }
    n=$(grep -c '^exchange: ok$' "$tmp/out")
    [ "$n" = "$P" ] || { echo "$n of $P ranks ok:" >&2; cat "$tmp/out" >&2; return 1; }
    # "exchange: calls alltoallv alltoall allgather allgatherv A B C D"
    set -- $(sed -n 's/^exchange: calls alltoallv alltoall allgather allgatherv //p' "$tmp/out")
    [ $# = 4 ] || { echo "no call counts printed" >&2; cat "$tmp/out" >&2; return 1; }
    for pair in "alltoallv:$a2av:$1" "alltoall:$a2a:$2" "allgather_inter:$ag:$3" \
        "allgatherv_inter:$agv:$4"; do
        coll=${pair%%:*} rest=${pair#*:}
        want=${rest##*:} spec=${rest%:*}
        alg=${spec%%:*}
        grep -qE "^coltune\[0\]: $coll on [^ ]+ \(.*\): $alg(:[^ ]*)? \[forced\]" "$tmp/out" || {
            echo "$b: no log line shows $alg serving $coll:" >&2
            cat "$tmp/out" >&2
            return 1
        }
        # statistics row: collective algorithm calls bytes time mem
        got=$(awk -v c="$coll" '$1 == c { n += $3 } END { print n + 0 }' "$tmp/out")
        [ "$got" = "$want" ] || {
            echo "$b: $coll: the program made $want calls, coltune served $got" >&2
            cat "$tmp/out" >&2
            return 1
        }
    done
}

# The plain programs are right without coltune.
check_native() {
    run_mpi "$P" "$tmp/exchange_$1" > "$tmp/native" 2>&1 &&
        [ "$(grep -c '^exchange: ok$' "$tmp/native")" = "$P" ] || {
        cat "$tmp/native" >&2
        return 1
    }
}
for b in MPIFH USEMPI F08; do
    check_run "fortran $b native P=$P" check_native "$b"
done

for b in MPIFH USEMPI F08; do
    check_run "fortran $b P=$P: tuna, segmented" check_binding "$b" tuna:radix=2 tuna:radix=3 \
        segmented segmented:linear=1
    check_run "fortran $b P=$P: scattered, pairwise, direct" check_binding "$b" \
        scattered:block_count=2 pairwise direct direct
    check_run "fortran $b P=$P: hierarchical on 2-rank nodes, shm" check_binding "$b" \
        tuna_hier_coalesced tuna_hier_staggered:radix=2,block_count=2 shm shm COLTUNE_PPN=2
    check_run "fortran $b P=$P: pmpi" check_binding "$b" pmpi pmpi pmpi pmpi
done
finish
