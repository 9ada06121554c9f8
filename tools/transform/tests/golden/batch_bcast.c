/* Issue 18 (md): loops whose body is one collective on element i of an array
 * start all their operations and wait once after the loop (one MPI_Waitall). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { P_DT, P_EPS, P_SIGMA, P_RC, NPARAM };
#define NSUM 3

int main(int argc, char **argv)
{
    MPI_Request nbcx_req[7] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
            MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status nbcx_stat[7];
    int rank;
    double par[NPARAM] = { 0 };
    const double input[NPARAM] = { 0.005, 1.0, 1.5, 2.5 };
    double loc[NSUM], tot[NSUM];
    long ids[NSUM];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        memcpy(par, input, sizeof par);
    for (int p = 0; p < NPARAM; p++)
        MPI_Ibcast(&par[p], 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &nbcx_req[0 + p]);
    MPI_Waitall(4, nbcx_req, nbcx_stat);
    double scale = par[P_DT] * par[P_SIGMA];
    for (int i = 0; i < NSUM; i++)
        loc[i] = (rank + 1) * (i + 1) * scale;
    int i;
    for (i = 0; i < NSUM; i++) {
        MPI_Iallreduce(&loc[i], &tot[i], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[4 + i]);
    }
    for (int k = 1; k <= NSUM; k++)
        ids[k - 1] = rank == 0 ? 100 * k : 0;
    for (int k = 1; k <= NSUM; k++)
        MPI_Bcast(&ids[k - 1], 1, MPI_LONG, 0, MPI_COMM_WORLD);
    double other = par[P_EPS] + par[P_RC];
    MPI_Waitall(3, &nbcx_req[4], &nbcx_stat[4]);
    if (rank == 0)
        printf("%g %g %g %g %g %ld %ld %ld\n", other, par[P_SIGMA], tot[0], tot[1], tot[2],
               ids[0], ids[1], ids[2]);
    MPI_Finalize();
    return 0;
}
