#!/usr/bin/env bash
# Session 11: shared memory after the progress change, one sitting per
# MPI (auto mode, as session 10's s10/run.sh). Nothing else runs.
set -u
cd /work/main
export OMPI_MCA_btl_vader_single_copy_mechanism=none
S=docs/results/ucx/s11/shm; mkdir -p $S/json
date -u +"start %FT%TZ" >> $S/times.txt
git rev-parse --short HEAD >> $S/times.txt
for mpi in openmpi mpich; do
  NBCX_UCX_TLS=sm,self tools/bench-compare --mpi $mpi \
    --ops ibcast,iallreduce,ialltoall,igather --sizes 8,1k,64k,1m,4m --modes auto --transports mpi,ucx \
    --reps 41 --warmup 100 \
    --out $S/json/$mpi-shm > $S/$mpi-shm.md 2> $S/$mpi-shm.err
done
date -u +"end %FT%TZ" >> $S/times.txt
# then, the same with NBCX_UCX_TLS=posix,self (no CMA), Open MPI:
NBCX_UCX_TLS=posix,self tools/bench-compare --mpi openmpi --ops ibcast,iallreduce,ialltoall,igather --sizes 8,1k,64k,1m,4m --modes auto --transports mpi,ucx --reps 41 --warmup 100 --out $S/json/openmpi-shm-posix > $S/openmpi-shm-posix.md 2> $S/openmpi-shm-posix.err
