#!/usr/bin/env python3
"""A scripted "agent" (no model) that goes round the loop an agent goes
round with moat: generate -> execute -> observe -> iterate.

    python3 examples/agent_loop.py [--moat ./moat] [OUTDIR]

It opens a session (a live Python in a moat sandbox) with this directory
bound read-only at /examples, and analyses /examples/sales.csv:

1. it runs a first cell with a bug, a wrong column name (`price`; the CSV
   has `unit_price`), and reads the traceback the cell's error carries;
2. it picks the corrected cell, because the error is a KeyError naming
   that column, and runs it in the same session: the DataFrame the first
   cell loaded is still there;
3. it draws the monthly revenue by region and gets the figure back as an
   image/png output, with no savefig in the sandbox, and writes it to
   OUTDIR/agent_plot.png (OUTDIR is ./out by default).

It prints each step, and exits 1 if any step does not go as described.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "clients", "python"))
from moat_session import Session, SessionError  # noqa: E402

# The model's first try: `price` is not a column of sales.csv.
BUGGY = """\
import pandas as pd
df = pd.read_csv("/examples/sales.csv")
df["revenue"] = (df["units"] * df["price"] * (1 - df["discount_pct"] / 100)).round(2)
df.groupby("region")["revenue"].sum().sort_values(ascending=False)
"""

# The fixes the "model" has ready, by the error they answer: (ename, a
# word of evalue) -> the corrected cell.  `df` is still in the session.
FIXES = {
    ("KeyError", "price"): """\
print("columns:", ", ".join(df.columns))
df["revenue"] = (df["units"] * df["unit_price"] * (1 - df["discount_pct"] / 100)).round(2)
df.groupby("region")["revenue"].sum().sort_values(ascending=False)
""",
}

PLOT = """\
import matplotlib.pyplot as plt
df["month"] = pd.to_datetime(df["date"]).dt.to_period("M").astype(str)
monthly = df.pivot_table(index="month", columns="region", values="revenue",
                         aggfunc="sum", fill_value=0).sort_index()
fig, ax = plt.subplots(figsize=(8, 4))
for region in monthly.columns:
    ax.plot(monthly.index, monthly[region], marker="o", label=region)
ax.set_title("Monthly revenue by region, 2025")
ax.tick_params(axis="x", labelrotation=45)
ax.legend()
print(f"{len(monthly)} months, total {monthly.values.sum():,.2f}")
"""

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def step(n, what):
    print(f"\n== step {n}: {what}")


def show(e):
    """What the agent observes of one cell."""
    print(f"   status {e.status}, execution_count {e.execution_count}, "
          f"{e.duration_ms} ms, verdict {e.verdict}")
    for line in e.stdout.splitlines():
        print(f"   stdout| {line}")
    for line in e.stderr.splitlines():
        print(f"   stderr| {line}")
    if e.text is not None:
        for line in e.text.splitlines():
            print(f"   value | {line}")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--moat", default="./moat", help="the moat binary (default ./moat)")
    ap.add_argument("outdir", nargs="?", default="./out", help="where agent_plot.png goes")
    args = ap.parse_args(argv)

    step(0, "open a session, the examples bound read-only at /examples")
    with Session(moat=args.moat, memory_limit="1G", timeout=120,
                 binds=[{"src": HERE, "dst": "/examples", "rw": False}]) as s:
        print(f"   session {s.id}, ready in {s.started_ms} ms")

        step(1, "run the first try")
        print("   " + BUGGY.replace("\n", "\n   ").rstrip())
        e = s.run(BUGGY)
        show(e)
        if e.status != "error" or e.error is None:
            print("FAILED: the first try was meant to fail")
            return 1
        print(f"   error: {e.error.ename}: {e.error.evalue}")
        print("   traceback:")
        for line in str(e.error).splitlines():
            print(f"   | {line}")

        step(2, "read the error, pick the fix, run it in the same session")
        fix = next((cell for (ename, word), cell in FIXES.items()
                    if e.error.ename == ename and word in e.error.evalue), None)
        if fix is None:
            print(f"FAILED: no fix for {e.error.ename}: {e.error.evalue}")
            return 1
        print(f"   {e.error.ename} names {e.error.evalue}: the column is unit_price")
        e = s.run(fix)
        show(e)
        if e.status != "ok" or not e.text:
            print("FAILED: the corrected cell did not run")
            return 1

        step(3, "plot the monthly revenue, get the figure back")
        e = s.run(PLOT)
        show(e)
        pngs = e.pngs()
        if e.status != "ok" or not pngs or not pngs[0].startswith(PNG_MAGIC):
            print(f"FAILED: no image/png came back ({len(pngs)} images)")
            return 1
        os.makedirs(args.outdir, exist_ok=True)
        path = os.path.join(args.outdir, "agent_plot.png")
        with open(path, "wb") as f:
            f.write(pngs[0])
        print(f"   image/png, {len(pngs[0])} bytes: wrote {path}")
    print("\ndone: the loop went round (error, traceback, fix, result, plot)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except SessionError as e:
        print(f"moat session: {e}", file=sys.stderr)
        sys.exit(1)
