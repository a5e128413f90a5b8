#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A rules file that is not a file must not hang the job. A plain MPI program
# runs under LD_PRELOAD with COLTUNE_RULES naming a FIFO without a writer,
# /dev/zero, a directory and a file over the size limit: the job finishes,
# its output equals the native run's, and the error naming the file and the
# reason appears exactly once (rank 0). coltune-info --check and its report
# say the same, promptly. Every run has a short time limit, so a regression
# (opening the FIFO blocks, reading /dev/zero never ends) fails instead of
# hanging the suite.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
lib="$top_builddir/src/.libs/libcoltune.so"
app="$top_builddir/tests/mpi/plain_alltoallv"
info="$top_builddir/info/coltune-info"
P=${CT_RULES_NP:-2}
CT_TEST_TIMEOUT=${CT_RULES_TIMEOUT:-120}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "$*" >&2; return 1; }

run_mpi "$P" "$app" | sort > "$tmp/native" || exit 1
[ -s "$tmp/native" ] || { echo "native run printed nothing" >&2; exit 1; }

mkfifo "$tmp/fifo" || exit 1
mkdir "$tmp/dir" || exit 1
# One byte over the 4 MiB limit, sparse: refused before anything is read.
: > "$tmp/big.rules" && truncate -s 4194305 "$tmp/big.rules" || exit 1

# check_job PATH REASON: the job with COLTUNE_RULES=PATH prints one line,
# "coltune: error: PATH: cannot read rules file: REASON; rules file ignored,
# every call uses pmpi", and nothing else of coltune's, and computes right.
check_job() {
    path=$1
    want="coltune: error: $path: cannot read rules file: $2; rules file ignored, every call uses pmpi"
    with_env LD_PRELOAD="$lib" COLTUNE_RULES="$path" -- run_mpi "$P" "$app" \
        > "$tmp/out" 2> "$tmp/err" || { cat "$tmp/err" >&2; return 1; }
    sort "$tmp/out" | diff "$tmp/native" - || return 1
    n=$(grep -cxF "$want" "$tmp/err")
    [ "$n" = 1 ] || fail "want once: '$want'; $n times in:$(echo; cat "$tmp/err")" || return 1
    n=$(grep -c "^coltune" "$tmp/err")
    [ "$n" = 1 ] || fail "$n coltune lines, want 1:$(echo; cat "$tmp/err")"
}
check_run "COLTUNE_RULES=FIFO without a writer: the job runs" \
    check_job "$tmp/fifo" "a FIFO, not a regular file"
check_run "COLTUNE_RULES=/dev/zero: the job runs" \
    check_job /dev/zero "a character device, not a regular file"
check_run "COLTUNE_RULES=directory: the job runs" \
    check_job "$tmp/dir" "a directory, not a regular file"
check_run "COLTUNE_RULES=file over the limit: the job runs" \
    check_job "$tmp/big.rules" "larger than the limit of 4 MiB"

# coltune-info reads the file the same way and gives the job's message:
# --check with its own exit status 1, the report with the job's whole line.
check_info() {
    path=$1
    msg="$path: cannot read rules file: $2"
    timeout 30 "$info" --check "$path" > "$tmp/c" 2>&1
    rc=$?
    [ $rc = 1 ] || fail "--check $path: exit $rc, want 1: $(cat "$tmp/c")" || return 1
    [ "$(head -n 1 "$tmp/c")" = "$msg" ] ||
        fail "--check $path: got '$(head -n 1 "$tmp/c")', want '$msg'" || return 1
    COLTUNE_RULES="$path" timeout 30 "$info" --library "$lib" --parsable > "$tmp/r" 2>&1
    rc=$?
    [ $rc = 1 ] || fail "report: exit $rc, want 1" || return 1
    grep -qxF "rules:error:$msg; rules file ignored, every call uses pmpi" "$tmp/r" ||
        fail "report: no line 'rules:error:$msg; ...' in:$(echo; cat "$tmp/r")"
}
check_run "coltune-info --check FIFO" check_info "$tmp/fifo" "a FIFO, not a regular file"
check_run "coltune-info --check /dev/urandom" \
    check_info /dev/urandom "a character device, not a regular file"
check_run "coltune-info --check directory" \
    check_info "$tmp/dir" "a directory, not a regular file"
finish
