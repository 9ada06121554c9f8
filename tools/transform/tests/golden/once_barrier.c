/* PRK-like: a barrier in the first iteration only, a barrier whose wait would
 * follow it at once, and an allreduce in every iteration. */
#include <mpi.h>
/* nbcx-transform: NBCX_PERSISTENT selects the persistent collectives: 4 for the
 * MPI-4 names, 1 for Open MPI 4's MPIX_*_init (mpi-ext.h), 0 for the nonblocking
 * forms where there are none or they are unreliable (MPICH before 4.3 returns
 * stale data from some, e.g. MPI_Allgather_init, MPI_Gather_init). */
#ifndef NBCX_PERSISTENT
#if MPI_VERSION >= 4 && !(defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40300000)
#define NBCX_PERSISTENT 4
#elif defined(OPEN_MPI)
#include <mpi-ext.h>
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
#define NBCX_PERSISTENT 1
#else
#define NBCX_PERSISTENT 0
#endif
#else
#define NBCX_PERSISTENT 0
#endif
#endif
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Request nbcx_req[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int nbcx_flag[3] = {0};
    int iter, rank, iterations = 10;
    double t0 = 0.0, x = 1.0, y = 0.0, z = 0.0, acc = 0.0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Ibarrier(MPI_COMM_WORLD, &nbcx_req[0]);
    MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
    t0 = MPI_Wtime();
    for (iter = 0; iter <= iterations; iter++) {
        if (iter == 1) {
            MPI_Ibarrier(MPI_COMM_WORLD, &nbcx_req[1]);
            nbcx_flag[1] = 1;
            acc = 0.0;
        }
        x = x * 1.01 + rank;
        if (nbcx_flag[1]) {
            MPI_Wait(&nbcx_req[1], MPI_STATUS_IGNORE);
            nbcx_flag[1] = 0;
        }
#if NBCX_PERSISTENT
        if (nbcx_req[2] == MPI_REQUEST_NULL) {
#if NBCX_PERSISTENT == 4
            MPI_Allreduce_init(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &nbcx_req[2]);
#else
            MPIX_Allreduce_init(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &nbcx_req[2]);
#endif
        }
        MPI_Start(&nbcx_req[2]);
#else
        MPI_Iallreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[2]);
#endif
        z = z * 0.5 + 1.0;
        MPI_Wait(&nbcx_req[2], MPI_STATUS_IGNORE);
        acc += y;
    }
#if NBCX_PERSISTENT
    if (nbcx_req[2] != MPI_REQUEST_NULL) {
        MPI_Request_free(&nbcx_req[2]);
    }
#endif
    if (rank == 0)
        printf("%.6f %.6f %d\n", acc, z, t0 > 0.0);
    MPI_Finalize();
    return 0;
}
