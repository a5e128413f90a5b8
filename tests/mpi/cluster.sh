#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Real separate hosts (scripts/coltune-cluster: network namespaces on this
# machine, Open MPI started across them): the topology coltune reads from
# MPI_COMM_TYPE_SHARED, and the algorithms whose point is that a message
# between nodes costs more, checked against the PMPI_ result across hosts,
# for even hosts (4 x 4), uneven ones (5, 3, 1) and ranks dealt round-robin
# over the hosts; the shm algorithms are excluded by their restriction; the
# preload test across hosts. Skipped (77), saying why, without root,
# namespaces or Open MPI (MPICH is not reliable across hosts here: see
# coltune-cluster help).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
need_progs "$top_builddir/tests/mpi/test_alltoallv" "$top_builddir/tests/mpi/test_sdde" \
    "$top_builddir/tests/mpi/test_allgather_inter"
cluster="$top_srcdir/scripts/coltune-cluster"

if [ "$MPI_IMPL" != openmpi ]; then
    echo "# SKIP: the cluster tests use Open MPI (MPICH hangs across hosts here)"
    exit 77
fi
if [ "$(id -u)" != 0 ]; then
    echo "# SKIP: emulated hosts need root (network, UTS and mount namespaces)"
    exit 77
fi
trap '"$cluster" down' EXIT
trap 'exit 130' INT TERM
if ! out=$("$cluster" up -k 4 2>&1); then
    echo "# SKIP: $out"
    exit 77
fi
echo "# $out"

check_run "coltune-cluster test" \
    with_env COLTUNE_BENCH="$top_builddir/bench/coltune-bench" -- "$cluster" test

# coltune_comm_topology against the hosts, and the decision log's view.
check_topology() {
    np=$1 N=$2 Q=$3
    run_mpi "$np" env COLTUNE_VERBOSE=1 "$top_builddir/tests/mpi/test_topology" \
        > "$tmp/out" 2>&1 || { cat "$tmp/out" >&2; return 1; }
    cat "$tmp/out"
    grep -q "coltune\[0\]: alltoallv on MPI_COMM_WORLD#[0-9]* (P=$np nodes=$N ppn=$Q)" \
        "$tmp/out" || { echo "the log does not show P=$np nodes=$N ppn=$Q" >&2; return 1; }
}

# shm cannot serve across hosts: forced, it falls back (logged), results right.
check_shm_excluded() {
    np=$1
    lib="$top_builddir/src/.libs/libcoltune.so"
    app="$top_builddir/tests/mpi/plain_alltoallv"
    run_mpi "$np" "$app" | sort > "$tmp/native" || return 1
    with_env LD_PRELOAD="$lib" COLTUNE_ALLTOALLV=shm -- run_mpi "$np" "$app" \
        > "$tmp/out" 2> "$tmp/err" || { cat "$tmp/err" >&2; return 1; }
    sort "$tmp/out" | diff "$tmp/native" - || return 1
    grep -q "forced algorithm 'shm' cannot serve.*do not all share memory" "$tmp/err" || {
        echo "no message says shm was excluded:" >&2
        cat "$tmp/err" >&2
        return 1
    }
}

# One placement: name, mpirun's -H list, ranks, --map-by (- for none), the
# nodes and most ranks per node coltune must find, and the -H list and ranks
# of the Allgather(v) run (its test splits 4, 7, 8, 9 or 13 ranks in groups).
placement() {
    name=$1 np=$3 N=$5 Q=$6 ag_hosts=$7 ag_np=$8
    map=$4
    [ "$map" = - ] && map=
    export CT_CLUSTER_HOSTS="$2" CT_CLUSTER_MAP="$map"
    where="$name hosts ($2${map:+, --map-by $map})"
    check_run "topology, $where" check_topology "$np" "$N" "$Q"
    check_run "Alltoall(v) hierarchical, $where" \
        with_env TEST_ALGS=tuna,tuna_hier_coalesced,tuna_hier_staggered,node_aware \
        COLTUNE_FALLBACK=error -- run_mpi "$np" "$top_builddir/tests/mpi/test_alltoallv"
    # rma's window cannot be made between hosts (Open MPI over TCP): its
    # calls must be served by personalized, results right.
    check_run "sparse exchange, locality-aware and rma, $where" \
        with_env TEST_ALGS=rma,locality_personalized,locality_nonblocking,locality_dense \
        COLTUNE_FALLBACK=error -- run_mpi "$np" "$top_builddir/tests/mpi/test_sdde"
    check_run "shm excluded, $where" check_shm_excluded "$np"
    # Both groups spread over hosts; shm is restricted across hosts: its
    # cases fall back (silently) to pmpi, and the results must still match.
    CT_CLUSTER_HOSTS=$ag_hosts
    check_run "intercommunicator Allgather(v), $ag_np ranks on $ag_hosts${map:+, --map-by $map}" \
        with_env TEST_ALGS=segmented,direct,shm COLTUNE_FALLBACK=silent TEST_QUICK=1 -- \
        run_mpi "$ag_np" "$top_builddir/tests/mpi/test_allgather_inter"
}

tmp=$(mktemp -d)
trap '"$cluster" down; rm -rf "$tmp"' EXIT
placement even h0:4,h1:4,h2:4,h3:4 16 - 4 4 h0:2,h1:2,h2:2,h3:2 8
placement uneven h0:5,h1:3,h2:1 9 - 3 5 h0:5,h1:3,h2:1 9
placement round-robin h0:3,h1:3,h2:3,h3:3 12 node 4 3 h0:3,h1:3,h2:3,h3:3 9

# The preload test (every forced algorithm but shm) across two hosts.
export CT_CLUSTER_HOSTS=h0:2,h1:2 CT_CLUSTER_MAP=
check_run "preload across hosts (h0:2,h1:2)" \
    with_env CT_PRELOAD_NP=4 CT_PRELOAD_EXCLUDE=shm -- sh "$top_srcdir/tests/mpi/preload.sh"
finish
