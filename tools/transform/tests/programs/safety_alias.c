/* Safety: a write through an alias of the receive buffer must come after the
 * wait (the alias is only known through points-to analysis). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank;
    double sbuf[4], rbuf[4], other[4];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double *alias = rbuf + 1;
    double *p = other;
    for (int i = 0; i < 4; i++)
        sbuf[i] = rank + i;
    MPI_Allreduce(sbuf, rbuf, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    p[0] = 1.0; /* independent: other */
    alias[1] = -1.0; /* rbuf[2]: must wait before this */
    if (rank == 0)
        printf("%g %g %g %g %g\n", rbuf[0], rbuf[1], rbuf[2], rbuf[3], other[0]);
    MPI_Finalize();
    return 0;
}
