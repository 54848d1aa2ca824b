#!/usr/bin/env bash
# scripts/format.sh -- reformat with the committed .clang-format (clang-format
# 14) every file of scripts/format-pending.txt that exists, plus every other
# checked C source that does not conform (tests/style_check.py --list: files
# moved or added since the list was made), then empty the list (its comment
# lines stay). Run once, on a clean tree, then build, test and commit.
#   FILE...  reformat only these (and take them off the list)
set -euo pipefail
cd "$(dirname "$0")/.."
CF=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format)}
list=scripts/format-pending.txt
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <({ grep -v '^\s*\(#\|$\)' "$list"; python3 tests/style_check.py --clang-format "$CF" --list; } | sort -u)
fi
n=0
for f in "${files[@]}"; do
  if [ -f "$f" ]; then "$CF" -i --style=file "$f"; n=$((n + 1)); fi
done
tmp=$(mktemp)
while IFS= read -r line; do
  case "$line" in
  \#*) echo "$line" ;;
  "") ;;
  *) keep=1; for f in "${files[@]}"; do [ "$f" = "$line" ] && keep=0; done; [ $keep = 1 ] && echo "$line" ;;
  esac
done < "$list" > "$tmp"
mv "$tmp" "$list"
echo "reformatted $n files; $(grep -vc '^\s*#' "$list" || true) left in $list"
