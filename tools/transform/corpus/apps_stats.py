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
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

KERNELS = ("cg", "life", "fft3d", "compress", "md")


def _stw(r: dict[str, Any]) -> bool:
    return any("start-then-wait" in n for n in r.get("notes", []))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    d = Path(argv[0])
    every: list[int] = []
    gaining: list[int] = []
    for k in KERNELS:
        recs = json.loads((d / f"{k}.json").read_text())["collectives"]
        recs = [r for r in recs if r["function"] == "run_transformed"]
        conv = [r for r in recs if r["action"] in ("nonblocking", "persistent")]
        vals = []
        for r in conv:
            if r.get("in_loop"):
                v = max((int(w["overlap"]) for w in r.get("waits", [])), default=0)
                vals.append(v)
                every.append(v)
                if not _stw(r):
                    gaining.append(v)
        pers = sum(r["action"] == "persistent" for r in conv)
        stw = sum(_stw(r) for r in conv)
        print(
            f"{k}: {len(conv)} of {len(recs)} converted ({pers} persistent, "
            f"{stw} start-then-wait); in loops: {sorted(vals)}"
        )
    for what, vals in (("all converted", every), ("without start-then-wait", gaining)):
        med = statistics.median(vals) if vals else 0
        print(f"in-loop overlap, {what}: median {med}, values {sorted(vals)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
