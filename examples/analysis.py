#!/usr/bin/env python3
"""A small sales analysis, of the kind an agent writes and runs in a sandbox.

    python3 analysis.py OUTDIR

Reads sales.csv (next to this script), prints summary tables to stdout and
writes OUTDIR/summary.csv, OUTDIR/monthly.csv and OUTDIR/revenue.png.

Deterministic: the same stdout and the same CSVs on every run.  If sales.csv
is missing, the same data is generated in memory from a fixed seed (the
shipped CSV was written by generate() below).

Under moat:
    make && mkdir -p out && ./moat run --ro-bind examples /examples \
        --bind out /out -- python3 /examples/analysis.py /out
"""
import os
import random
import shutil
import sys
import tempfile

# matplotlib wants a writable config/cache dir and a display-free backend.
# A private, fresh one per run: the run does the same work natively and in a
# sandbox (where HOME is an empty tmpfs), and leaves nothing behind.
os.environ["MPLBACKEND"] = "Agg"
_own_mplconfig = None
if "MPLCONFIGDIR" not in os.environ:
    _own_mplconfig = tempfile.mkdtemp(prefix="mplconfig-")
    os.environ["MPLCONFIGDIR"] = _own_mplconfig

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

REGIONS = ["North", "South", "East", "West"]
PRODUCTS = {  # name: (unit price, relative popularity)
    "Widget": (4.50, 5),
    "Gadget": (12.00, 3),
    "Gizmo": (27.25, 2),
    "Doohickey": (89.99, 1),
}
CHANNELS = ["online", "store", "partner"]


def generate(n=480, seed=20261202):
    """The data behind sales.csv: n orders in 2025, fixed seed."""
    rng = random.Random(seed)
    names = list(PRODUCTS)
    weights = [PRODUCTS[p][1] for p in names]
    rows = []
    for i in range(n):
        month = rng.randint(1, 12)
        day = rng.randint(1, 28)
        region = rng.choice(REGIONS)
        product = rng.choices(names, weights)[0]
        units = rng.randint(1, 40)
        price = PRODUCTS[product][0]
        # seasonal effect: Q4 sells more, the South sells less in summer
        if month >= 10:
            units += rng.randint(0, 15)
        if region == "South" and month in (6, 7, 8):
            units = max(1, units - rng.randint(0, 10))
        discount = rng.choice([0, 0, 0, 5, 10, 15])
        rows.append(
            {
                "order_id": 10000 + i,
                "date": f"2025-{month:02d}-{day:02d}",
                "region": region,
                "product": product,
                "channel": rng.choice(CHANNELS),
                "units": units,
                "unit_price": price,
                "discount_pct": discount,
            }
        )
    return pd.DataFrame(rows)


def load():
    path = os.path.join(HERE, "sales.csv")
    if os.path.exists(path):
        return pd.read_csv(path)
    return generate()


def main(argv):
    if len(argv) != 2:
        print(f"usage: {argv[0]} OUTDIR", file=sys.stderr)
        return 2
    outdir = argv[1]
    os.makedirs(outdir, exist_ok=True)

    df = load()
    df["date"] = pd.to_datetime(df["date"])
    df["month"] = df["date"].dt.to_period("M").astype(str)
    df["revenue"] = (
        df["units"] * df["unit_price"] * (1 - df["discount_pct"] / 100)
    ).round(2)

    pd.set_option("display.width", 120)
    pd.set_option("display.max_columns", 20)
    pd.set_option("display.float_format", lambda v: f"{v:,.2f}")

    print(f"orders: {len(df)}  from {df['date'].min().date()} to {df['date'].max().date()}")
    print(f"total revenue: {df['revenue'].sum():,.2f}  units: {df['units'].sum()}")
    print()

    summary = (
        df.groupby(["region", "product"])
        .agg(
            orders=("order_id", "count"),
            units=("units", "sum"),
            revenue=("revenue", "sum"),
            avg_discount=("discount_pct", "mean"),
        )
        .reset_index()
        .sort_values(["region", "revenue"], ascending=[True, False])
    )
    summary["share_pct"] = (
        100 * summary["revenue"] / summary.groupby("region")["revenue"].transform("sum")
    )
    print("== revenue by region and product")
    print(summary.to_string(index=False))
    print()

    by_region = df.groupby("region")["revenue"].agg(["count", "sum", "mean", "median", "max"])
    print("== revenue per region")
    print(by_region.to_string())
    print()

    by_channel = df.pivot_table(
        index="channel", columns="region", values="revenue", aggfunc="sum", fill_value=0
    )
    print("== revenue by channel x region")
    print(by_channel.to_string())
    print()

    monthly = df.pivot_table(
        index="month", columns="region", values="revenue", aggfunc="sum", fill_value=0
    ).sort_index()
    monthly["total"] = monthly.sum(axis=1)
    monthly["growth_pct"] = monthly["total"].pct_change() * 100
    print("== monthly revenue")
    print(monthly.to_string())
    print()

    best = monthly["total"].idxmax()
    top = summary.sort_values("revenue", ascending=False).iloc[0]
    print(f"best month: {best} ({monthly.loc[best, 'total']:,.2f})")
    print(f"top region/product: {top['region']}/{top['product']} ({top['revenue']:,.2f})")

    summary.to_csv(os.path.join(outdir, "summary.csv"), index=False, float_format="%.4f")
    monthly.to_csv(os.path.join(outdir, "monthly.csv"), float_format="%.4f")

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for region in REGIONS:
        ax1.plot(monthly.index, monthly[region], marker="o", label=region)
    ax1.set_title("Monthly revenue by region, 2025")
    ax1.set_xlabel("month")
    ax1.set_ylabel("revenue")
    ax1.tick_params(axis="x", labelrotation=45)
    ax1.legend()
    prod = summary.groupby("product")["revenue"].sum().sort_values()
    ax2.barh(prod.index, prod.values, color="tab:green")
    ax2.set_title("Revenue by product")
    ax2.set_xlabel("revenue")
    fig.tight_layout()
    # no timestamp in the file: same bytes on every run
    fig.savefig(os.path.join(outdir, "revenue.png"), dpi=100, metadata={"Software": None})
    plt.close(fig)
    print("wrote summary.csv monthly.csv revenue.png")
    return 0


if __name__ == "__main__":
    try:
        rc = main(sys.argv)
    finally:
        if _own_mplconfig:
            shutil.rmtree(_own_mplconfig, ignore_errors=True)
    sys.exit(rc)
