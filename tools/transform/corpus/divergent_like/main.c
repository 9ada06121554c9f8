/* Issue 34's patterns: the root reads and broadcasts the parameters in one
 * branch, the others receive them in another (and use them at once); the
 * time loop reduces while it works, between calls into the other files
 * (timer_start(), getNRanks()); a wrapper called from here and from comm.c. */
#include <mpi.h>
#include <stdio.h>

#include "comm.h"

#define N 64

int main(int argc, char **argv)
{
    int rank, nranks, step;
    int params[3] = {0, 0, 0};
    double dt = 0.0, x[N], f[N], local, global = 0.0, e = 0.0, stats[2], gstats[2];
    MPI_Init(&argc, &argv);
    rank = getMyRank();
    nranks = getNRanks();
    if (rank == 0) {
        params[0] = 12; params[1] = 3; params[2] = 7;
        MPI_Bcast(params, 3, MPI_INT, 0, MPI_COMM_WORLD);
        dt = 0.01 * params[1];
        printf("steps %d every %d\n", params[0], params[2]);
        MPI_Bcast(&dt, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    } else {
        MPI_Bcast(params, 3, MPI_INT, 0, MPI_COMM_WORLD);
        if (params[0] <= 0)
            params[0] = 1;
        MPI_Bcast(&dt, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    for (int i = 0; i < N; i++)
        x[i] = rank + i * 0.01;
    for (step = 0; step < params[0]; step++) {
        local = 0.0;
        for (int i = 0; i < N; i++)
            local += x[i];
        timer_start(0);
        MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        timer_stop(0);
        for (int i = 0; i < N; i++)
            f[i] = -x[i] * dt;
        for (int i = 0; i < N; i++)
            x[i] += f[i] * dt;
        stats[0] = f[0];
        stats[1] = f[N - 1];
        if (getNRanks() > 64)
            stats[1] = 0.0;
        x[0] += global * 1e-6 / nranks;
        sumDouble(stats, gstats, 2);
        for (int i = 1; i < N - 1; i++)
            f[i] = 0.5 * (x[i - 1] + x[i + 1]);
        for (int i = 1; i < N - 1; i++)
            x[i] = 0.9 * x[i] + 0.1 * f[i];
        if (step % params[2] == 0)
            e = energy(x, N);
        if (rank == 0 && step % params[2] == 0)
            printf("step %d global %.6e stats %.6e %.6e e %.6e\n", step, global, gstats[0],
                   gstats[1], e);
    }
    if (rank == 0)
        printf("timed %d\n", timer_total(0) >= 0.0);
    MPI_Finalize();
    return 0;
}
