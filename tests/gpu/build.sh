#!/usr/bin/env bash
# tests/gpu/build.sh -- build the shim (and the launcher) on a GPU host into
# build-gpu (tests off: the CPU suites need cmocka/jansson that a GPU box may
# lack). uthash.h comes from the system or from .deps/include.
set -eu
cd "$(dirname "$0")/../.."
B=${CGSHIM_GPU_BUILD:-build-gpu}
export CFLAGS="${CFLAGS:-} -I$PWD/.deps/include"
[ -f "$B/build.ninja" ] || meson setup "$B" -Dtests=disabled >"$B.setup.log" 2>&1 || { cat "$B.setup.log"; exit 1; }
ninja -C "$B" >"$B.ninja.log" 2>&1 || { tail -40 "$B.ninja.log"; exit 1; }
