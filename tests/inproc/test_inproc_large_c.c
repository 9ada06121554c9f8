/*
 * test_inproc_large_c.c - the large-count API (nbcx_iallgatherv_c,
 * issue 38) with buffers over 2 GiB addressed by 64-bit displacements,
 * on 2 thread ranks of the in-process transport, no MPI.
 *
 * Each rank contributes BLOCK = 2^30 + 4099 bytes (NBCX_BYTE); rank 0's
 * block lands at displacement 0 and rank 1's at 2^31 + 4096, which no
 * int displacement can express (the int call cannot describe this
 * layout at all). Every rank's receive buffer thus spans 2^31 + 4096 +
 * BLOCK bytes (3 GiB), more than 2 GiB of it received. The test checks
 * every byte of both blocks on both ranks, and bytes of the gap between
 * them (never written: calloc's zeros). The gap is never touched, so
 * the peak is about 2 x (2 blocks + 1 send block) = 6 GiB; the test
 * skips (exit 77) with less than 8 GiB available. Labels large and
 * timing (ctest -L large), as inproc.large; not in sanitizer builds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memavail.h"
#include "nbcx.h"

enum { P = 2 };
#define BLOCK (((size_t)1 << 30) + 4099)
#define FAR (((size_t)1 << 31) + 4096) /* rank 1's displacement */
#define SPAN (FAR + BLOCK)

static unsigned char value(int src, size_t i)
{
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull ^
                 ((uint64_t)(src + 1) << 56);
    x ^= x >> 29;
    return (unsigned char)(x ^ (x >> 17) ^ (x >> 41));
}

struct job {
    int failures[P], err[P];
};

static int body(nbcx_comm comm, void *arg)
{
    struct job *job = arg;
    int rank;
    nbcx_comm_rank(comm, &rank);
    unsigned char *sbuf = malloc(BLOCK);
    unsigned char *rbuf = calloc(1, SPAN);
    if (!sbuf || !rbuf) {
        free(sbuf);
        free(rbuf);
        job->err[rank] = NBCX_ERR_NOMEM;
        return 1;
    }
    for (size_t i = 0; i < BLOCK; i++)
        sbuf[i] = value(rank, i);
    const nbcx_count counts[P] = { (nbcx_count)BLOCK, (nbcx_count)BLOCK };
    const nbcx_count displs[P] = { 0, (nbcx_count)FAR };
    nbcx_request req;
    int err = nbcx_iallgatherv_c(sbuf, (nbcx_count)BLOCK, NBCX_BYTE, rbuf,
                                 counts, displs, NBCX_BYTE, comm, &req);
    if (err == NBCX_SUCCESS)
        err = nbcx_wait(&req);
    job->err[rank] = err;
    if (err != NBCX_SUCCESS) {
        fprintf(stderr, "rank %d: %s\n", rank, nbcx_error_detail(err));
        free(sbuf);
        free(rbuf);
        return 1;
    }
    for (int src = 0; src < P; src++) {
        const unsigned char *blk = rbuf + (size_t)displs[src];
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < BLOCK; i++)
            if (blk[i] != value(src, i) && bad++ == 0)
                first = i;
        if (bad) {
            fprintf(stderr, "rank %d: block of rank %d: %zu wrong bytes, "
                    "the first at %zu\n", rank, src, bad, first);
            job->failures[rank]++;
        }
    }
    /* the gap [BLOCK, FAR): a byte every 64 MiB and its ends */
    for (size_t o = BLOCK; o < FAR; o += (size_t)1 << 26)
        job->failures[rank] += rbuf[o] != 0;
    job->failures[rank] += rbuf[FAR - 1] != 0;
    free(sbuf);
    free(rbuf);
    return job->failures[rank] ? 1 : 0;
}

int main(void)
{
    long long avail = available_bytes();
    if (avail >= 0 && avail < 8LL << 30) {
        printf("SKIP: %lld MiB available, the test needs 8 GiB\n",
               avail >> 20);
        return 77;
    }
    struct job job = { { 0 }, { 0 } };
    int err = nbcx_inproc_run(P, body, &job);
    int bad = err != NBCX_SUCCESS;
    for (int r = 0; r < P; r++)
        bad |= job.failures[r] != 0 || job.err[r] != NBCX_SUCCESS;
    printf("%s allgatherv_c: 2 ranks x %zu bytes, the second block at "
           "displacement %zu (> INT_MAX), receive buffers of %zu bytes\n",
           bad ? "FAIL" : "ok  ", BLOCK, FAR, SPAN);
    return bad;
}
