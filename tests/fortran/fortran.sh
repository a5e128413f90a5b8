#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Fortran callers reach coltune: tests/fortran/exchange.F90 built three ways
# (include 'mpif.h', use mpi, use mpi_f08) with the MPI library's own mpifort,
# a plain program that knows nothing of coltune, run under LD_PRELOAD with
# forced algorithms for MPI_ALLTOALLV, MPI_ALLTOALL and the intercommunicator
# MPI_ALLGATHER / MPI_ALLGATHERV and their nonblocking forms, and
# MPI_NEIGHBOR_ALLTOALLV / MPI_NEIGHBOR_ALLTOALL on a ring, nonblocking and
# persistent too. Every run must
# compute the right values (the program checks them itself), the verbose
# log must show coltune serving
# each collective with the forced algorithm, and coltune's statistics must
# count exactly the calls the program made: none missed, none served twice.
# tests/fortran/nonblocking.F90, built the same three ways, calls
# MPI_IALLTOALLV and MPI_IALLTOALL and completes them with each of the nine
# completion calls beside point-to-point requests (under Open MPI coltune
# defines those Fortran symbols too), and the persistent MPI_ALLTOALLV_INIT
# (Open MPI: MPIX_), under forced algorithms.
# Skipped (77) without a Fortran MPI compiler.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
lib="$top_builddir/src/.libs/libcoltune.so"
P=${CT_FORTRAN_NP:-5} # odd: intercommunicator groups of 3 and 2
if [ -z "${MPIFC:-}" ] || ! command -v "$MPIFC" > /dev/null 2>&1; then
    echo "SKIP: no Fortran MPI compiler (configure looks for mpifort; apt-get install gfortran)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# gfortran >= 10 rejects the argument mismatches mpif.h code makes (MPI_IN_PLACE
# for a buffer) unless told to allow them; -w silences the warnings it still gives.
# Open MPI 4.1's persistent collectives are MPIX_ ones (its pcollreq extension).
case "$MPIFC" in *mpich*) pcoll= ;; *) pcoll=-DPCOLL_MPIX ;; esac
for b in MPIFH USEMPI F08; do
    for prog in exchange nonblocking; do
        "$MPIFC" -cpp -DB_$b $pcoll -fallow-argument-mismatch -w -o "$tmp/${prog}_$b" \
            "$top_srcdir/tests/fortran/$prog.F90" || {
            echo "$MPIFC failed to build the $b $prog program" >&2
            exit 1
        }
    done
done

# check_binding B ALLTOALLV ALLTOALL ALLGATHER ALLGATHERV [VAR=value...]: the
# nonblocking MPI_IALLGATHER(V) by direct, MPI_NEIGHBOR_ALLTOALLV by locality
# and MPI_NEIGHBOR_ALLTOALL by direct (all pmpi where ALLGATHER is pmpi).
check_binding() {
    b=$1 a2av=$2 a2a=$3 ag=$4 agv=$5
    shift 5
    iag=direct nbv=locality nb=direct inb=direct
    [ "$ag" = pmpi ] && iag=pmpi nbv=pmpi nb=pmpi inb=pmpi
    with_env LD_PRELOAD="$lib" COLTUNE_VERBOSE=1 COLTUNE_STATS=1 COLTUNE_FALLBACK=error \
        COLTUNE_ALLTOALLV="$a2av" COLTUNE_ALLTOALL="$a2a" COLTUNE_ALLGATHER_INTER="$ag" \
        COLTUNE_ALLGATHERV_INTER="$agv" COLTUNE_IALLGATHER_INTER="$iag" \
        COLTUNE_IALLGATHERV_INTER="$iag" COLTUNE_NEIGHBOR_ALLTOALLV="$nbv" \
        COLTUNE_NEIGHBOR_ALLTOALL="$nb" COLTUNE_INEIGHBOR_ALLTOALLV="$inb" \
        COLTUNE_INEIGHBOR_ALLTOALL="$inb" "$@" -- run_mpi "$P" "$tmp/exchange_$b" \
        > "$tmp/out" 2>&1 || { cat "$tmp/out" >&2; return 1; }
    n=$(grep -c '^exchange: ok$' "$tmp/out")
    [ "$n" = "$P" ] || { echo "$n of $P ranks ok:" >&2; cat "$tmp/out" >&2; return 1; }
    # "exchange: calls alltoallv ... ineighbor_alltoall A ... J", and the
    # persistent requests' starts after their first, "exchange: later starts
    # A ... J", which coltune counts as calls where it serves them (not pmpi)
    later=$(sed -n 's/^exchange: later starts //p' "$tmp/out")
    set -- $(sed -n 's/^exchange: calls [a-z_ ]*ineighbor_alltoall //p' "$tmp/out")
    [ $# = 10 ] && [ "$(echo $later | wc -w)" = 10 ] ||
        { echo "no call counts printed" >&2; cat "$tmp/out" >&2; return 1; }
    i=0
    for pair in "alltoallv:$a2av:$1" "alltoall:$a2a:$2" "allgather_inter:$ag:$3" \
        "allgatherv_inter:$agv:$4" "iallgather_inter:$iag:$5" "iallgatherv_inter:$iag:$6" \
        "neighbor_alltoallv:$nbv:$7" "neighbor_alltoall:$nb:$8" \
        "ineighbor_alltoallv:$inb:$9" "ineighbor_alltoall:$inb:${10}"; do
        coll=${pair%%:*} rest=${pair#*:}
        want=${rest##*:} spec=${rest%:*}
        alg=${spec%%:*}
        i=$((i + 1))
        [ "$alg" = pmpi ] || want=$((want + $(echo $later | cut -d' ' -f$i)))
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
check_native() { # check_native PROGRAM BINDING
    run_mpi "$P" "$tmp/$1_$2" > "$tmp/native" 2>&1 &&
        [ "$(grep -c "^$1: ok\$" "$tmp/native")" = "$P" ] || {
        cat "$tmp/native" >&2
        return 1
    }
}
# MPICH 4.0.2's own Fortran MPI_WAITANY, MPI_TESTANY, MPI_WAITSOME and
# MPI_TESTSOME mistranslate indices (MPI_UNDEFINED comes back as
# MPI_UNDEFINED + 1), natively too; its bindings call coltune's C calls,
# which tests/mpi/nbc.sh checks. Open MPI's bindings are coltune's here.
# Under MPICH the algorithms of several rounds (pairwise) do not serve the
# nonblocking calls (restriction progress, coltune(7)): one round instead.
nb_specs="shm:large=8 pairwise linear pmpi"
case "$MPIFC" in
*mpich*)
    nb_specs="shm:large=8 nonblocking linear pmpi"
    NB_HOWS=5
    export NB_HOWS
    skip_part "nonblocking MPI_WAITANY, MPI_TESTANY, MPI_WAITSOME, MPI_TESTSOME" \
        "MPICH 4.0.2's own Fortran bindings of these return MPI_UNDEFINED + 1"
    ;;
esac
for b in MPIFH USEMPI F08; do
    check_run "fortran $b native P=$P" check_native exchange "$b"
    check_run "fortran $b nonblocking native P=$P" check_native nonblocking "$b"
done

# check_nonblocking B SPEC: MPI_IALLTOALLV and MPI_IALLTOALL served by SPEC,
# completed by each completion call; statistics count every call once.
check_nonblocking() {
    b=$1 spec=$2
    with_env LD_PRELOAD="$lib" COLTUNE_STATS=1 COLTUNE_FALLBACK=error \
        COLTUNE_IALLTOALLV="$spec" COLTUNE_IALLTOALL="$spec" -- \
        run_mpi "$P" "$tmp/nonblocking_$b" > "$tmp/out" 2>&1 || { cat "$tmp/out" >&2; return 1; }
    n=$(grep -c '^nonblocking: ok$' "$tmp/out")
    [ "$n" = "$P" ] || { echo "$n of $P ranks ok:" >&2; cat "$tmp/out" >&2; return 1; }
    set -- $(sed -n 's/^nonblocking: calls ialltoallv ialltoall //p' "$tmp/out")
    [ $# = 2 ] || { echo "no call counts printed" >&2; cat "$tmp/out" >&2; return 1; }
    alg=${spec%%:*}
    # the persistent request's later starts: calls where coltune serves it
    later=$(sed -n 's/^nonblocking: later starts //p' "$tmp/out")
    [ -n "$later" ] || { echo "no start count printed" >&2; cat "$tmp/out" >&2; return 1; }
    [ "$alg" = pmpi ] || set -- $(($1 + later)) "$2"
    for pair in "ialltoallv:$1" "ialltoall:$2"; do
        coll=${pair%%:*} want=${pair#*:}
        got=$(awk -v c="$coll" -v a="$alg" '$1 == c && $2 ~ "^" a { n += $3 } END { print n + 0 }' \
            "$tmp/out")
        [ "$got" = "$want" ] || {
            echo "$b: $coll: the program made $want calls, coltune's $alg served $got" >&2
            cat "$tmp/out" >&2
            return 1
        }
    done
}

for b in MPIFH USEMPI F08; do
    check_run "fortran $b P=$P: tuna, segmented" check_binding "$b" tuna:radix=2 tuna:radix=3 \
        segmented segmented:linear=1
    check_run "fortran $b P=$P: scattered, pairwise, direct" check_binding "$b" \
        scattered:block_count=2 pairwise direct direct
    check_run "fortran $b P=$P: hierarchical on 2-rank nodes, shm" check_binding "$b" \
        tuna_hier_coalesced tuna_hier_staggered:radix=2,block_count=2 shm shm COLTUNE_PPN=2
    check_run "fortran $b P=$P: pmpi" check_binding "$b" pmpi pmpi pmpi pmpi
    for spec in $nb_specs; do
        check_run "fortran $b P=$P: nonblocking by $spec, every completion call" \
            check_nonblocking "$b" "$spec"
    done
done
finish
