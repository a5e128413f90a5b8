#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# What `make install` gives the people who install, check and link coltune:
#   - a program built from the installed tree with `pkg-config --cflags
#     --libs coltune` and a plain C compiler only runs right under mpirun;
#   - every installed man page renders without warnings, `man NAME` finds
#     the pages, and every function the library exports has its man3 page;
#   - the installed coltune-info runs (without mpirun) and checks the
#     installed rules file.
# The tree is installed with DESTDIR into a temporary directory.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "$*" >&2; return 1; }

make -C "$top_builddir" install DESTDIR="$tmp/dest" > "$tmp/install.out" 2>&1 || {
    cat "$tmp/install.out" >&2
    echo "make install failed" >&2
    exit 1
}
prefix=$(sed -n 's/^prefix=//p' "$top_builddir/coltune.pc")
root="$tmp/dest$prefix"
libdir=$(sed -n 's/^libdir=//p' "$top_builddir/coltune.pc" | sed "s|\${exec_prefix}|$root|")

check_pkgconfig() {
    # The tree sits under DESTDIR, not at its prefix: the installed file with
    # its prefix moved there (the MPI module it requires keeps its own).
    mkdir -p "$tmp/pc"
    sed "s|^prefix=.*|prefix=$root|" "$libdir/pkgconfig/coltune.pc" > "$tmp/pc/coltune.pc"
    flags=$(PKG_CONFIG_PATH="$tmp/pc" pkg-config --cflags --libs coltune) || return 1
    echo "pkg-config --cflags --libs coltune: $flags"
    # shellcheck disable=SC2086
    cc -std=c11 -o "$tmp/app" "$top_srcdir/tests/mpi/pkgconfig_app.c" $flags || return 1
    ldd "$tmp/app" | grep -q "$libdir/libcoltune.so" ||
        fail "the program does not find the installed library: $(ldd "$tmp/app")" || return 1
    for np in 2 3 4; do
        run_mpi "$np" "$tmp/app" > "$tmp/out" || return 1
        grep -q ": ok (0)$" "$tmp/out" || fail "$(cat "$tmp/out")" || return 1
    done
    cat "$tmp/out"
}
check_run "a program built with pkg-config flags only" check_pkgconfig

check_man_pages() {
    mandir="$root/share/man"
    n=0
    for page in "$mandir"/man*/*; do
        # Rendered from the top of the tree so that ".so man3/x.3" resolves.
        (cd "$mandir" && LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l \
            "${page#"$mandir"/}" 2>&1 > /dev/null) > "$tmp/warn"
        [ -s "$tmp/warn" ] && { fail "$page: $(cat "$tmp/warn")"; return 1; }
        n=$((n + 1))
    done
    echo "$n man pages render without warnings"
    for name in coltune-info coltune-tune coltune-bench coltune-sim coltune-cluster \
        coltune-compare coltune coltune.rules MPIX_Alltoallv_crs coltune_alltoallv_tuna; do
        MANPATH="$mandir" man -w "$name" > /dev/null 2>&1 || fail "man $name: no page" ||
            return 1
    done
    MANPATH="$mandir" MANWIDTH=80 man MPIX_Alltoallv_crs 2> /dev/null | grep -q MPIX_Alltoallv_crs ||
        fail "man MPIX_Alltoallv_crs shows nothing" || return 1
    # Every exported API function has its page (the MPI_* and mpi_* symbols,
    # and Open MPI's persistent MPIX_*_init and their Fortran MPIX_*_INIT,
    # are the intercepted calls: coltune(7)).
    nm -D --defined-only "$libdir/libcoltune.so" | awk '$2 == "T" { print $3 }' |
        grep -E '^(coltune_|MPIX_)' |
        grep -vxE 'MPIX_(Alltoallv?|Allgatherv?|Neighbor_alltoallv?)_init' |
        grep -vxE 'MPIX_(ALLTOALLV?|ALLGATHERV?|NEIGHBOR_ALLTOALLV?)_INIT' |
        sort > "$tmp/exported"
    [ "$(wc -l < "$tmp/exported")" -ge 30 ] || fail "too few exports: $(cat "$tmp/exported")" ||
        return 1
    while read -r f; do
        [ -f "$mandir/man3/$f.3" ] || fail "no man page for exported $f" || return 1
    done < "$tmp/exported"
    echo "$(wc -l < "$tmp/exported") exported functions, each with its man3 page"
}
check_run "man pages" check_man_pages

check_installed_info() {
    "$root/bin/coltune-info" --library "$libdir/libcoltune.so" > "$tmp/info" ||
        fail "$(cat "$tmp/info")" || return 1
    "$root/bin/coltune-info" --check "$root/etc/coltune/coltune.rules" > "$tmp/check" ||
        fail "$(cat "$tmp/check")" || return 1
    cat "$tmp/check"
}
check_run "installed coltune-info" check_installed_info

# The licence travels with the library: its text in the documentation
# directory, and coltune-info names it and the file (both forms).
check_licence() {
    docdir=$(find "$tmp/dest" -path '*/doc/coltune/LICENSE' | head -n 1)
    [ -n "$docdir" ] || fail "LICENSE not installed under share/doc/coltune" || return 1
    cmp -s "$docdir" "$top_srcdir/LICENSE" || fail "installed LICENSE differs" || return 1
    [ -f "$(dirname "$docdir")/README.md" ] || fail "README.md not installed" || return 1
    grep -q '^License: BSD-3-Clause (.*/doc/coltune/LICENSE)$' "$tmp/info" ||
        fail "coltune-info does not name the licence: $(head -n 3 "$tmp/info")" || return 1
    "$root/bin/coltune-info" --parsable --library "$libdir/libcoltune.so" |
        grep -q '^license:BSD-3-Clause$' || fail "coltune-info --parsable: no license key" ||
        return 1
    "$root/bin/coltune-info" --version | grep -q '^License: BSD-3-Clause' ||
        fail "coltune-info --version does not name the licence" || return 1
    echo "LICENSE installed as $docdir; coltune-info names it"
}
check_run "licence installed and reported" check_licence

finish
