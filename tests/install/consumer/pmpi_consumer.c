/* A plain MPI program for tests/install/check-install: run with the
 * installed libnbcx-pmpi (linked or preloaded), its MPI_Iallreduce runs
 * on nbcx. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, sum = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Request r;
    MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    int ok = sum == size * (size - 1) / 2;
    if (!ok)
        fprintf(stderr, "pmpi_consumer: rank %d: sum %d\n", rank, sum);
    MPI_Finalize();
    return ok ? 0 : 1;
}
