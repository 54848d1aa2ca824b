#!/usr/bin/env bash
# Build and run every CPU test suite (unit, standin, integration, tools,
# rules). Ends with "N passed, N failed". The GPU checks are tests/gpu/run.
# Installs what is missing first (scripts/setup.sh test).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build}
bash scripts/setup.sh test || exit 1
meson test -C "$B" --print-errorlogs --num-processes 2
rc=$?
python3 - "$B/meson-logs/testlog.json" <<'PY'
import json, sys
ok = bad = skip = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["result"] in ("OK", "EXPECTEDFAIL"):
        ok += 1
    elif r["result"] == "SKIP":
        skip += 1
    else:
        bad += 1
print("%d passed, %d failed, %d skipped" % (ok, bad, skip))
PY
exit $rc
