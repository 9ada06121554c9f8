/*
 * nbcx-bench - nonblocking collectives of nbcx: time, overlap, overhead
 * and CPU cost of progress, against a blocking reference.
 *
 *   mpiexec -n 4 nbcx-bench --op iallreduce,ialltoall --sizes 64k,1M
 *   nbcx-bench --transport inproc --ranks 4 --op ibcast,iscatter
 *
 * With MPI (the default of a build with MPI) nbcx runs side by side with
 * the MPI library's own collectives (driver_mpi.c); on the inproc
 * transport the ranks are threads of this process, with no MPI and no
 * mpiexec, and nbcx's nonblocking use is set against its blocking-style
 * use (driver_inproc.c). The measurements themselves are harness.c's.
 */
#include "bench.h"
#include "../common/tool_args.h"

int main(int argc, char **argv)
{
    /* Before MPI_Init: answered without mpiexec. */
    nbcx_tool_version(argc, argv, "nbcx-bench");
    if (nbcx_tool_wants_help(argc, argv)) {
        options_usage(stdout);
        return 0;
    }
    /* Chosen before MPI_Init: the inproc transport never initialises
     * MPI, so it runs without mpiexec even in a build with MPI. */
#if NBCX_BENCH_MPI
    if (options_transport(argc, argv) == TRANSPORT_MPI)
        return bench_mpi_main(argc, argv);
#endif
    return bench_inproc_main(argc, argv);
}
