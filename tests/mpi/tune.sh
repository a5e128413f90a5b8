#!/bin/sh
# coltune-tune --quick on a 4-rank grid: it must finish, write a rules file
# that coltune's own parser accepts (so it names only registered algorithms
# with valid parameters), serve every cell of the grid it measured, and
# report each rule's speedup with its interval. Then two runs of the same
# command on a smaller grid must write the same rules (comments aside), and
# validation must flag no cell the baseline serves (it measures only the
# cells coltune gave another algorithm). Timings are never asserted.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
tune="$top_builddir/scripts/coltune-tune"

# tune_run DIR ARGS...: coltune-tune at 4 ranks into DIR, its log in DIR.log.
tune_run() {
    dir=$1
    shift
    python3 "$tune" -np 4 --quick --outdir "$dir" --bench "$top_builddir/bench/coltune-bench" \
        "$@" > "$dir.log" 2>&1 || { cat "$dir.log"; return 1; }
    cat "$dir.log"
    want="^summary: .* decided for a tuned algorithm, .* decided for the baseline, "
    want="$want.* kept at the baseline for lack of evidence.*; .* validated"
    grep -q "$want" "$dir.log" || { echo "no summary line" >&2; return 1; }
    [ -s "$dir/machine.rules" ] || { echo "no rules file" >&2; return 1; }
    cat "$dir/machine.rules"
    grep -q "^# seed 1, inputs: " "$dir/machine.rules" ||
        { echo "the rules file does not record the seed and inputs" >&2; return 1; }
}

run_all() {
    tune_run "$out/all" --iters 5 || return 1
    # every rule has its measured speedup with an interval in the comment above it
    awk '/^#/ { c = $0; next } NF && !/comm_size=/ { next }
         NF && c !~ /[0-9.]+x \[[0-9.]+, [0-9.]+\]|baseline won|lack of evidence|one choice/ {
             print "rule without an interval: " $0; bad = 1 }
         { c = "" } END { exit bad }' "$out/all/machine.rules"
}
check_run "coltune-tune --quick -np 4" run_all

# Every cell is served by a rule of the file (coltune-info decides as a job
# would: "default" means no rule did).
info="$top_builddir/info/coltune-info"
check_rules() {
    coll=$1
    sizes=$2
    [ -f "$out/all/measure-$coll-P2-ppn0-r1-samples.csv" ] ||
        { echo "$coll was not measured" >&2; return 1; }
    for P in 1 2 3 4; do
        for size in $(echo "$sizes" | tr , ' '); do
            "$info" --check "$out/all/machine.rules" --np "$P" --coll "$coll" \
                --msg-size "$size" --parsable > "$out/ans" || return 1
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

# The validation table: a cell served by the baseline is not validated, so
# never flagged "slower".
baseline_not_flagged() {
    if grep -E "(baseline won|no evidence: baseline kept|the baseline)" "$1" |
        grep -- "<- slower"; then
        echo "a cell the baseline serves is flagged slower" >&2
        return 1
    fi
    if grep -E "(baseline won|no evidence: baseline kept)$" "$1" |
        grep -vE " - +(baseline won|no evidence: baseline kept)$"; then
        echo "a cell the baseline serves was validated" >&2
        return 1
    fi
}

# decisions LOG: "collective P nodes size rule decision" for each cell of the
# tuner's table (decision: tuned, baseline, row for a row given one choice
# after validation, no for lack of evidence).
decisions() {
    awk '$1 ~ /^(alltoall|alltoallv|allgather|allgatherv)(_inter|_crs)?$/ && NF >= 7 &&
         $2 ~ /^[0-9]+$/ {
             d = "baseline"
             if ($NF == "tuned") d = "tuned"
             else if ($0 ~ /no evidence/) d = "no"
             else if ($0 ~ /one choice/) d = "row"
             print $1, $2, $3, $4, $5, d
         }' "$1" | sort
}

# Two runs of one command on a grid whose cells are clear on this machine
# (large wins, clear losses; a margin of 50% keeps near-ties out: at 20% the
# sparse exchange's P=2 row, about 1.2-1.3x here, was decided for
# locality_dense in one fresh-clone CI run and for the baseline in the
# other, each interval narrow but the two runs apart). Every cell
# both runs decide is decided alike (a win in one run is never a loss in the
# other), and on a quiet machine every cell is decided and the two rules files
# are the same. Under CI's load (oversubscribed tests beside it) a cell's
# interval may stay wider than the margin at the iteration cap: it is kept at
# the baseline "for lack of evidence", which is the statistics working, not a
# contradiction; the files then differ in that cell alone. (Asserting equal
# files there made the test fail on timing, once in two fresh-clone CI runs.)
reproducible() {
    for run in a b; do
        tune_run "$out/$run" --colls alltoall,alltoallv_crs --sizes 16,4k --margin 50 \
            --max-iters 640 || return 1
        baseline_not_flagged "$out/$run.log" || return 1
        decisions "$out/$run.log" > "$out/$run.cells"
    done
    [ "$(wc -l < "$out/a.cells")" = 8 ] && [ "$(wc -l < "$out/b.cells")" = 8 ] ||
        { echo "not 8 cells in each table" >&2; cat "$out"/?.cells >&2; return 1; }
    # cells decided in both runs: the same rule and decision
    for run in a b; do
        awk '$6 != "no" { print $1"/"$2"/"$3"/"$4, $5, $6 }' "$out/$run.cells" > "$out/$run.decided"
    done
    join "$out/a.decided" "$out/b.decided" > "$out/both"
    awk '$2 != $4 || $3 != $5 { print "contradiction: " $0; bad = 1 } END { exit bad }' \
        "$out/both" || return 1
    both=$(wc -l < "$out/both")
    echo "$both of 8 cells decided in both runs, alike"
    [ "$both" -ge 4 ] || { echo "fewer than half the cells decided in both runs" >&2; return 1; }
    if ! grep -q ' no$' "$out/a.cells" "$out/b.cells"; then
        grep -v '^#' "$out/a/machine.rules" > "$out/a.rules"
        grep -v '^#' "$out/b/machine.rules" > "$out/b.rules"
        diff "$out/a.rules" "$out/b.rules" || { echo "two runs wrote different rules" >&2; return 1; }
    fi
}
check_run "coltune-tune twice: the same rules, no baseline cell flagged" reproducible
check_run "no baseline cell flagged in the full quick run" baseline_not_flagged "$out/all.log"
finish
