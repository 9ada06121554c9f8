#!/bin/bash
# Session 14: the UCX transport beside the MPI transport and native MPI
# through an emulated full-duplex switch (tools/emunet --switch 2: each
# rank its own 1 Gbit/s port, shaped both ways), and the ring allreduce's
# 256 KiB fragment floor (coll/allreduce.c) against the code before it
# (691180f, built in $BEFORE/build/<mpi>), through the switch and on
# shared memory. Quiet machine: nothing else runs meanwhile.
#   BEFORE=/path/to/691180f-checkout docs/results/ucx/s14/run.sh
set -eu
cd "$(dirname "$0")/../../../.."
OUT=docs/results/ucx/s14/json
BEFORE=${BEFORE:?a checkout of 691180f built with scripts/common.sh configure_build}
export OMPI_MCA_btl_vader_single_copy_mechanism=none
SW="--net switch --sizes 64k,1m,4m --reps 21 --warmup 20"
for k in 1 2 3; do
    for mpi in openmpi mpich; do
        NBCX_UCX_TLS=tcp tools/bench-compare --mpi $mpi $SW \
            --ops iallreduce,ibcast,igather,ialltoall --modes auto,thread \
            --transports mpi,ucx --out $OUT/$mpi-switch-$k
        NBCX_UCX_TLS=tcp tools/bench-compare --mpi $mpi $SW --ops iallreduce \
            --modes auto --transports mpi,ucx --build "$BEFORE/build/$mpi" \
            --out $OUT/$mpi-switch-before-$k
    done
done
SHM="--net shm --ops iallreduce --sizes 256k,1m,4m --reps 41 --warmup 100"
for k in 1 2; do
    for mpi in openmpi mpich; do
        NBCX_UCX_TLS=posix,self tools/bench-compare --mpi $mpi $SHM --modes auto \
            --transports mpi,ucx --out $OUT/$mpi-shm-$k
        NBCX_UCX_TLS=posix,self tools/bench-compare --mpi $mpi $SHM --modes auto \
            --transports mpi,ucx --build "$BEFORE/build/$mpi" --out $OUT/$mpi-shm-before-$k
    done
done
