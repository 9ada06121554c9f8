#!/bin/bash
# Interleaved runs at 64 KiB-2 MiB (docs/results/java/s26): per round and
# rank count, C, then NbcxBench on three bindings: "old" (1fa76d9:
# ByteBuffer.allocateDirect as it comes, in $OLDCLS), "page" (3dd4efe:
# page-aligned from 4 KiB, in $PAGECLS), "new" (the jar: 64-byte aligned).
#   OLDCLS=/tmp/oldcls PAGECLS=/tmp/pagecls docs/results/java/s26/ab-large.sh OUTDIR [ROUNDS=3]
W="$(cd "$(dirname "$0")/../../../.." && pwd)"; OUT=$1; ROUNDS=${2:-3}
mkdir -p $OUT
JNI=-Dnbcx.jni=$W/build/nompi/java/libnbcxjni.so
for k in $(seq 1 $ROUNDS); do
  for r in 2 4; do
    echo "round $k ranks $r $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)" >> $OUT/log
    $W/build/nompi/tools/bench/nbcx-bench --transport inproc --ranks $r --op ibcast,iscatter --sizes 64k,256k,1m,2m --tests 0 --json $OUT/c-$k-$r.json > /dev/null
    for v in old page new; do
      case $v in old) cp=$OLDCLS ;; page) cp=$PAGECLS ;; new) cp=$W/java/target/nbcx-0.1.0.jar ;; esac
      java -cp $cp $JNI $W/java/bench/NbcxBench.java --ranks $r --op bcast,scatter --sizes 64k,256k,1m,2m --tests 0 --json $OUT/$v-$k-$r.json > /dev/null
    done
  done
done
echo done >> $OUT/log
