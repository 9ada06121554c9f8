#!/usr/bin/env bash
# Session 10, second quiet window: UCX settings at 4 MiB on the emulated
# network (two sittings), then one sitting at 4 ranks.
set -u
cd /work/main
export OMPI_MCA_btl_vader_single_copy_mechanism=none
S=docs/results/ucx/s10/knobs; mkdir -p $S/json
date -u +"start %FT%TZ" > $S/times.txt
git rev-parse --short HEAD >> $S/times.txt
for k in 1 2; do
  date -u +"knobs sitting $k %FT%TZ" >> $S/times.txt
  NBCX_UCX_TLS=tcp tools/bench-compare --mpi openmpi --net emunet \
    --ops ibcast,ialltoall,igather --sizes 4m --modes auto --transports mpi,ucx \
    --reps 21 --warmup 10 \
    --variant rndv-inf=auto:NBCX_TRANSPORT=ucx,NBCX_UCX_RNDV_THRESH=inf \
    --variant put=auto:NBCX_TRANSPORT=ucx,UCX_RNDV_SCHEME=put_zcopy \
    --variant get=auto:NBCX_TRANSPORT=ucx,UCX_RNDV_SCHEME=get_zcopy \
    --variant buf4m=auto:NBCX_TRANSPORT=ucx,UCX_TCP_SNDBUF=4M,UCX_TCP_RCVBUF=4M \
    --variant rx256k=auto:NBCX_TRANSPORT=ucx,UCX_TCP_RX_SEG_SIZE=256K,NBCX_UCX_TCP_TX_SEG_SIZE=256K \
    --out $S/json/sitting-$k > $S/openmpi-emunet-$k.md 2> $S/openmpi-emunet-$k.err
  date -u +"thread sitting $k %FT%TZ" >> $S/times.txt
  NBCX_UCX_TLS=tcp tools/bench-compare --mpi openmpi --net emunet \
    --ops ibcast,iallreduce,ialltoall --sizes 1m --modes thread --transports mpi,ucx \
    --reps 21 --warmup 10 \
    --variant thread-seg8k=thread:NBCX_TRANSPORT=ucx,NBCX_UCX_TCP_TX_SEG_SIZE=8K \
    --variant thread-always=thread:NBCX_TRANSPORT=ucx,NBCX_PROGRESS_EVENTS=always \
    --out $S/json/thread-$k > $S/openmpi-emunet-thread-$k.md 2> $S/openmpi-emunet-thread-$k.err
done
date -u +"end %FT%TZ" >> $S/times.txt
