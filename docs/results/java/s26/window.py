# Per repetition, the events of the traced process inside the timed window of
# probe.c or Probe.java (DUMP file), split at the last rank's start: "skew"
# from the first start to the last, "op" from there to the last end.
#   DUMP=d perf record -k CLOCK_MONOTONIC -e sched:sched_switch,sched:sched_wakeup,\
#     syscalls:sys_enter_futex,syscalls:sys_enter_sched_yield -o p.data PROGRAM...
#   perf script -i p.data --ns -F tid,time,event,trace > p.txt; python3 window.py d p.txt
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
    tid = int(m.group(1))
    t = int(m.group(2)) * 10**9 + int(m.group(3).ljust(9, "0")[:9])
    name = m.group(4).split(":")[-1]
    rest = m.group(5)
    if name == "sys_enter_futex":
        op = re.search(r"op: (0x[0-9a-f]+)", rest)
        o = int(op.group(1), 16) & 0x7F if op else -1
        name = {
            0: "futex_wait",
            9: "futex_wait",
            1: "futex_wake",
            10: "futex_wake",
        }.get(o, "futex_op%d" % o)
    elif name == "sched_switch":
        st = re.search(r"prev_state=(\S+)", rest)
        name = "switch_" + (
            "sleep"
            if st and st.group(1).startswith("S")
            else "preempt"
            if st and st.group(1).startswith("R")
            else "other"
        )
        if "next_comm=swapper" in rest:
            name += "_toidle"
    ev.append((t, tid, name))
ev.sort()
ts = [e[0] for e in ev]
tot = collections.Counter()
tot_skew = collections.Counter()
n = 0
for k, v in reps.items():
    a = min(x[0] for x in v)
    b = max(x[0] for x in v)
    c = max(x[1] for x in v)
    n += 1
    for t, tid, name in ev[bisect.bisect_left(ts, a) : bisect.bisect_right(ts, c)]:
        (tot_skew if t < b else tot)[name] += 1
print("reps", n)
for name in sorted(set(tot) | set(tot_skew)):
    print(
        "%-24s skew %6.2f  op %6.2f  per rep"
        % (name, tot_skew[name] / n, tot[name] / n)
    )
