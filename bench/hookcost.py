#!/usr/bin/env python3
"""bench/hookcost.py LOG.jsonl... -- the shim's own time per hooked API from
a trace-level log (CGSHIM_LOG=trace): per api the count, and the medians and
totals of pre_ns (the hook's work before the driver call), post_ns (after it)
and the driver's own share (dur_ns - pre_ns - post_ns). Where the time of a
workload under the shim goes, call type by call type (issue 17 point 4)."""
import json, statistics, sys, collections

rows = collections.defaultdict(list)
for path in sys.argv[1:]:
    for line in open(path, errors="replace"):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("ev") != "call" or "dur_ns" not in r:
            continue
        pre, post, dur = r.get("pre_ns", 0), r.get("post_ns", 0), r["dur_ns"]
        rows[r["api"]].append((pre, post, dur - pre - post))
print("%-34s %7s %9s %9s %9s %11s" % ("api", "n", "pre_med", "post_med", "drv_med", "shim_total_us"))
tot = 0
for api, v in sorted(rows.items(), key=lambda kv: -sum(p + q for p, q, _ in kv[1])):
    s = sum(p + q for p, q, _ in v)
    tot += s
    print("%-34s %7d %9.0f %9.0f %9.0f %11.1f" % (api, len(v), statistics.median(x[0] for x in v),
          statistics.median(x[1] for x in v), statistics.median(x[2] for x in v), s / 1e3))
print("total shim time in hooks (pre+post): %.1f us" % (tot / 1e3))
