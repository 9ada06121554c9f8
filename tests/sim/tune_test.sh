#!/bin/sh
# nbcx-tune end to end. Usage: tune_test.sh NBCX_TUNE NBCX_SIM NBCX_BENCH PARAMS
#  1. bad input: a clear message and exit status 2, nothing written;
#  2. the table's choice at each grid point is the fastest of nbcx-sim
#     --alg all at that point (the two tools agree), and never slower
#     than the built-in choice (--report's gain >= 1);
#  3. the table is accepted by NBCX_TUNING: nbcx-bench on thread ranks
#     (inproc; it checks every result against a sequential reference)
#     runs with it, and nbcx_info names it.
tune="$1" sim="$2" bench="$3" params="$4"
tmp="${TMPDIR:-/tmp}/nbcx-tune-test.$$"
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
say() { echo "FAILED: $*" >&2; fail=1; }

expect() { # STATUS PATTERN ARGS...
    want="$1" pat="$2"; shift 2
    "$tune" "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" != "$want" ] || ! grep -q -- "$pat" "$tmp/err"; then
        say "nbcx-tune $*: status $got (want $want), stderr: $(cat "$tmp/err")"
    fi
}
expect 2 "unknown collective" --params "$params" --ops nosuch
expect 2 "topology" --params "$params" --ops neighbor_alltoall
expect 2 "values must ascend" --params "$params" --sizes 4k,1k
expect 2 "not a value" --params "$params" --ranks 0
expect 2 "No such file" --params "$tmp/none.json"
expect 2 "unknown option" --params "$params" --frobnicate
"$tune" --params "$params" --ops bcast --out "$tmp/dir/none.txt" 2>"$tmp/err"
[ $? = 2 ] || say "--out into a missing directory: not status 2"
# a bad NBCX_TUNING (the built-in choice compared with is the library's):
# status 2 and its line before the first point, not "the builder failed"
# at every point; --out not written
printf 'bcast * * binomal 0\n' >"$tmp/bad.tuning"
export NBCX_TUNING="$tmp/bad.tuning"
expect 2 'bad.tuning:1: unknown algorithm "binomal" for bcast' \
    --params "$params" --ops bcast --ranks 4 --sizes 8 --out "$tmp/bad.out"
unset NBCX_TUNING
grep -q "builder failed" "$tmp/err" && say "bad NBCX_TUNING: a point was tried"
[ -e "$tmp/bad.out" ] && say "bad NBCX_TUNING: --out written"

# 2. agreement with nbcx-sim, and the gain
ops=bcast,reduce,allreduce,allgather,alltoall
"$tune" --params "$params" --ops $ops --ranks 2,4,8 --sizes 1k,64k,1m \
    --segsizes 64k --min-gain 1 --report --out "$tmp/table.txt" >"$tmp/report" ||
    say "nbcx-tune exited with $?"
n=0
while read -r coll p bytes alg seg t builtin tb gain; do
    case "$coll" in "#"*|"") continue ;; esac
    n=$((n + 1))
    # seg 0 is the default fragment (the transport's, or beyond a node
    # the chains' model, coll/select.c): nbcx-sim's without --segsize
    best=$("$sim" --params "$params" --op "$coll" --alg all --ranks "$p" \
           --size "$bytes" |
           awk '!/^#/ { if (!seen || $6 < t) { t = $6; a = $2; seen = 1 } }
                END { print a, t }')
    tbest=${best#* } best=${best% *}
    # a k-nomial radix other than 4 is not in --alg all: its own time
    case "$alg" in
    knomial[2-8])
        t=$("$sim" --params "$params" --op "$coll" --alg "$alg" \
            --ranks "$p" --size "$bytes" | awk '!/^#/ { print $6 }')
        awk -v t="$t" -v b="$tbest" 'BEGIN { exit !(t + 0 <= b + 0) }' &&
            best=$alg ;;
    esac
    [ "$seg" != 0 ] || [ "$best" = "$alg" ] ||
        say "$coll $p ranks $bytes B: nbcx-tune chose $alg, nbcx-sim's fastest is $best"
    awk -v g="$gain" 'BEGIN { exit !(g + 0 >= 0.995) }' ||
        say "$coll $p ranks $bytes B: $alg predicted slower than built-in $builtin ($gain)"
done <"$tmp/report"
[ "$n" = 45 ] || say "report has $n grid points, want 45"
grep -q "^allreduce " "$tmp/table.txt" || say "no allreduce rule in the table"

# 2b. the default --min-gain 1.05: a choice other than the built-in one
#     only where it is predicted at least 5% faster
"$tune" --params "$params" --ops $ops --ranks 2,4,8 --sizes 1k,64k,1m \
    --report --out "$tmp/table2.txt" >"$tmp/report2" ||
    say "nbcx-tune (default --min-gain) exited with $?"
while read -r coll p bytes alg seg t builtin tb gain; do
    case "$coll" in "#"*|"") continue ;; esac
    [ "$alg" = "$builtin" ] ||
        awk -v g="$gain" 'BEGIN { exit !(g + 0 >= 1.045) }' ||
        say "$coll $p ranks $bytes B: $alg over built-in $builtin for only $gain"
done <"$tmp/report2"
expect 2 "min-gain" --params "$params" --min-gain 0.5

# 2b. --split: each rule's S is nbcx-sim --split-levels all's best
"$tune" --params "$params" --split --ops bcast,reduce --ranks 4,16 \
    --sizes 1k,1m --progress-cores 1 --compute-us 300 --report \
    --out "$tmp/split.txt" >"$tmp/report" || say "nbcx-tune --split: $?"
n=0
while read -r coll p bytes S t; do
    case "$coll" in "#"*|"") continue ;; esac
    n=$((n + 1))
    best=$("$sim" --params "$params" --op "$coll" --alg binomial --ranks "$p" \
           --size "$bytes" --progress split --split-levels all \
           --progress-cores 1 --compute-us 300 | sed -n 's/.* S=\([0-9]*\) best$/\1/p')
    [ "$best" = "$S" ] ||
        say "split $coll $p ranks $bytes B: nbcx-tune chose S=$S, nbcx-sim's best is S=$best"
done <"$tmp/report"
[ "$n" = 8 ] || say "split report has $n grid points, want 8"
grep -q "^split bcast " "$tmp/split.txt" || say "no split bcast rule"

# 2d. a shared inter-node link (no folding), where nbcx-tune simulates a
#     schedule built again (another fragment size, the built-in choice)
#     only when it differs from one simulated before: every time it
#     reports is nbcx-sim's for that algorithm and fragment size, the
#     least of nbcx-sim's over every candidate and fragment size (--min-gain
#     1), and the built-in choice's is nbcx-sim --alg auto's
emunet="$(dirname "$params")/openmpi-shm-emunet.json"
"$tune" --params "$emunet" --ops bcast,allreduce,allgather --ranks 16 \
    --sizes 8,1m --ranks-per-node 4 --segsizes 16k,64k --min-gain 1 --report \
    --out "$tmp/emunet.txt" >"$tmp/report" || say "nbcx-tune (emunet) exited with $?"
n=0
while read -r coll p bytes alg seg t builtin tb gain; do
    case "$coll" in "#"*|"") continue ;; esac
    n=$((n + 1))
    segarg=""
    [ "$seg" = 0 ] || segarg="--segsize $seg"
    # shellcheck disable=SC2086
    got=$("$sim" --params "$emunet" --op "$coll" --alg "$alg" $segarg \
          --ranks "$p" --ranks-per-node 4 --size "$bytes" | awk '!/^#/ { print $6 }')
    [ "$got" = "$t" ] ||
        say "emunet $coll $p ranks $bytes B: nbcx-tune $alg seg $seg $t us, nbcx-sim $got"
    algs=all
    [ "$coll" != bcast ] || algs="all knomial3,knomial5,knomial6,knomial7,knomial8"
    least=$(for seg in "" 16k 64k; do
                for a in $algs; do
                    "$sim" --params "$emunet" --op "$coll" --alg "$a" \
                        ${seg:+--segsize "$seg"} --ranks "$p" --ranks-per-node 4 \
                        --size "$bytes"
                done
            done | awk '!/^#/ && $6 + 0 > 0 { if (!n++ || $6 + 0 < m + 0) m = $6 }
                        END { print m }')
    [ "$least" = "$t" ] ||
        say "emunet $coll $p ranks $bytes B: nbcx-tune's best $t us, nbcx-sim's $least"
    got=$("$sim" --params "$emunet" --op "$coll" --alg auto --ranks "$p" \
          --ranks-per-node 4 --size "$bytes" | awk '!/^#/ { print $2, $6 }')
    [ "$got" = "$builtin $tb" ] ||
        say "emunet $coll $p ranks $bytes B: built-in $builtin $tb us, nbcx-sim auto $got"
done <"$tmp/report"
[ "$n" = 6 ] || say "emunet report has $n grid points, want 6"

# 2c. several ranks per node: an rpn column (nbcx-tune/2), each grid
#     point's choice nbcx-tune's at that one rpn; --ranks-from
"$tune" --params "$params" --ops reduce,allgather --ranks 16,64 --sizes 8,1m \
    --ranks-per-node 2,16 --ranks-from 16 --out "$tmp/rpn.txt" ||
    say "nbcx-tune --ranks-per-node 2,16 exited with $?"
grep -q "^# nbcx-tune/2 " "$tmp/rpn.txt" || say "rpn table: not nbcx-tune/2"
grep -q "^# coll ranks rpn bytes algorithm segsize" "$tmp/rpn.txt" ||
    say "rpn table: no column header"
for op in reduce allgather; do
    for node in 2 16; do
        case $node in 2) nr=1-5 ;; 16) nr='6-\*' ;; esac
        "$tune" --params "$params" --ops $op --ranks 16,64 --sizes 8,1m \
            --ranks-per-node $node --ranks-from 16 --out "$tmp/one.txt" ||
            say "nbcx-tune --ranks-per-node $node exited with $?"
        # the same rules, with the rpn range inserted
        want=$(awk '!/^#/ { print $1, $2, "NR", $3, $4, $5 }' "$tmp/one.txt" |
               sed "s/ NR / $nr /" | sed 's/\\//g')
        got=$(awk -v r="$(echo $nr | sed 's/\\//g')" \
              '!/^#/ && $3 == r { print $1, $2, $3, $4, $5, $6 }' "$tmp/rpn.txt" |
              grep "^$op ")
        [ "$got" = "$want" ] ||
            say "$op at $node ranks per node: rpn table has '$got', one-rpn table '$want'"
    done
done
awk '!/^#/ && $2 !~ /^(16-|[0-9]+-\*$|[0-9]+-[0-9]+$)/ { bad = 1 } END { exit bad }' \
    "$tmp/rpn.txt" || say "rpn table: a ranks range below --ranks-from 16"
awk '!/^#/ { split($2, r, "-"); if (r[1] + 0 < 16) bad = 1 } END { exit bad }' \
    "$tmp/rpn.txt" || say "rpn table: a rule below 16 ranks"
expect 2 "above the grid" --params "$params" --ranks 8,16 --ranks-from 16
expect 2 "split" --params "$params" --split --ranks-per-node 2,16

# 3. the table in use
NBCX_TUNING="$tmp/table.txt" "$bench" --transport inproc --ranks 4 \
    --op ibcast,ireduce,iallreduce,iallgather,ialltoall --sizes 1k,64k,1m \
    --reps 2 --warmup 0 --json "$tmp/bench.json" >/dev/null 2>"$tmp/err" ||
    say "nbcx-bench with the table: $(cat "$tmp/err")"
grep -q "tuning=$tmp/table.txt" "$tmp/bench.json" ||
    say "nbcx_info does not name the table"
exit $fail
