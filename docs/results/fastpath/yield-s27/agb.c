#include <mpi.h>
#include <nbcx.h>
#include <nbcx_mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc, char **argv) {
    int pv; MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &pv);
    size_t n = argc > 1 ? strtoul(argv[1], 0, 0) : 65536; int R = argc > 2 ? atoi(argv[2]) : 500;
    int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm c; MPI_Comm_dup(MPI_COMM_WORLD, &c); nbcx_comm nc; nbcx_comm_from_mpi(c, &nc);
    char *b; posix_memalign((void**)&b, 4096, n); memset(b, 1, n);
    const char *names[] = {"native", "nbcx", "isend/irecv+wait", "isend/irecv+testsome"};
    double *T = malloc(sizeof(double) * R * 4);
    for (int i = -5; i < R; i++) for (int v = 0; v < 4; v++) for (int w = 0; w < 2; w++) {
        MPI_Barrier(c); double t0 = MPI_Wtime();
        if (v == 0) { MPI_Request q; MPI_Ibcast(b, n, MPI_BYTE, 0, c, &q); MPI_Wait(&q, MPI_STATUS_IGNORE); }
        else if (v == 1) { nbcx_request q; nbcx_ibcast(b, n, NBCX_BYTE, 0, nc, &q); nbcx_wait(&q); }
        else { MPI_Request q; if (rank == 0) MPI_Isend(b, n, MPI_BYTE, 1, 7, c, &q); else MPI_Irecv(b, n, MPI_BYTE, 0, 7, c, &q);
               if (v == 2) MPI_Wait(&q, MPI_STATUS_IGNORE); else { int oc, ix; do MPI_Testsome(1, &q, &oc, &ix, MPI_STATUSES_IGNORE); while (oc != 1); } }
        double dt = MPI_Wtime() - t0, m; MPI_Allreduce(&dt, &m, 1, MPI_DOUBLE, MPI_MAX, c);
        if (i >= 0 && w == 1) T[v * R + i] = m;
    }
    for (int v = 0; v < 4; v++) { double *t = T + v * R; qsort(t, R, sizeof *t, cmp);
        if (!rank) printf("%-22s %zu B: median %.2f us (p10 %.2f p90 %.2f)\n", names[v], n, t[R/2]*1e6, t[R/10]*1e6, t[R*9/10]*1e6); }
    nbcx_comm_free(&nc); MPI_Finalize();
}
