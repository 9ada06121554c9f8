// HPCCG-like: a receive buffer from new[], read and deleted after the call.
// nbcx-transform analyses C++: the wait goes before the read (issue 34).
#include <mpi.h>
#include <cstdio>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *tmp_buffer = new int[size];
    int mine = rank * 3 + 1;
    MPI_Allgather(&mine, 1, MPI_INT, tmp_buffer, 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int i = 0; i < size; i++)
        total += tmp_buffer[i];
    delete[] tmp_buffer;
    if (rank == 0)
        std::printf("total %d\n", total);
    MPI_Finalize();
    return 0;
}
