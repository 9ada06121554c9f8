#!/bin/bash
# Runs rank 0 under callgrind, counting only inside the start and wait
# calls of percall.c (both nbcx's and native's); the other ranks run as is.
# Output: callgrind.percall.out (callgrind_annotate --inclusive=yes).
if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then
    exec valgrind -q --tool=callgrind --callgrind-out-file=callgrind.percall.out \
        --toggle-collect='nbcx_i*' --toggle-collect=nbcx_wait \
        --toggle-collect='PMPI_I*' --toggle-collect=PMPI_Wait "$@"
fi
exec "$@"
