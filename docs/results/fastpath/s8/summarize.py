#!/usr/bin/env python3
"""Medians over the sittings of tools/bench-compare runs (issue 15).

Reads sitting*/json/<mpi>-<net>-np2-<column>.json and prints, per MPI and
network, one table per column: for each operation and size the median
over sittings of nbcx pure / native MPI_I* pure (both from the same
run), the overlap, the progress CPU, the time inside nbcx calls in %
of native blocking, and how much longer the computation took inside the
overlapped run than alone ((t_ovrl - time in calls) / t_cpu), with the
range over sittings in brackets. Then, per table, how many points meet
each of the issue's goals.

    python3 docs/results/fastpath/s8/summarize.py > docs/results/fastpath/s8/summary.md
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONFIGS = ("openmpi-shm", "openmpi-emunet", "mpich-shm", "mpich-emunet")
COLUMNS = ("auto", "before")


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
        "| progress CPU | in calls nbcx (% blocking) | in calls native "
        "| computation slowed |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    keys = [(r["op"], r["bytes"]) for r in runs[0]["results"]]
    goals = {"pure": [0, 0], "cpu": [0, 0], "calls": [0, 0], "overlap": [0, 0]}
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
        slowed = [
            (
                (r["nbcx"]["t_ovrl"]["median"] - r["nbcx"]["overhead"]["median"])
                / r["nbcx"]["t_cpu"]["median"]
                - 1
            )
            * 100
            for r in rows
        ]
        med = statistics.median
        tally(goals["pure"], med(ratio) <= 1.05)
        tally(goals["cpu"], med(cpu) <= 5)
        tally(goals["calls"], med(calls) <= med(calls_n))
        if "emunet" in config and size == 1 << 20:
            tally(goals["overlap"], med(ov_x) >= 85)
        print(
            f"| {op} | {size_name(size)} | {cell(ratio, '{:.2f}')} "
            f"| {cell(ov_n, '{:.0f}')} | {cell(ov_x, '{:.0f}')} "
            f"| {cell(cpu, '{:.0f}')} | {cell(calls, '{:.0f}')} "
            f"| {cell(calls_n, '{:.0f}')} | {cell(slowed, '{:+.0f}')}% |"
        )
    met = "; ".join(f"{name} {ok}/{n}" for name, (ok, n) in goals.items() if n)
    print(
        f"\nGoals met (medians): {met} (pure <= 1.05x native, progress CPU "
        "<= 5 %, in calls <= native's, overlap >= 85 % at 1 MiB)"
    )


def tally(goal: list[int], ok: bool) -> None:
    goal[0] += ok
    goal[1] += 1


def main() -> None:
    for config in CONFIGS:
        for column in COLUMNS:
            table(config, column)


if __name__ == "__main__":
    main()
