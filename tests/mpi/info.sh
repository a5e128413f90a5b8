#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# coltune-info: the report (runs without mpirun; every registered algorithm;
# the entry points the library defines), the environment and rules checks
# against what a job prints for the same input (every malformed file of the
# parser's test set), and the what-would-run answers of --check --np against
# the decisions real jobs log for the same communicator and message size.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
info="$top_builddir/info/coltune-info"
lib="$top_builddir/src/.libs/libcoltune.so"
app="$top_builddir/tests/mpi/plain_alltoallv"
bench="$top_builddir/bench/coltune-bench"
rules="$top_srcdir/conf/coltune.rules"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "$*" >&2; return 1; }
has() { grep -qxF "$1" "$2" || fail "missing line '$1' in $2:$(echo; cat "$2")"; }

# ------------------------------------------------------------- the report
check_report() {
    COLTUNE_RULES="$rules" "$info" --library "$lib" --parsable > "$tmp/r" 2> "$tmp/e" ||
        fail "coltune-info exited $?: $(cat "$tmp/e")" || return 1
    [ -s "$tmp/e" ] && { fail "stderr: $(cat "$tmp/e")"; return 1; }
    version=$(sed -n 's/^#define COLTUNE_VERSION "\(.*\)"$/\1/p' "$top_srcdir/include/coltune.h")
    has "version:coltune:$version" "$tmp/r" || return 1
    has "mpi:match:yes" "$tmp/r" || return 1
    for call in Alltoallv Alltoall Ialltoallv Ialltoall Allgather Allgatherv Iallgather \
        Iallgatherv Neighbor_alltoallv Neighbor_alltoall Ineighbor_alltoallv Ineighbor_alltoall \
        Init Init_thread Finalize Wait \
        Waitall Test Start Request_free; do
        has "intercept:MPI_$call:yes" "$tmp/r" || return 1
    done
    if [ "$MPI_IMPL" = openmpi ]; then
        for f in mpi_alltoallv_ mpi_alltoall_f08_ mpi_allgatherv_ MPIX_Alltoallv_init \
            MPIX_Alltoall_init MPIX_Allgather_init MPIX_Allgatherv_init mpi_iallgatherv_ \
            mpix_alltoallv_init_ mpix_allgather_init_ mpi_neighbor_alltoallv_ \
            mpi_neighbor_alltoall_f08_ mpi_ineighbor_alltoallv_ MPIX_Neighbor_alltoallv_init \
            mpix_neighbor_alltoall_init_; do
            has "intercept:$f:yes" "$tmp/r" || return 1
        done
    else
        for f in MPI_Alltoallv_c MPI_Alltoall_c MPI_Allgather_c MPI_Allgatherv_c mpi_init_f08_ \
            MPI_Ialltoallv_c MPI_Alltoallv_init MPI_Alltoall_init MPI_Iallgatherv_c \
            MPI_Allgather_init MPI_Allgatherv_init MPI_Neighbor_alltoallv_c \
            MPI_Neighbor_alltoall_c MPI_Ineighbor_alltoallv_c MPI_Neighbor_alltoallv_init \
            MPI_Neighbor_alltoall_init; do
            has "intercept:$f:yes" "$tmp/r" || return 1
        done
    fi
    has "rules:file:$rules" "$tmp/r" && has "rules:status:ok" "$tmp/r" || return 1
    for coll in $(sed -n 's/^algorithm:\([^:]*\):[^:]*:summary:.*/\1/p' "$tmp/r" | uniq); do
        n=$(grep -c "^$coll " "$rules")
        has "rules:count:$coll:$n" "$tmp/r" || return 1
    done
    # Every registered algorithm, and nothing else.
    "$top_builddir/tests/mpi/list_algorithms" | sort > "$tmp/registry"
    sed -n 's/^algorithm:\([^:]*\):\([^:]*\):summary:.*/\1 \2/p' "$tmp/r" | sort > "$tmp/listed"
    diff "$tmp/registry" "$tmp/listed" || return 1
    has "algorithm:alltoallv:tuna:param:radix:range:2:P" "$tmp/r" || return 1
    has "algorithm:alltoallv:shm:restrictions:shared_memory,warm_up" "$tmp/r" || return 1
    # The same for people: every section, exit 0.
    COLTUNE_RULES="$rules" "$info" --library "$lib" > "$tmp/h" || return 1
    for s in "MPI library" "Intercepted calls" "Algorithms" "Rules file" "Environment"; do
        grep -q "^$s" "$tmp/h" || fail "no section '$s'" || return 1
    done
}
check_run "report" check_report

# Another MPI library at run time: a small preloaded library answers
# MPI_Get_library_version as another library or release would.
check_other_mpi() {
    cat > "$tmp/fake.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int MPI_Get_library_version(char *version, int *resultlen)
{
    *resultlen = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "%s", getenv("FAKE_MPI"));
    return MPI_SUCCESS;
}
EOF
    "$MPICC" -shared -fPIC -o "$tmp/fake.so" "$tmp/fake.c" || return 1
    LD_PRELOAD="$tmp/fake.so" FAKE_MPI="MPICH Version:	9.9.9" "$info" --library "$lib" \
        > "$tmp/h" || return 1
    grep -q "found at run time:  MPICH 9.9.9" "$tmp/h" &&
        grep -q "warning: coltune was built against .* but MPICH 9.9.9 is found at run time" \
            "$tmp/h" || fail "no warning: $(head -n 5 "$tmp/h")" || return 1
    built=$("$info" --library "$lib" --parsable | sed -n 's/^mpi:built://p')
    case "$built" in
    "Open MPI "*) other="Open MPI v${built#Open MPI }9, package: test" ;;
    "MPICH "*) other="MPICH Version:	${built#MPICH }9" ;;
    *) return 0 ;;
    esac
    LD_PRELOAD="$tmp/fake.so" FAKE_MPI="$other" "$info" --library "$lib" --parsable > "$tmp/p" &&
        has "mpi:match:release" "$tmp/p"
}
check_run "another MPI library or release at run time" check_other_mpi

check_no_library() {
    "$info" --library /nonexistent/libcoltune.so --parsable > "$tmp/r" && return 1
    grep -q '^library:error:' "$tmp/r" || fail "no library:error line: $(cat "$tmp/r")"
}
check_run "missing library: exit 1" check_no_library

check_usage() {
    for args in "--np 4" "--bogus" "--check" "--check $rules --np 0" \
        "--check $rules --np 9 --nodes 2 --ppn 3" "--check $rules --coll nope --np 2"; do
        # shellcheck disable=SC2086
        "$info" $args > /dev/null 2> "$tmp/e"
        rc=$?
        [ $rc = 2 ] || fail "coltune-info $args: exit $rc, want 2" || return 1
        [ -s "$tmp/e" ] || fail "coltune-info $args: no message" || return 1
    done
}
check_run "usage errors: exit 2 with a message" check_usage

check_usage_prints_nothing_else() {
    "$info" --check "$rules" --np 4 --ppn 8 > "$tmp/o" 2> "$tmp/e"
    [ $? = 2 ] && [ ! -s "$tmp/o" ] && grep -q -- "--ppn 8 is more than --np 4" "$tmp/e" ||
        fail "stdout '$(cat "$tmp/o")', stderr '$(cat "$tmp/e")'"
}
check_run "a usage error of --check prints nothing on stdout" check_usage_prints_nothing_else

# ------------------------------------------- the environment, as a job sees it
# The job's own messages (rank 0's stderr) equal coltune-info's, line for line.
job_errors() { # job_errors VAR=value ...: the "coltune: error:" lines of a 1-rank job
    with_env LD_PRELOAD="$lib" "$@" -- run_mpi 1 "$app" 2>&1 > /dev/null |
        grep '^coltune: error: ' | sort
}
check_environment() {
    set -- COLTUNE_VERBOSE=x COLTUNE_PPN=0 COLTUNE_ALLTOALLV=tuna:radix=1 \
        COLTUNE_SHM_WINDOW=1 COLTUNE_FALLBACK=maybe COLTUNE_ALLTOALL=nosuch \
        COLTUNE_RULES="$rules"
    job_errors "$@" > "$tmp/job"
    [ "$(wc -l < "$tmp/job")" = 6 ] || fail "the job printed: $(cat "$tmp/job")" || return 1
    with_env "$@" COLTUNE_VERBSE=1 -- "$info" --library "$lib" > "$tmp/h"
    [ $? = 1 ] || fail "coltune-info: exit status is not 1" || return 1
    sed -n 's/^  \(coltune: error: .*\)/\1/p' "$tmp/h" | sort > "$tmp/info"
    diff "$tmp/job" "$tmp/info" || return 1
    grep -q "COLTUNE_VERBSE=1: not a coltune variable" "$tmp/h" || return 1
    grep -q "COLTUNE_RULES=$rules: ok" "$tmp/h"
}
check_run "COLTUNE_* variables: the job's messages" check_environment

# --------------------------------------------------------- rules files
check_good_files() {
    for f in "$rules" "$top_srcdir/tests/mpi/test.rules" "$top_srcdir/tests/mpi/sdde.rules"; do
        "$info" --check "$f" --parsable > "$tmp/c" || fail "$f: exit $?" || return 1
        has "check:status:ok" "$tmp/c" || return 1
        n=$(grep -c '^alltoallv ' "$f")
        has "check:count:alltoallv:$n" "$tmp/c" || return 1
    done
}
check_run "--check: good files" check_good_files

# Which rules cost every call an allreduce: a msg_size condition where ranks
# do not know the message size alike (alltoallv, allgatherv_inter, the
# sparse exchanges), not where they do (alltoall, allgather_inter).
check_allreduce_rules() {
    printf '%s\n' '# costs' 'alltoallv msg_size=0-1k shm' 'alltoall msg_size=0-1k shm' \
        'allgatherv_inter msg_size=1m- segmented' 'allgather_inter msg_size=1m- segmented' \
        'alltoallv comm_size=2- pmpi' > "$tmp/cost.rules"
    "$info" --check "$tmp/cost.rules" --parsable > "$tmp/c" || fail "exit $?" || return 1
    has "check:allreduce:alltoallv:2:$tmp/cost.rules" "$tmp/c" &&
        has "check:allreduce:allgatherv_inter:4:$tmp/cost.rules" "$tmp/c" || return 1
    [ "$(grep -c '^check:allreduce:' "$tmp/c")" = 2 ] || fail "$(cat "$tmp/c")" || return 1
    "$info" --check "$tmp/cost.rules" --np 8 > "$tmp/h" || fail "exit $?" || return 1
    grep -q "cost.rules: note: alltoallv rule on line 2: a call that reaches one costs an allreduce to agree on msg_size" "$tmp/h" ||
        fail "$(cat "$tmp/h")" || return 1
    # In the answers: under alltoallv (reached), not under alltoall.
    awk '/^[a-z_]+$/ { coll = $1 } /each call costs one allreduce/ { print coll }' "$tmp/h" \
        > "$tmp/costly"
    printf 'alltoallv\nallgatherv_inter\n' | diff - "$tmp/costly" || return 1
    # An empty MPI_Alltoall is the MPI library's, whatever the rules say.
    "$info" --check "$tmp/cost.rules" --np 8 --coll alltoall --msg-size 0 --parsable |
        grep -qx 'decision:alltoall:msg_size=0:empty call, no byte to move:pmpi' ||
        fail "msg_size 0: $("$info" --check "$tmp/cost.rules" --np 8 --coll alltoall --msg-size 0 --parsable)" ||
        return 1
    printf 'alltoallv comm_size=2- pmpi\n' > "$tmp/free.rules"
    "$info" --check "$tmp/free.rules" --np 8 > "$tmp/h" || return 1
    ! grep -q "allreduce" "$tmp/h" || fail "$(cat "$tmp/h")"
}
check_run "--check: the rules that cost every call an allreduce" check_allreduce_rules

# Each malformed file of the parser's unit test: coltune-info --check prints
# the test's message and exits 1; a job prints the same message (with the
# job's "rules file ignored" ending) and runs on.
mkdir "$tmp/cases"
"$top_builddir/tests/unit/test_rules" --write-cases "$tmp/cases" || exit 1
check_malformed() {
    n=0
    for f in "$tmp"/cases/*.rules; do
        want=$(cat "${f%.rules}.msg")
        "$info" --check "$f" > "$tmp/c"
        [ $? = 1 ] || fail "$f: exit status is not 1" || return 1
        [ "$(head -n 1 "$tmp/c")" = "$want" ] ||
            fail "$f: got '$(head -n 1 "$tmp/c")', want '$want'" || return 1
        # The jobs are slower: every case under Open MPI, every fourth under MPICH.
        n=$((n + 1))
        [ "$MPI_IMPL" = openmpi ] || [ $((n % 4)) = 1 ] || continue
        job_errors COLTUNE_RULES="$f" > "$tmp/job"
        [ "$(cat "$tmp/job")" = "coltune: error: $want; rules file ignored, every call uses pmpi" ] ||
            fail "$f: the job printed '$(cat "$tmp/job")', want '$want'" || return 1
    done
    [ $n -ge 40 ] || fail "only $n malformed cases"
}
check_run "--check: every malformed file of the parser's tests, as jobs report it" check_malformed

check_every_error() {
    printf 'alltoallv comm_size=4-2 pmpi\nalltoallv pairwise\nfoo pmpi\nalltoallv tuna:radix=0\n' \
        > "$tmp/three.rules"
    "$info" --check "$tmp/three.rules" > "$tmp/c"
    [ $? = 1 ] || return 1
    [ "$(grep -c "^$tmp/three.rules:[0-9]*:[0-9]*: " "$tmp/c")" = 3 ] ||
        fail "not three errors: $(cat "$tmp/c")"
}
check_run "--check: every error of a file" check_every_error

# Answers that no small job can show: offsets beyond int rule out the byte
# algorithms (Alltoall of 64 ranks: from 32 MiB blocks), a forced algorithm
# that cannot serve under COLTUNE_FALLBACK=error is an error (exit 1), and
# --parsable keeps values with colons last.
check_answers() {
    printf 'alltoall nodes=2- tuna_hier_coalesced\nalltoall pmpi\n' > "$tmp/big.rules"
    "$info" --check "$tmp/big.rules" --np 64 --nodes 4 --coll alltoall --parsable > "$tmp/a" ||
        return 1
    has "decision:alltoall:msg_size=0:empty call, no byte to move:pmpi" "$tmp/a" &&
        has "decision:alltoall:msg_size=1-33554431:rule line 1:tuna_hier_coalesced:radix=2,block_count=1" "$tmp/a" &&
        has "decision:alltoall:msg_size=32m-:rule line 2:pmpi" "$tmp/a" &&
        has "skipped:alltoall:msg_size=32m-:$tmp/big.rules:1: tuna_hier_coalesced skipped: byte offsets overflow int" "$tmp/a" ||
        return 1
    COLTUNE_FALLBACK=error COLTUNE_ALLTOALLV=shm "$info" --check "$rules" --np 8 --nodes 2 \
        --coll alltoallv > "$tmp/a"
    [ $? = 1 ] && grep -q "error \[the call returns an error" "$tmp/a" ||
        fail "FALLBACK=error: $(cat "$tmp/a")" || return 1
    COLTUNE_PPN=4:cyclic COLTUNE_ALLTOALL=x:y "$info" --library "$lib" --parsable > "$tmp/a"
    has "env:COLTUNE_PPN:value:4:cyclic" "$tmp/a" && has "env:COLTUNE_PPN:status:ok" "$tmp/a" &&
        has "env:COLTUNE_ALLTOALL:status:error" "$tmp/a" &&
        grep -q "^env:COLTUNE_ALLTOALL:message:COLTUNE_ALLTOALL='x:y': " "$tmp/a"
}
check_run "--check --np: offsets beyond int, errors, parsable values" check_answers

# The nonblocking forms: the persistent form where a rule tells it apart
# (condition persistent), decided once; an empty call decided as any other
# (its request completes at once), not forwarded as the blocking one's.
check_persistent() {
    printf 'ialltoallv persistent=1 msg_size=0-1k linear\nialltoallv shm\n' > "$tmp/p.rules"
    "$info" --check "$tmp/p.rules" --np 4 --parsable > "$tmp/a" || return 1
    has "decision:ialltoallv:any msg_size:rule line 2:shm:large=49152" "$tmp/a" &&
        has "decision:ialltoallv persistent=1:msg_size=0-1k:rule line 1:linear" "$tmp/a" &&
        has "decision:ialltoallv persistent=1:msg_size=1025-:rule line 2:shm:large=49152" \
            "$tmp/a" &&
        has "decision:allreduce:ialltoallv persistent=1" "$tmp/a" &&
        has "decision:ialltoall:any msg_size:default:pmpi" "$tmp/a" || return 1
    if grep -q "^decision:ialltoall persistent=1" "$tmp/a"; then
        fail "a persistent block for ialltoall, which has no persistent rule"
        return 1
    fi
}
check_run "--check --np: the persistent form where a rule names it" check_persistent

# Rules on a neighbourhood's graph (degree, offnode): applied to the graph
# --degree and --offnode describe, listed as not applied without them.
check_graph() {
    printf '%s\n' 'neighbor_alltoallv nodes=2- degree=3- offnode=20- locality' \
        'neighbor_alltoallv direct' > "$tmp/g.rules"
    "$info" --check "$tmp/g.rules" --np 16 --nodes 4 --coll neighbor_alltoallv \
        --degree 8 --offnode 30 --parsable > "$tmp/a" || return 1
    has "decision:neighbor_alltoallv:any msg_size:rule line 1:locality:large=4096,steps=3,shm=0,shm_large=65536" "$tmp/a" ||
        return 1
    "$info" --check "$tmp/g.rules" --np 16 --nodes 4 --coll neighbor_alltoallv \
        --degree 8 --offnode 10 --parsable > "$tmp/a" || return 1
    has "decision:neighbor_alltoallv:any msg_size:rule line 2:direct" "$tmp/a" || return 1
    "$info" --check "$tmp/g.rules" --np 16 --nodes 4 --coll neighbor_alltoallv > "$tmp/a" ||
        return 1
    grep -q "direct \[rule line 2\]" "$tmp/a" &&
        grep -qF "(not applied: the rule on line 1, which names the graph; --degree D" \
            "$tmp/a" || fail "graph rules not listed: $(cat "$tmp/a")" || return 1
    "$info" --check "$tmp/g.rules" --np 16 --degree 8 > "$tmp/a" 2>&1
    [ $? = 2 ] && grep -q "go together" "$tmp/a" || fail "--degree alone: $(cat "$tmp/a")"
}
check_run "--check --np: rules on the graph (--degree, --offnode)" check_graph

# Restriction progress: the nonblocking pairwise only where the library's
# progress engine calls coltune's (Open MPI), found without registering.
check_progress() {
    printf 'ialltoallv pairwise\n' > "$tmp/pw.rules"
    "$info" --check "$tmp/pw.rules" --np 4 --coll ialltoallv --parsable > "$tmp/a" || return 1
    if [ "$MPI_IMPL" = openmpi ]; then
        has "decision:ialltoallv:any msg_size:rule line 1:pairwise" "$tmp/a"
    else
        has "decision:ialltoallv:any msg_size:default:pmpi" "$tmp/a" &&
            grep -q "^skipped:ialltoallv:.*pairwise skipped: its later rounds" "$tmp/a"
    fi
}
check_run "--check --np: restriction progress" check_progress

# ------------------------------------ what would run, against real jobs
# A rules file whose decisions depend on P, nodes, msg_size, restrictions
# and parameter ranges (comments say what the cases below exercise).
cat > "$tmp/q.rules" <<'EOF'
alltoallv nodes=1 comm_size=3- msg_size=0-4k shm
alltoallv nodes=2- msg_size=0-1k node_aware:leaders=Q+5   # out of range: skipped
alltoallv nodes=2- msg_size=0-1k node_aware
alltoallv comm_size=5 tuna:radix=sqrt
alltoallv msg_size=4k- scattered:block_count=P-1
alltoallv pairwise
alltoall comm_size=-4 msg_size=0-256 linear
alltoall nodes=2- shm
alltoall tuna:radix=2
EOF
# query COLL P SIZE [VAR=value ...]: the job's decision (coltune-bench with
# --algs rules and the decision log) equals coltune-info's answer.
query() {
    coll=$1 P=$2 size=$3
    shift 3
    with_env COLTUNE_RULES="$tmp/q.rules" COLTUNE_VERBOSE=1 "$@" -- \
        run_mpi "$P" "$bench" --coll "$coll" --algs rules --sizes "$size" --iters 1 \
        --warmup 0 --no-progress > /dev/null 2> "$tmp/log" || { cat "$tmp/log" >&2; return 1; }
    # The last distinct decision rank 0 logs is the rules' (pmpi, the
    # bench's reference, comes first and is forced).
    line=$(grep "^coltune\[0\]: $coll on comm#" "$tmp/log" | tail -n 1)
    [ -n "$line" ] || fail "no decision logged: $(cat "$tmp/log")" || return 1
    geom=$(echo "$line" | sed -n 's/.*(P=\([0-9]*\) nodes=\([0-9]*\) ppn=\([0-9]*\).*/P=\1 nodes=\2 ppn=\3/p')
    got=$(echo "$line" | sed 's/.*): //')
    msg=$(echo "$line" | sed -n 's/.* msg_size=\([0-9]*\)).*/\1/p')
    [ -n "$msg" ] || msg=$size # alltoall: the block size, known without communication
    with_env "$@" -- "$info" --check "$tmp/q.rules" --np "$P" --coll "$coll" --msg-size "$msg" \
        --parsable > "$tmp/ans" || return 1
    want=$(sed -n "s/^decision:$coll:[^:]*:\([^:]*\):\(.*\)/\2 [\1]/p" "$tmp/ans")
    qgeom=$(sed -n 's/^query:\(P=[0-9]* nodes=[0-9]* ppn=[0-9]*\).*/\1/p' "$tmp/ans")
    echo "$coll P=$P size=$size $*: job '$got' ($geom), coltune-info '$want' ($qgeom)"
    [ "$got" = "$want" ] && [ "$geom" = "$qgeom" ]
}
check_queries() {
    query alltoallv 4 16 &&                          # shm
        query alltoallv 4 64k &&                     # beyond shm's range: scattered
        query alltoallv 2 16 &&                      # comm_size=3- fails: pairwise
        query alltoallv 5 16k &&                     # tuna at P=5
        query alltoallv 6 16 COLTUNE_PPN=2 &&        # 3 nodes: hier skipped, node_aware
        query alltoallv 5 16 COLTUNE_PPN=2:cyclic && # uneven, round-robin nodes
        query alltoallv 4 16 COLTUNE_ALLTOALLV=tuna:radix=P+1 COLTUNE_FALLBACK=print &&
        query alltoallv 4 16 COLTUNE_ALLTOALLV=linear &&
        query alltoall 4 16 &&                       # linear
        query alltoall 4 1k &&                       # tuna
        query alltoall 6 16 COLTUNE_PPN=3            # emulated nodes share memory: shm
}
check_run "--check --np: the decisions real jobs log" check_queries

finish
