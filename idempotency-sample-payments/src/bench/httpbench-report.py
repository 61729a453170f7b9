#!/usr/bin/env python3
"""Turns the results.tsv of run-http-benchmarks.sh into markdown tables.

Throughput and latency are the median over the rounds. Ratios are computed within each
round (the two endpoints ran minutes apart at most, under the same machine load) and the
median and range of those per-round ratios are reported. Redis round trips per request are
the commands the application sent, from its "lettuce" timer (one observation per command,
by db.operation); the private Redis server's INFO commandstats add what the server ran,
the commands that scripts call included. PostgreSQL transactions come from the benchmark
database's pg_stat_database. All are read before and after each run and checked against
the performance budget (docs/benchmarks/budget.md).

CPU time per request is read from /proc before and after each run (clock ticks of the
application's JVM, the private Redis server, every PostgreSQL process, and wrk itself by
/usr/bin/time), with the machine's busy time (every core's non-idle ticks) beside it, so that
a difference in throughput can be traced to the process that spent it.

Usage: httpbench-report.py RESULTS_TSV [ENVIRONMENT_TXT] [--csv FILE]

With --csv it also writes the ratios in the format of docs/benchmarks/data/http-ratios.csv
(see its README.md): the date and commit from the first line of ENVIRONMENT_TXT, the machine
from BENCH_MACHINE, the command from BENCH_COMMAND, what differs from the shipped defaults from
BENCH_VARIANT.
"""

import csv

import os
import statistics
import sys

TOLERANCE = 0.05

TICK_US = 1e6 / os.sysconf("SC_CLK_TCK")

# (label, numerator, denominator, budget or None)
RATIOS = [
    ("(3) redis first / (2) raw Redis", "3", "2", 0.95),
    ("(6) tiered first / (5d) raw tiered, durable claim", "6", "5d", 0.95),
    ("(6) tiered first / (5) raw tiered, lookup work", "6", "5", None),
    ("(4) redis replay / (1) bare", "4", "1", 1.0),
    ("(4) redis replay / (2b) raw Redis GET", "4", "2b", None),
    ("(7) payment @Idempotent / payment, redis mode", "7i", "7", 0.72),
    ("(7t) payment @Idempotent / payment, tiered mode", "7ti", "7t", None),
    ("(6L) tiered first, lookup claim / (5L) raw tiered", "6L", "5L", 0.95),
    ("(7L) payment @Idempotent / payment, tiered lookup claim", "7Li", "7L", None),
    ("(6r) tiered replay / (1) bare", "6r", "1", None),
    ("(8) jdbc first / (1) bare", "8", "1", None),
    ("(7x) payment transactional / payment, tiered", "7xi", "7x", 0.80),
    ("(7xr) raw transactional / payment, tiered", "7xr", "7x", None),
    ("(7x) payment transactional / raw transactional, tiered", "7xi", "7xr", None),
    ("(7j) payment transactional / payment, jdbc", "7ji", "7j", 0.80),
    ("(7jr) raw transactional / payment, jdbc", "7jr", "7j", None),
    ("(7j) payment transactional / raw transactional, jdbc", "7ji", "7jr", None),
]

# the name of each ratio in docs/benchmarks/data/http-ratios.csv
COMPARISONS = {
    ("3", "2"): "redis-first/two-sets", ("6", "5d"): "tiered-first/raw-durable", ("6", "5"): "tiered-first/raw-lookup-work",
    ("4", "1"): "redis-replay/bare", ("4", "2b"): "redis-replay/raw-get", ("7i", "7"): "payment-redis/payment",
    ("7ti", "7t"): "payment-tiered/payment", ("6L", "5L"): "tiered-lookup-first/raw-tiered",
    ("7Li", "7L"): "payment-tiered-lookup/payment", ("6r", "1"): "tiered-replay/bare", ("8", "1"): "jdbc-first/bare",
    ("7xi", "7x"): "transactional-tiered/payment", ("7xr", "7x"): "raw-transactional-tiered/payment",
    ("7xi", "7xr"): "transactional-tiered/twin", ("7ji", "7j"): "transactional-jdbc/payment",
    ("7jr", "7j"): "raw-transactional-jdbc/payment", ("7ji", "7jr"): "transactional-jdbc/twin",
}


def parse_calls(text):
    calls = {}
    for item in text.split():
        name, _, value = item.partition("=")
        calls[name] = int(value)
    return calls


def parse_result(text):
    fields = {}
    for item in text.split()[1:]:
        name, _, value = item.partition("=")
        fields[name] = float(value)
    return fields


def check(expect, measured):
    failures = []
    for item in expect.split():
        if item.split("<")[0].split("=")[0] not in measured:
            continue
        if "<=" in item:
            name, value = item.split("<=")
            ok = measured[name] <= float(value) + TOLERANCE
        else:
            name, value = item.split("=")
            ok = abs(measured[name] - float(value)) <= TOLERANCE
        if not ok:
            failures.append(f"{name} {measured[name]:.2f} (expected {item.replace(name, '', 1)})")
    return failures


def load(path):
    runs = []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 10 or not cols[4].startswith("RESULT"):
                if len(cols) >= 3:
                    print(f"<!-- no wrk result: {cols[0]} round {cols[1]} {cols[2]} -->")
                continue
            pass_, round_, name, expect, result, redis_before, redis_after, pg_before, pg_after, loadavg = cols[:10]
            if pass_ == "warmup":
                continue
            r = parse_result(result)
            requests = r["requests"]
            cpu = None
            if len(cols) >= 13 and cols[10] and cols[11]:
                b = [int(x) for x in cols[10].split()]
                a = [int(x) for x in cols[11].split()]
                cpu = {k: (a[i] - b[i]) * TICK_US / requests for i, k in enumerate(("app", "redis", "pg", "busy"))}
                cpu["wrk"] = int(cols[12]) * TICK_US / requests if cols[12] else None
            before, after = parse_calls(redis_before), parse_calls(redis_after)
            commands = {c: after[c] - before.get(c, 0) for c in after if after[c] - before.get(c, 0) > 0}
            # read in the count pass only: empty in the timed passes
            pg_b = [int(x) for x in pg_before.split()]
            pg_a = [int(x) for x in pg_after.split()]
            # INFO commandstats also counts the commands a script calls: when scripts ran, the
            # round trips are the script calls (the store sends nothing else but DEL)
            sent = {}
            if len(cols) >= 15 and cols[14]:
                sent_b, sent_a = parse_calls(cols[13]), parse_calls(cols[14])
                sent = {c.lower(): sent_a[c] - sent_b.get(c, 0) for c in sent_a if sent_a[c] - sent_b.get(c, 0) > 0}
            measured = {}
            if len(cols) >= 15 and cols[14]:
                measured["redis"] = sum(sent.values()) / requests
            elif not any(c.startswith(("eval", "fcall")) for c in commands):
                # no client-side count (no Lettuce): without scripts, every command the
                # server ran was sent; with scripts, their inner commands count too, and the
                # round trips are not known
                measured["redis"] = sum(commands.values()) / requests
            if len(pg_a) == 2 and len(pg_b) == 2:
                measured["pg"] = (pg_a[0] - pg_b[0]) / requests
                measured["pgw"] = (pg_a[1] - pg_b[1]) / requests
            runs.append({
                "pass": pass_, "round": int(round_), "name": name, "id": name.split()[0],
                "rps": requests / (r["duration_us"] / 1e6), "p50": r["p50_us"] / 1000, "p99": r["p99_us"] / 1000,
                "errors": int(r["non2xx"] + r["socket_errors"]), "requests": int(requests),
                "measured": measured, "commands": {c: n / requests for c, n in commands.items()},
                "sent": {c: n / requests for c, n in sent.items()},
                "failures": check(expect, measured), "expect": expect, "load": float(loadavg),
                "cpu": cpu,
            })
    return runs


def redis_cells(run):
    sent = ", ".join(f"{c} {n:.2f}" for c, n in sorted(run["sent"].items()))
    round_trips = run["measured"].get("redis")
    sent = "n/a" if round_trips is None else f"{round_trips:.2f}" + (f" ({sent})" if sent else "")
    ran = sum(run["commands"].values())
    commands = ", ".join(f"{c} {n:.2f}" for c, n in sorted(run["commands"].items()))
    return sent, f"{ran:.2f}" + (f" ({commands})" if commands else "")


def verdict(failures):
    return "ok" if not failures else "MISSED: " + "; ".join(sorted(set(failures)))


def table(runs, pass_):
    rows = [r for r in runs if r["pass"] == pass_]
    names = list(dict.fromkeys(r["name"] for r in rows))
    print("| endpoint | req/s | p50 ms | p99 ms | Redis round trips/req (sent) | Redis commands run/req"
          " | budget (Redis) | errors |")
    print("|---|---|---|---|---|---|---|---|")
    failed = 0
    for name in names:
        mine = [r for r in rows if r["name"] == name]
        rps = statistics.median(r["rps"] for r in mine)
        p50 = statistics.median(r["p50"] for r in mine)
        p99 = statistics.median(r["p99"] for r in mine)
        sent, commands = redis_cells(mine[-1])
        failures = [f for r in mine for f in r["failures"]]
        failed += len(failures)
        errors = sum(r["errors"] for r in mine)
        print(f"| {name} | {rps:,.0f} | {p50:.2f} | {p99:.2f} | {sent} | {commands} | {verdict(failures)}"
              f" | {errors} |")
    return failed


def count_table(runs):
    rows = [r for r in runs if r["pass"] == "count"]
    if not rows:
        return 0
    print("| endpoint | requests | Redis round trips/req (sent) | Redis commands run/req"
          " | PostgreSQL transactions/req | rows written/req | budget |")
    print("|---|---|---|---|---|---|---|")
    failed = 0
    for run in rows:
        sent, commands = redis_cells(run)
        pg, pgw = run["measured"].get("pg"), run["measured"].get("pgw")
        pg_text = "n/a" if pg is None else f"{pg:.2f}"
        pgw_text = "n/a" if pgw is None else f"{pgw:.2f}"
        failed += len(run["failures"])
        print(f"| {run['name']} | {run['requests']:,} | {sent} | {commands} | {pg_text} | {pgw_text}"
              f" | {verdict(run['failures'])} |")
    return failed


def cpu_table(runs, pass_):
    rows = [r for r in runs if r["pass"] == pass_ and r["cpu"]]
    if not rows:
        return
    names = list(dict.fromkeys(r["name"] for r in rows))
    print("| endpoint | application JVM | Redis | PostgreSQL | wrk | rest | machine busy |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        mine = [r["cpu"] for r in rows if r["name"] == name]

        def med(key):
            values = [c[key] for c in mine if c.get(key) is not None]
            return statistics.median(values) if values else None

        app, redis, pg, wrk, busy = med("app"), med("redis"), med("pg"), med("wrk"), med("busy")
        rest = busy - app - redis - pg - (wrk or 0)
        cells = [f"{v:.0f}" if v is not None else "n/a" for v in (app, redis, pg, wrk, rest, busy)]
        print(f"| {name} | " + " | ".join(cells) + " |")


def per_round_ratios(runs, pass_, num, den):
    by_round = {}
    for r in runs:
        if r["pass"] == pass_:
            by_round.setdefault(r["round"], {})[r["id"]] = r["rps"]
    return [v[num] / v[den] for v in by_round.values() if num in v and den in v]


def ratio_rows(runs, environment):
    """the rows of docs/benchmarks/data/http-ratios.csv"""
    first = open(environment, encoding="utf-8").readline() if environment else ""
    date = first[2:12] if first.startswith("# ") else ""
    commit = first.split("commit ", 1)[1].strip() if "commit " in first else ""
    names = {r["id"]: r["name"] for r in runs}
    rows = []
    for _, num, den, _ in RATIOS:
        for pass_, concurrency in (("c16", "16"), ("c1", "1")):
            values = per_round_ratios(runs, pass_, num, den)
            if values:
                rows.append([date, commit, "", os.environ.get("BENCH_MACHINE", ""), os.environ.get("BENCH_COMMAND", ""),
                             "http.md", COMPARISONS[(num, den)], os.environ.get("BENCH_VARIANT", ""), names[num],
                             names[den], concurrency, f"{statistics.median(values):.2f}", f"{min(values):.2f}",
                             f"{max(values):.2f}"])
    return rows


def ratios(runs):
    print("| ratio of req/s | budget | c=16: median (per-round range) | c=16 | c=1: median (range) | c=1 |")
    print("|---|---|---|---|---|---|")
    for label, num, den, budget in RATIOS:
        cells = []
        for pass_ in ("c16", "c1"):
            values = per_round_ratios(runs, pass_, num, den)
            if not values:
                cells += ["n/a", ""]
                continue
            median = statistics.median(values)
            cells.append(f"{median:.2f} ({min(values):.2f}-{max(values):.2f})")
            cells.append("" if budget is None else ("met" if median >= budget else "**missed**"))
        budget_text = "report" if budget is None else f">= {budget:.2f}"
        print(f"| {label} | {budget_text} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} |")


def main():
    args = sys.argv[1:]
    csv_path = None
    if "--csv" in args:
        i = args.index("--csv")
        csv_path = args[i + 1]
        del args[i:i + 2]
    runs = load(args[0])
    if csv_path:
        with open(csv_path, "w", encoding="utf-8", newline="") as out:
            w = csv.writer(out, lineterminator="\n")
            w.writerow(["date", "commit", "recorded_in", "machine", "command", "page", "comparison", "variant",
                        "numerator", "denominator", "concurrency", "median", "min", "max"])
            w.writerows(ratio_rows(runs, args[1] if len(args) > 1 else None))
    if len(args) > 1:
        with open(args[1], encoding="utf-8") as env:
            for line in env:
                print(line.rstrip().lstrip("# ") + "  ")
    loads = [r["load"] for r in runs]
    if loads:
        print(f"1-minute load average during the runs: {min(loads):.1f} to {max(loads):.1f}\n")
    failed = 0
    for pass_, title in (("c16", "Concurrency 16 (wrk -t2 -c16)"), ("c1", "Concurrency 1 (wrk -t1 -c1)")):
        print(f"#### {title}\n")
        failed += table(runs, pass_)
        print()
        if any(r["cpu"] for r in runs if r["pass"] == pass_):
            print(f"CPU time per request in microseconds ({pass_}, median over the rounds):\n")
            cpu_table(runs, pass_)
            print()
    print("#### Round trips per request (wrk -t1 -c1, one run per case)\n")
    print("PostgreSQL's counters read once it has published every backend's statistics.\n")
    failed += count_table(runs)
    print()
    print("#### Ratios (per round, same run)\n")
    ratios(runs)
    print()
    print(f"Round-trip checks against the budget: {'all met' if failed == 0 else f'{failed} missed'}"
          f" (tolerance {TOLERANCE} per request).")


if __name__ == "__main__":
    main()
