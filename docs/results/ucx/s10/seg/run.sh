#!/usr/bin/env bash
# Session 10, third quiet window: TCP send segment of nbcx's UCX, 8-64 KiB,
# in auto and thread mode, 64 KiB and 1 MiB, two sittings.
set -u
cd /work/main
export OMPI_MCA_btl_vader_single_copy_mechanism=none
S=docs/results/ucx/s10/seg; mkdir -p $S/json
date -u +"start %FT%TZ" > $S/times.txt
git rev-parse --short HEAD >> $S/times.txt
V=()
for m in auto thread; do
  for seg in 8K 16K 32K; do
    V+=(--variant "$m-ucx-seg${seg,,}=$m:NBCX_TRANSPORT=ucx,NBCX_UCX_TCP_TX_SEG_SIZE=$seg")
  done
done
for k in 1 2; do
  date -u +"seg sitting $k %FT%TZ" >> $S/times.txt
  NBCX_UCX_TLS=tcp tools/bench-compare --mpi openmpi --net emunet \
    --ops ibcast,iallreduce,ialltoall --sizes 64k,1m --modes auto,thread --transports mpi,ucx \
    --reps 21 --warmup 10 "${V[@]}" \
    --out $S/json/sitting-$k > $S/openmpi-emunet-$k.md 2> $S/openmpi-emunet-$k.err
done
date -u +"end %FT%TZ" >> $S/times.txt
