#!/usr/bin/env python3
"""Turns a benchmark's output into rows of the result files in docs/benchmarks/data/.

Usage:
  etc/docs/results.py jmh JSON... --out FILE [--command C] [--page P]
  etc/docs/results.py scale SCALE_TXT --out FILE [--command C]
  etc/docs/results.py volume VOLUME_TXT --out FILE [--command C]
  etc/docs/results.py starters RAW_DIR --out FILE [--command C]
  etc/docs/results.py append FILE

The first four write FILE in the format of jmh.csv, scale.csv, volume.csv or starters.csv
(docs/benchmarks/data/README.md): JMH's JSON results (-rf json), the output of ScaleBenchmark
(run-scale-benchmark.sh), of PostgresVolumeBenchmark (run-volume-benchmark.sh), or the raw folder
of the starters harness (peers-bench/run.sh, /tmp/peers/raw by default). Each row gets today's
date (UTC), the commit of this work tree (with "+changes" when it has uncommitted changes), the
machine BENCH_MACHINE names and the command given. "append FILE" appends FILE's rows to the file
of the same name in docs/benchmarks/data/, after checking that both have the same columns; it
needs BENCH_MACHINE, an id of machines.csv.
"""

import argparse
import csv
import datetime
import glob
import json
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "docs", "benchmarks", "data")
COMMON = ["date", "commit", "recorded_in", "machine", "command", "page"]
COLUMNS = {
    "jmh.csv": COMMON + ["benchmark", "params", "mode", "unit", "score", "error", "median", "cpu_min", "cpu_median",
                         "alloc_bytes"],
    "scale.csv": COMMON + ["run", "store", "operation", "records", "p50_us", "p99_us"],
    "volume.csv": COMMON + ["run", "t_s", "records_per_s", "postgresql_cpu_us", "acquire_p50_ms", "acquire_p99_ms",
                            "deleted", "cleanup_s", "backlog", "table_mb", "index_mb", "dead_tuples_millions"],
    "starters.csv": COMMON + ["starter", "version", "variant", "metric", "concurrency", "median", "min", "max"],
}


def provenance(command, page):
    try:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
        if subprocess.run(["git", "-C", ROOT, "diff", "--quiet", "HEAD"]).returncode != 0:
            commit += "+changes"
    except (OSError, subprocess.CalledProcessError):
        commit = ""
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    return [date, commit, "", os.environ.get("BENCH_MACHINE", ""), command, page]


def fmt(value):
    if value is None:
        return ""
    return f"{value:.4g}" if abs(value) < 1000 else f"{value:.0f}"


def number(value):
    """JMH writes NaN (a single shot's error) as a string"""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return ""
    return "" if value != value else fmt(value)


def next_run(name):
    path = os.path.join(DATA, name)
    if not os.path.exists(path):
        return "1"
    with open(path, encoding="utf-8", newline="") as f:
        runs = [int(r["run"]) for r in csv.DictReader(f) if r["run"].isdigit()]
    return str(max(runs, default=0) + 1)


def jmh(paths, head):
    rows = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            results = json.load(f)
        for result in results:
            metric = result["primaryMetric"]
            iterations = [x for fork in metric.get("rawData", []) for x in fork]
            secondary = result.get("secondaryMetrics", {})
            cpu = [x for fork in secondary.get("cpu.time.norm", {}).get("rawData", []) for x in fork]
            alloc = secondary.get("gc.alloc.rate.norm", {}).get("score")
            params = ",".join(f"{k}={v}" for k, v in sorted(result.get("params", {}).items()))
            rows.append(head + [result["benchmark"].rsplit(".", 2)[-2] + "." + result["benchmark"].rsplit(".", 1)[-1],
                                params, result["mode"], metric["scoreUnit"], fmt(metric["score"]),
                                number(metric.get("scoreError")),
                                fmt(statistics.median(iterations)) if iterations else "",
                                fmt(min(cpu)) if cpu else "", fmt(statistics.median(cpu)) if cpu else "",
                                fmt(alloc) if alloc is not None else ""])
    return rows


def scale(path, head):
    # the closing table of ScaleBenchmark: | store | operation | records | p50 (us) | p99 (us) | mean (us) | ratio |
    run = next_run("scale.csv")
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 7 and cells[2].replace(",", "").isdigit():
                rows.append(head + [run, cells[0], cells[1], cells[2].replace(",", ""), cells[3], cells[4]])
    return rows


WINDOW = re.compile(
    r"^t=\s*(\d+) s .*?\|\s*([\d,.]+) pairs/s, CPU per pair: PostgreSQL ([\d,]+) us.*?\| acquire (.*?) \| deleted ([\d,]+)"
    r" in ([\d.]+) s of cleanup \| due for deletion, not deleted ([\d,]+) \| table ([\d,]+) MB, indexes ([\d,]+) MB,"
    r".*?dead ~([\d,]+)")


def volume(path, head):
    run = next_run("volume.csv")
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = WINDOW.match(line.strip())
            if not m:
                continue
            n = [g.replace(",", "") for g in m.groups()]
            latency = dict(re.findall(r"(p50|p99) ([\d,]+) us", m.group(4)))
            p50, p99 = (float(latency[k].replace(",", "")) / 1000 if k in latency else None for k in ("p50", "p99"))
            rows.append(head + [run, n[0], n[1], n[2], fmt(p50), fmt(p99), n[4], n[5], n[6], n[7], n[8],
                                f"{int(n[9]) / 1e6:.2f}"])
    return rows


STARTERS = {"ours": ("ours", "0.1.0-SNAPSHOT"), "lu1": ("lu1tr0n/idempotency-spring-boot-starter", ""),
            "arun": ("arun0009/idempotent", ""), "benh": ("benhendayoussef/idempotency-spring-boot-starter", "")}
# (metric, numerator endpoint, denominator endpoint or None, concurrency, what)
STARTER_METRICS = [
    ("first request, share of the bare endpoint", "idem", "bare", 16, "ratio"),
    ("first request, req/s", "idem", None, 16, "rps"),
    ("first request, added p50 (us)", "idem", "bare", 1, "added"),
    ("replay, share of the bare endpoint", "replay", "bare", 16, "ratio"),
    ("replay, req/s", "replay", None, 16, "rps"),
    ("replay, added p50 (us)", "replay", "bare", 1, "added"),
    ("payment, protected / unprotected", "pgwork_idem", "pgwork", 16, "ratio"),
    ("payment, added p50 (us)", "pgwork_idem", "pgwork", 1, "added"),
]


def starters(raw, head):
    results = {}
    for path in glob.glob(os.path.join(raw, "wrk", "*__*_c*_r*.txt")):
        m = re.match(r"(.+)__(.+)_c(\d+)_r(\d+)\.txt$", os.path.basename(path))
        if not m or m.group(1).startswith("warm_"):
            continue
        with open(path, encoding="utf-8") as f:
            line = re.search(r"^RESULT (.*)$", f.read(), re.M)
        if line:
            values = {k: float(v) for k, v in (x.split("=") for x in line.group(1).split())}
            results[(m.group(1), m.group(2), int(m.group(3)), int(m.group(4)))] = values
    rows = []
    for app in sorted({a for a, _, _, _ in results}):
        starter, version = STARTERS.get(app, (app, ""))
        for metric, num, den, c, what in STARTER_METRICS:
            rounds = sorted({r for a, e, cc, r in results if a == app and e == num and cc == c})
            values = []
            for r in rounds:
                x = results.get((app, num, c, r))
                y = results.get((app, den, c, r)) if den else None
                if what == "rps":
                    values.append(x["rps"])
                elif y and what == "ratio" and y["rps"]:
                    values.append(x["rps"] / y["rps"])
                elif y and what == "added":
                    values.append(x["lat_p50_us"] - y["lat_p50_us"])
            if values:
                rows.append(head + [starter, version, os.environ.get("BENCH_VARIANT", ""), metric, str(c),
                                    fmt(statistics.median(values)), fmt(min(values)), fmt(max(values))])
    return rows


def write(path, name, rows):
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS[name])
        w.writerows(rows)
    print(f"{len(rows)} rows in {path}")


def append(path):
    if not os.environ.get("BENCH_MACHINE"):
        sys.exit("BENCH_MACHINE is not set: name the machine (an id of docs/benchmarks/data/machines.csv)")
    target = os.path.join(DATA, os.path.basename(path))
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    with open(target, encoding="utf-8", newline="") as f:
        header = next(csv.reader(f))
    if rows[0] != header:
        sys.exit(f"{path} and {target} have different columns")
    machine = header.index("machine")
    for row in rows[1:]:
        row[machine] = row[machine] or os.environ["BENCH_MACHINE"]
    with open(target, "a", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows[1:])
    print(f"{len(rows) - 1} rows appended to {os.path.relpath(target, ROOT)}")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("kind", choices=["jmh", "scale", "volume", "starters", "append"])
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--out")
    parser.add_argument("--command", default="")
    parser.add_argument("--page", default="")
    args = parser.parse_args(argv)
    if args.kind == "append":
        for path in args.inputs:
            append(path)
        return 0
    if not args.out:
        parser.error("--out is required")
    pages = {"jmh": "jmh.md", "scale": "scale.md", "volume": "scale.md", "starters": "peers.md"}
    head = provenance(args.command, args.page or pages[args.kind])
    if args.kind == "jmh":
        rows = jmh(args.inputs, head)
    else:
        rows = {"scale": scale, "volume": volume, "starters": starters}[args.kind](args.inputs[0], head)
    write(args.out, args.kind + ".csv", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
