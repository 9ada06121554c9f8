import os, re, statistics, sys
# The sittings' compare-1.txt .. compare-5.txt: in the directory given, else
# beside this script (s19).
d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
# Every compare-N.txt there (s19 and s22 have five, s23 three).
names = sorted((f for f in os.listdir(d) if re.fullmatch(r"compare-\d+\.txt", f)),
               key=lambda f: int(re.findall(r"\d+", f)[0]))
runs = [open(os.path.join(d, f)).read() for f in names]
def parse(t):
    out = {}
    sec = None
    for line in t.splitlines():
        m = re.match(r"# (\w+), (\d) ranks", line)
        if m: sec = (m.group(1), int(m.group(2))); continue
        if sec and re.match(r"\s+\d+ \|", line):
            parts = [p.split() for p in line.split("|")]
            size = int(parts[0][0]); c = list(map(float, parts[1])); j = list(map(float, parts[2]))
            out[(sec, size)] = (c[1], j[1])  # nbc times
    return out
ps = [parse(t) for t in runs]
keys = sorted(ps[0], key=lambda k: (k[0][1], k[0][0], k[1]))
print("| op | ranks | size | C nbc median (µs) | Java nbc median (µs) | Java/C of medians | per-sitting ratios min-max | goal |")
print("|---|---|---|---|---|---|---|---|")
ok = {2: [0, 0], 4: [0, 0]}
for k in keys:
    (op, r), size = k
    cs = [p[k][0] for p in ps if k in p]; js = [p[k][1] for p in ps if k in p]
    rat = [b / a for a, b in zip(cs, js)]
    mr = statistics.median(js) / statistics.median(cs)
    goal = 1.2 if size <= 131072 else 1.05
    met = mr <= goal
    ok[r][0] += met; ok[r][1] += 1
    sz = f"{size//1024} KiB" if size < 1048576 else f"{size//1048576} MiB"
    print(f"| {op} | {r} | {sz} | {statistics.median(cs):.1f} | {statistics.median(js):.1f} | {mr:.2f} | {min(rat):.2f}-{max(rat):.2f} | {'met' if met else 'missed'} (≤{goal}) |")
print()
for r in ok: print(f"{r} ranks: goal met at {ok[r][0]} of {ok[r][1]} points")
