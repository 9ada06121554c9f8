#!/bin/bash
# nbcx-bench of this tree on the library before the caller-mode yield change
export LD_LIBRARY_PATH=/tmp/old-nbcx
exec /work/main/build/openmpi/tools/bench/nbcx-bench "$@"
