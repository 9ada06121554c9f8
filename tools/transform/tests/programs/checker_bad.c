/* Wrong on purpose (for the checker's own test): reads the result and writes
 * the send buffer before the wait. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    double s = 1.0, r = 0.0, early;
    MPI_Request q;
    MPI_Init(&argc, &argv);
    MPI_Iallreduce(&s, &r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
    early = r;
    s = 5.0;
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    printf("%f %f\n", r, early);
    MPI_Finalize();
    return 0;
}
