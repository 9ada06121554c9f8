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
 * collectives run with NBCX_INT32 everywhere and with types that differ
 * but have equal signatures (INT32 x 2n on one side, INT64 x n on the
 * other, alternating between ranks); reductions with a table of
 * (type, op): NBCX_INT32 with SUM, MAX, BXOR; NBCX_DOUBLE (exact small
 * integers) with SUM and MAX; NBCX_DOUBLE_INT with MINLOC; a
 * non-commutative user op (2x2 matrix product mod 251) and a commutative
 * user op.
 *
 * Every word of data names its origin (source rank, block, index, and a
 * per-case salt), so a wrong result is reported as "rank 3 block 2 word 5
 * holds word 5 of block 2 from rank 1" rather than as two numbers. Send
 * buffers must come back unchanged, and buffers MPI calls insignificant
 * (a non-root's receive buffer of reduce or gather, a non-root's send
 * buffer of scatter) must not be written.
 *
 * Worlds use tag_ub = 32767, so only 8 sequence numbers exist: every
 * world runs many more collectives one after the other (tag wrap-around).
 * The "concurrent" test has 8 different collectives in flight at once.
 * The *_random tests rerun everything with the loopback's random order.
 */
#include <stdint.h>

#include "harness.h"
#include "loopback.h"

enum { MAXP = 64, SEGSIZE = 100, TAG_UB = 32767 };
enum { MAX_FAILED_CASES = 10 }; /* per algorithm, then skip it */

static const int sizes[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
                             15, 16, 24, 33, 64 };
static const int counts[] = { 0, 1, 7, 203 };

enum coll_id { C_BARRIER, C_BCAST, C_REDUCE, C_ALLREDUCE, C_GATHER, C_SCATTER,
               C_ALLGATHER, C_ALLTOALL, NCOLL };
static const char *const coll_names[NCOLL] = {
    "barrier", "bcast", "reduce", "allreduce", "gather", "scatter",
    "allgather", "alltoall",
};

/* ------------------------------------------------------------------ */
/* Worlds and running one collective on every rank                     */
/* ------------------------------------------------------------------ */

/* The algorithm under test and the world it runs on. A world is reused
 * for many cases, and replaced after a failure (a deadlocked operation
 * stays in the old world forever). */
struct ctx {
    enum coll_id coll;
    const char *alg;
    enum loopback_mode mode;
    int p;
    nbcx_comm c[MAXP];
    bool have_world;
    uint64_t seed;
    int failed;         /* failed cases of this algorithm */
    char desc[200];     /* the case, for messages */
};

static bool ctx_world(struct ctx *x)
{
    if (x->have_world)
        return true;
    struct loopback_options opt = { .tag_ub = TAG_UB, .mode = x->mode,
                                    .seed = x->seed++ };
    int err = loopback_world_create_ex(x->p, &opt, x->c);
    CHECK(err == NBCX_SUCCESS, "world of %d: %s", x->p,
          nbcx_error_string(err));
    x->have_world = err == NBCX_SUCCESS;
    return x->have_world;
}

static void ctx_drop_world(struct ctx *x)
{
    if (x->have_world)
        loopback_world_destroy(x->p, x->c);
    x->have_world = false;
}

static void ctx_describe(struct ctx *x, const char *fmt, ...)
{
    int n = snprintf(x->desc, sizeof x->desc, "%s alg=%s p=%d mode=%s ",
                     coll_names[x->coll], x->alg, x->p,
                     x->mode == LOOPBACK_RANDOM ? "random" : "ordered");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->desc + n, sizeof x->desc - (size_t)n, fmt, ap);
    va_end(ap);
    th_context = x->desc;
    th_cases++;
}

/* Waits for the requests of one collective (started[r]: the start call's
 * return code on rank r). False if the case failed already: a start
 * error, a deadlock or an error result. */
static bool ctx_finish(struct ctx *x, const int started[],
                       nbcx_request req[])
{
    bool ok = true;
    for (int r = 0; r < x->p; r++)
        if (!CHECK(started[r] == NBCX_SUCCESS, "rank %d: start returned %d "
                   "(%s)", r, started[r], nbcx_error_string(started[r])))
            ok = false;
    int err = loopback_waitall(x->c[0], x->p, req);
    if (err == LOOPBACK_DEADLOCK) {
        CHECK(0, "deadlock: the collective can never complete");
        ctx_drop_world(x);
        return false;
    }
    if (!CHECK(err == NBCX_SUCCESS, "waitall returned %d (%s)", err,
               nbcx_error_string(err)))
        ok = false;
    if (!ok)
        ctx_drop_world(x);
    return ok;
}

/* ------------------------------------------------------------------ */
/* Buffers of self-describing words                                    */
/* ------------------------------------------------------------------ */

/* Word i of block blk sent by rank src; salt changes with every case,
 * so data left over from another case is recognised too. */
static uint32_t word(int salt, int src, int blk, int i)
{
    return (uint32_t)(salt & 31) << 27 | (uint32_t)src << 21 |
           (uint32_t)blk << 15 | (uint32_t)(i & 0x7fff);
}

static const uint32_t SENTINEL = 0xdeadbeefu;

static uint32_t *words(size_t n)
{
    uint32_t *p = malloc(n ? n * sizeof *p : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    for (size_t i = 0; i < n; i++)
        p[i] = SENTINEL;
    return p;
}

static uint32_t *copy_words(const uint32_t *src, size_t n)
{
    uint32_t *p = words(n);
    memcpy(p, src, n * sizeof *p);
    return p;
}

static void describe_word(char *out, size_t len, uint32_t w)
{
    if (w == SENTINEL)
        snprintf(out, len, "the sentinel (never written)");
    else
        snprintf(out, len, "0x%08x = word %u of block %u from rank %u, "
                 "salt %u", w, w & 0x7fff, (w >> 15) & 63, (w >> 21) & 63,
                 w >> 27);
}

/* Compares n words of rank's buffer (blocks of bw words) with the
 * expected ones; reports the first difference and how many differ. */
static bool same_words(const char *what, int rank, const uint32_t *got,
                       const uint32_t *want, size_t n, size_t bw)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i] && bad++ == 0)
            first = i;
    if (bad == 0)
        return CHECK(true);
    char g[96], w[96];
    describe_word(g, sizeof g, got[first]);
    describe_word(w, sizeof w, want[first]);
    CHECK(bad == 0, "%s of rank %d: %zu of %zu words differ; first at block "
          "%zu word %zu: got %s, expected %s", what, rank, bad, n,
          bw ? first / bw : 0, bw ? first % bw : first, g, w);
    return false;
}

/* The (type, count) one rank uses for a block of `count` units. With
 * mixed types a unit is 8 bytes: even ranks send INT32 x 2n and receive
 * INT64 x n, odd ranks the other way round. */
struct tsel {
    nbcx_datatype type;
    int count;
};

static struct tsel tsel(bool mixed, int rank, int count, bool send)
{
    if (!mixed)
        return (struct tsel){ NBCX_INT32, count };
    bool wide = (rank % 2 == 0) != send;
    return wide ? (struct tsel){ NBCX_INT64, count }
                : (struct tsel){ NBCX_INT32, 2 * count };
}

/* Words per block of `count` units. */
static size_t block_words(bool mixed, int count)
{
    return (size_t)count * (mixed ? 2 : 1);
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
    ctx_describe(x, "late=%d", late);
    if (!ctx_world(x))
        return;
    nbcx_request req[MAXP];
    int started[MAXP] = { 0 };
    for (int r = 0; r < x->p; r++)
        if (r != late)
            started[r] = nbcx_ibarrier(x->c[r], &req[r]);
    if (late >= 0) {
        for (int k = 0; k < 4 * x->p + 8; k++)
            nbcx_progress();
        for (int r = 0; r < x->p; r++) {
            if (r == late || !req[r])
                continue;
            int flag = 0;
            nbcx_test(&req[r], &flag);
            CHECK(!flag, "rank %d left the barrier before rank %d entered",
                  r, late);
        }
        started[late] = nbcx_ibarrier(x->c[late], &req[late]);
    }
    ctx_finish(x, started, req);
}

static void run_barrier(struct ctx *x)
{
    case_barrier(x, -1);
    int late[3] = { 0, x->p - 1, x->p / 2 };
    for (int k = 0; k < 3; k++)
        if (x->p > 1 && (k == 0 || late[k] != late[k - 1]))
            case_barrier(x, late[k]);
}

/* ------------------------------------------------------------------ */
/* Broadcast                                                           */
/* ------------------------------------------------------------------ */

static void case_bcast(struct ctx *x, int count, int root, bool mixed)
{
    ctx_describe(x, "count=%d root=%d types=%s", count, root,
                 mixed ? "mixed" : "int32");
    if (!ctx_world(x))
        return;
    int salt = ++case_salt, p = x->p;
    size_t bw = block_words(mixed, count);
    uint32_t *buf[MAXP], *want = words(bw);
    for (size_t i = 0; i < bw; i++)
        want[i] = word(salt, root, 0, (int)i);
    nbcx_request req[MAXP];
    int started[MAXP] = { 0 };
    for (int r = 0; r < p; r++)
        buf[r] = r == root ? copy_words(want, bw) : words(bw);
    for (int r = 0; r < p; r++) {
        struct tsel t = tsel(mixed, r, count, r == root);
        started[r] = nbcx_ibcast(buf[r], t.count, t.type, root, x->c[r],
                                 &req[r]);
    }
    if (ctx_finish(x, started, req))
        for (int r = 0; r < p; r++)
            same_words("buffer", r, buf[r], want, bw, bw);
    for (int r = 0; r < p; r++)
        free(buf[r]);
    free(want);
}

/* ------------------------------------------------------------------ */
/* Gather, scatter, allgather, alltoall                                */
/* ------------------------------------------------------------------ */

static void case_gather(struct ctx *x, int count, int root, bool mixed,
                        bool in_place)
{
    ctx_describe(x, "count=%d root=%d types=%s in_place=%d", count, root,
                 mixed ? "mixed" : "int32", in_place);
    if (!ctx_world(x))
        return;
    int salt = ++case_salt, p = x->p;
    size_t bw = block_words(mixed, count), all = bw * (size_t)p;
    uint32_t *sbuf[MAXP], *rbuf[MAXP], *sref[MAXP], *want = words(all);
    for (int src = 0; src < p; src++)
        for (size_t i = 0; i < bw; i++)
            want[(size_t)src * bw + i] = word(salt, src, 0, (int)i);
    nbcx_request req[MAXP];
    int started[MAXP] = { 0 };
    for (int r = 0; r < p; r++) {
        sbuf[r] = copy_words(want + (size_t)r * bw, bw);
        sref[r] = copy_words(sbuf[r], bw);
        rbuf[r] = words(all); /* the sentinel everywhere */
        if (r == root && in_place)
            memcpy(rbuf[r] + (size_t)r * bw, sbuf[r], bw * sizeof(uint32_t));
    }
    for (int r = 0; r < p; r++) {
        struct tsel s = tsel(mixed, r, count, true);
        struct tsel t = tsel(mixed, r, count, false);
        const void *sb = (r == root && in_place) ? NBCX_IN_PLACE : sbuf[r];
        started[r] = nbcx_igather(sb, s.count, s.type, rbuf[r], t.count,
                                  t.type, root, x->c[r], &req[r]);
    }
    if (ctx_finish(x, started, req)) {
        uint32_t *untouched = words(all);
        for (int r = 0; r < p; r++) {
            same_words("sendbuf", r, sbuf[r], sref[r], bw, bw);
            same_words(r == root ? "recvbuf" : "non-root recvbuf", r,
                       rbuf[r], r == root ? want : untouched, all, bw);
        }
        free(untouched);
    }
    for (int r = 0; r < p; r++) {
        free(sbuf[r]);
        free(sref[r]);
        free(rbuf[r]);
    }
    free(want);
}

static void case_scatter(struct ctx *x, int count, int root, bool mixed,
                         bool in_place)
{
    ctx_describe(x, "count=%d root=%d types=%s in_place=%d", count, root,
                 mixed ? "mixed" : "int32", in_place);
    if (!ctx_world(x))
        return;
    int salt = ++case_salt, p = x->p;
    size_t bw = block_words(mixed, count), all = bw * (size_t)p;
    uint32_t *sbuf[MAXP], *rbuf[MAXP], *sref[MAXP];
    nbcx_request req[MAXP];
    int started[MAXP] = { 0 };
    for (int r = 0; r < p; r++) {
        sbuf[r] = words(all); /* a non-root's stays the sentinel */
        if (r == root)
            for (int d = 0; d < p; d++)
                for (size_t i = 0; i < bw; i++)
                    sbuf[r][(size_t)d * bw + i] = word(salt, root, d, (int)i);
        sref[r] = copy_words(sbuf[r], all);
        rbuf[r] = words(bw);
    }
    for (int r = 0; r < p; r++) {
        struct tsel s = tsel(mixed, r, count, true);
        struct tsel t = tsel(mixed, r, count, false);
        void *rb = (r == root && in_place) ? NBCX_IN_PLACE : rbuf[r];
        started[r] = nbcx_iscatter(sbuf[r], s.count, s.type, rb, t.count,
                                   t.type, root, x->c[r], &req[r]);
    }
    if (ctx_finish(x, started, req)) {
        uint32_t *want = words(bw);
        for (int r = 0; r < p; r++) {
            same_words(r == root ? "sendbuf" : "non-root sendbuf", r,
                       sbuf[r], sref[r], all, bw);
            for (size_t i = 0; i < bw; i++)
                want[i] = (r == root && in_place) ? SENTINEL
                                                  : word(salt, root, r, (int)i);
            same_words("recvbuf", r, rbuf[r], want, bw, bw);
        }
        free(want);
    }
    for (int r = 0; r < p; r++) {
        free(sbuf[r]);
        free(sref[r]);
        free(rbuf[r]);
    }
}

static void case_allgather(struct ctx *x, int count, bool mixed,
                           bool in_place)
{
    ctx_describe(x, "count=%d types=%s in_place=%d", count,
                 mixed ? "mixed" : "int32", in_place);
    if (!ctx_world(x))
        return;
    int salt = ++case_salt, p = x->p;
    size_t bw = block_words(mixed, count), all = bw * (size_t)p;
    uint32_t *sbuf[MAXP], *rbuf[MAXP], *sref[MAXP], *want = words(all);
    for (int src = 0; src < p; src++)
        for (size_t i = 0; i < bw; i++)
            want[(size_t)src * bw + i] = word(salt, src, 0, (int)i);
    nbcx_request req[MAXP];
    int started[MAXP] = { 0 };
    for (int r = 0; r < p; r++) {
        sbuf[r] = copy_words(want + (size_t)r * bw, bw);
        sref[r] = copy_words(sbuf[r], bw);
        rbuf[r] = words(all);
        if (in_place)
            memcpy(rbuf[r] + (size_t)r * bw, sbuf[r], bw * sizeof(uint32_t));
    }
    for (int r = 0; r < p; r++) {
        struct tsel s = tsel(mixed, r, count, true);
        struct tsel t = tsel(mixed, r, count, false);
        started[r] = nbcx_iallgather(in_place ? NBCX_IN_PLACE : sbuf[r],
                                     s.count, s.type, rbuf[r], t.count,
                                     t.type, x->c[r], &req[r]);
    }
    if (ctx_finish(x, started, req))
        for (int r = 0; r < p; r++) {
            same_words("sendbuf", r, sbuf[r], sref[r], bw, bw);
            same_words("recvbuf", r, rbuf[r], want, all, bw);
        }
    for (int r = 0; r < p; r++) {
        free(sbuf[r]);
        free(sref[r]);
        free(rbuf[r]);
    }
    free(want);
}

static void case_alltoall(struct ctx *x, int count, bool mixed, bool in_place)
{
    ctx_describe(x, "count=%d types=%s in_place=%d", count,
                 mixed ? "mixed" : "int32", in_place);
    if (!ctx_world(x))
        return;
    int salt = ++case_salt, p = x->p;
    size_t bw = block_words(mixed, count), all = bw * (size_t)p;
    uint32_t *sbuf[MAXP], *rbuf[MAXP], *sref[MAXP];
    nbcx_request req[MAXP];
    int started[MAXP] = { 0 };
    for (int r = 0; r < p; r++) {
        sbuf[r] = words(all);
        for (int d = 0; d < p; d++)
            for (size_t i = 0; i < bw; i++)
                sbuf[r][(size_t)d * bw + i] = word(salt, r, d, (int)i);
        sref[r] = copy_words(sbuf[r], all);
        rbuf[r] = in_place ? copy_words(sbuf[r], all) : words(all);
    }
    for (int r = 0; r < p; r++) {
        /* In place, MPI uses the receive side's count and type for both. */
        struct tsel s = tsel(mixed, r, count, !in_place);
        struct tsel t = tsel(mixed, r, count, false);
        started[r] = nbcx_ialltoall(in_place ? NBCX_IN_PLACE : sbuf[r],
                                    s.count, s.type, rbuf[r], t.count, t.type,
                                    x->c[r], &req[r]);
    }
    if (ctx_finish(x, started, req)) {
        uint32_t *want = words(all);
        for (int r = 0; r < p; r++) {
            if (!in_place)
                same_words("sendbuf", r, sbuf[r], sref[r], all, bw);
            for (int src = 0; src < p; src++)
                for (size_t i = 0; i < bw; i++)
                    want[(size_t)src * bw + i] = word(salt, src, r, (int)i);
            same_words("recvbuf", r, rbuf[r], want, all, bw);
        }
        free(want);
    }
    for (int r = 0; r < p; r++) {
        free(sbuf[r]);
        free(sref[r]);
        free(rbuf[r]);
    }
}

/* ------------------------------------------------------------------ */
/* Reductions: the (type, op) table and its reference                  */
/* ------------------------------------------------------------------ */

static uint32_t mix(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u) * 0x85ebca6bu ^
                 (c + 0x165667b1u) * 0xc2b2ae35u;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    return h ^ (h >> 13);
}

/* 2x2 matrices modulo 251, one byte per entry, in a uint32. */
static uint32_t mat_mul(uint32_t x, uint32_t y)
{
    unsigned a[4], b[4], r[4];
    for (int k = 0; k < 4; k++) {
        a[k] = (x >> (8 * k)) & 0xff;
        b[k] = (y >> (8 * k)) & 0xff;
    }
    r[0] = (a[0] * b[0] + a[1] * b[2]) % 251;
    r[1] = (a[0] * b[1] + a[1] * b[3]) % 251;
    r[2] = (a[2] * b[0] + a[3] * b[2]) % 251;
    r[3] = (a[2] * b[1] + a[3] * b[3]) % 251;
    return r[0] | r[1] << 8 | r[2] << 16 | (uint32_t)r[3] << 24;
}

static void mat_op(const void *in, void *inout, int n, nbcx_datatype t,
                   void *ctx)
{
    (void)t;
    (void)ctx;
    const uint32_t *a = in;
    uint32_t *b = inout;
    for (int i = 0; i < n; i++)
        b[i] = mat_mul(a[i], b[i]);
}

enum { MODP = 1000003 };

static void summod_op(const void *in, void *inout, int n, nbcx_datatype t,
                      void *ctx)
{
    (void)t;
    (void)ctx;
    const int64_t *a = in;
    int64_t *b = inout;
    for (int i = 0; i < n; i++)
        b[i] = (a[i] + b[i]) % MODP;
}

/* One (type, op) case: how to make rank r's element i, the reference
 * inout = in op inout on one element, equality and printing. */
struct redop {
    const char *name;
    nbcx_datatype type;
    size_t size;
    nbcx_op op;                 /* user ops: created by run_reductions */
    nbcx_user_fn *user_fn;      /* NULL for built-in ops */
    int commutative;
    void (*gen)(void *e, uint32_t h);
    void (*ref)(const void *in, void *inout);
    bool (*eq)(const void *a, const void *b);
    void (*show)(char *out, size_t len, const void *e);
};

#define GEN(NAME, T, EXPR)                                                    \
    static void NAME(void *e, uint32_t h)                                     \
    {                                                                         \
        T v = (EXPR);                                                         \
        memcpy(e, &v, sizeof v);                                              \
    }
GEN(gen_i32_small, int32_t, (int32_t)(h % 2001) - 1000)
GEN(gen_i32_bits, int32_t, (int32_t)h)
GEN(gen_dbl_small, double, (double)((int)(h % 41) - 20))
GEN(gen_mat, uint32_t, (h % 251) | (h >> 8) % 251 << 8 | (h >> 16) % 251 << 16 |
                       (uint32_t)((h >> 24) * 7 % 251) << 24)
GEN(gen_modp, int64_t, (int64_t)(h % MODP))

static void gen_dblint(void *e, uint32_t h)
{
    nbcx_double_int v;
    memset(&v, 0, sizeof v);
    v.val = (double)(h % 5); /* many ties, so the index rule matters */
    v.idx = (int)((h >> 8) % 97);
    memcpy(e, &v, sizeof v);
}

#define REF(NAME, T, EXPR)                                                    \
    static void NAME(const void *in_, void *inout_)                           \
    {                                                                         \
        T a, b;                                                               \
        memcpy(&a, in_, sizeof a);                                            \
        memcpy(&b, inout_, sizeof b);                                         \
        T r = (EXPR);                                                         \
        memcpy(inout_, &r, sizeof r);                                         \
    }
REF(ref_i32_sum, int32_t, a + b)
REF(ref_i32_max, int32_t, a > b ? a : b)
REF(ref_i32_bxor, int32_t, a ^ b)
REF(ref_dbl_sum, double, a + b)
REF(ref_dbl_max, double, a > b ? a : b)
REF(ref_mat, uint32_t, mat_mul(a, b))
REF(ref_modp, int64_t, (a + b) % MODP)

static void ref_minloc(const void *in, void *inout)
{
    nbcx_double_int a, b;
    memcpy(&a, in, sizeof a);
    memcpy(&b, inout, sizeof b);
    if (a.val < b.val || (a.val == b.val && a.idx < b.idx))
        b = a;
    memcpy(inout, &b, sizeof b);
}

static bool eq_4(const void *a, const void *b) { return !memcmp(a, b, 4); }
static bool eq_8(const void *a, const void *b) { return !memcmp(a, b, 8); }
static bool eq_dblint(const void *a, const void *b)
{
    nbcx_double_int x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return x.val == y.val && x.idx == y.idx;
}

static void show_i32(char *o, size_t n, const void *e)
{
    int32_t v;
    memcpy(&v, e, sizeof v);
    snprintf(o, n, "%d (0x%08x)", (int)v, (unsigned)v);
}
static void show_dbl(char *o, size_t n, const void *e)
{
    double v;
    memcpy(&v, e, sizeof v);
    snprintf(o, n, "%g", v);
}
static void show_i64(char *o, size_t n, const void *e)
{
    int64_t v;
    memcpy(&v, e, sizeof v);
    snprintf(o, n, "%lld", (long long)v);
}
static void show_dblint(char *o, size_t n, const void *e)
{
    nbcx_double_int v;
    memcpy(&v, e, sizeof v);
    snprintf(o, n, "(%g, %d)", v.val, v.idx);
}

static struct redop redops[] = {
    { "int32/SUM", NBCX_INT32, 4, NBCX_SUM, NULL, 1, gen_i32_small,
      ref_i32_sum, eq_4, show_i32 },
    { "int32/MAX", NBCX_INT32, 4, NBCX_MAX, NULL, 1, gen_i32_bits,
      ref_i32_max, eq_4, show_i32 },
    { "int32/BXOR", NBCX_INT32, 4, NBCX_BXOR, NULL, 1, gen_i32_bits,
      ref_i32_bxor, eq_4, show_i32 },
    { "double/SUM", NBCX_DOUBLE, 8, NBCX_SUM, NULL, 1, gen_dbl_small,
      ref_dbl_sum, eq_8, show_dbl },
    { "double/MAX", NBCX_DOUBLE, 8, NBCX_MAX, NULL, 1, gen_dbl_small,
      ref_dbl_max, eq_8, show_dbl },
    { "double_int/MINLOC", NBCX_DOUBLE_INT, sizeof(nbcx_double_int),
      NBCX_MINLOC, NULL, 1, gen_dblint, ref_minloc, eq_dblint, show_dblint },
    { "uint32/user matrix product (non-commutative)", NBCX_UINT32, 4,
      NBCX_OP_NULL, mat_op, 0, gen_mat, ref_mat, eq_4, show_i32 },
    { "int64/user sum mod p (commutative)", NBCX_INT64, 8, NBCX_OP_NULL,
      summod_op, 1, gen_modp, ref_modp, eq_8, show_i64 },
};
#define NREDOPS ((int)(sizeof redops / sizeof redops[0]))

static void create_user_ops(void)
{
    for (int k = 0; k < NREDOPS; k++)
        if (redops[k].user_fn)
            nbcx_op_create(redops[k].user_fn, redops[k].commutative, NULL,
                           &redops[k].op);
}

static void free_user_ops(void)
{
    for (int k = 0; k < NREDOPS; k++)
        if (redops[k].user_fn)
            nbcx_op_free(&redops[k].op);
}

/* Element i of rank r's contribution. */
static void contribution(const struct redop *o, int salt, int r, int count,
                         unsigned char *buf)
{
    for (int i = 0; i < count; i++)
        o->gen(buf + (size_t)i * o->size,
               mix((uint32_t)salt, (uint32_t)r, (uint32_t)i));
}

/* The MPI result: v(0) op v(1) op ... op v(p-1), evaluated left to right
 * (the order a non-commutative operation must see). */
static unsigned char *reference(const struct redop *o, int salt, int p,
                                int count)
{
    size_t bytes = (size_t)count * o->size;
    unsigned char *acc = malloc(bytes + 1), *v = malloc(bytes + 1);
    memset(acc, 0, bytes + 1);
    memset(v, 0, bytes + 1);
    contribution(o, salt, 0, count, acc);
    for (int r = 1; r < p; r++) {
        contribution(o, salt, r, count, v);
        for (int i = 0; i < count; i++) { /* acc = acc op v(r) */
            o->ref(acc + (size_t)i * o->size, v + (size_t)i * o->size);
            memcpy(acc + (size_t)i * o->size, v + (size_t)i * o->size,
                   o->size);
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
        if (!o->eq(got + (size_t)i * o->size, want + (size_t)i * o->size) &&
            bad++ == 0)
            first = i;
    if (bad == 0)
        return CHECK(true);
    char g[64], w[64];
    o->show(g, sizeof g, got + (size_t)first * o->size);
    o->show(w, sizeof w, want + (size_t)first * o->size);
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
    bool all = root < 0;
    if (all)
        ctx_describe(x, "count=%d op=%s in_place=%d", count, o->name,
                     in_place);
    else
        ctx_describe(x, "count=%d root=%d op=%s in_place=%d", count, root,
                     o->name, in_place);
    if (!ctx_world(x))
        return;
    int salt = ++case_salt, p = x->p;
    size_t bytes = (size_t)count * o->size;
    unsigned char *sbuf[MAXP], *sref[MAXP], *rbuf[MAXP];
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
    }
    for (int r = 0; r < p; r++) {
        bool at_root = all || r == root;
        const void *sb = (at_root && in_place) ? NBCX_IN_PLACE : sbuf[r];
        started[r] = all ? nbcx_iallreduce(sb, rbuf[r], count, o->type, o->op,
                                           x->c[r], &req[r])
                         : nbcx_ireduce(sb, rbuf[r], count, o->type, o->op,
                                        root, x->c[r], &req[r]);
    }
    if (ctx_finish(x, started, req)) {
        for (int r = 0; r < p; r++) {
            bool at_root = all || r == root;
            if (!(at_root && in_place))
                CHECK(memcmp(sbuf[r], sref[r], bytes) == 0,
                      "rank %d: sendbuf was modified", r);
            if (at_root)
                same_elems(o, "recvbuf", r, rbuf[r], want, count);
            else
                CHECK(memcmp(rbuf[r], sentinel, bytes) == 0,
                      "rank %d: the non-root recvbuf was written", r);
        }
    }
    for (int r = 0; r < p; r++) {
        free(sbuf[r]);
        free(sref[r]);
        free(rbuf[r]);
    }
    free(want);
    free(sentinel);
}

/* ------------------------------------------------------------------ */
/* Driving the whole matrix                                            */
/* ------------------------------------------------------------------ */

/* All cases of one collective and algorithm on a world of x->p ranks. */
static void run_size(struct ctx *x)
{
    int p = x->p;
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
            for (int mixed = 0; mixed < 2; mixed++) {
                if (x->failed >= MAX_FAILED_CASES)
                    return;
                long before = th_failures;
                switch (x->coll) {
                case C_BCAST:
                    if (!in_place)
                        for (int k = 0; k < nroots; k++)
                            case_bcast(x, n, roots[k], mixed);
                    break;
                case C_GATHER:
                    for (int k = 0; k < nroots; k++)
                        case_gather(x, n, roots[k], mixed, in_place);
                    break;
                case C_SCATTER:
                    for (int k = 0; k < nroots; k++)
                        case_scatter(x, n, roots[k], mixed, in_place);
                    break;
                case C_ALLGATHER:
                    case_allgather(x, n, mixed, in_place);
                    break;
                case C_ALLTOALL:
                    case_alltoall(x, n, mixed, in_place);
                    break;
                case C_REDUCE:
                case C_ALLREDUCE:
                    if (mixed) /* reductions: the op table instead */
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
    char list[256];
    snprintf(list, sizeof list, "%s auto", names);
    nbcx_segsize_set(SEGSIZE);
    create_user_ops();
    for (char *save = NULL, *alg = strtok_r(list, " ", &save); alg;
         alg = strtok_r(NULL, " ", &save)) {
        th_context = NULL;
        CHECK_OK(nbcx_algorithm_set(coll_names[coll], alg));
        struct ctx x = { .coll = coll, .alg = alg, .mode = mode,
                         .seed = 1000u * (uint64_t)coll + 17 };
        long f0 = th_failures, k0 = th_cases;
        double t0 = th_now();
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            x.p = sizes[si];
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
            CHECK_OK(nbcx_algorithm_set(coll_names[coll], alg));
            for (int p = 2; p <= 4; p++) {
                struct ctx x = { .coll = (enum coll_id)coll, .alg = alg,
                                 .mode = LOOPBACK_RANDOM, .p = p, .seed = 5 };
                int n = coll == C_ALLTOALL ? 2100 : 5000;
                switch (coll) {
                case C_BCAST: case_bcast(&x, n, p - 1, false); break;
                case C_REDUCE:
                    case_reduction(&x, n, 1, &redops[0], false);
                    case_reduction(&x, n, 0, &redops[6], false);
                    break;
                case C_ALLREDUCE:
                    case_reduction(&x, n, -1, &redops[3], false);
                    case_reduction(&x, n, -1, &redops[7], true);
                    break;
                case C_GATHER: case_gather(&x, n, 1, false, false); break;
                case C_SCATTER: case_scatter(&x, n, 1, false, false); break;
                case C_ALLGATHER: case_allgather(&x, n, false, false); break;
                case C_ALLTOALL: case_alltoall(&x, n, false, false); break;
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
 * tag_ub allows exactly eight sequence numbers; every rank starts them in
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
    CHECK_RC(nbcx_segsize_set(0), NBCX_ERR_ARG);
    char info[512];
    CHECK_OK(nbcx_info(info, sizeof info));
    CHECK(strstr(info, "bcast") != NULL, "nbcx_info: %s", info);
}

static const struct th_test tests[] = {
    { "algorithm_api", test_algorithm_api },
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
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests, TH_COUNT(tests));
}
