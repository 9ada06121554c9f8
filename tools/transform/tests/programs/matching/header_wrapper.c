/* The root broadcasts in main, with work after it; the other ranks through a
 * static inline wrapper of header_wrapper.h, which the tool does not rewrite.
 * The root's MPI_Bcast became MPI_Ibcast and the others' stayed blocking: the
 * program hung.  It must stay blocking (the header's call cannot change); the
 * Allreduce, whose only other call is in a header function nothing calls, is
 * converted. */
#include <stdio.h>
#include "header_wrapper.h"

int main(int argc, char **argv)
{
    int rank, i, p[4] = {0, 0, 0, 0};
    double w[8] = {0}, v, t = 0.0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        p[0] = 7; p[1] = 8; p[2] = 9; p[3] = 10;
        MPI_Bcast(p, 4, MPI_INT, 0, MPI_COMM_WORLD); /* root */
        for (i = 0; i < 8; i++)
            w[i] = 0.5 * i;
        w[0] += w[7];
    } else {
        bcast_ints(p, 4);
    }
    v = rank + 1.0;
    MPI_Allreduce(&v, &t, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (i = 0; i < 8; i++)
        w[i] += 1.0;
    printf("rank %d p %d %d %d %d w0 %g t %g\n", rank, p[0], p[1], p[2], p[3], w[0], t);
    MPI_Finalize();
    return 0;
}
