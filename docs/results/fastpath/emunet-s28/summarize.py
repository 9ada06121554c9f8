#!/usr/bin/env python3
"""Medians of ovlcost's lines (one file per run): python3 summarize.py FILE..."""
import re
import statistics as st
import sys

for path in sys.argv[1:]:
    rows: dict[str, list[float]] = {}
    tail = ""
    for line in open(path):
        m = re.match(r"rank (\d) rep +\d+ pure ([\d.]+) alone ([\d.]+) \| ovl start ([\d.]+) "
                     r"loop ([\d.]+) wait ([\d.]+) total ([\d.]+) \| self ([\d.]+) others ([\d.]+)", line)
        if m:
            for k, v in zip(("pure", "alone", "start", "loop", "wait", "total", "self", "others"),
                            m.groups()[1:]):
                rows.setdefault(k, []).append(float(v))
        elif line.startswith("irq+softirq"):
            tail = line.strip()
    med = {k: st.median(v) for k, v in rows.items()}
    # overlap as nbcx-bench defines it, from the medians: (pure + cpu - ovl) / min(pure, cpu)
    ov = (med["pure"] + med["alone"] - med["total"]) / min(med["pure"], med["alone"])
    extra = med["self"] - med["start"] - med["alone"]
    print(f"{path}: n={len(rows['pure'])} (both ranks) medians ms: pure {med['pure']:.2f} "
          f"loop alone {med['alone']:.2f} | ovl: start {med['start']:.2f} loop {med['loop']:.2f} "
          f"wait {med['wait']:.2f} total {med['total']:.2f} (overlap {100 * max(0, min(1, ov)):.0f} %) | "
          f"computing thread's own CPU {med['self']:.2f} (beyond start + loop alone: {extra:+.2f}), "
          f"other threads {med['others']:.2f}\n    {tail}")
