/* A statement, a loop and another statement on one line after the collective. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Request nbcx_req[1] = {MPI_REQUEST_NULL};
    double s[4] = {1, 2, 3, 4}, r[4];
    int i, n = 4, rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Iallreduce(s, r, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[0]);
    double avg = 0; MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE); for (i = 0; i < n; i++) avg += r[i]; avg /= n;
    if (rank == 0)
        printf("%f\n", avg);
    MPI_Finalize();
    return 0;
}
