#!/usr/bin/env python3
"""Checks nbcx-loggp (tools/loggp): its JSON and the consistency of the
parameters it derives. Standard library only (the C tests install no
Python packages).

  check_loggp.py run --json F [--as intra|inter] [--tolerance T]
                     [--attempts N] [--no-model] -- CMD...
      run CMD (an nbcx-loggp command with --raw writing F), expect exit 0;
      F must be JSON of format nbcx-loggp/1 with every key, every value
      finite and > 0 (nbcx's engine: start_cost > 0, node_cost and
      message_cost >= 0, as differences of medians may come to nothing;
      with an intra block intra_cpu_share from 0 to 1); and the sizes the fit did not see (the "held" rows
      of the --raw table) must be predicted by the LogGP model with the
      parameters of F within T (relative, default 0.4):
        PRTT(n,0,s) = 2 (L + 2o + (s-1) G) + (n-1) (g + (s-1) G)
      A run that misses is repeated, up to --attempts times (default 3):
      load on the machine can disturb one run as a whole (seen: MPICH, 2
      of 5 runs 3x slower in the middle sizes at a load of 5.6 on 2
      cores); a wrong derivation misses in every attempt. An exit status
      of 1 (a parameter not > 0: nbcx-loggp writes nothing) is retried
      too. --no-model checks the JSON only.
  check_loggp.py merge --json F --merged M -- CMD...
      CMD wrote M with --as inter --merge F: M must hold F's intra block,
      cores_per_node, per-byte and engine costs unchanged, and a valid
      inter block. An exit status of 1 is retried, as for run.
  check_loggp.py badargs -- CMD...   expect exit 2, exactly one line on
      stderr starting with "nbcx-loggp:", nothing on stdout
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, NoReturn

BLOCK_KEYS = ("L", "o", "g", "G")
TOP_KEYS = (
    "format",
    "source",
    "cores_per_node",
    "copy_per_byte",
    "reduce_per_byte",
    "start_cost",
    "node_cost",
    "message_cost",
    "cache_bytes",
    "copy_per_byte_cached",
    "reduce_per_byte_cached",
)


def fail(msg: str) -> NoReturn:
    print(f"check_loggp: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def positive(name: str, v: Any, zero: bool = False) -> float:
    """v as a float: finite and > 0 (>= 0 with zero)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        fail(f"{name} is not a number: {v!r}")
    x = float(v)
    if not math.isfinite(x) or x < 0 or (x == 0 and not zero):
        fail(f"{name} = {x!r} is not finite and {'>=' if zero else '>'} 0")
    return x


def load(path: Path, blocks: tuple[str, ...]) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        fail(f"{path}: not JSON: {e}")
    if not isinstance(doc, dict):
        fail(f"{path}: not a JSON object")
    for k in TOP_KEYS:
        if k not in doc:
            fail(f"{path}: no key {k!r}")
    if doc["format"] != "nbcx-loggp/1":
        fail(f"{path}: format {doc['format']!r}")
    if not isinstance(doc["source"], str) or not doc["source"].startswith(
        ("nbcx-loggp ", "intra: nbcx-loggp ", "inter: nbcx-loggp ")
    ):
        fail(f"{path}: source {doc['source']!r}")
    if not isinstance(doc["cores_per_node"], int) or doc["cores_per_node"] < 1:
        fail(f"{path}: cores_per_node {doc['cores_per_node']!r}")
    positive("copy_per_byte", doc["copy_per_byte"])
    positive("reduce_per_byte", doc["reduce_per_byte"])
    positive("start_cost", doc["start_cost"])
    positive("node_cost", doc["node_cost"], zero=True)
    positive("message_cost", doc["message_cost"], zero=True)
    for k in ("cache_bytes", "copy_per_byte_cached", "reduce_per_byte_cached"):
        positive(k, doc[k])
    if "intra" in blocks:
        share = positive("intra_cpu_share", doc.get("intra_cpu_share"), zero=True)
        if share > 1:
            fail(f"{path}: intra_cpu_share {share} is above 1")
    for b in blocks:
        blk = doc.get(b)
        if not isinstance(blk, dict):
            fail(f"{path}: no block {b!r}")
        for k in BLOCK_KEYS:
            if k not in blk:
                fail(f"{path}: {b} has no key {k!r}")
            positive(f"{b}.{k}", blk[k])
    return doc


def run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)


def held_out_errors(stderr: str, blk: dict[str, Any]) -> list[tuple[int, float, float]]:
    """(size, measured, model) of the held-out rows of the --raw table."""
    m = re.search(r"^# nbcx-loggp raw: n=(\d+)", stderr, re.MULTILINE)
    if not m:
        fail("no --raw header on stderr")
    n = int(m.group(1))
    L, o, g, G = (float(blk[k]) for k in BLOCK_KEYS)
    rows = []
    for line in stderr.splitlines():
        f = line.split()
        if len(f) < 5 or f[0] != "prtt" or f[2] != "1":
            continue
        s, measured = int(f[1]), float(f[4])
        # LogGP: (1) and (2) of tools/loggp/nbcx-loggp.c, from the JSON.
        model = 2 * (L + 2 * o + (s - 1) * G) + (n - 1) * (g + (s - 1) * G)
        rows.append((s, measured, model))
    if not rows:
        fail("no held-out sizes in the --raw table")
    return rows


def cmd_run(args: argparse.Namespace) -> None:
    for attempt in range(1, args.attempts + 1):
        p = run(args.cmd)
        sys.stderr.write(p.stderr)
        if p.returncode == 1 and attempt < args.attempts:
            # A parameter came out not > 0 (load): nbcx-loggp refused.
            print(f"attempt {attempt}: exit status 1, again")
            continue
        if p.returncode != 0:
            fail(f"exit status {p.returncode}")
        doc = load(Path(args.json), (args.as_,))
        if args.no_model:
            print("check_loggp: OK (JSON only, --no-model)")
            return
        worst = 0.0
        rows = held_out_errors(p.stderr, doc[args.as_])
        for s, measured, model in rows:
            err = (model - measured) / measured
            worst = max(worst, abs(err))
            print(
                f"attempt {attempt}: held-out size {s}: PRTT(n,0,s) measured "
                f"{measured:.3f} us, model {model:.3f} us, error {err:+.1%} "
                f"(tolerance {args.tolerance:.0%})"
            )
        if worst <= args.tolerance:
            print(f"check_loggp: OK ({len(rows)} held-out sizes, attempt {attempt})")
            return
    fail(
        f"the model missed a held-out size by more than {args.tolerance:.0%} "
        f"in all {args.attempts} attempts"
    )


def cmd_merge(args: argparse.Namespace) -> None:
    for attempt in range(1, args.attempts + 1):
        p = run(args.cmd)
        sys.stderr.write(p.stderr)
        if p.returncode != 1 or attempt == args.attempts:
            break
        # A parameter came out not > 0 (load): nbcx-loggp refused, as in
        # cmd_run (seen once in CI with MPICH: G = -0.0001 us/B).
        print(f"attempt {attempt}: exit status 1, again")
    if p.returncode != 0:
        fail(f"exit status {p.returncode}")
    base = load(Path(args.json), ("intra",))
    merged = load(Path(args.merged), ("intra", "inter"))
    kept = [k for k in TOP_KEYS if k not in ("format", "source")]
    for k in (*kept, "intra"):
        if merged[k] != base[k]:
            fail(f"merge changed {k}: {base[k]!r} -> {merged[k]!r}")
    if base["source"] not in merged["source"]:
        fail("merge dropped the first run's source")
    print("check_loggp: OK (merged)")


def cmd_badargs(args: argparse.Namespace) -> None:
    p = run(args.cmd)
    lines = p.stderr.splitlines()
    if p.returncode != 2:
        fail(f"exit status {p.returncode}, expected 2; stderr: {p.stderr!r}")
    if len(lines) != 1 or not lines[0].startswith("nbcx-loggp:"):
        fail(f"expected one 'nbcx-loggp:' line on stderr, got {lines!r}")
    if p.stdout:
        fail(f"unexpected stdout {p.stdout!r}")
    print(f"check_loggp: OK ({lines[0]})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run")
    r.add_argument("--json", required=True)
    r.add_argument("--as", dest="as_", choices=("intra", "inter"), default="intra")
    r.add_argument("--tolerance", type=float, default=0.4)
    r.add_argument("--attempts", type=int, default=3)
    r.add_argument("--no-model", action="store_true")
    r.add_argument("cmd", nargs="+")
    m = sub.add_parser("merge")
    m.add_argument("--json", required=True)
    m.add_argument("--merged", required=True)
    m.add_argument("--attempts", type=int, default=3)
    m.add_argument("cmd", nargs="+")
    b = sub.add_parser("badargs")
    b.add_argument("cmd", nargs="+")
    args = ap.parse_args()
    {"run": cmd_run, "merge": cmd_merge, "badargs": cmd_badargs}[args.what](args)


if __name__ == "__main__":
    main()
