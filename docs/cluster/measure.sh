#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The measurements of docs/cluster.md: coltune-bench across emulated hosts
# (scripts/coltune-cluster), as root, from a build tree:
#   docs/cluster/measure.sh BUILD_DIR OUT_DIR
#   python3 docs/cluster/table.py OUT_DIR a2av-4x4.csv ...   (the tables)
set -u
here=$(cd "$(dirname "$0")" && pwd)
B=$1/bench/coltune-bench
C=$here/../../scripts/coltune-cluster
O=$2
mkdir -p "$O"
export COLTUNE_RULES=
$C up -k 4 > $O/up.log 2>&1 || { cat $O/up.log; exit 1; }
trap '$C down > /dev/null 2>&1' EXIT
algs="pmpi,pairwise,nonblocking,linear,scattered,multipair_blocking,multipair_waitany,multipair_testany,tuna:radix=2,tuna:radix=4,tuna:radix=sqrt,tuna_hier_coalesced,tuna_hier_staggered,node_aware"
for place in "4x4 h0:4,h1:4,h2:4,h3:4" "2x8 h0:8,h1:8"; do
    set -- $place
    $C mpirun -H "$2" -np 16 $B --coll alltoallv --algs "$algs" --sizes 16,256,4k,64k \
        --iters 100 --warmup 5 --no-progress --csv $O/a2av-$1.csv > $O/a2av-$1.txt 2>&1
    echo "alltoallv $1 done: $?"
done
# node_aware's leaders: every rank a lane (leaders = Q), against 1, 2 (and 4)
# leaders per host; --burst 2 as in the tables of node_aware's section.
for place in "4x4 h0:4,h1:4,h2:4,h3:4 4 1,2" "2x8 h0:8,h1:8 2 1,2,4"; do
    set -- $place
    la=pmpi,tuna:radix=2,node_aware:radix=$3
    for l in ${4//,/ }; do la="$la,node_aware:radix=$3,leaders=$l"; done
    $C mpirun -H "$2" -np 16 $B --coll alltoallv --algs "$la" --sizes 16,256,1k,4k,64k \
        --iters 100 --warmup 5 --burst 2 --no-progress --csv $O/a2av-leaders-$1.csv \
        > $O/a2av-leaders-$1.txt 2>&1
    echo "alltoallv leaders $1 done: $?"
done
# The default rules (conf/coltune.rules) as a job reads them: Alltoallv's msg_size
# conditions cost the decision an allreduce per call, Alltoall's none.
for coll in alltoall alltoallv; do
    $C mpirun -H h0:4,h1:4,h2:4,h3:4 -np 16 -x COLTUNE_RULES=$here/../../conf/coltune.rules \
        $B --coll $coll --algs "pmpi,node_aware:radix=4,node_aware:radix=4,leaders=1,rules" \
        --sizes 16,256,1k,4k --iters 100 --warmup 5 --burst 2 --no-progress \
        --csv $O/${coll/alltoall/a2a}-default-rules-4x4.csv > /dev/null 2>&1
    echo "$coll default rules done: $?"
done
# 'rules': locality_dense chosen by a rules file without msg_size, as an
# application's MPIX calls would run it (cached decision, no allreduce).
printf 'alltoall_crs locality_dense\nalltoallv_crs locality_dense\n' > $O/dense.rules
for pat in stencil2d random:3; do
    for coll in alltoall_crs alltoallv_crs; do
        $C mpirun -H h0:4,h1:4,h2:4,h3:4 -np 16 -x COLTUNE_RULES=$O/dense.rules $B --coll $coll \
            --pattern $pat --algs all,rules \
            --sizes 16,4k --iters 100 --warmup 5 --no-progress --csv "$O/$coll-${pat%%:*}.csv" > "$O/$coll-${pat%%:*}.txt" 2>&1
        echo "$coll $pat done: $?"
    done
done
for coll in allgather_inter allgatherv_inter; do
    $C mpirun -H h0:4,h1:4 -np 8 $B --coll $coll --group-sizes 4:4 --algs pmpi,segmented,segmented:linear=1,direct \
        --sizes 16,4k,64k,1m --iters 50 --warmup 3 --no-progress --csv $O/$coll.csv > $O/$coll.txt 2>&1
    echo "$coll done: $?"
done
