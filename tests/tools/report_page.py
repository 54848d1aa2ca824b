#!/usr/bin/env python3
"""The report at any size (issue 35), on real runs under the shim:

- one HTML page of three runs (a capture broken by cudaMalloc, CGS007; a
  graph allocation outstanding, CGS011; demo_capture's failing update
  rewritten under CGSHIM_ON_UPDATE_FAILURE=reinstantiate) has the sections
  "who broke the capture", leaks and rewrites with their facts, the rule
  pages embedded, and chart tooltips that name the capture and its site;
- 54,000 captures (from the demo's capture record, four batch sizes, two
  sites) make a page of at most 1 MB with the groups and a count of the rest;
- 13,500 identical captures fold into one text row with its count;
- `zcat LOG.gz | cgshim report -` and `cgshim report LOG.jsonl.gz` print what
  `cgshim report LOG` prints;
- then the pages in headless Chromium: the DOM has the same sections, and a
  screenshot. Without chromium (scripts/deps.sh test installs it) that part
  is skipped and the test says so (exit 77 after the other checks passed).

usage: report_page.py --cgshim EXE --lib LIBCGSHIM --standin-dir DIR --programs PROG...
"""
import argparse
import gzip
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("--cgshim", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--standin-dir", required=True)
ap.add_argument("--programs", nargs="+", required=True)
A = ap.parse_args()
failed = 0


def check(cond, msg):
    global failed
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        failed += 1


def prog(name):
    for p in A.programs:
        if os.path.basename(p) == name:
            return os.path.abspath(p)
    sys.exit("report_page.py: no program %s among --programs" % name)


def report(*args, stdin=None):
    return subprocess.run([A.cgshim, "report"] + list(args), capture_output=True, stdin=stdin, timeout=300)


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.titles, self.pre, self.text = set(), [], [], []
        self._in = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag in ("title", "pre"):
            self._in = tag

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        self.text.append(data)
        if self._in == "title":
            self.titles.append(data)
        elif self._in == "pre":
            self.pre.append(data)


def parse(text):
    p = Page()
    p.feed(text)
    return p


d = tempfile.mkdtemp(prefix="cgshim-page-")
env = {k: v for k, v in os.environ.items() if not k.startswith("CGSHIM_") and k != "LD_PRELOAD"}
env.update(LD_PRELOAD=os.path.abspath(A.lib), LD_LIBRARY_PATH=os.path.abspath(A.standin_dir),
           CGSHIM_ON_UPDATE_FAILURE="reinstantiate")
logs = []
for name in ("cgs007_capture-unsafe-call", "cgs011_graph-allocation-outstanding", "demo_capture"):
    log = os.path.join(d, name + ".jsonl")
    subprocess.run([prog(name)], env=dict(env, CGSHIM_LOG_FILE=log), cwd=d, capture_output=True, timeout=120)
    check(os.path.getsize(log) > 0 if os.path.exists(log) else False, "%s wrote its log" % name)
    logs.append(log)

# -- one page with everything
page = os.path.join(d, "three.html")
q = report("--html", page, *logs)
check(q.returncode == 0, "report --html of the three runs: %d %s" % (q.returncode, q.stderr[-300:]))
text = open(page).read()
p = parse(text)
want = {"summary", "violations", "broken", "captures", "pools", "leaks", "rewrites", "graphs", "rules",
        "rule-CGS007", "rule-CGS011", "perfetto"}
check(want <= p.ids, "sections: missing %s" % sorted(want - p.ids))
body = " ".join(p.text)
check("broken by" in body and "cuMemAlloc" in body and "CGS007" in body,
      "who broke the capture names cuMemAlloc and CGS007")
check("exec_destroy" in body and "cgs011_graph-allocation-outstanding.c" in body,
      "the leak's row: when and site")
check("predicted" in body and "node count differs" in body, "the rewrite's row: reason and why")
check(any("CGS007" in t and "capture-unsafe-call" in t for t in p.pre) or
      any("CGS007" in t for t in p.pre), "CGS007's rule page embedded")
caps = [t for t in p.titles if t.startswith("capture")]
check(caps and all("?" not in t.split(":")[0] for t in caps) and any("demo_capture.c" in t for t in caps),
      "capture tooltips name the capture and its site: %r" % caps[:2])
check("<script" not in text and "src=" not in text, "self-contained (no script, no external resource)")

# -- 54,000 captures, and 13,500 identical ones
seed = next(json.loads(l) for l in open(logs[2]) if '"ev":"capture"' in l.replace(" ", ""))
big = os.path.join(d, "54k.jsonl")
with open(big, "w") as f:
    f.write(json.dumps({"v": 1, "ev": "start", "seq": 0, "ts": seed["ts"], "pid": 7, "tid": 7,
                        "exe": "/synthetic"}) + "\n")
    for i in range(54000):
        r = dict(seed, seq=i + 1, ts=seed["ts"] + i * 1000, pid=7, tid=7, capture=i + 1,
                 graph="0x%x" % (0x100000 + i), alloc_bytes=(1 << 20) * (1 + i % 4),
                 site=["train_step (model.py:%d)" % (10 + i // 27000)])
        f.write(json.dumps(r, separators=(",", ":")) + "\n")
bigpage = os.path.join(d, "54k.html")
t = time.monotonic()
q = report("--html", bigpage, big)
dt = time.monotonic() - t
size = os.path.getsize(bigpage) if os.path.exists(bigpage) else 0
check(q.returncode == 0 and 0 < size <= 1 << 20, "54,000 captures: page %d bytes (<= 1 MiB), %.1f s" % (size, dt))
bp = parse(open(bigpage).read())
check("captures" in bp.ids and "8 groups" in " ".join(bp.text),
      "54,000 captures: 8 groups (4 batch sizes x 2 sites)")
same = os.path.join(d, "13k.jsonl")
with open(same, "w") as f:
    for i in range(13500):
        f.write(json.dumps(dict(seed, seq=i + 1, ts=seed["ts"] + i, capture=i + 1, graph="0x%x" % (0x10 + i)),
                           separators=(",", ":")) + "\n")
q = report(same)
out = q.stdout.decode()
check(q.returncode == 0 and len(out.splitlines()) < 60 and "x13500 (to capture 13500)" in out,
      "13,500 identical captures: %d lines of text, one row x13500" % len(out.splitlines()))

# -- standard input and gzip
plain = report(logs[2]).stdout
gz = os.path.join(d, "demo.jsonl.gz")
with open(logs[2], "rb") as i, gzip.open(gz, "wb") as o:
    o.write(i.read())
norm = lambda b, name: b.decode().split("\n", 1)[-1]  # the first line names the file
q = report(gz)
check(q.returncode == 0 and norm(q.stdout, gz) == norm(plain, logs[2]), "report LOG.jsonl.gz == report LOG")
z = subprocess.Popen(["zcat", gz], stdout=subprocess.PIPE)
q = report("-", stdin=z.stdout)
z.wait()
check(q.returncode == 0 and norm(q.stdout, "-") == norm(plain, logs[2]), "zcat LOG.gz | report - == report LOG")
with open(logs[2], "rb") as i:
    q = report("-", stdin=i)
check(q.returncode == 0 and norm(q.stdout, "-") == norm(plain, logs[2]), "report - < LOG == report LOG")

# -- headless chromium
chromium = shutil.which("chromium") or shutil.which("chromium-browser")
if failed:
    print("%d failed" % failed)
    sys.exit(1)
if not chromium:
    print("SKIP: no chromium here (scripts/deps.sh test installs it): the browser check did not run")
    sys.exit(77)
base = [chromium, "--headless", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage",
        "--user-data-dir=" + os.path.join(d, "profile")]
for pg, ids in ((page, want), (bigpage, {"summary", "captures"})):
    q = subprocess.run(base + ["--dump-dom", "file://" + pg], capture_output=True, text=True, timeout=180)
    dom = parse(q.stdout)
    check(ids <= dom.ids, "chromium DOM of %s: missing %s" % (os.path.basename(pg), sorted(ids - dom.ids)))
    shot = os.path.join(d, os.path.basename(pg) + ".png")
    t = time.monotonic()
    q = subprocess.run(base + ["--window-size=1300,4000", "--screenshot=" + shot, "file://" + pg],
                       capture_output=True, text=True, timeout=180)
    data = open(shot, "rb").read() if os.path.exists(shot) else b""
    check(data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000,
          "chromium screenshot of %s: %d bytes in %.1f s" % (os.path.basename(pg), len(data), time.monotonic() - t))
print("%d failed" % failed)
sys.exit(1 if failed else 0)
