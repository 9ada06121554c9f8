/*
 * test_algorithms.c - every algorithm of every collective on loopback
 * worlds, against a sequential reference computed here.
 *
 * For each collective the algorithms come from nbcx_algorithm_names()
 * (plus "auto") and are forced with nbcx_algorithm_set(). Each runs on
 * worlds of 1..16, 24, 33 and 64 ranks with counts 0, 1, 7 and 203 (the
 * last spans many fragments: the fragment size is set to 100 bytes, not a
 * multiple of 8 or 16, so pipelines also cut elements), roots 0, last and
 * middle, with and without NBCX_IN_PLACE where MPI allows it. Data-moving
 * collectives run with NBCX_INT32 everywhere, with types that differ but
 * hold the same bytes (INT32 x 2n on one side, INT64 x n on the other,
 * alternating between ranks), and with non-contiguous derived types made
 * by a test face (gaps inside every element that must never be written).
 * Reductions use a table of (type, op): NBCX_INT32 with SUM, MAX, BXOR;
 * NBCX_DOUBLE (exact small integers) with SUM and MAX; NBCX_DOUBLE_INT
 * with MINLOC; a non-commutative user op (2x2 matrix product mod 251); a
 * commutative user op; and the derived type with SUM.
 *
 * Every word of data names its origin (source rank, block, index, and a
 * per-case salt), so a wrong result reads "got word 5 of block 2 from
 * rank 1, expected word 5 of block 2 from rank 3" rather than two
 * numbers. Send buffers must come back unchanged, and buffers MPI calls
 * insignificant (a non-root's receive buffer of reduce or gather, a
 * non-root's send buffer of scatter) must not be written. The loopback
 * transport also rejects any send or receive on the bytes of a pending
 * receive (or a receive on those of a pending send): a missing edge.
 *
 * Worlds use tag_ub = 65535, so only 16 tag slots exist, 8 of them for
 * nonblocking operations: every world runs many more collectives one
 * after the other (tag wrap-around).
 * The "concurrent" test has 8 different collectives in flight at once.
 * The *_random tests rerun everything with the loopback's random order.
 *
 * "slots" (the shared-memory algorithms) needs the inproc transport: on a
 * loopback world forcing it falls back to the automatic choice, which
 * the "auto" runs cover already, so the big loops skip it (the
 * insignificant_args test still forces it, as a check of the fallback).
 * tests/inproc runs it.
 */
#include <stdint.h>

#include "blocks.h"
#include "colls.h"
#include "gaptype.h"
#include "coll/coll.h"
#include "progress/request.h"
#include "sched/sched.h"
#include "harness.h"
#include "lbworld.h"
#include "redops.h"
#include "wordcheck.h"

enum { MAXP = 64, SEGSIZE = 100, TAG_UB = 65535 };
enum { MAX_FAILED_CASES = 10 }; /* per algorithm, then skip it */

static const int sizes[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
                             15, 16, 24, 33, 64 };
static const int counts[] = { 0, 1, 7, 203 };

/* enum coll_id and coll_names: colls.h */

/* ------------------------------------------------------------------ */
/* Worlds and running one collective on every rank                     */
/* ------------------------------------------------------------------ */

/* The algorithm under test and the world it runs on. A world is reused
 * for many cases, and replaced after a failure (a deadlocked operation
 * stays in the old world forever). */
struct ctx {
    enum coll_id coll;
    const char *alg;
    struct lb_world w;  /* p, mode, seed and the world (lbworld.h) */
    int failed;         /* failed cases of this algorithm */
    char desc[200];     /* the case, for messages */
};

static bool ctx_world(struct ctx *x) { return lb_world_get(&x->w); }

static void ctx_drop_world(struct ctx *x) { lb_world_drop(&x->w); }

/* Describes the case for messages (and counts it); false if there is
 * no world to run it on. */
static bool ctx_case(struct ctx *x, const char *fmt, ...)
{
    int n = snprintf(x->desc, sizeof x->desc, "%s alg=%s p=%d mode=%s ",
                     coll_names[x->coll], x->alg, x->w.p,
                     x->w.mode == LOOPBACK_RANDOM ? "random" : "ordered");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->desc + n, sizeof x->desc - (size_t)n, fmt, ap);
    va_end(ap);
    th_context = x->desc;
    th_cases++;
    return ctx_world(x);
}

/* Waits for the requests of one collective (started[r]: the start call's
 * return code on rank r), even after a start error. False if the case
 * failed already: a start error, a deadlock or an error result. */
static bool ctx_finish(struct ctx *x, const int started[],
                       nbcx_request req[])
{
    return lb_world_finish(&x->w, started, req, true);
}

/* ------------------------------------------------------------------ */
/* Buffers of self-describing words (words.h), in each rank's layout   */
/* ------------------------------------------------------------------ */

/* How the data of the collective is typed. A block holds `count` units:
 *   T_INT32    a unit is one int32, NBCX_INT32 everywhere;
 *   T_MIXED    a unit is 8 bytes: even ranks send INT32 x 2n and
 *              receive INT64 x n, odd ranks the other way round;
 *   T_DERIVED  a unit is 8 bytes: even ranks send gap_mid x n and
 *              receive gap_front x n, odd ranks send INT64 x n and
 *              receive INT32 x 2n.
 * All of them match in bytes, as MPI requires of the type signatures. */
enum tmode { T_INT32, T_MIXED, T_DERIVED, NTMODES };
static const char *const tmode_names[NTMODES] = { "int32", "mixed",
                                                  "derived" };

/* One rank's (type, count) for a block and its layout: struct tsel of
 * blocks.h. */
static const struct tsel SEL_GAP_MID = { GAP_MID, 0, 3, 2, { 0, 2 } };
static const struct tsel SEL_GAP_FRONT = { GAP_FRONT, 0, 3, 2, { 1, 2 } };

static struct tsel tsel(enum tmode m, int rank, int count, bool send)
{
    struct tsel t;
    bool even = rank % 2 == 0;
    if (m == T_INT32)
        t = SEL_INT32;
    else if (m == T_MIXED)
        t = even == send ? SEL_INT32 : SEL_INT64;
    else if (even)
        t = send ? SEL_GAP_MID : SEL_GAP_FRONT;
    else
        t = send ? SEL_INT64 : SEL_INT32;
    /* count elements of dpe data words each carry the block's words */
    int words = m == T_INT32 ? count : 2 * count;
    t.count = words / t.dpe;
    return t;
}

/* Data words per block (the same on every rank). */
static size_t block_words(enum tmode m, int count)
{
    return (size_t)count * (m == T_INT32 ? 1 : 2);
}

static int case_salt;

/* ------------------------------------------------------------------ */
/* Barrier                                                             */
/* ------------------------------------------------------------------ */

/* Everyone enters and leaves. With `late` >= 0, rank late enters only
 * after everybody else has been progressed for a while: none of them may
 * leave before it. */
static void case_barrier(struct ctx *x, int late)
{
    if (!ctx_case(x, "late=%d", late))
        return;
    nbcx_request req[MAXP];
    int started[MAXP] = { 0 };
    for (int r = 0; r < x->w.p; r++)
        if (r != late)
            started[r] = nbcx_ibarrier(x->w.c[r], &req[r]);
    if (late >= 0) {
        for (int k = 0; k < 4 * x->w.p + 8; k++)
            nbcx_progress();
        for (int r = 0; r < x->w.p; r++) {
            if (r == late || !req[r])
                continue;
            int flag = 0;
            nbcx_test(&req[r], &flag);
            CHECK(!flag, "rank %d left the barrier before rank %d entered",
                  r, late);
        }
        started[late] = nbcx_ibarrier(x->w.c[late], &req[late]);
    }
    ctx_finish(x, started, req);
}

static void run_barrier(struct ctx *x)
{
    case_barrier(x, -1);
    int late[3] = { 0, x->w.p - 1, x->w.p / 2 };
    for (int k = 0; k < 3; k++)
        if (x->w.p > 1 && (k == 0 || late[k] != late[k - 1]))
            case_barrier(x, late[k]);
}

/* ------------------------------------------------------------------ */
/* Broadcast                                                           */
/* ------------------------------------------------------------------ */

static void case_bcast(struct ctx *x, int count, int root, enum tmode m)
{
    if (!ctx_case(x, "count=%d root=%d types=%s", count, root,
                  tmode_names[m]))
        return;
    int salt = ++case_salt, p = x->w.p;
    size_t bw = block_words(m, count);
    uint32_t *buf[MAXP], *want[MAXP];
    struct tsel t[MAXP];
    nbcx_request req[MAXP];
    int started[MAXP] = { 0 };
    for (int r = 0; r < p; r++) {
        t[r] = tsel(m, r, count, r == root);
        buf[r] = words(mem_words(t[r]));
        want[r] = words(mem_words(t[r]));
        put_block(want[r], t[r], 0, salt, root, 0, bw);
        if (r == root)
            put_block(buf[r], t[r], 0, salt, root, 0, bw);
    }
    for (int r = 0; r < p; r++)
        started[r] = nbcx_ibcast(buf[r], t[r].count, t[r].type, root,
                                 x->w.c[r], &req[r]);
    if (ctx_finish(x, started, req))
        for (int r = 0; r < p; r++)
            same_words("buffer", r, buf[r], want[r], mem_words(t[r]));
    for (int r = 0; r < p; r++) {
        free(buf[r]);
        free(want[r]);
    }
}

/* ------------------------------------------------------------------ */
/* Gather, scatter, allgather, alltoall                                */
/* ------------------------------------------------------------------ */
/*
 * Each rank r has a send side s[r] and a receive side t[r]. Buffers start
 * as the sentinel; the expected receive buffer is the initial one with
 * the data words written in, so gaps and insignificant buffers must keep
 * the sentinel. Send buffers are compared with a copy taken before.
 */
struct bufs {
    uint32_t *sbuf[MAXP], *sref[MAXP], *rbuf[MAXP], *want[MAXP];
    size_t slen[MAXP], rlen[MAXP];
    struct tsel s[MAXP], t[MAXP];
    nbcx_request req[MAXP];
    int started[MAXP]; /* what each rank's start call returned */
};

static void bufs_alloc(struct bufs *b, int p, enum tmode m, int count,
                       int sblocks, int rblocks)
{
    for (int r = 0; r < p; r++) {
        b->s[r] = tsel(m, r, count, true);
        b->t[r] = tsel(m, r, count, false);
        b->slen[r] = mem_words(b->s[r]) * (size_t)sblocks;
        b->rlen[r] = mem_words(b->t[r]) * (size_t)rblocks;
        b->sbuf[r] = words(b->slen[r]);
        b->rbuf[r] = words(b->rlen[r]);
        b->started[r] = 0;
    }
}

/* Call once the inputs are filled in: copies of the send buffers and the
 * starting point of the expected receive buffers. */
static void bufs_snapshot(struct bufs *b, int p)
{
    for (int r = 0; r < p; r++) {
        b->sref[r] = copy_words(b->sbuf[r], b->slen[r]);
        b->want[r] = copy_words(b->rbuf[r], b->rlen[r]);
    }
}

static void bufs_free(struct bufs *b, int p)
{
    for (int r = 0; r < p; r++) {
        free(b->sbuf[r]);
        free(b->sref[r]);
        free(b->rbuf[r]);
        free(b->want[r]);
    }
}

/* Completes the case; if it ran, checks that every send buffer is
 * unchanged and every receive buffer holds what is expected (names of
 * the buffers in messages: a non-root's are "non-root sendbuf" or
 * "non-root recvbuf" where MPI calls them insignificant); frees the
 * buffers. */
static void bufs_finish(struct ctx *x, struct bufs *b, int root,
                        bool nonroot_send, bool nonroot_recv)
{
    if (ctx_finish(x, b->started, b->req))
        for (int r = 0; r < x->w.p; r++) {
            bool other = r != root;
            same_words(other && nonroot_send ? "non-root sendbuf"
                                             : "sendbuf",
                       r, b->sbuf[r], b->sref[r], b->slen[r]);
            same_words(other && nonroot_recv ? "non-root recvbuf"
                                             : "recvbuf",
                       r, b->rbuf[r], b->want[r], b->rlen[r]);
        }
    bufs_free(b, x->w.p);
}

/* A case of gather, scatter, allgather or alltoall (root < 0: no root):
 * describes it (ctx_case) and, if it can run, allocates its buffers
 * (bufs_alloc). Its salt, or 0 if it cannot run. */
static int bufs_case(struct ctx *x, struct bufs *b, enum tmode m, int count,
                     int root, bool in_place, int sblocks, int rblocks)
{
    bool ok = root >= 0 ? ctx_case(x, "count=%d root=%d types=%s "
                                   "in_place=%d", count, root,
                                   tmode_names[m], in_place)
                        : ctx_case(x, "count=%d types=%s in_place=%d",
                                   count, tmode_names[m], in_place);
    if (!ok)
        return 0;
    bufs_alloc(b, x->w.p, m, count, sblocks, rblocks);
    return ++case_salt;
}

static void case_gather(struct ctx *x, int count, int root, enum tmode m,
                        bool in_place)
{
    const int p = x->w.p;
    struct bufs b;
    /* every rank: a receive buffer */
    int salt = bufs_case(x, &b, m, count, root, in_place, 1, p);
    if (!salt)
        return;
    size_t bw = block_words(m, count);
    for (int r = 0; r < p; r++)
        put_block(b.sbuf[r], b.s[r], 0, salt, r, 0, bw);
    if (in_place)
        put_block(b.rbuf[root], b.t[root], (size_t)root, salt, root, 0, bw);
    bufs_snapshot(&b, p);
    for (int src = 0; src < p; src++)
        put_block(b.want[root], b.t[root], (size_t)src, salt, src, 0, bw);
    for (int r = 0; r < p; r++) {
        const void *sb = (r == root && in_place) ? NBCX_IN_PLACE : b.sbuf[r];
        b.started[r] = nbcx_igather(sb, b.s[r].count, b.s[r].type, b.rbuf[r],
                                    b.t[r].count, b.t[r].type, root, x->w.c[r],
                                    &b.req[r]);
    }
    bufs_finish(x, &b, root, false, true);
}

static void case_scatter(struct ctx *x, int count, int root, enum tmode m,
                         bool in_place)
{
    const int p = x->w.p;
    struct bufs b;
    /* every rank: a send buffer */
    int salt = bufs_case(x, &b, m, count, root, in_place, p, 1);
    if (!salt)
        return;
    size_t bw = block_words(m, count);
    for (int d = 0; d < p; d++)
        put_block(b.sbuf[root], b.s[root], (size_t)d, salt, root, d, bw);
    bufs_snapshot(&b, p);
    for (int r = 0; r < p; r++)
        if (!(r == root && in_place))
            put_block(b.want[r], b.t[r], 0, salt, root, r, bw);
    for (int r = 0; r < p; r++) {
        void *rb = (r == root && in_place) ? NBCX_IN_PLACE : b.rbuf[r];
        b.started[r] = nbcx_iscatter(b.sbuf[r], b.s[r].count, b.s[r].type, rb,
                                     b.t[r].count, b.t[r].type, root,
                                     x->w.c[r], &b.req[r]);
    }
    bufs_finish(x, &b, root, true, false);
}

static void case_allgather(struct ctx *x, int count, enum tmode m,
                           bool in_place)
{
    const int p = x->w.p;
    struct bufs b;
    int salt = bufs_case(x, &b, m, count, -1, in_place, 1, p);
    if (!salt)
        return;
    size_t bw = block_words(m, count);
    for (int r = 0; r < p; r++) {
        put_block(b.sbuf[r], b.s[r], 0, salt, r, 0, bw);
        if (in_place)
            put_block(b.rbuf[r], b.t[r], (size_t)r, salt, r, 0, bw);
    }
    bufs_snapshot(&b, p);
    for (int r = 0; r < p; r++)
        for (int src = 0; src < p; src++)
            put_block(b.want[r], b.t[r], (size_t)src, salt, src, 0, bw);
    for (int r = 0; r < p; r++)
        b.started[r] = nbcx_iallgather(in_place ? NBCX_IN_PLACE : b.sbuf[r],
                                       b.s[r].count, b.s[r].type, b.rbuf[r],
                                       b.t[r].count, b.t[r].type, x->w.c[r],
                                       &b.req[r]);
    bufs_finish(x, &b, -1, false, false);
}

static void case_alltoall(struct ctx *x, int count, enum tmode m,
                          bool in_place)
{
    const int p = x->w.p;
    struct bufs b;
    int salt = bufs_case(x, &b, m, count, -1, in_place, p, p);
    if (!salt)
        return;
    size_t bw = block_words(m, count);
    for (int r = 0; r < p; r++)
        for (int d = 0; d < p; d++) {
            put_block(b.sbuf[r], b.s[r], (size_t)d, salt, r, d, bw);
            if (in_place) /* the data to send starts in rbuf */
                put_block(b.rbuf[r], b.t[r], (size_t)d, salt, r, d, bw);
        }
    bufs_snapshot(&b, p);
    for (int r = 0; r < p; r++)
        for (int src = 0; src < p; src++)
            put_block(b.want[r], b.t[r], (size_t)src, salt, src, r, bw);
    for (int r = 0; r < p; r++) {
        /* In place, MPI uses the receive side's count and type for both. */
        const struct tsel *s = in_place ? &b.t[r] : &b.s[r];
        b.started[r] = nbcx_ialltoall(in_place ? NBCX_IN_PLACE : b.sbuf[r],
                                      s->count, s->type, b.rbuf[r],
                                      b.t[r].count, b.t[r].type, x->w.c[r],
                                      &b.req[r]);
    }
    bufs_finish(x, &b, -1, false, false);
}

/* ------------------------------------------------------------------ */
/* Reductions: the (type, op) table and its reference                  */
/* ------------------------------------------------------------------ */

static struct redop redops[] = {
    REDOP_INT32_SUM,  REDOP_INT32_MAX,  REDOP_INT32_BXOR,
    REDOP_DOUBLE_SUM, REDOP_DOUBLE_MAX, REDOP_DOUBLE_INT_MINLOC,
    REDOP_MATRIX,     REDOP_SUMMOD,     REDOP_GAP_SUM,
};
#define NREDOPS ((int)(sizeof redops / sizeof redops[0]))

static void create_user_ops(void) { redops_create_user(redops, NREDOPS); }

static void free_user_ops(void) { redops_free_user(redops, NREDOPS); }

/* Element i of rank r's contribution. */
static void contribution(const struct redop *o, int salt, int r, int count,
                         unsigned char *buf)
{
    for (int i = 0; i < count; i++)
        o->gen(buf + (size_t)i * o->ext,
               mix((uint32_t)salt, (uint32_t)r, (uint32_t)i));
}

/* The MPI result: v(0) op v(1) op ... op v(p-1), evaluated left to right
 * (the order a non-commutative operation must see). */
static unsigned char *reference(const struct redop *o, int salt, int p,
                                int count)
{
    size_t bytes = (size_t)count * o->ext;
    unsigned char *acc = malloc(bytes + 1), *v = malloc(bytes + 1);
    memset(acc, 0, bytes + 1);
    memset(v, 0, bytes + 1);
    contribution(o, salt, 0, count, acc);
    for (int r = 1; r < p; r++) {
        contribution(o, salt, r, count, v);
        for (int i = 0; i < count; i++) { /* acc = acc op v(r) */
            o->ref(acc + (size_t)i * o->ext, v + (size_t)i * o->ext);
            memcpy(acc + (size_t)i * o->ext, v + (size_t)i * o->ext,
                   o->ext);
        }
    }
    free(v);
    return acc;
}

static bool same_elems(const struct redop *o, const char *what, int rank,
                       const unsigned char *got, const unsigned char *want,
                       int count)
{
    int bad = 0, first = 0;
    for (int i = 0; i < count; i++)
        if (!o->eq(got + (size_t)i * o->ext, want + (size_t)i * o->ext) &&
            bad++ == 0)
            first = i;
    if (bad == 0)
        return CHECK(true, "counted");
    char g[64], w[64];
    o->show(g, sizeof g, got + (size_t)first * o->ext);
    o->show(w, sizeof w, want + (size_t)first * o->ext);
    CHECK(bad == 0, "%s of rank %d: %d of %d elements differ; first is "
          "element %d: got %s, expected %s", what, rank, bad, count, first,
          g, w);
    return false;
}

static unsigned char *bytes_filled(size_t n, int value)
{
    unsigned char *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    memset(p, value, n ? n : 1);
    return p;
}

/* reduce (root >= 0) or allreduce (root < 0). */
static void case_reduction(struct ctx *x, int count, int root,
                           const struct redop *o, bool in_place)
{
    bool all = root < 0, ok;
    if (all)
        ok = ctx_case(x, "count=%d op=%s in_place=%d", count, o->name,
                      in_place);
    else
        ok = ctx_case(x, "count=%d root=%d op=%s in_place=%d", count, root,
                      o->name, in_place);
    if (!ok)
        return;
    int salt = ++case_salt, p = x->w.p;
    size_t bytes = (size_t)count * o->ext;
    unsigned char *sbuf[MAXP], *sref[MAXP], *rbuf[MAXP], *rinit[MAXP];
    unsigned char *want = reference(o, salt, p, count);
    unsigned char *sentinel = bytes_filled(bytes, 0xa5);
    nbcx_request req[MAXP];
    int started[MAXP] = { 0 };
    for (int r = 0; r < p; r++) {
        bool at_root = all || r == root;
        sbuf[r] = bytes_filled(bytes, 0);
        contribution(o, salt, r, count, sbuf[r]);
        sref[r] = bytes_filled(bytes, 0);
        memcpy(sref[r], sbuf[r], bytes);
        rbuf[r] = bytes_filled(bytes, 0xa5);
        if (at_root && in_place)
            memcpy(rbuf[r], sbuf[r], bytes);
        rinit[r] = bytes_filled(bytes, 0);
        memcpy(rinit[r], rbuf[r], bytes);
    }
    for (int r = 0; r < p; r++) {
        bool at_root = all || r == root;
        const void *sb = (at_root && in_place) ? NBCX_IN_PLACE : sbuf[r];
        started[r] = all ? nbcx_iallreduce(sb, rbuf[r], count, o->type, o->op,
                                           x->w.c[r], &req[r])
                         : nbcx_ireduce(sb, rbuf[r], count, o->type, o->op,
                                        root, x->w.c[r], &req[r]);
    }
    if (ctx_finish(x, started, req)) {
        for (int r = 0; r < p; r++) {
            bool at_root = all || r == root;
            if (!(at_root && in_place))
                CHECK(memcmp(sbuf[r], sref[r], bytes) == 0,
                      "rank %d: sendbuf was modified", r);
            if (at_root) {
                same_elems(o, "recvbuf", r, rbuf[r], want, count);
                int bad = 0;
                for (int i = 0; i < count && o->gap_hi > o->gap_lo; i++) {
                    size_t off = (size_t)i * o->ext + o->gap_lo;
                    bad += memcmp(rbuf[r] + off, rinit[r] + off,
                                  o->gap_hi - o->gap_lo) != 0;
                }
                CHECK(bad == 0, "rank %d: the gaps of %d recvbuf elements "
                      "were written", r, bad);
            } else
                CHECK(memcmp(rbuf[r], sentinel, bytes) == 0,
                      "rank %d: the non-root recvbuf was written", r);
        }
    }
    for (int r = 0; r < p; r++) {
        free(sbuf[r]);
        free(sref[r]);
        free(rbuf[r]);
        free(rinit[r]);
    }
    free(want);
    free(sentinel);
}

/* ------------------------------------------------------------------ */
/* Driving the whole matrix                                            */
/* ------------------------------------------------------------------ */

/* All cases of one collective and algorithm on a world of x->w.p ranks. */
static void run_size(struct ctx *x)
{
    int p = x->w.p;
    int roots[3] = { 0, p - 1, p / 2 }, nroots = 0;
    for (int k = 0; k < 3; k++) { /* distinct roots only */
        bool dup = false;
        for (int j = 0; j < nroots; j++)
            dup = dup || roots[j] == roots[k];
        if (!dup)
            roots[nroots++] = roots[k];
    }
    if (x->coll == C_BARRIER) {
        run_barrier(x);
        return;
    }
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
        int n = counts[ci];
        for (int in_place = 0; in_place < 2; in_place++) {
            for (int m = 0; m < NTMODES; m++) {
                if (x->failed >= MAX_FAILED_CASES)
                    return;
                long before = th_failures;
                switch (x->coll) {
                case C_BCAST:
                    if (!in_place)
                        for (int k = 0; k < nroots; k++)
                            case_bcast(x, n, roots[k], (enum tmode)m);
                    break;
                case C_GATHER:
                    for (int k = 0; k < nroots; k++)
                        case_gather(x, n, roots[k], (enum tmode)m, in_place);
                    break;
                case C_SCATTER:
                    for (int k = 0; k < nroots; k++)
                        case_scatter(x, n, roots[k], (enum tmode)m, in_place);
                    break;
                case C_ALLGATHER:
                    case_allgather(x, n, (enum tmode)m, in_place);
                    break;
                case C_ALLTOALL:
                    case_alltoall(x, n, (enum tmode)m, in_place);
                    break;
                case C_REDUCE:
                case C_ALLREDUCE:
                    if (m != T_INT32) /* reductions: the op table instead */
                        break;
                    for (int k = 0; k < NREDOPS; k++) {
                        if (x->coll == C_ALLREDUCE)
                            case_reduction(x, n, -1, &redops[k], in_place);
                        else
                            for (int j = 0; j < nroots; j++)
                                case_reduction(x, n, roots[j], &redops[k],
                                               in_place);
                    }
                    break;
                default:
                    break;
                }
                if (th_failures > before)
                    x->failed++;
            }
        }
    }
}

static void run_coll(enum coll_id coll, enum loopback_mode mode)
{
    const char *names = NULL;
    if (nbcx_algorithm_names(coll_names[coll], &names) != NBCX_SUCCESS ||
        !names) {
        CHECK(0, "nbcx_algorithm_names(\"%s\") failed", coll_names[coll]);
        return;
    }
    /* "knomial" is radix 4 (and binomial the same builder with radix
     * 2); in the ordered runs of bcast, reduce and barrier radices 3 and
     * 8 too. Gather and scatter at those radices: nbcx-check
     * (check.knomial.*) and the MPI tests (CI time). */
    char list[256];
    snprintf(list, sizeof list, "%s%s auto", names,
             mode == LOOPBACK_ORDERED &&
                     (coll == C_BCAST || coll == C_REDUCE || coll == C_BARRIER)
                 ? " knomial3 knomial8"
                 : "");
    nbcx_segsize_set(SEGSIZE);
    create_user_ops();
    for (char *save = NULL, *alg = strtok_r(list, " ", &save); alg;
         alg = strtok_r(NULL, " ", &save)) {
        if (strcmp(alg, "slots") == 0)
            continue; /* inproc only: see the top of the file */
        if (strcmp(alg, "knomial") == 0 && mode != LOOPBACK_ORDERED)
            continue; /* the ordered runs cover it (CI time) */
        if (strcmp(alg, "hier") == 0)
            continue; /* no nodes here: the flat choice ("hier" test) */
        th_context = NULL;
        CHECK_OK(nbcx_algorithm_set(coll_names[coll], alg));
        struct ctx x = { .coll = coll, .alg = alg,
                         .w = { .mode = mode, .tag_ub = TAG_UB,
                                .seed = 1000u * (uint64_t)coll + 17 } };
        long f0 = th_failures, k0 = th_cases;
        double t0 = th_now();
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            x.w.p = sizes[si];
            run_size(&x);
            ctx_drop_world(&x);
        }
        th_context = NULL;
        if (x.failed >= MAX_FAILED_CASES)
            fprintf(stderr, "%s/%s: gave up after %d failed cases\n",
                    coll_names[coll], alg, x.failed);
        printf("  %-9s %-20s %6ld cases %7.2f s%s\n", coll_names[coll], alg,
               th_cases - k0, th_now() - t0,
               th_failures > f0 ? "  FAILED" : "");
    }
    free_user_ops();
    th_context = NULL;
    CHECK_OK(nbcx_algorithm_set(coll_names[coll], "auto"));
}

#define COLL_TESTS(NAME, ID)                                                  \
    static void test_##NAME(void) { run_coll(ID, LOOPBACK_ORDERED); }         \
    static void test_##NAME##_random(void) { run_coll(ID, LOOPBACK_RANDOM); }
COLL_TESTS(barrier, C_BARRIER)
COLL_TESTS(bcast, C_BCAST)
COLL_TESTS(reduce, C_REDUCE)
COLL_TESTS(allreduce, C_ALLREDUCE)
COLL_TESTS(gather, C_GATHER)
COLL_TESTS(scatter, C_SCATTER)
COLL_TESTS(allgather, C_ALLGATHER)
COLL_TESTS(alltoall, C_ALLTOALL)

/* ------------------------------------------------------------------ */
/* More fragments than tags, and collectives in flight together        */
/* ------------------------------------------------------------------ */

/* With 4-byte fragments a 5000-element operation has 5000 fragments, more
 * than the 4096 schedule tags: fragment k and k + 4096 share a tag and
 * must be matched in order. Every algorithm, a few small worlds. */
static void test_many_fragments(void)
{
    nbcx_segsize_set(4);
    create_user_ops();
    for (int coll = C_BCAST; coll < NCOLL; coll++) {
        const char *names;
        char list[256];
        if (nbcx_algorithm_names(coll_names[coll], &names) != NBCX_SUCCESS)
            continue;
        snprintf(list, sizeof list, "%s", names);
        for (char *save = NULL, *alg = strtok_r(list, " ", &save); alg;
             alg = strtok_r(NULL, " ", &save)) {
            if (strcmp(alg, "slots") == 0)
                continue; /* inproc only: see the top of the file */
            CHECK_OK(nbcx_algorithm_set(coll_names[coll], alg));
            for (int p = 2; p <= 4; p++) {
                struct ctx x = { .coll = (enum coll_id)coll, .alg = alg,
                                 .w = { .p = p, .mode = LOOPBACK_RANDOM,
                                        .tag_ub = TAG_UB, .seed = 5 } };
                int n = coll == C_ALLTOALL ? 2100 : 5000;
                switch (coll) {
                case C_BCAST: case_bcast(&x, n, p - 1, T_INT32); break;
                case C_REDUCE:
                    case_reduction(&x, n, 1, &redops[0], false);
                    case_reduction(&x, n, 0, &redops[6], false);
                    break;
                case C_ALLREDUCE:
                    case_reduction(&x, n, -1, &redops[3], false);
                    case_reduction(&x, n, -1, &redops[7], true);
                    break;
                case C_GATHER: case_gather(&x, n, 1, T_INT32, false); break;
                case C_SCATTER: case_scatter(&x, n, 1, T_INT32, false); break;
                case C_ALLGATHER: case_allgather(&x, n, T_INT32, false); break;
                case C_ALLTOALL: case_alltoall(&x, n, T_INT32, false); break;
                default: break;
                }
                ctx_drop_world(&x);
            }
        }
        CHECK_OK(nbcx_algorithm_set(coll_names[coll], "auto"));
    }
    free_user_ops();
    nbcx_segsize_set(SEGSIZE);
}

/* Eight different collectives in flight at once on one world whose
 * tag_ub leaves exactly eight tag slots to nonblocking operations (the
 * other eight are for persistent requests); every rank starts them in
 * the same order, after a few earlier ones so the numbers wrap. Each
 * uses its automatic algorithm. */
static void test_concurrent(void)
{
    enum { P = 6, N = 37 };
    create_user_ops();
    nbcx_segsize_set(SEGSIZE);
    for (int mode = 0; mode < 2; mode++) {
        struct loopback_options opt = { .tag_ub = TAG_UB,
                                        .mode = (enum loopback_mode)mode,
                                        .seed = 77 };
        nbcx_comm c[P];
        REQUIRE_OK(loopback_world_create_ex(P, &opt, c));
        th_context = mode ? "concurrent, random mode" : "concurrent";
        th_cases++;
        for (int k = 0; k < 5; k++) { /* move the sequence numbers on */
            nbcx_request req[P];
            for (int r = 0; r < P; r++)
                CHECK_OK(nbcx_ibarrier(c[r], &req[r]));
            CHECK_OK(loopback_waitall(c[0], P, req));
        }
        /* Buffers: int32 words; value encodes (op, rank, index). */
#define V(op, r, i) ((int32_t)((op) * 1000000 + (r) * 1000 + (i)))
        static int32_t bc[P][N], rs[P][N], rr[P][N], as[P][N], ar[P][N],
            gs[P][N], gr[P][P * N], ss[P][P * N], sr[P][N], ags[P][N],
            agr[P][P * N], ts[P][P * N], tr[P][P * N];
        const int root = 4;
        for (int r = 0; r < P; r++)
            for (int i = 0; i < N; i++) {
                bc[r][i] = r == 2 ? V(1, 2, i) : -1;
                rs[r][i] = V(2, r, i);
                as[r][i] = V(3, r, i) % 1000 - r * 3;
                gs[r][i] = V(4, r, i);
                ags[r][i] = V(6, r, i);
                for (int d = 0; d < P; d++) {
                    ss[r][d * N + i] = V(5, d, i);
                    ts[r][d * N + i] = V(7, r, d * 100 + i % 100);
                }
            }
        nbcx_request req[8][P];
        for (int r = 0; r < P; r++) {
            CHECK_OK(nbcx_ibcast(bc[r], N, NBCX_INT32, 2, c[r], &req[0][r]));
            CHECK_OK(nbcx_ireduce(rs[r], rr[r], N, NBCX_INT32, NBCX_MAX, root,
                                  c[r], &req[1][r]));
            CHECK_OK(nbcx_iallreduce(as[r], ar[r], N, NBCX_INT32, NBCX_SUM,
                                     c[r], &req[2][r]));
            CHECK_OK(nbcx_igather(gs[r], N, NBCX_INT32, gr[r], N, NBCX_INT32,
                                  root, c[r], &req[3][r]));
            CHECK_OK(nbcx_iscatter(ss[r], N, NBCX_INT32, sr[r], N, NBCX_INT32,
                                   root, c[r], &req[4][r]));
            CHECK_OK(nbcx_iallgather(ags[r], N, NBCX_INT32, agr[r], N,
                                     NBCX_INT32, c[r], &req[5][r]));
            CHECK_OK(nbcx_ialltoall(ts[r], N, NBCX_INT32, tr[r], N,
                                    NBCX_INT32, c[r], &req[6][r]));
            CHECK_OK(nbcx_ibarrier(c[r], &req[7][r]));
        }
        int err = loopback_waitall(c[0], 8 * P, &req[0][0]);
        CHECK_RC(err, NBCX_SUCCESS);
        if (err == NBCX_SUCCESS) {
            int bad = 0;
            for (int r = 0; r < P; r++)
                for (int i = 0; i < N; i++) {
                    int32_t sum = 0;
                    for (int q = 0; q < P; q++)
                        sum += V(3, q, i) % 1000 - q * 3;
                    bad += bc[r][i] != V(1, 2, i);
                    bad += r == root && rr[r][i] != V(2, P - 1, i);
                    bad += ar[r][i] != sum;
                    bad += sr[r][i] != V(5, r, i);
                    for (int q = 0; q < P; q++) {
                        bad += r == root && gr[r][q * N + i] != V(4, q, i);
                        bad += agr[r][q * N + i] != V(6, q, i);
                        bad += tr[r][q * N + i] != V(7, q, r * 100 + i % 100);
                    }
                }
            CHECK(bad == 0, "%d results differ", bad);
        }
#undef V
        loopback_world_destroy(P, c);
    }
    th_context = NULL;
    free_user_ops();
}

/* Bad arguments are rejected before anything is posted: the call returns
 * the error, *req is NBCX_REQUEST_NULL, no message is posted and no
 * sequence number is used (a valid collective on every rank afterwards
 * still matches up). Only rank 0 makes the bad calls (REJECT:
 * harness.h). */

static void test_argument_errors(void)
{
    enum { P = 3 };
    nbcx_comm c[P];
    REQUIRE_OK(loopback_world_create(P, c));
    int32_t a[4 * P] = { 0 }, b[4 * P] = { 0 };
    double d[4] = { 0 };
    nbcx_request req;
    nbcx_datatype bad_type = (nbcx_datatype)(uintptr_t)99;
    void *IP = NBCX_IN_PLACE;

    CHECK_RC(nbcx_ibarrier(c[0], NULL), NBCX_ERR_REQUEST);
    REJECT(NBCX_ERR_COMM, nbcx_ibarrier(NBCX_COMM_NULL, &req));
    /* bcast */
    REJECT(NBCX_ERR_ROOT, nbcx_ibcast(a, 4, NBCX_INT32, -1, c[0], &req));
    REJECT(NBCX_ERR_ROOT, nbcx_ibcast(a, 4, NBCX_INT32, P, c[0], &req));
    REJECT(NBCX_ERR_COUNT, nbcx_ibcast(a, -1, NBCX_INT32, 0, c[0], &req));
    REJECT(NBCX_ERR_TYPE, nbcx_ibcast(a, 4, bad_type, 0, c[0], &req));
    REJECT(NBCX_ERR_TYPE, nbcx_ibcast(a, 4, NBCX_DATATYPE_NULL, 0, c[0],
                                      &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_ibcast(NULL, 4, NBCX_INT32, 0, c[0], &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_ibcast(IP, 4, NBCX_INT32, 0, c[0], &req));
    REJECT(NBCX_ERR_COMM, nbcx_ibcast(a, 4, NBCX_INT32, 0, NBCX_COMM_NULL,
                                      &req));
    /* reduce, allreduce */
    REJECT(NBCX_ERR_ROOT, nbcx_ireduce(a, b, 4, NBCX_INT32, NBCX_SUM, -1,
                                       c[0], &req));
    REJECT(NBCX_ERR_ROOT, nbcx_ireduce(a, b, 4, NBCX_INT32, NBCX_SUM, P,
                                       c[0], &req));
    REJECT(NBCX_ERR_OP, nbcx_ireduce(a, b, 4, NBCX_INT32, NBCX_OP_NULL, 0,
                                     c[0], &req));
    REJECT(NBCX_ERR_OP, nbcx_ireduce(d, d + 2, 2, NBCX_DOUBLE, NBCX_BAND, 0,
                                     c[0], &req));
    REJECT(NBCX_ERR_OP, nbcx_iallreduce(a, b, 4, NBCX_INT32, NBCX_MINLOC,
                                        c[0], &req));
    REJECT(NBCX_ERR_COUNT, nbcx_ireduce(a, b, -2, NBCX_INT32, NBCX_SUM, 0,
                                        c[0], &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_ireduce(a, NULL, 4, NBCX_INT32, NBCX_SUM, 0,
                                         c[0], &req)); /* root's recvbuf */
    REJECT(NBCX_ERR_BUFFER, nbcx_ireduce(NULL, b, 4, NBCX_INT32, NBCX_SUM, 0,
                                         c[0], &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_ireduce(IP, b, 4, NBCX_INT32, NBCX_SUM, 1,
                                           c[0], &req)); /* not the root */
    REJECT(NBCX_ERR_IN_PLACE, nbcx_ireduce(a, IP, 4, NBCX_INT32, NBCX_SUM, 0,
                                           c[0], &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_iallreduce(a, IP, 4, NBCX_INT32, NBCX_SUM,
                                              c[0], &req));
    /* gather, scatter, allgather, alltoall */
    REJECT(NBCX_ERR_ROOT, nbcx_igather(a, 4, NBCX_INT32, b, 4, NBCX_INT32, P,
                                       c[0], &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_igather(IP, 4, NBCX_INT32, b, 4,
                                           NBCX_INT32, 1, c[0], &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_igather(a, 4, NBCX_INT32, NULL, 4,
                                         NBCX_INT32, 0, c[0], &req));
    REJECT(NBCX_ERR_COUNT, nbcx_igather(a, -1, NBCX_INT32, b, 4, NBCX_INT32,
                                        1, c[0], &req));
    REJECT(NBCX_ERR_ROOT, nbcx_iscatter(a, 4, NBCX_INT32, b, 4, NBCX_INT32,
                                        -1, c[0], &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_iscatter(a, 4, NBCX_INT32, IP, 4,
                                            NBCX_INT32, 1, c[0], &req));
    REJECT(NBCX_ERR_TYPE, nbcx_iscatter(a, 4, bad_type, b, 4, NBCX_INT32, 0,
                                        c[0], &req)); /* root's sendtype */
    REJECT(NBCX_ERR_IN_PLACE, nbcx_iallgather(a, 4, NBCX_INT32, IP, 4,
                                              NBCX_INT32, c[0], &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_iallgather(NULL, 4, NBCX_INT32, b, 4,
                                            NBCX_INT32, c[0], &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_ialltoall(a, 4, NBCX_INT32, IP, 4,
                                             NBCX_INT32, c[0], &req));
    REJECT(NBCX_ERR_COUNT, nbcx_ialltoall(a, 4, NBCX_INT32, b, -4,
                                          NBCX_INT32, c[0], &req));
    th_cases++;

    struct loopback_stats st;
    CHECK_OK(loopback_stats(c[0], &st));
    CHECK_INT(st.posted, 0);

    /* Then a real collective on every rank still matches up. */
    nbcx_request r[P];
    int32_t v[P] = { 0 };
    v[1] = 42;
    for (int k = 0; k < P; k++)
        CHECK_OK(nbcx_ibcast(&v[k], 1, NBCX_INT32, 1, c[k], &r[k]));
    CHECK_OK(loopback_waitall(c[0], P, r));
    CHECK(v[0] == 42 && v[2] == 42, "broadcast after rejected calls: %d %d",
          (int)v[0], (int)v[2]);
    loopback_world_destroy(P, c);
}

/* Arguments MPI calls insignificant may be anything: a non-root's receive
 * buffer, count and type of reduce and gather, a non-root's send side of
 * scatter. NULL buffers and types there must work, with every algorithm. */
static void test_insignificant_args(void)
{
    enum { P = INSIG_P, N = INSIG_N };
    for (int ci = 0; ci < TH_COUNT(insig_colls); ci++) {
        const char *names;
        char list[256];
        enum coll_id coll = insig_colls[ci];
        REQUIRE_OK(nbcx_algorithm_names(coll_names[coll], &names));
        snprintf(list, sizeof list, "%s", names);
        for (char *save = NULL, *alg = strtok_r(list, " ", &save); alg;
             alg = strtok_r(NULL, " ", &save)) {
            CHECK_OK(nbcx_algorithm_set(coll_names[coll], alg));
            nbcx_comm c[P];
            REQUIRE_OK(loopback_world_create(P, c));
            int32_t in[P][P * N], out[P][P * N];
            insig_fill(in, out);
            nbcx_request req[P];
            insig_start_all(coll, alg, in, out, c, req);
            int err = loopback_waitall(c[0], P, req);
            CHECK(err == NBCX_SUCCESS, "%s/%s: waitall %d", coll_names[coll],
                  alg, err);
            int bad = err == NBCX_SUCCESS ? insig_wrong(coll, out) : 0;
            CHECK(bad == 0, "%s/%s: %d wrong results", coll_names[coll], alg,
                  bad);
            loopback_world_destroy(P, c);
            th_cases++;
        }
        CHECK_OK(nbcx_algorithm_set(coll_names[coll], "auto"));
    }
}

/* The algorithm API itself: names, unknown ones, segsize 0. */
static void test_algorithm_api(void)
{
    const char *names = NULL;
    for (int c = 0; c < NCOLL; c++) {
        CHECK_OK(nbcx_algorithm_names(coll_names[c], &names));
        CHECK(names && *names, "%s has algorithm names", coll_names[c]);
        CHECK_OK(nbcx_algorithm_set(coll_names[c], "auto"));
        CHECK_OK(nbcx_algorithm_set(coll_names[c], NULL));
        CHECK_RC(nbcx_algorithm_set(coll_names[c], "no_such_algorithm"),
                 NBCX_ERR_ALGORITHM);
    }
    CHECK_RC(nbcx_algorithm_names("no_such_collective", &names),
             NBCX_ERR_ALGORITHM);
    CHECK_RC(nbcx_algorithm_set("no_such_collective", "auto"),
             NBCX_ERR_ALGORITHM);
    CHECK_RC(nbcx_algorithm_names("bcast", NULL), NBCX_ERR_ARG);
    char info[512];
    CHECK_OK(nbcx_info(info, sizeof info));
    CHECK(strstr(info, "bcast") != NULL, "nbcx_info: %s", info);
}

/* The messages a pipelined collective of n int32 on p ranks posts (all
 * ranks), with algorithm alg forced: "bcast" (root 0), "reduce" (sum at
 * root 0) or "allreduce" (sum). The communicator's transport is made
 * with opt (its segsize: what it asks for, 0: none; one_node), the user
 * asks for user_seg (0: nbcx_segsize_set(0), the default); the result
 * must be the root's data or the sequential sum. */
static long posted_cross; /* posted_by's messages between two nodes */

static long posted_by(const char *coll, const char *alg, int p,
                      struct loopback_options opt, size_t user_seg, int n)
{
    enum { PMAX = 16 };
    const bool bcast = strcmp(coll, "bcast") == 0,
               reduce = strcmp(coll, "reduce") == 0,
               barrier = strcmp(coll, "barrier") == 0,
               allgather = strcmp(coll, "allgather") == 0;
    const int nout = allgather ? n * p : n;
    nbcx_comm c[PMAX];
    if (!CHECK(p <= PMAX, "p %d", p))
        return -1;
    opt.tag_ub = TAG_UB;
    int err = loopback_world_create_ex(p, &opt, c);
    if (!CHECK(err == NBCX_SUCCESS, "loopback world: %d", err))
        return -1;
    CHECK_OK(nbcx_segsize_set(user_seg));
    CHECK_OK(nbcx_algorithm_set(coll, alg));
    int32_t *in[PMAX], *out[PMAX];
    nbcx_request req[PMAX];
    for (int r = 0; r < p; r++) {
        in[r] = malloc(sizeof(int32_t) * (size_t)n);
        out[r] = calloc((size_t)nout, sizeof(int32_t));
        if (!in[r] || !out[r])
            abort(); /* (a test machine out of memory) */
        for (int i = 0; i < n; i++)
            in[r][i] = (int32_t)(i * (r + 3) - r);
    }
    for (int r = 0; r < p; r++) {
        if (bcast) {
            if (r == 0)
                memcpy(out[r], in[r], sizeof(int32_t) * (size_t)n);
            CHECK_OK(nbcx_ibcast(out[r], n, NBCX_INT32, 0, c[r], &req[r]));
        } else if (reduce)
            CHECK_OK(nbcx_ireduce(in[r], out[r], n, NBCX_INT32, NBCX_SUM, 0,
                                  c[r], &req[r]));
        else if (barrier)
            CHECK_OK(nbcx_ibarrier(c[r], &req[r]));
        else if (allgather)
            CHECK_OK(nbcx_iallgather(in[r], n, NBCX_INT32, out[r], n,
                                     NBCX_INT32, c[r], &req[r]));
        else
            CHECK_OK(nbcx_iallreduce(in[r], out[r], n, NBCX_INT32, NBCX_SUM,
                                     c[r], &req[r]));
    }
    CHECK_OK(loopback_waitall(c[0], p, req));
    int bad = 0;
    for (int i = 0; allgather && i < n * p; i++)
        for (int r = 0; r < p; r++)
            bad += out[r][i] != in[i / n][i % n];
    for (int i = 0; !barrier && !allgather && i < n; i++) {
        int32_t want = in[0][i];
        if (!bcast)
            for (int r = 1; r < p; r++)
                want += in[r][i];
        for (int r = 0; r < (reduce ? 1 : p); r++)
            bad += out[r][i] != want;
    }
    CHECK(bad == 0, "%s %s on %d ranks, segsizes %zu/%zu: %d wrong elements",
          coll, alg, p, opt.segsize, user_seg, bad);
    struct loopback_stats st;
    CHECK_OK(loopback_stats(c[0], &st));
    posted_cross = st.cross;
    for (int r = 0; r < p; r++) {
        free(in[r]);
        free(out[r]);
    }
    loopback_world_destroy(p, c);
    CHECK_OK(nbcx_algorithm_set(coll, "auto"));
    th_cases++;
    return st.posted;
}

/* ... the chain bcast or the ring allreduce on 2 ranks, as the transport
 * and the user ask. */
static long frag_messages(const char *coll, size_t transport_seg,
                          size_t user_seg, int n)
{
    struct loopback_options opt = { .seed = 3, .segsize = transport_seg };
    return posted_by(coll, strcmp(coll, "bcast") == 0 ? "chain" : "ring", 2,
                     opt, user_seg, n);
}

/* The fragment size: the user's (nbcx_segsize_set), else the transport's
 * (ops->segsize: UCX asks for 256 KiB), else 64 KiB; the ring allreduce
 * takes at least 256 KiB unless the user chose (allreduce.c, RING_SEG).
 * 65536 int32 are 256 KiB. A chain broadcast on 2 ranks posts 2 messages
 * per fragment; a ring allreduce 8 per fragment of a block (each rank
 * sends and receives each fragment of one block twice: reduce-scatter,
 * then allgather), and its blocks are 128 KiB. */
static void test_segsize_choice(void)
{
    enum { N = 65536 };
    const long bytes = N * 4, block = bytes / 2, per = 8;
    /* no choice anywhere: 64 KiB */
    CHECK_INT(frag_messages("bcast", 0, 0, N), 2 * (bytes / 65536));
    /* the transport's */
    CHECK_INT(frag_messages("bcast", 16384, 0, N), 2 * (bytes / 16384));
    CHECK_INT(frag_messages("bcast", 262144, 0, N), 2 * 1);
    /* the user's wins over the transport's */
    CHECK_INT(frag_messages("bcast", 16384, 32768, N), 2 * (bytes / 32768));
    /* and nbcx_segsize_set(0) gives it back */
    CHECK_INT(frag_messages("bcast", 16384, 0, N), 2 * (bytes / 16384));
    /* the ring: at least 256 KiB (one fragment per block) unless the user
     * chose, whose size it takes as it is */
    CHECK_INT(frag_messages("allreduce", 0, 0, N), per * 1);
    CHECK_INT(frag_messages("allreduce", 16384, 0, N), per * 1);
    CHECK_INT(frag_messages("allreduce", 16384, 32768, N),
              per * (block / 32768));
    CHECK_INT(frag_messages("allreduce", 0, 0, N), per * 1);
    char info[512];
    CHECK_OK(nbcx_info(info, sizeof info));
    CHECK(strstr(info, " segsize=auto ") != NULL, "nbcx_info: %s", info);
    CHECK_OK(nbcx_segsize_set(SEGSIZE));
    CHECK_OK(nbcx_info(info, sizeof info));
    CHECK(strstr(info, " segsize=100 ") != NULL, "nbcx_info: %s", info);
}

/* nbcx_info's live_* counts, as one string ("live_comms=0 ..."). */
static void live_objects(char *out, size_t len)
{
    char info[1024];
    CHECK_OK(nbcx_info(info, sizeof info));
    const char *p = strstr(info, "live_comms=");
    CHECK(p != NULL, "nbcx_info reports no live_* counts: %s", info);
    if (!p) {
        out[0] = '\0';
        return;
    }
    const char *end = strstr(p, " transport=");
    snprintf(out, len, "%.*s", (int)(end ? end - p : (long)strlen(p)), p);
}

/* Every object a collective makes is gone once its world is: the counts
 * nbcx_info gives (communicators, operations, datatypes, requests,
 * schedules, cached ones included) are back where they were, and they
 * did move while a world lived. The argument errors are among them: a
 * refused call leaves nothing half-made. */
static void test_objects_freed(void)
{
    char before[256], during[256], after[256];
    /* (nbcx_info before any communicator decides no progress mode: the
     * loopback's first one makes it caller, progress/modes.c) */
    live_objects(before, sizeof before);
    CHECK(strstr(before, "live_requests=0") != NULL, "%s", before);
    test_bcast_random();
    test_allreduce_random();
    test_alltoall_random();
    test_concurrent();
    test_argument_errors();
    live_objects(after, sizeof after);
    CHECK(strcmp(before, after) == 0, "objects alive: before %s, after %s",
          before, after);
    /* and the counts do count: a world of 3 holds 3 communicators */
    nbcx_comm c[3];
    CHECK_OK(loopback_world_create(3, c));
    live_objects(during, sizeof during);
    CHECK(strstr(during, "live_comms=3 ") != NULL, "a world of 3: %s", during);
    loopback_world_destroy(3, c);
    live_objects(after, sizeof after);
    CHECK(strcmp(before, after) == 0, "objects alive: before %s, after %s",
          before, after);
}

/* ... the chain bcast or reduce on p ranks, the transport saying its
 * ranks are all on this node or not. */
static long chain_posted(const char *coll, int p, size_t user_seg, int n,
                         bool one_node)
{
    struct loopback_options opt = { .seed = 5, .one_node = one_node };
    long posted = posted_by(coll, "chain", p, opt, user_seg, n);
    CHECK_OK(nbcx_segsize_set(0));
    return posted;
}

/* The chains' fragment (coll/select.c, nbcxi_chain_segsize): on up to 7
 * ranks the transport's 64 KiB; beyond, where no one chose one, the
 * alpha-beta model's sqrt(2 n G / (p - 1)) in whole KiB (G = 512 B):
 * 1 MiB on 16 ranks, 9 KiB (sqrt(71,582,788) = 8,461 B, up to whole
 * KiB; 114 fragments); on 8 ranks 13 KiB (12,385 B; 79 fragments);
 * but 64 KiB again where the transport says every rank is on this node
 * (shared memory, where small fragments cost more). A chain of p ranks moves
 * each fragment over p - 1 links, a send and a receive each. The user's
 * choice wins everywhere. */
static void test_chain_fragments(void)
{
    enum { N = 262144 }; /* 1 MiB of int32 */
    for (int k = 0; k < 2; k++) {
        const char *coll = k ? "reduce" : "bcast";
        CHECK_INT(chain_posted(coll, 7, 0, N, false), 2L * 6 * 16);
        CHECK_INT(chain_posted(coll, 8, 0, N, false), 2L * 7 * 79);
        CHECK_INT(chain_posted(coll, 16, 0, N, false), 2L * 15 * 114);
        CHECK_INT(chain_posted(coll, 16, 0, N, true), 2L * 15 * 16);
        CHECK_INT(chain_posted(coll, 16, 65536, N, false), 2L * 15 * 16);
        CHECK_INT(chain_posted(coll, 16, 4096, N, true), 2L * 15 * 256);
    }
}

/* ------------------------------------------------------------------ */
/* Node-aware algorithms (hier.c) on transports that know the nodes    */
/* ------------------------------------------------------------------ */

/* Node layouts: rank r's node, named by its lowest rank (transport.h,
 * node_of). Uneven blocks: nodes of 1, 4, 2, 5, 3, 1, 4, ... ranks. */
enum layout { L_BLOCKS2, L_BLOCKS3, L_ROUND3, L_UNEVEN, NLAYOUTS };
static const char *const layout_names[NLAYOUTS] = {
    "blocks2", "blocks3", "round_robin3", "uneven" };

static void layout_fill(enum layout l, int p, int nodes[])
{
    static const int uneven[] = { 1, 4, 2, 5, 3 };
    int start = 0, k = 0;
    for (int r = 0; r < p; r++) {
        switch (l) {
        case L_BLOCKS2: nodes[r] = r - r % 2; break;
        case L_BLOCKS3: nodes[r] = r - r % 3; break;
        case L_ROUND3: nodes[r] = r % 3; break;
        default:
            if (r - start == uneven[k % 5]) {
                start = r;
                k++;
            }
            nodes[r] = start;
        }
    }
}

/* Every "hier" algorithm (barrier, bcast, reduce, allreduce, allgather)
 * with every case of run_size (roots first,
 * last and middle, so roots that are not their node's lowest rank; in
 * place; every reduction, the non-commutative one too; 100-byte
 * fragments) on 1-33 ranks placed on nodes four ways, contiguous and
 * not, even and not. */
static void test_hier(void)
{
    static const int hsizes[] = { 1, 2, 3, 4, 5, 7, 8, 12, 13, 24, 33 };
    static const enum coll_id colls[] = { C_BARRIER, C_BCAST, C_REDUCE,
                                          C_ALLREDUCE, C_ALLGATHER };
    int nodes[64];
    nbcx_segsize_set(SEGSIZE);
    create_user_ops();
    for (size_t ci = 0; ci < sizeof colls / sizeof colls[0]; ci++) {
        enum coll_id coll = colls[ci];
        CHECK_OK(nbcx_algorithm_set(coll_names[coll], "hier"));
        for (int l = 0; l < NLAYOUTS; l++) {
            struct ctx x = { .coll = coll, .alg = layout_names[l],
                             .w = { .mode = LOOPBACK_ORDERED,
                                    .tag_ub = TAG_UB, .seed = 77,
                                    .nodes = nodes } };
            long f0 = th_failures, k0 = th_cases;
            double t0 = th_now();
            for (size_t si = 0; si < sizeof hsizes / sizeof hsizes[0];
                 si++) {
                x.w.p = hsizes[si];
                layout_fill((enum layout)l, x.w.p, nodes);
                run_size(&x);
                ctx_drop_world(&x);
            }
            th_context = NULL;
            printf("  %-9s hier %-15s %6ld cases %7.2f s%s\n",
                   coll_names[coll], layout_names[l], th_cases - k0,
                   th_now() - t0, th_failures > f0 ? "  FAILED" : "");
        }
        CHECK_OK(nbcx_algorithm_set(coll_names[coll], "auto"));
    }
    free_user_ops();
    nbcx_segsize_set(0);
    /* Only the leaders talk between nodes: on 16 ranks placed round
     * robin on 4 nodes (not blocks: the flat trees cross nodes at every
     * level), one message into each other node for a small bcast, and
     * for a small allreduce the leaders' recursive doubling (4 ranks, 2
     * rounds, 8 messages) against the flat one's 32. */
    for (int r = 0; r < 16; r++)
        nodes[r] = r % 4;
    struct loopback_options opt = { .seed = 9, .nodes = nodes };
    posted_by("bcast", "hier", 16, opt, 0, 1);
    CHECK_INT(posted_cross, 3L);
    posted_by("allreduce", "hier", 16, opt, 0, 1);
    CHECK_INT(posted_cross, 8L);
    posted_by("allreduce", "recursive_doubling", 16, opt, 0, 1);
    CHECK_INT(posted_cross, 32L);
    /* 1 MiB: the leaders' Rabenseifner, one message per round each way
     * (2 log2 4 rounds, 4 leaders) */
    posted_by("allreduce", "hier", 16, opt, 0, 262144);
    CHECK_INT(posted_cross, 16L);
    /* The automatic choice takes hier for a small allreduce with 4
     * ranks per node or more on average (select.c): 2 nodes of 8, one
     * message each way between the leaders; with nodes of 2 the flat
     * recursive doubling, whose distances 2, 4 and 8 cross nodes (48). */
    for (int r = 0; r < 16; r++)
        nodes[r] = r - r % 8;
    posted_by("allreduce", "auto", 16, opt, 0, 1);
    CHECK_INT(posted_cross, 2L);
    for (int r = 0; r < 16; r++)
        nodes[r] = r - r % 2;
    posted_by("allreduce", "auto", 16, opt, 0, 1);
    CHECK_INT(posted_cross, 48L);
    /* ... and for a small barrier, reduce and allgather: the same
     * messages as hier, fewer of them between the nodes than the flat
     * algorithm the choice took before (dissemination, a k-nomial tree,
     * Bruck's). */
    static const char *const small[][2] = { { "barrier", "dissemination" },
                                            { "reduce", "knomial" },
                                            { "allgather", "bruck" } };
    for (int r = 0; r < 16; r++)
        nodes[r] = r - r % 8;
    for (int k = 0; k < 3; k++) {
        long hier = posted_by(small[k][0], "hier", 16, opt, 0, 1),
             hier_cross = posted_cross;
        CHECK_INT(posted_by(small[k][0], "auto", 16, opt, 0, 1), hier);
        CHECK_INT(posted_cross, hier_cross);
        posted_by(small[k][0], small[k][1], 16, opt, 0, 1);
        CHECK(hier_cross < posted_cross,
              "%s: %ld messages between nodes of 8 by hier, %ld by %s",
              small[k][0], hier_cross, posted_cross, small[k][1]);
    }
    /* A transport that does not know the nodes: hier is the flat
     * automatic choice, message for message. */
    struct loopback_options none = { .seed = 9 };
    CHECK_INT(posted_by("allreduce", "hier", 13, none, 0, 5),
              posted_by("allreduce", "auto", 13, none, 0, 5));
    CHECK_INT(posted_by("bcast", "hier", 13, none, 0, 5000),
              posted_by("bcast", "auto", 13, none, 0, 5000));
}

/* ------------------------------------------------------------------ */
/* Counts above INT_MAX, cut into chunks (sched.h)                     */
/* ------------------------------------------------------------------ */

/* A send, receive, copy or reduction of more than INT_MAX bytes is cut
 * into chunks (nbcxi_sched_chunking). Buffers that large do not fit a
 * unit test, so this lowers the limit to 1,624 bytes, the largest
 * message from one rank's own block in run_size (203 x 2 int32),
 * and the chunks to 4,800 bytes (a multiple of 48, as the real 768 MiB
 * are): every message and copy that merges several
 * blocks (Bruck's, recursive doubling's and halving's, the packed
 * subtrees, alltoall's in-place copy) is cut, while a block's own
 * message is not (inproc.chunks cuts those too, with different types on
 * the two sides). Every algorithm of the collectives of run_size then
 * runs all its cases (ordered loopback) and must give the reference
 * results. */
static void test_chunked(void)
{
    const struct nbcxi_sched_chunking saved = nbcxi_sched_chunking;
    /* chunks do happen: Rabenseifner's halves of 10,000 int32 on 16 ranks
     * (5,000 elements and less, all above 406) are more messages cut */
    struct loopback_options opt = { .seed = 5 };
    long whole = posted_by("allreduce", "rabenseifner", 16, opt, 0, 10000);
    nbcxi_sched_chunking.limit = 406 * 4;
    nbcxi_sched_chunking.bytes = 4800;
    long cut = posted_by("allreduce", "rabenseifner", 16, opt, 0, 10000);
    CHECK(cut > whole, "chunked: %ld messages, whole: %ld", cut, whole);
#if defined(__SANITIZE_ADDRESS__)
    /* Under ASan (54 s for all seven in CI): the chunking is the
     * schedule's, the same for every collective; a pipelined tree, a
     * reduction into cut receives and an exchange with every peer. The
     * plain builds run all seven. */
    static const enum coll_id colls[] = { C_BCAST, C_ALLREDUCE, C_ALLTOALL };
#else
    static const enum coll_id colls[] = { C_BCAST, C_REDUCE, C_ALLREDUCE,
                                          C_GATHER, C_SCATTER, C_ALLGATHER,
                                          C_ALLTOALL };
#endif
    for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++)
        run_coll(colls[i], LOOPBACK_ORDERED);
    nbcxi_sched_chunking = saved;
}

static const struct th_test tests[] = {
    { "algorithm_api", test_algorithm_api },
    { "segsize_choice", test_segsize_choice },
    { "argument_errors", test_argument_errors },
    { "insignificant_args", test_insignificant_args },
    { "barrier", test_barrier },
    { "bcast", test_bcast },
    { "reduce", test_reduce },
    { "allreduce", test_allreduce },
    { "gather", test_gather },
    { "scatter", test_scatter },
    { "allgather", test_allgather },
    { "alltoall", test_alltoall },
    { "barrier_random", test_barrier_random },
    { "bcast_random", test_bcast_random },
    { "reduce_random", test_reduce_random },
    { "allreduce_random", test_allreduce_random },
    { "gather_random", test_gather_random },
    { "scatter_random", test_scatter_random },
    { "allgather_random", test_allgather_random },
    { "alltoall_random", test_alltoall_random },
    { "many_fragments", test_many_fragments },
    { "concurrent", test_concurrent },
    { "objects_freed", test_objects_freed },
    { "chain_fragments", test_chain_fragments },
    { "hier", test_hier },
    { "chunked", test_chunked },
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests, TH_COUNT(tests));
}
