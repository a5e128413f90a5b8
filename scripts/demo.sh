#!/bin/sh
# demo.sh - the main job, as a newcomer meets coltune:
#   1. build and install coltune into ./_install;
#   2. tune it for this machine: coltune-tune --quick writes a rules file, a
#      validation table and a heatmap;
#   3. build an unmodified MPI application (examples/fft_transpose.c: plain
#      mpicc, no coltune header) and run it natively and under
#      LD_PRELOAD=libcoltune.so with the tuned rules, showing which algorithm
#      served its MPI_Alltoallv calls and both times (median of several runs,
#      side by side) with the speedup.
# DEMO_NP (default 16) ranks, DEMO_ITERS (default 2000) exchanges per run,
# DEMO_RUNS (default 5) runs per configuration, DEMO_SCALE (default 1) block
# size multiplier (1 = the paper's N1 blocks of 8 doubles).
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
prefix="$top/_install"
np=${DEMO_NP:-16}
iters=${DEMO_ITERS:-2000}
runs=${DEMO_RUNS:-5}
scale=${DEMO_SCALE:-1}
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "== 1. building coltune into $prefix"
[ -x configure ] || ./autogen.sh > /dev/null 2>&1
mkdir -p build-demo
(cd build-demo && "$top/configure" --prefix="$prefix" > configure.out 2>&1 &&
    make -j"$(nproc)" > make.out 2>&1 && make install > install.out 2>&1) ||
    { echo "build failed: see build-demo/configure.out, build-demo/make.out" >&2; exit 1; }
lib="$prefix/lib/libcoltune.so"

echo "== 2. tuning for this machine: coltune-tune -np $np --quick"
"$prefix/bin/coltune-tune" -np "$np" --quick --outdir "$prefix/tune" \
    -o "$prefix/tune/machine.rules"
rules="$prefix/tune/machine.rules"

echo
echo "== 3. an unmodified MPI application: examples/fft_transpose.c (plain mpicc)"
mpicc -O2 -o "$prefix/bin/fft_transpose" examples/fft_transpose.c
launch() {
    mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np "$np" "$@"
}
echo "-- one run under LD_PRELOAD with COLTUNE_VERBOSE=1 COLTUNE_STATS=1:"
LD_PRELOAD="$lib" COLTUNE_RULES="$rules" COLTUNE_VERBOSE=1 COLTUNE_STATS=1 \
    launch "$prefix/bin/fft_transpose" "$iters" "$scale"

# $runs runs of each, native and coltune alternating so machine drift hits
# both alike; the medians are compared.
times_native=""
times_coltune=""
for i in $(seq "$runs"); do
    t=$(launch "$prefix/bin/fft_transpose" "$iters" "$scale" | sed -n 's/.*time=\([0-9.]*\) s.*/\1/p')
    times_native="$times_native $t"
    t=$(LD_PRELOAD="$lib" COLTUNE_RULES="$rules" launch "$prefix/bin/fft_transpose" \
        "$iters" "$scale" | sed -n 's/.*time=\([0-9.]*\) s.*/\1/p')
    times_coltune="$times_coltune $t"
done
median() { printf '%s\n' $1 | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
native=$(median "$times_native")
coltune=$(median "$times_coltune")
echo
echo "== fft_transpose, $np ranks, $iters MPI_Alltoallv calls per run, median of $runs runs"
printf '%-44s %10s %9s\n' "run" "time [s]" "speedup"
printf '%-44s %10s %9s\n' "native MPI" "$native" "1.00"
printf '%-44s %10s %9s\n' "LD_PRELOAD=libcoltune.so, tuned rules" "$coltune" \
    "$(echo "$native $coltune" | awk '{ printf "%.2f", $1 / $2 }')"
echo
echo "rules:   $rules"
echo "heatmap: $(ls "$prefix"/tune/heatmap-*.png 2>/dev/null | tr '\n' ' ')"
echo "use it:  LD_PRELOAD=$lib COLTUNE_RULES=$rules mpirun ... ./your_app"
