"""Durations of the 64 KiB memcpy of the own block in tl.so's timelines
(/tmp/agx/tl.RANK.txt), per variant of agx.c: nbcx (inside
nbcx_iallgather), copy-after (after the isend) or v8 (copy-first-send-r,
after the irecv)."""

import statistics as st
from pathlib import Path

for r in (0, 1):
    lines = [x.split() for x in Path(f"/tmp/agx/tl.{r}.txt").read_text().splitlines()]
    res: dict[str, list[float]] = {}
    innbcx = False
    prev = ""
    lab = ""
    t0 = 0.0
    for t, w, a in lines:
        if w == "nbcx_iallgather>":
            innbcx = True
        if w == "nbcx_iallgather<":
            innbcx = False
        if w == "memcpy>" and a == "65536":
            t0 = float(t)
            lab = "nbcx" if innbcx else ("copy-after" if prev == "isend<" else "v8")
        if w == "memcpy<" and a == "65536":
            res.setdefault(lab, []).append(float(t) - t0)
        if not w.startswith("testsome"):
            prev = w
    print("rank", r, {k: f"{st.median(v[-250:]):.1f}" for k, v in res.items()})
