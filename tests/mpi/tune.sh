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

# Every cell is served by a rule of the file (coltune-info decides as a job
# would: "default" means no rule did).
info="$top_builddir/info/coltune-info"
check_rules() {
    coll=$1
    sizes=$2
    [ -f "$out/measure-$coll-P2-ppn0.csv" ] || { echo "$coll was not measured" >&2; return 1; }
    for P in 1 2 3 4; do
        for size in $(echo "$sizes" | tr , ' '); do
            "$info" --check "$out/machine.rules" --np "$P" --coll "$coll" --msg-size "$size" \
                --parsable > "$out/ans" || return 1
            grep "^decision:$coll:" "$out/ans" || { cat "$out/ans"; return 1; }
            if grep -q "^decision:$coll:[^:]*:default:" "$out/ans"; then
                echo "P=$P size=$size: no rule serves the cell" >&2
                return 1
            fi
        done
    done
}
for coll in alltoallv alltoall allgather_inter allgatherv_inter alltoall_crs alltoallv_crs; do
    check_run "rules cover the $coll grid" check_rules "$coll" 0,16,256,4096,65536,1048576,8388608
done

# What the tuner writes is checked by coltune-info --check: a file a job
# would reject stops it with the errors.
check_rejects() {
    printf 'alltoallv comm_size=4-2 pmpi\nalltoallv pmpi\n' > "$out/bad.rules"
    python3 - "$tune" "$out/bad.rules" > "$out/rej" 2>&1 <<'PY'
import importlib.machinery, importlib.util, sys
loader = importlib.machinery.SourceFileLoader("tune", sys.argv[1])
spec = importlib.util.spec_from_loader("tune", loader)
tune = importlib.util.module_from_spec(spec)
loader.exec_module(tune)
try:
    tune.check_rules(sys.argv[2])
except SystemExit as e:
    print(e)
    sys.exit(0)
sys.exit("a broken rules file passed check_rules")
PY
    rc=$?
    cat "$out/rej"
    [ $rc = 0 ] && grep -q "bad.rules:1:21: empty range" "$out/rej"
}
check_run "the tuner refuses a rules file jobs would reject" check_rejects
finish
