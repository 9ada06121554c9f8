#!/usr/bin/env python3
"""Checks the shim's report per call site (NBCX_PMPI_REPORT).

  check_report.py --report FILE [--no-lines] -- CMD...

runs CMD (a test program under the shim, C or Fortran) with
NBCX_PMPI_REPORT=FILE. The program prints on stdout one line per call
site it made:

  expect <operation> <nbcx|native> <calls> <bytes> <function> <file:line>

(calls and bytes summed over the ranks, the line from the source). The
check: CMD exits 0; FILE is the report of rank 0 for every rank; it has
exactly one row per expected site, with the same operation, path, call
and byte counts, the function, and the file:line (unless --no-lines);
served rows have times (start-done >= exposed >= 0, hidden share in
[0, 100] %), native rows none; no other row. Standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROW = re.compile(
    r"^(?P<op>[a-z_]+)\s+(?P<path>nbcx|native)\s+(?P<ranks>\d+)\s+"
    r"(?P<calls>\d+)\s+(?P<bytes>\d+)\s+(?P<total>\S+)\s+(?P<exposed>\S+)\s+"
    r"(?P<hidden>\S+)\s+(?P<spread>\[[^\]]*\]\s+)?(?P<site>.*)$"
)
HEADER = re.compile(r"^nbcx-pmpi report: (\d+) ranks?, (\d+) rows?")


class Fail(Exception):
    pass


@dataclass
class Expect:
    op: str
    path: str
    calls: int
    nbytes: int
    func: str
    where: str


def parse_expect(stdout: str) -> list[Expect]:
    out = []
    for line in stdout.splitlines():
        f = line.split()
        if len(f) == 7 and f[0] == "expect":
            out.append(Expect(f[1], f[2], int(f[3]), int(f[4]), f[5], f[6]))
    if not out:
        raise Fail("the program printed no 'expect' line")
    return out


def check_row(row: re.Match[str], e: Expect, lines: bool) -> str | None:
    """None when the row is e's, else why not."""
    if row["op"] != e.op or row["path"] != e.path:
        return "operation/path"
    site = row["site"]
    m = re.match(r"(\S+)", site)
    if not m or m[1].lower() != e.func.lower():
        return "function"
    if lines and f" at {e.where} " not in site + " ":
        return "file:line"
    return None


def check(report: str, expects: list[Expect], lines: bool) -> None:
    text = report.splitlines()
    if not text or not HEADER.match(text[0]):
        raise Fail(f"no report header: {text[:1]}")
    rows = [m for m in (ROW.match(t) for t in text[3:]) if m]
    if len(rows) != len(text) - 3:
        raise Fail("a row does not parse:\n" + "\n".join(text[3:]))
    nrows = int(HEADER.match(text[0]).group(2))  # type: ignore[union-attr]
    if nrows != len(rows):
        raise Fail(f"header says {nrows} rows, {len(rows)} printed")
    for e in expects:
        mine = [r for r in rows if check_row(r, e, lines) is None]
        if len(mine) != 1:
            raise Fail(f"{len(mine)} rows for {e}:\n" + "\n".join(text[3:]))
        r = mine[0]
        if int(r["calls"]) != e.calls or int(r["bytes"]) != e.nbytes:
            raise Fail(f"counts of {e}: {r[0]}")
        if e.path == "nbcx":
            total, exposed = float(r["total"]), float(r["exposed"])
            hidden = float(r["hidden"].rstrip("%"))
            if not (total >= exposed >= 0 and 0 <= hidden <= 100):
                raise Fail(f"times of {e}: {r[0]}")
        elif r["total"] != "-" or r["hidden"] != "-":
            raise Fail(f"a native row with times: {r[0]}")
    if len(rows) != len(expects):
        raise Fail(
            f"{len(rows)} rows for {len(expects)} sites:\n" + "\n".join(text[3:])
        )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--report", required=True, type=Path)
    ap.add_argument("--no-lines", action="store_true")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if a.report.exists():
        a.report.unlink()
    env = dict(os.environ, NBCX_PMPI_REPORT=str(a.report))
    p = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    try:
        if p.returncode != 0:
            raise Fail(f"the program exited {p.returncode}")
        if not a.report.exists():
            raise Fail(f"no report in {a.report}")
        report = a.report.read_text()
        print(report, end="")
        check(report, parse_expect(p.stdout), not a.no_lines)
    except Fail as e:
        print(f"check_report: FAIL: {e}", file=sys.stderr)
        return 1
    print("check_report: the report names every call site, counts and bytes right")
    return 0


if __name__ == "__main__":
    sys.exit(main())
