# Summary of ab-large.sh's runs: per point, C's nbc median and each binding's
# Java/C (paired with that round's C run), median over rounds (min-max).
#   python3 docs/results/java/s26/abtri.py DIR
import collections
import glob
import json
import re
import statistics
import sys

d = sys.argv[1]
vs = ("old", "page", "new")
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(d + "/c-*-*.json")):
    k, r = re.search(r"c-(\d+)-(\d+)\.json", f).groups()
    c = {
        (x["op"], x["bytes"]): x["nbcx"]["t_pure"]["median"]
        for x in json.load(open(f))["results"]
    }
    for v in vs:
        try:
            j = json.load(open(f"{d}/{v}-{k}-{r}.json"))
        except Exception:
            continue
        for x in j["results"]:
            key = (x["op"], int(r), x["bytes"])
            cc = c[(x["op"], x["bytes"])]
            if v == "old":
                rows[key]["C"].append(cc * 1e6)
            rows[key][v].append(x["t_pure"] / cc)
print("| op | ranks | size | C nbc µs | old/C | page/C | new/C |")
print("|---|---|---|---:|---|---|---|")


def rr(x):
    return f"{statistics.median(x):.2f} ({min(x):.2f}-{max(x):.2f})" if x else "-"


for key in sorted(rows):
    op, r, b = key
    R = rows[key]
    size = f"{b >> 10} KiB" if b < 1 << 20 else f"{b >> 20} MiB"
    print(
        f"| {op} | {r} | {size} | {statistics.median(R['C']):.1f} | {rr(R['old'])} | {rr(R['page'])} | {rr(R['new'])} |"
    )
