#!/bin/sh
# coltune-tune --quick on a 4-rank grid: it must finish, write a rules file
# that coltune's own parser accepts (so it names only registered algorithms
# with valid parameters), and serve every cell of the grid it measured.
# Timings are never asserted.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
tune="$top_builddir/scripts/coltune-tune"

run_tune() {
    python3 "$tune" -np 4 --quick --iters 5 --outdir "$out" \
        --bench "$top_builddir/bench/coltune-bench" > "$out/log" 2>&1 ||
        { cat "$out/log"; return 1; }
    cat "$out/log"
    grep -q "^summary: " "$out/log" || { echo "no summary line" >&2; return 1; }
    [ -s "$out/machine.rules" ] || { echo "no rules file" >&2; return 1; }
    cat "$out/machine.rules"
}
check_run "coltune-tune --quick -np 4" run_tune

check_rules() {
    coll=$1
    sizes=$2
    [ -f "$out/measure-$coll-P2-ppn0.csv" ] || { echo "$coll was not measured" >&2; return 1; }
    "$top_builddir/tests/unit/rules_check" "$out/machine.rules" "$coll" 1,2,3,4 "$sizes"
}
for coll in alltoallv alltoall allgather_inter allgatherv_inter alltoall_crs alltoallv_crs; do
    check_run "rules cover the $coll grid" check_rules "$coll" 0,16,256,4096,65536,1048576,8388608
done
finish
