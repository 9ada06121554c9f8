#!/usr/bin/env bash
# Session 10, fourth quiet window (after CI): MPICH twice more (network and
# shared memory), and 4 ranks on the emulated network once.
set -u
cd /work/main
export OMPI_MCA_btl_vader_single_copy_mechanism=none
S=docs/results/ucx/s10; mkdir -p $S/json
date -u +"window d start %FT%TZ $(git rev-parse --short HEAD)" >> $S/times.txt
for k in 2 3; do
  date -u +"mpich emunet sitting $k %FT%TZ" >> $S/times.txt
  NBCX_UCX_TLS=tcp tools/bench-compare --mpi mpich --net emunet \
    --ops ibcast,iallreduce,ialltoall,igather --sizes 64k,1m,4m --modes auto --transports mpi,ucx \
    --reps 21 --warmup 20 \
    --out $S/json/mpich-emunet-$k > $S/mpich-emunet-$k.md 2> $S/mpich-emunet-$k.err
  date -u +"mpich shm sitting $k %FT%TZ" >> $S/times.txt
  NBCX_UCX_TLS=sm,self tools/bench-compare --mpi mpich \
    --ops ibcast,iallreduce,ialltoall,igather --sizes 8,1k,64k,1m,4m --modes auto --transports mpi,ucx \
    --reps 41 --warmup 100 \
    --out $S/json/mpich-shm-$k > $S/mpich-shm-$k.md 2> $S/mpich-shm-$k.err
done
date -u +"openmpi emunet 4 ranks %FT%TZ" >> $S/times.txt
NBCX_UCX_TLS=tcp tools/bench-compare --mpi openmpi --net emunet --ranks 4 \
  --ops ibcast,iallreduce,ialltoall --sizes 64k,1m --modes auto --transports mpi,ucx \
  --reps 11 --warmup 5 \
  --out $S/json/openmpi-emunet-np4 > $S/openmpi-emunet-np4.md 2> $S/openmpi-emunet-np4.err
date -u +"window d end %FT%TZ" >> $S/times.txt
