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
 * the peak is about 2 x (2 blocks + 1 send block) = 6 GiB.
 *
 * Then counts above INT_MAX, which nbcx builds in pieces of 2^30
 * elements (coll/select.c): nbcx_ibcast_c of COUNT = 2^31 + 4099 bytes
 * from rank 1, and nbcx_iallreduce_c in place of COUNT NBCX_BYTEs with
 * NBCX_BXOR; every byte checked.
 *
 * Then a block count above INT_MAX (issue 38: every collective serves
 * them): nbcx_igather_c of 2^31 + 8 bytes a rank to rank 0, in place
 * there, rank 1 sending them as 2^28 + 1 INT64 (the two sides' types
 * differ: both cut the message at the same bytes), and nbcx_iscatter_c
 * back; 6 GiB at the peak, every byte checked.
 *
 * The test skips (exit 77) with less than 12 GiB available. Labels
 * large and timing (ctest -L large), as inproc.large; not in sanitizer
 * builds. One case: test_inproc_large_c
 * allgatherv|bcast|allreduce|gather.
 */
#include <stdbool.h>
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
#define COUNT (((size_t)1 << 31) + 4099) /* bcast, allreduce: > INT_MAX */

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

/* bcast_c (root 1) or allreduce_c (in place, BXOR) of COUNT bytes. */
static int elementwise(nbcx_comm comm, struct job *job, int rank, bool bcast)
{
    unsigned char *buf = malloc(COUNT);
    if (!buf) {
        job->err[rank] = NBCX_ERR_NOMEM;
        return 1;
    }
    for (size_t i = 0; i < COUNT; i++)
        buf[i] = bcast && rank != 1 ? 0 : value(rank, i);
    nbcx_request req;
    int err = bcast ? nbcx_ibcast_c(buf, (nbcx_count)COUNT, NBCX_BYTE, 1,
                                    comm, &req)
                    : nbcx_iallreduce_c(NBCX_IN_PLACE, buf,
                                        (nbcx_count)COUNT, NBCX_BYTE,
                                        NBCX_BXOR, comm, &req);
    if (err == NBCX_SUCCESS)
        err = nbcx_wait(&req);
    job->err[rank] = err;
    if (err != NBCX_SUCCESS) {
        fprintf(stderr, "rank %d: %s\n", rank, nbcx_error_detail(err));
        free(buf);
        return 1;
    }
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < COUNT; i++) {
        unsigned char want = bcast ? value(1, i) : value(0, i) ^ value(1, i);
        if (buf[i] != want && bad++ == 0)
            first = i;
    }
    if (bad) {
        fprintf(stderr, "rank %d: %s_c: %zu wrong bytes, the first at %zu\n",
                rank, bcast ? "bcast" : "allreduce", bad, first);
        job->failures[rank]++;
    }
    free(buf);
    return bad ? 1 : 0;
}

/* gather_c to rank 0, in place there, of BIG bytes a rank: rank 1
 * sends BIG / 8 INT64 (fewer than INT_MAX elements, more than INT_MAX
 * bytes), rank 0 receives BIG NBCX_BYTEs a block (above INT_MAX); then
 * scatter_c back from rank 0, in place there, into rank 1's zeroed
 * buffer. Both sides cut the message at the same bytes (sched.h). */
#define BIG (((size_t)1 << 31) + 8)
static int gather_scatter(nbcx_comm comm, struct job *job, int rank)
{
    size_t len = rank == 0 ? 2 * BIG : BIG;
    unsigned char *buf = malloc(len);
    if (!buf) {
        job->err[rank] = NBCX_ERR_NOMEM;
        return 1;
    }
    for (size_t i = 0; i < BIG; i++)
        buf[i] = value(rank, i);
    nbcx_request req;
    int err = rank == 0
                  ? nbcx_igather_c(NBCX_IN_PLACE, 0, NBCX_BYTE, buf,
                                   (nbcx_count)BIG, NBCX_BYTE, 0, comm, &req)
                  : nbcx_igather_c(buf, (nbcx_count)(BIG / 8), NBCX_INT64,
                                   NULL, 0, NBCX_BYTE, 0, comm, &req);
    if (err == NBCX_SUCCESS)
        err = nbcx_wait(&req);
    size_t bad = 0, first = 0;
    for (size_t i = 0; err == NBCX_SUCCESS && rank == 0 && i < 2 * BIG; i++)
        if (buf[i] != value(i >= BIG, i % BIG) && bad++ == 0)
            first = i;
    if (rank == 1)
        memset(buf, 0, BIG);
    if (err == NBCX_SUCCESS)
        err = rank == 0
                  ? nbcx_iscatter_c(buf, (nbcx_count)BIG, NBCX_BYTE,
                                    NBCX_IN_PLACE, 0, NBCX_BYTE, 0, comm,
                                    &req)
                  : nbcx_iscatter_c(NULL, 0, NBCX_BYTE, buf,
                                    (nbcx_count)(BIG / 8), NBCX_INT64, 0,
                                    comm, &req);
    if (err == NBCX_SUCCESS)
        err = nbcx_wait(&req);
    for (size_t i = 0; err == NBCX_SUCCESS && rank == 1 && i < BIG; i++)
        if (buf[i] != value(1, i) && bad++ == 0)
            first = i;
    job->err[rank] = err;
    if (err != NBCX_SUCCESS)
        fprintf(stderr, "rank %d: %s\n", rank, nbcx_error_detail(err));
    if (bad) {
        fprintf(stderr, "rank %d: %s_c: %zu wrong bytes, the first at %zu\n",
                rank, rank == 0 ? "gather" : "scatter", bad, first);
        job->failures[rank]++;
    }
    free(buf);
    return bad || err ? 1 : 0;
}

static const char *which; /* the case */

static int body(nbcx_comm comm, void *arg)
{
    struct job *job = arg;
    int rank;
    nbcx_comm_rank(comm, &rank);
    if (strcmp(which, "gather") == 0)
        return gather_scatter(comm, job, rank);
    if (strcmp(which, "allgatherv") != 0)
        return elementwise(comm, job, rank, strcmp(which, "bcast") == 0);
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

static int run(const char *name)
{
    which = name;
    struct job job = { { 0 }, { 0 } };
    int err = nbcx_inproc_run(P, body, &job);
    int bad = err != NBCX_SUCCESS;
    for (int r = 0; r < P; r++)
        bad |= job.failures[r] != 0 || job.err[r] != NBCX_SUCCESS;
    if (strcmp(name, "gather") == 0)
        printf("%s gather_c and scatter_c: 2 ranks x %zu bytes (> INT_MAX; "
               "NBCX_BYTE at the root, INT64 at rank 1), in place at the "
               "root\n", bad ? "FAIL" : "ok  ", BIG);
    else if (strcmp(name, "allgatherv") == 0)
        printf("%s allgatherv_c: 2 ranks x %zu bytes, the second block at "
               "displacement %zu (> INT_MAX), receive buffers of %zu "
               "bytes\n", bad ? "FAIL" : "ok  ", BLOCK, FAR, SPAN);
    else
        printf("%s %s_c: count %zu (> INT_MAX) of NBCX_BYTE on 2 ranks\n",
               bad ? "FAIL" : "ok  ", name, COUNT);
    fflush(stdout);
    return bad;
}

int main(int argc, char **argv)
{
    long long avail = available_bytes();
    if (avail >= 0 && avail < 12LL << 30) {
        printf("SKIP: %lld MiB available, the test needs 12 GiB\n",
               avail >> 20);
        return 77;
    }
    static const char *const cases[] = { "allgatherv", "bcast",
                                         "allreduce", "gather" };
    int bad = 0;
    for (int i = 0; i < 4; i++)
        if (argc < 2 || strcmp(argv[1], cases[i]) == 0)
            bad |= run(cases[i]);
    return bad;
}
