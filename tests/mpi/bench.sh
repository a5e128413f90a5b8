#!/bin/sh
# coltune-bench (bench/) on a tiny grid: every registered alltoallv algorithm
# at its default parameters, --check against PMPI_Alltoallv, every block-size
# distribution, emulated nodes, and the exit codes of usage errors.
#   CT_BENCH_NP   the P of the runs (default 4)
# The functions below run through check_run (common.sh):
# shellcheck disable=SC2317
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
bench="$top_builddir/bench/coltune-bench"
P=${CT_BENCH_NP:-4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The CSV must have a header and one row per spec and size, all "ok".
check_csv() {
    csv=$1
    sizes=$2
    specs=$(grep -c '^alltoallv,' "$csv")
    head -n 1 "$csv" | grep -q '^collective,algorithm,params,P,nodes,ppn,size,' || {
        echo "$csv: bad header" >&2
        return 1
    }
    if [ "$specs" = 0 ] || [ $((specs % sizes)) != 0 ]; then
        echo "$csv: $specs rows for $sizes sizes" >&2
        return 1
    fi
    if grep '^alltoallv,' "$csv" | grep -v ',ok$' >&2; then
        echo "$csv: rows above are not ok" >&2
        return 1
    fi
}

# bench_run LABEL ARGS...: the bench with --check must exit 0 and write its CSV.
# (POSIX sh has no locals: names differ from common.sh's "label".)
bench_run() {
    name=$1
    shift
    run_mpi "$P" "$bench" --coll alltoallv --algs all --sizes 16,1k --iters 3 --warmup 1 \
        --check --no-progress --csv "$tmp/$name.csv" "$@" > "$tmp/$name.out" || {
        cat "$tmp/$name.out"
        return 1
    }
    cat "$tmp/$name.out"
    check_csv "$tmp/$name.csv" 2
}

for dist in uniform normal powerlaw fft-n1 fft-n2; do
    check_run "bench P=$P --check dist=$dist" bench_run "$dist" --dist "$dist"
done
check_run "bench P=$P --check --ppn 2" bench_run ppn2 --ppn 2 --seed 12345

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
check_run "bench unknown algorithm exits 2" expect_exit 2 --algs pmpi,nosuch
check_run "bench unavailable collective exits 2" expect_exit 2 --coll alltoallv_crs
finish
