#!/usr/bin/env bash
# Session 11's quiet measurement of issue 16 (UCX): more sittings of the
# default (auto) mode on the emulated network, to tell the remaining
# overlap gaps from run-to-run variation. Nothing else runs.
# Usage: run.sh OPENMPI_SITTINGS MPICH_SITTINGS [FIRST]
set -u
cd /work/main
export OMPI_MCA_btl_vader_single_copy_mechanism=none
S=docs/results/ucx/s11; mkdir -p $S/json
n_ompi=${1:-6}; n_mpich=${2:-3}; first=${3:-1}
date -u +"start %FT%TZ" >> $S/times.txt
git rev-parse --short HEAD >> $S/times.txt
for k in $(seq "$first" $((first + n_ompi - 1))); do
  date -u +"openmpi emunet sitting $k %FT%TZ" >> $S/times.txt
  NBCX_UCX_TLS=tcp tools/bench-compare --mpi openmpi --net emunet \
    --ops ibcast,iallreduce,ialltoall,igather --sizes 64k,1m,4m --modes auto --transports mpi,ucx \
    --reps 21 --warmup 20 \
    --out $S/json/openmpi-emunet-$k > $S/openmpi-emunet-$k.md 2> $S/openmpi-emunet-$k.err
done
for k in $(seq "$first" $((first + n_mpich - 1))); do
  date -u +"mpich emunet sitting $k %FT%TZ" >> $S/times.txt
  NBCX_UCX_TLS=tcp tools/bench-compare --mpi mpich --net emunet \
    --ops ibcast,iallreduce,ialltoall,igather --sizes 64k,1m,4m --modes auto --transports mpi,ucx \
    --reps 21 --warmup 20 \
    --out $S/json/mpich-emunet-$k > $S/mpich-emunet-$k.md 2> $S/mpich-emunet-$k.err
done
date -u +"end %FT%TZ" >> $S/times.txt
