#!/usr/bin/env bash
# Session 11, the final window: the code as committed (thread.c: a
# transfer seen streaming past its prediction is polled on the timer,
# which goes on at the pace it had reached) against the MPI transport,
# with session 10's rule alongside (the experiment build read
# NBCX_XP_OLD=1 for it, removed before the commit). Three sittings on
# the emulated 1 Gbit/s network with Open MPI (auto and thread modes),
# then two with MPICH (auto).
set -u
cd /work/main
export OMPI_MCA_btl_vader_single_copy_mechanism=none
S=docs/results/ucx/s11/stream2; mkdir -p $S/json
date -u +"start %FT%TZ" >> $S/times.txt
git rev-parse --short HEAD >> $S/times.txt
for k in 1 2 3; do
  date -u +"openmpi sitting $k %FT%TZ" >> $S/times.txt
  NBCX_UCX_TLS=tcp tools/bench-compare --mpi openmpi --net emunet \
    --ops ibcast,iallreduce,ialltoall,igather --sizes 64k,1m,4m --modes auto,thread --transports mpi,ucx \
    --reps 21 --warmup 20 \
    --variant auto-ucx-old=auto:NBCX_TRANSPORT=ucx,NBCX_XP_OLD=1 \
    --variant thread-ucx-old=thread:NBCX_TRANSPORT=ucx,NBCX_XP_OLD=1 \
    --out $S/json/openmpi-$k > $S/openmpi-emunet-$k.md 2> $S/openmpi-emunet-$k.err
done
for k in 1 2; do
  date -u +"mpich sitting $k %FT%TZ" >> $S/times.txt
  NBCX_UCX_TLS=tcp tools/bench-compare --mpi mpich --net emunet \
    --ops ibcast,iallreduce,ialltoall,igather --sizes 64k,1m,4m --modes auto --transports mpi,ucx \
    --reps 21 --warmup 20 \
    --out $S/json/mpich-$k > $S/mpich-emunet-$k.md 2> $S/mpich-emunet-$k.err
done
date -u +"end %FT%TZ" >> $S/times.txt
