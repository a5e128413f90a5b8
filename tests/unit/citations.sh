#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Citations a reader can follow. Papers are cited by an author-year key, a
# capitalised surname and a year in brackets (\[ and \] in troff too), and
# every key has an entry in the References of coltune(7) and in the
# "## References" section of README.md. Fails, naming what is wrong, when
#  - a file still cites a paper by its number in the papers directory
#    ("paper" and a three-digit number starting 00, any case);
#  - a key cited anywhere in the tree has no entry in coltune(7) or in the
#    README (CT_README names another README to check, e.g. a scratch copy);
#  - a key listed in coltune(7)'s References is cited nowhere else (an entry
#    line of a reference list does not count as a citation).
# Reads the files git tracks where the tree is a git checkout, else every
# file below the source tree; images and CSV are skipped.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top" || exit 1
man7=man/coltune.7
readme=${CT_README:-README.md}
if git -C "$top" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    list() { git -C "$top" ls-files; }
else
    list() { find . -type f ! -path './build*' ! -path './_build*' ! -path './_inst*' \
        ! -path '*/.git/*' |
        sed 's|^\./||'; }
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/files"
for f in $(list); do
    case "$f" in *.png | *.svg | *.jpg | *.jpeg | *.gif | *.pdf | *.csv) continue ;; esac
    [ -f "$f" ] && echo "$f" >> "$tmp/files"
done
checked=$(wc -l < "$tmp/files")
[ "$checked" -ge 150 ] || { echo "FAIL: only $checked files found in $top"; exit 1; }
for f in "$man7" "$readme"; do
    [ -r "$f" ] || { echo "FAIL: cannot read $f"; exit 1; }
done
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# Papers by number. -I: binary files are no citations.
old='paper[ _-]*00[0-9]'
grep_files() { tr '\n' '\0' < "$tmp/files" | xargs -0 grep -I -n "$@" /dev/null; }
if grep_files -i -e "$old" > "$tmp/old"; then
    while IFS= read -r line; do
        fail "cites a paper by number, not by key: $line"
    done < "$tmp/old"
fi

# Keys as written (troff's \[ and \] read as [ and ]), one
# "file:line:key" per occurrence.
key='\\?\[[A-Z][a-z][A-Za-z]*[0-9]{4}[a-z]?\\?\]'
grep_files -o -E -e "$key" | tr -d '\134' > "$tmp/all"
# The file:line of every entry line of a reference list: a troff tag line
# holding only the key (.TP), a Markdown list item starting with it.
grep_files -E -e "^${key}\$" -e "^[-*] +${key}" |
    cut -d: -f1,2 | sort -u > "$tmp/entry-lines"
cited() { sed 's/.*:\(\[[^]]*\]\)$/\1/' | sort -u; }
cited < "$tmp/all" > "$tmp/keys"
awk -F: 'NR == FNR { entry[$1 ":" $2] = 1; next } !(($1 ":" $2) in entry)' \
    "$tmp/entry-lines" "$tmp/all" | cited > "$tmp/cited"

# coltune(7): the tags of .SS References, up to the next section.
sed -n '/^\.SS References$/,/^\.S[HS] /p' "$man7" | tr -d '\134' |
    grep -E '^\[[^]]*\]$' | sort -u > "$tmp/man7"
[ -s "$tmp/man7" ] || fail "$man7 has no .SS References section with entries"
# README: the list items of "## References", up to the next heading.
sed -n '/^## References *$/,/^#/p' "$readme" |
    sed -n 's/^[-*] *\(\[[^]]*\]\).*/\1/p' | sort -u > "$tmp/readme"
[ -s "$tmp/readme" ] || fail "$readme has no \"## References\" section with '- [Key] ...' entries"

while IFS= read -r k; do
    where=$(grep -F "$k" "$tmp/all" | head -n 1 | cut -d: -f1,2)
    grep -qxF "$k" "$tmp/man7" || fail "$k (cited at $where) has no entry in $man7 References"
    grep -qxF "$k" "$tmp/readme" || fail "$k (cited at $where) has no entry in $readme ## References"
done < "$tmp/keys"
while IFS= read -r k; do
    grep -qxF "$k" "$tmp/cited" || fail "$k is listed in $man7 References but cited nowhere"
done < "$tmp/man7"

echo "$checked files checked: $(wc -l < "$tmp/keys") keys, $failed problems"
[ "$failed" -eq 0 ]
