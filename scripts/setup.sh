#!/usr/bin/env bash
# scripts/setup.sh [build|test] -- install what is missing (scripts/deps.sh),
# configure the build directory ($BUILD, default build) and build it. "test"
# also builds the CPU test suites (-Dtests=enabled; "build" leaves the
# option at auto: tests only when cmocka is there). Quiet when all goes
# well; a failing step prints its whole output.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-build}
B=${BUILD:-build}
bash scripts/deps.sh "$what"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
fail() { cat "$log" >&2; echo "setup: $1 failed (output above)" >&2; exit 1; }
opts=()
[ "$what" = test ] && opts=(-Dtests=enabled)
if [ ! -f "$B/build.ninja" ]; then
  # A directory left by a failed set-up is configured afresh.
  if [ -f "$B/meson-private/coredata.dat" ]; then
    meson setup --wipe "$B" "${opts[@]}" >"$log" 2>&1 || fail "meson setup --wipe $B"
  else
    meson setup "$B" "${opts[@]}" >"$log" 2>&1 || fail "meson setup $B"
  fi
elif [ "$what" = test ] &&
     ! meson introspect --buildoptions "$B" | python3 -c '
import json, sys
sys.exit(0 if any(o["name"] == "tests" and o["value"] == "enabled" for o in json.load(sys.stdin)) else 1)'; then
  # (a directory configured before tests became a feature option refuses
  # the value: it is configured afresh)
  meson configure "$B" -Dtests=enabled >"$log" 2>&1 ||
    meson setup --wipe "$B" -Dtests=enabled >"$log" 2>&1 || fail "meson setup --wipe $B -Dtests=enabled"
fi
ninja -C "$B" >"$log" 2>&1 || fail "ninja -C $B"
