/* Safety: a collective that comes from a macro expansion is left alone; the
 * one written out is converted. */
#include <mpi.h>
#include <stdio.h>

#define SUM_ALL(in, out) MPI_Allreduce(in, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD)

int main(int argc, char **argv)
{
    MPI_Request nbcx_req[1] = {MPI_REQUEST_NULL};
    int rank, x, y = 0, z = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    x = rank + 1;
    SUM_ALL(&x, &y);
    MPI_Iallreduce(&x, &z, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &nbcx_req[0]);
    int w = x * 3;
    MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
    if (rank == 0)
        printf("%d %d %d\n", y, z, w);
    MPI_Finalize();
    return 0;
}
