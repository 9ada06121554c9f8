/* trace_ops.c - a known sequence of collectives for the trace tests
 * (tests/trace/check_trace.py, which knows it too): on every rank,
 *   5 x iallreduce of 8 doubles (64 B), each waited for at once;
 *   3 x ibcast of 65,536 bytes from rank 0, 2 ms of computation between
 *       the start and the wait;
 *   4 x iallreduce of 64 doubles (512 B) in flight at once, waitall.
 * Usage: trace_ops mpi              (under mpiexec)
 *        trace_ops inproc RANKS     (thread ranks)
 * Exit status 0 when every result is right. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nbcx.h"
#ifdef NBCX_TRACE_OPS_MPI
#include <mpi.h>

#include "nbcx_mpi.h"
#endif

#define CHECK(call)                                                           \
    do {                                                                      \
        int e_ = (call);                                                      \
        if (e_ != NBCX_SUCCESS) {                                             \
            fprintf(stderr, "trace_ops: %s: %s\n", #call,                     \
                    nbcx_error_string(e_));                                   \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Computation outside nbcx, for `seconds`. */
static _Thread_local volatile double sink; /* (per rank thread) */
static void compute(double seconds)
{
    double end = now_s() + seconds, x = 1;
    while (now_s() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

static int body(nbcx_comm comm, void *arg)
{
    _Atomic int *bad = arg;
    int rank, size;
    CHECK(nbcx_comm_rank(comm, &rank));
    CHECK(nbcx_comm_size(comm, &size));
    double in[64], out[64];
    for (int k = 0; k < 5; k++) {
        for (int i = 0; i < 8; i++)
            in[i] = rank + i;
        nbcx_request r;
        CHECK(nbcx_iallreduce(in, out, 8, NBCX_DOUBLE, NBCX_SUM, comm, &r));
        CHECK(nbcx_wait(&r));
        for (int i = 0; i < 8; i++)
            if (out[i] != (double)size * (size - 1) / 2 + (double)size * i)
                *bad = 1;
    }
    static _Thread_local unsigned char buf[65536];
    for (int k = 0; k < 3; k++) {
        memset(buf, rank == 0 ? 7 + k : 0, sizeof buf);
        nbcx_request r;
        CHECK(nbcx_ibcast(buf, (int)sizeof buf, NBCX_BYTE, 0, comm, &r));
        compute(0.002);
        CHECK(nbcx_wait(&r));
        if (buf[0] != 7 + k || buf[sizeof buf - 1] != 7 + k)
            *bad = 1;
    }
    double many_in[4][64], many_out[4][64];
    nbcx_request rs[4];
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < 64; i++)
            many_in[k][i] = k;
        CHECK(nbcx_iallreduce(many_in[k], many_out[k], 64, NBCX_DOUBLE,
                              NBCX_SUM, comm, &rs[k]));
    }
    CHECK(nbcx_waitall(4, rs));
    for (int k = 0; k < 4; k++)
        if (many_out[k][63] != (double)k * size)
            *bad = 1;
    return NBCX_SUCCESS;
}

int main(int argc, char **argv)
{
    _Atomic int bad = 0;
    if (argc == 3 && strcmp(argv[1], "inproc") == 0) {
        int ranks = atoi(argv[2]);
        if (ranks < 1) {
            fprintf(stderr, "trace_ops: bad number of ranks: %s\n", argv[2]);
            return 2;
        }
        CHECK(nbcx_inproc_run(ranks, body, &bad));
    }
#ifdef NBCX_TRACE_OPS_MPI
    else if (argc == 2 && strcmp(argv[1], "mpi") == 0) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        nbcx_comm comm;
        CHECK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
        body(comm, &bad);
        CHECK(nbcx_comm_free(&comm));
        MPI_Finalize();
    }
#endif
    else {
        fprintf(stderr, "usage: trace_ops mpi | trace_ops inproc RANKS\n");
        return 2;
    }
    if (bad)
        fprintf(stderr, "trace_ops: a result is wrong\n");
    return bad;
}
