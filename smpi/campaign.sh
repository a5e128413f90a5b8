#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# campaign.sh - the simulated runs behind docs/simulation.md, in two lanes
# that run side by side (one simulation per core). A development helper, not
# installed:
#
#   smpi/campaign.sh BUILDDIR OUTDIR [A|B]
#
# BUILDDIR is a configured build with 'make smpi' done (scripts/coltune-sim and
# smpi/coltune-bench); every step writes OUTDIR/<step>/ (coltune-sim's outputs)
# and OUTDIR/<step>.log. Then smpi/report.py turns them into the plots and
# tables (see docs/simulation.md, "Reproducing"). Wall time on the 2-core
# development machine: about 2 hours with both lanes. A run that exceeds its
# --timeout is recorded as "timeout" (SimGrid's cost grows with the number of
# concurrent large messages). Every step resumes (coltune-sim --resume): run
# the campaign again and it goes on where it was stopped.
set -u
build=$(cd "$1" && pwd)
out=$2
lanes=${3:-A B}
mkdir -p "$out"
out=$(cd "$out" && pwd)
sim() { # sim STEP coltune-sim-ARGS...
    step=$1
    shift
    echo "$(date +%T) start $step"
    python3 "$build/scripts/coltune-sim" --bench "$build/smpi/coltune-bench" --jobs 1 \
        --resume --outdir "$out/$step" "$@" >> "$out/$step.log" 2>&1
    echo "$(date +%T) done  $step (exit $?)"
}
radices="tuna:radix=2;tuna:radix=4;tuna:radix=8;tuna:radix=16;tuna:radix=32;tuna:radix=64"

lane_a() {
    # [Fan2024] Fig. 7: TuNA against its radix, small to large blocks; at
    # P = 128 every radix up to P, at larger P the large radices only where
    # they fit the wall-time budget.
    sim radix-polaris-128 --platform polaris -P 128 --sizes 16,256,2k,16k,64k \
        --algs "$radices;tuna:radix=sqrt;tuna:radix=127;tuna:radix=128" --natives mpich,ompi \
        --timeout 400
    sim radix-polaris-256 --platform polaris -P 256 --sizes 16,256,2k,16k \
        --algs "$radices;tuna:radix=128;tuna:radix=256" --natives mpich,ompi --timeout 240
    sim radix-polaris-1024 --platform polaris -P 1024 --sizes 16,256 \
        --algs "$radices" --natives mpich,ompi --timeout 900
    # Fig. 7 again on the torus (48-rank nodes).
    sim radix-fugaku-192 --platform fugaku -P 192 --sizes 16,256,2k,16k \
        --algs "tuna:radix=2;tuna:radix=4;tuna:radix=8;tuna:radix=sqrt;tuna:radix=32;tuna:radix=64;tuna:radix=192" \
        --natives ompi,mpich --timeout 300
}

lane_b() {
    # [Fan2024] section IV: the hierarchical variants against TuNA.
    hier="tuna_hier_coalesced:radix=2..Q,block_count=1..N-1"
    hier="$hier;tuna_hier_staggered:radix=2..Q,block_count=1..(N-1)*Q"
    sim hier-polaris --platform polaris -P 256,512 --sizes 16,256 \
        --algs "tuna:radix=2;tuna:radix=4;tuna:radix=sqrt;$hier" --natives mpich,ompi \
        --timeout 900
    # [Kang2019]: intergroup Allgather, segmented against root gathering, with
    # one rank per node (the paper's setting) and with full 32-rank nodes.
    sim inter-polaris-ppn1 --platform polaris --ppn 1 -P 16,64,128,256 \
        --colls allgather_inter --sizes 16k,256k,1m --natives mpich,ompi --timeout 600
    sim inter-polaris --platform polaris -P 64,128,256,512 --colls allgather_inter \
        --sizes 1k,16k,256k --natives mpich,ompi --timeout 600
    # [Geyko2023]: locality-aware aggregation of the SDDE as P grows, with 16
    # and with 128 destinations per rank.
    sim sdde-polaris --platform polaris -P 64,128,256,512,1024 --colls alltoall_crs \
        --sizes 16,4k --bench-args "--pattern random:16" --timeout 600
    sim sdde-polaris-dense --platform polaris -P 128,256,512,1024 --colls alltoall_crs \
        --sizes 16,1k --bench-args "--pattern random:128" --timeout 600
    # The hierarchical variants at P = 1024 last: the longest runs.
    sim hier-polaris-1024 --platform polaris -P 1024 --sizes 16,256 \
        --algs "tuna:radix=2;tuna:radix=4;tuna:radix=sqrt;$hier" --natives mpich \
        --timeout 900
}

for lane in $lanes; do
    case $lane in
    A) lane_a > "$out/laneA.out" 2>&1 & ;;
    B) lane_b > "$out/laneB.out" 2>&1 & ;;
    *) echo "campaign.sh: unknown lane '$lane' (A or B)" >&2; exit 2 ;;
    esac
done
wait
