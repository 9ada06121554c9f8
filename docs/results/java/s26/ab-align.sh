#!/bin/bash
# Interleaved A/B of the aligned direct buffers (docs/results/java/s26): C,
# Java A (the binding of 1fa76d9 in $OLDCLS: ByteBuffer.allocateDirect as
# it comes) and Java B (the binding now: page-aligned), the same NbcxBench,
# one after the other, nbc and the rest as java/bench/compare runs them.
#   OLDCLS=/tmp/oldcls docs/results/java/s26/ab-align.sh OUTDIR [ROUNDS=5] [MIN=4k] [MAX=128k]
#   python3 docs/results/java/s26/absum.py OUTDIR
W="$(cd "$(dirname "$0")/../../../.." && pwd)"; OUT=$1; ROUNDS=${2:-5}; MIN=${3:-4k}; MAX=${4:-128k}
mkdir -p $OUT
[ -d "$OLDCLS" ] || { echo "OLDCLS: the classes of 1fa76d9 (git archive 1fa76d9 java/src/main/java, javac)" >&2; exit 2; }
JAR=$W/java/target/nbcx-0.1.0.jar; JNI=-Dnbcx.jni=$W/build/nompi/java/libnbcxjni.so
for k in $(seq 1 $ROUNDS); do
  for r in 2 4; do
    echo "round $k ranks $r $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)" >> $OUT/log
    $W/build/nompi/tools/bench/nbcx-bench --transport inproc --ranks $r --op ibcast,iscatter --min-size $MIN --max-size $MAX --tests 0 --json $OUT/c-$k-$r.json > /dev/null
    java -cp $OLDCLS $JNI $W/java/bench/NbcxBench.java --ranks $r --op bcast,scatter --min-size $MIN --max-size $MAX --tests 0 --json $OUT/a-$k-$r.json > /dev/null
    java -cp $JAR $JNI $W/java/bench/NbcxBench.java --ranks $r --op bcast,scatter --min-size $MIN --max-size $MAX --tests 0 --json $OUT/b-$k-$r.json > /dev/null
  done
done
echo done >> $OUT/log
