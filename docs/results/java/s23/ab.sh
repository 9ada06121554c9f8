#!/usr/bin/env bash
# One sitting: C nbcx-bench, Java before (c3c9d37: CyclicBarrier, nbc in thread mode), Java now; R ranks, 4k-128k; nbc medians (us)
# /tmp/s23/NbcxBenchOld.java: git show c3c9d37:java/bench/NbcxBench.java with its class renamed NbcxBenchOld
W=/work/wt-s23-java; R=$1
JNI=-Dnbcx.jni=$W/build/nompi/java/libnbcxjni.so; JAR=$W/java/target/nbcx-0.1.0.jar
c=$($W/build/nompi/tools/bench/nbcx-bench --transport inproc --ranks $R --op ibcast,iscatter --min-size 4k --max-size 128k --tests 0 | awk '/^[0-9]/{printf "%s ", $3}')
o=$(java -cp $JAR $JNI /tmp/s23/NbcxBenchOld.java --ranks $R --op bcast,scatter --min-size 4k --max-size 128k | awk '/^[0-9]/{printf "%s ", $3}')
n=$(java -cp $JAR $JNI $W/java/bench/NbcxBench.java --ranks $R --op bcast,scatter --min-size 4k --max-size 128k | awk '/^[0-9]/{printf "%s ", $3}')
echo "R=$R C   $c"; echo "R=$R old $o"; echo "R=$R new $n"
