/* iter.c - the cost of one poll: 10^6 MPI_Test calls on a native
 * MPI_Ibarrier, nbcx_test calls on an nbcx_ibarrier, and MPI_Test calls on
 * an MPI_Irecv, while rank 1 has not started yet (docs/results/fastpath/
 * cold/s29/README.md). mpiexec -n 2 ./iter */
#include <mpi.h>
#include <nbcx.h>
#include <nbcx_mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int pv; MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &pv);
    int n = 1000000, rk; MPI_Comm_rank(MPI_COMM_WORLD, &rk);
    nbcx_comm c; nbcx_comm_from_mpi(MPI_COMM_WORLD, &c);
    for (int round = 0; round < 3; round++) {
        MPI_Request r; nbcx_request q; int flag, x = 0;
        if (rk == 0) {
            MPI_Ibarrier(MPI_COMM_WORLD, &r);
            double t = MPI_Wtime();
            for (int i = 0; i < n; i++) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            double tn = MPI_Wtime() - t;
            nbcx_ibarrier(c, &q);
            t = MPI_Wtime();
            for (int i = 0; i < n; i++) nbcx_test(&q, &flag);
            double tb = MPI_Wtime() - t;
            MPI_Request rr; MPI_Irecv(&x, 0, MPI_INT, 1, 5, MPI_COMM_WORLD, &rr);
            t = MPI_Wtime();
            for (int i = 0; i < n; i++) MPI_Test(&rr, &flag, MPI_STATUS_IGNORE);
            double tp = MPI_Wtime() - t;
            printf("per test: native ibarrier %.1f ns, nbcx %.1f ns, MPI_Test irecv %.1f ns\n", tn/n*1e9, tb/n*1e9, tp/n*1e9);
            MPI_Send(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
            MPI_Wait(&r, MPI_STATUS_IGNORE); nbcx_wait(&q); MPI_Wait(&rr, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Ibarrier(MPI_COMM_WORLD, &r); nbcx_ibarrier(c, &q);
            MPI_Send(&x, 0, MPI_INT, 0, 5, MPI_COMM_WORLD);
            MPI_Wait(&r, MPI_STATUS_IGNORE); nbcx_wait(&q);
        }
    }
    nbcx_comm_free(&c);
    MPI_Finalize();
}
