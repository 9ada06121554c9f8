/* A class of the program's header with a member that broadcasts: C++ headers
 * are not analysed, so main.cpp's broadcast, which it can match, stays
 * blocking (before: MPI_Ibcast on the root, MPI_Bcast on the others). */
#include <mpi.h>
struct Comm {
    void bcast(int *p, int n) { MPI_Bcast(p, n, MPI_INT, 0, MPI_COMM_WORLD); }
};
