#!/usr/bin/env bash
# tests/gpu/peer_selftest.sh -- checks tests/gpu/peer and peer_judge.py on a
# machine without a GPU: fake suites (pytest files that play the shim's part
# by writing records into $CGSHIM_LOG_FILE when LD_PRELOAD is set), an empty
# preloaded library in the shim's place, the real peer dir for compare.py,
# tools/ and the carried pytest. Each case must get its verdict:
#   good   passes both ways; a violation in an allowlisted test only  -> PASS
#   bad    an outcome difference, a mismatch, a false alarm, and a
#          violation in a test failing both ways (listed, not judged)  -> FAIL
#   crash  SIGSEGV under the shim in its 2nd test                      -> FAIL
#   slow   hangs under the shim past its limit                         -> FAIL
# Usage: bash tests/gpu/peer_selftest.sh   (needs gcc, python3; ~3 min, mostly sleep)
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
PEER=${PEER_DIR:-}
[ -n "$PEER" ] || for d in .peer ../shared/peer; do [ -f "$d/compare.py" ] && { PEER=$d; break; }; done
[ -n "$PEER" ] || { echo "no peer dir: skipped"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
gcc -shared -fPIC -o "$T/fakeshim.so" -x c /dev/null || exit 1
X=$T/extra
mkdir -p "$X/good" "$X/bad" "$X/crash" "$X/slow"
cat > "$T/rec.py" <<'EOF'
import json, os, time
def rec(ev, **kw):
    """Write one record as the shim would, only when 'under the shim'."""
    if "LD_PRELOAD" not in os.environ:
        return
    path = os.environ["CGSHIM_LOG_FILE"].replace("%p", str(os.getpid()))
    r = {"v": 1, "ev": ev, "ts": time.monotonic_ns(), "pid": os.getpid()}
    r.update(kw)
    with open(path, "a") as f:
        f.write(json.dumps(r) + "\n")
SHIM = "LD_PRELOAD" in os.environ
EOF
for s in good bad crash slow; do cp "$T/rec.py" "$X/$s/rec.py"; done
cat > "$X/good/test_good.py" <<'EOF'
import pytest
from rec import rec
def test_plain(): assert 1 + 1 == 2
def test_provokes_on_purpose(): rec("violation", rule="CGS007", severity="error", api="cuStreamSynchronize")
def test_info_only(): rec("capture", capture=1)
@pytest.mark.skip(reason="skipped both ways")
def test_skipped(): pass
EOF
printf 'JAX_LIKE=1\n' > "$X/good/env"
cat > "$X/bad/test_bad.py" <<'EOF'
from rec import rec, SHIM
def test_differs(): assert not SHIM
def test_mismatch(): rec("mismatch", rule="CGS001", api="cuGraphExecUpdate", predicted_rc=910, rc=0)
def test_false_alarm(): rec("violation", rule="CGS009", severity="warn", api="cuMemFreeAsync")
def test_fails_both():
    rec("violation", rule="CGS008", severity="error", api="cuStreamEndCapture")
    assert False
EOF
cat > "$X/crash/test_crash.py" <<'EOF'
import os, signal
from rec import SHIM
def test_a(): pass
def test_b():
    if SHIM: os.kill(os.getpid(), signal.SIGSEGV)
def test_c(): pass
EOF
cat > "$X/slow/test_slow.py" <<'EOF'
import time
from rec import SHIM
def test_a(): pass
def test_hang():
    if SHIM: time.sleep(600)
EOF
printf 'good  test_provokes_on_purpose  selftest: provokes a refusal on purpose\n' > "$T/allow.txt"

fails=0; passes=0
check() {   # check NAME PATTERN FILE
  if grep -q -E -- "$2" "$3"; then passes=$((passes + 1)); echo "ok   $1"
  else fails=$((fails + 1)); echo "FAIL $1: no line matching /$2/"; fi
}
run() {     # run TAG GROUPS LIMIT MINRUN
  mkdir -p "$T/out-$1"
  PEER_DIR=$PEER PEER_EXTRA_DIR=$X PEER_SHIM=$T/fakeshim.so PEER_ALLOW=$T/allow.txt \
    PEER_WORK=$T/work-$1 PEER_RESERVE_S=5 PEER_GROUPS=$2 PEER_LIMIT_S=$3 PEER_MIN_RUN=$4 OUT=$T/out-$1 \
    bash "$ROOT/tests/gpu/peer" > "$T/$1.txt" 2>&1
  echo "rc=$?" >> "$T/$1.txt"
}
run mixed "good,bad crash slow" 200 10 &
run clean "good" 150 3
wait
M=$T/mixed.txt; C=$T/clean.txt
check "good passes"          '^PASS good: 3 run under the shim \(pass/fail/skip 3/0/1; bare 3/0/1\), 0 differences, 0 crashes, 0 mismatch, violations only in tests that provoke errors on purpose \(1 in 1 test' "$M"
check "bad fails"            '^FAIL bad: 4 run .*1 difference\(s\); 1 mismatch record\(s\); false alarm\(s\) in 1 test\(s\)' "$M"
check "bad: the diff"        'DIFF test_bad.py::test_differs: bare=pass shim=fail' "$M"
check "bad: the mismatch"    'MISMATCH test_bad.py::test_mismatch CGS001:cuGraphExecUpdate x1' "$M"
check "bad: the false alarm" 'FALSE ALARM: test_bad.py::test_false_alarm: CGS009:cuMemFreeAsync x1' "$M"
check "bad: failing both"    'not judged .*test_bad.py::test_fails_both: CGS008' "$M"
check "crash fails"          '^FAIL crash: .*crash: shim run rc=139 \(signal 11\) \(bare rc=0\); shim run ended inside test_crash.py::test_b' "$M"
check "crash: the test"      'DIFF test_crash.py::test_b: bare=pass shim=unfinished' "$M"
check "slow times out"       '^FAIL slow: .*crash: shim run timed out after' "$M"
check "total under bar"      '^FAIL total: [0-9]+ tests run \(not skipped\) under the shim over 4 suites \(bar >= 10\)' "$M"
check "mixed closing"        '^1 passed, 4 failed$' "$M"
check "mixed exit status"    '^rc=1$' "$M"
check "within its limit"     '^in limit$' <(sed -n 's/^peer: done at t+\([0-9]*\)s$/\1/p' "$M" | awk '{print ($1 <= 200) ? "in limit" : "over: " $1}')
check "clean closing"        '^2 passed, 0 failed$' "$C"
check "clean total"          '^PASS total: 3 tests run' "$C"
check "clean exit status"    '^rc=0$' "$C"
check "versions noted"       'peer: version: python 3' "$C"
check "OUT files"            'peer-summary.json' <(ls "$T/out-clean")
check "OUT tarball"          'g1/good/shim/timing.jsonl' <(tar tzf "$T/out-clean/peer-results.tgz")
if [ "$fails" -ne 0 ]; then echo "--- mixed run:"; cat "$M"; fi
echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
