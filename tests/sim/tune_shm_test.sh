#!/bin/sh
# The committed shared-memory table (docs/results/sim/tune/shm-table.txt,
# docs/results/sim/README.md) against the committed parameter file.
# Usage: tune_shm_test.sh NBCX_TUNE NBCX_SIM NBCX_BENCH SOURCE_DIR
#  1. regenerated with the command of the README, it is the committed
#     table (but for its date line): the table follows from the file;
#  2. every choice without a segment size is nbcx-sim's fastest at that
#     point, all ranks on one node (oversubscribed beyond 2: the
#     file's sched_latency);
#  3. NBCX_TUNING accepts it (nbcx-bench on thread ranks checks every
#     result).
tune="$1" sim="$2" bench="$3" src="$4"
params="$src/tools/sim/params/openmpi-shm.json"
table="$src/docs/results/sim/tune/shm-table.txt"
tmp="${TMPDIR:-/tmp}/nbcx-tune-shm-test.$$"
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
say() { echo "FAILED: $*" >&2; fail=1; }

grep -q '"sched_latency"' "$params" || say "$params has no sched_latency"
(cd "$src" && "$tune" --params tools/sim/params/openmpi-shm.json \
    --ranks-per-node 8 --ops bcast,reduce,allreduce,allgather,alltoall \
    --ranks 2,4,8 --sizes 1k,16k,256k,4m --min-gain 1.6 --out "$tmp/table.txt" --report \
    >"$tmp/report") || say "nbcx-tune exited with $?"
sed 1d "$table" >"$tmp/want"
sed 1d "$tmp/table.txt" >"$tmp/got"
cmp -s "$tmp/want" "$tmp/got" ||
    say "the committed table differs from a regenerated one: $(diff "$tmp/want" "$tmp/got" | head -5)"

n=0
while read -r coll p bytes alg seg t builtin tb gain; do
    case "$coll" in "#"*|"") continue ;; esac
    n=$((n + 1))
    [ "$seg" = 0 ] || continue
    best=$("$sim" --params "$params" --op "$coll" --alg all --ranks "$p" \
           --ranks-per-node 8 --size "$bytes" --progress caller |
           awk '!/^#/ { if (!seen || $6 < t) { t = $6; a = $2; seen = 1 } }
                END { print a, t }')
    tbest=${best#* } best=${best% *}
    # a k-nomial radix other than 4 is not in --alg all: its own time
    case "$alg" in
    knomial[2-8])
        t=$("$sim" --params "$params" --op "$coll" --alg "$alg" \
            --ranks "$p" --ranks-per-node 8 --size "$bytes" \
            --progress caller | awk '!/^#/ { print $6 }')
        awk -v t="$t" -v b="$tbest" 'BEGIN { exit !(t + 0 <= b + 0) }' &&
            best=$alg ;;
    esac
    [ "$best" = "$alg" ] || [ "$alg" = "$builtin" ] ||
        say "$coll $p ranks $bytes B: table $alg, nbcx-sim's fastest $best"
done <"$tmp/report"
[ "$n" = 60 ] || say "report has $n grid points, want 60"

NBCX_TUNING="$table" "$bench" --transport inproc --ranks 4 \
    --op ibcast,ireduce,iallreduce,iallgather,ialltoall --sizes 1k,16k,256k \
    --reps 2 --warmup 0 --json "$tmp/bench.json" >/dev/null 2>"$tmp/err" ||
    say "nbcx-bench with the table: $(cat "$tmp/err")"
grep -q "tuning=$table" "$tmp/bench.json" || say "nbcx_info does not name the table"
exit $fail
