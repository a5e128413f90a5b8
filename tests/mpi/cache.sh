#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# What coltune keeps between calls stays within one process-wide limit
# (COLTUNE_CACHE, src/core/cache.h), with every result right
# (test_cache.c: many communicators kept alive, each used in turn, every
# result compared with the MPI library's own):
#   - 40 communicators of 4 ranks, blocks up to 256 KiB, every Alltoall(v)
#     algorithm, COLTUNE_CACHE=16m: resident memory grows by at most the
#     limit and a slack, and the COLTUNE_STATS line reports a peak within
#     the limit and (for the algorithms with buffers) buffers released;
#   - 200 communicators under the default (auto) limit, every algorithm;
#   - a limit too small for one call (COLTUNE_CACHE=0, and 64k with the
#     shared windows refused): every algorithm still right;
#   - a window refused while the other communicators' windows are in use,
#     and made at a later call once a freed communicator gave its room back;
#   - windows asked back: communicators used in turn, more windows than
#     the limit holds, the least recently used released at a call's end by
#     all its ranks together, every result right.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
prog="$top_builddir/tests/mpi/test_cache"
need_progs "$prog" "$top_builddir/tests/mpi/list_algorithms"
P=4
maxnp=${CT_TEST_MAXNP:-64}
P_odd=$([ 5 -le "$maxnp" ] && echo 5 || echo 3)
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# to_mib SIZE UNIT: the COLTUNE_STATS figure in MiB (rounded up).
to_mib() {
    awk -v n="$1" -v u="$2" 'BEGIN { m = u == "GiB" ? n * 1024 : u == "MiB" ? n : \
        u == "KiB" ? n / 1024 : n / 1048576; printf "%d\n", m == int(m) ? m : int(m) + 1 }'
}

# cache_run LABEL LIMIT_MIB WANT VAR=value ... -- ARGS: runs the program
# with COLTUNE_STATS=1 and checks the cache line: the peak kept within
# LIMIT_MIB and, with WANT=released, some buffers released; with
# WANT=refused, some window refused; with WANT=windows, some window refused
# and some released.
cache_run() {
    c_label=$1 limit=$2 want=$3
    shift 3
    with_env COLTUNE_STATS=1 "$@" >"$out" 2>&1
    rc=$?
    cat "$out"
    [ $rc = 0 ] || return 1
    line=$(grep '^coltune cache:' "$out") || { echo "no cache line in COLTUNE_STATS"; return 1; }
    # peak, its unit, buffers released, windows refused
    num='\([0-9.]*\)'
    pattern=".*at peak $num \([KMG]*i*B\).*released $num times.*refused $num times"
    pattern="$pattern.*released $num times.*"
    set -- $(echo "$line" | sed "s/$pattern/\1 \2 \3 \4 \5/")
    peak=$(to_mib "$1" "$2")
    if [ "$peak" -gt "$limit" ]; then
        echo "$c_label: kept $1 $2 at peak, more than the limit of $limit MiB"
        return 1
    fi
    if [ "$want" = released ] && [ "$3" = 0 ]; then
        echo "$c_label: no buffer released, though the calls needed more than the limit"
        return 1
    fi
    if { [ "$want" = refused ] || [ "$want" = windows ]; } && [ "$4" = 0 ]; then
        echo "$c_label: no window refused, though they needed more than the limit"
        return 1
    fi
    if [ "$want" = windows ] && [ "$5" = 0 ]; then
        echo "$c_label: no window released, though the refused ones asked for them"
        return 1
    fi
    return 0
}

algs=$("$top_builddir/tests/mpi/list_algorithms" | awk '$1 == "alltoallv" { print $2 }')

# Windows of 2 x (16 KiB + header) per rank at P = 4 (COLTUNE_SHM_WINDOW=16k):
# a limit of 80 KiB holds two, so of 6 communicators 4 are refused theirs;
# the program frees the first two half way (TEST_CACHE_FREE_HALFWAY), and a
# later call of the others (their 16th) makes theirs: the program checks
# that its shared mappings grew after the frees (Open MPI and MPICH map a
# segment per window).
check_run "shm: windows refused under COLTUNE_CACHE=80k, made once room is given back" \
    cache_run "shm" 1 refused COLTUNE_CACHE=80k COLTUNE_SHM_WINDOW=16k \
    COLTUNE_FALLBACK=error COLTUNE_ALLTOALLV=shm COLTUNE_ALLTOALL=shm \
    TEST_CACHE_FREE_HALFWAY=2 -- run_mpi "$P" "$prog" 6 12 4096

# The same windows, three communicators used in turn: the third finds no
# room and asks the least recently used back, whose ranks release it at the
# end of its next call; then the released one asks in its turn.
check_run "shm: windows asked back under COLTUNE_CACHE=80k, three communicators in turn" \
    cache_run "shm" 1 windows COLTUNE_CACHE=80k COLTUNE_SHM_WINDOW=16k \
    COLTUNE_FALLBACK=error COLTUNE_ALLTOALLV=shm COLTUNE_ALLTOALL=shm -- \
    run_mpi "$P" "$prog" 3 24 4096

# With CT_TEST_QUICK=1 (the MPICH and sanitizer builds) the limit's runs
# for the algorithms with buffers or windows of their own; the full build
# runs every algorithm.
for alg in tuna node_aware shm scattered; do
    case $alg in
    tuna | node_aware) want=released ;;
    *) want=any ;;
    esac
    check_run "$alg: 40 communicators, blocks up to 256 KiB, COLTUNE_CACHE=16m" \
        cache_run "$alg" 16 "$want" COLTUNE_CACHE=16m COLTUNE_PPN=2 COLTUNE_FALLBACK=error \
        COLTUNE_ALLTOALLV="$alg" COLTUNE_ALLTOALL="$alg" -- \
        run_mpi "$P" "$prog" 40 2 262144 16 32
done
for alg in tuna shm; do
    check_run "$alg: COLTUNE_CACHE=0, less than one call needs" \
        cache_run "$alg" 1 any COLTUNE_CACHE=0 COLTUNE_FALLBACK=error \
        COLTUNE_ALLTOALLV="$alg" COLTUNE_ALLTOALL="$alg" -- \
        run_mpi "$P_odd" "$prog" 6 2 40000 0 32
done
quick_finish "every algorithm at 40 and 200 communicators and under limits below one call"

for alg in $algs; do
    case $alg in
    tuna | node_aware | shm | scattered) continue ;; # above
    tuna* | node_aware) want=released ;; # buffers of their own, larger than the limit
    *) want=any ;;
    esac
    check_run "$alg: 40 communicators, blocks up to 256 KiB, COLTUNE_CACHE=16m" \
        cache_run "$alg" 16 "$want" COLTUNE_CACHE=16m COLTUNE_PPN=2 COLTUNE_FALLBACK=error \
        COLTUNE_ALLTOALLV="$alg" COLTUNE_ALLTOALL="$alg" -- \
        run_mpi "$P" "$prog" 40 2 262144 16 32
done

for alg in $algs; do
    check_run "$alg: 200 communicators, blocks up to 64 KiB, COLTUNE_CACHE=auto" \
        cache_run "$alg" 64 any COLTUNE_PPN=2 COLTUNE_FALLBACK=error \
        COLTUNE_ALLTOALLV="$alg" COLTUNE_ALLTOALL="$alg" -- \
        run_mpi "$P" "$prog" 200 1 65536 64 32
done

for alg in $algs; do
    for limit in 0 64k; do
        check_run "$alg: COLTUNE_CACHE=$limit, less than one call needs" \
            cache_run "$alg" 1 any COLTUNE_CACHE="$limit" COLTUNE_PPN=2 COLTUNE_FALLBACK=error \
            COLTUNE_ALLTOALLV="$alg" COLTUNE_ALLTOALL="$alg" -- \
            run_mpi "$P_odd" "$prog" 6 2 40000 0 32
    done
done

finish
