#!/usr/bin/env bash
# ceiling.sh - how much a bare TCP stream on the emulated link slows a
# computation on this machine, with no MPI and no nbcx (issue 15: the
# overlap ceiling on the emulated network).
#
# Two copies of nbcx-bench's synthetic computation (the same
# multiply-add loop on 16 KiB of doubles), pinned to cores 0 and 1 as
# the two ranks are, run for a fixed amount of work:
#   alone    nothing else runs;
#   stream   meanwhile, inside the emulated network (tools/emunet, 1 Gbit/s
#            tbf on loopback), one process streams TCP to another at the
#            link's rate with blocking sendall/recv_into: the kernel
#            does all the work and the processes sleep in between, as an
#            ideal progress engine would.
# The ratio stream/alone is the computation's slowdown from the link's
# own CPU work (TCP, loopback, tbf, their interrupts); an overlapped
# collective on the same cores cannot do better than 1 / ratio.
#
# Usage: ceiling.sh [REPS]   (root: network namespaces)
set -euo pipefail
reps=${1:-7}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/compute.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
double a[2048];
int main(int argc, char **argv)
{
    long units = atol(argv[1]);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t at = 0;
    for (long u = 0; u < units; u++) {
        for (int i = 0; i < 256; i++)
            a[at + i] = a[at + i] * 0.9999999 + 1e-7;
        at = (at + 256) % 2048;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%.6f %g\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec), a[7]);
    return 0;
}
C
cc -O2 -o "$tmp/compute" "$tmp/compute.c"
cat > "$tmp/stream.py" <<'PY'
import socket, sys, threading
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
port = srv.getsockname()[1]
def recv() -> None:
    c, _ = srv.accept(); buf = bytearray(1 << 20); v = memoryview(buf)
    while c.recv_into(v): pass
threading.Thread(target=recv, daemon=True).start()
s = socket.create_connection(("127.0.0.1", port)); data = bytes(1 << 20)
open(sys.argv[1], "w").close()  # streaming
while True: s.sendall(data)
PY
units=${UNITS:-4000000}
pair() { # both cores at once; prints the slower one's seconds
    taskset -c 0 "$tmp/compute" "$units" > "$tmp/c0" & local p0=$!
    taskset -c 1 "$tmp/compute" "$units" > "$tmp/c1" & local p1=$!
    wait "$p0" "$p1"
    awk '{print $1}' "$tmp/c0" "$tmp/c1" | sort -g | tail -1
}
cat > "$tmp/inside.sh" <<SH
set -euo pipefail
$(declare -f pair)
tmp=$tmp units=$units
python3 $tmp/stream.py $tmp/go & sp=\$!
while [ ! -e $tmp/go ]; do sleep 0.01; done; sleep 0.2
for i in \$(seq $reps); do pair; done > $tmp/stream.txt
kill \$sp
SH
for i in $(seq "$reps"); do pair; done > "$tmp/alone.txt"
"$root/tools/emunet" -- bash "$tmp/inside.sh"
for i in $(seq "$reps"); do pair; done >> "$tmp/alone.txt"
python3 - "$tmp/alone.txt" "$tmp/stream.txt" <<'PY'
import statistics, sys
alone = [float(x) for x in open(sys.argv[1])]
stream = [float(x) for x in open(sys.argv[2])]
a, s = statistics.median(alone), statistics.median(stream)
print(f"computation alone: median {a*1e3:.1f} ms of {len(alone)} "
      f"(before and after); with a 1 Gbit/s TCP stream: median "
      f"{s*1e3:.1f} ms of {len(stream)}")
print(f"slowdown {s/a:.3f}: an overlapped collective on these cores "
      f"overlaps at most ~{100*(2 - s/a):.0f} % (compute as long as "
      f"the transfer)")
PY
