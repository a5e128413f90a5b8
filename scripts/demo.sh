#!/bin/sh
# demo.sh - the main job, as a newcomer meets coltune: build and install
# coltune, build an unmodified MPI application (examples/fft_transpose.c,
# plain mpicc, no coltune header), run it natively and under
# LD_PRELOAD=libcoltune.so, show which algorithm served its MPI_Alltoallv
# calls, and compare times (median of several runs, side by side).
#   DEMO_NP (default 8) ranks, DEMO_ITERS (default 5000) exchanges per run,
#   DEMO_RUNS (default 5) runs per configuration.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
prefix="$top/_install"
np=${DEMO_NP:-8}
iters=${DEMO_ITERS:-5000}
runs=${DEMO_RUNS:-5}
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "== building coltune into $prefix"
[ -x configure ] || ./autogen.sh > /dev/null
mkdir -p build
(cd build && "$top/configure" --prefix="$prefix" > configure.out 2>&1 && make -j"$(nproc)" > make.out 2>&1 \
    && make install > install.out 2>&1) || { echo "build failed: see build/*.out" >&2; exit 1; }
mpicc -O2 -o "$prefix/bin/fft_transpose" examples/fft_transpose.c

launch() {
    mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np "$np" "$@"
}

# median_time VAR=VALUE... : median time of $runs runs with that environment
median_time() {
    for i in $(seq "$runs"); do
        env "$@" mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np "$np" \
            "$prefix/bin/fft_transpose" "$iters" | sed -n 's/.*time=\([0-9.]*\) s.*/\1/p'
    done | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

lib="$prefix/lib/libcoltune.so"
echo
echo "== one run under LD_PRELOAD with COLTUNE_VERBOSE=1 COLTUNE_STATS=1 (default rules)"
LD_PRELOAD="$lib" COLTUNE_VERBOSE=1 COLTUNE_STATS=1 launch "$prefix/bin/fft_transpose" "$iters"

echo
echo "== $np ranks, $iters MPI_Alltoallv calls per run (N1 pattern), median of $runs runs"
native=$(median_time COLTUNE_DISABLE=1)
printf '%-34s %12s %9s\n' "configuration" "time [s]" "speedup"
printf '%-34s %12s %9s\n' "native MPI_Alltoallv" "$native" "1.00"
for alg in rules pairwise nonblocking linear scattered:block_count=4 \
           multipair_waitany:stride=4 multipair_testany:stride=4; do
    if [ "$alg" = rules ]; then
        t=$(median_time LD_PRELOAD="$lib")
        label="coltune (installed rules)"
    else
        t=$(median_time LD_PRELOAD="$lib" COLTUNE_ALLTOALLV="$alg")
        label="coltune $alg"
    fi
    printf '%-34s %12s %9s\n' "$label" "$t" "$(echo "$native $t" | awk '{ printf "%.2f", $1 / $2 }')"
done
