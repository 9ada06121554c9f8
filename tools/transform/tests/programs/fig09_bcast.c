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
    MPI_Bcast(&mass, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Bcast(&nrho, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(&drho, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    convert_units(&mass, &nrho, &drho);
    double local = mass * nrho * drho * (me + 1), total = 0.0;
    MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("mass %.8e nrho %d drho %.8e total %.8e\n", mass, nrho, drho, total);
    MPI_Finalize();
    return 0;
}
