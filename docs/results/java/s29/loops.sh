#!/bin/bash
cd "$(dirname "$0")/../../../.."; B=build/nompi
for i in 1 2 3 4 5 6 7 8; do for s in 8192 32768; do
  c=$(docs/results/java/s29/persvsnb $s | awk '{printf "%s ", $3}')
  j=$(java -cp java/target/nbcx-0.1.0.jar -Dnbcx.jni=$B/java/libnbcxjni.so docs/results/java/s29/PersVsNb.java $s 2>/dev/null | awk '{printf "%s ", $3}')
  echo "$i $s C $c J $j"
done; done
