#!/usr/bin/env python3
"""paper002.py - paper 002 (Denis et al., split tree on manycore) in simulation.

One manycore node of NPROC cores (64, as the paper's KNL, and 256, an
extrapolation the paper does not have): N application cores run the N
ranks, the other P = NPROC - N cores are shared progress cores of the
node (nbcx-sim --progress-cores P), as in the paper's section 4 (P(N) =
N_proc - N). For each N, the binomial bcast and reduce of 2 MiB (the
paper's buffer) in split mode with S = 0..H, overlapped with the
paper's computation: sized so that on all NPROC cores it lasts as the
blocking collective, C(N) = N / N_proc * T_blocking(N_proc) (eq. 2 as
printed), T_blocking simulated (caller mode, no computation). Prints,
per N, the simulated time for every S, the S the simulation picks, the
S of nbcx's analytic model (nbcx-split-model, the library's
nbcx_split_model) and its time scaled by the simulated time of one
point-to-point transfer; and writes everything as JSON.

    tools/sim/paper002.py --build build/nompi \\
        --params tools/sim/params/paper002.json --json paper002.json
"""

import argparse
import json
import math
import subprocess
import sys
from typing import Any


def run_json(cmd: list[str]) -> dict[str, Any]:
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    doc: dict[str, Any] = json.loads(out.stdout)
    return doc


def height(n: int) -> int:
    return math.ceil(math.log2(n)) if n > 1 else 0


class Tools:
    def __init__(self, build: str, params: str, size: str) -> None:
        self.sim = f"{build}/tools/sim/nbcx-sim"
        self.model = f"{build}/tools/bench/nbcx-split-model"
        self.params = params
        self.size = size

    def sim_run(self, op: str, ranks: int, extra: list[str]) -> list[dict[str, Any]]:
        cmd = [
            self.sim,
            "--op",
            op,
            "--alg",
            "binomial",
            "--size",
            self.size,
            "--ranks",
            str(ranks),
            "--ranks-per-node",
            str(ranks),
            "--params",
            self.params,
            "--json",
        ] + extra
        results: list[dict[str, Any]] = run_json(cmd)["results"]
        return results

    def blocking(self, op: str, ranks: int) -> float:
        """All work on the ranks' own cores, nothing to overlap."""
        t: float = self.sim_run(op, ranks, ["--progress", "caller"])[0]["t_max_us"]
        return t

    def split_sweep(
        self, op: str, n: int, p: int, compute: float
    ) -> tuple[list[float], list[float], int]:
        rows = self.sim_run(
            op,
            n,
            [
                "--progress",
                "split",
                "--split-levels",
                "all",
                "--progress-cores",
                str(p),
                "--compute-us",
                repr(compute),
            ],
        )
        times = [r["t_with_compute_us"] for r in rows]
        alone = [r["t_max_us"] for r in rows]
        best: int = next(r["split_levels"] for r in rows if r["split_best"])
        return times, alone, best

    def model_run(self, n: int, p: int, compute_units: float) -> dict[str, Any]:
        return run_json(
            [
                self.model,
                "--ranks",
                str(n),
                "--app-cores",
                str(n),
                "--progress-cores",
                str(p),
                "--compute",
                repr(compute_units),
            ]
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build/nompi")
    ap.add_argument("--params", default="tools/sim/params/paper002.json")
    ap.add_argument("--size", default="2m")
    ap.add_argument("--nproc", default="64,256", help="cores per node, comma-separated")
    ap.add_argument("--ops", default="bcast,reduce")
    ap.add_argument("--json", help="write all results here")
    ap.add_argument(
        "--plot", metavar="DIR", help="charts: DIR/paper002-NPROC-OP.png (matplotlib)"
    )
    a = ap.parse_args()
    t = Tools(a.build, a.params, a.size)
    doc: dict[str, Any] = {
        "format": "nbcx-paper002/1",
        "params": a.params,
        "size": a.size,
        "nodes": [],
    }
    for nproc in [int(x) for x in a.nproc.split(",")]:
        for op in a.ops.split(","):
            unit = t.blocking(op, 2)  # one point-to-point transfer
            tblock = t.blocking(op, nproc)  # T_blocking(N_proc)
            hp = height(nproc)
            node: dict[str, Any] = {
                "nproc": nproc,
                "op": op,
                "unit_us": unit,
                "t_blocking_nproc_us": tblock,
                "rows": [],
            }
            print(
                f"\n## {op}, {nproc}-core node: unit (one transfer) "
                f"{unit:.0f} us, T_blocking({nproc}) {tblock:.0f} us "
                f"= {tblock / unit:.2f} units (model: H = {hp})"
            )
            print(
                "N\tP\tC_us\tblock+C\tsim t(S=0..H)\tsim S\tmodel S\tmodel t(S) x unit"
            )
            for n in range(nproc // 2, nproc):
                p = nproc - n
                c_us = n / nproc * tblock
                times, alone, sbest = t.split_sweep(op, n, p, c_us)
                m = t.model_run(n, p, n / nproc * hp)
                mtimes = [pt["t_overlapped"] for pt in m["points"]]
                row = {
                    "N": n,
                    "P": p,
                    "compute_us": c_us,
                    "blocking_plus_compute_us": t.blocking(op, n) + c_us,
                    "sim_t_us": times,
                    "sim_alone_us": alone,
                    "sim_best_S": sbest,
                    "model_best_S": m["best_S"],
                    "model_t_units": mtimes,
                }
                node["rows"].append(row)
                print(
                    f"{n}\t{p}\t{c_us:.0f}\t"
                    f"{row['blocking_plus_compute_us']:.0f}\t"
                    + " ".join(f"{x:.0f}" for x in times)
                    + f"\t{sbest}\t{m['best_S']}\t"
                    + " ".join(f"{x * unit:.0f}" for x in mtimes)
                )
                sys.stdout.flush()
            doc["nodes"].append(node)
    summary(doc)
    if a.plot:
        plot(doc, a.plot)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)


def plot(doc: dict[str, Any], outdir: str) -> None:
    """Per node and op, as the paper's Figures 5-6: time against N, a
    line per S (simulated: solid; model x unit: dotted), and computation
    + blocking collective."""
    import os

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(outdir, exist_ok=True)
    for node in doc["nodes"]:
        rows, u = node["rows"], node["unit_us"]
        ns = [r["N"] for r in rows]
        hmax = max(len(r["sim_t_us"]) for r in rows)
        fig, ax = plt.subplots(figsize=(8, 5))
        for S in range(hmax):
            pts = [
                (r["N"], r["sim_t_us"][S] / 1000, r["model_t_units"][S] * u / 1000)
                for r in rows
                if S < len(r["sim_t_us"])
            ]
            (line,) = ax.plot(
                [p[0] for p in pts], [p[1] for p in pts], label=f"S={S} (sim.)"
            )
            ax.plot(
                [p[0] for p in pts], [p[2] for p in pts], ":", color=line.get_color()
            )
        ax.plot(
            ns,
            [r["blocking_plus_compute_us"] / 1000 for r in rows],
            "k--",
            label="comp + blocking",
        )
        best = [r["sim_t_us"][r["sim_best_S"]] / 1000 for r in rows]
        ax.plot(ns, best, "k.", label="sim. best S")
        ax.set_yscale("log")
        ax.set_xlabel(
            f"application cores = ranks N (progress cores {node['nproc']} - N)"
        )
        ax.set_ylabel("comp + comms (ms)")
        ax.set_title(
            f"{node['op']} 2 MiB, split tree, {node['nproc']}-core "
            f"node (dotted: nbcx's model x one transfer)"
        )
        ax.legend(fontsize=7, ncol=2)
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(f"{outdir}/paper002-{node['nproc']}-{node['op']}.png", dpi=90)
        plt.close(fig)


def ranges(rows: list[dict[str, Any]], key: str) -> str:
    """'S: lo-hi' runs of N with the same choice."""
    out: list[str] = []
    start: int | None = None
    for i, r in enumerate(rows):
        if start is None:
            start = i
        last = i + 1 == len(rows) or rows[i + 1][key] != r[key]
        if last:
            lo, hi = rows[start]["N"], r["N"]
            out.append(f"{r[key]}: {lo}" + (f"-{hi}" if hi != lo else ""))
            start = None
    return ", ".join(out)


def summary(doc: dict[str, Any]) -> None:
    """Per node and op: where each S is chosen, and what the model's
    choice costs in the simulation."""
    print("\n## Summary: the S chosen, by N (application cores = ranks)")
    print(
        "| node | op | simulation's S (least S of the fastest) | model's S"
        " | same S | model's S as fast in sim. | sim. time of the model's S"
        " over the best, worst |"
    )
    print("|---|---|---|---|---|---|---|")
    for node in doc["nodes"]:
        rows = node["rows"]
        agree = same = 0
        for r in rows:
            t = r["sim_t_us"]
            same += r["sim_best_S"] == r["model_best_S"]
            agree += t[min(r["model_best_S"], len(t) - 1)] <= t[r["sim_best_S"]] * (
                1 + 1e-6
            )
        worst, at = 0.0, None
        for r in rows:
            t = r["sim_t_us"]
            loss = t[min(r["model_best_S"], len(t) - 1)] / t[r["sim_best_S"]] - 1
            if loss > worst:
                worst, at = loss, r["N"]
        print(
            f"| {node['nproc']} | {node['op']} | {ranges(rows, 'sim_best_S')}"
            f" | {ranges(rows, 'model_best_S')} | {same}/{len(rows)} | "
            f"{agree}/{len(rows)} | "
            f"+{100 * worst:.1f}%" + (f" (N = {at})" if at else "") + " |"
        )


if __name__ == "__main__":
    main()
