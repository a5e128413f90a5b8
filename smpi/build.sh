#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# build.sh - builds coltune-bench for SimGrid SMPI from the same source files
# as the normal build (the Makefile passes its own source lists, so there is
# no second list and no second copy of anything):
#
#   build.sh SMPICC SRCDIR OUTPUT RULES 'CFLAGS' LIBRARY-SOURCES... -- BENCH-SOURCES...
#
# RULES is the default rules file compiled in (as CT_DEFAULT_RULES).
#
# Everything is linked into one program: smpirun gives every simulated rank
# its own copy of the program's global variables (smpi/privatization), which
# covers coltune's global state only if coltune is inside the program rather
# than in a shared library. The differences from the normal build:
#   -DCT_NO_INTERCEPT   src/shim defines no MPI_* symbol (the bench calls
#                       coltune through its direct API; SMPI's own MPI_*
#                       are the "native" routines)
#   -include compat.h   the MPI calls SMPI 3.32 lacks (smpi/compat.h)
# Library files keep -fvisibility=hidden; the bench files do not, since
# smpirun looks the program's main() up by name.
set -eu
smpicc=$1
srcdir=$2
out=$3
rules=$4
cflags=$5
shift 5

objdir="$out.objs"
rm -rf "$objdir"
mkdir -p "$objdir"
common="-std=gnu11 -O2 -Wall -Wextra $cflags -I$srcdir/include -I$srcdir/src -DCT_NO_INTERCEPT"
objs=""
part=lib
for f in "$@" smpi/compat.c; do
    if [ "$f" = -- ]; then
        part=bench
        continue
    fi
    case $f in *.c) ;; *) continue ;; esac
    o="$objdir/$(echo "$f" | tr '/' '_' | sed 's/\.c$/.o/')"
    if [ "$f" = smpi/compat.c ]; then
        extra="-fvisibility=hidden" # defines what compat.h redirects to
    elif [ $part = lib ]; then
        extra="-fvisibility=hidden -include $srcdir/smpi/compat.h"
    else
        extra="-include $srcdir/smpi/compat.h"
    fi
    # shellcheck disable=SC2086 # word splitting of the flag lists is wanted
    "$smpicc" -c $common $extra "-DCT_DEFAULT_RULES=\"$rules\"" "$srcdir/$f" -o "$o"
    objs="$objs $o"
done
# shellcheck disable=SC2086
"$smpicc" -o "$out" $objs -lm
