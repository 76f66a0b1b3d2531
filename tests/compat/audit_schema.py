#!/usr/bin/env python3
"""Check audit records against the field table in docs/audit.md.

usage: audit_schema.py DOC LOG [REQUIRED-RULE...]
Every record must carry the table's required fields with their types and no
field the table does not list; each REQUIRED-RULE must appear in some record.
"""
import json
import re
import sys

TYPES = {"string": str, "integer": int, "array": list}


def fields(doc):
    text = open(doc).read()
    block = text.split("<!-- audit-fields:begin -->")[1].split("<!-- audit-fields:end -->")[0]
    out = {}
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[1] in TYPES:
            out[cells[0]] = (TYPES[cells[1]], cells[2] == "yes")
    return out


def main():
    doc, log, *rules = sys.argv[1:]
    spec = fields(doc)
    if len(spec) < 10:
        sys.exit("the field table in %s was not found" % doc)
    seen_rules = set()
    n = 0
    for i, line in enumerate(open(log), 1):
        rec = json.loads(line)
        n += 1
        for name, (typ, required) in spec.items():
            if name in rec:
                if not isinstance(rec[name], typ) or isinstance(rec[name], bool):
                    sys.exit("line %d: %s is %r, not %s" % (i, name, rec[name], typ.__name__))
            elif required:
                sys.exit("line %d: required field %s missing" % (i, name))
        extra = set(rec) - set(spec)
        if extra:
            sys.exit("line %d: fields not in the doc: %s" % (i, sorted(extra)))
        if rec["decision"] in ("deny", "kill") and "rule" not in rec:
            sys.exit("line %d: a %s without a rule" % (i, rec["decision"]))
        if not re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$", rec["time"]):
            sys.exit("line %d: time %r" % (i, rec["time"]))
        seen_rules.add(rec.get("rule"))
    missing = [r for r in rules if r not in seen_rules]
    if n == 0 or missing:
        sys.exit("%d records; rules never seen: %s" % (n, missing))
    print("%d records match docs/audit.md" % n)


main()
