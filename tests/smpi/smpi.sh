#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# smpi.sh - coltune's algorithms on a simulated cluster (SimGrid SMPI,
# conf/platforms/flat16.xml, P = 16: 4 nodes of 4 ranks). Every collective,
# every algorithm: coltune-bench --check compares each result byte for byte
# with the native routine's (SMPI's own MPI_Alltoallv under each of its
# selectors; the root gathering of smpi/compat.c for the intercommunicator
# Allgather(v); the personalized exchange for the SDDE; the basic exchange
# of smpi/compat.c for the neighbourhood all-to-alls). Then one small
# coltune-sim run must write its CSV, rules (accepted by coltune's parser)
# and heatmap. Simulated times are never checked.
# Skipped (exit 77) when SimGrid SMPI is not installed.
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
bench="$top_builddir/smpi/coltune-bench"
platform="$top_srcdir/conf/platforms/flat16.xml"
smpirun=${SMPIRUN:-$(command -v smpirun)}
if [ -z "$smpirun" ]; then
    echo "SKIP: SimGrid SMPI is not installed (Debian: apt-get install libsimgrid-dev," \
        "then run configure again): the simulated build is not tested"
    exit 77
fi
if [ ! -f "$bench" ]; then
    echo "SKIP: smpirun is at $smpirun but configure did not find SimGrid when it ran," \
        "so $bench was not built: run configure again, or make smpi"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in 0 1 2 3; do
    for j in 1 2 3 4; do echo "node-$i"; done
done > "$tmp/hosts"
export COLTUNE_RULES=

failures=0
# sim LABEL 'SIMGRID-OPTIONS' BENCH-ARGS...: the bench under smpirun at
# P = 16 must exit 0 and its CSV must hold only "ok" rows (but shm's).
sim() {
    label=$1
    cfg=$2
    shift 2
    echo "=== $label"
    # shellcheck disable=SC2086 # cfg is a list of options
    timeout 300 "$smpirun" -np 16 -platform "$platform" -hostfile "$tmp/hosts" \
        --cfg=smpi/simulate-computation:no --cfg=smpi/test:2e-8 --cfg=smpi/iprobe:1e-7 \
        --cfg=smpi/grow-injected-times:no --cfg=smpi/tmpdir:"$tmp" $cfg \
        --log=root.thres:critical "$bench" --iters 1 --warmup 0 --check --no-progress \
        --csv "$tmp/out.csv" "$@" > "$tmp/out" 2>&1
    rc=$?
    # shm needs all ranks on one shared-memory node: on these 4 hosts it must
    # refuse every call (its rows "skipped"), the restriction under test.
    if [ $rc = 0 ] && grep -q ',ok$' "$tmp/out.csv" &&
        ! tail -n +2 "$tmp/out.csv" | grep -v ',ok$' |
            grep -v '^[a-z_]*,shm,.*,skipped$' > /dev/null &&
        ! grep -q '^[a-z_]*,shm,.*,ok$' "$tmp/out.csv"; then
        echo "--- ok: $label ($(grep -c ',ok$' "$tmp/out.csv") results checked)"
    else
        cat "$tmp/out"
        [ -f "$tmp/out.csv" ] && grep -v ',ok$' "$tmp/out.csv"
        echo "--- FAILED: $label (exit $rc)"
        failures=$((failures + 1))
    fi
    rm -f "$tmp/out.csv"
}

a2av_algs="all,tuna:radix=2...16,tuna_hier_coalesced:radix=2...5,block_count=1...4"
a2av_algs="$a2av_algs,tuna_hier_staggered:radix=2...5,block_count=1..13"
a2av_algs="$a2av_algs,scattered:block_count=1..16,multipair_testany:stride=1..16"
for native in ompi mpich mvapich2 impi; do
    sim "alltoallv, every algorithm, native smpi/alltoallv:$native" \
        "--cfg=smpi/alltoallv:$native" --coll alltoallv --algs "$a2av_algs" --sizes 16,1k,16k
done
sim "alltoallv, power-law blocks" "" --coll alltoallv --algs "$a2av_algs" --sizes 1k \
    --dist powerlaw
for native in ompi mpich; do
    sim "alltoall, every algorithm, native smpi/alltoall:$native" \
        "--cfg=smpi/alltoall:$native" --coll alltoall --algs "$a2av_algs" --sizes 16,4k
done
for native in ompi mpich; do
    natcfg="--cfg=smpi/gather:$native --cfg=smpi/bcast:$native"
    sim "allgather_inter, native gather/bcast $native" "$natcfg" --coll allgather_inter \
        --algs all --sizes 16,4k,64k --group-sizes 9:7
    sim "allgatherv_inter, native gather/bcast $native" "$natcfg" --coll allgatherv_inter \
        --algs all --sizes 16,4k,64k --group-sizes 5:11 --setting 8
done
for coll in alltoall_crs alltoallv_crs; do
    sim "$coll random:3" "" --coll $coll --algs all --sizes 16,4k --pattern random:3
    sim "$coll stencil2d" "" --coll $coll --algs all --sizes 256 --pattern stencil2d
done
# The neighbourhood all-to-alls on the distributed graphs smpi/compat.c
# emulates (the native: its basic exchange), 4 ranks per host.
sim "neighbor_alltoallv stencil2d" "" --coll neighbor_alltoallv --algs all --sizes 64,4k \
    --pattern stencil2d
sim "neighbor_alltoall random:5:40" "" --coll neighbor_alltoall --algs all --sizes 64,4k \
    --pattern random:5:40

# coltune-sim end to end; its rules must parse and cover the grid.
echo "=== coltune-sim --platform flat16 -P 8,16"
sim_out="$tmp/sim"
# Every simulated cell is served by a rule of the file, as a job would decide.
served() {
    for coll in alltoallv alltoall; do
        for P in 8 16; do
            for size in 16 4096; do
                "$top_builddir/info/coltune-info" --check "$1" --np "$P" --coll "$coll" \
                    --msg-size "$size" --parsable > "$tmp/ans" || return 1
                grep "^decision:$coll:" "$tmp/ans" || return 1
                grep -q "^decision:$coll:[^:]*:default:" "$tmp/ans" && return 1
            done
        done
    done
    return 0
}
if python3 "$top_builddir/scripts/coltune-sim" --platform "$platform" -P 8,16 \
    --colls alltoallv,alltoall --sizes 16,4k --natives ompi,mpich --algs "tuna:radix=2;tuna:radix=4;linear" \
    --bench "$bench" --smpirun "$smpirun" --timeout 120 --outdir "$sim_out" \
    > "$tmp/sim.log" 2>&1 &&
    [ -s "$sim_out/measure.csv" ] && [ -s "$sim_out/flat16.rules" ] &&
    head -n 1 "$sim_out/measure.csv" | grep -q '^collective,algorithm,params,P,nodes,ppn,size,' &&
    grep -q '^alltoallv,native,smpi=mpich,16,' "$sim_out/measure.csv" &&
    grep -q '^alltoallv,pmpi,,16,' "$sim_out/measure.csv" &&
    grep -q '^alltoall,native,smpi=mpich,16,' "$sim_out/measure.csv" &&
    served "$sim_out/flat16.rules" > "$tmp/rules.out" 2>&1; then
    echo "--- ok: coltune-sim wrote measure.csv, flat16.rules (valid) and heatmap"
else
    cat "$tmp/sim.log" "$tmp/rules.out" 2>/dev/null
    echo "--- FAILED: coltune-sim"
    failures=$((failures + 1))
fi

echo "smpi: $failures failure(s)"
[ $failures = 0 ]
