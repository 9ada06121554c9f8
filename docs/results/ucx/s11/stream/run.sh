#!/usr/bin/env bash
# Session 11: the progress thread when a transfer outlives its
# prediction (thread.c, stream_until): after a wake-up by UCX's fd that
# finished nothing, or pending events at an arm, poll on the timer for
# 2 ms more (new), against arming and sleeping on the fd after every
# chunk (old; the experiment build read NBCX_XP_OLD=1 for it, removed
# before the commit). Emulated 1 Gbit/s network, Open MPI, auto and
# thread modes, the four operations at 64 KiB, 1 and 4 MiB.
set -u
cd /work/main
export OMPI_MCA_btl_vader_single_copy_mechanism=none
S=docs/results/ucx/s11/stream; mkdir -p $S/json
date -u +"start %FT%TZ" >> $S/times.txt
git rev-parse --short HEAD >> $S/times.txt
for k in $(seq "${1:-1}" "${2:-2}"); do
  date -u +"sitting $k %FT%TZ" >> $S/times.txt
  NBCX_UCX_TLS=tcp tools/bench-compare --mpi openmpi --net emunet \
    --ops ibcast,iallreduce,ialltoall,igather --sizes 64k,1m,4m --modes auto,thread --transports mpi,ucx \
    --reps 21 --warmup 20 \
    --variant auto-ucx-old=auto:NBCX_TRANSPORT=ucx,NBCX_XP_OLD=1 \
    --variant thread-ucx-old=thread:NBCX_TRANSPORT=ucx,NBCX_XP_OLD=1 \
    --out $S/json/sitting-$k > $S/openmpi-emunet-$k.md 2> $S/openmpi-emunet-$k.err
done
date -u +"end %FT%TZ" >> $S/times.txt
