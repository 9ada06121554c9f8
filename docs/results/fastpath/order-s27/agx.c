/* iallgather of N bytes on 2 ranks: native, nbcx, and hand-made
 * schedules (copy first / copy after posting), medians of R reps */
#include <mpi.h>
#include <nbcx.h>
#include <nbcx_mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
static int cmp(const void *a, const void *b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc, char **argv) {
    int pv; MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &pv);
    size_t n = argc > 1 ? strtoul(argv[1], 0, 0) : 65536;
    int R = argc > 2 ? atoi(argv[2]) : 50;
    int rank, p; MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm c; MPI_Comm_dup(MPI_COMM_WORLD, &c);
    nbcx_comm nc; nbcx_comm_from_mpi(c, &nc);
    size_t so = getenv("AGX_SOFF") ? strtoul(getenv("AGX_SOFF"),0,0) : 0, ro = getenv("AGX_ROFF") ? strtoul(getenv("AGX_ROFF"),0,0) : 0;
    char *s, *r; posix_memalign((void**)&s, 4096, n + 8192); posix_memalign((void**)&r, 4096, n * p + 8192); s += so; r += ro;
    memset(s, rank + 1, n); memset(r, 0, n * p);
    const char *names[] = {"native", "nbcx", "copy-first", "copy-after", "recv-only-first", "no-copy", "testsome", "testsome+yield", "copy-first-send-r"};
    double *T = malloc(sizeof(double) * R * 9);
    for (int i = -3; i < R; i++) {
        for (int v = 0; v < 9; v++) {
            if (getenv("AGX_MASK") && !(strtol(getenv("AGX_MASK"),0,0) >> v & 1)) continue;
            MPI_Barrier(c);
            double t0 = MPI_Wtime();
            if (v == 0) { MPI_Request q; MPI_Iallgather(s, n, MPI_BYTE, r, n, MPI_BYTE, c, &q); MPI_Wait(&q, MPI_STATUS_IGNORE); }
            else if (v == 1) { nbcx_request q; nbcx_iallgather(s, n, NBCX_BYTE, r, n, NBCX_BYTE, nc, &q); nbcx_wait(&q); }
            else {
                MPI_Request q[2]; int o = 1 - rank;
                if (v == 2) memcpy(r + rank * n, s, n);
                PMPI_Irecv(r + o * n, n, MPI_BYTE, o, 5, c, &q[0]);
                if (v == 4) memcpy(r + rank * n, s, n);
                if (v == 8) memcpy(r + rank * n, s, n);
                PMPI_Isend(v == 8 ? r + rank * n : s, n, MPI_BYTE, o, 5, c, &q[1]);
                if (v == 3) memcpy(r + rank * n, s, n);
                if (v == 6 || v == 7) { int done = 0, idle = 0, oc, ix[2]; memcpy(r + rank * n, s, n);
                    while (done < 2) { MPI_Testsome(2, q, &oc, ix, MPI_STATUSES_IGNORE); if (oc > 0 && oc != MPI_UNDEFINED) { done += oc; idle = 0; } else if (v == 7 && ++idle > 64) sched_yield(); } }
                else PMPI_Waitall(2, q, MPI_STATUSES_IGNORE);
            }
            double dt = MPI_Wtime() - t0, m;
            MPI_Allreduce(&dt, &m, 1, MPI_DOUBLE, MPI_MAX, c);
            if (i >= 0) T[v * R + i] = m;
        }
    }
    for (int v = 0; v < 9; v++) { double *t = T + v * R;
        if (getenv("AGX_MASK") && !(strtol(getenv("AGX_MASK"),0,0) >> v & 1)) continue;
        qsort(t, R, sizeof *t, cmp);
        if (!rank) printf("%-16s %zu B: median %.1f us (p10 %.1f p90 %.1f)\n", names[v], n, t[R/2]*1e6, t[R/10]*1e6, t[R*9/10]*1e6);
    }
    nbcx_comm_free(&nc);
    MPI_Finalize();
}
