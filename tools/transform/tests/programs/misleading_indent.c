/* A statement, a loop and another statement on one line after the collective. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    double s[4] = {1, 2, 3, 4}, r[4];
    int i, n = 4, rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(s, r, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double avg = 0; for (i = 0; i < n; i++) avg += r[i]; avg /= n;
    if (rank == 0)
        printf("%f\n", avg);
    MPI_Finalize();
    return 0;
}
