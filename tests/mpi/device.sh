#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# GPU buffers are the MPI library's. Without a GPU: stand-ins of the CUDA,
# HIP and Level Zero libraries (tests/mpi/gpu_standin.c, built here with the
# real sonames) report chosen host buffers as device memory once the plain
# program tests/mpi/gpu_device has loaded them (after MPI_Init). Under
# LD_PRELOAD with forced algorithms, coltune must forward exactly the calls
# with such a buffer on any rank (the statistics count them), serve the
# others with the forced algorithm, and every result must equal PMPI_'s.
# Without a stand-in loaded nothing is forwarded.
: "${CT_TEST_TIMEOUT:=120}"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
lib="$top_builddir/src/.libs/libcoltune.so"
app="$top_builddir/tests/mpi/gpu_device"
P=${CT_DEVICE_NP:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ldd "$app" | grep -q coltune; then
    echo "gpu_device is linked with coltune; the test would prove nothing" >&2
    exit 1
fi
standin() { # runtime soname
    "${MPICC:-mpicc}" -shared -fPIC -Wall -Wextra -Werror -D"STANDIN_$1" -Wl,-soname,"$2" \
        -o "$tmp/$2" "$top_srcdir/tests/mpi/gpu_standin.c" || exit 1
}
standin CUDA libcuda.so.1
standin HIP libamdhip64.so
standin ZE libze_loader.so.1

# stat COLL WORDS...: the calls column of the row of COLL whose algorithm
# column is WORDS (0 when there is none).
stat() {
    coll=$1
    shift
    awk -v c="$coll" -v a="$*" '$1 == c {
        n = split(a, w, " "); ok = 1
        for (i = 1; i <= n; i++) if ($(1 + i) != w[i]) ok = 0
        if (ok) { print $(n + 2); found = 1 } } END { if (!found) print 0 }' "$tmp/out"
}

# expect COLL WORDS... = N
expect() {
    want=$(eval echo "\${$#}")
    words=$(echo "$*" | sed 's/ = [0-9]*$//')
    got=$(stat $words)
    [ "$got" = "$want" ] && return 0
    echo "expected $want calls in the row '$words', got $got" >&2
    return 1
}

# run STANDIN VAR=value...: gpu_device under coltune with statistics.
run() {
    so=$1
    shift
    with_env LD_PRELOAD="$lib" COLTUNE_STATS=1 COLTUNE_VERBOSE=1 COLTUNE_FALLBACK=error "$@" \
        -- run_mpi "$P" "$app" "$so" > "$tmp/out" 2> "$tmp/err" || {
        cat "$tmp/out" "$tmp/err" >&2
        return 1
    }
    grep -q "gpu_device: ok" "$tmp/out" || { cat "$tmp/out" "$tmp/err" >&2; return 1; }
    # MPI-4 libraries: one MPI_Alltoallv_c more, with device memory on rank 0
    c=0
    if grep -q "gpu_device: large-count" "$tmp/out"; then c=1; fi
}

FORCED="COLTUNE_ALLTOALLV=tuna:radix=2 COLTUNE_ALLTOALL=tuna:radix=2 COLTUNE_ALLGATHER_INTER=direct"

check_native() {
    run_mpi "$P" "$app" "$tmp/libcuda.so.1" > "$tmp/out" 2> "$tmp/err" &&
        grep -q "gpu_device: ok" "$tmp/out" || { cat "$tmp/out" "$tmp/err" >&2; return 1; }
}
check_run "gpu_device natively (the program's own check) P=$P" check_native

# The calls of gpu_device.c: 8 Alltoallv (4 with device memory, one of
# them the direct API's pairwise) and c MPI_Alltoallv_c (c), 2 Alltoall (1),
# 2 intercommunicator Allgather (1), 1 + 1 MPIX_Alltoall_crs (the first
# refused).
check_forced() { # standin-file runtime-name
    run "$tmp/$1" $FORCED || return 1
    expect alltoallv forwarded: device memory = $((4 + c)) &&
        expect alltoallv tuna = 3 && expect alltoallv pmpi = $((4 + c)) &&
        expect alltoall forwarded: device memory = 1 &&
        expect alltoall tuna = 1 && expect alltoall pmpi = 1 &&
        expect allgather_inter forwarded: device memory = 1 &&
        expect allgather_inter direct = 1 && expect allgather_inter pmpi = 1 &&
        expect alltoall_crs refused: device memory = 1 || { cat "$tmp/out" >&2; return 1; }
    grep -q "coltune\[0\]: alltoallv on MPI_COMM_WORLD#[0-9]*: a buffer is $2 device or managed memory on some rank; forwarded to the MPI library" "$tmp/err" &&
        grep -q "MPIX_Alltoall_crs: sendvals is $2 device or managed memory" "$tmp/err" || {
        echo "the log does not say why (runtime $2):" >&2
        cat "$tmp/err" >&2
        return 1
    }
}
check_run "CUDA stand-in, forced algorithms, P=$P" check_forced libcuda.so.1 CUDA
check_run "HIP stand-in, forced algorithms, P=$P" check_forced libamdhip64.so HIP
check_run "Level Zero stand-in, forced algorithms, P=$P" check_forced libze_loader.so.1 "Level Zero"

# Rules instead of forced algorithms: alltoallv through a msg_size rule (the
# device fact travels in the decision's allreduce), alltoall through a rule
# decided once and cached (the device fact needs its own agreement).
printf 'alltoallv msg_size=0- pairwise\nalltoall linear\n' > "$tmp/device.rules"
check_rules() {
    run "$tmp/libcuda.so.1" COLTUNE_RULES="$tmp/device.rules" || return 1
    expect alltoallv forwarded: device memory = $((4 + c)) && expect alltoallv pairwise = 3 &&
        expect alltoall forwarded: device memory = 1 && expect alltoall linear = 1 ||
        { cat "$tmp/out" >&2; return 1; }
}
check_run "CUDA stand-in, rules, P=$P" check_rules

# Only rank 0 has a GPU runtime: the communicator's context agrees that some
# rank has one, so every rank takes part in the agreement and none waits.
# The calls with device memory on rank 0 are forwarded, those that mark
# buffers on other ranks only are host memory there, and served.
check_rank0() {
    run "rank0:$tmp/libcuda.so.1" $FORCED || return 1
    expect alltoallv forwarded: device memory = $((3 + c)) && expect alltoallv tuna = 4 &&
        expect alltoall forwarded: device memory = 1 && expect alltoall tuna = 1 &&
        expect allgather_inter direct = 2 && expect alltoall_crs refused: device memory = 1 &&
        ! grep -q "allgather_inter  *forwarded" "$tmp/out" || { cat "$tmp/out" >&2; return 1; }
}
check_run "CUDA stand-in on rank 0 only, P=$P" check_rank0

# The runtime is loaded after the first call on MPI_COMM_WORLD made its
# context: COLTUNE_DEVICE=always still agrees on every call (the default
# agrees only where a runtime was loaded when the context was made).
check_late() {
    run "late:$tmp/libcuda.so.1" $FORCED COLTUNE_DEVICE=always || return 1
    expect alltoallv forwarded: device memory = $((4 + c)) && expect alltoallv tuna = 4 &&
        expect alltoall forwarded: device memory = 1 && expect alltoall tuna = 1 ||
        { cat "$tmp/out" >&2; return 1; }
}
check_run "CUDA stand-in loaded late, COLTUNE_DEVICE=always, P=$P" check_late

# No stand-in loaded: nothing is device memory, every call is served.
check_none() {
    run none $FORCED || return 1
    ! grep -q "device memory" "$tmp/out" && expect alltoallv tuna = $((6 + c)) &&
        expect alltoallv pairwise = 1 && expect alltoall tuna = 2 &&
        expect allgather_inter direct = 2 || { cat "$tmp/out" "$tmp/err" >&2; return 1; }
}
check_run "no stand-in, forced algorithms, P=$P" check_none
finish
