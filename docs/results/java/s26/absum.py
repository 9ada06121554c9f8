# A/B summary of ab.sh's runs: per round, Java/C nbc ratio of A (the park barrier of
# sessions 23-25) and B (the pthread barrier), each paired with that round's C run,
# and B/A paired within the round. Medians over rounds, (min-max).
#   python3 docs/results/java/s26/absum.py DIR [A-label B-label]
import collections
import glob
import json
import re
import statistics
import sys

d = sys.argv[1]
la, lb = (
    (sys.argv[2], sys.argv[3])
    if len(sys.argv) > 3
    else ("park barrier", "pthread barrier")
)
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(d + "/c-*-*.json")):
    k, r = re.search(r"c-(\d+)-(\d+)\.json", f).groups()
    c = {
        (x["op"], x["bytes"]): x["nbcx"]["t_pure"]["median"]
        for x in json.load(open(f))["results"]
    }
    for v in "ab":
        try:
            j = json.load(open(f"{d}/{v}-{k}-{r}.json"))
        except Exception:
            continue
        for x in j["results"]:
            key = (x["op"], int(r), x["bytes"])
            rows[key]["C"].append(c[(x["op"], x["bytes"])] * 1e6)
            rows[key][v].append(x["t_pure"] * 1e6)
            rows[key][v + "/C"].append(x["t_pure"] / c[(x["op"], x["bytes"])])
            if v == "b" and len(rows[key]["a"]) == len(rows[key]["b"]):
                rows[key]["b/a"].append(rows[key]["b"][-1] / rows[key]["a"][-1])


def m(v):
    return statistics.median(v) if v else float("nan")


print(
    f"| op | ranks | size | C nbc µs | Java A ({la}) µs | Java B ({lb}) µs | A/C median (range) | B/C median (range) | B/A median (range) |"
)
print("|---|---|---|---:|---:|---:|---|---|---|")
faster = 0
over = collections.Counter()
n = collections.Counter()
for key in sorted(rows):
    op, r, b = key
    R = rows[key]
    goal = 1.2 if b <= 128 * 1024 else 1.05
    for v in "ab":
        if R[v + "/C"]:
            n[v] += 1
            over[v] += m(R[v + "/C"]) > goal
    size = f"{b // 1024} KiB" if b < 1 << 20 else f"{b >> 20} MiB"

    def rr(v):
        x = R[v]
        return f"{m(x):.2f} ({min(x):.2f}-{max(x):.2f})" if x else "-"

    faster += m(R["b/a"]) < 1
    print(
        f"| {op} | {r} | {size} | {m(R['C']):.1f} | {m(R['a']):.1f} | {m(R['b']):.1f} | {rr('a/C')} | {rr('b/C')} | {rr('b/a')} |"
    )
print(f"\nB faster than A (median B/A below 1) at {faster} of {len(rows)} points")
print(
    f"rounds: {max(len(v['C']) for v in rows.values()) // 2 if rows else 0}; points over the goal (median ratio): A {over['a']} of {n['a']}, B {over['b']} of {n['b']}"
)
