#!/usr/bin/env bash
# The main job: build, then run the demo scenario (kernels/demo_capture.cu)
# under the shim through the launcher, and print the report. On a GPU host
# the demo is built with nvcc and runs on the real driver; elsewhere it runs
# on the bundled CPU stand-in driver. Installs what is missing first
# (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build}
bash scripts/setup.sh build
out=$(mktemp -d)
if nvidia-smi -L >/dev/null 2>&1 && command -v nvcc >/dev/null; then
  echo "== GPU found: demo on the real driver"
  nvcc -O2 -Ikernels -o "$out/demo_capture" kernels/demo_capture.cu
  demo=("$out/demo_capture")
else
  echo "== no GPU: demo on the CPU stand-in driver (tests/standin)"
  export LD_LIBRARY_PATH="$PWD/$B/tests/standin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  demo=("$B/tests/programs/demo_capture")
fi
"$B/tools/cgshim" --log=debug --log-file="$out/demo-%p.jsonl" --log-format=jsonl -- "${demo[@]}"
if "$B/tools/cgshim" report --help >/dev/null 2>&1; then
  "$B/tools/cgshim" report "$out"/demo-*.jsonl
  "$B/tools/cgshim" report --perfetto "$out/timeline.json" "$out"/demo-*.jsonl >/dev/null
  echo "== timeline: $out/timeline.json (open in ui.perfetto.dev); logs: $out"
else
  # The launcher is built without the report when jansson is missing.
  echo "== no report: this build of cgshim has no \`report\` (libjansson-dev or libdw-dev was" \
       "not found when $B was configured; install it and run: meson setup --reconfigure $B). Logs: $out"
fi
