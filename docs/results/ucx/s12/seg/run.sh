#!/usr/bin/env bash
# Session 12: the UCX transport's 256 KiB fragments (ops->segsize) against
# the MPI transport, with 64 KiB fragments on UCX (NBCX_SEGSIZE=65536, the
# old default) as the -seg64 columns of the same sittings. Three sittings
# on the emulated 1 Gbit/s network with Open MPI, two with MPICH (auto and
# thread modes); then shared memory, one sitting per MPI and per UCX
# transport list, Open MPI also with its default single-copy mechanism
# (CMA). Nothing else runs.
set -u
cd /work/main
export OMPI_MCA_btl_vader_single_copy_mechanism=none
S=docs/results/ucx/s12/seg; mkdir -p $S/json
date -u +"start %FT%TZ" >> $S/times.txt
git rev-parse --short HEAD >> $S/times.txt
for k in 1 2 3; do
  date -u +"openmpi sitting $k %FT%TZ" >> $S/times.txt
  NBCX_UCX_TLS=tcp tools/bench-compare --mpi openmpi --net emunet \
    --ops ibcast,iallreduce,ialltoall,igather --sizes 64k,1m,4m --modes auto,thread --transports mpi,ucx \
    --reps 21 --warmup 20 \
    --variant auto-ucx-seg64=auto:NBCX_TRANSPORT=ucx,NBCX_SEGSIZE=65536 \
    --variant thread-ucx-seg64=thread:NBCX_TRANSPORT=ucx,NBCX_SEGSIZE=65536 \
    --out $S/json/openmpi-$k > $S/openmpi-emunet-$k.md 2> $S/openmpi-emunet-$k.err
done
for k in 1 2; do
  date -u +"mpich sitting $k %FT%TZ" >> $S/times.txt
  NBCX_UCX_TLS=tcp tools/bench-compare --mpi mpich --net emunet \
    --ops ibcast,iallreduce,ialltoall,igather --sizes 64k,1m,4m --modes auto,thread --transports mpi,ucx \
    --reps 21 --warmup 20 \
    --out $S/json/mpich-$k > $S/mpich-emunet-$k.md 2> $S/mpich-emunet-$k.err
done
date -u +"shm %FT%TZ" >> $S/times.txt
for tls in sm,self posix,self; do
  for mpi in openmpi mpich; do
    NBCX_UCX_TLS=$tls tools/bench-compare --mpi $mpi \
      --ops ibcast,iallreduce,ialltoall,igather --sizes 8,1k,64k,1m,4m --modes auto --transports mpi,ucx \
      --reps 41 --warmup 100 \
      --out $S/json/$mpi-shm-$tls > $S/$mpi-shm-$tls.md 2> $S/$mpi-shm-$tls.err
  done
  OMPI_MCA_btl_vader_single_copy_mechanism=cma NBCX_UCX_TLS=$tls tools/bench-compare --mpi openmpi \
    --ops ibcast,iallreduce,ialltoall,igather --sizes 8,1k,64k,1m,4m --modes auto --transports mpi,ucx \
    --reps 41 --warmup 100 \
    --out $S/json/openmpi-cma-shm-$tls > $S/openmpi-cma-shm-$tls.md 2> $S/openmpi-cma-shm-$tls.err
done
date -u +"end %FT%TZ" >> $S/times.txt
