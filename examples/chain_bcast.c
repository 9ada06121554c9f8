/*
 * chain_bcast.c - a user-written collective: the pipelined chain broadcast
 * of Nomura et al., Fig. 2-3, built only with nbcx's public schedule
 * builder, then checked against MPI_Bcast.
 *
 * Rank r (relative to the root) receives fragment i from r-1 and sends it
 * to r+1. Every receive depends on nothing, so all are posted the moment
 * the operation starts; the send of fragment i depends on its receive and
 * on the send of fragment i-1, so fragments leave in order and fragment i
 * moves on while fragment i+1 is still arriving.
 *
 *   mpiexec -n 4 ./chain_bcast [bytes] [fragment_bytes]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbcx_mpi.h"

#define CHECK(call)                                                           \
    do {                                                                      \
        int err_ = (call);                                                    \
        if (err_ != NBCX_SUCCESS) {                                           \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,     \
                    nbcx_error_string(err_));                                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                     \
        }                                                                     \
    } while (0)

/* Starts a chain broadcast of bytes bytes from root, in frag-byte pieces. */
static int chain_bcast(char *buf, int bytes, int frag, int root,
                       nbcx_comm comm, nbcx_request *req)
{
    int rank, size;
    nbcx_sched s;
    CHECK(nbcx_comm_rank(comm, &rank));
    CHECK(nbcx_comm_size(comm, &size));
    CHECK(nbcx_sched_create(comm, &s));

    int rel = (rank - root + size) % size;
    int prev = (rank - 1 + size) % size, next = (rank + 1) % size;
    nbcx_node prev_send = -1;
    for (int off = 0, i = 0; off < bytes; off += frag, i++) {
        int n = bytes - off < frag ? bytes - off : frag;
        int tag = i % (NBCX_SCHED_TAG_MAX + 1);
        nbcx_node recv = -1, send;
        if (rel > 0) /* no predecessor: posted at start */
            CHECK(nbcx_sched_recv(s, buf + off, n, NBCX_BYTE, prev, tag, &recv));
        if (rel < size - 1) {
            CHECK(nbcx_sched_send(s, buf + off, n, NBCX_BYTE, next, tag, &send));
            if (recv >= 0)
                CHECK(nbcx_sched_depend(s, recv, send));
            if (prev_send >= 0)
                CHECK(nbcx_sched_depend(s, prev_send, send));
            prev_send = send;
        }
    }
    return nbcx_sched_start(&s, req);
}

int main(int argc, char **argv)
{
    /* MPI_THREAD_MULTIPLE lets nbcx run its progress thread. */
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int bytes = argc > 1 ? atoi(argv[1]) : 1 << 22;
    int frag = argc > 2 ? atoi(argv[2]) : 1 << 16;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (bytes < 0 || frag <= 0) {
        if (rank == 0)
            fprintf(stderr, "usage: chain_bcast [bytes >= 0] [fragment > 0]\n");
        MPI_Finalize();
        return 2;
    }

    nbcx_comm comm;
    CHECK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
    char *mine = malloc((size_t)bytes + 1), *ref = malloc((size_t)bytes + 1);
    int root = size - 1, failures = 0;
    for (int i = 0; i < bytes; i++)
        mine[i] = ref[i] = rank == root ? (char)(i * 7 + 3) : 0;

    double t0 = MPI_Wtime();
    nbcx_request req;
    CHECK(chain_bcast(mine, bytes, frag, root, comm, &req));
    CHECK(nbcx_wait(&req));
    double t_chain = MPI_Wtime() - t0;

    MPI_Bcast(ref, bytes, MPI_BYTE, root, MPI_COMM_WORLD);
    if (memcmp(mine, ref, (size_t)bytes) != 0)
        failures = 1;
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM,
                  MPI_COMM_WORLD);
    if (rank == 0)
        printf("chain_bcast: %d bytes in %d-byte fragments on %d ranks: "
               "%.3f ms, %s\n", bytes, frag, size, t_chain * 1e3,
               failures ? "WRONG RESULT" : "matches MPI_Bcast");
    free(mine);
    free(ref);
    CHECK(nbcx_comm_free(&comm));
    MPI_Finalize();
    return failures ? 1 : 0;
}
