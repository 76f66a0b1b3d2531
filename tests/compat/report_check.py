#!/usr/bin/env python3
"""Check a moat run report (--report FILE) against expectations.

usage: report_check.py REPORT KEY=VALUE...
  status=TO            the status field equals TO
  time>=1.0 time<=1.1  numeric bounds (any numeric field)
  exitsig=15           field equals (numbers compared as numbers)
Prints nothing and exits 0 when every expectation holds; otherwise one line
naming what differs."""
import json
import re
import sys

rep = json.load(open(sys.argv[1]))
bad = []
for exp in sys.argv[2:]:
    m = re.match(r"^([a-z-]+)(>=|<=|=)(.*)$", exp)
    key, op, want = m.groups()
    got = rep.get(key)
    if isinstance(got, bool):
        got = "true" if got else "false"
    try:
        wantv = float(want)
        gotv = float(got) if got is not None else None
    except (TypeError, ValueError):
        wantv, gotv = want, got
    ok = gotv is not None and (
        (op == "=" and gotv == wantv) or (op == ">=" and gotv >= wantv) or (op == "<=" and gotv <= wantv))
    if not ok:
        bad.append("%s %s %s (got %r)" % (key, op, want, got))
if bad:
    print("; ".join(bad) + " in " + json.dumps({k: rep.get(k) for k in ("status", "message", "time", "time-wall", "exitcode", "exitsig")}))
