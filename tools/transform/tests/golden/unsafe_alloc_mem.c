/* A receive buffer from MPI_Alloc_mem: read right after the collective. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Request nbcx_req[1] = {MPI_REQUEST_NULL};
    int rank, size;
    int *buf;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Alloc_mem((MPI_Aint)(size * (int)sizeof(int)), MPI_INFO_NULL, &buf);
    int mine = rank + 1;
    MPI_Iallgather(&mine, 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD, &nbcx_req[0]);
    MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
    int x = buf[rank];
    int y = x * 2;
    if (rank == 0)
        printf("rank %d: %d %d\n", rank, x, y);
    MPI_Free_mem(buf);
    MPI_Finalize();
    return 0;
}
