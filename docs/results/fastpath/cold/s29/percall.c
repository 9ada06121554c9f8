/* percall.c - one small collective started and waited for N times in a
 * row, nbcx or native (docs/results/fastpath/cold/s29/README.md):
 *
 *   mpiexec -n 2 ./percall N barrier|bcast|allgather NATIVE(0|1)
 *
 * Prints the time per operation on rank 0; under percall-cg.sh, callgrind
 * counts rank 0's instructions inside the start and wait calls. */
#include <mpi.h>
#include <nbcx.h>
#include <nbcx_mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int pv;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &pv);
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    const char *op = argc > 2 ? argv[2] : "barrier";
    int nat = argc > 3 ? atoi(argv[3]) : 0;
    nbcx_comm c;
    nbcx_comm_from_mpi(MPI_COMM_WORLD, &c);
    char sb[64] = { 0 }, rb[128];
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        if (nat) {
            MPI_Request r;
            if (!strcmp(op, "barrier"))
                MPI_Ibarrier(MPI_COMM_WORLD, &r);
            else if (!strcmp(op, "bcast"))
                MPI_Ibcast(sb, 8, MPI_BYTE, 0, MPI_COMM_WORLD, &r);
            else
                MPI_Iallgather(sb, 8, MPI_BYTE, rb, 8, MPI_BYTE, MPI_COMM_WORLD,
                               &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            nbcx_request r;
            if (!strcmp(op, "barrier"))
                nbcx_ibarrier(c, &r);
            else if (!strcmp(op, "bcast"))
                nbcx_ibcast(sb, 8, NBCX_BYTE, 0, c, &r);
            else
                nbcx_iallgather(sb, 8, NBCX_BYTE, rb, 8, NBCX_BYTE, c, &r);
            nbcx_wait(&r);
        }
    }
    t = MPI_Wtime() - t;
    int rk;
    MPI_Comm_rank(MPI_COMM_WORLD, &rk);
    if (!rk)
        printf("%s %s %.3f us/op\n", nat ? "native" : "nbcx", op, t / n * 1e6);
    nbcx_comm_free(&c);
    MPI_Finalize();
    return 0;
}
