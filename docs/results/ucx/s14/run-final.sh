#!/bin/bash
# Session 14, the final code (auto mode leaves what UCX over TCP carries by
# itself to the application, 22c5c25): the same sittings through the
# emulated full-duplex switch as run.sh's first loop (its json/*-switch-*
# are the code before that rule, 3788505), and one on the shared emulated
# link (tools/emunet without --switch), as in session 13. Quiet machine.
#   docs/results/ucx/s14/run-final.sh
set -eu
cd "$(dirname "$0")/../../../.."
OUT=docs/results/ucx/s14/json
export OMPI_MCA_btl_vader_single_copy_mechanism=none
OPS="--ops iallreduce,ibcast,igather,ialltoall --sizes 64k,1m,4m --reps 21 --warmup 20"
for k in 1 2 3; do
    for mpi in openmpi mpich; do
        NBCX_UCX_TLS=tcp tools/bench-compare --mpi $mpi --net switch $OPS \
            --modes auto,thread --transports mpi,ucx --out $OUT/$mpi-switch-final-$k
    done
done
for mpi in openmpi mpich; do
    NBCX_UCX_TLS=tcp tools/bench-compare --mpi $mpi --net emunet $OPS \
        --modes auto,thread --transports mpi,ucx --out $OUT/$mpi-net-final-1
done
