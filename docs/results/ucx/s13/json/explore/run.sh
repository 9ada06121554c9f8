#!/bin/bash
cd /work/main
export OMPI_MCA_btl_vader_single_copy_mechanism=none NBCX_UCX_TLS=tcp
C="--mpi openmpi --net emunet --ops iallreduce,ibcast,igather,ialltoall --sizes 64k,1m,4m --reps 21 --warmup 20"
tools/bench-compare $C --build /tmp/basewt/build/openmpi --modes auto --transports mpi,ucx --out /tmp/x1/old > /tmp/x1/old.txt 2>&1
tools/bench-compare $C --modes auto,thread --transports mpi,ucx \
  --variant lz2-mpi=auto:XLAZY_NS=2000000 --variant lz2-ucx=auto:NBCX_TRANSPORT=ucx,XLAZY_NS=2000000 \
  --variant lz2g0-mpi=auto:XLAZY_NS=2000000,XGAP=0 --variant lz2g0-ucx=auto:NBCX_TRANSPORT=ucx,XLAZY_NS=2000000,XGAP=0 \
  --out /tmp/x1/new > /tmp/x1/new.txt 2>&1
echo done > /tmp/x1/DONE
