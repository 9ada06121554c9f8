/* Issue 34: OpenMP's timer and queries (omp.h) touch no memory of the
 * program: the allreduce overlaps the timed loop; the wait comes before the
 * sum is read. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank;
    double x, sum = 0, a[64];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    x = rank + 1.5;
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double t0 = omp_get_wtime();
    int nt = omp_get_max_threads();
    for (int i = 0; i < 64; i++)
        a[i] = i * x;
    double t1 = omp_get_wtime();
    printf("%d: %.3f %.3f %d\n", rank, sum, a[63], (t1 - t0) >= 0 && nt > 0);
    MPI_Finalize();
    return 0;
}
