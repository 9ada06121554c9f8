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
#            tbf on loopback), one thread streams TCP to another at the
#            link's rate with blocking 1 MiB writes and reads: the kernel
#            does all the work and the threads sleep in between, as an
#            ideal progress engine would.
# The ratio stream/alone is the computation's slowdown from the link's
# own CPU work (TCP, loopback, tbf, their interrupts; the streaming
# threads' own CPU, in system calls, is printed too). It is not a bound
# for a collective (measured: this stream slows the computation more,
# 1.2-1.65x over runs, than nbcx's overlapped transfers do, 1.17-1.40x);
# it shows that moving data on this emulated link costs the two cores a
# fifth or more of their time, whoever drives it.
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
cat > "$tmp/stream.c" <<'C'
/* Streams TCP over loopback from one thread to another with blocking
 * 1 MiB writes and MSG_WAITALL reads: the kernel does the work, the
 * threads sleep. Touches argv[1] once streaming; prints its own CPU
 * seconds when killed (SIGTERM). */
#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
static int lsn;
static void *rx(void *a)
{
    (void)a;
    int c = accept(lsn, NULL, NULL);
    char *b = malloc(1 << 20);
    while (recv(c, b, 1 << 20, MSG_WAITALL) > 0) {}
    return NULL;
}
static void term(int s)
{
    (void)s;
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    printf("%.3f\n", u.ru_utime.tv_sec + u.ru_stime.tv_sec +
           1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec));
    fflush(stdout);
    _exit(0);
}
int main(int argc, char **argv)
{
    (void)argc;
    signal(SIGTERM, term);
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t n = sizeof a;
    lsn = socket(AF_INET, SOCK_STREAM, 0);
    bind(lsn, (struct sockaddr *)&a, sizeof a);
    listen(lsn, 1);
    getsockname(lsn, (struct sockaddr *)&a, &n);
    pthread_t t;
    pthread_create(&t, NULL, rx, NULL);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    connect(s, (struct sockaddr *)&a, sizeof a);
    char *b = calloc(1, 1 << 20);
    fclose(fopen(argv[1], "w"));
    for (;;)
        for (size_t off = 0; off < (1 << 20);) {
            ssize_t k = write(s, b + off, (1 << 20) - off);
            if (k <= 0)
                return 1;
            off += (size_t)k;
        }
}
C
cc -O2 -pthread -o "$tmp/stream" "$tmp/stream.c"
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
$tmp/stream $tmp/go > $tmp/streamcpu & sp=\$!
t0=\$(date +%s.%N)
while [ ! -e $tmp/go ]; do sleep 0.01; done; sleep 0.2
for i in \$(seq $reps); do pair; done > $tmp/stream.txt
kill \$sp; wait \$sp 2>/dev/null
echo \$(date +%s.%N) \$t0 >> $tmp/streamcpu
SH
for i in $(seq "$reps"); do pair; done > "$tmp/alone.txt"
"$root/tools/emunet" -- bash "$tmp/inside.sh"
for i in $(seq "$reps"); do pair; done >> "$tmp/alone.txt"
python3 - "$tmp/alone.txt" "$tmp/stream.txt" "$tmp/streamcpu" <<'PY'
import statistics, sys
alone = [float(x) for x in open(sys.argv[1])]
stream = [float(x) for x in open(sys.argv[2])]
a, s = statistics.median(alone), statistics.median(stream)
print(f"computation alone: median {a*1e3:.1f} ms of {len(alone)} "
      f"(before and after); with a 1 Gbit/s TCP stream: median "
      f"{s*1e3:.1f} ms of {len(stream)}")
lines = open(sys.argv[3]).read().split()
cpu, t1, t0 = lines[0], lines[-2], lines[-1]
cpu_share = float(cpu) / (float(t1) - float(t0) - 0.2)
print(f"the stream's own threads: {100 * cpu_share:.0f} % of a core")
print(f"slowdown {s/a:.3f}")
PY
