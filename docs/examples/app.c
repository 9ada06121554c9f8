/* A plain MPI program (no nbcx header): an MPI_Iallreduce and a ring of
 * point-to-point messages completed by one MPI_Waitall. The README's
 * quick start runs it unchanged under libnbcx-pmpi (nbcx-run). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    double x = rank + 1, sum = 0;
    int mine = 100 + rank, token = -1;
    MPI_Request req[3];
    MPI_Iallreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(&token, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &req[1]);
    MPI_Isend(&mine, 1, MPI_INT, right, 0, MPI_COMM_WORLD, &req[2]);
    /* ... computation overlapping the allreduce ... */
    MPI_Waitall(3, req, MPI_STATUSES_IGNORE);
    printf("rank %d: sum %g, token %d from rank %d\n", rank, sum, token, left);
    MPI_Finalize();
    return 0;
}
