#!/usr/bin/env python3
"""The counts of docs/results/scale/full/README.md, from the JSON that
tools/sim/scale-table.py wrote in each folder given: per collective, the
points where nbcx's automatic choice is more than 5 % behind the fastest
of its algorithms (OP.json), and the points where it is behind MPICH's or
Open MPI libnbc's choice (OP-reference.json): at all, and by more than
5 %. Prints Markdown."""

import json
import sys
from pathlib import Path

OPS = ("allreduce", "bcast", "reduce", "allgather", "alltoall", "reduce_scatter")
OPS += ("barrier",)


def best_table(folder: Path, op: str) -> list[str] | None:
    f = folder / f"{op}.json"
    if not f.exists():
        return None
    doc = json.loads(f.read_text())
    best: dict[tuple[int, int], float] = {}
    for r in doc["all"]["results"]:
        if "error" in r:
            continue
        k = (r["ranks"], r["bytes"])
        best[k] = min(best.get(k, r["t_max_us"]), r["t_max_us"])
    n = behind = 0
    worst: list[str] = []
    for r in doc["auto"]["results"]:
        k = (r["ranks"], r["bytes"])
        if "error" in r or k not in best:
            continue
        n += 1
        ratio = r["t_max_us"] / best[k] if best[k] > 0 else 1.0
        if ratio > 1.05:
            behind += 1
            worst.append(f"{k[0]}/{k[1]} B {r['alg']} {ratio:.2f}x")
    return [str(n), str(behind), "; ".join(worst) or "-"]


def ref_table(folder: Path, op: str) -> list[str] | None:
    f = folder / f"{op}-reference.json"
    if not f.exists():
        return None
    doc = json.loads(f.read_text())
    auto = {}
    for r in doc["results"]:
        if "reference" not in r and "error" not in r:
            auto[(r["ranks"], r["bytes"])] = r["t_max_us"]
    cells = []
    for peer in ("mpich", "openmpi-libnbc"):
        n = at_all = over5 = 0
        for r in doc["results"]:
            k = (r["ranks"], r["bytes"])
            if r.get("reference") != peer or "error" in r or k not in auto:
                continue
            if not r.get("t_max_us"):
                continue
            n += 1
            if auto[k] > r["t_max_us"] * 1.0005:
                at_all += 1
            if auto[k] > r["t_max_us"] * 1.05:
                over5 += 1
        cells.append(f"{at_all} / {over5} of {n}")
    return cells


def main() -> None:
    for name in sys.argv[1:]:
        folder = Path(name)
        print(f"### {folder.name}\n")
        print(
            "| op | points | auto > 5 % behind its best | those points "
            "(ranks/bytes, auto, auto / best) | behind MPICH: at all / > 5 % "
            "| behind Open MPI libnbc: at all / > 5 % |"
        )
        print("|---|---|---|---|---|---|")
        for op in OPS:
            b = best_table(folder, op)
            r = ref_table(folder, op)
            if b is None and r is None:
                continue
            b = b or ["not run", "-", "-"]
            r = r or ["not run", "not run"]
            print(f"| {op} | " + " | ".join(b + r) + " |")
        print()


if __name__ == "__main__":
    main()
