#!/usr/bin/env bash
# Session 11: is the emulated link idle during a 4 MiB ialltoall?
# Captures the loopback of the emulated network (tcpdump, headers only)
# while nbcx-bench runs ialltoall 4 MiB in auto mode, once on each
# transport, then prints the link's busy periods (linkbusy.py).
# Needs tcpdump (apt-get install tcpdump); root (tools/emunet).
set -eu
cd /work/main
export OMPI_MCA_btl_vader_single_copy_mechanism=none
S=docs/results/ucx/s11/capture
B=$PWD/build/openmpi/tools/bench/nbcx-bench
for T in ucx mpi; do
  NBCX_TRANSPORT=$T NBCX_UCX_TLS=tcp NBCX_PROGRESS=auto tools/emunet -- bash -c "
    tcpdump -i lo -n -s 80 -w /tmp/nbcx-cap-$T.pcap 2>/dev/null & tp=\$!
    sleep 1
    mpiexec.openmpi -n 2 --allow-run-as-root --oversubscribe $B \
      --op ialltoall --sizes 4m --reps ${REPS:-5} --warmup 1 --json $S/$T.json
    sleep 0.5; kill \$tp; wait" > $S/$T.txt
  python3 $S/linkbusy.py /tmp/nbcx-cap-$T.pcap > $S/$T-link.txt
done
