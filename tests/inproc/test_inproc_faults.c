/*
 * test_inproc_faults.c - persistent requests started in any order beside
 * nonblocking operations, on thread ranks (issue 12), with a small tag
 * space (NBCX_TAG_BITS=14: 2 tag slots for persistent requests, 2 for
 * nonblocking operations, so sequence numbers wrap every few rounds).
 *
 * Each rank plans a persistent allreduce P and a persistent bcast B once,
 * then, for many rounds, starts P, a nonblocking allreduce N and B in an
 * order that differs between ranks and rounds (MPI allows any order for
 * persistent starts; the nonblocking ones keep the same order on every
 * rank), and compares all three results with the sums computed here. The
 * shared-memory slot algorithms take tickets in start order, so a
 * persistent request served by them met another rank's different
 * operation; and with wrapped sequence numbers a persistent request's
 * tags used to be those of a later nonblocking one. Every message size
 * is small (slots would serve all three).
 *
 * Then an erroneous program: thread ranks that start different
 * collectives (or the same with other counts or roots) at the same
 * point. The shared-memory slot algorithms used to copy between buffers
 * of other sizes (heap corruption, seen from Java); now the rank that
 * finds the mismatch fails with NBCX_ERR_ARG and the world's other
 * operations with NBCX_ERR_TRANSPORT, and nothing is touched out of
 * bounds (AddressSanitizer builds check it). Uses only the public API.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbcx.h"

enum { P = 4, N = 16, ROUNDS = 300 };

static int expected(int scale, int i, int size)
{
    return scale * size * (size + 1) / 2 + size * i;
}

static int body(nbcx_comm comm, void *arg)
{
    (void)arg;
    int rank, size, bad = 0;
    nbcx_comm_rank(comm, &rank);
    nbcx_comm_size(comm, &size);
    int pin[N], pout[N], nin[N], nout[N], bbuf[N];
    nbcx_request p, b, n, all[3];
    if (nbcx_allreduce_init(pin, pout, N, NBCX_INT32, NBCX_SUM, comm, &p) ||
        nbcx_bcast_init(bbuf, N, NBCX_INT32, 0, comm, &b))
        return 100;
    for (int r = 0; r < ROUNDS && !bad; r++) {
        for (int i = 0; i < N; i++) {
            pin[i] = (rank + 1) * (1000 + r) + i;
            nin[i] = (rank + 1) * (7 + r) + i;
            bbuf[i] = rank == 0 ? 5000 + r * N + i : -1;
        }
        int order = (rank + r) % 3; /* where the nonblocking one goes */
        int rc = 0;
        if (order == 0)
            rc |= nbcx_iallreduce(nin, nout, N, NBCX_INT32, NBCX_SUM, comm,
                                  &n);
        rc |= (rank % 2) ? nbcx_start(&b) : nbcx_start(&p);
        if (order == 1)
            rc |= nbcx_iallreduce(nin, nout, N, NBCX_INT32, NBCX_SUM, comm,
                                  &n);
        rc |= (rank % 2) ? nbcx_start(&p) : nbcx_start(&b);
        if (order == 2)
            rc |= nbcx_iallreduce(nin, nout, N, NBCX_INT32, NBCX_SUM, comm,
                                  &n);
        if (rc)
            return 101;
        all[0] = p;
        all[1] = b;
        all[2] = n;
        if (nbcx_waitall(3, all))
            return 102;
        for (int i = 0; i < N; i++) {
            if (pout[i] != expected(1000 + r, i, size) ||
                nout[i] != expected(7 + r, i, size) ||
                bbuf[i] != 5000 + r * N + i) {
                fprintf(stderr, "rank %d round %d element %d: persistent "
                        "allreduce %d (expected %d), nonblocking %d "
                        "(expected %d), bcast %d (expected %d)\n", rank, r,
                        i, pout[i], expected(1000 + r, i, size), nout[i],
                        expected(7 + r, i, size), bbuf[i], 5000 + r * N + i);
                bad = 1;
                break;
            }
        }
    }
    nbcx_request_free(&p);
    nbcx_request_free(&b);
    return bad ? 103 : 0;
}

/* Rank 0 bcasts 64 ints from root 0; the others run what `variant`
 * says: 1 an allreduce of 64 ints, 2 a bcast of 4096 ints, 3 a bcast
 * from root 1. Every rank must get an error, none may crash. */
static int mismatch_body(nbcx_comm comm, void *arg)
{
    int variant = *(const int *)arg, rank, size;
    nbcx_comm_rank(comm, &rank);
    nbcx_comm_size(comm, &size);
    int *buf = calloc(4096, sizeof *buf), *out = calloc(4096, sizeof *out);
    nbcx_request req;
    int rc;
    if (!buf || !out)
        return 200;
    if (rank == 0 || variant == 0)
        rc = nbcx_ibcast(buf, 64, NBCX_INT32, 0, comm, &req);
    else if (variant == 1)
        rc = nbcx_iallreduce(buf, out, 64, NBCX_INT32, NBCX_SUM, comm, &req);
    else if (variant == 2)
        rc = nbcx_ibcast(buf, 4096, NBCX_INT32, 0, comm, &req);
    else
        rc = nbcx_ibcast(buf, 64, NBCX_INT32, size > 1 ? 1 : 0, comm, &req);
    if (rc == NBCX_SUCCESS)
        rc = nbcx_wait(&req);
    free(buf);
    free(out);
    /* 0 when the expected happened (an error), 201 otherwise. */
    return rc == NBCX_ERR_ARG || rc == NBCX_ERR_TRANSPORT ? 0 : 201;
}

int main(void)
{
    const char *bits = getenv("NBCX_TAG_BITS");
    if (!bits || atoi(bits) != 14) {
        fprintf(stderr, "run with NBCX_TAG_BITS=14\n");
        return 2;
    }
    for (int p = 1; p <= P; p++) {
        int rc = nbcx_inproc_run(p, body, NULL);
        if (rc) {
            fprintf(stderr, "FAIL: %d thread ranks: body returned %d\n", p,
                    rc);
            return 1;
        }
        printf("ok: %d thread ranks, %d rounds\n", p, ROUNDS);
    }
    for (int variant = 1; variant <= 3; variant++) {
        int rc = nbcx_inproc_run(2, mismatch_body, &variant);
        if (rc) {
            fprintf(stderr, "FAIL: mismatched collectives (variant %d): "
                    "a rank saw no error (%d)\n", variant, rc);
            return 1;
        }
        printf("ok: mismatched collectives (variant %d) fail cleanly\n",
               variant);
    }
    return 0;
}
