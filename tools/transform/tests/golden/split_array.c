/* Issue 18 (life): the elements of a local array indexed only by constants are
 * objects of their own: two allocations in `double *b[2] = { calloc(), calloc() }`
 * do not alias, so writing b[1] overlaps a collective on b[0]. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Request nbcx_req[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int nbcx_flag[4] = {0};
    int rank;
    double src[4];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 4; i++)
        src[i] = rank + i;
    double *b[2] = { calloc(4, sizeof(double)), calloc(4, sizeof(double)) };
    MPI_Iallreduce(src, b[0], 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[0]);
    nbcx_flag[0] = 1;
    for (int i = 0; i < 4; i++)
        b[1][i] = src[i] * 2.0; /* the other board: overlaps */
    double t = b[1][0] + b[1][3];
    if (rank == 0) /* the wait comes before: reads b[0] */ {
        MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
        nbcx_flag[0] = 0;
        printf("%g %g %g\n", b[0][0], b[0][3], t);
    }
    /* negative: c[1] is made an alias of c[0] (constant indices, but written) */
    double *c[2] = { calloc(4, sizeof(double)), calloc(4, sizeof(double)) };
    c[1] = c[0];
    MPI_Iallreduce(src, c[0], 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[1]);
    double u = src[0] + 1.0;
    MPI_Wait(&nbcx_req[1], MPI_STATUS_IGNORE);
    c[1][0] = u; /* writes the receive buffer: the wait comes before */
    if (rank == 0)
        printf("%g %g\n", c[0][0], c[0][1]);
    /* negative: an index that is not a constant merges the elements */
    double *d[2] = { calloc(4, sizeof(double)), calloc(4, sizeof(double)) };
    int k = rank % 1;
    MPI_Iallreduce(src, d[0], 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[2]);
    double v = src[1] + 1.0;
    MPI_Wait(&nbcx_req[2], MPI_STATUS_IGNORE);
    d[k + 1][0] = v; /* d[1], but the analysis cannot tell: the wait comes before */
    if (rank == 0)
        printf("%g %g %g\n", d[0][0], d[0][2], d[1][0]);
    /* negative: &e[0] + 1 reaches e[1] */
    double *e[2] = { calloc(4, sizeof(double)), calloc(4, sizeof(double)) };
    double **pe = &e[0];
    MPI_Iallreduce(src, e[1], 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[3]);
    double w = src[2] + 1.0;
    MPI_Wait(&nbcx_req[3], MPI_STATUS_IGNORE);
    pe[1][0] = w; /* e[1][0]: the wait comes before */
    if (rank == 0)
        printf("%g %g\n", e[1][0], e[1][1]);
    if (nbcx_flag[0]) {
        MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
        nbcx_flag[0] = 0;
    }
    free(b[0]);
    free(b[1]);
    free(c[0]);
    free(d[0]);
    free(d[1]);
    free(e[0]);
    free(e[1]);
    MPI_Finalize();
    return 0;
}
