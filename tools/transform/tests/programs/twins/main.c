#include <mpi.h>
#include <stdio.h>
#include "par.h"

int main(int argc, char **argv)
{
    int rank;
    double v[4], s[2], t[2] = {0.0, 0.0}, w = 0.0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 4; i++)
        v[i] = rank + i;
    s[0] = rank;
    s[1] = 1.0;
    sum_all(s, t, 2);
    for (int i = 0; i < 4; i++)
        w += v[i];
    double n = norm2(v, 4);
    if (rank == 0)
        printf("%.1f %.1f %.1f %.1f\n", t[0], t[1], w, n);
    MPI_Finalize();
    return 0;
}
