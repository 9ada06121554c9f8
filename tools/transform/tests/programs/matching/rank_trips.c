/* Loops whose trip counts depend on the rank: every rank makes size - 1
 * broadcasts, rank r r of them from the first loop.  Each call site is under
 * no condition, but the k-th broadcast of a rank may come from either loop:
 * both must be converted alike, and neither made persistent (on 4 ranks rank
 * 0 would init one request, rank 1 two). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, i, v = 0, sum = 0, work = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (i = 0; i < rank; i++) {
        v = i;
        MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
        work += i * 2;
        work -= i;
        sum += v;
    }
    for (i = 0; i < size - 1 - rank; i++) {
        MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
        sum += v;
    }
    int all = 0;
    MPI_Reduce(&sum, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("ranks %d: %d %d\n", size, all, work);
    MPI_Finalize();
    return 0;
}
