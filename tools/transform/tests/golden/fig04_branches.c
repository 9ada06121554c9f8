/* Paper 004, Fig. 4: broadcasts on mutually exclusive paths share one request;
 * the wait after the if is flag-guarded (Section 3.4). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Request nbcx_req[1] = {MPI_REQUEST_NULL};
    int rank, size;
    int a[4] = {0, 0, 0, 0}, b[4] = {0, 0, 0, 0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int round = 0; round < 3; round++) {
        int cond = round % 2;
        if (rank == 0)
            for (int i = 0; i < 4; i++) {
                a[i] = 10 * round + i;
                b[i] = 100 * round - i;
            }
        if (cond)
            MPI_Ibcast(a, 4, MPI_INT, 0, MPI_COMM_WORLD, &nbcx_req[0]);
        else
            MPI_Ibcast(b, 4, MPI_INT, 0, MPI_COMM_WORLD, &nbcx_req[0]);
        int work = 0;
        for (int i = 0; i < 1000; i++)
            work += (i * round) % 7;
        if (rank != 0) {
            MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
        }
        if (rank == size - 1)
            printf("round %d: a = %d %d %d %d, b = %d %d %d %d, work %d\n", round, a[0], a[1], a[2],
                   a[3], b[0], b[1], b[2], b[3], work);
        if (rank == 0) {
            MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
        }
    }
    MPI_Finalize();
    return 0;
}
