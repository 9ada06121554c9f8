#!/bin/sh
# check_nbcx_run.sh NBCX_RUN: the launcher's command line for each kind of
# launcher (stand-ins on PATH that print their arguments), --help,
# --version, and the refusals.
set -u
run="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for l in srun mpiexec.openmpi mpiexec.mpich mpiexec.hydra mpirun prterun; do
    printf '#!/bin/sh\necho "$(basename "$0") $*"\n' > "$dir/$l"
    chmod +x "$dir/$l"
done
fail=0
expect() { # expect WHAT PATTERN OUTPUT
    case "$3" in
    *"$2"*) ;;
    *) echo "FAIL: $1: '$3' lacks '$2'"; fail=1 ;;
    esac
}
out=$(PATH="$dir:$PATH" "$run" srun -n 2 ./app)
expect srun "srun --export=ALL,LD_PRELOAD=" "$out"
expect srun "libnbcx-pmpi.so -n 2 ./app" "$out"
for l in mpiexec.openmpi mpiexec.hydra mpirun prterun; do
    out=$(PATH="$dir:$PATH" "$run" "$l" -n 2 ./app)
    case "$out" in
    "$l -x LD_PRELOAD="*libnbcx-pmpi.so*" -n 2 ./app"|"$l -genv LD_PRELOAD "*libnbcx-pmpi.so*" -n 2 ./app") ;;
    *) echo "FAIL: $l: $out"; fail=1 ;;
    esac
done
out=$("$run" --help)
[ $? -eq 0 ] || { echo "FAIL: --help exit status"; fail=1; }
expect --help "Usage: nbcx-run" "$out"
expect --version "nbcx-run (nbcx)" "$("$run" --version)"
"$run" true ./app 2>/dev/null
[ $? -eq 2 ] || { echo "FAIL: a program that is no launcher: not exit 2"; fail=1; }
"$run" no-such-launcher ./app 2>/dev/null
[ $? -eq 127 ] || { echo "FAIL: a missing launcher: not exit 127"; fail=1; }
[ $fail -eq 0 ] && echo "check_nbcx_run: ok"
exit $fail
