#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# How users meet coltune: a plain MPI program, built without coltune, runs
# under LD_PRELOAD with each forced algorithm. The verbose log must show the
# algorithm ran and the output must equal the native run's. Each run forces
# the algorithm for MPI_Alltoallv and MPI_Alltoall alike.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
lib="$top_builddir/src/.libs/libcoltune.so"
app="$top_builddir/tests/mpi/plain_alltoallv"
P=${CT_PRELOAD_NP:-4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The program must not be linked with coltune: it only meets it via LD_PRELOAD.
if ldd "$app" | grep -q coltune; then
    echo "plain_alltoallv is linked with coltune; the test would prove nothing" >&2
    exit 1
fi
run_mpi "$P" "$app" | sort > "$tmp/native" || exit 1
[ -s "$tmp/native" ] || { echo "native run printed nothing" >&2; exit 1; }

check_preload() {
    alg=$1
    with_env LD_PRELOAD="$lib" COLTUNE_ALLTOALLV="$alg" COLTUNE_ALLTOALL="$alg" COLTUNE_VERBOSE=1 \
        COLTUNE_FALLBACK=error -- run_mpi "$P" "$app" > "$tmp/out" 2> "$tmp/err" || {
        cat "$tmp/err" >&2
        return 1
    }
    sort "$tmp/out" | diff "$tmp/native" - || return 1
    # rank 0 logs each distinct decision once: "... (P=4 ...): <alg> [forced]"
    for coll in alltoallv alltoall; do
        grep -E "coltune\[0\]: $coll on MPI_COMM_WORLD#[0-9]+ .*: $alg(:[^ ]*)? \[forced\]" \
            "$tmp/err" || {
            echo "no log line shows $alg served $coll:" >&2
            cat "$tmp/err" >&2
            return 1
        }
    done
}

# CT_PRELOAD_EXCLUDE: algorithms not forced (shm across hosts, where it
# cannot serve: tests/mpi/cluster.sh checks that on its own).
for alg in $("$top_builddir/tests/mpi/list_algorithms" | awk '$1 == "alltoallv" { print $2 }'); do
    case " ${CT_PRELOAD_EXCLUDE:-} " in *" $alg "*) continue ;; esac
    check_run "preload $alg P=$P" check_preload "$alg"
done

# An MPMD launch where only the first program runs coltune (LD_PRELOAD for it
# alone), each program exchanging on its own ranks (MPI_APPNUM): coltune makes
# no collective call the other program does not make (none in MPI_Init), so
# the job starts, and it ends with the native results.
mpmd() { # mpmd ENV-FOR-THE-FIRST-PROGRAM...: the two programs, 2 and 3 ranks
    if [ "$MPI_IMPL" = openmpi ]; then
        set -- --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader -np 2 env "$@"
    else
        set -- -np 2 env "$@"
    fi
    timeout "$CT_TEST_TIMEOUT" "$MPIEXEC" "$@" "$app" app : -np 3 "$app" app
}
check_mpmd() {
    mpmd > "$tmp/native_mpmd" || return 1
    mpmd LD_PRELOAD="$lib" COLTUNE_ALLTOALLV=shm COLTUNE_ALLTOALL=shm COLTUNE_VERBOSE=1 \
        COLTUNE_FALLBACK=error > "$tmp/out" 2> "$tmp/err" || { cat "$tmp/err" >&2; return 1; }
    sort "$tmp/native_mpmd" > "$tmp/want"
    [ "$(wc -l < "$tmp/want")" = 5 ] || { echo "the native run printed:" >&2; cat "$tmp/want" >&2; return 1; }
    sort "$tmp/out" | diff "$tmp/want" - || return 1
    grep -q "coltune\[0\]: alltoallv on comm#[0-9]* (P=2 nodes=1 ppn=2): shm" "$tmp/err" || {
        echo "no log line shows shm served the first program:" >&2
        cat "$tmp/err" >&2
        return 1
    }
}
check_run "preload in one program of an MPMD launch" check_mpmd

# A broken rules file is reported once, with file:line:column, and the job
# runs on natively with the right results.
printf 'alltoallv comm_size=2-8 nosuchalg\n' > "$tmp/bad.rules"
check_bad_rules() {
    with_env LD_PRELOAD="$lib" COLTUNE_RULES="$tmp/bad.rules" -- run_mpi "$P" "$app" \
        > "$tmp/out" 2> "$tmp/err" || return 1
    sort "$tmp/out" | diff "$tmp/native" - || return 1
    n=$(grep -c "bad.rules:1:25: unknown algorithm" "$tmp/err")
    [ "$n" = 1 ] || { echo "expected one error line, got $n:" >&2; cat "$tmp/err" >&2; return 1; }
}
check_run "preload with a broken rules file" check_bad_rules

# Nothing to do, nothing done: empty MPI_Alltoall and intercommunicator
# MPI_Allgather calls go to the MPI library at once, whatever is forced (the
# statistics count them under pmpi); the calls with data run the forced
# algorithm. The statistics line: collective, algorithm, calls, ...
empty_app="$top_builddir/tests/mpi/plain_empty"
calls_of() { # calls_of COLL ALG: the calls column of that row, 0 without one
    awk -v c="$1" -v a="$2" '$1 == c && $2 == a { print $3; n = 1 } END { if (!n) print 0 }' \
        "$tmp/out"
}
check_empty() {
    with_env LD_PRELOAD="$lib" COLTUNE_ALLTOALL=tuna:radix=2 COLTUNE_ALLGATHER_INTER=direct \
        COLTUNE_STATS=1 COLTUNE_FALLBACK=error -- run_mpi "$P" "$empty_app" > "$tmp/out" \
        2> "$tmp/err" || { cat "$tmp/out" "$tmp/err" >&2; return 1; }
    grep -q '^plain_empty: ok$' "$tmp/out" || { cat "$tmp/out" "$tmp/err" >&2; return 1; }
    # 4 empty MPI_Alltoall calls and the 3 erroneous empty ones under pmpi
    for want in "alltoall pmpi 7" "alltoall tuna 1" "allgather_inter pmpi 3" \
        "allgather_inter direct 1"; do
        set -- $want
        got=$(calls_of "$1" "$2")
        [ "$got" = "$3" ] && continue
        echo "expected $3 $1 calls served by $2, got $got:" >&2
        cat "$tmp/out" >&2
        return 1
    done
}
check_run "preload: empty calls go to the MPI library at once P=$P" check_empty
# Without statistics an empty MPI_Alltoall returns without the MPI library:
# the results, and the errors of erroneous empty calls, are still the library's.
check_empty_at_once() {
    with_env LD_PRELOAD="$lib" COLTUNE_ALLTOALL=tuna:radix=2 COLTUNE_FALLBACK=error -- \
        run_mpi "$P" "$empty_app" > "$tmp/out" 2> "$tmp/err" &&
        grep -q '^plain_empty: ok$' "$tmp/out" || { cat "$tmp/out" "$tmp/err" >&2; return 1; }
}
check_run "preload: empty MPI_Alltoall returns at once, errors as the library's P=$P" \
    check_empty_at_once
finish
