"""What nbcx-transform converted in the apps' kernels (apps/, issue 34's "overlap
on real codes"), from its JSON reports.

    python3 apps_stats.py DIR

DIR holds ``<kernel>.json`` for cg, life, fft3d, compress and md (the tool's
``--report-format json`` on ``<kernel>_blocking.c``; the commands are in
docs/results/apps/transform/README.md).  Only run_transformed() counts (the
kernel's blocking code path; run(), the hand-written variants, is compiled in
another configuration of the file and analysed too).  Prints per kernel the
calls converted (persistent, start-then-wait) and the statements of overlap
of each converted call in a loop (its latest wait), then the values and
median over all kernels, with and without the start-then-wait calls (converted
only to keep matching, with nothing to gain).

Beside each overlap, its bound (the report's ``bound``: the statements the code
allows, to the first statement that touches the call's buffers, as the tool's
analysis sees them, passing what the placement cannot see through or cross; see
``FileTransform.bound``): the median overlap over the converted calls in loops
whose bound is at least 5 ("where the code allows it"), and every call of
run_transformed() whose overlap (0 for a call left blocking) is below its bound,
with what stopped its wait.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

KERNELS = ("cg", "life", "fft3d", "compress", "md")


ALLOWS = 5  # issue 34's goal: a median of 5 statements where the code allows it


def _overlap(r: dict[str, Any]) -> int:
    """The statements between the call and its latest wait (0: left blocking)."""
    return max((int(w["overlap"]) for w in r.get("waits", [])), default=0)


def _stops(r: dict[str, Any]) -> str:
    if r["action"] == "blocking":
        return "(left blocking) " + str(r.get("reason", ""))
    return "; ".join(sorted({str(w["stopped_by"]) for w in r.get("waits", [])}))


def _stw(r: dict[str, Any]) -> bool:
    return any("start-then-wait" in n for n in r.get("notes", []))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    d = Path(argv[0])
    every: list[int] = []
    gaining: list[int] = []
    allowed: list[int] = []  # converted, in a loop, bound >= ALLOWS
    bounds: list[int] = []
    gaps: list[str] = []
    for k in KERNELS:
        recs = json.loads((d / f"{k}.json").read_text())["collectives"]
        recs = [r for r in recs if r["function"] == "run_transformed"]
        conv = [r for r in recs if r["action"] in ("nonblocking", "persistent")]
        vals = []
        for r in conv:
            if r.get("in_loop"):
                v = _overlap(r)
                vals.append(v)
                every.append(v)
                if not _stw(r):
                    gaining.append(v)
                b = int(r.get("bound", -1))
                bounds.append(b)
                if b >= ALLOWS:
                    allowed.append(v)
        for r in recs:
            b = int(r.get("bound", -1))
            if _overlap(r) < b:
                gaps.append(
                    f"{k}:{r['line']} {r['call']}{' (in a loop)' * r['in_loop']}: "
                    f"{_overlap(r)} of {b}, stopped by {_stops(r)}"
                    + "; ".join(["", *r.get("bound_ignores", [])])
                )
        pers = sum(r["action"] == "persistent" for r in conv)
        stw = sum(_stw(r) for r in conv)
        print(
            f"{k}: {len(conv)} of {len(recs)} converted ({pers} persistent, "
            f"{stw} start-then-wait); in loops: {sorted(vals)}"
        )
    for what, vals in (
        ("all converted", every),
        ("without start-then-wait", gaining),
        (f"converted with bound >= {ALLOWS}", allowed),
    ):
        med = statistics.median(vals) if vals else 0
        print(f"in-loop overlap, {what}: median {med}, values {sorted(vals)}")
    med = statistics.median(bounds) if bounds else 0
    print(f"in-loop bound, all converted: median {med}, values {sorted(bounds)}")
    print(f"calls below their bound: {len(gaps)}")
    for g in gaps:
        print("  " + g)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
