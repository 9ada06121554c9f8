"""Per size: C's and Java's nbc medians over the pairs of pairs.sh, and
the median and quartiles of the per-pair ratio Java / C.

    python3 summarize.py jp-bcast.txt jp-scatter.txt"""

import collections
import statistics as st
import sys

for f in sys.argv[1:]:
    d: dict[tuple[int, int], dict[str, float]] = collections.defaultdict(dict)
    with open(f) as fh:
        for line in fh:
            who, pair, size, t = line.split()
            d[(int(size), int(pair))][who] = float(t)
    print(f"# {f}")
    print(
        "| size | C nbc µs, median (range) | Java nbc µs, median (range) | Java / C per pair: median (quartiles) |"
    )
    print("|---|---|---|---|")
    for s in sorted({k[0] for k in d}):
        pairs = [v for k, v in d.items() if k[0] == s and "C" in v and "J" in v]
        c = [p["C"] for p in pairs]
        j = [p["J"] for p in pairs]
        r = [p["J"] / p["C"] for p in pairs]
        q = st.quantiles(r, n=4)
        print(
            f"| {s // 1024} KiB | {st.median(c):.1f} ({min(c):.1f}-{max(c):.1f}) "
            f"| {st.median(j):.1f} ({min(j):.1f}-{max(j):.1f}) "
            f"| {st.median(r):.2f} ({q[0]:.2f}-{q[2]:.2f}) |"
        )
