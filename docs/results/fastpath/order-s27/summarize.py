"""Ratio nbcx / native (medians of t_pure) per op and size, old and new bench order, 3 rounds each."""

import json
import statistics as st
import sys
from pathlib import Path

d = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
rows: dict[tuple[str, int], dict[str, list[float]]] = {}
for f in sorted(d.glob("*-[0-9].json")):
    variant = f.name.split("-")[0]
    for r in json.loads(f.read_text())["results"]:
        nat = st.median(r["raw"]["native"]["t_pure"])
        nb = st.median(r["raw"]["nbcx"]["t_pure"])
        rows.setdefault((r["op"], r["bytes"]), {}).setdefault(variant, []).append(
            nb / nat
        )
print("| op | bytes | nbcx / native, old order (3 runs) | new order (3 runs) |")
print("|---|---|---|---|")
for (op, b), v in rows.items():
    cells = [" ".join(f"{x:.2f}" for x in v.get(k, [])) for k in ("old", "new")]
    print(f"| {op} | {b} | {cells[0]} | {cells[1]} |")
