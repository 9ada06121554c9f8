#!/bin/bash
# A/B: old bench order (fixed native -> nbcx) vs new (each variant after itself), same library code
OPS=iallgather,iallgatherv,ialltoall,iscatter,igather,ibcast
for round in 1 2 3; do
  for v in old new; do
    if [ $v = old ]; then B=/tmp/fresh/build/openmpi; else B=/work/main/build/openmpi; fi
    OMPI_MCA_btl_vader_single_copy_mechanism=cma mpiexec.openmpi -n 2 --allow-run-as-root --oversubscribe --bind-to core \
      $B/tools/bench/nbcx-bench --op $OPS --sizes 64k,256k,1m --reps 30 --pure-only --json /tmp/order/$v-$round.json >/dev/null 2>/tmp/order/$v-$round.err || echo FAIL $v $round
  done
done
