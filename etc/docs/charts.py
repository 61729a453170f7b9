#!/usr/bin/env python3
"""Draws the charts of docs/performance.md from the result files in docs/benchmarks/data/.

Usage: etc/docs/charts.py [--out DIR] [--check]

Reads http-ratios.csv, starters.csv, scale.csv and volume.csv (their columns are described in
docs/benchmarks/data/README.md) and writes overhead.svg, starters.svg, scale.svg and volume.svg
into docs/benchmarks/charts/, or into DIR. With --check it draws them into a temporary folder
and fails when they differ from the committed ones. The output is reproducible: the same data
and the same matplotlib give the same bytes. Needs matplotlib (Debian: python3-matplotlib).
"""

import argparse
import csv
import filecmp
import os
import sys
import tempfile

try:
    import matplotlib
except ImportError:
    # Debian's python3-matplotlib belongs to the system Python, which need not come first on the path
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3", os.path.abspath(__file__)] + sys.argv[1:])
    sys.exit("matplotlib is missing: apt-get install python3-matplotlib (Debian)")

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402  (after the back end is chosen)
from matplotlib.lines import Line2D  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "docs", "benchmarks", "data")
CHARTS = os.path.join(ROOT, "docs", "benchmarks", "charts")

# ours first, then the peers, in every chart
BLUE, ORANGE, GREY, GREEN, RED = "#1f5fa8", "#e08a1e", "#8c8c8c", "#3a9a4a", "#b03a2e"
STYLE = {
    "svg.hashsalt": "idempotency-charts",  # fixed element ids
    "svg.fonttype": "none",  # text stays text: smaller files, readable diffs
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Helvetica", "Arial"],
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "legend.frameon": False,
}


def rows(name):
    with open(os.path.join(DATA, name), encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def number(text):
    return float(text) if text not in (None, "") else None


def save(fig, out, name, note):
    fig.text(0.01, 0.005, note, fontsize=7, color="#555555", ha="left", va="bottom")
    fig.savefig(os.path.join(out, name), format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)


# (comparison, variant, label): the rows of the overhead chart, top to bottom
OVERHEAD = [
    ("against the same round trips written by hand", [
        ("redis-first/two-sets", "", "redis: first request / its two SETs by hand"),
        ("redis-replay/raw-get", "", "redis: replay / one GET by hand"),
        ("tiered-first/raw-durable", "", "tiered: first request / its round trips and commits by hand"),
        ("tiered-first/twin", "", "tiered: first request / twin (loaded machine)"),
        ("jdbc-first/twin", "", "jdbc: first request / twin (loaded machine)"),
        ("jdbc-replay/twin", "", "jdbc: replay / twin (loaded machine)"),
        ("transactional-tiered/twin", "", "transactional, tiered: payment / twin"),
        ("transactional-jdbc/twin", "", "transactional, jdbc: payment / twin"),
    ]),
    ("against the unprotected endpoint", [
        ("redis-replay/bare", "", "redis: replay / bare endpoint"),
        ("redis-replay/bare", "replay cache on", "redis: replay, replay cache on / bare"),
        ("tiered-replay/bare", "", "tiered: replay / bare endpoint"),
        ("payment-redis/payment", "", "redis: payment / payment unprotected"),
        ("payment-tiered/payment", "", "tiered: payment / payment unprotected"),
        ("jdbc-first/bare", "", "jdbc: first request / bare endpoint"),
        ("redis-first/encryption-off", "encryption on, before the per-thread cipher", "encryption on / off: first request"),
        ("redis-replay/encryption-off", "encryption on, before the per-thread cipher", "encryption on / off: replay"),
    ]),
]


def overhead(out):
    data = rows("http-ratios.csv")
    labels, y, groups = [], 0, []
    fig, ax = plt.subplots(figsize=(9.6, 6.8))
    for title, items in OVERHEAD:
        groups.append((y, title))
        y += 1
        for comparison, variant, label in items:
            mine = [r for r in data if r["comparison"] == comparison and r["variant"] == variant]
            if not mine:
                continue
            # a run is its date, commit, machine and command; the file lists runs in the order they ran
            run = lambda r: (r["date"], r["commit"], r["recorded_in"], r["machine"], r["command"])
            latest = run(mine[-1])
            for r in mine:
                is_latest = run(r) == latest
                c16 = r["concurrency"] == "16"
                ax.plot(float(r["median"]), y + (-0.15 if c16 else 0.15), "o" if c16 else "D",
                        ms=7 if is_latest else 4.5, mfc=(BLUE if c16 else "white") if is_latest else (
                            "#9dbbe0" if c16 else "white"),
                        mec=BLUE if is_latest else "#9dbbe0", mew=1.2, zorder=3 if is_latest else 2)
            values = {r["concurrency"]: r["median"] for r in mine if run(r) == latest}
            ax.text(1.01, y, "   ".join(values.get(c, "-") for c in ("16", "1")), fontsize=7.5, color=BLUE,
                    va="center", transform=ax.get_yaxis_transform())
            labels.append((y, f"{label}\nlatest: {latest[0]}, {latest[1] or 'recorded in ' + latest[2]}, {latest[3]}"))
            y += 1
    ax.axvline(1.0, color=GREY, lw=0.8, ls="--", zorder=1)
    ax.set_ylim(y - 0.4, -0.6)
    ax.set_yticks([p for p, _ in labels])
    ax.set_yticklabels([t for _, t in labels], fontsize=7.5)
    ax.text(1.01, -0.6, "c=16   c=1", fontsize=7.5, fontweight="bold", va="center", transform=ax.get_yaxis_transform())
    for position, title in groups:
        ax.text(0.0, position, title, fontsize=8.5, fontweight="bold", va="center", ha="left",
                transform=ax.get_yaxis_transform())
    ax.set_xlim(0, max(1.8, max(float(r["median"]) for r in data) + 0.1))
    ax.set_xlabel("throughput kept: requests a second of the case / of its baseline (median of the per-round ratios)")
    ax.grid(axis="x", color="#e5e5e5", lw=0.6)
    fig.suptitle("What the library adds: throughput kept against a baseline, every recorded run",
                 x=0.01, ha="left", fontsize=10, fontweight="bold")
    fig.legend(ncol=3, bbox_to_anchor=(0.99, 0.955), loc="upper right", fontsize=7.5, handles=[
        Line2D([], [], ls="", marker="o", ms=7, mfc=BLUE, mec=BLUE, label="16 connections (latest run)"),
        Line2D([], [], ls="", marker="D", ms=7, mfc="white", mec=BLUE, label="1 connection (latest run)"),
        Line2D([], [], ls="", marker="o", ms=4.5, mfc="#9dbbe0", mec="#9dbbe0", label="earlier runs"),
    ])
    fig.tight_layout(rect=(0, 0.03, 1, 0.93))
    save(fig, out, "overhead.svg", "2-core machines, load generator and servers on the same machine. Data: "
         "docs/benchmarks/data/http-ratios.csv (date, commit, machine and command of every point).")


STARTERS = [("ours", "this library", BLUE), ("lu1tr0n/idempotency-spring-boot-starter", "lu1tr0n 0.0.6", ORANGE),
            ("arun0009/idempotent", "arun0009 3.1.0", GREY)]
STARTER_METRICS = [("first request, share of the bare endpoint", "first request\n(share of the bare endpoint, c=16)"),
                   ("replay, share of the bare endpoint", "replay\n(share of the bare endpoint, c=16)"),
                   ("payment, protected / unprotected", "payment with a database write\n(protected / unprotected, c=16)")]


def starters(out):
    data = [r for r in rows("starters.csv") if r["variant"] == ""]
    runs = list(dict.fromkeys((r["date"], r["machine"], r["recorded_in"]) for r in data
                              if r["metric"] == STARTER_METRICS[0][0]))
    ours = {(r["date"], r["machine"], r["recorded_in"]): r["commit"] for r in data if r["starter"] == "ours"}
    fig, axes = plt.subplots(1, len(STARTER_METRICS), figsize=(9.2, 3.6), sharey=True)
    width = 0.26
    for ax, (metric, title) in zip(axes, STARTER_METRICS):
        for i, (starter, label, colour) in enumerate(STARTERS):
            xs, heights, low, high = [], [], [], []
            for j, (date, machine, recorded) in enumerate(runs):
                match = [r for r in data if r["metric"] == metric and r["starter"] == starter and r["date"] == date
                         and r["machine"] == machine and r["concurrency"] == "16"]
                if not match:
                    continue
                r = match[0]
                value = float(r["median"])
                xs.append(j + (i - 1) * width)
                heights.append(value)
                low.append(value - (number(r["min"]) if r["min"] else value))
                high.append((number(r["max"]) if r["max"] else value) - value)
            ax.bar(xs, heights, width, color=colour, label=label, zorder=2)
            ax.errorbar(xs, heights, yerr=[low, high], fmt="none", ecolor="#333333", elinewidth=0.7, capsize=2,
                        zorder=3)
        ax.set_xticks(range(len(runs)))
        ax.set_xticklabels([f"machine {k + 1}\n{run[0]}\n{ours[run]}" for k, run in enumerate(runs)], fontsize=7.5)
        ax.set_title(title, fontsize=8.5)
        ax.axhline(1.0, color=GREY, lw=0.8, ls="--", zorder=1)
        ax.grid(axis="y", color="#e5e5e5", lw=0.6, zorder=0)
    axes[0].set_ylabel("share kept (median of 3 rounds; bars: min-max)")
    axes[0].legend(loc="upper left", fontsize=7.5)
    fig.suptitle("The Spring idempotency starters side by side, each against its own unprotected endpoint",
                 x=0.01, ha="left", fontsize=10, fontweight="bold")
    fig.tight_layout(rect=(0, 0.04, 1, 0.97))
    save(fig, out, "starters.svg", "Redis store, wrk with a new key per request, 2 cores. Data: "
         "docs/benchmarks/data/starters.csv (commits, machines and the command).")


def scale(out):
    data = rows("scale.csv")
    series = list(dict.fromkeys((r["store"], r["operation"]) for r in data))
    runs = sorted({(r["run"], r["date"], r["commit"]) for r in data})
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.2, 3.8), gridspec_kw={"width_ratios": [1.25, 1]})
    latest = runs[-1]
    names = [f"{store}\n{operation.split(' ')[0]}" for store, operation in series]
    for k, (records, colour) in enumerate((("1000", "#9dbbe0"), ("1000000", BLUE))):
        values = []
        for store, operation in series:
            match = [r for r in data if r["run"] == latest[0] and r["store"] == store
                     and r["operation"] == operation and r["records"] == records]
            values.append(float(match[0]["p50_us"]))
        left.bar([i + (k - 0.5) * 0.38 for i in range(len(series))], values, 0.38, color=colour,
                 label=f"{int(records):,} records stored", zorder=2)
    left.set_xticks(range(len(series)))
    left.set_xticklabels(names, fontsize=6.8, rotation=35, ha="right", rotation_mode="anchor")
    left.set_ylabel("p50 of one call, µs (concurrency 1)")
    left.set_title(f"Latency by records stored (run {latest[0]}, {latest[1]}, {latest[2]}, quiet machine)",
                   fontsize=8.5, loc="left")
    left.legend(fontsize=7.5, loc="upper left")
    left.grid(axis="y", color="#e5e5e5", lw=0.6, zorder=0)
    markers = ["s", "^", "o"]
    for k, (run, date, commit) in enumerate(runs):
        ratios = []
        for store, operation in series:
            by_records = {r["records"]: float(r["p50_us"]) for r in data
                          if r["run"] == run and r["store"] == store and r["operation"] == operation}
            ratios.append(by_records["1000000"] / by_records["1000"])
        is_latest = (run, date, commit) == latest
        right.plot(ratios, range(len(series)), markers[k % 3], ls="", ms=6 if is_latest else 4.5,
                   color=BLUE if is_latest else "#9dbbe0",
                   label=f"run {run}, {date}, {commit}" + ("" if is_latest else ", loaded machine"))
    right.axvline(1.0, color=GREY, lw=0.8, ls="--")
    right.axvspan(0.0, 1.10, color="#eef4ea", zorder=0)
    right.set_yticks(range(len(series)))
    right.set_yticklabels([n.replace("\n", ", ") for n in names], fontsize=7)
    right.set_ylim(len(series) - 0.3, -0.7)
    right.set_xlim(0.8, 1.9)
    right.set_xlabel("p50 with 1,000,000 records / p50 with 1,000\n(shaded: within 10%, the budget for acquire)")
    right.set_title("The same ratio in every run", fontsize=8.5, loc="left")
    right.legend(fontsize=7, loc="upper right")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    save(fig, out, "scale.svg", "Redis, PostgreSQL and tiered stores on the same 2-core machine, over loopback. "
         "Data: docs/benchmarks/data/scale.csv.")


def volume(out):
    data = rows("volume.csv")
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.2, 3.6))
    styles = {"1": (RED, "run 1: 5,000,000 records, autovacuum off"),
              "2": (ORANGE, "run 2: 5,000,000 records, autovacuum on, cleanup every 10 s"),
              "3": (BLUE, "run 3: 1,000,000 records, autovacuum on, three lives")}
    for run, (colour, label) in styles.items():
        mine = [r for r in data if r["run"] == run]
        if not mine:
            continue
        t = [float(r["t_s"]) / 60 for r in mine]
        first = float(mine[0]["table_mb"]) + float(mine[0]["index_mb"])
        left.plot(t, [(float(r["table_mb"]) + float(r["index_mb"])) / first for r in mine], "-o", ms=3,
                  color=colour, label=label)
        right.plot(t, [float(r["acquire_p99_ms"]) for r in mine], "-o", ms=3, color=colour)
        right.plot(t, [float(r["acquire_p50_ms"]) for r in mine], ":", color=colour)
    left.axhline(1.0, color=GREY, lw=0.8, ls="--")
    left.set_xlabel("minutes")
    left.set_ylabel("table + indexes, against the first reading")
    left.set_title("Size of the records table at a steady arrival rate", fontsize=8.5, loc="left")
    left.legend(fontsize=6.8, loc="upper left")
    right.set_xlabel("minutes")
    right.set_ylabel("acquire latency, ms (solid p99, dotted p50)")
    right.set_title("Latency of the claims during the same runs", fontsize=8.5, loc="left")
    for ax in (left, right):
        ax.grid(color="#e5e5e5", lw=0.6)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    dates = sorted({r["date"] for r in data})
    save(fig, out, "volume.svg", f"PostgreSQL 15 on 2 cores, {', '.join(dates)}. "
         "Data: docs/benchmarks/data/volume.csv.")


CHARTS_DRAWN = ["overhead.svg", "starters.svg", "scale.svg", "volume.svg"]


def draw(out):
    os.makedirs(out, exist_ok=True)
    with plt.rc_context(STYLE):
        overhead(out)
        starters(out)
        scale(out)
        volume(out)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=CHARTS, help="folder to write the charts to")
    parser.add_argument("--check", action="store_true", help="fail when the committed charts are not what the data give")
    args = parser.parse_args(argv)
    if not args.check:
        draw(args.out)
        print(f"charts: {', '.join(CHARTS_DRAWN)} in {os.path.relpath(args.out)}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        draw(tmp)
        stale = [name for name in CHARTS_DRAWN if not os.path.exists(os.path.join(CHARTS, name))
                 or not filecmp.cmp(os.path.join(tmp, name), os.path.join(CHARTS, name), shallow=False)]
    if stale:
        print(f"charts differ from what the data give: {', '.join(stale)} (matplotlib {matplotlib.__version__});"
              " redraw them with etc/docs/charts.py", file=sys.stderr)
        return 1
    print(f"charts: {len(CHARTS_DRAWN)} drawn from docs/benchmarks/data/, the same as the committed ones")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
