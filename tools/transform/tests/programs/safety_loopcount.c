/* Safety: a broadcast in a loop whose count changes every iteration must not
 * become persistent; the one with fixed arguments does. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, buf[8] = {0}, fixed[2] = {0, 0}, count = 1, sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 4; i++) {
        if (rank == 0)
            for (int j = 0; j < 8; j++)
                buf[j] = 10 * i + j;
        count = i + 1;
        MPI_Bcast(buf, count, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Bcast(fixed, 2, MPI_INT, 0, MPI_COMM_WORLD);
        for (int j = 0; j < 8; j++)
            sum += buf[j];
    }
    if (rank == 0)
        printf("%d %d %d\n", sum, fixed[0], fixed[1]);
    MPI_Finalize();
    return 0;
}
