"""From `strace -f -e trace=futex`: successful FUTEX_WAKE calls, how many
threads each woke, and how many were made by a thread that had itself just
been woken (its previous futex call was a FUTEX_WAIT that returned): a relay,
one more sleeping-thread wake-up in sequence before the last waiter runs."""
import re, sys
pending = {}  # tid -> unfinished call text
last = {}     # tid -> kind of the last finished futex call: 'wait' or 'wake'
calls = relays = woken = 0
for line in open(sys.argv[1]):
    m = re.match(r'(\d+)\s+(.*)$', line.rstrip())
    if not m: continue
    tid, rest = int(m.group(1)), m.group(2)
    if rest.endswith('<unfinished ...>'):
        pending[tid] = rest[:-len('<unfinished ...>')]; continue
    r = re.match(r'<\.\.\. futex resumed>(.*)$', rest)
    if r:
        rest = pending.pop(tid, '') + r.group(1)
    c = re.match(r'futex\([^,]+, (FUTEX_\w+)[^)]*\)\s*=\s*(-?\d+)', rest)
    if not c: continue
    op, ret = c.group(1), int(c.group(2))
    if op.startswith('FUTEX_WAIT'):
        last[tid] = 'wait' if ret == 0 else 'other'
    elif op.startswith('FUTEX_WAKE') and ret > 0:
        calls += 1; woken += ret
        if last.get(tid) == 'wait': relays += 1
        last[tid] = 'wake'
print(f"{sys.argv[1]}: successful wakes {calls}, threads woken {woken} ({woken/max(calls,1):.2f} per call), "
      f"made by a thread just woken (relays) {relays} ({relays/max(calls,1):.0%})")
