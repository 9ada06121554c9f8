/* miniAMR-like: the work between a collective and the use of its result is
 * in other files (physics.c, timer.c); getenv and a timer in between. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "physics.h"

int main(int argc, char **argv)
{
    int rank, step;
    double grid[64], local = 0.0, global = 0.0, t0, t1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    init_grid(grid, 64, rank);
    const char *verbose = NULL;
    for (step = 0; step < 5; step++) {
        local = grid_sum(grid, 64);
        MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        t0 = timer();
        verbose = getenv("NBCX_VERBOSE");
        relax(grid, 64);
        t1 = timer();
        total_time += t1 - t0;
        grid[0] += global * 1e-3;
    }
    if (rank == 0)
        printf("%.6f %s\n", grid[0] + grid[63], verbose ? "v" : "-");
    MPI_Finalize();
    return 0;
}
