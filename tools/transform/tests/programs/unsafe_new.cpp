// HPCCG-like: a receive buffer from C++ new, read and deleted after the call.
#include <mpi.h>
#include <cstdio>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *tmp_buffer = new int[size];
    int mine = rank;
    MPI_Allgather(&mine, 1, MPI_INT, tmp_buffer, 1, MPI_INT, MPI_COMM_WORLD);
    int first = tmp_buffer[rank];
    std::printf("%d\n", first);
    delete[] tmp_buffer;
    MPI_Finalize();
    return 0;
}
