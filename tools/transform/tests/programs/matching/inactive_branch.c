/* A collective in a preprocessor branch this configuration does not
 * compile (as the apps' blocking files keep their nbcx variant under
 * #ifndef APP_TRANSFORM_PARSE): the analysis never sees it, so it is no
 * call site, and the check must not count it as a blocking call left
 * beside the converted ones. */
#include <mpi.h>
#include <stdio.h>

#ifndef ONLY_ACTIVE
static double other_path(double x)
{
    double y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return y;
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double x = rank + 1, sum = 0, work[64], acc = 0;
    if (rank == 0) { /* a rank-dependent branch: the group is checked */
        MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < 64; i++)
            work[i] = i * x;
        for (int i = 0; i < 64; i++)
            acc += work[i];
    } else {
        MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    printf("rank %d: %g %g\n", rank, sum, acc);
    MPI_Finalize();
    return 0;
}
