#!/bin/bash
# Session 13: the bandwidth estimate (sched/pace.c) and auto mode on a
# network, before (code ff26b36, built in $BEFORE/build/<mpi>) and after,
# on the emulated 1 Gbit/s network and on shared memory. Quiet machine:
# nothing else runs meanwhile. The network loop ran on 907f05b (the
# estimate then was the throughput of its samples; 8cdf9b6 made it their
# median, which reads the same 0.061-0.062 GB/s there), the shared-memory
# loop on 8cdf9b6. json/r1 holds one earlier sitting of the first rule
# tried (lazy below 2 ms on a network), made by the first loop with code
# 04b062d.
#   BEFORE=/path/to/ff26b36-checkout docs/results/ucx/s13/run.sh
set -eu
cd "$(dirname "$0")/../../../.."
OUT=docs/results/ucx/s13/json
BEFORE=${BEFORE:?a checkout of ff26b36 built with scripts/common.sh configure_build}
export OMPI_MCA_btl_vader_single_copy_mechanism=none
NET="--net emunet --ops iallreduce,ibcast,igather,ialltoall --sizes 64k,1m,4m --reps 21 --warmup 20"
for k in 1 2; do
    for mpi in openmpi mpich; do
        NBCX_UCX_TLS=tcp tools/bench-compare --mpi $mpi $NET --modes auto,thread \
            --transports mpi,ucx --out $OUT/$mpi-net-$k
        [ -d $OUT/$mpi-net-before-$k ] ||
            NBCX_UCX_TLS=tcp tools/bench-compare --mpi $mpi $NET --modes auto \
                --transports mpi,ucx --build "$BEFORE/build/$mpi" --out $OUT/$mpi-net-before-$k
    done
done
SHM="--net shm --ops iallreduce,ibcast,igather,ialltoall --sizes 8,1k,64k,1m,4m --reps 41 --warmup 100"
for mpi in openmpi mpich; do
    NBCX_UCX_TLS=posix,self tools/bench-compare --mpi $mpi $SHM --modes auto \
        --transports mpi,ucx --out $OUT/$mpi-shm
    NBCX_UCX_TLS=posix,self tools/bench-compare --mpi $mpi $SHM --modes auto \
        --transports mpi,ucx --build "$BEFORE/build/$mpi" --out $OUT/$mpi-shm-before
done
