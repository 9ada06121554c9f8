#!/usr/bin/env python3
"""Medians over the sittings of tools/bench-compare runs (issue 15).

Reads sitting*/json/<mpi>-<net>-np2-<column>.json and prints, per MPI and
network, one table per column: for each operation and size the median
over sittings of nbcx pure / native MPI_I* pure (both from the same
run), the overlap, the progress CPU and the time inside nbcx calls in %
of native blocking, with the range over sittings in brackets.

    python3 docs/results/fastpath/s7/summarize.py > docs/results/fastpath/s7/summary.md
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONFIGS = ("openmpi-shm", "openmpi-emunet", "mpich-shm", "mpich-emunet")
COLUMNS = ("auto", "rules-off", "before")


def load(config: str, column: str) -> list[dict]:
    runs = []
    for sitting in sorted(HERE.glob("sitting*")):
        path = sitting / "json" / f"{config}-np2-{column}.json"
        if path.exists():
            runs.append(json.loads(path.read_text()))
    return runs


def size_name(n: int) -> str:
    for unit, k in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= k and n % k == 0:
            return f"{n // k}{unit}"
    return str(n)


def cell(values: list[float], fmt: str) -> str:
    med = statistics.median(values)
    if len(values) == 1:
        return fmt.format(med)
    return f"{fmt.format(med)} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def table(config: str, column: str) -> None:
    runs = load(config, column)
    if not runs:
        return
    print(f"\n### {config}, nbcx {column}: medians over {len(runs)} sittings\n")
    print(
        "| op | size | pure / native | overlap native | overlap nbcx "
        "| progress CPU | in calls nbcx (% blocking) | in calls native |"
    )
    print("|---|---|---|---|---|---|---|---|")
    keys = [(r["op"], r["bytes"]) for r in runs[0]["results"]]
    for op, size in keys:
        rows = [
            next(r for r in run["results"] if r["op"] == op and r["bytes"] == size)
            for run in runs
        ]
        ratio = [
            r["nbcx"]["t_pure"]["median"] / r["native"]["t_pure"]["median"]
            for r in rows
        ]
        ov_n = [r["native"]["overlap"]["median"] * 100 for r in rows]
        ov_x = [r["nbcx"]["overlap"]["median"] * 100 for r in rows]
        cpu = [r["nbcx"]["cpu_progress"]["median"] * 100 for r in rows]
        calls = [
            r["nbcx"]["overhead"]["median"] / r["t_block"]["median"] * 100 for r in rows
        ]
        calls_n = [
            r["native"]["overhead"]["median"] / r["t_block"]["median"] * 100
            for r in rows
        ]
        print(
            f"| {op} | {size_name(size)} | {cell(ratio, '{:.2f}')} "
            f"| {cell(ov_n, '{:.0f}')} | {cell(ov_x, '{:.0f}')} "
            f"| {cell(cpu, '{:.0f}')} | {cell(calls, '{:.0f}')} "
            f"| {cell(calls_n, '{:.0f}')} |"
        )


def main() -> None:
    for config in CONFIGS:
        for column in COLUMNS:
            table(config, column)


if __name__ == "__main__":
    main()
