/* PRK-like: a barrier in the first iteration only, a barrier whose wait would
 * follow it at once, and an allreduce in every iteration. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int iter, rank, iterations = 10;
    double t0 = 0.0, x = 1.0, y = 0.0, z = 0.0, acc = 0.0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (iter = 0; iter <= iterations; iter++) {
        if (iter == 1) {
            MPI_Barrier(MPI_COMM_WORLD);
            acc = 0.0;
        }
        x = x * 1.01 + rank;
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        z = z * 0.5 + 1.0;
        acc += y;
    }
    if (rank == 0)
        printf("%.6f %.6f %d\n", acc, z, t0 > 0.0);
    MPI_Finalize();
    return 0;
}
