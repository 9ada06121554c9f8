# The events around a few repetitions (window.py's input): python3 window_dump.py DUMP TXT FIRST LAST
import bisect
import collections
import re
import sys

dump, script = sys.argv[1], sys.argv[2]
reps = collections.defaultdict(list)
for line in open(dump):
    k, r, t0, t1 = map(int, line.split())
    reps[k].append((t0, t1))
ev = []
for line in open(script):
    m = re.match(r"\s*(\d+)\s+(?:\[\d+\]\s+)?(\d+)\.(\d+):\s+(\S+):\s*(.*)", line)
    if not m:
        continue
    t = int(m.group(2)) * 10**9 + int(m.group(3).ljust(9, "0")[:9])
    ev.append((t, int(m.group(1)), m.group(4), m.group(5)))
ev.sort()
ts = [e[0] for e in ev]
c = collections.Counter()
for k in list(reps)[int(sys.argv[3]) : int(sys.argv[4])]:
    v = reps[k]
    a = min(x[0] for x in v)
    b = max(x[0] for x in v)
    e = max(x[1] for x in v)
    print("rep", k, "t0s", [x[0] - a for x in v], "t1s", [x[1] - a for x in v])
    for t, tid, name, rest in ev[
        bisect.bisect_left(ts, a - 30000) : bisect.bisect_right(ts, e + 2000)
    ]:
        print(
            "  %+8d %s %6d %-28s %s"
            % (t - a, "*" if a <= t <= e else " ", tid, name, rest[:150])
        )
