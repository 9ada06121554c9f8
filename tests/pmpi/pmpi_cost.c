/* pmpi_cost.c - the shim's own cost (a benchmark, not a test): a
 * persistent 1-rank barrier restarted N times, MPI_Start + MPI_Wait
 * through libnbcx-pmpi against nbcx_start + nbcx_wait on the same
 * process, and the nonblocking MPI_Ibarrier + MPI_Wait against
 * nbcx_ibarrier + nbcx_wait. Run on one rank:
 *   build/openmpi/tests/pmpi/pmpi_cost [N]   (NBCX_PROGRESS as usual) */
#include <stdio.h>
#include <stdlib.h>

#include "nbcx_mpi.h"
#include "shim.h" /* PNAME: MPI_Barrier_init or MPIX_Barrier_init */

static double best(double *t, int n)
{
    double b = t[0];
    for (int i = 1; i < n; i++)
        b = t[i] < b ? t[i] : b;
    return b;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int n = argc > 1 ? atoi(argv[1]) : 200000;
    enum { REPS = 5 };
    double shim_p[REPS], nbcx_p[REPS], shim_i[REPS], nbcx_i[REPS];
    nbcx_comm c;
    nbcx_comm_from_mpi(MPI_COMM_SELF, &c);
    MPI_Request mr = MPI_REQUEST_NULL;
    nbcx_request nr;
#if SHIM_PERSISTENT
    PNAME(Barrier)(MPI_COMM_SELF, MPI_INFO_NULL, &mr);
#endif
    nbcx_barrier_init(c, &nr);
    for (int r = 0; r < REPS; r++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < n && mr != MPI_REQUEST_NULL; i++) {
            MPI_Start(&mr);
            MPI_Wait(&mr, MPI_STATUS_IGNORE);
        }
        double t1 = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            nbcx_start(&nr);
            nbcx_wait(&nr);
        }
        double t2 = MPI_Wtime();
        for (int i = 0; i < n / 4; i++) {
            MPI_Request q;
            MPI_Ibarrier(MPI_COMM_SELF, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
        double t3 = MPI_Wtime();
        for (int i = 0; i < n / 4; i++) {
            nbcx_request q;
            nbcx_ibarrier(c, &q);
            nbcx_wait(&q);
        }
        double t4 = MPI_Wtime();
        shim_p[r] = (t1 - t0) / n * 1e6;
        nbcx_p[r] = (t2 - t1) / n * 1e6;
        shim_i[r] = (t3 - t2) / (n / 4) * 1e6;
        nbcx_i[r] = (t4 - t3) / (n / 4) * 1e6;
    }
    if (mr != MPI_REQUEST_NULL)
        MPI_Request_free(&mr);
    nbcx_request_free(&nr);
    nbcx_comm_free(&c);
    printf("persistent 1-rank barrier, start+wait (best of %d x %d): "
           "shim %.3f us, nbcx %.3f us, shim cost %.3f us\n",
           REPS, n, best(shim_p, REPS), best(nbcx_p, REPS),
           best(shim_p, REPS) - best(nbcx_p, REPS));
    printf("nonblocking 1-rank barrier, ibarrier+wait (best of %d x %d): "
           "shim %.3f us, nbcx %.3f us, shim cost %.3f us\n",
           REPS, n / 4, best(shim_i, REPS), best(nbcx_i, REPS),
           best(shim_i, REPS) - best(nbcx_i, REPS));
    MPI_Finalize();
    return 0;
}
