#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Includes point one way (docs/internals.md, Layers): reads the
# '#include "..."' lines of src/, info/ and bench/ and fails, naming file and
# line, on
#  (a) an include cycle between modules (a module is a .c file and the .h of
#      the same name: core/state.c including stats.h and core/stats.c
#      including state.h is a cycle between state and stats), and
#  (b) an include from a layer to a layer above it.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top" || exit 1

# The layers, top down; a file may include its own layer and those below it.
# The first pattern that matches a file gives its layer.
#   tools       coltune-info, coltune-bench
#   entry       the entry points: src/shim (MPI_*), the direct API (src/api.c)
#               and the MPIX calls (src/sdde/mpix.c); they fill the call's
#               description and hand it to a driver
#   drivers     decide, adapt the call (in place, bytes), run, count
#   select      rules, specs, configuration, the decision
#   algorithms  the registry, the statistics of its entries, the algorithms
#               and the helpers they share (never their driver's header)
#   core        contexts, topology, log, shared windows, datatypes, state
layer_of() {
    case "$1" in
    info/* | bench/*) echo 6 tools ;;
    src/shim/* | src/api.[ch] | src/sdde/mpix.c) echo 5 entry ;;
    src/driver.[ch] | src/learn.[ch] | src/alltoallv/alltoallv.[ch] | src/allgather_inter/allgather_inter.[ch] | \
        src/sdde/sdde.[ch] | src/neighbor/neighbor.[ch]) echo 4 drivers ;;
    src/select/*) echo 3 select ;;
    src/coll_list.h | src/algorithms.[ch] | src/stats.[ch] | src/alltoallv/* | \
        src/allgather_inter/* | src/sdde/* | src/neighbor/*) echo 2 algorithms ;;
    src/core/* | include/*) echo 1 core ;;
    *) echo 0 unknown ;;
    esac
}

files=$(find src info bench -name '*.[ch]' | LC_ALL=C sort)
[ -n "$files" ] || { echo "FAIL: no sources below $top"; exit 1; }

# One line per include that names a file of the tree:
#   from-file line target-file from-layer from-name to-layer to-name
edges=$(
    for f in $files; do
        dir=$(dirname "$f")
        grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
            sed 's/^\([0-9]*\):.*"\(.*\)".*/\1 \2/' |
            while read -r line inc; do
                t=
                for cand in "$dir/$inc" "src/$inc" "$inc" "include/$inc"; do
                    [ -f "$cand" ] && { t=${cand#./}; break; }
                done
                [ -n "$t" ] || continue # generated (config.h) or system
                echo "$f $line $t $(layer_of "$f") $(layer_of "$t")"
            done
    done
)

fail=0
n=0
# (b) no include upwards, and every file is in the table.
for f in $files; do
    set -- $(layer_of "$f")
    [ "$1" -gt 0 ] || { echo "FAIL: $f: in no layer (tests/unit/layers.sh, layer_of)"; fail=1; }
done
up=$(echo "$edges" | awk 'NF && $4 < $6 {
    printf "FAIL: %s:%s: includes %s: %s may not include %s (above it)\n", $1, $2, $3, $5, $7 }')
[ -z "$up" ] || { echo "$up"; fail=1; }

# (a) no cycle between modules: for each include A -> B between different
# modules, B must not reach A.
cyc=$(echo "$edges" | awk '
    function mod(p) { sub(/\.[ch]$/, "", p); return p }
    NF {
        a = mod($1); b = mod($3)
        if (a == b) next
        if (!((a, b) in adj)) { adj[a, b] = 1; nxt[a] = nxt[a] " " b; at[a, b] = $1 ":" $2 }
    }
    function reaches(from, to,    i, k, q, head, tail, seen, s, path) {
        head = tail = 0; q[tail++] = from; seen[from] = 1; par[from] = ""
        while (head < tail) {
            s = q[head++]
            if (s == to) return 1
            k = split(nxt[s], nb, " ")
            for (i = 1; i <= k; i++)
                if (!(nb[i] in seen)) { seen[nb[i]] = 1; par[nb[i]] = s; q[tail++] = nb[i] }
        }
        return 0
    }
    END {
        for (e in at) {
            split(e, ab, SUBSEP)
            delete par
            if (reaches(ab[2], ab[1])) {
                path = ab[1]; s = ab[1]
                while (s != ab[2]) { s = par[s]; path = s " -> " path }
                printf "FAIL: %s: include cycle between modules: %s -> %s\n", at[e], ab[1], path
            }
        }
    }' | LC_ALL=C sort)
[ -z "$cyc" ] || { echo "$cyc"; fail=1; }

n=$(echo "$edges" | grep -c .)
echo "$(echo "$files" | wc -l | tr -d ' ') files, $n includes checked"
[ "$fail" -eq 0 ]
