/* Safety: a function defined in the file reads the receive buffer through a
 * pointer parameter; its summary must stop the wait before the call, while a
 * call that only touches other memory may overlap. */
#include <mpi.h>
#include <stdio.h>

static double scale(double *v, int n, double f)
{
    for (int i = 0; i < n; i++)
        v[i] *= f;
    return v[0];
}

static double first(const double *p)
{
    return p[0];
}

int main(int argc, char **argv)
{
    MPI_Request nbcx_req[1] = {MPI_REQUEST_NULL};
    int rank;
    double local = 0.0, global = 0.0, work[8];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 8; i++)
        work[i] = i;
    local = rank + 1.0;
    MPI_Iallreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[0]);
    double w = scale(work, 8, 0.5); /* independent: may overlap */
    MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
    double g = first(&global); /* reads the receive buffer: wait before */
    if (rank == 0)
        printf("%g %g\n", w, g);
    MPI_Finalize();
    return 0;
}
