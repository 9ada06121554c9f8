# Shared by the scripts: where builds go and how to run mpiexec as root.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="$(nproc 2>/dev/null || echo 2)"
# Open MPI refuses root and more ranks than cores without these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none

# configure_build NAME MPICC [cmake args...]: configures and builds
# build/NAME against the MPI whose compiler wrapper is MPICC.
configure_build() {
    local name="$1" mpicc="$2"; shift 2
    cmake -S "$ROOT" -B "$ROOT/build/$name" -DMPI_C_COMPILER="$mpicc" \
          -DNBCX_WERROR=ON "$@" >/dev/null
    cmake --build "$ROOT/build/$name" -j "$JOBS"
}
