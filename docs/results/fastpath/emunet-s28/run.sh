#!/bin/bash
# session 28: ovlcost on 2 Open MPI ranks, emulated 1 Gbit/s network and shared memory
set -e
cd "$(dirname "$0")/../../../.."
out=docs/results/fastpath/emunet-s28
mpicc.openmpi -O2 -Wall -Wextra -I include $out/ovlcost.c -L build/openmpi -lnbcx \
    -Wl,-rpath,"$PWD/build/openmpi" -o /tmp/ovlcost
mpi=(mpiexec.openmpi -n 2 --allow-run-as-root --oversubscribe)
for mode in thread auto; do
    for op in allreduce bcast; do
        NBCX_PROGRESS=$mode tools/emunet --rate 1gbit -- "${mpi[@]}" /tmp/ovlcost $op 1048576 30 \
            > $out/emunet-$mode-$op.txt 2>&1
    done
done
NBCX_PROGRESS=thread "${mpi[@]}" /tmp/ovlcost allreduce 4194304 30 > $out/shm-thread-allreduce-4m.txt 2>&1
python3 $out/summarize.py $out/emunet-*.txt $out/shm-*.txt > $out/summary.txt
