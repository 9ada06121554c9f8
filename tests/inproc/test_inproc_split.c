/*
 * test_inproc_split.c - nbcx_comm_split and nbcx_comm_dup on thread ranks
 * (nbcx_inproc_run), public API only:
 *   split  P = 1..7 ranks: colours rank % 3 (2: NBCX_UNDEFINED), keys
 *          reversing the order; each part's size, rank and an allgather of
 *          the old ranks against the order computed here; a split of the
 *          split (every rank alone); errors (bad colour, NULL newcomm);
 *   dup    the same ranks, its own sequence (a collective on the dup
 *          between two on the parent, in different orders on different
 *          ranks is not allowed: here all ranks interleave alike), the
 *          Cartesian topology kept (a neighbour allgather on the ring);
 *   failed a rank body that returns an error: the others' operation on a
 *          communicator split from theirs fails with NBCX_ERR_TRANSPORT
 *          instead of waiting for it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbcx.h"

#define CHECK(c)                                                          \
    do {                                                                  \
        if (!(c)) {                                                       \
            fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #c); \
            return 1;                                                     \
        }                                                                 \
    } while (0)

static int color_of(int r)
{
    return r % 3 == 2 ? NBCX_UNDEFINED : r % 3;
}

static int split_body(nbcx_comm comm, void *arg)
{
    (void)arg;
    int me, p;
    nbcx_comm_rank(comm, &me);
    nbcx_comm_size(comm, &p);
    nbcx_comm s = NBCX_COMM_NULL;
    CHECK(nbcx_comm_split(comm, color_of(me), -me, &s) == NBCX_SUCCESS);
    if (color_of(me) == NBCX_UNDEFINED) {
        CHECK(s == NBCX_COMM_NULL);
    } else {
        int want[8], n = 0, myrank = -1;
        for (int r = p - 1; r >= 0; r--)
            if (color_of(r) == color_of(me)) {
                if (r == me)
                    myrank = n;
                want[n++] = r;
            }
        int sr, sp, got[8];
        nbcx_comm_rank(s, &sr);
        nbcx_comm_size(s, &sp);
        CHECK(sp == n && sr == myrank);
        nbcx_request q;
        CHECK(nbcx_iallgather(&me, 1, NBCX_INT32, got, 1, NBCX_INT32, s,
                              &q) == NBCX_SUCCESS);
        CHECK(nbcx_wait(&q) == NBCX_SUCCESS);
        CHECK(memcmp(got, want, (size_t)n * sizeof *got) == 0);
        nbcx_comm alone;
        CHECK(nbcx_comm_split(s, sr, 0, &alone) == NBCX_SUCCESS);
        nbcx_comm_size(alone, &sp);
        CHECK(sp == 1);
        CHECK(nbcx_comm_free(&alone) == NBCX_SUCCESS);
        CHECK(nbcx_comm_free(&s) == NBCX_SUCCESS);
    }
    CHECK(nbcx_comm_split(comm, -5, 0, &s) == NBCX_ERR_ARG);
    CHECK(nbcx_comm_split(comm, 0, 0, NULL) == NBCX_ERR_ARG);
    CHECK(nbcx_comm_dup(NBCX_COMM_NULL, &s) == NBCX_ERR_COMM);
    return 0;
}

static int dup_body(nbcx_comm comm, void *arg)
{
    (void)arg;
    int me, p;
    nbcx_comm_rank(comm, &me);
    nbcx_comm_size(comm, &p);
    int dims[1] = { p }, periods[1] = { 1 };
    CHECK(nbcx_comm_set_cart(comm, 1, dims, periods) == NBCX_SUCCESS);
    nbcx_comm d;
    CHECK(nbcx_comm_dup(comm, &d) == NBCX_SUCCESS);
    int dr, dp;
    nbcx_comm_rank(d, &dr);
    nbcx_comm_size(d, &dp);
    CHECK(dr == me && dp == p);
    /* a collective on the parent started, one on the dup done, then the
     * parent's completed: separate sequences */
    long x = me + 1, y = 0, u = 10 * (me + 1), v = 0;
    nbcx_request a, b;
    CHECK(nbcx_iallreduce(&x, &y, 1, NBCX_INT64, NBCX_SUM, comm, &a) == 0);
    CHECK(nbcx_iallreduce(&u, &v, 1, NBCX_INT64, NBCX_SUM, d, &b) == 0);
    CHECK(nbcx_wait(&b) == NBCX_SUCCESS && nbcx_wait(&a) == NBCX_SUCCESS);
    CHECK(y == (long)p * (p + 1) / 2 && v == 10 * y);
    int got[2] = { -1, -1 };
    CHECK(nbcx_ineighbor_allgather(&me, 1, NBCX_INT32, got, 1, NBCX_INT32, d,
                                   &a) == NBCX_SUCCESS);
    CHECK(nbcx_wait(&a) == NBCX_SUCCESS);
    CHECK(got[0] == (me + p - 1) % p && got[1] == (me + 1) % p);
    CHECK(nbcx_comm_free(&d) == NBCX_SUCCESS);
    return 0;
}

static int failed_body(nbcx_comm comm, void *arg)
{
    (void)arg;
    int me;
    nbcx_comm_rank(comm, &me);
    nbcx_comm s;
    CHECK(nbcx_comm_split(comm, 0, 0, &s) == NBCX_SUCCESS);
    if (me == 0) {
        nbcx_comm_free(&s);
        return 42; /* leaves: the others must not wait for it */
    }
    nbcx_request q;
    int rc = nbcx_ibarrier(s, &q);
    if (rc == NBCX_SUCCESS)
        rc = nbcx_wait(&q);
    nbcx_comm_free(&s);
    CHECK(rc == NBCX_ERR_TRANSPORT);
    return 0;
}

int main(int argc, char **argv)
{
    const char *t = argc > 1 ? argv[1] : "";
    if (strcmp(t, "split") == 0 || strcmp(t, "dup") == 0) {
        for (int p = 1; p <= 7; p++) {
            int rc = nbcx_inproc_run(p, t[0] == 's' ? split_body : dup_body,
                                     NULL);
            if (rc != NBCX_SUCCESS) {
                fprintf(stderr, "%s on %d ranks: %d\n", t, p, rc);
                return 1;
            }
        }
        return 0;
    }
    if (strcmp(t, "failed") == 0) {
        int rc = nbcx_inproc_run(3, failed_body, NULL);
        if (rc != 42) {
            fprintf(stderr, "failed: nbcx_inproc_run returned %d, not 42\n",
                    rc);
            return 1;
        }
        return 0;
    }
    fprintf(stderr, "usage: test_inproc_split split|dup|failed\n");
    return 2;
}
