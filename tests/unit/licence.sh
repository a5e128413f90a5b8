#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every source file of the tree (C, headers, Fortran, scripts, Python, build
# files, man pages, platform files) carries the licence's SPDX line, and
# LICENSE is the licence it names. Data and prose (Markdown, rules files,
# CSV, images) are not source. Reads the files git tracks where the tree is
# a git checkout, else every file below the source tree.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top" || exit 1
tag='SPDX-License-Identifier: BSD-3-Clause'
grep -q '^BSD 3-Clause License$' LICENSE || { echo "FAIL: LICENSE is not BSD-3-Clause"; exit 1; }
if git -C "$top" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    list() { git -C "$top" ls-files; }
else
    # A release tarball or an unpacked tree: what autotools generate is not
    # ours (Makefile.in, configure, aclocal.m4, build-aux/, m4/).
    list() { find . -type f ! -path './build*' ! -path './_*' ! -path '*/.git/*' \
        ! -name Makefile.in ! -name configure ! -name aclocal.m4 ! -name 'config.*' \
        ! -path './build-aux/*' ! -path './m4/*' ! -path './autom4te.cache/*' |
        sed 's|^\./||'; }
fi
missing=0
checked=0
for f in $(list); do
    case "$f" in
    *.c | *.h | *.F90 | *.sh | *.py | *.in | *.am | *.ac | *.xml | *.supp | \
        man/*.[0-9] | man/man*/*.[0-9] | scripts/* | smpi/*.sh | .ci/run | conf/coltune.rules) ;;
    *) continue ;;
    esac
    case "$f" in *.md | *.png | *.svg | *.csv) continue ;; esac
    [ -f "$f" ] || continue
    checked=$((checked + 1))
    # Within the first three lines: after a shebang, a troff preprocessor
    # line or an XML declaration and doctype.
    head -n 3 "$f" | grep -q "$tag" || { echo "FAIL: $f has no '$tag' line"; missing=$((missing + 1)); }
done
[ "$checked" -ge 150 ] || { echo "FAIL: only $checked source files found in $top"; exit 1; }
echo "$checked source files checked, $missing without the SPDX line"
[ "$missing" -eq 0 ]
