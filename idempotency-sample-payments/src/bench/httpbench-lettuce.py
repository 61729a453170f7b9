#!/usr/bin/env python3
"""Prints the Redis commands an application has sent so far, from its "lettuce" timer
(Lettuce's observation of every command, tagged by db.operation), as "OPERATION=count ...".

Usage: httpbench-lettuce.py PORT. Prints nothing if the metric is not there yet.
"""

import json
import sys
import urllib.parse
import urllib.request


def get(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def main():
    base = f"http://127.0.0.1:{sys.argv[1]}/actuator/metrics/lettuce"
    try:
        metric = get(base)
    except OSError:
        return
    operations = next((t["values"] for t in metric.get("availableTags", []) if t["tag"] == "db.operation"), [])
    counts = []
    for operation in sorted(operations):
        query = urllib.parse.urlencode({"tag": f"db.operation:{operation}"})
        data = get(f"{base}?{query}")
        count = next((m["value"] for m in data["measurements"] if m["statistic"] == "COUNT"), 0)
        counts.append(f"{operation}={int(count)}")
    print(" ".join(counts))


if __name__ == "__main__":
    main()
