#!/bin/sh
# A user's table for a whole machine: tools/sim/gen-builtin-tuning
# --params writes one as text for NBCX_TUNING (docs/algorithms.md, "A
# table for your machine"); the committed one is
# tools/sim/params/openmpi-shm-emunet.tuning (issue 38, session 27).
# Usage: tuning_machine_test.sh NBCX_SIM NBCX_BENCH SOURCE_DIR
#  1. the generator's default is unchanged: from the committed built-in
#     table (--reuse: nothing simulated) it writes that table again, byte
#     for byte; as text (--out not .inc) it writes the same rules, and
#     that text read back writes itself again;
#  2. the committed table is the generator's output for its parameter
#     file (read back with --reuse, written again byte for byte), and
#     names that file;
#  3. nbcx-sim's automatic choice with NBCX_TUNING set to it is, at each
#     point of a grid, the algorithm of the table's first matching rule
#     (matched here in awk, apart from coll/tuning.c), and it differs
#     from the built-in table's choice at one point or more (the table is
#     in force);
#  4. nbcx-bench on 4 thread ranks, one per node, runs with it (its rules
#     for 2-15 ranks on nodes of 1) and checks every result.
sim="$1" bench="$2" src="$3"
gen="$src/tools/sim/gen-builtin-tuning"
inc="$src/src/coll/tuning_builtin.inc"
params="$src/tools/sim/params/openmpi-shm-emunet.json"
table="$src/tools/sim/params/openmpi-shm-emunet.tuning"
tmp="${TMPDIR:-/tmp}/nbcx-tuning-machine-test.$$"
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
say() { echo "FAILED: $*" >&2; fail=1; }

# 1. the default output, and the text format
python3 "$gen" --reuse "$inc" --out "$tmp/builtin.inc" --parts "$tmp/parts" \
    2>/dev/null || say "gen-builtin-tuning --reuse exited with $?"
cmp -s "$inc" "$tmp/builtin.inc" ||
    say "the generator no longer writes the committed built-in table"
python3 "$gen" --reuse "$inc" --out "$tmp/builtin.tuning" \
    --parts "$tmp/parts" 2>/dev/null || say "text output exited with $?"
grep '^"' "$inc" | sed 's/^"//; s/",$//' >"$tmp/inc-rules"
grep -v '^#' "$tmp/builtin.tuning" >"$tmp/text-rules"
[ -s "$tmp/inc-rules" ] && cmp -s "$tmp/inc-rules" "$tmp/text-rules" ||
    say "the text table's rules are not the built-in table's"
head -1 "$tmp/builtin.tuning" | grep -q '^# nbcx-tune/2$' ||
    say "the text table does not start with # nbcx-tune/2"
python3 "$gen" --reuse "$tmp/builtin.tuning" --out "$tmp/again.tuning" \
    --parts "$tmp/parts" 2>/dev/null || say "--reuse of text exited with $?"
cmp -s "$tmp/builtin.tuning" "$tmp/again.tuning" ||
    say "a text table read back with --reuse does not write itself again"

# 2. the committed table
[ -f "$table" ] || { say "no $table"; exit 1; }
grep -q 'nbcx-tune on tools/sim/params/openmpi-shm-emunet.json' "$table" ||
    say "$table does not name its parameter file"
# its grid's last rank counts (--ranks-last), from its header: "16 to N
# ranks", and "(to M: op,op; ...)" for the collectives that end elsewhere
last=$(sed -n 's/.* 16 to \([0-9]*\) ranks.*/\1/p' "$table" | head -1)
others=$(sed -n 's/.* 16 to [0-9]* ranks (\([^)]*\)).*/\1/p' "$table" |
    head -1 | awk -F'; ' '{
        for (i = 1; i <= NF; i++) {
            split($i, a, ": "); sub(/^to /, "", a[1])
            n = split(a[2], ops, ",")
            for (j = 1; j <= n; j++)
                printf "%s%s=%s", (k++ ? "," : ""), ops[j], a[1]
        } }')
[ -n "$last" ] || say "$table: no '16 to N ranks' in its header"
python3 "$gen" --reuse "$table" --params "$params" \
    ${last:+--ranks-last "$last${others:+,$others}"} \
    --out "$tmp/emunet.tuning" --parts "$tmp/parts" 2>/dev/null ||
    say "--reuse of $table exited with $?"
cmp -s "$table" "$tmp/emunet.tuning" ||
    say "$table is not the generator's output (edited by hand?)"
# the header is true: each collective's rules from 16 ranks end at the
# last rank count it names for it
for op in barrier bcast reduce allreduce scan gather scatter allgather \
          reduce_scatter_block reduce_scatter alltoall; do
    want=$(echo ",$others," | sed -n "s/.*,$op=\([0-9]*\),.*/\1/p")
    want=${want:-$last}
    got=$(awk -v c="$op" '!/^#/ && $1 == c {
        n = split($2, r, "-"); hi = (n == 1 ? r[1] : r[2])
        if (r[1] + 0 >= 16 && hi + 0 > m) m = hi + 0 } END { print m + 0 }' "$table")
    [ "$got" = "$want" ] ||
        say "$table: $op's rules end at $got ranks, its header says $want"
done

# 3. the choice with the table in force
# (coll, ranks, rpn, bytes) -> the first rule's algorithm, "-": none
first_rule() {
    awk -v c="$1" -v p="$2" -v r="$3" -v b="$4" '
    function in_range(v, s,   a, n) {
        if (s == "*") return 1
        n = split(s, a, "-")
        if (n == 1) return v == a[1] + 0
        return v >= a[1] + 0 && (a[2] == "*" || v <= a[2] + 0)
    }
    /^#/ || NF == 0 { next }
    $1 == c && in_range(p, $2) && in_range(r, $3) && in_range(b, $4) {
        print $5; found = 1; exit }
    END { if (!found) print "-" }' "$table"
}
differs=0 n=0
for rpn in 1 16; do
    for op in allreduce bcast reduce allgather; do
        NBCX_TUNING="$table" "$sim" --op "$op" --alg auto --ranks 64,256 \
            --ranks-per-node "$rpn" --sizes 8,4k,32k |
            awk '!/^#/ { print $3, $4, $5, $2 }' >"$tmp/with" ||
            say "nbcx-sim with NBCX_TUNING exited with $?"
        "$sim" --op "$op" --alg auto --ranks 64,256 --ranks-per-node "$rpn" \
            --sizes 8,4k,32k | awk '!/^#/ { print $3, $4, $5, $2 }' \
            >"$tmp/without" || say "nbcx-sim exited with $?"
        [ "$(wc -l <"$tmp/with")" = 6 ] ||
            say "$op at $rpn per node: $(wc -l <"$tmp/with") points, want 6"
        while read -r p r b alg; do
            n=$((n + 1))
            want=$(first_rule "$op" "$p" "$r" "$b")
            [ "$alg" = "$want" ] ||
                say "$op $p ranks, $r per node, $b B: auto $alg, the table's rule $want"
        done <"$tmp/with"
        cmp -s "$tmp/with" "$tmp/without" || differs=$((differs + 1))
    done
done
[ "$n" = 48 ] || say "$n points compared, want 48"
[ "$differs" -gt 0 ] ||
    say "the table changed auto's choice nowhere: not in force?"

# 4. results on thread ranks
NBCX_TUNING="$table" NBCX_NODE_RANKS=1 "$bench" --transport inproc --ranks 4 \
    --op ibcast,ireduce,iallreduce,iallgather,ialltoall --sizes 1k,16k,256k \
    --reps 2 --warmup 0 --json "$tmp/bench.json" >/dev/null 2>"$tmp/err" ||
    say "nbcx-bench with the table: $(cat "$tmp/err")"
grep -q "tuning=$table" "$tmp/bench.json" || say "nbcx_info does not name the table"
exit $fail
