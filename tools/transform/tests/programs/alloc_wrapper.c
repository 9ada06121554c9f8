/* Precision: vectors made by an allocation helper are distinct objects, so
 * writing one while another is being reduced does not stop the overlap. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *new_vector(int n)
{
    double *v = malloc(sizeof(double) * (size_t)n);
    if (v == NULL)
        abort();
    memset(v, 0, sizeof(double) * (size_t)n);
    return v;
}

int main(int argc, char **argv)
{
    int rank;
    const int n = 16;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double *a = new_vector(n), *sum = new_vector(n), *b = new_vector(n);
    for (int i = 0; i < n; i++)
        a[i] = rank + i;
    MPI_Allreduce(a, sum, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++)
        b[i] = 2.0 * i; /* another vector: overlaps */
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += sum[i] * b[i]; /* the result: wait before */
    if (rank == 0)
        printf("%.1f\n", s);
    free(a);
    free(sum);
    free(b);
    MPI_Finalize();
    return 0;
}
