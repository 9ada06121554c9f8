#!/usr/bin/env python3
"""hier-table.py - the node-aware algorithms ("hier") against the flat ones.

For each collective, ranks per node and number of ranks it runs nbcx-sim
(--json) with "hier", every flat algorithm of the collective and "auto",
and writes a Markdown table: per (ranks per node, ranks, size) hier's
time, the fastest flat algorithm and its time, hier / best flat, and the
automatic choice. The runs' JSON is kept beside it (hier.json).

    tools/sim/hier-table.py --build build/openmpi --ops bcast,allreduce \\
        --ranks 64,1024,16384 --ranks-per-node 2,8,32 --sizes 8,64k,1m \\
        --out docs/results/scale

--against-auto FILE.json: instead, hier against the automatic choice as
it is (the JSON of a run of "hier,auto", kept in FILE.json, or read from
it when it exists with --reuse): one grid per collective and ranks per
node, ranks down, sizes across, auto's time / hier's (above 1: hier
ahead), in FILE.md.
"""

import argparse
import json
import os
import subprocess
import sys
from typing import Any, cast

FLAT = {
    "bcast": [
        "binomial",
        "knomial3",
        "knomial4",
        "knomial6",
        "knomial8",
        "chain",
        "scatter_allgather",
        "double_tree",
    ],
    "allreduce": ["recursive_doubling", "ring", "reduce_bcast", "rabenseifner"],
    "reduce": ["binomial", "knomial4", "chain", "rabenseifner"],
    "barrier": ["dissemination", "knomial4", "knomial6"],
    "allgather": ["bruck", "ring"],
}


def size_bytes(s: str) -> int:
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    s = s.strip().lower()
    return int(s[:-1]) * mult[s[-1]] if s[-1] in mult else int(s)


def fmt_us(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.2f} s"
    if us >= 1e3:
        return f"{us / 1e3:.2f} ms"
    return f"{us:.1f} us"


def fmt_size(b: int) -> str:
    if b >= 1 << 20:
        return f"{b >> 20} MiB"
    if b >= 1 << 10:
        return f"{b >> 10} KiB"
    return f"{b} B"


def result_rows(data: Any, source: str) -> list[dict[str, Any]]:
    """The runs' rows of nbcx-sim's JSON: a list of objects."""
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        sys.exit(f"{source}: not a list of JSON objects")
    return cast(list[dict[str, Any]], data)


def run(
    sim: str, op: str, algs: list[str], ranks: str, rpn: int, sizes: str
) -> list[dict[str, Any]]:
    cmd = [
        sim,
        "--op",
        op,
        "--alg",
        ",".join(algs),
        "--ranks",
        ranks,
        "--ranks-per-node",
        str(rpn),
        "--sizes",
        sizes,
        "--json",
    ]
    print(" ".join(cmd), file=sys.stderr, flush=True)
    out = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if out.returncode not in (0,):
        sys.exit(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr}")
    return result_rows(json.loads(out.stdout)["results"], " ".join(cmd))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build/openmpi")
    ap.add_argument("--ops", default="bcast,allreduce")
    ap.add_argument("--ranks", default="64,1024,16384")
    ap.add_argument("--ranks-per-node", default="2,8,32")
    ap.add_argument("--sizes", default="8,64k,1m")
    ap.add_argument("--out", default="docs/results/scale")
    ap.add_argument("--against-auto", metavar="FILE.json")
    ap.add_argument("--reuse", action="store_true")
    args = ap.parse_args()
    sim = os.path.join(args.build, "tools/sim/nbcx-sim")
    if args.against_auto:
        against_auto(args, sim)
        return
    rows: list[dict[str, Any]] = []
    for op in args.ops.split(","):
        for rpn in (int(c) for c in args.ranks_per_node.split(",")):
            rows += run(
                sim, op, ["hier"] + FLAT[op] + ["auto"], args.ranks, rpn, args.sizes
            )
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "hier.json"), "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")
    lines = [
        (
            "| op | ranks/node | ranks | size | hier | best flat | "
            "hier / best flat | auto (flat) |"
        ),
        "|---|---|---|---|---|---|---|---|",
    ]
    for op in args.ops.split(","):
        for rpn in (int(c) for c in args.ranks_per_node.split(",")):
            for p in (int(r) for r in args.ranks.split(",")):
                for b in (size_bytes(s) for s in args.sizes.split(",")):
                    pts = [
                        r
                        for r in rows
                        if r["op"] == op
                        and r["ranks_per_node"] == rpn
                        and r["ranks"] == p
                        and r["bytes"] == b
                        and "t_max_us" in r
                    ]
                    by = {r["alg_requested"]: r for r in pts}
                    if "hier" not in by:
                        continue
                    flat = [r for r in pts if r["alg_requested"] in FLAT[op]]
                    best = min(flat, key=lambda r: r["t_max_us"])
                    h = by["hier"]["t_max_us"]
                    ratio = best["t_max_us"] / h
                    auto = by.get("auto")
                    mark = "**" if ratio >= 1.05 else ""
                    lines.append(
                        f"| {op} | {rpn} | {p} | {fmt_size(b)} | "
                        f"{mark}{fmt_us(h)}{mark} | {best['alg']} "
                        f"{fmt_us(best['t_max_us'])} | "
                        f"{h / best['t_max_us']:.2f} | "
                        + (f"{auto['alg']} {fmt_us(auto['t_max_us'])}" if auto else "-")
                        + " |"
                    )
    with open(os.path.join(args.out, "hier-table.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def against_auto(args: argparse.Namespace, sim: str) -> None:
    path = args.against_auto
    if args.reuse and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            rows = result_rows(json.load(f), path)
    else:
        rows = []
        for rpn in (int(c) for c in args.ranks_per_node.split(",")):
            for op in args.ops.split(","):
                rows += run(sim, op, ["hier", "auto"], args.ranks, rpn, args.sizes)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
            f.write("\n")
    sizes = sorted({r["bytes"] for r in rows})
    out = []
    for op in args.ops.split(","):
        for rpn in (int(c) for c in args.ranks_per_node.split(",")):
            pts = {
                (r["ranks"], r["bytes"], r["alg_requested"]): r
                for r in rows
                if r["op"] == op and r["ranks_per_node"] == rpn and "t_max_us" in r
            }
            if not pts:
                continue
            cols = [b for b in sizes if any(k[1] == b for k in pts)]
            out.append(f"**{op}, {rpn} ranks per node** (auto / hier)\n")
            out.append("| ranks | " + " | ".join(fmt_size(b) for b in cols) + " |")
            out.append("|---" * (len(cols) + 1) + "|")
            for p in sorted({k[0] for k in pts}):
                cells = []
                for b in cols:
                    h, a = pts.get((p, b, "hier")), pts.get((p, b, "auto"))
                    cells.append(
                        f"{a['t_max_us'] / h['t_max_us']:.2f}" if h and a else "-"
                    )
                out.append(f"| {p} | " + " | ".join(cells) + " |")
            out.append("")
    md = os.path.splitext(path)[0] + ".md"
    with open(md, "w", encoding="utf-8") as f:
        f.write("\n".join(out))
    print("\n".join(out))


if __name__ == "__main__":
    main()
