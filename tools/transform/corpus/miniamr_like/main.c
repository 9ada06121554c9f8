/* miniAMR-like driver: checksums and refinement counts reduced across ranks
 * while the blocks are worked on by functions in other files. */
#include <mpi.h>
#include <stdio.h>

#include "block.h"

int main(int argc, char **argv)
{
    int rank, size, ts;
    double sum_local, sum_global = 0.0, t_comm = 0.0, t0;
    int marks_local, marks_global = 0, total_marks = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    init_blocks(rank);
    for (ts = 0; ts < 10; ts++) {
        sum_local = 0.0;
        for (int b = 0; b < NB; b++)
            sum_local += check_sum(&blocks[b]);
        t0 = timer();
        MPI_Allreduce(&sum_local, &sum_global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (int b = 0; b < NB; b++)
            stencil(&blocks[b]);
        t_comm += timer() - t0;
        marks_local = refine_marks(500.0);
        MPI_Allreduce(&marks_local, &marks_global, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int b = 0; b < NB; b += 2)
            stencil(&blocks[b]);
        total_marks += marks_global;
        if (rank == 0 && ts % 5 == 0)
            printf("ts %d sum %.6e\n", ts, sum_global);
    }
    if (rank == 0)
        printf("marks %d refined %d t>=0 %d\n", total_marks, num_refined, t_comm >= 0.0);
    MPI_Finalize();
    return 0;
}
