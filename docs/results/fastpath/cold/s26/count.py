"""Counts the points at or under 1.05x native in bench-compare tables:
python3 count.py openmpi-shm-cold.md mpich-shm-cold.md"""

import re
import sys

for f in sys.argv[1:]:
    with open(f) as fh:
        txt = fh.read()
    cols = None
    op = None
    res = {}
    for line in txt.splitlines():
        if line.startswith("### "):
            op = line[4:].strip()
            continue
        if line.startswith("| size"):
            cols = [c.strip() for c in line.strip("|").split("|")]
            continue
        if line.startswith("|") and cols and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            for i, c in enumerate(cols):
                m = re.search(r"\(([\d.]+)x", cells[i]) if i < len(cells) else None
                if m and c.startswith("nbcx"):
                    res.setdefault(c, []).append((op, cells[0], float(m.group(1))))
    for c, v in res.items():
        ok = sum(1 for x in v if x[2] <= 1.05)
        worst = sorted(v, key=lambda x: -x[2])[:6]
        print(
            f"{f.split('/')[-1]} {c}: {ok}/{len(v)} <=1.05x; worst: "
            + ", ".join(f"{o} {s} {r}x" for o, s, r in worst)
        )
