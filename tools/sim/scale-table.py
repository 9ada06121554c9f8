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

--reference mpich,openmpi-libnbc compares instead nbcx's automatic choice
with the peers' (nbcx-sim --reference: the algorithm each peer's
nonblocking collective chooses by default, simulated as the nbcx algorithm
with its schedule): OP-reference.json per collective, and reference.md,
one grid per collective of peer time / nbcx time (above 1: nbcx ahead),
a summary and the points where nbcx is more than 5 % behind.

--tuning FILE puts a selection table (NBCX_TUNING) in force for the
automatic choice, before the built-in one: e.g. one made for the
--params machine by tools/sim/gen-builtin-tuning --params.
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


def peer_short(peer: str) -> str:
    return "Open MPI libnbc" if peer == "openmpi-libnbc" else "MPICH"


def peer_label(x: dict[str, Any], op: str) -> str:
    """The peer's algorithm, and the nbcx one simulated when it differs."""
    sim_op = x.get("simulated_op", op)
    name = x["alg"] if sim_op == op else f"{sim_op} {x['alg']}"
    txt = x["peer_alg"] if name == x["peer_alg"] else f"{x['peer_alg']} (as {name})"
    if x.get("segsize"):
        txt += f", {x['segsize'] // 1024} KiB fragments"
    return txt


def reference(args: argparse.Namespace, sim: str, common: list[str]) -> None:
    """nbcx's automatic choice against the peers' choices."""
    peers = args.reference.split(",")
    out = [
        "# nbcx's automatic choice against MPICH's and Open MPI's (simulated)",
        "",
        "Made by `tools/sim/scale-table.py " + " ".join(args.argv) + "`: "
        "for every collective, `nbcx-sim --alg auto --reference "
        + args.reference
        + "` (docs/sim.md). Each cell: the peer's time over nbcx's "
        "(above 1: nbcx ahead), MPICH first; `n/m`: the peer's algorithm is "
        "not modelled (nbcx has none like it: named below); `-`: not "
        "simulated (buffers beyond nbcx's int counts, or too large); "
        "**bold**: nbcx more than 5 % behind that peer. The peer's "
        "algorithm is in the JSON beside (OP-reference.json: `alg`, "
        "`peer_alg`, `match`: `same` schedule, or a `variant` with the "
        "same rounds and bytes).",
        "",
    ]
    intro = len(out)
    summary: list[str] = []
    behind: list[str] = []
    unmodelled: dict[tuple[str, str], set[str]] = {}
    for op in args.ops.split(","):
        sizes = ["8"] if op == "barrier" else args.sizes.split(",")
        saved = os.path.join(args.out, f"{op}-reference{args.tag}.json")
        if args.reuse and os.path.exists(saved):
            with open(saved) as f:
                doc: dict[str, Any] = json.load(f)
            if args.rerun_auto:  # the peers' rows kept, auto's simulated again
                fresh = run_json(
                    [sim, "--op", op, "--sizes", ",".join(sizes), "--alg", "auto"]
                    + common
                )
                new = {(r["ranks"], r["bytes"]): r for r in fresh["results"]}
                doc["results"] = [
                    r if "reference" in r else new.pop((r["ranks"], r["bytes"]), r)
                    for r in doc["results"]
                ] + list(new.values())
                with open(saved, "w") as f:
                    json.dump(doc, f, indent=0)
        else:
            doc = run_json(
                [sim, "--op", op, "--sizes", ",".join(sizes), "--alg", "auto"]
                + ["--reference", args.reference]
                + common
            )
            with open(saved, "w") as f:
                json.dump(doc, f, indent=0)
        auto: dict[tuple[int, int], dict[str, Any]] = {}
        ref: dict[tuple[str, int, int], dict[str, Any]] = {}
        for r in doc["results"]:
            key = (r["ranks"], r["bytes"])
            if "reference" in r:
                ref[(r["reference"], *key)] = r
            else:
                auto[key] = r
        cols = sorted({b for _, b in auto})
        rows = sorted({p for p, _ in auto})
        out += [f"## {op}", ""]
        out.append("| ranks | " + " | ".join(fmt_size(c) for c in cols) + " |")
        out.append("|---" * (len(cols) + 1) + "|")
        stats = {
            peer: [0, 0, 0, 0, 0] for peer in peers
        }  # ahead, within, behind, n/m, -
        for p in rows:
            cells = []
            for b in cols:
                a = auto.get((p, b))
                parts = []
                bold = False
                for peer in peers:
                    x = ref.get((peer, p, b))
                    st = stats[peer]
                    if x is None or a is None or "error" in a:
                        parts.append("-")
                        st[4] += 1
                    elif x.get("match") == "none":
                        parts.append("n/m")
                        st[3] += 1
                        unmodelled.setdefault((op, peer), set()).add(x["peer_alg"])
                    elif "error" in x:
                        parts.append("-")
                        st[4] += 1
                    else:
                        ratio = x["t_max_us"] / a["t_max_us"]
                        parts.append(f"{ratio:.2f}")
                        if ratio < 0.95:
                            bold = True
                            st[2] += 1
                            behind.append(
                                f"| {op} | {p} | {fmt_size(b)} | {peer_short(peer)} | "
                                f"{a['alg']} {fmt_us(a['t_max_us'])} | "
                                f"{peer_label(x, op)} {fmt_us(x['t_max_us'])} | "
                                f"{ratio:.2f} |"
                            )
                        elif ratio > 1.05:
                            st[0] += 1
                        else:
                            st[1] += 1
                txt = " / ".join(parts)
                cells.append(f"**{txt}**" if bold else txt)
            out.append(f"| {p} | " + " | ".join(cells) + " |")
        out.append("")
        for peer in peers:
            st = stats[peer]
            summary.append(
                f"| {op} | {peer_short(peer)} | {st[0]} | {st[1]} | {st[2]} | {st[3]} | {st[4]} |"
            )
    head = [
        "## Summary",
        "",
        (
            "Points per collective and peer: nbcx more than 5 % ahead, within "
            "5 %, more than 5 % behind; the peer's algorithm not modelled; not "
            "simulated."
        ),
        "",
        "| op | peer | nbcx ahead | within 5 % | nbcx behind | n/m | - |",
        "|---|---|---|---|---|---|---|",
        *summary,
        "",
        "Not modelled (nbcx has no such algorithm): "
        + (
            "; ".join(
                f"{op}: {peer_short(peer)}'s {', '.join(sorted(v))}"
                for (op, peer), v in sorted(unmodelled.items())
            )
            or "none"
        )
        + ".",
        "",
        "Where nbcx is more than 5 % behind:",
        "",
        "| op | ranks | size | peer | nbcx auto | peer's choice | peer / nbcx |",
        "|---|---|---|---|---|---|---|",
        *(behind or ["| none | | | | | | |"]),
        "",
    ]
    out[intro:intro] = head
    with open(os.path.join(args.out, f"reference{args.tag}.md"), "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--ops", required=True)
    ap.add_argument("--ranks", required=True)
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--ranks-per-node", default="2")
    ap.add_argument("--params", default=None)
    ap.add_argument(
        "--tuning",
        default=None,
        help="a selection table for the automatic choice (NBCX_TUNING, "
        "e.g. one tools/sim/gen-builtin-tuning --params wrote), in force "
        "in every nbcx-sim run",
    )
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", default="", help="suffix of the file names")
    ap.add_argument("--reuse", action="store_true", help="read OP.json when it exists")
    ap.add_argument(
        "--rerun-auto",
        action="store_true",
        help="with --reuse: simulate the automatic choice again (after a change "
        "of the choice; every algorithm's times are read from OP.json, and "
        "with --reference the peers' from OP-reference.json)",
    )
    ap.add_argument(
        "--extra-algs",
        default="",
        help="more algorithm names simulated beside --alg all, e.g. the "
        "k-nomial radices knomial3,knomial8 (for the ops that have them: "
        "bcast, reduce, gather, scatter, barrier)",
    )
    ap.add_argument(
        "--reference",
        default="",
        help="compare auto with these peers' choices instead: mpich,openmpi-libnbc",
    )
    args = ap.parse_args()
    args.argv = [a for a in sys.argv[1:] if a not in ("--reuse", "--rerun-auto")]

    sim = os.path.join(args.build, "tools/sim/nbcx-sim")
    if args.tuning:  # nbcx-sim's automatic choice reads it (coll/select.c)
        if not os.path.isfile(args.tuning):
            sys.exit(f"--tuning {args.tuning}: no such file")
        os.environ["NBCX_TUNING"] = os.path.abspath(args.tuning)
        # read by nbcx-sim before anything else is reused or simulated: a
        # bad table is an error here, not rows of "builder failed"
        probe = [sim, "--op", "barrier", "--ranks", "2", "--size", "8"]
        res = subprocess.run(probe, check=False, capture_output=True, text=True)
        if res.returncode != 0:
            sys.exit(
                f"--tuning {args.tuning}: not a usable table:\n{res.stderr.strip()}"
            )
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
    if args.reference:
        reference(args, sim, common)
        return
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
            if args.rerun_auto or have != {int(x) for x in args.ranks.split(",")}:
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
        if args.tuning:
            lines += [f"Auto with `NBCX_TUNING={args.tuning}` (--tuning).", ""]
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
