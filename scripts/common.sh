# Shared by the scripts: where builds go and how to run mpiexec as root.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="$(nproc 2>/dev/null || echo 2)"
# Open MPI refuses root and more ranks than cores without these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none

# configure_build NAME MPICC [cmake args...]: configures and builds
# build/NAME against the MPI whose compiler wrapper is MPICC, or without
# MPI when MPICC is "none" (in-process transport only). The tests are
# built unless the arguments say -DBUILD_TESTING=OFF (scripts/demo does,
# in the same build/openmpi: CMake's cache would keep it OFF for
# scripts/test after it).
configure_build() {
    local name="$1" mpicc="$2"; shift 2
    local mpi=(-DMPI_C_COMPILER="$mpicc")
    [ "$mpicc" = none ] && mpi=(-DNBCX_WITH_MPI=OFF)
    cmake -S "$ROOT" -B "$ROOT/build/$name" "${mpi[@]}" \
          -DNBCX_WERROR=ON -DBUILD_TESTING=ON -DNBCX_INSTALL_PER_MPI=OFF "$@" >/dev/null
    cmake --build "$ROOT/build/$name" -j "$JOBS"
}

# tsan_launcher VAR BUILD_DIR: sets the array VAR to the prefix that lets
# ThreadSanitizer programs run here: nothing, or `setarch <arch> -R`.
# TSan (GCC 12) puts its shadow memory at fixed addresses and aborts
# ("unexpected memory mapping") on kernels that randomise mmap with more
# bits than it expects (vm.mmap_rnd_bits > 28); without address-space
# randomisation it works, and setarch -R is inherited by ctest, mpiexec
# and the ranks. A trivial TSan program tells which case holds. Fails
# when neither works (e.g. a container that forbids personality()).
tsan_launcher() {
    local -n _prefix="$1"
    local probe="$2/tsan-probe"
    printf 'int main(void) { return 0; }\n' |
        "${CC:-cc}" -fsanitize=thread -x c - -o "$probe"
    if "$probe" 2>/dev/null; then
        _prefix=()
    elif setarch "$(uname -m)" -R "$probe" 2>/dev/null; then
        echo "-- ThreadSanitizer needs ASLR off here: running under setarch -R"
        _prefix=(setarch "$(uname -m)" -R)
    else
        echo "ThreadSanitizer cannot run here, even with setarch -R:" >&2
        "$probe" || true
        return 1
    fi
}
