#!/usr/bin/env python3
"""Write cgshim(7) from its template, the ENVIRONMENT section generated from
shim/config.def (the table the shim parses): one entry per CGSHIM_* variable
with its type, default, accepted values and meaning.

usage: gen-man7.py CONFIG_DEF TEMPLATE OUT
"""
import re
import sys

config_def, template, out = sys.argv[1:4]
text = re.sub(r"/\*.*?\*/", "", open(config_def).read(), flags=re.S)
rows = re.findall(r'CFG\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*,\s*"([^"]*)"\s*,\s*"([^"]*)"\s*,\s*((?:"[^"]*"\s*)+)\)', text)
if not rows:
    sys.exit("gen-man7.py: no CFG rows in %s" % config_def)


def roff(s):
    s = s.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + s if s.startswith((".", "'")) else s


env = []
for field, name, kind, default, choices, doc in rows:
    doc = "".join(re.findall(r'"([^"]*)"', doc))
    if kind == "BOOL":
        values = "0, 1, no, yes, false, true, off, on (any case)"
    elif kind == "ENUM":
        values = ", ".join(choices.split("|"))
    elif kind == "INT":
        values = "an integer in " + choices
    else:
        values = "text"
    env.append(".TP\n.B %s\n%s; default %s.\n.br\n%s" % (
        roff(name), roff(values), roff(default) if default else "unset", roff(doc)))
page = open(template).read().replace("@ENV_TABLE@", "\n".join(env))
open(out, "w").write(page)
