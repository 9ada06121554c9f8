#!/bin/bash
# Session 15: the UCX transport beside the MPI transport and native MPI
# with nbcx's UCX sending up to 1 MiB eagerly on TCP (RNDV_THRESH=1m, code
# eb1564e): 3 sittings per MPI through the emulated full-duplex switch at
# 1 Gbit/s (as session 14's s14/run-final.sh), then one per MPI through the
# switch at 200 Mbit/s, where the switch's kernel work per byte is a fifth
# of the transfer time it is at 1 Gbit/s. Quiet machine: nothing else runs.
#   docs/results/ucx/s15/run.sh
set -eu
cd "$(dirname "$0")/../../../.."
OUT=docs/results/ucx/s15/json
export OMPI_MCA_btl_vader_single_copy_mechanism=none
OPS="--ops iallreduce,ibcast,igather,ialltoall"
for k in 1 2 3; do
    for mpi in openmpi mpich; do
        NBCX_UCX_TLS=tcp tools/bench-compare --mpi $mpi --net switch $OPS \
            --sizes 64k,1m,4m --reps 21 --warmup 20 --modes auto,thread \
            --transports mpi,ucx --out $OUT/$mpi-switch-$k
    done
done
for mpi in openmpi mpich; do
    NBCX_UCX_TLS=tcp tools/bench-compare --mpi $mpi --net switch --rate 200mbit $OPS \
        --sizes 1m,4m --reps 11 --warmup 10 --modes auto --transports mpi,ucx \
        --out $OUT/$mpi-switch200-1
done
