/*
 * test_inproc_large.c - collectives whose buffers hold more than 2^31
 * elements (issue 38's large counts), on 2 thread ranks of the in-process
 * transport (nbcx_inproc_run), no MPI.
 *
 * Each rank's block is BLOCK = 2^30 + 4099 bytes (NBCX_BYTE), so a rank's
 * receive buffer of 2 blocks holds 2^31 + 8198 elements: the second
 * block starts below 2^31 and ends above it. The cases, one after the
 * other (buffers freed in between):
 *   allgather_ring     in place, the ring (one message per block);
 *   allgather_bruck    in place, Bruck's algorithm: its scratch of 2
 *                      blocks is copied back with more than INT_MAX
 *                      bytes at once (a copy cut into chunks, sched.h);
 *   alltoall_pairwise  in place: the whole receive buffer (more than
 *                      INT_MAX elements) is first copied to scratch, a
 *                      copy cut into chunks.
 * Before the cut (commit f0bfd65, before branch s22-wide) the first ran;
 * the others were refused with NBCX_ERR_COUNT. Every byte's value is a hash of its
 * origin (source rank, block, offset); the test reads the bytes on both
 * sides of the 768 MiB chunk boundaries, of the 2^31 boundary, of each
 * block's start and end and of the buffer's end, one byte every 1 MiB or
 * so, and every byte of the last block (the one that crosses 2^31).
 *
 * Peak memory: 2 ranks x (2 blocks + 2 blocks of scratch) = 8 GiB (Bruck
 * and alltoall), 4 GiB for the ring. The test skips (exit 77) when less
 * than 9 GiB are available (MemAvailable of /proc/meminfo). It takes
 * 27-57 s on this shared 2-core machine, so it carries the labels "large" and
 * "timing", which scripts/test leaves out (ctest -LE timing); run it
 * with
 *   ctest -L large --output-on-failure
 * or build/<mpi>/tests/inproc/test_inproc_large [case]. Sanitizer builds
 * do not register it (their shadow memory would double the peak).
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "memavail.h"
#include "nbcx.h"

enum { P = 2 };
#define BLOCK (((size_t)1 << 30) + 4099)
#define TOTAL ((size_t)P * BLOCK)
#define CHUNK ((size_t)3 << 28) /* sched.h's NBCXI_CHUNK_BYTES */

/* The byte that rank `src` contributes at offset i of its block `blk`
 * (allgather: blk is always 0 ... its one block; alltoall: the block
 * meant for rank blk). */
static unsigned char value(int src, int blk, size_t i)
{
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull ^
                 ((uint64_t)(src * 8 + blk + 1) << 56);
    x ^= x >> 29;
    return (unsigned char)(x ^ (x >> 17) ^ (x >> 41));
}

struct job {
    const char *coll, *alg;
    bool alltoall;
    int failures[P];
    int err[P];
    char msg[P][256];
};

/* Offsets of rbuf to check (sorted duplicates are fine). */
static size_t probes(size_t *out, size_t cap)
{
    size_t n = 0;
    const size_t marks[] = { 0, BLOCK, TOTAL, (size_t)1 << 31, CHUNK,
                             2 * CHUNK, BLOCK + CHUNK };
    for (size_t m = 0; m < sizeof marks / sizeof marks[0]; m++)
        for (long d = -3; d <= 3; d++) {
            long long o = (long long)marks[m] + d;
            if (o >= 0 && (size_t)o < TOTAL && n < cap)
                out[n++] = (size_t)o;
        }
    for (size_t o = 0; o < TOTAL && n < cap; o += 4099 * 4099 / 16)
        out[n++] = o;
    return n;
}

static int body(nbcx_comm comm, void *arg)
{
    struct job *job = arg;
    int rank;
    nbcx_comm_rank(comm, &rank);
    unsigned char *rbuf = malloc(TOTAL);
    if (!rbuf) {
        snprintf(job->msg[rank], sizeof job->msg[rank], "out of memory");
        job->err[rank] = NBCX_ERR_NOMEM;
        return 1;
    }
    /* in place: allgather's own block at its place, alltoall's whole
     * send vector in rbuf */
    for (int b = 0; b < P; b++) {
        if (!job->alltoall && b != rank)
            continue;
        unsigned char *blk = rbuf + (size_t)b * BLOCK;
        for (size_t i = 0; i < BLOCK; i++)
            blk[i] = value(rank, job->alltoall ? b : 0, i);
    }
    nbcx_request req;
    int err = job->alltoall
                  ? nbcx_ialltoall(NBCX_IN_PLACE, 0, NBCX_BYTE, rbuf,
                                   (int)BLOCK, NBCX_BYTE, comm, &req)
                  : nbcx_iallgather(NBCX_IN_PLACE, 0, NBCX_BYTE, rbuf,
                                    (int)BLOCK, NBCX_BYTE, comm, &req);
    if (err == NBCX_SUCCESS)
        err = nbcx_wait(&req);
    job->err[rank] = err;
    if (err != NBCX_SUCCESS) {
        snprintf(job->msg[rank], sizeof job->msg[rank], "%s",
                 nbcx_error_string(err));
        free(rbuf);
        return 1;
    }
    static size_t where[P][4096];
    size_t n = probes(where[rank], 4096);
    for (size_t k = 0; k < n; k++) {
        size_t o = where[rank][k];
        int src = (int)(o / BLOCK);
        size_t i = o % BLOCK;
        unsigned char want = value(src, job->alltoall ? rank : 0, i);
        if (rbuf[o] != want && job->failures[rank]++ < 5)
            fprintf(stderr, "rank %d: %s %s: byte %zu (block %d, offset "
                    "%zu) is %u, expected %u\n", rank, job->coll, job->alg,
                    o, src, i, rbuf[o], want);
    }
    /* every byte of the last block, the one past 2^31 */
    unsigned char *last = rbuf + (size_t)(P - 1) * BLOCK;
    size_t bad = 0;
    for (size_t i = 0; i < BLOCK; i++)
        bad += last[i] != value(P - 1, job->alltoall ? rank : 0, i);
    if (bad && job->failures[rank]++ < 5)
        fprintf(stderr, "rank %d: %s %s: %zu wrong bytes in the last "
                "block\n", rank, job->coll, job->alg, bad);
    free(rbuf);
    return job->failures[rank] ? 1 : 0;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int run(const char *coll, const char *alg)
{
    struct job job = { .coll = coll, .alg = alg,
                       .alltoall = strcmp(coll, "alltoall") == 0 };
    if (nbcx_algorithm_set(coll, alg) != NBCX_SUCCESS) {
        printf("FAIL %s %s: nbcx_algorithm_set\n", coll, alg);
        return 1;
    }
    double t0 = now();
    int err = nbcx_inproc_run(P, body, &job);
    nbcx_algorithm_set(coll, "auto");
    int bad = err != NBCX_SUCCESS;
    for (int r = 0; r < P; r++) {
        if (job.err[r] != NBCX_SUCCESS)
            printf("  rank %d: %s\n", r, job.msg[r]);
        bad |= job.failures[r] != 0 || job.err[r] != NBCX_SUCCESS;
    }
    printf("%s %s %s: 2 ranks x %zu bytes in place, %.1f s\n",
           bad ? "FAIL" : "ok  ", coll, alg, TOTAL, now() - t0);
    fflush(stdout);
    return bad;
}

int main(int argc, char **argv)
{
    static const char *const cases[][3] = {
        { "allgather_ring", "allgather", "ring" },
        { "allgather_bruck", "allgather", "bruck" },
        { "alltoall_pairwise", "alltoall", "pairwise" },
    };
    long long avail = available_bytes();
    if (avail >= 0 && avail < 9LL << 30) {
        printf("SKIP: %lld MiB available, the test needs 9 GiB\n",
               avail >> 20);
        return 77;
    }
    int failed = 0, ran = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (argc > 1 && strcmp(argv[1], cases[c][0]) != 0)
            continue;
        failed += run(cases[c][1], cases[c][2]);
        ran++;
    }
    if (!ran) {
        fprintf(stderr, "unknown case %s\n", argv[1]);
        return 2;
    }
    return failed ? 1 : 0;
}
