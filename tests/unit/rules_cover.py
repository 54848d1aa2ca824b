#!/usr/bin/env python3
"""Every rule of shim/rules.def has at least one FIRES and one SILENT case
in the pure rule unit tests (tests/unit/test-rules-*.c, rows of struct
rule_case): a new rule without a test fails the suite, and so does a case
naming a rule the list no longer has.
Usage: rules_cover.py RULES_DEF TEST.c..."""
import re
import sys

rules_def, tests = sys.argv[1], sys.argv[2:]
ids = re.findall(r'^RULE\(\s*\w+\s*,\s*"(CGS\d+)"', open(rules_def).read(), re.M)
if not ids:
    sys.exit('no RULE rows in %s' % rules_def)
seen = {}
for path in tests:
    for rid, kind in re.findall(r'\{\s*"(CGS\d+)"\s*,\s*(FIRES|SILENT)\b', open(path).read()):
        seen.setdefault(rid, set()).add(kind)
bad = []
for rid in ids:
    for kind in ('FIRES', 'SILENT'):
        if kind not in seen.get(rid, ()):
            bad.append('%s has no %s case' % (rid, kind))
for rid in sorted(set(seen) - set(ids)):
    bad.append('%s is tested but not in rules.def' % rid)
for b in bad:
    print(b)
print('%d rules, %d with both cases' % (len(ids), sum(1 for r in ids if len(seen.get(r, ())) == 2)))
sys.exit(1 if bad else 0)
