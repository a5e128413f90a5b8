#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The one list of collectives and algorithms (src/coll_list.h) against the
# lists that are not derived from it: the README's and docs/using.md's
# tables, the ALGORITHMS section and variables of coltune(7), the tables of
# coltune_alltoallv(3) and coltune_alltoall(3), coltune.rules(5), the
# tuner's COLLECTIVES, the simulator's NATIVE_KEYS, coltune-bench's --coll
# help, Makefile.am's sources and the call loop of tests/mpi/info.sh. Each
# disagreement is one line naming the file. The C lists (registry, names, variables, drivers) are
# derived from the list by the preprocessor, so they cannot disagree.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# The list, one record a line: "coll NAME ID CALL FALLBACK" and
# "alg COLL NAME FILE" (FILE: the algorithm's source file, "-" for pmpi,
# which lives in the collective's driver).
${MPICC:-cc} -E -P -x c -I src - > "$tmp/cpp" <<'EOF' || { echo "FAIL: cannot preprocess src/coll_list.h"; exit 1; }
#define CT_COLLECTIVE(ID, name, call, fallback, known) @coll name ID call fallback
#define CT_ALLTOALLV_ALG(name, ...) @alg alltoallv name src/alltoallv/alltoallv_##name.c \
    @alg alltoall name src/alltoallv/alltoallv_##name.c
#define CT_ALLTOALLV_SPLIT_ALG(name, ...) CT_ALLTOALLV_ALG(name) \
    @alg ialltoallv name src/alltoallv/alltoallv_##name.c \
    @alg ialltoall name src/alltoallv/alltoallv_##name.c
#define CT_ALLTOALLV_STEP_ALG(name, ...) CT_ALLTOALLV_SPLIT_ALG(name)
#define CT_ALLGATHER_INTER_ALG(name, ...) \
    @alg allgather_inter name src/allgather_inter/allgather_inter_##name.c \
    @alg allgatherv_inter name src/allgather_inter/allgather_inter_##name.c
#define CT_ALLGATHER_INTER_SPLIT_ALG(name, ...) CT_ALLGATHER_INTER_ALG(name) \
    @alg iallgather_inter name src/allgather_inter/allgather_inter_##name.c \
    @alg iallgatherv_inter name src/allgather_inter/allgather_inter_##name.c
#define CT_SDDE_ALG(name, variable, ...) @alg alltoall_crs name src/sdde/sdde_##name.c \
    IF_##variable(@alg alltoallv_crs name src/sdde/sdde_##name.c)
#define CT_NEIGHBOR_ALG(name, ...) @alg neighbor_alltoallv name src/neighbor/neighbor_##name.c \
    @alg neighbor_alltoall name src/neighbor/neighbor_##name.c
#define CT_NEIGHBOR_SPLIT_ALG(name, ...) CT_NEIGHBOR_ALG(name) \
    @alg ineighbor_alltoallv name src/neighbor/neighbor_##name.c \
    @alg ineighbor_alltoall name src/neighbor/neighbor_##name.c
#define CT_NEIGHBOR_STEP_ALG(name, ...) CT_NEIGHBOR_SPLIT_ALG(name)
#define IF_1(...) __VA_ARGS__
#define IF_0(...)
#include "coll_list.h"
EOF
tr '@' '\n' < "$tmp/cpp" | sed 's/  */ /g; s/^ //; s/ $//' | grep -E '^(coll|alg) ' |
    sed 's|^alg \([^ ]*\) pmpi .*|alg \1 pmpi -|' > "$tmp/list"
# The nonblocking forms (call "I...") have pmpi too (src/algorithms.c).
awk '$1 == "coll" && $4 ~ /^"I/ {print "alg " $2 " pmpi -"}' "$tmp/list" >> "$tmp/list"
colls=$(awk '$1 == "coll" {print $2}' "$tmp/list")
[ -n "$colls" ] || { echo "FAIL: no collective in src/coll_list.h"; exit 1; }
algs_of() { awk -v c="$1" '$1 == "alg" && $2 == c {print $3}' "$tmp/list"; }
field_of() { awk -v c="$1" -v f="$2" '$1 == "coll" && $2 == c {print $f}' "$tmp/list"; }

bad=0
fail() { echo "FAIL: $*"; bad=$((bad + 1)); }

# A table row's backticked words ("`a`, `b:x`, `c_*`" -> a, b, c_*).
ticked() { grep -o '`[^`]*`' | tr -d '`' | sed 's/:.*//'; }
# Is algorithm $1 among the words of file $2 (a word "p*" covers every name
# that begins with p)?
covered() {
    while read -r w; do
        case "$w" in
        *\*) case "$1" in "${w%\*}"*) return 0 ;; esac ;;
        "$1") return 0 ;;
        esac
    done < "$2"
    return 1
}

# --- Markdown tables: the row whose second column names the collective
# (a row that says "the same algorithms" serves several collectives alike).
check_table() {
    file=$1
    for c in $colls; do
        awk -F'|' -v c="\`$c\`" 'index($3, c) {print $3; print "@" $4}' "$file" > "$tmp/row"
        if [ ! -s "$tmp/row" ]; then
            fail "$file: no table row for the collective $c"
            continue
        fi
        id=$(field_of "$c" 3)
        grep -q "COLTUNE_$id\\b" "$tmp/row" || fail "$file: $c's row does not name COLTUNE_$id"
        grep -q 'the same algorithms' "$tmp/row" && continue
        sed -n 's/^@//p' "$tmp/row" | ticked > "$tmp/words"
        for a in $(algs_of "$c"); do
            covered "$a" "$tmp/words" || fail "$file: algorithm $a of $c missing from its table row"
        done
    done
}
check_table README.md
check_table docs/using.md

# --- coltune(7): ALGORITHMS has a subsection per collective, an item per
# algorithm (a subsection without items has the algorithms of the one
# before it, as alltoall has alltoallv's), and every variable is described.
man=man/coltune.7
awk '/^\.SH ALGORITHMS/ {on = 1; next} /^\.SH/ {on = 0}
     on && /^\.SS/ {sec = $2; print "sec " sec}
     on && prev ~ /^\.TP/ && sec != "References" {
         w = $2; sub(/^\\%/, "", w); sub(/:.*/, "", w); print "item " sec " " w }
     {prev = $0}' "$man" > "$tmp/man"
before=
for c in $colls; do
    grep -qx "sec $c" "$tmp/man" || { fail "$man: no subsection '.SS $c' in ALGORITHMS"; continue; }
    sed -n "s/^item $c //p" "$tmp/man" | sort > "$tmp/have"
    algs_of "$c" | sort > "$tmp/want"
    if [ ! -s "$tmp/have" ] && [ -n "$before" ]; then
        algs_of "$before" | sort | cmp -s - "$tmp/want" ||
            fail "$man: ALGORITHMS, $c: no items, and its algorithms are not those of $before"
    else
        for a in $(comm -13 "$tmp/have" "$tmp/want"); do
            fail "$man: ALGORITHMS, $c: no item for algorithm $a"
        done
        for a in $(comm -23 "$tmp/have" "$tmp/want"); do
            fail "$man: ALGORITHMS, $c: item $a is not an algorithm of $c in src/coll_list.h"
        done
    fi
    before=$c
    id=$(field_of "$c" 3)
    grep -q "^\\.BI COLTUNE_$id= spec" "$man" || fail "$man: ENVIRONMENT does not describe COLTUNE_$id"
    grep -q "^\\.BR* COLTUNE_$id\\b" "$man" ||
        fail "$man: How an algorithm is chosen does not list COLTUNE_$id"
done

# --- The tables of the direct API's pages: one row per algorithm.
for page in man/man3/coltune_alltoallv.3 man/man3/coltune_alltoall.3; do
    sed -n 's/^\\fB\([a-z0-9_]*\)\\fP\t.*/\1/p' "$page" | sort > "$tmp/have"
    algs_of alltoallv | sort > "$tmp/want"
    cmp -s "$tmp/have" "$tmp/want" ||
        fail "$page: the algorithm table is not the alltoallv list: $(diff "$tmp/want" "$tmp/have" | grep '^[<>]' | tr '\n' ' ')"
done

# --- coltune.rules(5): every collective is described.
for c in $colls; do
    grep -q "^\\.BR* $c\\b" man/coltune.rules.5 || fail "man/coltune.rules.5: collective $c not described"
done

# --- The tuner: COLLECTIVES has every collective, each baseline its fallback;
# an entry of its own for a persistent form names its collective ("bench").
tune=scripts/coltune-tune.in
awk '/^COLLECTIVES = \{/ {on = 1; next} on && /^\}/ {on = 0}
     on && /^    "[a-z_]*": \{/ {c = $1; gsub(/[":]/, "", c); print "coll " c}
     on && /"bench":/ {b = $2; gsub(/[",]/, "", b); print "bench " c " " b}
     on && /"baseline":/ {b = $2; gsub(/[",]/, "", b); print "baseline " c " " b}' "$tune" > "$tmp/tune"
for c in $colls; do
    grep -qx "coll $c" "$tmp/tune" || { fail "$tune: COLLECTIVES lacks $c"; continue; }
    fb=$(field_of "$c" 5)
    b=$(sed -n "s/^baseline $c //p" "$tmp/tune" | head -n 1)
    [ "${b:-pmpi}" = "$fb" ] || fail "$tune: COLLECTIVES[$c] baseline ${b:-pmpi}, the fallback is $fb"
done
for c in $(sed -n 's/^coll //p' "$tmp/tune"); do
    b=$(sed -n "s/^bench $c //p" "$tmp/tune" | head -n 1)
    echo "$colls" | grep -qx "${b:-$c}" ||
        fail "$tune: COLLECTIVES has $c${b:+ (bench $b)}, not in src/coll_list.h"
done

# --- The simulator: NATIVE_KEYS has the collectives the MPI library serves.
sim=scripts/coltune-sim.in
sed -n '/^NATIVE_KEYS = {/,/^}/p' "$sim" | sed -n 's/^    "\([a-z_]*\)":.*/\1/p' | sort > "$tmp/have"
# (not the nonblocking forms: the SMPI build leaves them to SMPI, src/api.c)
for c in $colls; do
    case $(field_of "$c" 4) in '""' | '"I'*) ;; *) echo "$c" ;; esac
done | sort > "$tmp/want"
cmp -s "$tmp/have" "$tmp/want" ||
    fail "$sim: NATIVE_KEYS is not the collectives with an MPI call: $(diff "$tmp/want" "$tmp/have" | grep '^[<>]' | tr '\n' ' ')"

# --- coltune-bench --help names every collective after --coll.
sed -n '/--coll NAME/,/default/p' bench/options.c | tr -c 'a-z_\n' ' ' | tr ' ' '\n' > "$tmp/bench"
for c in $colls; do
    grep -qx "$c" "$tmp/bench" || fail "bench/options.c: --coll help does not name $c"
done

# --- Makefile.am builds every algorithm's file and every bench driver.
for f in $(awk '$1 == "alg" && $4 != "-" {print $4}' "$tmp/list" | sort -u); do
    grep -q "$f" Makefile.am || fail "Makefile.am: $f (an algorithm of src/coll_list.h) not built"
done
# (a nonblocking form's driver is in its blocking collective's file)
for c in $colls; do
    f=bench/driver_$c.c
    case $(field_of "$c" 4) in '"I'*) f=bench/driver_${c#i}.c ;; esac
    grep -q "$f" Makefile.am || fail "Makefile.am: $f not built"
    grep -q "^const bench_driver bench_driver_$c = " "$f" || fail "$f: no bench_driver_$c"
done

# --- tests/mpi/info.sh checks every intercepted call.
for c in $colls; do
    call=$(field_of "$c" 4 | tr -d '"')
    [ -n "$call" ] || continue
    sed -n '/^ *for call in/,/; do$/p' tests/mpi/info.sh | grep -q "\\b$call\\b" ||
        fail "tests/mpi/info.sh: the intercepted calls' loop lacks $call"
done

n=$(grep -c '^alg ' "$tmp/list")
echo "$(echo "$colls" | wc -l) collectives, $n algorithm entries checked, $bad disagreements"
[ "$bad" -eq 0 ]
