#!/usr/bin/env python3
"""scale-table.py - nbcx's automatic choice against every algorithm, at scale.

For each collective it runs nbcx-sim twice over a grid of ranks and sizes
(--alg all, then --alg auto), and writes a Markdown table: per (ranks,
size) the algorithm the automatic choice takes, its time, the fastest
algorithm and the ratio auto / best (t_max, no computation). Cells where
auto is more than 5 % behind the best are marked, and the list of them
follows the table. The JSON of the runs is kept beside the table.

    tools/sim/scale-table.py --build build/openmpi --ranks-per-node 2 \\
        --ranks 2,3,4,...,16384 --sizes 8,64,...,16m \\
        --ops allreduce,bcast --out docs/results/scale

--extra-algs knomial3,knomial8 adds the k-nomial trees of those radices
(beside "knomial", radix 4, which --alg all runs) to the collectives that
have them.
"""

import argparse
import json
import os
import subprocess
import sys
from typing import Any

# the collectives with k-nomial trees (--extra-algs)
KNOMIAL_OPS = ("bcast", "reduce", "gather", "scatter", "barrier")


def run_json(cmd: list[str]) -> dict[str, Any]:
    """nbcx-sim's JSON; points it cannot serve are rows with "error"."""
    out = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if not out.stdout.strip():
        sys.exit(f"{' '.join(cmd)} failed: {out.stderr}")
    doc: dict[str, Any] = json.loads(out.stdout)
    return doc


def fmt_size(b: int) -> str:
    for unit, div in (("M", 1 << 20), ("K", 1 << 10)):
        if b >= div and b % div == 0:
            return f"{b // div}{unit}"
    return str(b)


def fmt_us(t: float) -> str:
    if t >= 1e6:
        return f"{t / 1e6:.2f} s"
    if t >= 1e3:
        return f"{t / 1e3:.2f} ms"
    return f"{t:.1f} us"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--ops", required=True)
    ap.add_argument("--ranks", required=True)
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--ranks-per-node", default="2")
    ap.add_argument("--params", default=None)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", default="", help="suffix of the file names")
    ap.add_argument("--reuse", action="store_true", help="read OP.json when it exists")
    ap.add_argument(
        "--extra-algs",
        default="",
        help="more algorithm names simulated beside --alg all, e.g. the "
        "k-nomial radices knomial3,knomial8 (for the ops that have them: "
        "bcast, reduce, gather, scatter, barrier)",
    )
    args = ap.parse_args()

    sim = os.path.join(args.build, "tools/sim/nbcx-sim")
    os.makedirs(args.out, exist_ok=True)
    common = [
        "--ranks",
        args.ranks,
        "--ranks-per-node",
        args.ranks_per_node,
        "--json",
    ]
    if args.params:
        common += ["--params", args.params]
    behind: list[tuple[str, int, int, str, str, float]] = []
    for op in args.ops.split(","):
        sizes = ["8"] if op == "barrier" else args.sizes.split(",")
        base = [sim, "--op", op, "--sizes", ",".join(sizes)] + common
        saved = os.path.join(args.out, f"{op}{args.tag}.json")
        every: dict[str, Any] | None = None
        auto: dict[str, Any] | None = None
        if args.reuse and os.path.exists(saved):
            with open(saved) as f:
                both = json.load(f)
            every, auto = both["all"], both["auto"]
            have = {r["ranks"] for r in auto["results"]}
            if have != {int(x) for x in args.ranks.split(",")}:
                auto = None
        if every is None:
            every = run_json(base + ["--alg", "all"])
            # nbcx-sim reports a point beyond nbcx's int counts on its row
            # and goes on
            extra = (
                [a for a in args.extra_algs.split(",") if a]
                if op in KNOMIAL_OPS
                else []
            )
            if extra:
                every["results"] += run_json(base + ["--alg", ",".join(extra)])[
                    "results"
                ]
        if auto is None:
            auto = run_json(base + ["--alg", "auto"])
        with open(saved, "w") as f:
            json.dump({"all": every, "auto": auto}, f, indent=0)
        best: dict[tuple[int, int], tuple[str, float]] = {}
        algs: list[str] = []
        for r in every["results"]:
            name = r.get("alg", r["alg_requested"])
            if name not in algs:
                algs.append(name)
            if "error" in r:
                continue
            key = (r["ranks"], r["bytes"])
            if key not in best or r["t_max_us"] < best[key][1]:
                best[key] = (r["alg"], r["t_max_us"])
        refused = sorted(
            {(r["alg_requested"], r["ranks"]) for r in every["results"] if "error" in r}
        )
        lines = [
            f"## {op}",
            "",
            (
                f"Algorithms: {', '.join(algs)}. Each cell: the automatic "
                "choice, its time, and auto / best (the best algorithm named "
                "when it is not auto's); **bold**: more than 5 % behind."
            ),
            "",
        ]
        cols = sorted({r["bytes"] for r in auto["results"]})
        rows = sorted({r["ranks"] for r in auto["results"]})
        lines.append("| ranks | " + " | ".join(fmt_size(c) for c in cols) + " |")
        lines.append("|---" * (len(cols) + 1) + "|")
        cell = {(r["ranks"], r["bytes"]): r for r in auto["results"]}
        for p in rows:
            out = []
            for b in cols:
                r = cell.get((p, b))
                if r is None or "error" in r or (p, b) not in best:
                    out.append("-")
                    continue
                balg, bt = best[(p, b)]
                ratio = r["t_max_us"] / bt if bt > 0 else 1.0
                txt = f"{r['alg']} {fmt_us(r['t_max_us'])} {ratio:.2f}"
                if balg != r["alg"] and ratio > 1.0005:
                    txt += f" ({balg})"
                if ratio > 1.05:
                    txt = f"**{txt}**"
                    behind.append((op, p, b, r["alg"], balg, ratio))
                out.append(txt)
            lines.append(f"| {p} | " + " | ".join(out) + " |")
        if refused:
            lines += [
                "",
                "Not simulated (refused: too large, or beyond int counts): "
                + ", ".join(f"{a} at {p}" for a, p in refused)
                + ".",
            ]
        with open(os.path.join(args.out, f"{op}{args.tag}.md"), "w") as f:
            f.write("\n".join(lines) + "\n")
        print("\n".join(lines) + "\n")
    print(f"# points more than 5 % behind the best: {len(behind)}")
    for op, p, b, a, ba, ratio in behind:
        print(f"#   {op} {p} ranks {fmt_size(b)}: {a} is {ratio:.2f}x {ba}")


if __name__ == "__main__":
    main()
