/*
 * nbcx-start-cost - what starting a small collective costs the caller:
 * the time spent inside the start call of an 8-byte (one double, sum)
 * allreduce, for
 *   nbcx persistent   nbcx_allreduce_init once, then nbcx_start
 *   nbcx nonblocking  nbcx_iallreduce (schedule from the cache after the
 *                     first call)
 *   nbcx uncached     nbcx_iallreduce with NBCX_SCHED_CACHE=0 semantics,
 *                     i.e. a new schedule built every call (a fresh
 *                     buffer address each call defeats the cache)
 *   native            MPI_Iallreduce
 *   native persistent MPI_Allreduce_init + MPI_Start (MPI 4 only)
 * Each variant runs REPS times (start, then wait outside the timed part);
 * the table gives the median and the 10th/90th percentiles over ranks'
 * repetitions, in microseconds, from one run, variants interleaved.
 *
 *   mpiexec -n 2 nbcx-start-cost [REPS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbcx_mpi.h"
#include "../common/tool_args.h"

enum { NBCX_PERSISTENT, NBCX_NONBLOCKING, NBCX_UNCACHED, NATIVE,
       NATIVE_PERSISTENT, NVARIANTS };
static const char *const names[NVARIANTS] = {
    "nbcx persistent (nbcx_start)", "nbcx nonblocking (cached schedule)",
    "nbcx nonblocking (new schedule)", "native MPI_Iallreduce",
    "native persistent (MPI_Start)"};

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const char usage[] =
"Usage: mpiexec -n P nbcx-start-cost [REPS]\n"
"\n"
"What starting a small collective costs the caller: the time inside the\n"
"start call of an 8-byte allreduce (one double, sum), REPS times per\n"
"variant (default 2000, at least 10), variants interleaved:\n"
"  nbcx persistent    nbcx_allreduce_init once, then nbcx_start\n"
"  nbcx nonblocking   nbcx_iallreduce, schedule from the cache\n"
"  nbcx uncached      nbcx_iallreduce with a new schedule every call\n"
"  native             MPI_Iallreduce\n"
"  native persistent  MPI_Allreduce_init + MPI_Start (MPI 4 only)\n"
"Prints the median and the 10th/90th percentiles over the ranks'\n"
"repetitions, in microseconds.\n"
"\n"
"Options:\n"
"  -h, --help         this text\n"
"  --version          the version of nbcx\n";

int main(int argc, char **argv)
{
    /* Before MPI_Init: answered without mpiexec. */
    nbcx_tool_version(argc, argv, "nbcx-start-cost");
    if (nbcx_tool_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return 0;
    }
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int reps = argc > 1 ? atoi(argv[1]) : 2000;
    if (reps < 10)
        reps = 10;

    nbcx_comm comm;
    if (nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm) != NBCX_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    double in = rank, out = 0;
    /* A ring of buffers: each uncached call uses an address not seen in
     * the last 64 calls, more than the cache holds. */
    enum { RING = 64 };
    double *ring = calloc(RING, sizeof *ring);
    double *t[NVARIANTS];
    for (int v = 0; v < NVARIANTS; v++)
        t[v] = calloc((size_t)reps, sizeof **t);
    if (!ring || !t[NVARIANTS - 1])
        MPI_Abort(MPI_COMM_WORLD, 2);

    nbcx_request preq;
    if (nbcx_allreduce_init(&in, &out, 1, NBCX_DOUBLE, NBCX_SUM, comm,
                            &preq) != NBCX_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int have_native_persistent = 0;
#if MPI_VERSION >= 4
    MPI_Request npreq;
    have_native_persistent =
        MPI_Allreduce_init(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &npreq) == MPI_SUCCESS;
#endif

    for (int k = -10; k < reps; k++) { /* 10 warm-up rounds */
        for (int v = 0; v < NVARIANTS; v++) {
            if (v == NATIVE_PERSISTENT && !have_native_persistent)
                continue;
            nbcx_request req = NBCX_REQUEST_NULL;
            MPI_Request mreq = MPI_REQUEST_NULL;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            switch (v) {
            case NBCX_PERSISTENT: nbcx_start(&preq); break;
            case NBCX_NONBLOCKING:
                nbcx_iallreduce(&in, &out, 1, NBCX_DOUBLE, NBCX_SUM, comm,
                                &req);
                break;
            case NBCX_UNCACHED:
                nbcx_iallreduce(&in, &ring[(k + 10) % RING], 1, NBCX_DOUBLE,
                                NBCX_SUM, comm, &req);
                break;
            case NATIVE:
                MPI_Iallreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM,
                               MPI_COMM_WORLD, &mreq);
                break;
#if MPI_VERSION >= 4
            case NATIVE_PERSISTENT: MPI_Start(&npreq); break;
#endif
            default: break;
            }
            double dt = MPI_Wtime() - t0;
            if (v == NBCX_PERSISTENT)
                nbcx_wait(&preq);
            else if (v == NATIVE)
                MPI_Wait(&mreq, MPI_STATUS_IGNORE);
#if MPI_VERSION >= 4
            else if (v == NATIVE_PERSISTENT)
                MPI_Wait(&npreq, MPI_STATUS_IGNORE);
#endif
            else
                nbcx_wait(&req);
            if (k >= 0)
                t[v][k] = dt;
        }
    }

    char info[512];
    nbcx_info(info, sizeof info);
    if (rank == 0)
        printf("# nbcx-start-cost: 8-byte allreduce (1 double, sum), %d "
               "ranks, %d repetitions; time inside the start call, us\n"
               "# %s\n# %-36s %8s %8s %8s\n", size, reps, info, "variant",
               "p10", "median", "p90");
    for (int v = 0; v < NVARIANTS; v++) {
        if (v == NATIVE_PERSISTENT && !have_native_persistent)
            continue;
        /* every rank's repetitions together */
        double *all = rank == 0 ? malloc(sizeof *all * (size_t)reps *
                                         (size_t)size)
                                : NULL;
        MPI_Gather(t[v], reps, MPI_DOUBLE, all, reps, MPI_DOUBLE, 0,
                   MPI_COMM_WORLD);
        if (rank == 0) {
            size_t n = (size_t)reps * (size_t)size;
            qsort(all, n, sizeof *all, cmp);
            printf("  %-36s %8.2f %8.2f %8.2f\n", names[v],
                   all[n / 10] * 1e6, all[n / 2] * 1e6,
                   all[n * 9 / 10] * 1e6);
        }
        free(all);
        free(t[v]);
    }
    nbcx_request_free(&preq);
#if MPI_VERSION >= 4
    if (have_native_persistent)
        MPI_Request_free(&npreq);
#endif
    free(ring);
    nbcx_comm_free(&comm);
    MPI_Finalize();
    return 0;
}
