#!/usr/bin/env bash
# Session 10's quiet measurement of issue 16 (UCX): nothing else runs.
set -u
cd /work/main
export OMPI_MCA_btl_vader_single_copy_mechanism=none
S=docs/results/ucx/s10; mkdir -p $S/json
date -u +"start %FT%TZ" > $S/times.txt
git rev-parse --short HEAD >> $S/times.txt
for k in 1 2 3; do
  date -u +"emunet sitting $k %FT%TZ" >> $S/times.txt
  NBCX_UCX_TLS=tcp tools/bench-compare --mpi openmpi --net emunet \
    --ops ibcast,iallreduce,ialltoall,igather --sizes 64k,1m,4m --modes auto,thread --transports mpi,ucx \
    --reps 21 --warmup 20 \
    --variant auto-ucx-seg8k=auto:NBCX_TRANSPORT=ucx,NBCX_UCX_TCP_TX_SEG_SIZE=8K \
    --out $S/json/openmpi-emunet-$k > $S/openmpi-emunet-$k.md 2> $S/openmpi-emunet-$k.err
done
date -u +"shm %FT%TZ" >> $S/times.txt
NBCX_UCX_TLS=sm,self tools/bench-compare --mpi openmpi \
  --ops ibcast,iallreduce,ialltoall,igather --sizes 8,1k,64k,1m,4m --modes auto --transports mpi,ucx \
  --reps 41 --warmup 100 \
  --out $S/json/openmpi-shm > $S/openmpi-shm.md 2> $S/openmpi-shm.err
date -u +"mpich emunet %FT%TZ" >> $S/times.txt
NBCX_UCX_TLS=tcp tools/bench-compare --mpi mpich --net emunet \
  --ops ibcast,iallreduce,ialltoall,igather --sizes 64k,1m,4m --modes auto --transports mpi,ucx \
  --reps 21 --warmup 20 \
  --out $S/json/mpich-emunet > $S/mpich-emunet.md 2> $S/mpich-emunet.err
date -u +"mpich shm %FT%TZ" >> $S/times.txt
NBCX_UCX_TLS=sm,self tools/bench-compare --mpi mpich \
  --ops ibcast,iallreduce,ialltoall,igather --sizes 8,1k,64k,1m,4m --modes auto --transports mpi,ucx \
  --reps 41 --warmup 100 \
  --out $S/json/mpich-shm > $S/mpich-shm.md 2> $S/mpich-shm.err
date -u +"idle %FT%TZ" >> $S/times.txt
(cd build/openmpi && ctest -R 'test_ucx_idle' -V > /work/main/$S/ucx-idle-openmpi.log 2>&1)
(cd build/mpich && ctest -R 'test_ucx_idle' -V > /work/main/$S/ucx-idle-mpich.log 2>&1)
date -u +"end %FT%TZ" >> $S/times.txt
