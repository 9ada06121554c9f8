#!/usr/bin/env python3
"""The counts of docs/results/scale/full/README.md, from the JSON that
tools/sim/scale-table.py wrote in each folder given: per collective, the
points where nbcx's automatic choice is more than 5 % behind the fastest
of its algorithms (OP.json), and the points where it is behind MPICH's or
Open MPI libnbc's choice (OP-reference.json): at all, and by more than
5 %; first a table of the folders' totals (the README's Summary). Prints
Markdown. --peer-points also lists, per folder and collective, each
point where auto is more than 5 % behind a peer (ranks/bytes, peer,
auto / peer)."""

import json
import sys
from pathlib import Path

OPS = ("allreduce", "bcast", "reduce", "allgather", "alltoall", "reduce_scatter")
OPS += ("barrier",)


def behind_best(folder: Path, op: str) -> tuple[int, list[int]]:
    """The points of OP.json with auto and a best, and the ranks of each
    point where auto is more than 5 % behind the best."""
    f = folder / f"{op}.json"
    if not f.exists():
        return 0, []
    doc = json.loads(f.read_text())
    best: dict[tuple[int, int], float] = {}
    for r in doc["all"]["results"]:
        if "error" not in r:
            k = (r["ranks"], r["bytes"])
            best[k] = min(best.get(k, r["t_max_us"]), r["t_max_us"])
    n, ranks = 0, []
    for r in doc["auto"]["results"]:
        k = (r["ranks"], r["bytes"])
        if "error" in r or k not in best:
            continue
        n += 1
        if best[k] > 0 and r["t_max_us"] / best[k] > 1.05:
            ranks.append(k[0])
    return n, ranks


def totals(folder: Path) -> str:
    """One row of the Summary: points; behind the best (below 16 ranks / 16
    and more, of how many); of those at 16 and more, reduce_scatter's;
    behind each peer at all / > 5 %, of how many."""
    n = big = 0
    rs_big = "not run"  # (no reduce_scatter.json)
    small: list[int] = []
    large: list[int] = []
    peers = [[0, 0, 0], [0, 0, 0]]
    for op in OPS:
        m, ranks = behind_best(folder, op)
        n += m
        f = folder / f"{op}.json"
        if f.exists():
            doc = json.loads(f.read_text())
            big += sum(
                1
                for r in doc["auto"]["results"]
                if "error" not in r and r["ranks"] >= 16
            )
        small += [p for p in ranks if p < 16]
        large += [p for p in ranks if p >= 16]
        if op == "reduce_scatter" and f.exists():
            rs_big = str(sum(1 for p in ranks if p >= 16))
        for i, cell in enumerate(ref_table(folder, op) or []):
            at_all, _, rest = cell.partition(" / ")
            over5, _, of = rest.partition(" of ")
            for j, v in enumerate((at_all, over5, of)):
                peers[i][j] += int(v)
    return (
        f"| {folder.name} | {n} | {len(small) + len(large)} ({len(small)} / "
        f"{len(large)} of {big}) | {rs_big} | "
        + " | ".join(f"{a} / {b} of {c}" for a, b, c in peers)
        + " |"
    )


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


def peer_points(folder: Path, op: str) -> list[str]:
    """The points of OP-reference.json where auto is more than 5 % behind
    a peer's choice: ranks/bytes, the peer and auto / peer."""
    f = folder / f"{op}-reference.json"
    if not f.exists():
        return []
    doc = json.loads(f.read_text())
    auto = {}
    for r in doc["results"]:
        if "reference" not in r and "error" not in r:
            auto[(r["ranks"], r["bytes"])] = r["t_max_us"]
    out = []
    for r in doc["results"]:
        k = (r["ranks"], r["bytes"])
        if "reference" not in r or "error" in r or k not in auto:
            continue
        if r.get("t_max_us") and auto[k] > r["t_max_us"] * 1.05:
            out.append(
                f"{k[0]}/{k[1]} B {r['reference']} {auto[k] / r['t_max_us']:.2f}x"
            )
    return out


def ranks_run(folder: Path) -> set[int]:
    """The numbers of ranks of auto's points in the folder's OP.json."""
    out: set[int] = set()
    for op in OPS:
        f = folder / f"{op}.json"
        if f.exists():
            doc = json.loads(f.read_text())
            out |= {r["ranks"] for r in doc["auto"]["results"]}
    return out


def span(ranks: set[int]) -> str:
    """The numbers of ranks given as "2-4" or "4,096" ("none run")."""
    if not ranks:
        return "none run"
    lo, hi = min(ranks), max(ranks)
    return f"{lo:,}" if lo == hi else f"{lo:,}-{hi:,}"


def header(folders: list[Path]) -> str:
    """The Summary's header: the split below and from 16 ranks, labelled
    with the numbers of ranks the folders ran (not a fixed 2-4 / 16-1,024:
    the 4,096-rank folders have only 4,096)."""
    ranks = set().union(*(ranks_run(f) for f in folders)) if folders else set()
    small = {p for p in ranks if p < 16}
    large = span({p for p in ranks if p >= 16})
    below = f"at {span(small)} ranks" if small else "below 16 ranks: none run"
    return (
        f"| folder | points | auto > 5 % behind its best ({below} / "
        f"at {large}) | of those at {large}: reduce_scatter | behind MPICH's "
        "choice: at all / > 5 % | behind Open MPI libnbc's: at all / > 5 % |"
    )


def main() -> None:
    peers = "--peer-points" in sys.argv[1:]
    folders = [a for a in sys.argv[1:] if a != "--peer-points"]
    print(header([Path(f) for f in folders]))
    print("|---|---|---|---|---|---|")
    for name in folders:
        print(totals(Path(name)))
    print()
    for name in folders:
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
        if peers:  # --peer-points: each point more than 5 % behind a peer
            for op in OPS:
                pts = peer_points(folder, op)
                print(f"- {op}: " + ("; ".join(pts) or "-"))
            print()


if __name__ == "__main__":
    main()
