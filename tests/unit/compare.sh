#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# coltune-compare (scripts/coltune-compare.in) on stand-ins: a launcher that
# runs the program once with the -x variables it is given, and IMB-MPI1 and
# OSU programs that print their real output formats with times chosen here
# (coltune's runs, LD_PRELOAD set, 2x faster, except one run per cell 0.8x
# as fast; the A/A runs, COLTUNE_DISABLE=1 too, 0.8x). Checks the alternation of native and coltune runs, the parsing
# of both formats, each cell's median and worst ratio, the flags, runs.csv
# and the exit status. No MPI, no timing.
: "${top_builddir:=$(pwd)}"
compare="$top_builddir/scripts/coltune-compare"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The launcher: --version, then [-x K=V]... -np N prog args.
cat > "$tmp/launch" <<'SH'
#!/bin/sh
[ "$1" = --version ] && { echo "mpirun (Open MPI) 4.1.4"; exit 0; }
while [ $# -gt 0 ]; do
    case $1 in
    -x) export "$2"; shift 2 ;;
    -np) shift 2 ;;
    --oversubscribe) shift ;;
    --mca) shift 3 ;;
    *) break ;;
    esac
done
exec "$@"
SH
# time_of SIZE: native 10 + SIZE/1000 us; coltune half of it, and 1.25 times
# native in its run number $SLOW (counted per program in $STATE).
cat > "$tmp/times.sh" <<'SH'
side=native
[ -n "${LD_PRELOAD:-}" ] && side=coltune
[ "${COLTUNE_DISABLE:-}" = 1 ] && side=aa
echo "$side" >> "$STATE/order"
n=$(grep -c . "$STATE/order")
time_of() {
    awk -v s="$1" -v side=$side -v n="$n" -v slow="${SLOW:-0}" 'BEGIN {
        t = 10 + s / 1000; if (side == "coltune") t = (n == slow) ? t * 1.25 : t / 2
        if (side == "aa") t = t * 1.25
        printf "%.2f", t }'
}
SH
cat > "$tmp/IMB-MPI1" <<'SH'
#!/bin/sh
. "$(dirname "$0")/times.sh"
echo "#----------------------------------------------------------------"
echo "# Benchmarking $1"
echo "# #processes = 4"
echo "#----------------------------------------------------------------"
echo "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]"
for s in 0 1 2 4; do
    t=$(time_of $s)
    printf "%13d %12d %12s %12s %12s\n" "$s" 1000 0.01 99.0 "$t"
done
echo
echo "# All processes entering MPI_Finalize"
SH
mkdir "$tmp/osu"
cat > "$tmp/osu/osu_alltoallv" <<'SH'
#!/bin/sh
. "$(dirname "$0")/../times.sh"
echo "# OSU MPI All-to-Allv Personalized Exchange Latency Test v5.3"
echo "# Size       Avg Latency(us)"
for s in 1 2 4; do printf "%-10d%18s\n" "$s" "$(time_of $s)"; done
SH
cp "$tmp/osu/osu_alltoallv" "$tmp/osu/osu_alltoall"
chmod +x "$tmp/launch" "$tmp/IMB-MPI1" "$tmp/osu/osu_alltoall" "$tmp/osu/osu_alltoallv"
: > "$tmp/libcoltune.so"

# run NAME SLOW ARGS...: coltune-compare with the stand-ins; status in $rc.
run() {
    name=$1 slow=$2
    shift 2
    mkdir -p "$tmp/$name"
    STATE="$tmp/$name" SLOW=$slow python3 "$compare" --launcher "$tmp/launch" \
        --lib "$tmp/libcoltune.so" --out "$tmp/$name/out" --build "$tmp/$name/build" \
        --max-size 4 "$@" > "$tmp/$name/table" 2> "$tmp/$name/log"
    rc=$?
}

# Three pairs of IMB Alltoallv at P=4: runs alternate, native first.
run imb 0 --imb "$tmp/IMB-MPI1" -np 4 --pairs 3 --colls alltoallv
[ "$rc" = 0 ] || fail "imb: exit $rc, expected 0 (nothing below a target)"
[ "$(tr '\n' ' ' < "$tmp/imb/order")" = "native coltune coltune native native coltune " ] ||
    fail "imb: runs in order $(tr '\n' ' ' < "$tmp/imb/order")"
# 0 B: native 10, coltune 5: ratio 2.00 in every pair; 4 B: 10.004 / 5.002
grep -Eq '^imb +alltoallv +4 +0 +10\.0 +5\.0 +2\.00 +2\.00 *$' "$tmp/imb/table" ||
    fail "imb: no 0 B row of ratio 2.00: $(cat "$tmp/imb/table")"
[ "$(grep -c '^imb ' "$tmp/imb/table")" = 4 ] || fail "imb: not one row per size 0, 1, 2, 4"
[ "$(grep -c . "$tmp/imb/out/runs.csv")" = 13 ] || fail "imb: runs.csv has not 3 x 4 rows"
grep -q '^0 of 4 cells below a target' "$tmp/imb/table" || fail "imb: summary line"

# OSU, both collectives, the third run (coltune's second) slow: 0.8x in one
# pair of alltoall, the first collective measured; its median stays 2.00.
run osu 3 --osu "$tmp/osu" -np 4 --pairs 3
[ "$rc" = 1 ] || fail "osu: exit $rc, expected 1 (a run below 0.9)"
grep -Eq '^osu +alltoall +4 +1 +10\.0 +5\.0 +2\.00 +0\.80 +run *$' "$tmp/osu/table" ||
    fail "osu: no 1 B alltoall row with worst 0.80: $(cat "$tmp/osu/table")"
grep -Eq '^osu +alltoallv +4 +1 .* 2\.00 +2\.00 *$' "$tmp/osu/table" ||
    fail "osu: the alltoallv rows are not 2.00"
grep -q '^3 of 6 cells below a target (median 0.97, every run 0.90):' "$tmp/osu/table" ||
    fail "osu: summary line: $(tail -n 5 "$tmp/osu/table")"

# --aa: a third run per pair, the order rotating; its columns (native 10
# against 12.5: 0.80) beside coltune's, and in runs.csv.
run aa 0 --imb "$tmp/IMB-MPI1" -np 4 --pairs 3 --colls alltoall --aa
[ "$rc" = 0 ] || fail "aa: exit $rc, expected 0 (the A/A ratio is no target)"
[ "$(tr '\n' ' ' < "$tmp/aa/order")" = \
    "native coltune aa coltune aa native aa native coltune " ] ||
    fail "aa: runs in order $(tr '\n' ' ' < "$tmp/aa/order")"
grep -Eq '^imb +alltoall +4 +0 +10\.0 +5\.0 +2\.00 +2\.00 +0\.80 +0\.80 *$' "$tmp/aa/table" ||
    fail "aa: no A/A columns of 0.80: $(cat "$tmp/aa/table")"
grep -q '^imb,alltoall,4,0,1,10.0,5.0,2.0000,12.5,0.8000$' "$tmp/aa/out/runs.csv" ||
    fail "aa: runs.csv: $(head -n 3 "$tmp/aa/out/runs.csv")"

# A median below --min-median flags the cell as such.
run strict 0 --osu "$tmp/osu" -np 4 --pairs 1 --colls alltoall --min-median 2.5
grep -Eq '^osu +alltoall +4 +1 .* median *$' "$tmp/strict/table" || fail "strict: no median flag"
[ "$rc" = 1 ] || fail "strict: exit $rc"

# Usage: no benchmark named, an unknown collective, a path that is neither.
run usage 0 -np 4
[ "$rc" = 2 ] || fail "usage: exit $rc without --imb or --osu"
run coll 0 --imb "$tmp/IMB-MPI1" --colls bcast
[ "$rc" = 2 ] && grep -q "unknown collective 'bcast'" "$tmp/coll/log" || fail "coll: $rc"
run notree 0 --osu "$tmp"
[ "$rc" = 2 ] && grep -q "neither a folder with osu_alltoallv nor an OSU source tree" \
    "$tmp/notree/log" || fail "notree: $rc $(cat "$tmp/notree/log")"
echo "PASS: coltune-compare on stand-in benchmarks"
