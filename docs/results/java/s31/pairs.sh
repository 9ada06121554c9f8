#!/bin/bash
# pairs.sh N OP(bcast|scatter) SIZES: N alternating C/Java runs on RANKS
# thread ranks (default 4); each line: language, pair, bytes, nbc time (us)
cd "$(dirname "$0")/../../../.."; B=build/nompi; N=$1; OP=$2; S=$3; R=${RANKS:-4}
for i in $(seq "$N"); do
  $B/tools/bench/nbcx-bench --transport inproc --ranks "$R" --op "i$OP" --sizes "$S" --reps 400 2>/dev/null | awk -v i="$i" '$1 ~ /^[0-9]+$/ {print "C", i, $1, $3}'
  java -cp java/target/nbcx-0.1.0.jar -Dnbcx.jni=$B/java/libnbcxjni.so java/bench/NbcxBench.java --ranks "$R" --op "$OP" --sizes "$S" --reps 400 2>/dev/null | awk -v i="$i" '$1 ~ /^[0-9]+$/ {print "J", i, $1, $3}'
done
