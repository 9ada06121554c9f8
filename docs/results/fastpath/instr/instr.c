/* instr.c - N nonblocking collectives of 8 bytes, each started and
 * waited for at once, through nbcx (WHICH 0) or the native library
 * (WHICH 1): the program docs/results/fastpath/instr/README.md counts
 * instructions of under callgrind. Usage: instr N WHICH OP, OP one of
 * allgatherv, allreduce, scan. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nbcx.h"
#include "nbcx_mpi.h"
int main(int argc, char **argv)
{
    int prov; MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    int which = argc > 2 ? atoi(argv[2]) : 0; /* 0 nbcx, 1 native */
    const char *op = argc > 3 ? argv[3] : "allgatherv";
    int r, p; MPI_Comm_rank(MPI_COMM_WORLD, &r); MPI_Comm_size(MPI_COMM_WORLD, &p);
    nbcx_comm c; nbcx_comm_from_mpi(MPI_COMM_WORLD, &c);
    double s[1] = {r}, rb[64]; int cnt[64], dsp[64];
    for (int i = 0; i < p; i++) { cnt[i] = 1; dsp[i] = i; }
    for (int i = 0; i < n; i++) {
        if (which == 0) {
            nbcx_request q;
            if (!strcmp(op, "allgatherv")) nbcx_iallgatherv(s, 1, NBCX_DOUBLE, rb, cnt, dsp, NBCX_DOUBLE, c, &q);
            else if (!strcmp(op, "allreduce")) nbcx_iallreduce(s, rb, 1, NBCX_DOUBLE, NBCX_SUM, c, &q);
            else nbcx_iscan(s, rb, 1, NBCX_DOUBLE, NBCX_SUM, c, &q);
            nbcx_wait(&q);
        } else {
            MPI_Request q;
            if (!strcmp(op, "allgatherv")) MPI_Iallgatherv(s, 1, MPI_DOUBLE, rb, cnt, dsp, MPI_DOUBLE, MPI_COMM_WORLD, &q);
            else if (!strcmp(op, "allreduce")) MPI_Iallreduce(s, rb, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
            else MPI_Iscan(s, rb, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
    }
    nbcx_comm_free(&c);
    MPI_Finalize();
    return 0;
}
