#!/usr/bin/env python3
"""Summarizes session 26's quiet runs (README.md): the stalls before and
after, the first collective under the shim, and the copies.

    python3 summarize.py DIR [--collect OUT.json]   # DIR: the raw runs
    python3 summarize.py --from runs.json            # the committed extract
"""

from __future__ import annotations

import glob
import json
import re
import statistics
import sys
from pathlib import Path


def collect(d: Path) -> dict:
    """The per-repetition times of every run, and the copy medians."""
    out: dict = {"stall": {}, "copy": {}}
    for f in sorted(glob.glob(str(d / "stall-*.json"))):
        m = re.search(r"stall-(\w+)-(\w+)-r(\d+)-(\d+)\.json", f)
        if not m:
            continue
        b, op, _r, _i = m.groups()
        with open(f) as fh:
            res = json.load(fh)["results"][0]["raw"]["nbcx"]["t_pure"]
        out["stall"].setdefault(f"{b} {op}", []).append(res)
    for f in sorted(glob.glob(str(d / "copy-*.json"))):
        m = re.search(r"copy-(\w+)-(\w+)-(\d+)\.json", f)
        if not m:
            continue
        tp, b, _k = m.groups()
        with open(f) as fh:
            for x in json.load(fh)["results"]:
                key = f"{tp} {b} {x['op']} {x['bytes']}"
                nb = x["nbcx"]["t_pure"]["median"]
                nat = x.get("native", {}).get("t_pure", {}).get("median")
                out["copy"].setdefault(key, []).append([nb, nat])
    return out


def report(runs: dict) -> None:
    print(
        "| build | op | runs x reps | repetitions over 0.5 ms | their times (us) | median (us) |"
    )
    print("|---|---|---|---|---|---|")
    for key, rr in runs["stall"].items():
        b, op = key.split()
        flat = [t for r in rr for t in r]
        slow = sorted(round(t * 1e6) for t in flat if t > 5e-4)
        shown = ", ".join(map(str, slow[:12])) + (" ..." if len(slow) > 12 else "")
        print(
            f"| {b} | {op} | {len(rr)} x {len(rr[0])} | {len(slow)} | {shown} "
            f"| {statistics.median(flat) * 1e6:.1f} |"
        )
    print()
    print(
        "| transport | op | bytes | old nbcx us (runs) | new nbcx us (runs) | native us (runs, MPI) |"
    )
    print("|---|---|---|---|---|---|")
    keys = sorted({tuple(k.split()[i] for i in (0, 2, 3)) for k in runs["copy"]})
    for tp, op, size in keys:
        old = runs["copy"].get(f"{tp} old {op} {size}", [])
        new = runs["copy"].get(f"{tp} new {op} {size}", [])

        def fmt(v: list) -> str:
            return ", ".join(f"{x * 1e6:.1f}" for x in v if x is not None)

        nat = [x[1] for x in old + new]
        print(
            f"| {tp} | {op} | {size} | {fmt([x[0] for x in old])} "
            f"| {fmt([x[0] for x in new])} | {fmt(nat) if tp == 'mpi' else ''} |"
        )


def main() -> None:
    if sys.argv[1] == "--from":
        with open(sys.argv[2]) as fh:
            runs = json.load(fh)
    else:
        runs = collect(Path(sys.argv[1]))
        if len(sys.argv) > 3 and sys.argv[2] == "--collect":
            with open(sys.argv[3], "w") as fh:
                json.dump(runs, fh)
    report(runs)


if __name__ == "__main__":
    main()
