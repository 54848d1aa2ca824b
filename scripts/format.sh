#!/usr/bin/env bash
# scripts/format.sh -- reformat the files of scripts/format-pending.txt with
# the committed .clang-format (clang-format 14) and empty the list (its
# comment lines stay). Run once, on a clean tree, then build, test and commit.
#   FILE...  reformat these instead (and take them off the list)
set -euo pipefail
cd "$(dirname "$0")/.."
CF=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format)}
list=scripts/format-pending.txt
if [ $# -gt 0 ]; then files=("$@"); else mapfile -t files < <(grep -v '^\s*\(#\|$\)' "$list"); fi
for f in "${files[@]}"; do
  [ -f "$f" ] && "$CF" -i --style=file "$f"
done
tmp=$(mktemp)
grep -v '^\s*$' "$list" | while IFS= read -r line; do
  case "$line" in \#*) echo "$line" ;; *) keep=1; for f in "${files[@]}"; do [ "$f" = "$line" ] && keep=0; done; [ $keep = 1 ] && echo "$line" ;; esac
done > "$tmp" || true
mv "$tmp" "$list"
echo "reformatted ${#files[@]} files; $(grep -vc '^\s*#' "$list" || true) left in $list"
