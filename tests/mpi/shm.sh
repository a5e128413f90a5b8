#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The shared-memory algorithms beyond the Alltoallv matrix (alltoallv.sh runs
# shm and node_aware at their default window at every P):
#   - a tiny window (64 bytes per rank per half: many rounds), P up to 33,
#     emulated nodes too, every datatype case and MPI_IN_PLACE;
#   - a window that cannot be set up: injected on one rank
#     (COLTUNE_TEST_SHM_FAIL), and (root, Open MPI) a real 256 KiB tmpfs as
#     the library's backing directory in a private mount namespace: every
#     rank falls back together and the results are still right;
#   - communicator churn (test_shm_churn.c): thousands of communicators,
#     shared mappings, the window files and resident memory flat, and
#     nothing lost under valgrind;
#   - several threads on distinct communicators (test_shm_threads.c).
#   CT_TEST_MAXNP   the most ranks of any run here (MPICH, which spins when
#                   oversubscribed, runs with 4: a larger run is made smaller)
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
prog="$top_builddir/tests/mpi/test_alltoallv"
need_progs "$prog"
maxnp=${CT_TEST_MAXNP:-64}
capped() { [ "$1" -le "$maxnp" ] && echo "$1" || echo "$maxnp"; }
algs=shm,node_aware

for P in ${CT_TEST_NP_TINY:-1 2 3 5 8 13 16 31 33}; do
    [ "$P" -le "$maxnp" ] || continue
    check_run "shm P=$P COLTUNE_SHM_WINDOW=64 ($algs)" \
        with_env COLTUNE_SHM_WINDOW=64 COLTUNE_FALLBACK=error TEST_ALGS="$algs" -- \
        run_mpi "$P" "$prog"
done
P=$(capped "${CT_TEST_NP_NODES_TINY:-13}")
for ppn in 4 3:cyclic; do
    check_run "shm P=$P COLTUNE_PPN=$ppn COLTUNE_SHM_WINDOW=64 ($algs)" \
        with_env COLTUNE_SHM_WINDOW=64 COLTUNE_PPN="$ppn" COLTUNE_FALLBACK=error \
        TEST_ALGS="$algs" -- run_mpi "$P" "$prog"
done

# Nodes of equal size (node_aware's lanes and leaders, whose delivery phase
# then runs in rounds too).
P=$(capped "${CT_TEST_NP_NODES_EVEN:-12}")
q=$([ $((P % 3)) = 0 ] && echo 3 || echo 2)
for ppn in $q $q:cyclic; do
    check_run "shm P=$P COLTUNE_PPN=$ppn COLTUNE_SHM_WINDOW=64 (node_aware)" \
        with_env COLTUNE_SHM_WINDOW=64 COLTUNE_PPN="$ppn" COLTUNE_FALLBACK=error \
        TEST_ALGS=node_aware -- run_mpi "$P" "$prog"
done

# MPI_Alltoall with blocks of at least large bytes: every block of every rank
# is point-to-point, so shm leaves the window alone (the statistics' extra
# memory: 0 bytes) and the result is right (--check); smaller blocks go
# through the window (its bytes counted). The in-place and datatype cases of
# this path run in alltoallv.sh (shm:large=1).
bench="$top_builddir/bench/coltune-bench"
a2a_extra() { # SIZE: shm's peak extra memory for MPI_Alltoall of SIZE-byte blocks, large=1k
    out=$(with_env COLTUNE_STATS=1 COLTUNE_FALLBACK=error -- run_mpi "$(capped 5)" "$bench" \
        --coll alltoall --sizes "$1" --algs shm:large=1k --iters 3 --check \
        --no-progress) || { echo "$out" >&2; return 1; }
    echo "$out" | awk '$1 == "alltoall" && $2 == "shm" && NF == 6 { print $6 }'
}
alltoall_direct() {
    small=$(a2a_extra 512) && big=$(a2a_extra 1k,4k) || return 1
    echo "extra memory: $small B for 512-byte blocks, $big B for 1k and 4k"
    [ -n "$small" ] && [ "$small" -gt 0 ] && [ "$big" = 0 ] ||
        { echo "the window is used by all-direct MPI_Alltoall, or not at all" >&2; return 1; }
}
check_run "shm MPI_Alltoall at or above large: point-to-point, no window" alltoall_direct

# No window on one rank: shm forwards, node_aware runs tuna:radix=2.
for case in "4 4" "7 3"; do
    set -- $case
    set -- "$(capped "$1")" "$2"
    check_run "shm P=$1 COLTUNE_PPN=$2 window fails on rank 1" \
        with_env COLTUNE_TEST_SHM_FAIL=1 COLTUNE_PPN="$2" COLTUNE_FALLBACK=error \
        TEST_ALGS="$algs" -- run_mpi "$1" "$prog"
done

# A real small /dev/shm: a 256 KiB tmpfs as Open MPI's backing directory for
# shared windows, mounted in a private mount namespace (gone with it).
tiny_shm() {
    d=$(mktemp -d /tmp/coltune-tinyshm.XXXXXX) || return 1
    export top_srcdir top_builddir MPIEXEC MPI_IMPL
    unshare -m sh -c '
        mount -t tmpfs -o size=256k coltune-tinyshm "$1" || exit 1
        export OMPI_MCA_osc_sm_backing_directory="$1"
        . "$top_srcdir/tests/mpi/common.sh"
        run_mpi "$2" "$3"' sh "$d" "$@"
    rc=$?
    rmdir "$d"
    return $rc
}
if [ "$MPI_IMPL" != openmpi ]; then
    skip_part "256 KiB /dev/shm" "needs Open MPI (its osc_sm_backing_directory; MPI_IMPL=$MPI_IMPL)"
elif [ "$(id -u)" != 0 ]; then
    skip_part "256 KiB /dev/shm" "needs root (mount in a private mount namespace)"
elif ! command -v unshare > /dev/null || ! unshare -m true 2> /dev/null; then
    skip_part "256 KiB /dev/shm" "unshare -m is missing or not permitted here"
else
    check_run "shm P=4 in a 256 KiB /dev/shm" \
        with_env COLTUNE_FALLBACK=error TEST_ALGS="$algs" TEST_SHM_NO_WINDOW=1 -- \
        tiny_shm 4 "$prog"
    check_run "Allgather(v) shm P=8 in a 256 KiB /dev/shm" \
        with_env COLTUNE_ALLGATHER_INTER=shm COLTUNE_ALLGATHERV_INTER=shm \
        TEST_FILTER='*intercepted' -- tiny_shm 8 "$top_builddir/tests/mpi/test_allgather_inter"
fi

# The topology on this host (test_topology.c): one node, for MPI_COMM_WORLD
# and its splits, and with Open MPI for two worlds merged (MPI_Comm_spawn:
# its TCP carries the traffic between them). The first context, on
# MPI_COMM_WORLD, asks MPI_Comm_split_type and teaches each process its node;
# the splits' contexts then need one allgather; the merged worlds' processes
# cannot be compared, and that context asks again (COLTUNE_VERBOSE=2 says
# which way each took). shm, forced, must serve each.
topology_here() {
    P=$1 spawn=$2
    if [ -n "$spawn" ]; then
        with_env LD_LIBRARY_PATH="$top_builddir/src/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            COLTUNE_VERBOSE=2 COLTUNE_ALLTOALLV=shm COLTUNE_FALLBACK=error -- \
            timeout "$CT_TEST_TIMEOUT" "$MPIEXEC" --oversubscribe --mca mpi_yield_when_idle 1 \
            --mca btl self,vader,tcp -np "$P" "$top_builddir/tests/mpi/test_topology" spawn \
            > "$tmp/out" 2>&1
    else
        with_env COLTUNE_VERBOSE=2 COLTUNE_ALLTOALLV=shm COLTUNE_FALLBACK=error -- \
            run_mpi "$P" "$top_builddir/tests/mpi/test_topology" > "$tmp/out" 2>&1
    fi || { cat "$tmp/out" >&2; return 1; }
    grep "^# topology\|: P=[0-9]* nodes=.*, " "$tmp/out"
    want="MPI_COMM_WORLD#[0-9]*: P=$P nodes=1 ppn=$P, nodes asked
comm#[0-9]*: P=[0-9]* nodes=1 ppn=[0-9]*, each rank's node known
alltoallv on MPI_COMM_WORLD#[0-9]* (P=$P nodes=1 ppn=$P): shm"
    [ -n "$spawn" ] && want="$want
comm#[0-9]*: P=$((P + 2)) nodes=1 ppn=$((P + 2)), nodes asked
alltoallv on comm#[0-9]* (P=$((P + 2)) nodes=1 ppn=$((P + 2))): shm"
    echo "$want" | while IFS= read -r line; do
        grep -q "coltune\[0\]: $line" "$tmp/out" || {
            echo "the log has no line: coltune[0]: $line" >&2
            return 1
        }
    done
}
tmp=$(mktemp -d)
P=$(capped 5)
check_run "topology P=$P on one host: MPI_COMM_WORLD and splits" topology_here "$P"
if [ "$MPI_IMPL" = openmpi ]; then
    check_run "topology P=3 on one host: two worlds merged (MPI_Comm_spawn)" \
        topology_here 3 spawn
else
    skip_part "topology of two worlds merged" "MPICH 4.0 here fails MPI_Comm_spawn"
fi

# Churn: the windows live and die with their communicators. MPICH creates
# communicators slowly when its ranks outnumber the cores (about 0.1 s each
# here, with or without coltune): fewer of them there.
# Open MPI's windows go to a directory of this job's own, whose files the
# program counts (/dev/shm itself holds other jobs' files too).
churn="$top_builddir/tests/mpi/test_shm_churn"
n=${CT_TEST_CHURN:-2000}
[ "$MPI_IMPL" = openmpi ] || n=${CT_TEST_CHURN:-100}
shmdir=$(mktemp -d /dev/shm/coltune-churn.XXXXXX) || shmdir=$(mktemp -d)
trap 'rm -rf "$shmdir" "$tmp"' EXIT
dir=
[ "$MPI_IMPL" = openmpi ] && dir=$shmdir
check_run "churn P=4: $n communicators with shm" \
    with_env COLTUNE_ALLTOALLV=shm COLTUNE_ALLTOALL=shm COLTUNE_ALLGATHER_INTER=shm \
    OMPI_MCA_osc_sm_backing_directory="$shmdir" COLTUNE_FALLBACK=error -- \
    run_mpi 4 "$churn" "$n" $dir
P=$(capped 6)
check_run "churn P=$P COLTUNE_PPN=2: $((n * 3 / 10)) communicators with node_aware" \
    with_env COLTUNE_ALLTOALLV=node_aware COLTUNE_ALLTOALL=node_aware COLTUNE_PPN=2 \
    OMPI_MCA_osc_sm_backing_directory="$shmdir" COLTUNE_ALLGATHER_INTER=shm \
    COLTUNE_FALLBACK=error -- run_mpi "$P" "$churn" $((n * 3 / 10)) $dir

# Under valgrind: no block definitely lost whose allocation passes through
# coltune (the MPI library's own losses are not ours to judge).
supp=$vg_supp
if valgrind_usable "churn under valgrind"; then
    logs=$(mktemp -d)
    no_coltune_leak() {
        with_env COLTUNE_ALLTOALLV=shm COLTUNE_ALLTOALL=node_aware COLTUNE_PPN=2 \
            COLTUNE_ALLGATHER_INTER=shm COLTUNE_FALLBACK=error -- \
            run_mpi 3 "$top_builddir/libtool" --mode=execute "$VALGRIND" --quiet \
            --leak-check=full --show-leak-kinds=definite --suppressions="$supp" \
            --suppressions="$top_srcdir/tests/mpi/pmix-valgrind.supp" \
            --log-file="$logs/vg.%p" "$churn" 30 || return 1
        # Each loss record runs from "definitely lost" to the next blank
        # line; coltune's are those with a coltune frame, except the MPI
        # library's own losses inside its MPI_Init and MPI_Finalize, which
        # the shim calls.
        if awk '/definitely lost in loss record/ {r = 1; t = ""}
                r {t = t $0 "\n"}
                r && /^==[0-9]+== *$/ {
                    r = 0
                    if (t ~ /ct_[a-z_]+ \(/ && t !~ /ompi_mpi_init|ompi_mpi_finalize/) {printf "%s", t; bad = 1}
                }
                END {exit bad}' "$logs"/vg.*; then
            return 0
        fi
        echo "coltune leaks memory (above)" >&2
        return 1
    }
    check_run "churn P=3 under valgrind: nothing lost by coltune" no_coltune_leak
    rm -rf "$logs"
fi

threads="$top_builddir/tests/mpi/test_shm_threads"
# At P = 1 some algorithms have no parameter value (tuna's radix): pmpi serves.
check_run "threads P=1: 3 threads, every algorithm, MPI_THREAD_MULTIPLE" \
    with_env COLTUNE_FALLBACK=silent -- run_mpi 1 "$threads" 3 3
P=$(capped 5)
check_run "threads P=$P: 3 threads, every algorithm, MPI_THREAD_MULTIPLE" \
    with_env COLTUNE_FALLBACK=error -- run_mpi "$P" "$threads" 3 3
check_run "threads P=$P COLTUNE_PPN=2: 3 threads, every algorithm, MPI_THREAD_MULTIPLE" \
    with_env COLTUNE_FALLBACK=error COLTUNE_PPN=2 -- run_mpi "$P" "$threads" 3 3
finish
