/* Issue 19.4: MPI's own query functions and its clock between a collective and
 * the use of its result.  The allreduce's wait moves past MPI_Wtime,
 * MPI_Comm_size, MPI_Get_version and MPI_Query_thread; the barrier before a
 * clock read stays blocking (it is there to time). */
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
    MPI_Request nbcx_req[1] = {MPI_REQUEST_NULL};
    int rank, size = 0, version = 0, subversion = 0, level = 0;
    double x = 0.0, sum = 0.0, t0, t1, work = 0.0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
#if NBCX_PERSISTENT == 4
    MPI_Allreduce_init(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &nbcx_req[0]);
#elif NBCX_PERSISTENT
    MPIX_Allreduce_init(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &nbcx_req[0]);
#endif
    for (int step = 0; step < 5; step++) {
        x = (double)(rank + step);
#if NBCX_PERSISTENT
        MPI_Start(&nbcx_req[0]);
#else
        MPI_Iallreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[0]);
#endif
        t1 = MPI_Wtime();
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        MPI_Get_version(&version, &subversion);
        MPI_Query_thread(&level);
        for (int i = 0; i < 1000; i++)
            work += (double)((i * step) % 7) / (double)size;
        MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
        work += sum;
    }
#if NBCX_PERSISTENT
    MPI_Request_free(&nbcx_req[0]);
#endif
    if (rank == 0)
        printf("work %.3f MPI >= 3 %d level ok %d time ok %d\n", work, version >= 3,
               level >= MPI_THREAD_SINGLE, t1 >= t0);
    MPI_Finalize();
    return 0;
}
