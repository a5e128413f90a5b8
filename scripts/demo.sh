#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# demo.sh - the main job, as a newcomer meets coltune:
#   1. build and install coltune into ./_install;
#   2. tune it for this machine: coltune-tune --quick writes a rules file, a
#      validation table and a heatmap;
#   3. build an unmodified MPI application (examples/fft_transpose.c: plain
#      mpicc, no coltune header) and run it natively and under
#      LD_PRELOAD=libcoltune.so with the tuned rules, showing which algorithm
#      served its MPI_Alltoallv calls and both times (median of several runs,
#      side by side) with the speedup, and under COLTUNE_ADAPT=1 (coltune
#      learning online from the application's own calls, no tuning run: the
#      shipped default rules give it its incumbent; and with no rules file
#      at all, learning from the first call);
#   3b. the same for examples/pencil_fft.c, the transposes of a
#      pencil-decomposed 3-D FFT on row and column sub-communicators with
#      uneven blocks; what one COLTUNE_ADAPT=1 run learned
#      (COLTUNE_ADAPT_OUT) is then reused as a rules file;
#   4. the same for a real third-party library: SpFFT's distributed 3-D FFT
#      (examples/spfft_3d.c, Debian libspfft-dev), whose exchange between
#      its z-column and slab layouts is one MPI_Alltoallv per transform,
#      fixed when its grid is made (not timed, as FFTW's planner times its
#      transposes and may prefer point-to-point ones), so every run makes
#      the calls coltune serves;
#   5. what IMB and OSU would show with these rules: coltune-bench --sweep of
#      MPI_Alltoall and MPI_Alltoallv, equal blocks of 0 B to 1 MiB, native
#      time / coltune time and the chosen algorithm per size.
# After each timing it says what coltune ran: a tuned algorithm, or the MPI
# library's own routine (pmpi), where the times differ only by coltune's
# interception and noise.
# Before step 1 it checks that everything the README's first command installs
# is here (the tools, and SpFFT by building examples/spfft_3d.c): a missing
# piece stops the demo at once, naming its Debian package, rather than after
# minutes of building and tuning, or by skipping a step.
# DEMO_NP (default 16) ranks, DEMO_ITERS (default 2000) exchanges per run,
# DEMO_RUNS (default 5) runs per configuration, DEMO_SCALE (default 1) block
# size multiplier (1 = the N1 blocks of 8 doubles of [Fan2024]); SPFFT_NP
# (default 8) ranks, SPFFT_N (default 32) points per dimension and
# SPFFT_ITERS (default 100) backward and forward transform pairs per run for
# step 4; SPFFT_CFLAGS and SPFFT_LIBS (default -lspfft -lm) where SpFFT is
# installed elsewhere; DEMO_SPFFT=0 leaves step 4 out, on purpose, for a
# machine without SpFFT;
# DEMO_SWEEP_ITERS (default 10) timed iterations per size in step 5.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
prefix="$top/_install"
np=${DEMO_NP:-16}
iters=${DEMO_ITERS:-2000}
runs=${DEMO_RUNS:-5}
scale=${DEMO_SCALE:-1}
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# need COMMAND PACKAGE: notes PACKAGE as missing when COMMAND is not found.
missing=""
need() { command -v "$1" > /dev/null 2>&1 || missing="$missing $2"; }
[ -x configure ] || { need autoreconf autoconf; need automake automake; need libtoolize libtool; }
need pkg-config pkg-config
need make make
need gcc gcc
need mpicc "libopenmpi-dev openmpi-bin"
need mpirun openmpi-bin
need python3 python3
need gnuplot gnuplot-nox
spfft_log=""
spfft_cflags=${SPFFT_CFLAGS:-}
spfft_libs=${SPFFT_LIBS:--lspfft -lm}
if [ "${DEMO_SPFFT:-1}" != 0 ] && command -v mpicc > /dev/null 2>&1; then
    mkdir -p "$prefix/bin"
    # shellcheck disable=SC2086 # the flags are lists of words
    if ! mpicc -O2 $spfft_cflags -o "$prefix/bin/spfft_3d" examples/spfft_3d.c $spfft_libs \
        > "$prefix/spfft_build.log" 2>&1; then
        missing="$missing libspfft-dev"
        spfft_log="$prefix/spfft_build.log"
    fi
fi
if [ -n "$missing" ]; then
    {
        echo "demo.sh: FAILED before starting: missing what the README's first command installs."
        if [ -n "$spfft_log" ]; then
            echo "SpFFT's distributed 3-D FFT (step 4) does not build:"
            echo "  mpicc -O2 ${spfft_cflags:+$spfft_cflags }-o $prefix/bin/spfft_3d examples/spfft_3d.c $spfft_libs"
            grep -E ': (fatal )?error|cannot find|undefined reference' "$spfft_log" | head -n 3 |
                sed 's/^/    /'
            echo "  (the whole output: $spfft_log)"
        fi
        echo "Install (Debian 12, as root):"
        echo "  apt-get update && apt-get install -y$missing"
        [ -n "$spfft_log" ] && echo "or leave step 4 out on purpose: DEMO_SPFFT=0 $0"
    } >&2
    exit 1
fi

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
echo "-- what a $np-rank Alltoall(v) would run with these rules (coltune-info, no mpirun):"
"$prefix/bin/coltune-info" --check "$rules" --np "$np" --coll alltoall
"$prefix/bin/coltune-info" --check "$rules" --np "$np" --coll alltoallv | tail -n +3

echo
echo "== 3. an unmodified MPI application: examples/fft_transpose.c (plain mpicc)"
mpicc -O2 -o "$prefix/bin/fft_transpose" examples/fft_transpose.c
launch() {
    mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np "$np" "$@"
}
echo "-- one run under LD_PRELOAD with COLTUNE_VERBOSE=1 COLTUNE_STATS=1:"
LD_PRELOAD="$lib" COLTUNE_RULES="$rules" COLTUNE_VERBOSE=1 COLTUNE_STATS=1 \
    launch "$prefix/bin/fft_transpose" "$iters" "$scale" | tee "$prefix/fft_transpose.log"

# served LOG: the algorithms coltune's statistics in LOG name for Alltoall(v)
# ("collective algorithm calls ..." rows), one line, sorted.
served() {
    awk '($1 == "alltoall" || $1 == "alltoallv") && $3 ~ /^[0-9]+$/ { print $2 }' "$1" |
        sort -u | tr '\n' ' ' | sed 's/ $//'
}
# what_ran ALGS CALL: says what the speedup of the timed runs can show.
what_ran() {
    case "$1" in
    "") echo "(coltune served no $2 call: both runs are the MPI library's alone)" ;;
    pmpi) echo "(the tuned rules keep the MPI library's own $2 here (pmpi): coltune only"
        echo " intercepts and forwards the calls, so the two times differ by that and noise)" ;;
    *) echo "(coltune served the $2 calls with: $1; see its statistics above)" ;;
    esac
}

# compare_runs CMD...: $runs runs of CMD natively, under coltune with the
# tuned rules and under coltune learning online (COLTUNE_ADAPT=1) with no
# tuned rules (the shipped default gives the learner its incumbent) and with
# no rules file at all (COLTUNE_RULES=), alternating so machine drift hits
# all alike; sets $native, $coltune, $adapt and $adapt0 to the median times
# (the "time=... s" the program prints).
median() { printf '%s\n' $1 | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
time_of() { "$@" | sed -n 's/.*time=\([0-9.]*\) s.*/\1/p'; }
compare_runs() {
    tn=""
    tc=""
    ta=""
    t0=""
    for i in $(seq "$runs"); do
        tn="$tn $(time_of "$@")"
        tc="$tc $(LD_PRELOAD="$lib" COLTUNE_RULES="$rules" time_of "$@")"
        ta="$ta $(LD_PRELOAD="$lib" COLTUNE_ADAPT=1 time_of "$@")"
        t0="$t0 $(LD_PRELOAD="$lib" COLTUNE_ADAPT=1 COLTUNE_RULES= time_of "$@")"
    done
    native=$(median "$tn")
    coltune=$(median "$tc")
    adapt=$(median "$ta")
    adapt0=$(median "$t0")
}
# print_runs TITLE: the table of the last compare_runs.
print_runs() {
    echo
    echo "== $1, median of $runs runs"
    printf '%-58s %10s %9s\n' "run" "time [s]" "speedup"
    printf '%-58s %10s %9s\n' "native MPI" "$native" "1.00"
    for r in "tuned rules:$coltune" "COLTUNE_ADAPT=1, shipped rules:$adapt" \
        "COLTUNE_ADAPT=1, no rules file:$adapt0"; do
        printf '%-58s %10s %9s\n' "LD_PRELOAD=libcoltune.so, ${r%:*}" "${r##*:}" \
            "$(echo "$native ${r##*:}" | awk '{ printf "%.2f", $1 / $2 }')"
    done
}
compare_runs launch "$prefix/bin/fft_transpose" "$iters" "$scale"
print_runs "fft_transpose, $np ranks, $iters MPI_Alltoallv calls per run"
what_ran "$(served "$prefix/fft_transpose.log")" MPI_Alltoallv
echo "-- what COLTUNE_ADAPT=1 did (COLTUNE_STATS=1). With the shipped rules the learner runs"
echo "   their choice until its first round, which waits until the run is long enough to pay"
echo "   for it within COLTUNE_ADAPT_SHARE (default 2%):"
LD_PRELOAD="$lib" COLTUNE_ADAPT=1 COLTUNE_STATS=1 launch "$prefix/bin/fft_transpose" \
    "$iters" "$scale" | sed -n '/adaptive tuning/,/^coltune statistics/p' | sed '$d'
echo "   With no rules file it learns from the first call; a run this short may end still"
echo "   learning, having run its best candidate so far between its rounds; exploring took the"
echo "   calls and time below:"
LD_PRELOAD="$lib" COLTUNE_ADAPT=1 COLTUNE_RULES= COLTUNE_STATS=1 launch \
    "$prefix/bin/fft_transpose" "$iters" "$scale" |
    sed -n '/adaptive tuning/,/^coltune statistics/p' | sed '$d'

echo
echo "== 3b. a pencil-decomposed 3-D FFT exchange: examples/pencil_fft.c (plain mpicc)"
echo "(row and column sub-communicators, uneven blocks, as heFFTe and FFTW arrange them)"
mpicc -O2 -o "$prefix/bin/pencil_fft" examples/pencil_fft.c
piters=${PENCIL_ITERS:-500}
pn=${PENCIL_N:-30}
compare_runs launch "$prefix/bin/pencil_fft" "$piters" "$pn"
print_runs "pencil_fft N=$pn, $np ranks, $((4 * piters)) MPI_Alltoallv calls per run"
echo "-- COLTUNE_ADAPT_OUT: what a training run learned (COLTUNE_ADAPT_SHARE=100: its rounds"
echo "   back to back), as a rules file; reused, no exploration:"
LD_PRELOAD="$lib" COLTUNE_ADAPT=1 COLTUNE_ADAPT_SHARE=100 COLTUNE_ADAPT_OUT="$prefix/learned.rules" \
    launch "$prefix/bin/pencil_fft" "$piters" "$pn" > /dev/null
grep -v '^#' "$prefix/learned.rules" | sed 's/^/   /'
tl=""
for i in $(seq "$runs"); do
    tl="$tl $(LD_PRELOAD="$lib" COLTUNE_RULES="$prefix/learned.rules" \
        time_of launch "$prefix/bin/pencil_fft" "$piters" "$pn")"
done
learned=$(median "$tl")
printf '%-58s %10s %9s\n' "LD_PRELOAD=libcoltune.so, learned rules" "$learned" \
    "$(echo "$native $learned" | awk '{ printf "%.2f", $1 / $2 }')"

echo
echo "== 4. a third-party library: SpFFT's distributed 3-D FFT (examples/spfft_3d.c, plain mpicc)"
fnp=${SPFFT_NP:-8}
fn=${SPFFT_N:-32}
fiters=${SPFFT_ITERS:-100}
if [ "${DEMO_SPFFT:-1}" = 0 ]; then
    echo "left out: DEMO_SPFFT=0"
else
    flaunch() { mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np "$fnp" "$@"; }
    echo "(SpFFT exchanges its z-columns and slabs with one MPI_Alltoallv per transform)"
    echo "-- one run under LD_PRELOAD with COLTUNE_VERBOSE=1 COLTUNE_STATS=1:"
    LD_PRELOAD="$lib" COLTUNE_RULES="$rules" COLTUNE_VERBOSE=1 COLTUNE_STATS=1 \
        flaunch "$prefix/bin/spfft_3d" "$fn" "$fiters" | tee "$prefix/spfft_3d.log"
    compare_runs flaunch "$prefix/bin/spfft_3d" "$fn" "$fiters"
    print_runs "SpFFT 3-D FFT N=$fn, $fnp ranks, $((2 * fiters + 2)) MPI_Alltoallv calls per run"
    what_ran "$(served "$prefix/spfft_3d.log")" MPI_Alltoallv
fi

echo
echo "== 5. never slower than the MPI library? coltune-bench --sweep, $np ranks, tuned rules"
echo "(equal blocks of 0 B to 1 MiB, as IMB-MPI1 Alltoall Alltoallv and osu_alltoall(v) send)"
for coll in alltoall alltoallv; do
    COLTUNE_RULES="$rules" launch "$prefix/bin/coltune-bench" --sweep --coll "$coll" \
        --iters "${DEMO_SWEEP_ITERS:-10}" --no-progress
    echo
done

echo "rules:   $rules"
echo "heatmap: $(ls "$prefix"/tune/heatmap-*.png 2>/dev/null | tr '\n' ' ')"
echo "use it:  LD_PRELOAD=$lib COLTUNE_RULES=$rules mpirun ... ./your_app"
