#!/usr/bin/env bash
# Session 12: shared memory with nbcx's UCX given no transport list (it
# times CMA against two copies at start-up and leaves CMA out where it is
# slower), beside sm,self and posix,self in the same sitting, one sitting
# per MPI; Open MPI as it comes (single copy by CMA) and with single copy
# off. Nothing else runs.
set -u
cd /work/main
S=docs/results/ucx/s12/cma; mkdir -p $S/json
date -u +"start %FT%TZ" >> $S/times.txt
git rev-parse --short HEAD >> $S/times.txt
unset NBCX_UCX_TLS UCX_TLS
for mech in cma none; do
  for mpi in openmpi mpich; do
    [ $mpi = mpich ] && [ $mech = none ] && continue
    OMPI_MCA_btl_vader_single_copy_mechanism=$mech tools/bench-compare --mpi $mpi \
      --ops ibcast,iallreduce,ialltoall,igather --sizes 8,1k,64k,1m,4m --modes auto --transports mpi,ucx \
      --reps 41 --warmup 100 \
      --variant auto-ucx-sm=auto:NBCX_TRANSPORT=ucx,NBCX_UCX_TLS=sm \
      --variant auto-ucx-posix=auto:NBCX_TRANSPORT=ucx,NBCX_UCX_TLS=posix \
      --out $S/json/$mpi-$mech > $S/$mpi-$mech.md 2> $S/$mpi-$mech.err
  done
done
date -u +"end %FT%TZ" >> $S/times.txt
