/* See comm.hpp. */
#include <cstdio>
#include "comm.hpp"

int main(int argc, char **argv)
{
    int rank, p[4] = {0, 0, 0, 0};
    double w[8] = {0};
    Comm c;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        p[0] = 7; p[1] = 8; p[2] = 9; p[3] = 10;
        MPI_Bcast(p, 4, MPI_INT, 0, MPI_COMM_WORLD); /* root */
        for (int i = 0; i < 8; i++)
            w[i] = 0.5 * i;
        w[0] += w[7];
    } else {
        c.bcast(p, 4);
    }
    std::printf("rank %d p %d w0 %g\n", rank, p[0], w[0]);
    MPI_Finalize();
    return 0;
}
