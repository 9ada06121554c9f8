#!/bin/bash
# Interleaved A/B (docs/results/java/s26): per round and rank count, C
# (nbcx-bench --transport inproc), Java A (NbcxBench as of 92fa8ca: the
# park/unpark barrier) and Java B (NbcxBench now: io.nbcx.ThreadBarrier),
# one after the other, nbc and the rest as java/bench/compare runs them.
#   docs/results/java/s26/ab.sh OUTDIR [ROUNDS=5] [MIN=4k] [MAX=128k]
#   python3 docs/results/java/s26/absum.py OUTDIR
W="$(cd "$(dirname "$0")/../../../.." && pwd)"; OUT=$1; ROUNDS=${2:-5}; MIN=${3:-4k}; MAX=${4:-128k}
mkdir -p $OUT /tmp/nbcxbench-92fa8ca
git -C $W show 92fa8ca:java/bench/NbcxBench.java > /tmp/nbcxbench-92fa8ca/NbcxBench.java
JAR=$W/java/target/nbcx-0.1.0.jar; JNI=-Dnbcx.jni=$W/build/nompi/java/libnbcxjni.so
for k in $(seq 1 $ROUNDS); do
  for r in 2 4; do
    echo "round $k ranks $r $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)" >> $OUT/log
    $W/build/nompi/tools/bench/nbcx-bench --transport inproc --ranks $r --op ibcast,iscatter --min-size $MIN --max-size $MAX --tests 0 --json $OUT/c-$k-$r.json > /dev/null
    java -cp $JAR $JNI /tmp/nbcxbench-92fa8ca/NbcxBench.java --ranks $r --op bcast,scatter --min-size $MIN --max-size $MAX --tests 0 --json $OUT/a-$k-$r.json > /dev/null
    java -cp $JAR $JNI $W/java/bench/NbcxBench.java --ranks $r --op bcast,scatter --min-size $MIN --max-size $MAX --tests 0 --json $OUT/b-$k-$r.json > /dev/null
  done
done
echo done >> $OUT/log
