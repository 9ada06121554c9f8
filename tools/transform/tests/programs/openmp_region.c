/* Issue 34: OpenMP regions in a file transformed without -fopenmp (the pragmas
 * are then not parsed).  Before, the wait of the first allreduce went into the
 * parallel region, before the read of y: every thread called MPI_Wait on the
 * one request (and threads other than the main one called MPI under
 * MPI_THREAD_FUNNELED).  Now a wait never goes into the statement of an
 * "#pragma omp" line: the first one comes before the pragma, the second (whose
 * buffers the region does not touch) after the region. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int provided, rank;
    double x, y = 0, z = 0, w = 0, a[64], b[64];
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    x = rank + 1.0;
    for (int i = 0; i < 64; i++)
        a[i] = i;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    z = x * 2;
#pragma omp parallel
    {
        for (int i = 0; i < 64; i++)
            b[i] = 2 * a[i];
#pragma omp single
        a[0] = b[1] + y;
    }
    MPI_Allreduce(&z, &w, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#pragma omp parallel for
    for (int i = 0; i < 64; i++)
        b[i] = a[i] + 1;
    printf("%d: %.1f %.1f %.1f %.1f\n", rank, y, w, a[0], b[63]);
    MPI_Finalize();
    return 0;
}
