/*
 * test_inproc.c - the in-process transport (ranks are threads,
 * nbcx_inproc_run) and the shared-memory slot collectives, without MPI.
 *
 * Tests (one CTest test each, in every progress mode: NBCX_PROGRESS is
 * set by CTest and checked here):
 *   api          nbcx_inproc_run: bad arguments (nothing runs), the
 *                communicators the bodies get, a body's error returned
 *                (the lowest failing rank's), a body freeing its
 *                communicator, runs nested inside a body, and a failing
 *                rank making the others' pending operations fail instead
 *                of hang (p2p and slot algorithms);
 *   p2p          user-built schedules of sends and receives: every size
 *                around the eager threshold and far above it, receive
 *                first and message first, many messages with one tag
 *                (MPI's non-overtaking order), different but matching
 *                types, non-contiguous types, truncation, sends to self;
 *   single       one thread drives every rank of a world (the world
 *                without threads), every collective and algorithm;
 *   insignificant  NULL buffers and types where MPI ignores them, with
 *                every algorithm;
 *   outstanding  3 x NBCX_INPROC_SLOTS broadcasts and other collectives
 *                started before any wait, waited in different orders on
 *                different ranks, some ranks waiting for each operation
 *                at once; with 16, 2 and 1 slots, and point-to-point;
 *   <coll>_p<P>  every algorithm of <coll> (nbcx_algorithm_names, which
 *                includes "slots", and "auto") on P = 1, 2, 3, 7, 16 or
 *                64 thread ranks, against a sequential reference computed
 *                here: counts 0 to 5000 int32 words (eager and
 *                rendezvous), roots first, last and middle, NBCX_IN_PLACE
 *                where MPI allows it, and data typed as int32, as
 *                different types on different ranks (int32 x 2n against
 *                int64 x n), as a non-contiguous derived type (gaps that
 *                must never be written) and as NBCX_DOUBLE_INT (padded);
 *                reductions with int32 SUM and BXOR, double SUM and MAX,
 *                DOUBLE_INT MINLOC, a non-commutative user operation (2x2
 *                matrices mod 251) and the derived type with SUM. Send
 *                buffers must come back unchanged, and buffers MPI calls
 *                insignificant must not be written. P = 64 runs fewer
 *                cases and smaller messages (64 threads on 2 cores).
 *
 * NBCX_TEST_QUICK=1 (set for ThreadSanitizer builds) keeps every kind of
 * case but fewer of each.
 *
 * Checks inside the rank threads go to a report per rank (the harness
 * counters are not thread-safe); the main thread checks the reports.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "blocks.h"
#include "colls.h"
#include "gaptype.h"
#include "base/base.h"
#include "harness.h"
#include "inproc_test.h"
#include "matrix_op.h"
#include "transport/inproc/inproc.h"

enum { MAXP = 64 };

/* enum coll_id and coll_names: colls.h */

/* ------------------------------------------------------------------ */
/* Reports of the rank threads                                         */
/* ------------------------------------------------------------------ */

struct report {
    long checks, bad, cases;
    char first[400];
};

static void rfail(struct report *r, const char *fmt, ...)
{
    if (r->bad++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->first, sizeof r->first, fmt, ap);
        va_end(ap);
    }
}

#define RCHECK(rep, cond, ...)                                                \
    ((rep)->checks++, (cond) ? true : (rfail((rep), __VA_ARGS__), false))

/* Folds the reports of a run into the harness counters. */
static void collect(struct report *rep, int p, const char *what)
{
    for (int r = 0; r < p; r++) {
        th_checks += rep[r].checks;
        th_cases += rep[r].cases;
        CHECK(rep[r].bad == 0, "%s, rank %d: %ld failed checks; first: %s",
              what, r, rep[r].bad, rep[r].first);
    }
}

static void sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------ */
/* Data-moving collectives: buffers of self-describing words (words.h) */
/* ------------------------------------------------------------------ */
/* The derived, non-contiguous type is gap_mid (gaptype.h): two int32
 * data words in a 12-byte extent, | d0 | gap | d1 |; the gap must never
 * be written. */

static bool same_words(struct report *rep, const char *what,
                       const uint32_t *got, const uint32_t *want, size_t n)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i] && bad++ == 0)
            first = i;
    return RCHECK(rep, bad == 0,
                  "%s: %zu of %zu words differ; first at %zu: got 0x%08x "
                  "(word %u of block %u from rank %u), expected 0x%08x",
                  what, bad, n, first, bad ? got[first] : 0,
                  bad ? got[first] & 0x7fff : 0,
                  bad ? (got[first] >> 15) & 63 : 0,
                  bad ? (got[first] >> 21) & 63 : 0, bad ? want[first] : 0);
}

/* How data is typed; a block holds count units:
 *   T_INT32    a unit is one int32 word, NBCX_INT32 everywhere;
 *   T_MIXED    a unit is 2 words: even ranks send INT32 x 2n and receive
 *              INT64 x n, odd ranks the other way round;
 *   T_DERIVED  a unit is 2 words: even ranks send the gap type and
 *              receive INT32 x 2n, odd ranks send INT64 and receive gap;
 *   T_PAIR     a unit is 3 words: NBCX_DOUBLE_INT everywhere (12 bytes of
 *              data, 4 of padding that must stay untouched). */
enum tmode { T_INT32, T_MIXED, T_DERIVED, T_PAIR, NTMODES };
static const char *const tmode_names[NTMODES] = { "int32", "mixed",
                                                  "derived", "pair" };

/* One rank's type and count for a block and its layout: struct tsel of
 * blocks.h. */
static const struct tsel SEL_GAP = { GAP_MID, 0, 3, 2, { 0, 2 } };
static const struct tsel SEL_PAIR = { NBCX_DOUBLE_INT, 0, 4, 3, { 0, 1, 2 } };

static size_t unit_words(enum tmode m)
{
    return m == T_INT32 ? 1 : m == T_PAIR ? 3 : 2;
}

static struct tsel tsel(enum tmode m, int rank, int count, bool send)
{
    struct tsel t;
    bool even = rank % 2 == 0;
    switch (m) {
    case T_INT32: t = SEL_INT32; break;
    case T_MIXED: t = even == send ? SEL_INT32 : SEL_INT64; break;
    case T_DERIVED:
        t = even ? (send ? SEL_GAP : SEL_INT32)
                 : (send ? SEL_INT64 : SEL_GAP);
        break;
    default: t = SEL_PAIR; break;
    }
    t.count = (int)((size_t)count * unit_words(m) / (size_t)t.dpe);
    return t;
}

/* One rank's buffers for a data-moving case. */
struct bufs {
    struct tsel s, t;
    uint32_t *sbuf, *sref, *rbuf, *want;
    size_t slen, rlen;
};

static void bufs_alloc(struct bufs *b, enum tmode m, int rank, int count,
                       int sblocks, int rblocks)
{
    b->s = tsel(m, rank, count, true);
    b->t = tsel(m, rank, count, false);
    b->slen = mem_words(b->s) * (size_t)sblocks;
    b->rlen = mem_words(b->t) * (size_t)rblocks;
    b->sbuf = words(b->slen);
    b->rbuf = words(b->rlen);
}

static void bufs_snapshot(struct bufs *b)
{
    b->sref = copy_words(b->sbuf, b->slen);
    b->want = copy_words(b->rbuf, b->rlen);
}

static void bufs_check(struct report *rep, struct bufs *b, const char *desc)
{
    char what[300];
    snprintf(what, sizeof what, "%s sendbuf", desc);
    same_words(rep, what, b->sbuf, b->sref, b->slen);
    snprintf(what, sizeof what, "%s recvbuf", desc);
    same_words(rep, what, b->rbuf, b->want, b->rlen);
}

static void bufs_free(struct bufs *b)
{
    free(b->sbuf);
    free(b->sref);
    free(b->rbuf);
    free(b->want);
}

/* One case of a data-moving collective on this rank. */
struct mcase {
    enum coll_id coll;
    int p, rank, root, count, salt;
    enum tmode m;
    bool in_place, by_test;
};

static void run_move(struct report *rep, nbcx_comm comm, const struct mcase *c)
{
    char desc[200];
    snprintf(desc, sizeof desc, "%s count=%d root=%d types=%s in_place=%d",
             coll_names[c->coll], c->count, c->root, tmode_names[c->m],
             c->in_place);
    int p = c->p, r = c->rank, root = c->root, salt = c->salt;
    size_t bw = (size_t)c->count * unit_words(c->m);
    bool at_root = r == root;
    struct bufs b;
    nbcx_request req = NBCX_REQUEST_NULL;
    int err = NBCX_ERR_INTERN;
    rep->cases++;
    switch (c->coll) {
    case C_BCAST:
        bufs_alloc(&b, c->m, r, c->count, 0, 1);
        b.t = tsel(c->m, r, c->count, at_root); /* root: the send side */
        free(b.rbuf);
        b.rlen = mem_words(b.t);
        b.rbuf = words(b.rlen);
        if (at_root)
            put_block(b.rbuf, b.t, 0, salt, root, 0, bw);
        bufs_snapshot(&b);
        put_block(b.want, b.t, 0, salt, root, 0, bw);
        err = nbcx_ibcast(b.rbuf, b.t.count, b.t.type, root, comm, &req);
        break;
    case C_GATHER:
        bufs_alloc(&b, c->m, r, c->count, 1, p);
        put_block(b.sbuf, b.s, 0, salt, r, 0, bw);
        if (at_root && c->in_place)
            put_block(b.rbuf, b.t, (size_t)r, salt, r, 0, bw);
        bufs_snapshot(&b);
        if (at_root)
            for (int q = 0; q < p; q++)
                put_block(b.want, b.t, (size_t)q, salt, q, 0, bw);
        err = nbcx_igather(at_root && c->in_place ? NBCX_IN_PLACE : b.sbuf,
                           b.s.count, b.s.type, b.rbuf, b.t.count, b.t.type,
                           root, comm, &req);
        break;
    case C_SCATTER:
        bufs_alloc(&b, c->m, r, c->count, p, 1);
        if (at_root)
            for (int d = 0; d < p; d++)
                put_block(b.sbuf, b.s, (size_t)d, salt, root, d, bw);
        bufs_snapshot(&b);
        if (!(at_root && c->in_place))
            put_block(b.want, b.t, 0, salt, root, r, bw);
        err = nbcx_iscatter(b.sbuf, b.s.count, b.s.type,
                            at_root && c->in_place ? NBCX_IN_PLACE : b.rbuf,
                            b.t.count, b.t.type, root, comm, &req);
        break;
    case C_ALLGATHER:
        bufs_alloc(&b, c->m, r, c->count, 1, p);
        put_block(b.sbuf, b.s, 0, salt, r, 0, bw);
        if (c->in_place)
            put_block(b.rbuf, b.t, (size_t)r, salt, r, 0, bw);
        bufs_snapshot(&b);
        for (int q = 0; q < p; q++)
            put_block(b.want, b.t, (size_t)q, salt, q, 0, bw);
        err = nbcx_iallgather(c->in_place ? NBCX_IN_PLACE : b.sbuf,
                              b.s.count, b.s.type, b.rbuf, b.t.count,
                              b.t.type, comm, &req);
        break;
    default: /* C_ALLTOALL */
        bufs_alloc(&b, c->m, r, c->count, p, p);
        for (int d = 0; d < p; d++) {
            put_block(b.sbuf, b.s, (size_t)d, salt, r, d, bw);
            if (c->in_place)
                put_block(b.rbuf, b.t, (size_t)d, salt, r, d, bw);
        }
        bufs_snapshot(&b);
        for (int q = 0; q < p; q++)
            put_block(b.want, b.t, (size_t)q, salt, q, r, bw);
        if (c->in_place)
            err = nbcx_ialltoall(NBCX_IN_PLACE, b.t.count, b.t.type, b.rbuf,
                                 b.t.count, b.t.type, comm, &req);
        else
            err = nbcx_ialltoall(b.sbuf, b.s.count, b.s.type, b.rbuf,
                                 b.t.count, b.t.type, comm, &req);
        break;
    }
    if (RCHECK(rep, err == NBCX_SUCCESS, "%s: start returned %s", desc,
               nbcx_error_string(err))) {
        err = complete(&req, c->by_test);
        if (RCHECK(rep, err == NBCX_SUCCESS, "%s: completion returned %s",
                   desc, nbcx_error_string(err)))
            bufs_check(rep, &b, desc);
    }
    bufs_free(&b);
}

/* ------------------------------------------------------------------ */
/* Reductions                                                          */
/* ------------------------------------------------------------------ */

enum rcombo { R_INT_SUM, R_INT_BXOR, R_DBL_SUM, R_DBL_MAX, R_MINLOC, R_MAT,
              R_GAP_SUM, NCOMBOS };
static const char *const combo_names[NCOMBOS] = {
    "int32 sum", "int32 bxor", "double sum", "double max",
    "double_int minloc", "matrix (non-commutative user op)", "gap sum" };

static nbcx_op mat_op; /* created by main */

static void mat_fn(const void *in, void *inout, int count, nbcx_datatype t,
                   void *ctx)
{
    (void)t;
    (void)ctx;
    mat_mul_into(in, inout, count);
}

/* Element size in memory (extent) and handles of a combo. */
static size_t combo_extent(enum rcombo c)
{
    switch (c) {
    case R_DBL_SUM: case R_DBL_MAX: return sizeof(double);
    case R_MINLOC: return sizeof(nbcx_double_int);
    case R_GAP_SUM: return 12;
    default: return 4;
    }
}

static void combo_handles(enum rcombo c, nbcx_datatype *t, nbcx_op *op)
{
    switch (c) {
    case R_INT_SUM: *t = NBCX_INT32; *op = NBCX_SUM; break;
    case R_INT_BXOR: *t = NBCX_INT32; *op = NBCX_BXOR; break;
    case R_DBL_SUM: *t = NBCX_DOUBLE; *op = NBCX_SUM; break;
    case R_DBL_MAX: *t = NBCX_DOUBLE; *op = NBCX_MAX; break;
    case R_MINLOC: *t = NBCX_DOUBLE_INT; *op = NBCX_MINLOC; break;
    case R_MAT: *t = NBCX_UINT32; *op = mat_op; break;
    default: *t = GAP_MID; *op = NBCX_SUM; break;
    }
}

/* Rank q's element i (into elem, layout of the combo). */
static void value(enum rcombo c, int salt, int q, int i, void *elem)
{
    uint32_t w = word(salt, q, 0, i);
    switch (c) {
    case R_INT_SUM: {
        int32_t v = (int32_t)(w & 0xffff) - 30000;
        memcpy(elem, &v, 4);
        break;
    }
    case R_INT_BXOR:
        memcpy(elem, &w, 4);
        break;
    case R_DBL_SUM: case R_DBL_MAX: {
        double v = (double)((q * 13 + i * 7 + salt) % 1000) - 300;
        memcpy(elem, &v, 8);
        break;
    }
    case R_MINLOC: {
        nbcx_double_int v;
        memcpy(&v, elem, sizeof v); /* keeps the padding as it is */
        v.val = (double)((q * 5 + i * 3 + salt) % 7);
        v.idx = (q * 37 + i) % 101;
        memcpy(elem, &v, sizeof v);
        break;
    }
    case R_MAT: {
        uint32_t m = 0;
        for (int k = 0; k < 4; k++)
            m |= (uint32_t)((q * 7 + i * 3 + k * 11 + salt) % 251) << (8 * k);
        memcpy(elem, &m, 4);
        break;
    }
    default: { /* gap: words 0 and 2 */
        int32_t v0 = (q * 3 + i) % 1000, v1 = (q * 11 + 2 * i + salt) % 1000;
        memcpy(elem, &v0, 4);
        memcpy((char *)elem + 8, &v1, 4);
        break;
    }
    }
}

/* acc = acc op in, acc holding the lower ranks (MPI's order). */
static void fold(enum rcombo c, void *acc, const void *in)
{
    switch (c) {
    case R_INT_SUM: {
        int32_t a, b;
        memcpy(&a, acc, 4);
        memcpy(&b, in, 4);
        a = (int32_t)((uint32_t)a + (uint32_t)b);
        memcpy(acc, &a, 4);
        break;
    }
    case R_INT_BXOR: {
        uint32_t a, b;
        memcpy(&a, acc, 4);
        memcpy(&b, in, 4);
        a ^= b;
        memcpy(acc, &a, 4);
        break;
    }
    case R_DBL_SUM: case R_DBL_MAX: {
        double a, b;
        memcpy(&a, acc, 8);
        memcpy(&b, in, 8);
        a = c == R_DBL_SUM ? a + b : (b > a ? b : a);
        memcpy(acc, &a, 8);
        break;
    }
    case R_MINLOC: {
        nbcx_double_int a, b;
        memcpy(&a, acc, sizeof a);
        memcpy(&b, in, sizeof b);
        if (b.val < a.val || (b.val == a.val && b.idx < a.idx)) {
            a.val = b.val;
            a.idx = b.idx;
        }
        memcpy(acc, &a, sizeof a);
        break;
    }
    case R_MAT: {
        uint32_t a, b;
        memcpy(&a, acc, 4);
        memcpy(&b, in, 4);
        a = mat_mul(a, b);
        memcpy(acc, &a, 4);
        break;
    }
    default: {
        int32_t a[3], b[3];
        memcpy(a, acc, 12);
        memcpy(b, in, 12);
        a[0] += b[0];
        a[2] += b[2];
        memcpy(acc, a, 12);
        break;
    }
    }
}

/* The data bytes of element e equal (padding and gaps not compared
 * here: the buffers' untouched bytes are compared separately). */
static bool same_elem(enum rcombo c, const void *a, const void *b)
{
    if (c == R_MINLOC) {
        nbcx_double_int x, y;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        return x.val == y.val && x.idx == y.idx;
    }
    if (c == R_GAP_SUM)
        return !memcmp(a, b, 4) && !memcmp((const char *)a + 8,
                                           (const char *)b + 8, 4);
    return !memcmp(a, b, combo_extent(c));
}

/* Bytes of an element that are not data (must stay as they were). */
static bool same_holes(enum rcombo c, const void *a, const void *b)
{
    if (c == R_MINLOC)
        return !memcmp((const char *)a + 12, (const char *)b + 12,
                       sizeof(nbcx_double_int) - 12);
    if (c == R_GAP_SUM)
        return !memcmp((const char *)a + 4, (const char *)b + 4, 4);
    return true;
}

struct rcase {
    bool all;
    int p, rank, root, count, salt;
    enum rcombo combo;
    bool in_place, by_test;
};

static void run_reduce(struct report *rep, nbcx_comm comm,
                       const struct rcase *c)
{
    char desc[200];
    snprintf(desc, sizeof desc, "%s %s count=%d root=%d in_place=%d",
             c->all ? "allreduce" : "reduce", combo_names[c->combo],
             c->count, c->root, c->in_place);
    rep->cases++;
    size_t ext = combo_extent(c->combo), n = (size_t)c->count;
    bool at_root = c->all || c->rank == c->root;
    unsigned char *sbuf = malloc(n * ext + 1), *rbuf = malloc(n * ext + 1);
    unsigned char *sref = malloc(n * ext + 1), *rref = malloc(n * ext + 1);
    unsigned char *want = malloc(n * ext + 1);
    memset(sbuf, 0xab, n * ext + 1);
    memset(rbuf, 0xcd, n * ext + 1);
    unsigned char *mine = c->in_place && at_root ? rbuf : sbuf;
    for (size_t i = 0; i < n; i++)
        value(c->combo, c->salt, c->rank, (int)i, mine + i * ext);
    memcpy(sref, sbuf, n * ext + 1);
    memcpy(rref, rbuf, n * ext + 1);
    /* the reference: fold in rank order */
    for (size_t i = 0; i < n; i++) {
        unsigned char acc[16], v[16];
        memset(acc, 0, sizeof acc);
        memset(v, 0, sizeof v);
        value(c->combo, c->salt, 0, (int)i, acc);
        for (int q = 1; q < c->p; q++) {
            value(c->combo, c->salt, q, (int)i, v);
            fold(c->combo, acc, v);
        }
        memcpy(want + i * ext, acc, ext);
    }
    nbcx_datatype t;
    nbcx_op op;
    combo_handles(c->combo, &t, &op);
    const void *sb = c->in_place && at_root ? NBCX_IN_PLACE : sbuf;
    nbcx_request req = NBCX_REQUEST_NULL;
    int err = c->all ? nbcx_iallreduce(sb, rbuf, c->count, t, op, comm, &req)
                     : nbcx_ireduce(sb, rbuf, c->count, t, op, c->root, comm,
                                    &req);
    if (RCHECK(rep, err == NBCX_SUCCESS, "%s: start returned %s", desc,
               nbcx_error_string(err))) {
        err = complete(&req, c->by_test);
        if (RCHECK(rep, err == NBCX_SUCCESS, "%s: completion returned %s",
                   desc, nbcx_error_string(err))) {
            size_t bad = 0, first = 0, holes = 0;
            for (size_t i = 0; i < n; i++) {
                if (at_root && !same_elem(c->combo, rbuf + i * ext,
                                          want + i * ext) &&
                    bad++ == 0)
                    first = i;
                if (!same_holes(c->combo, rbuf + i * ext, rref + i * ext))
                    holes++;
            }
            RCHECK(rep, bad == 0, "%s: %zu of %zu results wrong, first %zu",
                   desc, bad, n, first);
            RCHECK(rep, holes == 0, "%s: %zu elements' gaps written", desc,
                   holes);
            RCHECK(rep, at_root || !memcmp(rbuf, rref, n * ext + 1),
                   "%s: a non-root's receive buffer was written", desc);
            RCHECK(rep, !memcmp(sbuf, sref, n * ext + 1),
                   "%s: the send buffer changed", desc);
            RCHECK(rep, rbuf[n * ext] == rref[n * ext],
                   "%s: written past the end", desc);
        }
    }
    free(sbuf);
    free(rbuf);
    free(sref);
    free(rref);
    free(want);
}

/* ------------------------------------------------------------------ */
/* The collective matrix on thread ranks                               */
/* ------------------------------------------------------------------ */

struct job {
    enum coll_id coll;
    int p;
    struct report rep[MAXP];
    atomic_int stamp[MAXP]; /* barrier: the case each rank entered */
};

/* NBCX_TEST_QUICK=1 (ThreadSanitizer builds): fewer cases of each kind,
 * the same kinds (eager and rendezvous sizes, derived types, in place). */
static bool quick;

static int counts_for(int p, enum coll_id coll, int *out)
{
    int n = 0;
    out[n++] = 0;
    if (!quick)
        out[n++] = 1;
    out[n++] = 7;
    if (p < 64) {
        if (!quick)
            out[n++] = 203;
        /* 20 KB: rendezvous; all-to-all ones hold p blocks per rank */
        if (p <= 7 || (coll != C_ALLGATHER && coll != C_ALLTOALL))
            out[n++] = 5000;
    } else {
        out[n++] = 300;
    }
    return n;
}

static int roots_for(int p, int *out)
{
    int n = 0;
    out[n++] = 0;
    if (p > 1)
        out[n++] = p - 1;
    if (p > 2 && p / 2 != p - 1 && !quick)
        out[n++] = p / 2;
    return n;
}

static int barrier_body(struct job *job, nbcx_comm comm, int rank)
{
    int p = job->p;
    struct report *rep = &job->rep[rank];
    int lates[4] = { -1, 0, p - 1, p / 2 };
    int id = 0;
    for (int rounds = 0; rounds < 3; rounds++) {
        for (int k = 0; k < 4; k++) {
            int late = lates[k];
            id++;
            rep->cases++;
            if (rank == late)
                sleep_us(p >= 16 ? 300 : 1000);
            atomic_store(&job->stamp[rank], id);
            nbcx_request req;
            int err = nbcx_ibarrier(comm, &req);
            if (err == NBCX_SUCCESS)
                err = complete(&req, (id & 1) != 0);
            RCHECK(rep, err == NBCX_SUCCESS, "barrier: %s",
                   nbcx_error_string(err));
            for (int q = 0; q < p; q++)
                RCHECK(rep, atomic_load(&job->stamp[q]) >= id,
                       "barrier %d (late rank %d): rank %d left before "
                       "rank %d entered", id, late, rank, q);
        }
    }
    return NBCX_SUCCESS;
}

static int coll_body(nbcx_comm comm, void *arg)
{
    struct job *job = arg;
    int rank, p = job->p;
    nbcx_comm_rank(comm, &rank);
    struct report *rep = &job->rep[rank];
    if (job->coll == C_BARRIER)
        return barrier_body(job, comm, rank);
    int counts[8], roots[4];
    int ncounts = counts_for(p, job->coll, counts);
    int nroots = roots_for(p, roots);
    int salt = 0;
    bool rooted = job->coll == C_BCAST || job->coll == C_REDUCE ||
                  job->coll == C_GATHER || job->coll == C_SCATTER;
    if (!rooted)
        nroots = 1;
    bool has_in_place = job->coll != C_BCAST;
    if (job->coll == C_REDUCE || job->coll == C_ALLREDUCE) {
        static const enum rcombo small[] = { R_INT_SUM, R_MINLOC, R_MAT };
        bool few = p >= 64 || quick;
        int ncombos = few ? 3 : NCOMBOS;
        for (int ci = 0; ci < ncombos; ci++)
            for (int k = 0; k < ncounts; k++)
                for (int ri = 0; ri < nroots; ri++)
                    for (int ip = 0; ip < 2; ip++) {
                        struct rcase c = {
                            .all = job->coll == C_ALLREDUCE, .p = p,
                            .rank = rank, .root = roots[ri],
                            .count = counts[k], .salt = ++salt,
                            .combo = few ? small[ci] : (enum rcombo)ci,
                            .in_place = ip, .by_test = salt % 3 == 0 };
                        run_reduce(rep, comm, &c);
                    }
        return NBCX_SUCCESS;
    }
    bool few = p >= 64 || quick;
    int ntmodes = few ? 2 : NTMODES;
    static const enum tmode small[] = { T_INT32, T_DERIVED };
    for (int mi = 0; mi < ntmodes; mi++)
        for (int k = 0; k < ncounts; k++)
            for (int ri = 0; ri < nroots; ri++)
                for (int ip = 0; ip < (has_in_place ? 2 : 1); ip++) {
                    struct mcase c = {
                        .coll = job->coll, .p = p, .rank = rank,
                        .root = roots[ri], .count = counts[k],
                        .salt = ++salt,
                        .m = few ? small[mi] : (enum tmode)mi,
                        .in_place = ip, .by_test = salt % 3 == 0 };
                    run_move(rep, comm, &c);
                }
    return NBCX_SUCCESS;
}

/* The algorithms of coll, then "auto". */
static int algorithms(enum coll_id coll, char names[][32])
{
    const char *list = NULL;
    int n = 0;
    if (nbcx_algorithm_names(coll_names[coll], &list) != NBCX_SUCCESS)
        return 0;
    for (const char *p = list; *p && n < 15;) {
        size_t len = strcspn(p, " ");
        if (len > 0 && len < 32) {
            memcpy(names[n], p, len);
            names[n++][len] = '\0';
        }
        p += len;
        p += strspn(p, " ");
    }
    strcpy(names[n++], "auto");
    return n;
}

static void test_coll(enum coll_id coll, int p)
{
    char names[16][32];
    int nalgs = algorithms(coll, names);
    CHECK(nalgs > 1, "%s has algorithms", coll_names[coll]);
    for (int a = 0; a < nalgs; a++) {
        /* the k-nomial trees on 16 thread ranks in thread mode only (CI
         * time: the loopback, checker and MPI tests cover the others) */
        const char *mode = getenv("NBCX_PROGRESS");
        if (strcmp(names[a], "knomial") == 0 &&
            (p != 16 || !mode || strcmp(mode, "thread") != 0))
            continue;
        /* the node-aware algorithms only where NBCX_NODE_RANKS makes
         * nodes (inproc.nodes5_*: only they and "auto", which takes them
         * for small buffers there): on one node they are the flat
         * choice, which "auto" runs */
        const char *nodes = getenv("NBCX_NODE_RANKS");
        bool split = nodes && *nodes;
        if ((strcmp(names[a], "hier") == 0) != split &&
            strcmp(names[a], "auto") != 0)
            continue;
        double t0 = th_now();
        CHECK_OK(nbcx_algorithm_set(coll_names[coll], names[a]));
        struct job *job = calloc(1, sizeof *job);
        job->coll = coll;
        job->p = p;
        int err = nbcx_inproc_run(p, coll_body, job);
        char what[160];
        snprintf(what, sizeof what, "%s/%.31s on %d thread ranks",
                 coll_names[coll], names[a], p);
        CHECK(err == NBCX_SUCCESS, "%s: nbcx_inproc_run returned %s", what,
              nbcx_error_string(err));
        collect(job->rep, p, what);
        printf("  %-32s %6.2f s\n", what, th_now() - t0);
        free(job);
    }
    CHECK_OK(nbcx_algorithm_set(coll_names[coll], "auto"));
}

#define COLL_TESTS(P)                                                         \
    static void test_barrier_p##P(void) { test_coll(C_BARRIER, P); }          \
    static void test_bcast_p##P(void) { test_coll(C_BCAST, P); }              \
    static void test_reduce_p##P(void) { test_coll(C_REDUCE, P); }            \
    static void test_allreduce_p##P(void) { test_coll(C_ALLREDUCE, P); }      \
    static void test_gather_p##P(void) { test_coll(C_GATHER, P); }            \
    static void test_scatter_p##P(void) { test_coll(C_SCATTER, P); }          \
    static void test_allgather_p##P(void) { test_coll(C_ALLGATHER, P); }      \
    static void test_alltoall_p##P(void) { test_coll(C_ALLTOALL, P); }
INPROC_SIZES(COLL_TESTS)
#define COLL_ENTRIES(P)                                                       \
    { "barrier_p" #P, test_barrier_p##P },                                    \
    { "bcast_p" #P, test_bcast_p##P },                                        \
    { "reduce_p" #P, test_reduce_p##P },                                      \
    { "allreduce_p" #P, test_allreduce_p##P },                                \
    { "gather_p" #P, test_gather_p##P },                                      \
    { "scatter_p" #P, test_scatter_p##P },                                    \
    { "allgather_p" #P, test_allgather_p##P },                                \
    { "alltoall_p" #P, test_alltoall_p##P }

/* ------------------------------------------------------------------ */
/* Many operations outstanding                                         */
/* ------------------------------------------------------------------ */

enum { OUT_N = 29 }; /* int32 words per operation */

struct out_job {
    int p, nops;
    struct report rep[MAXP];
};

enum okind { O_BCAST, O_ALLREDUCE, O_GATHER, O_BARRIER, O_ALLGATHER,
             O_SCATTER };

static enum okind okind(int k)
{
    return k % 11 == 3 ? O_ALLREDUCE
           : k % 7 == 2 ? O_GATHER
           : k % 13 == 5 ? O_BARRIER
           : k % 17 == 8 ? O_ALLGATHER
           : k % 19 == 9 ? O_SCATTER
                         : O_BCAST;
}

static int out_body(nbcx_comm comm, void *arg)
{
    struct out_job *job = arg;
    int rank, p = job->p, n = job->nops;
    nbcx_comm_rank(comm, &rank);
    struct report *rep = &job->rep[rank];
    int32_t *in = malloc(sizeof(int32_t) * (size_t)n * (size_t)p * OUT_N);
    int32_t *out = malloc(sizeof(int32_t) * (size_t)n * (size_t)p * OUT_N);
    nbcx_request *req = malloc(sizeof *req * (size_t)n);
    /* even ranks start everything, then wait in reverse order; odd ranks
     * wait for each operation right after starting it; every third rank
     * starts everything and uses waitall */
    bool at_once = rank % 2 == 1 && rank % 3 != 2;
    for (int k = 0; k < n; k++) {
        int32_t *ik = in + (size_t)k * (size_t)p * OUT_N;
        int32_t *ok = out + (size_t)k * (size_t)p * OUT_N;
        int root = (k * 5) % p, err;
        for (int i = 0; i < p * OUT_N; i++) {
            ik[i] = k * 100000 + rank * 1000 + i;
            ok[i] = -1;
        }
        switch (okind(k)) {
        case O_BCAST:
            err = nbcx_ibcast(rank == root ? ik : ok, OUT_N, NBCX_INT32,
                              root, comm, &req[k]);
            break;
        case O_ALLREDUCE:
            err = nbcx_iallreduce(ik, ok, OUT_N, NBCX_INT32, NBCX_SUM, comm,
                                  &req[k]);
            break;
        case O_GATHER:
            err = nbcx_igather(ik, OUT_N, NBCX_INT32, ok, OUT_N, NBCX_INT32,
                               root, comm, &req[k]);
            break;
        case O_BARRIER:
            err = nbcx_ibarrier(comm, &req[k]);
            break;
        case O_ALLGATHER:
            err = nbcx_iallgather(ik, OUT_N, NBCX_INT32, ok, OUT_N,
                                  NBCX_INT32, comm, &req[k]);
            break;
        default:
            err = nbcx_iscatter(ik, OUT_N, NBCX_INT32, ok, OUT_N, NBCX_INT32,
                                root, comm, &req[k]);
            break;
        }
        RCHECK(rep, err == NBCX_SUCCESS, "op %d: start: %s", k,
               nbcx_error_string(err));
        if (at_once && err == NBCX_SUCCESS) {
            err = nbcx_wait(&req[k]);
            RCHECK(rep, err == NBCX_SUCCESS, "op %d: wait: %s", k,
                   nbcx_error_string(err));
        }
    }
    if (!at_once) {
        if (rank % 3 == 2) {
            int err = nbcx_waitall(n, req);
            RCHECK(rep, err == NBCX_SUCCESS, "waitall: %s",
                   nbcx_error_string(err));
        } else {
            for (int k = n - 1; k >= 0; k--) {
                int err = nbcx_wait(&req[k]);
                RCHECK(rep, err == NBCX_SUCCESS, "op %d: wait: %s", k,
                       nbcx_error_string(err));
            }
        }
    }
    for (int k = 0; k < n; k++) {
        int32_t *ok = out + (size_t)k * (size_t)p * OUT_N;
        int32_t *ik = in + (size_t)k * (size_t)p * OUT_N;
        int root = (k * 5) % p, bad = 0;
        rep->cases++;
        switch (okind(k)) {
        case O_BCAST:
            for (int i = 0; i < OUT_N; i++)
                bad += (rank == root ? ik : ok)[i] !=
                       k * 100000 + root * 1000 + i;
            break;
        case O_ALLREDUCE:
            for (int i = 0; i < OUT_N; i++) {
                int32_t sum = 0;
                for (int q = 0; q < p; q++)
                    sum += k * 100000 + q * 1000 + i;
                bad += ok[i] != sum;
            }
            break;
        case O_GATHER:
            if (rank == root)
                for (int q = 0; q < p; q++)
                    for (int i = 0; i < OUT_N; i++)
                        bad += ok[q * OUT_N + i] !=
                               k * 100000 + q * 1000 + i;
            break;
        case O_ALLGATHER:
            for (int q = 0; q < p; q++)
                for (int i = 0; i < OUT_N; i++)
                    bad += ok[q * OUT_N + i] != k * 100000 + q * 1000 + i;
            break;
        case O_SCATTER:
            for (int i = 0; i < OUT_N; i++)
                bad += ok[i] != k * 100000 + root * 1000 + rank * OUT_N + i;
            break;
        default:
            break;
        }
        RCHECK(rep, bad == 0, "op %d (kind %d, root %d): %d wrong words", k,
               (int)okind(k), root, bad);
    }
    free(in);
    free(out);
    free(req);
    return NBCX_SUCCESS;
}

static void run_outstanding(int p, const char *slots, const char *slot_max)
{
    setenv("NBCX_INPROC_SLOTS", slots, 1);
    setenv("NBCX_INPROC_SLOT_MAX", slot_max, 1);
    struct out_job *job = calloc(1, sizeof *job);
    job->p = p;
    job->nops = 3 * atoi(slots) + 1;
    int err = nbcx_inproc_run(p, out_body, job);
    char what[128];
    snprintf(what, sizeof what, "%d ops outstanding, %d ranks, %s slots, "
             "slot max %s", job->nops, p, slots, slot_max);
    CHECK(err == NBCX_SUCCESS, "%s: %s", what, nbcx_error_string(err));
    collect(job->rep, p, what);
    free(job);
    unsetenv("NBCX_INPROC_SLOTS");
    unsetenv("NBCX_INPROC_SLOT_MAX");
}

static void test_outstanding(void)
{
    run_outstanding(5, "16", "");
    run_outstanding(7, "2", "");
    run_outstanding(4, "1", "");
    run_outstanding(16, "16", "");
    run_outstanding(6, "16", "0"); /* point-to-point algorithms */
    run_outstanding(5, "2", "100"); /* barriers on slots, the rest not */
}

/* ------------------------------------------------------------------ */
/* Point-to-point through user-built schedules                         */
/* ------------------------------------------------------------------ */

static const int p2p_counts[] = { 0, 1, 25, 4095, 4096, 4097, 12288, 25000 };
enum { NP2P = sizeof p2p_counts / sizeof p2p_counts[0] };

struct p2p_job {
    int p;
    struct report rep[MAXP];
};

static int32_t p2p_word(int src, int dst, int k, int i)
{
    return (int32_t)(src * 1000000 + dst * 10000 + k * 1000) + i;
}

/* Messages of one schedule (one operation: tags are private to it).
 * Which side comes first is forced with a token (tag TOKEN) between the
 * two ranks: message first, the receives wait for a token the sender
 * posts after its data sends; receive first, the sends wait for a token
 * the receiver posts after its data receives (a schedule posts its
 * receives first, then the other nodes in creation order). */
enum { DATA = 9, TOKEN = 10 };
static char token_byte;

/* The token nodes between this rank and peer; returns the node the data
 * nodes must wait for (or -1). */
static nbcx_node token(nbcx_sched s, int peer, bool waiting_side,
                       char *inbox, int *err)
{
    nbcx_node n = -1;
    if (*err != NBCX_SUCCESS)
        return -1;
    if (waiting_side)
        *err = nbcx_sched_recv(s, inbox, 1, NBCX_CHAR, peer, TOKEN, &n);
    else
        *err = nbcx_sched_send(s, &token_byte, 1, NBCX_CHAR, peer, TOKEN,
                               NULL);
    return n;
}

/* Every rank sends every size to every rank (itself included), all with
 * one tag, receive first or message first. */
static void p2p_round(struct report *rep, nbcx_comm comm, int rank, int p,
                      bool recv_first)
{
    size_t total = 0;
    for (int k = 0; k < NP2P; k++)
        total += (size_t)p2p_counts[k];
    int32_t *sbuf = malloc(sizeof(int32_t) * total * (size_t)p + 4);
    int32_t *rbuf = malloc(sizeof(int32_t) * total * (size_t)p + 4);
    char *inbox = calloc((size_t)p, 1);
    size_t off = 0;
    for (int d = 0; d < p; d++)
        for (int k = 0; k < NP2P; k++)
            for (int i = 0; i < p2p_counts[k]; i++)
                sbuf[off++] = p2p_word(rank, d, k, i);
    for (size_t i = 0; i < off; i++)
        rbuf[i] = -1;
    nbcx_sched s;
    nbcx_request req = NBCX_REQUEST_NULL;
    int err = nbcx_sched_create(comm, &s);
    /* data sends, then (message first) the tokens that follow them */
    off = 0;
    for (int d = 0; d < p; d++) {
        nbcx_node wait = recv_first ? token(s, d, true, &inbox[d], &err) : -1;
        for (int k = 0; k < NP2P && err == NBCX_SUCCESS; k++) {
            nbcx_node n;
            err = nbcx_sched_send(s, sbuf + off, p2p_counts[k], NBCX_INT32,
                                  d, DATA, &n);
            if (err == NBCX_SUCCESS && wait >= 0)
                err = nbcx_sched_depend(s, wait, n);
            off += (size_t)p2p_counts[k];
        }
    }
    if (!recv_first)
        for (int d = 0; d < p; d++)
            token(s, d, false, NULL, &err);
    /* data receives, then (receive first) the tokens that follow them */
    off = 0;
    for (int q = 0; q < p; q++) {
        nbcx_node wait = recv_first ? -1 : token(s, q, true, &inbox[q], &err);
        for (int k = 0; k < NP2P && err == NBCX_SUCCESS; k++) {
            nbcx_node n;
            err = nbcx_sched_recv(s, rbuf + off, p2p_counts[k], NBCX_INT32,
                                  q, DATA, &n);
            if (err == NBCX_SUCCESS && wait >= 0)
                err = nbcx_sched_depend(s, wait, n);
            off += (size_t)p2p_counts[k];
        }
    }
    if (recv_first)
        for (int q = 0; q < p; q++)
            token(s, q, false, NULL, &err);
    RCHECK(rep, err == NBCX_SUCCESS, "building: %s", nbcx_error_string(err));
    if (err == NBCX_SUCCESS)
        err = nbcx_sched_start(&s, &req);
    if (err == NBCX_SUCCESS)
        err = nbcx_wait(&req);
    else
        nbcx_sched_free(&s);
    RCHECK(rep, err == NBCX_SUCCESS, "%s first: %s",
           recv_first ? "receives" : "messages", nbcx_error_string(err));
    off = 0;
    long bad = 0;
    for (int q = 0; q < p; q++)
        for (int k = 0; k < NP2P; k++)
            for (int i = 0; i < p2p_counts[k]; i++)
                bad += rbuf[off++] != p2p_word(q, rank, k, i);
    rep->cases++;
    RCHECK(rep, bad == 0, "%s first: %ld words wrong",
           recv_first ? "receives" : "messages", bad);
    free(sbuf);
    free(rbuf);
    free(inbox);
}

/* Rank 0 sends n int32 to rank 1, which receives them as rn x `as`:
 * expects `expect` at the receiver, success at the sender, and the
 * whole receive elements that fit. Ranks 0 and 1 only. */
static void p2p_typed(struct report *rep, nbcx_comm comm, int rank, int n,
                      nbcx_datatype as, int rn, int expect, bool recv_first)
{
    if (rank > 1)
        return;
    int32_t *buf = malloc(sizeof(int32_t) * (size_t)n + 16);
    size_t rbytes = 0;
    if (rank == 1) {
        ptrdiff_t ext;
        nbcx_datatype_extent(as, &ext);
        rbytes = (size_t)ext * (size_t)rn;
    }
    uint32_t *rbuf = words(rbytes / 4 + 4);
    for (int i = 0; i < n; i++)
        buf[i] = 7000000 + i;
    char inbox = 0;
    nbcx_sched s;
    nbcx_request req = NBCX_REQUEST_NULL;
    nbcx_node data = -1;
    int err = nbcx_sched_create(comm, &s);
    /* the side that waits for the token: the receiver if the message
     * comes first, else the sender */
    bool waits = (rank == 1) != recv_first;
    if (rank == 0 && err == NBCX_SUCCESS)
        err = nbcx_sched_send(s, buf, n, NBCX_INT32, 1, DATA, &data);
    if (rank == 1 && err == NBCX_SUCCESS)
        err = nbcx_sched_recv(s, rbuf, rn, as, 0, DATA, &data);
    nbcx_node tok = token(s, 1 - rank, waits, &inbox, &err);
    if (err == NBCX_SUCCESS && tok >= 0)
        err = nbcx_sched_depend(s, tok, data);
    if (err == NBCX_SUCCESS)
        err = nbcx_sched_start(&s, &req);
    else
        nbcx_sched_free(&s);
    if (err == NBCX_SUCCESS)
        err = nbcx_wait(&req);
    rep->cases++;
    int want = rank == 1 ? expect : NBCX_SUCCESS;
    RCHECK(rep, err == want, "%d int32 received as %d x %s (%s first): "
           "got %s, expected %s", n, rn, nbcxi_type(as)->name,
           recv_first ? "receive" : "message", nbcx_error_string(err),
           nbcx_error_string(want));
    if (rank == 1) {
        /* the bytes that fit arrived, in the receive type's layout */
        struct nbcx_datatype_s *t = nbcxi_type(as);
        int elems = (int)(NBCXI_MIN((size_t)n * 4, (size_t)rn * t->size) /
                          t->size);
        size_t fits = (size_t)elems * t->size / 4;
        uint32_t *packed = words(fits + 1);
        nbcxi_type_pack(rbuf, elems, t, packed);
        long bad = 0;
        for (size_t i = 0; i < fits; i++)
            bad += packed[i] != 7000000u + i;
        RCHECK(rep, bad == 0, "%d int32 as %s: %ld words wrong", n, t->name,
               bad);
        RCHECK(rep, rbuf[rbytes / 4] == SENTINEL, "written past the end");
        free(packed);
    }
    free(buf);
    free(rbuf);
}

static int p2p_body(nbcx_comm comm, void *arg)
{
    struct p2p_job *job = arg;
    int rank;
    nbcx_comm_rank(comm, &rank);
    struct report *rep = &job->rep[rank];
    p2p_round(rep, comm, rank, job->p, true);
    p2p_round(rep, comm, rank, job->p, false);
    if (job->p < 2)
        return NBCX_SUCCESS;
    for (int rf = 0; rf < 2; rf++) {
        for (int n = 2; n <= 20000; n *= 100) {
            p2p_typed(rep, comm, rank, n, NBCX_INT64, n / 2, NBCX_SUCCESS,
                      rf);
            p2p_typed(rep, comm, rank, n, GAP_MID, n / 2, NBCX_SUCCESS, rf);
            p2p_typed(rep, comm, rank, n, NBCX_INT32, n / 2,
                      NBCX_ERR_TRUNCATE, rf);
            p2p_typed(rep, comm, rank, n, GAP_MID, n / 4, NBCX_ERR_TRUNCATE,
                      rf);
            p2p_typed(rep, comm, rank, n, NBCX_INT32, n + 5, NBCX_SUCCESS,
                      rf);
        }
        /* 3 int32 are 12 bytes: one element of DOUBLE_INT */
        p2p_typed(rep, comm, rank, 3, NBCX_DOUBLE_INT, 1, NBCX_SUCCESS, rf);
        /* 5 int32 end inside a second INT64: the signatures differ */
        p2p_typed(rep, comm, rank, 5, NBCX_INT64, 3, NBCX_ERR_TRANSPORT, rf);
    }
    return NBCX_SUCCESS;
}

static void test_p2p(void)
{
    static const int ps[] = { 1, 2, 4, 7 };
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        struct p2p_job *job = calloc(1, sizeof *job);
        job->p = ps[i];
        int err = nbcx_inproc_run(ps[i], p2p_body, job);
        char what[64];
        snprintf(what, sizeof what, "p2p on %d ranks", ps[i]);
        CHECK(err == NBCX_SUCCESS, "%s: %s", what, nbcx_error_string(err));
        collect(job->rep, ps[i], what);
        free(job);
    }
}

/* ------------------------------------------------------------------ */
/* One thread drives a whole world                                     */
/* ------------------------------------------------------------------ */

static void test_single(void)
{
    enum { P = 5, N = 41 };
    for (int coll = 0; coll < NCOLL; coll++) {
        char names[16][32];
        int nalgs = algorithms((enum coll_id)coll, names);
        for (int a = 0; a < nalgs; a++) {
            CHECK_OK(nbcx_algorithm_set(coll_names[coll], names[a]));
            nbcx_comm c[P];
            REQUIRE_OK(nbcxi_inproc_world_create(P, c));
            static int32_t in[P][P * N], out[P][P * N];
            nbcx_request req[P];
            for (int r = 0; r < P; r++)
                for (int i = 0; i < P * N; i++) {
                    in[r][i] = r * 10000 + i;
                    out[r][i] = -1;
                }
            int root = 3;
            for (int r = 0; r < P; r++) {
                int err;
                switch (coll) {
                case C_BARRIER: err = nbcx_ibarrier(c[r], &req[r]); break;
                case C_BCAST:
                    err = nbcx_ibcast(r == root ? in[r] : out[r], N,
                                      NBCX_INT32, root, c[r], &req[r]);
                    break;
                case C_REDUCE:
                    err = nbcx_ireduce(in[r], out[r], N, NBCX_INT32, NBCX_SUM,
                                       root, c[r], &req[r]);
                    break;
                case C_ALLREDUCE:
                    err = nbcx_iallreduce(in[r], out[r], N, NBCX_INT32,
                                          NBCX_SUM, c[r], &req[r]);
                    break;
                case C_GATHER:
                    err = nbcx_igather(in[r], N, NBCX_INT32, out[r], N,
                                       NBCX_INT32, root, c[r], &req[r]);
                    break;
                case C_SCATTER:
                    err = nbcx_iscatter(in[r], N, NBCX_INT32, out[r], N,
                                        NBCX_INT32, root, c[r], &req[r]);
                    break;
                case C_ALLGATHER:
                    err = nbcx_iallgather(in[r], N, NBCX_INT32, out[r], N,
                                          NBCX_INT32, c[r], &req[r]);
                    break;
                default:
                    err = nbcx_ialltoall(in[r], N, NBCX_INT32, out[r], N,
                                         NBCX_INT32, c[r], &req[r]);
                    break;
                }
                CHECK_OK(err);
            }
            CHECK_OK(nbcx_waitall(P, req));
            long bad = 0;
            for (int r = 0; r < P; r++)
                for (int i = 0; i < N; i++) {
                    int32_t sum = 0;
                    for (int q = 0; q < P; q++)
                        sum += q * 10000 + i;
                    switch (coll) {
                    case C_BCAST:
                        bad += (r == root ? in[r] : out[r])[i] !=
                               root * 10000 + i;
                        break;
                    case C_REDUCE:
                        bad += r == root ? out[r][i] != sum : out[r][i] != -1;
                        break;
                    case C_ALLREDUCE: bad += out[r][i] != sum; break;
                    case C_SCATTER:
                        bad += out[r][i] != root * 10000 + r * N + i;
                        break;
                    default:
                        for (int q = 0; q < P; q++) {
                            int32_t got = out[r][q * N + i];
                            if (coll == C_GATHER)
                                bad += r == root ? got != q * 10000 + i
                                                 : got != -1;
                            else if (coll == C_ALLGATHER)
                                bad += got != q * 10000 + i;
                            else if (coll == C_ALLTOALL)
                                bad += got != q * 10000 + r * N + i;
                        }
                        break;
                    }
                }
            th_cases++;
            CHECK(bad == 0, "%s/%s, one thread, %d ranks: %ld wrong",
                  coll_names[coll], names[a], P, bad);
            for (int r = 0; r < P; r++)
                CHECK_OK(nbcx_comm_free(&c[r]));
        }
        CHECK_OK(nbcx_algorithm_set(coll_names[coll], "auto"));
    }
}

/* Arguments MPI calls insignificant may be anything (a non-root's receive
 * side of reduce and gather, its send side of scatter): NULL buffers and
 * types there must work with every algorithm, "slots" included. */
static void test_insignificant(void)
{
    enum { P = INSIG_P, N = INSIG_N };
    for (int ci = 0; ci < TH_COUNT(insig_colls); ci++) {
        enum coll_id coll = insig_colls[ci];
        char names[16][32];
        int nalgs = algorithms(coll, names);
        for (int a = 0; a < nalgs; a++) {
            CHECK_OK(nbcx_algorithm_set(coll_names[coll], names[a]));
            nbcx_comm c[P];
            REQUIRE_OK(nbcxi_inproc_world_create(P, c));
            int32_t in[P][P * N], out[P][P * N];
            insig_fill(in, out);
            nbcx_request req[P];
            insig_start_all(coll, names[a], in, out, c, req);
            int err = nbcx_waitall(P, req);
            CHECK(err == NBCX_SUCCESS, "%s/%s: waitall: %s", coll_names[coll],
                  names[a], nbcx_error_string(err));
            int bad = insig_wrong(coll, out);
            CHECK(bad == 0, "%s/%s: %d wrong results", coll_names[coll],
                  names[a], bad);
            for (int r = 0; r < P; r++)
                CHECK_OK(nbcx_comm_free(&c[r]));
            th_cases++;
        }
        CHECK_OK(nbcx_algorithm_set(coll_names[coll], "auto"));
    }
}

/* ------------------------------------------------------------------ */
/* nbcx_inproc_run itself                                              */
/* ------------------------------------------------------------------ */

static atomic_int calls;

static int count_body(nbcx_comm comm, void *arg)
{
    (void)comm;
    (void)arg;
    atomic_fetch_add(&calls, 1);
    return NBCX_SUCCESS;
}

struct info_job {
    int p;
    atomic_int seen[MAXP];
    atomic_int bad;
};

static int info_body(nbcx_comm comm, void *arg)
{
    struct info_job *job = arg;
    int rank = -1, size = -1;
    const char *name = NULL;
    if (nbcx_comm_rank(comm, &rank) != NBCX_SUCCESS ||
        nbcx_comm_size(comm, &size) != NBCX_SUCCESS ||
        nbcx_comm_transport(comm, &name) != NBCX_SUCCESS || rank < 0 ||
        rank >= job->p || size != job->p || strcmp(name, "inproc") != 0)
        atomic_fetch_add(&job->bad, 1);
    else
        atomic_fetch_add(&job->seen[rank], 1);
    return NBCX_SUCCESS;
}

static int fail_body(nbcx_comm comm, void *arg)
{
    (void)arg;
    int rank;
    nbcx_comm_rank(comm, &rank);
    return rank == 3 ? 77 : rank == 5 ? 55 : rank == 6 ? 42 : 0;
}

static int free_body(nbcx_comm comm, void *arg)
{
    (void)arg;
    nbcx_request req;
    int err = nbcx_ibarrier(comm, &req);
    if (err == NBCX_SUCCESS)
        err = nbcx_wait(&req);
    if (err == NBCX_SUCCESS)
        err = nbcx_comm_free(&comm);
    return err;
}

/* Inner runs: each rank of an outer run runs its own world. */
static int inner_body(nbcx_comm comm, void *arg)
{
    int *base = arg, rank, size;
    nbcx_comm_rank(comm, &rank);
    nbcx_comm_size(comm, &size);
    int32_t v = *base + rank, sum = 0;
    nbcx_request req;
    int err = nbcx_iallreduce(&v, &sum, 1, NBCX_INT32, NBCX_SUM, comm, &req);
    if (err == NBCX_SUCCESS)
        err = nbcx_wait(&req);
    if (err == NBCX_SUCCESS &&
        sum != size * *base + size * (size - 1) / 2)
        err = NBCX_ERR_INTERN;
    return err;
}

static int outer_body(nbcx_comm comm, void *arg)
{
    (void)arg;
    int rank;
    nbcx_comm_rank(comm, &rank);
    int base = 1000 * (rank + 1);
    return nbcx_inproc_run(3 + rank, inner_body, &base);
}

/* A rank leaves with an error; the others' pending operations fail. */
struct orphan_job {
    int p, leaver, count;
    atomic_int rc[MAXP];
};

static int orphan_body(nbcx_comm comm, void *arg)
{
    struct orphan_job *job = arg;
    int rank;
    nbcx_comm_rank(comm, &rank);
    if (rank == job->leaver)
        return NBCX_ERR_OP; /* any code: it is returned by the run */
    int err;
    nbcx_request req;
    if (job->count == 0) {
        err = nbcx_ibarrier(comm, &req);
    } else {
        int32_t *buf = calloc((size_t)job->count, sizeof *buf);
        err = nbcx_ibcast(buf, job->count, NBCX_INT32, job->leaver, comm,
                          &req);
        if (err == NBCX_SUCCESS)
            err = nbcx_wait(&req);
        free(buf);
        atomic_store(&job->rc[rank], err);
        return NBCX_SUCCESS;
    }
    if (err == NBCX_SUCCESS)
        err = nbcx_wait(&req);
    atomic_store(&job->rc[rank], err);
    return NBCX_SUCCESS;
}

/* nbcx_comm_set_transport on ranks that are threads (issue 16): its own
 * name is a no-op, an unknown one and "mpi" NBCX_ERR_ARG, "ucx"
 * NBCX_ERR_TRANSPORT (not in the build, or threads of one process stay
 * on inproc), and the communicator stays on inproc. Returns the number
 * of wrong answers. */
static int set_transport_body(nbcx_comm comm, void *arg)
{
    (void)arg;
    const char *name = NULL;
    int bad = nbcx_comm_set_transport(comm, "inproc") != NBCX_SUCCESS;
    bad += nbcx_comm_set_transport(comm, "bogus") != NBCX_ERR_ARG;
    bad += nbcx_comm_set_transport(comm, "ucx") != NBCX_ERR_TRANSPORT;
    /* (nothing to go back to: "mpi" is kept only from nbcx_comm_from_mpi) */
    bad += nbcx_comm_set_transport(comm, "mpi") != NBCX_ERR_ARG;
    bad += nbcx_comm_transport(comm, &name) != NBCX_SUCCESS || !name ||
           strcmp(name, "inproc") != 0;
    return bad;
}

static void test_api(void)
{
    CHECK_OK(nbcx_inproc_run(3, set_transport_body, NULL));
    CHECK_RC(nbcx_inproc_run(0, count_body, NULL), NBCX_ERR_ARG);
    CHECK_RC(nbcx_inproc_run(-3, count_body, NULL), NBCX_ERR_ARG);
    CHECK_RC(nbcx_inproc_run(4, NULL, NULL), NBCX_ERR_ARG);
    CHECK_INT(atomic_load(&calls), 0);
    CHECK_OK(nbcx_inproc_run(6, count_body, NULL));
    CHECK_INT(atomic_load(&calls), 6);

    static const int ps[] = { 1, 3, 64 };
    for (size_t i = 0; i < 3; i++) {
        struct info_job *job = calloc(1, sizeof *job);
        job->p = ps[i];
        CHECK_OK(nbcx_inproc_run(ps[i], info_body, job));
        CHECK_INT(atomic_load(&job->bad), 0);
        for (int r = 0; r < ps[i]; r++)
            CHECK(atomic_load(&job->seen[r]) == 1, "rank %d of %d ran %d "
                  "times", r, ps[i], atomic_load(&job->seen[r]));
        free(job);
    }
    /* the lowest failing rank's code */
    CHECK_RC(nbcx_inproc_run(7, fail_body, NULL), 77);
    CHECK_RC(nbcx_inproc_run(6, fail_body, NULL), 77);
    CHECK_OK(nbcx_inproc_run(3, fail_body, NULL));
    CHECK_OK(nbcx_inproc_run(5, free_body, NULL));
    CHECK_OK(nbcx_inproc_run(3, outer_body, NULL));

    /* pending operations fail when a rank has left with an error */
    static const struct { const char *coll, *alg; int count; } orphans[] = {
        { "barrier", "slots", 0 }, { "barrier", "dissemination", 0 },
        { "bcast", "slots", 10000 }, { "bcast", "binomial", 10000 },
        { "bcast", "binomial", 10 },
    };
    for (size_t i = 0; i < sizeof orphans / sizeof orphans[0]; i++) {
        CHECK_OK(nbcx_algorithm_set(orphans[i].coll, orphans[i].alg));
        struct orphan_job *job = calloc(1, sizeof *job);
        job->p = 4;
        job->leaver = 1;
        job->count = orphans[i].count;
        CHECK_RC(nbcx_inproc_run(4, orphan_body, job), NBCX_ERR_OP);
        for (int r = 0; r < 4; r++)
            if (r != 1)
                CHECK(atomic_load(&job->rc[r]) == NBCX_ERR_TRANSPORT,
                      "%s/%s: rank %d got %s", orphans[i].coll,
                      orphans[i].alg, r,
                      nbcx_error_string(atomic_load(&job->rc[r])));
        CHECK_OK(nbcx_algorithm_set(orphans[i].coll, "auto"));
        free(job);
        th_cases++;
    }
}

/* ------------------------------------------------------------------ */

static const struct th_test tests[] = {
    { "api", test_api },
    { "p2p", test_p2p },
    { "single", test_single },
    { "insignificant", test_insignificant },
    { "outstanding", test_outstanding },
    INPROC_SIZE_ENTRIES(COLL_ENTRIES),
};

int main(int argc, char **argv)
{
    check_mode();
    quick = test_quick();
    if (nbcx_op_create(mat_fn, 0, NULL, &mat_op) != NBCX_SUCCESS)
        return 2;
    int rc = th_main(argc, argv, tests, TH_COUNT(tests));
    nbcx_op_free(&mat_op);
    return rc;
}
