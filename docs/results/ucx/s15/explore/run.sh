#!/bin/bash
# Session 15's explorations (README.md). Quiet machine: nothing else runs.
# The segment-size sittings need the temporary NBCX_UCX_POSIX_SEG_SIZE
# setting they were run with (not committed); UCX_POSIX_SEG_SIZE sets the
# same for every UCX in the process, the MPI library's too.
set -eu
cd "$(dirname "$0")/../../../../.."
OUT=${OUT:-/tmp/s15/json}
export OMPI_MCA_btl_vader_single_copy_mechanism=none
SHM="--net shm --ops iallreduce,ibcast,igather,ialltoall --sizes 8,1k,64k,1m,4m --reps 41 --warmup 100"
for k in 1 2 3 4 5; do
    for mpi in openmpi mpich; do
        NBCX_UCX_TLS=posix,self tools/bench-compare --mpi $mpi $SHM --modes auto \
            --transports mpi,ucx \
            --variant seg8k=auto:NBCX_TRANSPORT=ucx,NBCX_UCX_POSIX_SEG_SIZE=8256 \
            --variant seg64k=auto:NBCX_TRANSPORT=ucx,NBCX_UCX_POSIX_SEG_SIZE=65535 \
            --out $OUT/$mpi-shm-$k
    done
done
for mpi in openmpi mpich; do
    NBCX_UCX_TLS=tcp tools/bench-compare --mpi $mpi --net switch --rate 200mbit \
        --ops iallreduce,ibcast,igather,ialltoall --sizes 64k,1m,4m --reps 11 --warmup 10 \
        --modes auto --transports mpi,ucx --out $OUT/$mpi-switch200-1
done
for mpi in openmpi mpich; do
    NBCX_UCX_TLS=tcp tools/bench-compare --mpi $mpi --net switch \
        --ops iallreduce,ibcast,igather,ialltoall --sizes 64k,1m,4m --reps 21 --warmup 20 \
        --modes auto --transports mpi,ucx \
        --variant rinf=auto:NBCX_TRANSPORT=ucx,NBCX_UCX_RNDV_THRESH=inf \
        --variant r1m=auto:NBCX_TRANSPORT=ucx,NBCX_UCX_RNDV_THRESH=1m \
        --out $OUT/$mpi-rndv-1
done
for mpi in openmpi mpich; do
    NBCX_UCX_TLS=tcp tools/bench-compare --mpi $mpi --net switch --rate 200mbit \
        --ops iallreduce,ialltoall --sizes 1m,4m --reps 11 --warmup 10 \
        --modes auto --transports mpi,ucx \
        --variant r1m=auto:NBCX_TRANSPORT=ucx,NBCX_UCX_RNDV_THRESH=1m \
        --out $OUT/$mpi-rndv200-1
done
