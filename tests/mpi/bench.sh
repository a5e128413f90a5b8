#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# coltune-bench (bench/) on a tiny grid: every registered algorithm of every
# collective at its default parameters (and "rules"), --check against the
# PMPI_ result: alltoallv under every block-size distribution, alltoall, their
# nonblocking forms (and --overlap, --persistent), the intercommunicator Allgather(v) and
# its nonblocking forms at group sizes 1:3 and 2:2 under the
# settings of [Kang2019], the SDDE collectives under random and stencil
# patterns with and without emulated nodes, the neighbourhood all-to-alls
# (blocking, nonblocking, persistent) on a graph, rules on its degree and
# offnode; --sweep of alltoall and
# alltoallv under a rules file (the table's shape and its algorithm column);
# and the exit codes of usage errors.
#   CT_BENCH_NP   the P of the runs (default 4)
# The functions below run through check_run (common.sh):
# shellcheck disable=SC2317
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
bench="$top_builddir/bench/coltune-bench"
P=${CT_BENCH_NP:-4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The CSV of collective COLL must have a header and one row per spec and
# size, all "ok"; internode_msgs (the field before status) is a count for the SDDE
# collectives and empty for the others.
check_csv() {
    csv=$1
    sizes=$2
    coll=$3
    specs=$(grep -c "^$coll," "$csv")
    head -n 1 "$csv" |
        grep -q '^collective,algorithm,params,P,nodes,ppn,size,.*,internode_msgs,status$' || {
        echo "$csv: bad header" >&2
        return 1
    }
    if [ "$specs" = 0 ] || [ $((specs % sizes)) != 0 ]; then
        echo "$csv: $specs rows for $sizes sizes" >&2
        return 1
    fi
    if grep "^$coll," "$csv" | grep -v ',ok$' >&2; then
        echo "$csv: rows above are not ok" >&2
        return 1
    fi
    case $coll in *_crs) want='^[0-9][0-9]*$' ;; *) want='^$' ;; esac
    if grep "^$coll," "$csv" | awk -F, '{ print $(NF - 1) }' | grep -v "$want" >&2; then
        echo "$csv: bad internode_msgs above" >&2
        return 1
    fi
}

# bench_run LABEL COLL SIZES ARGS...: every algorithm and "rules" of COLL with
# --check at P ranks must exit 0 and write its CSV.
# (POSIX sh has no locals: names differ from common.sh's "label".)
bench_run() {
    name=$1
    coll=$2
    sizes=$3
    shift 3
    run_mpi "$P" "$bench" --coll "$coll" --algs all,rules --sizes "$sizes" --iters 2 \
        --warmup 1 --check --no-progress --csv "$tmp/$name.csv" "$@" > "$tmp/$name.out" || {
        cat "$tmp/$name.out"
        return 1
    }
    cat "$tmp/$name.out"
    check_csv "$tmp/$name.csv" "$(echo "$sizes" | tr , '\n' | wc -l)" "$coll"
}

for dist in uniform normal powerlaw fft-n1 fft-n2 equal; do
    check_run "bench P=$P alltoallv --check dist=$dist" bench_run "$dist" alltoallv 16,1k \
        --dist "$dist"
done
check_run "bench P=$P alltoallv --check --ppn 2" bench_run ppn2 alltoallv 16,1k --ppn 2 \
    --seed 12345
check_run "bench P=$P alltoall --check" bench_run alltoall alltoall 0,16,1k
check_run "bench P=$P alltoall --check --ppn 2" bench_run alltoall-ppn2 alltoall 16,1k --ppn 2

# --aa and --samples (what coltune-tune reads): the baseline timed twice, its
# copy "pmpi#2" in the middle of the list, the speedups still over the first;
# one samples row per spec, size and iteration.
samples_run() {
    run_mpi "$P" "$bench" --coll alltoallv --algs pmpi,linear,pairwise --aa --sizes 16,1k \
        --iters 3 --warmup 1 --no-progress --csv "$tmp/aa.csv" --samples "$tmp/aa-samples.csv" \
        > "$tmp/aa.out" || { cat "$tmp/aa.out"; return 1; }
    cat "$tmp/aa.out" "$tmp/aa-samples.csv"
    head -n 1 "$tmp/aa-samples.csv" |
        grep -qx 'collective,algorithm,params,P,nodes,ppn,size,slot,iteration,time_us' ||
        { echo "bad samples header" >&2; return 1; }
    # 4 specs (pmpi, linear, pmpi#2, pairwise) x 2 sizes x 3 iterations
    [ "$(tail -n +2 "$tmp/aa-samples.csv" | wc -l)" = 24 ] || { echo "samples rows" >&2; return 1; }
    [ "$(grep -c '^alltoallv,pmpi#2,,' "$tmp/aa-samples.csv")" = 6 ] &&
        grep -q '^alltoallv,pmpi#2,,.*,2,0,[0-9.]*$' "$tmp/aa-samples.csv" ||
        { echo "no A/A copy in slot 2 of the samples" >&2; return 1; }
    grep -q '^alltoallv,pmpi,,.*,1.0000,,ok$' "$tmp/aa.csv" &&
        [ "$(grep -c '^alltoallv,pmpi#2,,' "$tmp/aa.csv")" = 2 ] ||
        { echo "CSV: pmpi not the reference, or no pmpi#2 rows" >&2; return 1; }
}
check_run "bench P=$P --aa --samples" samples_run

# --burst 3: each turn is 3 calls, the last timed. coltune's statistics count
# them: 1 probe call + (1 warmup + 2 timed iterations) x 3 = 10 per spec, and
# the samples still hold one time per timed iteration.
burst_run() {
    COLTUNE_STATS=1 run_mpi "$P" "$bench" --coll alltoallv --algs pmpi,linear --sizes 16 \
        --iters 2 --warmup 1 --burst 3 --no-progress --samples "$tmp/burst-samples.csv" \
        > "$tmp/burst.out" 2>&1 || { cat "$tmp/burst.out"; return 1; }
    cat "$tmp/burst.out"
    grep -q '^# coltune-bench alltoallv: .* burst=3 ' "$tmp/burst.out" &&
        grep -Eq '^alltoallv +linear +10 ' "$tmp/burst.out" &&
        [ "$(tail -n +2 "$tmp/burst-samples.csv" | wc -l)" = 4 ] ||
        { echo "not 3 calls per turn, or not one sample per iteration" >&2; return 1; }
}
check_run "bench P=$P --burst 3" burst_run

# --timing b2b: a turn's calls back to back, 10 by default: 1 probe + (1
# warmup + 2 timed) x 10 = 31 calls per spec, still one sample per timed
# iteration (the mean of the turn's calls), each a positive time.
b2b_run() {
    COLTUNE_STATS=1 run_mpi "$P" "$bench" --coll alltoallv --algs pmpi,linear --sizes 16 \
        --iters 2 --warmup 1 --timing b2b --no-progress --samples "$tmp/b2b-samples.csv" \
        > "$tmp/b2b.out" 2>&1 || { cat "$tmp/b2b.out"; return 1; }
    cat "$tmp/b2b.out"
    grep -q '^# coltune-bench alltoallv: .* burst=10 timing=b2b ' "$tmp/b2b.out" &&
        grep -Eq '^alltoallv +linear +31 ' "$tmp/b2b.out" &&
        [ "$(tail -n +2 "$tmp/b2b-samples.csv" | wc -l)" = 4 ] &&
        tail -n +2 "$tmp/b2b-samples.csv" | awk -F, '{ if (!($NF > 0)) exit 1 }' ||
        { echo "not 10 calls back to back per turn, or not one sample per iteration" >&2
          return 1; }
}
check_run "bench P=$P --timing b2b" b2b_run

# The nonblocking collectives (each call started, then waited for).
check_run "bench P=$P ialltoallv --check" bench_run ialltoallv ialltoallv 16,1k
check_run "bench P=$P ialltoall --check" bench_run ialltoall ialltoall 0,16,1k
# Their persistent forms: a request per spec and size, made once, started per
# call (coltune_alltoallv_init), pmpi the library's own persistent call.
persistent_run() { # NAME COLL SIZES
    bench_run "$@" --persistent || return 1
    grep -q "^# coltune-bench $2 (persistent: made once, started per call): " \
        "$tmp/$1.out" || { echo "no persistent header" >&2; return 1; }
}
check_run "bench P=$P ialltoallv --persistent --check" persistent_run ialltoallv-p ialltoallv 16,1k
check_run "bench P=$P ialltoall --persistent --check" persistent_run ialltoall-p ialltoall 0,16,1k
# The neighbourhood all-to-alls on --pattern's graph, blocking, nonblocking
# and persistent (coltune_neighbor_alltoallv, coltune_ineighbor_alltoallv,
# coltune_neighbor_alltoallv_init).
check_run "bench P=$P neighbor_alltoallv --check" bench_run nbv neighbor_alltoallv 16,1k \
    --pattern random:3
check_run "bench P=$P ineighbor_alltoallv --check" bench_run inbv ineighbor_alltoallv 0,1k \
    --pattern stencil2d
check_run "bench P=$P ineighbor_alltoall --persistent --check" persistent_run inb-p \
    ineighbor_alltoall 16,1k --pattern random:3

# Rules on the graph (degree, offnode), agreed when coltune reads it, on
# random:k:f graphs of P=4 ranks on emulated nodes of 2: k destinations per
# rank, f% of them on the other node (a rank has one other on its own).
graph_rules_run() { # PATTERN DEGREE OFFNODE CHOICE
    printf '%s\n' 'neighbor_alltoallv degree=3- direct' \
        'neighbor_alltoallv offnode=40-60 degree=2 locality' > "$tmp/graph.rules"
    COLTUNE_RULES="$tmp/graph.rules" COLTUNE_VERBOSE=1 run_mpi 4 "$bench" \
        --coll neighbor_alltoallv --ppn 2 --pattern "$1" --algs rules --sizes 1k --iters 2 \
        --warmup 1 --check --no-progress > "$tmp/graph.out" 2>&1 ||
        { cat "$tmp/graph.out"; return 1; }
    cat "$tmp/graph.out"
    grep -q "^coltune\[0\]: neighbourhood of comm#[0-9]*: degree=$2 offnode=$3 " \
        "$tmp/graph.out" || { echo "no degree=$2 offnode=$3" >&2; return 1; }
    grep -q "^coltune\[0\]: neighbor_alltoallv on comm#[0-9]* (P=4 nodes=2 ppn=2): $4\$" \
        "$tmp/graph.out" || { echo "not chosen: $4" >&2; return 1; }
}
if [ "$P" = 4 ]; then
    check_run "bench neighbor_alltoallv rules on degree=2 offnode=50" graph_rules_run \
        random:2:50 2 50 "locality:large=4096,steps=3,shm=0,shm_large=65536 \\[rule line 2\\]"
    check_run "bench neighbor_alltoallv rules on degree=3" graph_rules_run random:3 3 67 \
        "direct \\[rule line 1\\]"
    check_run "bench neighbor_alltoallv rules on degree=1 offnode=100" graph_rules_run \
        random:1:100 1 100 "pmpi \\[default\\]"
fi

# --overlap: after the table, one line per spec with its overlap; each spec
# runs its timed iterations twice (alone, then around the computation): 1
# probe + 1 warmup + 2 timed + 2 overlapped = 6 calls, by coltune's statistics.
overlap_run() {
    COLTUNE_STATS=1 run_mpi "$P" "$bench" --coll ialltoall --algs pmpi,linear --sizes 1k \
        --iters 2 --warmup 1 --overlap --no-progress > "$tmp/overlap.out" 2>&1 ||
        { cat "$tmp/overlap.out"; return 1; }
    cat "$tmp/overlap.out"
    for spec in pmpi linear; do
        grep -Eq "^overlap +size 1k [a-z0-9]+: $spec, time [0-9.]+ us, compute [0-9.]+ us, total [0-9.]+ us, overlap [0-9]+%$" \
            "$tmp/overlap.out" || { echo "no overlap line for $spec" >&2; return 1; }
    done
    grep -Eq '^ialltoall +linear +6 ' "$tmp/overlap.out" ||
        { echo "not 6 calls of linear (1 probe, 1 warmup, 2 timed, 2 overlapped)" >&2
          return 1; }
}
check_run "bench P=$P ialltoall --overlap" overlap_run

# Intercommunicators: groups 1:3 and 2:2 (of 4 ranks), settings of [Kang2019].
inter_run() { # GROUPS COLL SETTING
    check_run "bench P=4 $2 --group-sizes $1 --setting $3 --check" bench_run \
        "$2-$3-${1%:*}" "$2" 16,1k --group-sizes "$1" --setting "$3"
}
if [ "$P" = 4 ]; then
    inter_run 1:3 allgather_inter 1
    inter_run 1:3 allgather_inter 3
    inter_run 2:2 allgather_inter 4
    inter_run 1:3 allgatherv_inter 8
    inter_run 2:2 allgatherv_inter 5
    inter_run 2:2 allgatherv_inter 6
    inter_run 1:3 iallgather_inter 3
    inter_run 2:2 iallgatherv_inter 6
else
    skip_part "intercommunicator Allgather(v) runs" "their group sizes are for P=4 (CT_BENCH_NP=$P)"
fi

# Sparse dynamic data exchange: real and emulated nodes.
for coll in alltoall_crs alltoallv_crs; do
    check_run "bench P=$P $coll random:3 --check" bench_run "$coll" "$coll" 4,256
    check_run "bench P=$P $coll random:3 --ppn 2 --check" bench_run "$coll-ppn" "$coll" 4,256 \
        --ppn 2 --seed 7
    check_run "bench P=$P $coll stencil2d --ppn 2 --check" bench_run "$coll-st" "$coll" 4,256 \
        --ppn 2 --pattern stencil2d
done

# --sweep (what IMB and OSU measure) with a rules file that chooses another
# algorithm per size range: after the '#' lines, one line per size in order,
# whose algorithm is what coltune-info --check says the rules choose at that
# msg_size (an MPI_Alltoall of 0 bytes goes to the MPI library whatever the
# rules say: pmpi, and coltune-info says so too), with positive times and
# ratio, and the closing summary line. Timings are never compared.
cat > "$tmp/sweep.rules" << 'EOF'
alltoall   msg_size=0-16    tuna:radix=3
alltoall   msg_size=17-1k   scattered:block_count=2
alltoall   msg_size=1025-   pairwise
alltoallv  msg_size=0-16    multipair_waitany:stride=2
alltoallv  msg_size=17-1k   linear
alltoallv                   pmpi
EOF
sweep_sizes="0 1 16 64 1k 2k"
info="$top_builddir/info/coltune-info"
sweep_expected() { # COLL SIZE: the algorithm the rules choose
    "$info" --parsable --check "$tmp/sweep.rules" --np "$P" --coll "$1" --msg-size "$2" |
        sed -n "s/^decision:$1:[^:]*:[^:]*://p"
}
sweep_run() {
    coll=$1
    out="$tmp/sweep-$coll.out"
    COLTUNE_RULES="$tmp/sweep.rules" run_mpi "$P" "$bench" --sweep --coll "$coll" \
        --sizes "$(echo "$sweep_sizes" | tr ' ' ,)" --iters 2 --warmup 1 --check --no-progress \
        > "$out" || { cat "$out"; return 1; }
    cat "$out"
    grep -v '^#' "$out" > "$tmp/rows"
    [ "$(wc -l < "$tmp/rows")" = "$(echo "$sweep_sizes" | wc -w)" ] ||
        { echo "not one line per size" >&2; return 1; }
    for size in $sweep_sizes; do
        want=$(sweep_expected "$coll" "$size")
        [ -n "$want" ] || { echo "coltune-info gave no decision at $size" >&2; return 1; }
        line=$(awk -v s="$size" '$1 == s' "$tmp/rows")
        echo "$line" | awk -v w="$want" 'NF == 5 && $5 == w && $2 + 0 > 0 && $3 + 0 > 0 &&
            $4 ~ /^[0-9]+\.[0-9]+$/ && $4 + 0 > 0 { ok = 1 } END { exit !ok }' ||
            { echo "size $size: expected $want and positive numbers: '$line'" >&2; return 1; }
    done
    [ "$(awk '{ print $1 }' "$tmp/rows" | tr '\n' ' ')" = "$sweep_sizes " ] ||
        { echo "sizes out of order" >&2; return 1; }
    grep -Eq "^# summary: smallest ratio [0-9]+\.[0-9]+ at size [0-9]+k?; [0-9]+ of 6 sizes below 0\.97$" \
        "$out" || { echo "no summary line" >&2; return 1; }
}
check_run "bench P=$P --sweep alltoall --check" sweep_run alltoall
check_run "bench P=$P --sweep alltoallv --check" sweep_run alltoallv

# expect_exit CODE ARGS...: the bench exits with CODE.
expect_exit() {
    want=$1
    shift
    run_mpi 2 "$bench" "$@" > "$tmp/out" 2> "$tmp/err"
    got=$?
    [ "$got" = "$want" ] && grep -q "coltune-bench: error:" "$tmp/err" && return 0
    echo "exit $got (expected $want) for: $*" >&2
    cat "$tmp/err" >&2
    return 1
}
check_run "bench usage error exits 2" expect_exit 2 --sizes 4x
check_run "bench --burst 0 exits 2" expect_exit 2 --burst 0
check_run "bench --timing other exits 2" expect_exit 2 --timing other
check_run "bench unknown algorithm exits 2" expect_exit 2 --algs pmpi,nosuch
check_run "bench unknown collective exits 2" expect_exit 2 --coll nosuch
check_run "bench group sizes not the world exits 2" expect_exit 2 --coll allgather_inter \
    --group-sizes 1:2
check_run "bench Allgatherv setting for Allgather exits 2" expect_exit 2 \
    --coll allgather_inter --setting 6
check_run "bench --sweep of allgather_inter exits 2" expect_exit 2 --sweep --coll allgather_inter
check_run "bench --persistent of a blocking collective exits 2" expect_exit 2 --persistent
check_run "bench --sweep of two specs exits 2" expect_exit 2 --sweep --algs pmpi,linear,pairwise
check_run "bench --overlap of a blocking collective exits 2" expect_exit 2 --overlap \
    --coll alltoall
check_run "bench --overlap with --timing b2b exits 2" expect_exit 2 --overlap \
    --coll ialltoall --timing b2b
finish
