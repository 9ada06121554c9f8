/* Safety: a return between the start and the use of the result; the wait
 * must come before it (on that path) and before the use (on the other). */
#include <mpi.h>
#include <stdio.h>

static int step(int x, int *out)
{
    int sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int twice = 2 * x;
    if (x < 0)
        return -1;
    *out = sum + twice;
    return 0;
}

int main(int argc, char **argv)
{
    int rank, r1 = 0, r2 = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int a = step(rank + 1, &r1);
    int b = step(-1, &r2);
    if (rank == 0)
        printf("%d %d %d %d\n", a, r1, b, r2);
    MPI_Finalize();
    return 0;
}
