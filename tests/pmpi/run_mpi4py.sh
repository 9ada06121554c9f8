#!/bin/sh
# run_mpi4py.sh BUILD_DIR NP [PATTERN...]: mpi4py's own tests (the test
# directory of the sdist of the installed python3-mpi4py's version,
# downloaded once into BUILD_DIR/mpi4py-tests) on NP ranks, natively
# (NBCX_PMPI=off) and under the shim (BUILD_DIR's nbcx-run). Passes when
# both runs pass the same number of tests and the shim sent no call
# native. PATTERNs select test modules (runtests.py -i); none: the whole
# suite (minutes; not in CI). Exit 77 (skipped) when Debian's mpi4py or
# its sdist is not available.
set -u
build="$1"; np="$2"; shift 2
py=/usr/bin/python3
ver=$("$py" -c 'import mpi4py; print(mpi4py.__version__)' 2>/dev/null) || {
    echo "run_mpi4py: no mpi4py for $py (apt-get install python3-mpi4py)"
    exit 77
}
dir="$build/mpi4py-tests"
src="$dir/mpi4py-$ver/test"
if [ ! -f "$src/runtests.py" ]; then
    mkdir -p "$dir"
    (cd "$dir" && "$py" -m pip download -q --no-deps --no-binary :all: \
        "mpi4py==$ver" >/dev/null 2>&1 && tar xzf "mpi4py-$ver.tar.gz") || {
        echo "run_mpi4py: could not download mpi4py $ver's sdist (its tests)"
        exit 77
    }
fi
mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt")
sel=""
for p in "$@"; do sel="$sel -i $p"; done
run() { # run LOG [launcher...]: runtests.py's summary line
    log="$1"; shift
    # shellcheck disable=SC2086
    (cd "$src" && timeout 900 "$@" "$mpiexec" -n "$np" "$py" runtests.py \
        --no-builddir $sel) >"$log" 2>&1
    echo "$?"
}
rn=$(NBCX_PMPI=off run "$dir/native.np$np.log" env)
rs=$(NBCX_PMPI_VERBOSE=1 run "$dir/shim.np$np.log" "$build/nbcx-run")
ran() { grep -m1 -oE 'Ran [0-9]+ tests' "$1" | grep -oE '[0-9]+' || echo "?"; }
echo "native: exit $rn, ran $(ran "$dir/native.np$np.log") ($(grep -m1 -E '^(OK|FAILED)' "$dir/native.np$np.log"))"
echo "shim:   exit $rs, ran $(ran "$dir/shim.np$np.log") ($(grep -m1 -E '^(OK|FAILED)' "$dir/shim.np$np.log"))"
grep -E '^nbcx-pmpi: +total' "$dir/shim.np$np.log"
fail=0
[ "$rn" = 0 ] || { echo "FAIL: mpi4py's tests fail natively (see $dir/native.np$np.log)"; fail=1; }
[ "$rs" = 0 ] || { echo "FAIL: mpi4py's tests fail under the shim (see $dir/shim.np$np.log)"; fail=1; }
[ "$(ran "$dir/native.np$np.log")" = "$(ran "$dir/shim.np$np.log")" ] ||
    { echo "FAIL: not the same number of tests"; fail=1; }
grep -qE '^nbcx-pmpi: +total [1-9][0-9]* nbcx, 0 native' "$dir/shim.np$np.log" ||
    { echo "FAIL: the shim served nothing, or sent calls native"; fail=1; }
exit $fail
