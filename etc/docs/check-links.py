#!/usr/bin/env python3
"""Checks the relative links of the project's Markdown pages.

Usage: etc/docs/check-links.py [FILE ...]

Without arguments it reads README.md, CHANGELOG.md and every docs/**/*.md of the repository.
For each inline link or image ([text](target), ![alt](target)) and each reference definition
([name]: target) whose target is not an absolute URL, it checks that the file or folder exists,
and, for a target with a #fragment in a Markdown page, that the page has a heading (or an
HTML id or name) with that anchor, computed as GitHub computes heading anchors. Links inside
code spans and fenced code blocks are not links and are skipped. Without arguments it also
checks the result files docs/benchmarks/data/*.csv: each row's page names a section of
docs/benchmarks/ and its machine a row of machines.csv. Exits 1 and lists every broken link when one is found.
"""

import csv
import os
import re
import sys
from urllib.parse import unquote

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
# [text](target "title"): the text may hold one level of brackets (an image in a link)
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+[\"'(][^)]*)?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(\S+)")
HTML_ANCHOR = re.compile(r"<[a-zA-Z][^>]*\s(?:id|name)\s*=\s*[\"']([^\"']+)[\"']")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def slug(text):
    """GitHub's anchor of a heading: the rendered text, lower-cased, without punctuation."""
    text = CODE_SPAN.sub(lambda m: m.group(2), text)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)  # letters, marks, digits, _ and - stay
    return text.replace(" ", "-")


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")


def prose(lines):
    """(line number, text) of every line outside fenced code blocks."""
    fence = None
    for number, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        yield number, line


_anchors = {}


def anchors(path):
    if path not in _anchors:
        found, counts = set(), {}
        previous = ""
        for _, line in prose(read_lines(path)):
            text = None
            m = HEADING.match(line)
            if m:
                text = m.group(2)
            elif SETEXT.match(line) and previous.strip() and not previous.startswith((" ", "\t", "|", "-")):
                text = previous.strip()
            if text is not None:
                base = slug(text)
                n = counts.get(base, 0)
                counts[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
            for name in HTML_ANCHOR.findall(line):
                found.add(name)
            previous = line
        _anchors[path] = found
    return _anchors[path]


def targets(path):
    for number, line in prose(read_lines(path)):
        m = REFERENCE.match(line)
        if m:
            yield number, m.group(1)
            continue
        for m in INLINE.finditer(CODE_SPAN.sub(lambda s: " " * len(s.group(0)), line)):
            yield number, m.group(1).strip("<>")


def check(path):
    problems = []
    for number, target in targets(path):
        if not target or SCHEME.match(target) or target.startswith("//"):
            continue
        file_part, _, fragment = target.partition("#")
        file_part = unquote(file_part.split("?")[0])
        if file_part:
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
            if file_part.startswith("/"):
                resolved = os.path.normpath(os.path.join(ROOT, file_part.lstrip("/")))
        else:
            resolved = path
        where = f"{os.path.relpath(path, ROOT)}:{number}: {target}"
        if not os.path.exists(resolved):
            problems.append(f"{where}: no such file")
        elif fragment and resolved.endswith(".md") and os.path.isfile(resolved):
            if unquote(fragment) not in anchors(resolved):
                problems.append(f"{where}: no heading with this anchor in {os.path.relpath(resolved, ROOT)}")
    return problems


def check_result_pages():
    """the page column of the result files: a section of docs/benchmarks/"""
    problems = []
    pages = os.path.join(ROOT, "docs", "benchmarks")
    data = os.path.join(pages, "data")
    names = sorted(n for n in os.listdir(data) if n.endswith(".csv")) if os.path.isdir(data) else []
    machines = set()
    if "machines.csv" in names:
        with open(os.path.join(data, "machines.csv"), encoding="utf-8", newline="") as f:
            machines = {row["machine"] for row in csv.DictReader(f)}
    for name in names:
        with open(os.path.join(data, name), encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            if "page" not in (reader.fieldnames or []):
                continue
            for number, row in enumerate(reader, 2):
                if machines and row.get("machine") not in machines:
                    problems.append(f"docs/benchmarks/data/{name}:{number}: machine {row.get('machine')!r}"
                                    " is not in machines.csv")
                target = row.get("page") or ""
                page, _, fragment = target.partition("#")
                path = os.path.join(pages, page)
                where = f"docs/benchmarks/data/{name}:{number}: page {target}"
                if not page or not os.path.isfile(path):
                    problems.append(f"{where}: no such page")
                elif fragment and fragment not in anchors(path):
                    problems.append(f"{where}: no heading with this anchor")
    return problems


def default_files():
    files = [os.path.join(ROOT, name) for name in ("README.md", "CHANGELOG.md")]
    for folder, _, names in os.walk(os.path.join(ROOT, "docs")):
        files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".md")]
    return [f for f in files if os.path.isfile(f)]


def main(argv):
    files = [os.path.abspath(a) for a in argv] or default_files()
    problems = [] if argv else check_result_pages()
    for path in files:
        problems += check(path)
    for problem in problems:
        print(problem)
    count = sum(1 for path in files for _ in targets(path))
    if problems:
        print(f"{len(problems)} broken of {count} links in {len(files)} files", file=sys.stderr)
        return 1
    print(f"links: {count} in {len(files)} files, all resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
