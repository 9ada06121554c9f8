/* Paper 004, Fig. 12: the C version of Intel's MPI-3 nonblocking collectives
 * example (J. Tullos): average of one array, scaled second array, its global
 * minimum and maximum, and the sum of a third array. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double sum(const double *a, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += a[i];
    return s;
}

static double min(const double *a, int n)
{
    double m = a[0];
    for (int i = 1; i < n; i++)
        if (a[i] < m)
            m = a[i];
    return m;
}

static double max(const double *a, int n)
{
    double m = a[0];
    for (int i = 1; i < n; i++)
        if (a[i] > m)
            m = a[i];
    return m;
}

static double *scalarMultiply(double *a, double s, int n)
{
    for (int i = 0; i < n; i++)
        a[i] *= s;
    return a;
}

static double *scalarAdd(double *a, double s, int n)
{
    for (int i = 0; i < n; i++)
        a[i] += s;
    return a;
}

int main(int argc, char **argv)
{
    int rank, p;
    const int num_elements = 8;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    double *sub_arr1 = malloc(num_elements * sizeof(double));
    double *sub_arr2 = malloc(num_elements * sizeof(double));
    double *sub_arr3 = malloc(num_elements * sizeof(double));
    double *sumA1temp = malloc(num_elements * sizeof(double));
    double *minA2temp = malloc(num_elements * sizeof(double));
    double *maxA2temp = malloc(num_elements * sizeof(double));
    double *sumA3temp = malloc(num_elements * sizeof(double));
    for (int i = 0; i < num_elements; i++) {
        sub_arr1[i] = (double)(rank * num_elements + i);
        sub_arr2[i] = (double)((rank * 7 + i * 3) % 11) - 5.0;
        sub_arr3[i] = (double)(i % 4);
    }
    double sumA1, avgA1, minA2, maxA2, finalsum;

    MPI_Allreduce(sub_arr1, sumA1temp, num_elements, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    sumA1 = sum(sumA1temp, num_elements);
    avgA1 = sumA1 / (num_elements * p);
    sub_arr2 = scalarMultiply(sub_arr2, avgA1, num_elements);
    MPI_Allreduce(sub_arr2, minA2temp, num_elements, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(sub_arr2, maxA2temp, num_elements, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    sub_arr3 = scalarAdd(sub_arr3, avgA1, num_elements);
    minA2 = min(minA2temp, num_elements);
    maxA2 = max(maxA2temp, num_elements);
    sub_arr3 = scalarMultiply(sub_arr3, (minA2 + maxA2) * 0.5, num_elements);
    MPI_Allreduce(sub_arr3, sumA3temp, num_elements, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    finalsum = sum(sumA3temp, num_elements);

    if (rank == 0)
        printf("avg %.6f min %.6f max %.6f final sum %.6f\n", avgA1, minA2, maxA2, finalsum);
    free(sub_arr1);
    free(sub_arr2);
    free(sub_arr3);
    free(sumA1temp);
    free(minA2temp);
    free(maxA2temp);
    free(sumA3temp);
    MPI_Finalize();
    return 0;
}
