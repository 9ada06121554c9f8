/* PRK-like stencil: parameters broadcast, a barrier in the first iteration
 * only (timing starts there), getenv between collectives, a norm reduced at
 * the end and a residual reduced in every iteration. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 200

static double in[N], out[N];

int main(int argc, char **argv)
{
    int my_ID, Num_procs, iterations = 0, root = 0;
    double local_time = 0.0, resid = 0.0, local_resid, norm = 0.0, local_norm = 0.0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &my_ID);
    MPI_Comm_size(MPI_COMM_WORLD, &Num_procs);
    if (my_ID == root)
        iterations = 30;
    MPI_Bcast(&iterations, 1, MPI_INT, root, MPI_COMM_WORLD);
    const char *mode = getenv("PRK_MODE");
    int verbose = mode != NULL && strcmp(mode, "verbose") == 0;
    for (int i = 0; i < N; i++)
        in[i] = (double)((i * 7 + my_ID) % 13);
    for (int iter = 0; iter <= iterations; iter++) {
        if (iter == 1) {
            MPI_Barrier(MPI_COMM_WORLD);
            local_time = MPI_Wtime();
        }
        for (int i = 1; i < N - 1; i++)
            out[i] += 0.25 * (in[i - 1] + in[i + 1]) - 0.5 * in[i];
        local_resid = 0.0;
        for (int i = 0; i < N; i++)
            local_resid += fabs(out[i]);
        MPI_Allreduce(&local_resid, &resid, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < N; i++)
            in[i] += 1.0;
        if (verbose && my_ID == root)
            printf("iter %d\n", iter);
        if (resid < 0.0)
            break;
    }
    local_time = MPI_Wtime() - local_time;
    for (int i = 0; i < N; i++)
        local_norm += fabs(out[i]);
    MPI_Reduce(&local_norm, &norm, 1, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
    double avg = 0; for (int i = 0; i < N; i++) avg += in[i]; avg /= N;
    if (my_ID == root)
        printf("norm %.6e resid %.6e avg %.3f time>=0 %d\n", norm, resid, avg, local_time >= 0.0);
    MPI_Finalize();
    return 0;
}
