/* Paper 004, Fig. 9: three independent broadcasts (miniMD's EAM setup); they
 * can all be in flight at once and complete with one MPI_Waitall (Fig. 10). */
#include <mpi.h>
#include <stdio.h>

/* Converts the potential's parameters to internal units (writes all three). */
static void convert_units(double *mass, int *nrho, double *drho)
{
    *mass *= 1.0364269e-4;
    *nrho += 1;
    *drho /= 2.0;
}

int main(int argc, char **argv)
{
    MPI_Request nbcx_req[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status nbcx_stat[4];
    int me;
    double mass = 0.0, drho = 0.0;
    int nrho = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) {
        mass = 63.546;
        nrho = 500;
        drho = 5.0100200400801306e-04;
    }
    MPI_Ibcast(&mass, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &nbcx_req[0]);
    MPI_Ibcast(&nrho, 1, MPI_INT, 0, MPI_COMM_WORLD, &nbcx_req[1]);
    MPI_Ibcast(&drho, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &nbcx_req[2]);
    MPI_Waitall(3, nbcx_req, nbcx_stat);
    convert_units(&mass, &nrho, &drho);
    double local = mass * nrho * drho * (me + 1), total = 0.0;
    MPI_Ireduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &nbcx_req[3]);
    MPI_Wait(&nbcx_req[3], MPI_STATUS_IGNORE);
    if (me == 0)
        printf("mass %.8e nrho %d drho %.8e total %.8e\n", mass, nrho, drho, total);
    MPI_Finalize();
    return 0;
}
