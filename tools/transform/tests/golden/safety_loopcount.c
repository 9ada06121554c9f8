/* Safety: a broadcast in a loop whose count changes every iteration must not
 * become persistent; the one with fixed arguments does. */
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
    MPI_Request nbcx_req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int rank, buf[8] = {0}, fixed[2] = {0, 0}, count = 1, sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#if NBCX_PERSISTENT == 4
    MPI_Bcast_init(fixed, 2, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &nbcx_req[1]);
#elif NBCX_PERSISTENT
    MPIX_Bcast_init(fixed, 2, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &nbcx_req[1]);
#endif
    for (int i = 0; i < 4; i++) {
        if (rank == 0)
            for (int j = 0; j < 8; j++)
                buf[j] = 10 * i + j;
        count = i + 1;
        MPI_Ibcast(buf, count, MPI_INT, 0, MPI_COMM_WORLD, &nbcx_req[0]);
        MPI_Wait(&nbcx_req[1], MPI_STATUS_IGNORE);
#if NBCX_PERSISTENT
        MPI_Start(&nbcx_req[1]);
#else
        MPI_Ibcast(fixed, 2, MPI_INT, 0, MPI_COMM_WORLD, &nbcx_req[1]);
#endif
        if (rank != 0) {
            MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
        }
        for (int j = 0; j < 8; j++)
            sum += buf[j];
        if (rank == 0) {
            MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
        }
    }
    MPI_Wait(&nbcx_req[1], MPI_STATUS_IGNORE);
#if NBCX_PERSISTENT
    MPI_Request_free(&nbcx_req[1]);
#endif
    if (rank == 0)
        printf("%d %d %d\n", sum, fixed[0], fixed[1]);
    MPI_Finalize();
    return 0;
}
