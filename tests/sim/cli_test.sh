#!/bin/sh
# nbcx-sim's command line: bad input is a clear message and exit status
# 2, never a crash; a good run prints a line per combination and valid
# JSON. Usage: cli_test.sh NBCX_SIM DEFAULT_PARAMS_JSON
sim="$1" params="$2"
tmp="${TMPDIR:-/tmp}/nbcx-sim-cli.$$"
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

# expect STATUS PATTERN ARGS...: exit status and a pattern of stderr
expect() {
    want="$1" pat="$2"; shift 2
    "$sim" "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" != "$want" ] || ! grep -q -- "$pat" "$tmp/err"; then
        echo "FAILED: nbcx-sim $*: status $got (want $want), stderr:" >&2
        cat "$tmp/err" >&2
        fail=1
    fi
}

expect 2 "op is required" --ranks 4 --size 8
expect 2 "ranks is required" --op bcast --size 8
expect 2 "size is required" --op bcast --ranks 4
expect 2 "no such collective" --op nosuch --ranks 4 --size 8
expect 2 "has no such algorithm (have: auto binomial chain scatter_allgather knomial double_tree hier)" --op bcast --alg nosuch --ranks 4 --size 8
expect 2 "not a size" --op bcast --ranks 4 --size 12q
expect 2 "not a size" --op bcast --ranks 4 --size -5
expect 2 "not a number of ranks" --op bcast --ranks 0 --size 8
expect 2 "not a number of ranks" --op bcast --ranks 4x --size 8
expect 2 "not a rank" --op bcast --ranks 4 --size 8 --root 4
expect 2 "thread, caller or split" --op bcast --ranks 4 --size 8 --progress later
expect 2 "split-levels" --op bcast --ranks 4 --size 8 --progress split --split-levels x
expect 2 "not a time" --op bcast --ranks 4 --size 8 --compute-us -1
expect 2 "needs --progress split" --op bcast --ranks 4 --size 8 --split-levels all
expect 2 "progress-cores" --op bcast --ranks 4 --size 8 --progress-cores x
expect 2 "unknown argument" --op bcast --ranks 4 --size 8 --frobnicate
expect 2 "needs a value" --op bcast --ranks 4 --size
expect 2 "ranks-per-node" --op bcast --ranks 4 --size 8 --ranks-per-node 0
expect 2 "does not fold" --op bcast --alg binomial --ranks 8 --size 8 --fold on
expect 2 "int displacements" --op alltoallv --alg linear --ranks 100000 --size 1m
expect 2 "No such file" --op bcast --ranks 4 --size 8 --params "$tmp/none.json"
printf '{"format": "nbcx-loggp/1", "cores_per_node": 2}' >"$tmp/p.json"
expect 2 'missing key "copy_per_byte"' --op bcast --ranks 4 --size 8 --params "$tmp/p.json"
printf '{"format": "nbcx-loggp/1", "cores_per_node": 2, "copy_per_byte": 0, "reduce_per_byte": 0}' >"$tmp/p.json"
expect 2 'missing key "intra" or "inter"' --op bcast --ranks 4 --size 8 --params "$tmp/p.json"
printf '{"format": "nbcx-loggp/1", "cores_per_node": 2, "copy_per_byte": 0, "reduce_per_byte": 0, "intra": {"L": 1, "o": 1, "g": 1, "G": 0.001}}' >"$tmp/p.json"
expect 2 'no "inter" block' --op bcast --ranks 4 --size 8 --ranks-per-node 2 --params "$tmp/p.json"
printf '{"format": "nbcx-loggp/1", "cores_per_node": 2,' >"$tmp/p.json"
expect 2 "line 1" --op bcast --ranks 4 --size 8 --params "$tmp/p.json"

# a bad NBCX_TUNING file (or NBCX_<COLL>_ALG) fails every call: status 2
# before the first point, nothing on stdout, the file's line named (not
# rows of "the builder failed" and status 0 or 4), whatever --alg says;
# tools/sim/scale-table.py --tuning with it stops the same way
printf 'allreduce 2-* * 0-* nosuch 0\n' >"$tmp/bad.tuning"
export NBCX_TUNING="$tmp/bad.tuning"
for alg in auto all; do
    expect 2 'bad.tuning:1: unknown algorithm "nosuch" for allreduce (have: ' \
        --op allreduce --alg $alg \
        --ranks 4 --size 8 --params "$params"
    if [ -s "$tmp/out" ] || ! grep -q "nothing simulated" "$tmp/err"; then
        echo "FAILED: bad NBCX_TUNING, --alg $alg: rows printed" >&2; fail=1
    fi
done
expect 2 "bad.tuning:1:" --op bcast --ranks 4 --size 8 --json --reference mpich
printf '# ok\nbcast 1-x * binomial 0\n' >"$tmp/bad.tuning"
expect 2 'bad.tuning:2: bad ranks range "1-x"' --op bcast --ranks 4 --size 8
printf 'bcst * * binomial 0\n' >"$tmp/bad.tuning"
expect 2 'bad.tuning:1: unknown collective "bcst" (have: barrier bcast' \
    --op bcast --ranks 4 --size 8
export NBCX_TUNING="$tmp/none.tuning"
expect 2 "none.tuning: No such file" --op bcast --ranks 4 --size 8
unset NBCX_TUNING
NBCX_ALLREDUCE_ALG=nosuch "$sim" --op allreduce --ranks 4 --size 8 \
    >"$tmp/out" 2>"$tmp/err"
st=$?
if [ $st != 2 ] || ! grep -q "nothing simulated" "$tmp/err"; then
    echo "FAILED: NBCX_ALLREDUCE_ALG=nosuch: status $st" >&2; cat "$tmp/err" >&2; fail=1
fi
scale="$(dirname "$params")/../scale-table.py"
if command -v python3 >/dev/null 2>&1 && [ -f "$scale" ]; then
    python3 "$scale" --build "$(dirname "$sim")/../.." --ops barrier --ranks 2 \
        --sizes 8 --out "$tmp/scale" --tuning "$tmp/bad.tuning" \
        >"$tmp/out" 2>"$tmp/err"
    st=$?
    if [ $st = 0 ] || ! grep -q "not a usable table" "$tmp/err" ||
       ! grep -q "bad.tuning:1:" "$tmp/err" || [ -e "$tmp/scale" ]; then
        echo "FAILED: scale-table.py --tuning bad: status $st" >&2
        cat "$tmp/err" >&2; fail=1
    fi
fi

# --split-levels all: S = 0..3 on 8 ranks, one best; JSON rows carry S
"$sim" --op bcast --alg binomial --ranks 8 --size 1k --progress split \
    --split-levels all --progress-cores 1 --compute-us 100 \
    --params "$params" >"$tmp/out" 2>"$tmp/err"
if [ $? != 0 ] || [ "$(grep -c ' S=[0-3]' "$tmp/out")" != 4 ] ||
   [ "$(grep -c ' best$' "$tmp/out")" != 1 ]; then
    echo "FAILED: --split-levels all" >&2; cat "$tmp/out" "$tmp/err" >&2; fail=1
fi
"$sim" --op bcast --alg binomial --ranks 8 --size 1k --progress split \
    --split-levels all --progress-cores 1 --compute-us 100 --json \
    --params "$params" >"$tmp/out" 2>"$tmp/err"
if [ "$(grep -c '"split_best": true' "$tmp/out")" != 1 ] ||
   [ "$(grep -c '"split_levels": [0-3],' "$tmp/out")" != 4 ]; then
    echo "FAILED: --split-levels all --json" >&2; cat "$tmp/out" >&2; fail=1
fi

# too large: status 3, reported on its line
"$sim" --op alltoall --alg bruck --ranks 4000 --size 8 --max-nodes 100000 \
    >"$tmp/out" 2>"$tmp/err"
st=$?
if [ $st != 3 ] || ! grep -q "too large" "$tmp/out"; then
    echo "FAILED: too large: status $st" >&2; cat "$tmp/out" "$tmp/err" >&2; fail=1
fi

# a sweep goes on past a point beyond the interface's int displacements
# (a v collective's; the others count in 64 bits): reported on its line
# (and on stderr), the other points simulated, status 0
"$sim" --op allgatherv --alg ring,linear --sizes 8,1m --ranks 4096 \
    --params "$params" >"$tmp/out" 2>"$tmp/err"
st=$?
if [ $st != 0 ] || [ "$(grep -c 'exceeds the int displacements' "$tmp/out")" != 2 ] ||
   [ "$(grep -c '^allgatherv  *\(ring\|linear\)  *4096 .* 8  *[0-9]' "$tmp/out")" != 2 ] ||
   ! grep -q "2 of 4 point(s) not simulated" "$tmp/err"; then
    echo "FAILED: sweep past int counts: status $st" >&2; cat "$tmp/out" "$tmp/err" >&2; fail=1
fi

# --reference: a peer's choice is simulated as the nbcx algorithm with
# its schedule (the same time as that algorithm by name); one nbcx lacks
# is reported as not modelled, not a failure
expect 2 "no such peer" --op bcast --ranks 4 --size 8 --reference nosuch
"$sim" --op allreduce --ranks 16 --size 1m --reference mpich,openmpi-libnbc \
    --params "$params" >"$tmp/out" 2>"$tmp/err"
st=$?
"$sim" --op allreduce --alg rabenseifner --ranks 16 --size 1m \
    --params "$params" >"$tmp/named" 2>>"$tmp/err"
t_ref=$(awk '$2 == "mpich=rabenseifner" {print $6}' "$tmp/out")
t_lib=$(awk '$2 == "openmpi-libnbc=rabenseifner" {print $6}' "$tmp/out")
t_named=$(awk '$2 == "rabenseifner" {print $6}' "$tmp/named")
if [ $st != 0 ] || [ -z "$t_named" ] || [ "$t_ref" != "$t_named" ] ||
   [ "$t_lib" != "$t_named" ] || [ "$(grep -vc '^#' "$tmp/out")" != 2 ]; then
    echo "FAILED: --reference allreduce: $t_ref $t_lib vs $t_named" >&2
    cat "$tmp/out" "$tmp/err" >&2; fail=1
fi
"$sim" --op bcast --ranks 12 --size 1m --reference mpich --alg auto --json \
    --params "$params" >"$tmp/out" 2>"$tmp/err"
st=$?
if [ $st != 0 ] || ! grep -q '"peer_alg": "scatter_ring_allgather", "match": "none"' "$tmp/out" ||
   ! grep -q '"alg_requested": "auto"' "$tmp/out"; then
    echo "FAILED: --reference not modelled: status $st" >&2; cat "$tmp/out" "$tmp/err" >&2; fail=1
fi

# good runs: every op and algorithm, text and JSON
if ! "$sim" --op all --alg all --ranks 2,7 --size 0,1k --compute-us 50 \
        --params "$params" --verify >"$tmp/out" 2>"$tmp/err"; then
    echo "FAILED: --op all --alg all" >&2; cat "$tmp/err" "$tmp/out" >&2; fail=1
fi
# --verify: the data mode agrees with each op's first algorithm
ok=$(grep -c ' data ok$' "$tmp/out")
if [ "$ok" -lt 150 ] || grep -q 'data \(DIFFERS\|FAILED\)' "$tmp/out"; then
    echo "FAILED: --verify: $ok lines ok" >&2; grep data "$tmp/out" | grep -v 'data ok$' >&2; fail=1
fi
lines=$(grep -vc '^#' "$tmp/out")
if [ "$lines" -lt 150 ]; then
    echo "FAILED: --op all --alg all printed $lines lines" >&2; fail=1
fi
if ! "$sim" --op allreduce --alg all --ranks 16 --sizes 1k,64k --json \
        --compute-us 100 --progress caller >"$tmp/json" 2>"$tmp/err"; then
    echo "FAILED: --json" >&2; cat "$tmp/err" >&2; fail=1
fi
if command -v python3 >/dev/null 2>&1; then
    python3 - "$tmp/json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "nbcx-sim/1", d["format"]
rs = d["results"]
assert len(rs) == 10, len(rs)  # 5 algorithms x 2 sizes
for r in rs:
    assert r["t_max_us"] >= r["t_median_us"] >= r["t_min_us"] > 0, r
    assert 0 <= r["overlap"] <= 1, r
PY
fi
exit $fail
