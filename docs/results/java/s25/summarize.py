"""Medians over the sittings of java/bench/compare's tables (compare-N.txt):
the ratio Java / C of the nbc time at each point, against issue 40's goal
(1.2x below 256 KiB, 1.05x from 256 KiB). Usage: summarize.py [DIR]"""
import re, statistics, sys

DIR = sys.argv[1] if len(sys.argv) > 1 else "."
data = {}
for s in (1, 2, 3):
    sec = None
    for line in open(f"{DIR}/compare-{s}.txt"):
        m = re.match(r"# (\w+), (\d+) ranks", line)
        if m:
            sec = (m.group(1), int(m.group(2))); continue
        f = line.split()
        if sec and f and f[0].isdigit():
            nums = [x for x in f if x != '|']
            size = int(nums[0]); jc_nbc = float(nums[-2]); cn = float(nums[2]); jn = float(nums[6])
            data.setdefault((sec, size), []).append((jc_nbc, cn, jn))
print("| op | ranks | size | C nbc µs (median) | Java nbc µs (median) | Java/C nbc, median (range) | goal |")
print("|---|---|---|---|---|---|---|")
miss = 0
for (sec, size), v in sorted(data.items(), key=lambda kv: (kv[0][0][1], kv[0][0][0], kv[0][1])):
    r = [x[0] for x in v]; med = statistics.median(r)
    goal = 1.2 if size < 262144 else 1.05
    ok = med <= goal
    miss += not ok
    sz = f"{size//1024} KiB" if size < 1<<20 else f"{size>>20} MiB"
    print(f"| {sec[0]} | {sec[1]} | {sz} | {statistics.median(x[1] for x in v):.1f} | {statistics.median(x[2] for x in v):.1f} | {med:.2f} ({min(r):.2f}-{max(r):.2f}) | {'ok' if ok else '**over ' + str(goal) + '**'} |")
print(f"\npoints over the goal: {miss} of {len(data)}", file=sys.stderr)
