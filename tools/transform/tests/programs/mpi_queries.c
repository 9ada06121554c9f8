/* Issue 19.4: MPI's own query functions and its clock between a collective and
 * the use of its result.  The allreduce's wait moves past MPI_Wtime,
 * MPI_Comm_size, MPI_Get_version and MPI_Query_thread; the barrier before a
 * clock read stays blocking (it is there to time). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size = 0, version = 0, subversion = 0, level = 0;
    double x = 0.0, sum = 0.0, t0, t1, work = 0.0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int step = 0; step < 5; step++) {
        x = (double)(rank + step);
        MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        t1 = MPI_Wtime();
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        MPI_Get_version(&version, &subversion);
        MPI_Query_thread(&level);
        for (int i = 0; i < 1000; i++)
            work += (double)((i * step) % 7) / (double)size;
        work += sum;
    }
    if (rank == 0)
        printf("work %.3f MPI >= 3 %d level ok %d time ok %d\n", work, version >= 3,
               level >= MPI_THREAD_SINGLE, t1 >= t0);
    MPI_Finalize();
    return 0;
}
