/*
 * test_vcoll.c - the vector, w, reduce-scatter, scan and neighbourhood
 * collectives on loopback worlds, every algorithm, against a sequential
 * reference computed here.
 *
 * Data movement (gatherv, scatterv, allgatherv, alltoallv, alltoallw and
 * the five neighbourhood collectives): every block carries words that
 * name their origin (source rank, send block, index, and a per-case
 * salt), so a wrong result says where the word came from. Block sizes
 * differ per rank (or per pair), with empty blocks among them; blocks sit
 * in the buffers in reverse order with gaps between them, and every word
 * the collective must not write (gaps, empty blocks, insignificant
 * buffers, the blocks of NBCX_PROC_NULL neighbours) starts as a sentinel
 * that must survive. Send buffers must come back unchanged. Types:
 *   int32    NBCX_INT32 everywhere;
 *   mixed    even ranks send INT32 and receive INT64, odd ranks the
 *            other way round (same bytes, different types);
 *   derived  even ranks send and receive non-contiguous types with a gap
 *            in every element (made by a test face), odd ranks INT64 /
 *            INT32;
 *   w        (w variants) the type differs per block as well.
 * In place wherever MPI allows it.
 *
 * Reductions (reduce_scatter, reduce_scatter_block, scan, exscan): int32
 * sum and max, double sum (exact small integers), a non-commutative user
 * operation (2x2 matrix product mod 251: rank order matters), a
 * commutative user operation, and the derived gap type with sum (its
 * gaps must not be written).
 *
 * Topologies: Cartesian grids from nbcx_comm_set_cart (1-, 2- and 3-D,
 * periodic or not, with dimensions of 1 and 2 ranks where both
 * neighbours are one rank, or the rank itself) and irregular graphs from
 * nbcx_comm_set_neighbors (random degrees including 0, repeated edges
 * between a pair, edges to the rank itself, sources in shuffled order).
 * The neighbour lists nbcx derives are checked against a computation
 * here, and the reference pairs blocks as MPI-4.1 says: Cartesian block j
 * of the sender lands in block j ^ 1 of the receiver; in a graph the k-th
 * edge to a rank meets the k-th edge from it.
 *
 * Worlds of 1..9, 12, 16 and 33 ranks, ordered and random loopback modes
 * (the random one delivers and completes in random legal orders, and the
 * loopback rejects any operation posted on the bytes of a pending
 * receive: a missing dependency).
 */
#include <stdint.h>

#include "core.h"
#include "harness.h"
#include "loopback.h"
#include "matrix_op.h"

enum { MAXP = 33, SEGSIZE = 100, TAG_UB = 32767 };
static const int sizes[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 33 };

/* ------------------------------------------------------------------ */
/* Worlds                                                              */
/* ------------------------------------------------------------------ */

struct world {
    int p;
    enum loopback_mode mode;
    nbcx_comm c[MAXP];
    bool live;
    uint64_t seed;
};

static bool world_get(struct world *w)
{
    if (w->live)
        return true;
    struct loopback_options opt = { .tag_ub = TAG_UB, .mode = w->mode,
                                    .seed = w->seed++ };
    int err = loopback_world_create_ex(w->p, &opt, w->c);
    CHECK(err == NBCX_SUCCESS, "world of %d: %s", w->p,
          nbcx_error_string(err));
    w->live = err == NBCX_SUCCESS;
    return w->live;
}

static void world_drop(struct world *w)
{
    if (w->live)
        loopback_world_destroy(w->p, w->c);
    w->live = false;
}

static char ctx[300];

static void describe(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx, sizeof ctx, fmt, ap);
    va_end(ap);
    th_context = ctx;
    th_cases++;
}

/* Waits for the p requests; false (and the world dropped) on a start
 * error, a deadlock or an error result. */
static bool finish(struct world *w, const int started[], nbcx_request req[])
{
    bool ok = true;
    for (int r = 0; r < w->p; r++)
        if (!CHECK(started[r] == NBCX_SUCCESS, "rank %d: start returned %d "
                   "(%s)", r, started[r], nbcx_error_string(started[r])))
            ok = false;
    if (!ok) {
        /* the others may be stuck: the world goes */
        world_drop(w);
        return false;
    }
    int err = loopback_waitall(w->c[0], w->p, req);
    if (err == LOOPBACK_DEADLOCK) {
        CHECK(0, "deadlock: the collective can never complete");
        world_drop(w);
        return false;
    }
    if (!CHECK(err == NBCX_SUCCESS, "waitall returned %d (%s)", err,
               nbcx_error_string(err))) {
        world_drop(w);
        return false;
    }
    return true;
}

static uint32_t mix(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u) * 0x85ebca6bu ^
                 (c + 0x165667b1u) * 0xc2b2ae35u;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    return h ^ (h >> 13);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* ------------------------------------------------------------------ */
/* Derived types with gaps (as a face such as MPI would make them)     */
/* ------------------------------------------------------------------ */
/*
 * Two int32 data words in a 12-byte extent: gap_mid = | d0 | gap | d1 |,
 * gap_front = | gap | d0 | d1 | (true_lb 4). 8 bytes of data, like INT64
 * or INT32 x 2. The face packs, unpacks and reduces (SUM only).
 */
struct gap_layout { int off[2]; };
static const struct gap_layout mid_layout = { { 0, 2 } };
static const struct gap_layout front_layout = { { 1, 2 } };

static const uint32_t *gap_word(const void *buf, int i, int k,
                                const struct nbcx_datatype_s *t)
{
    const struct gap_layout *l = t->handle;
    return (const uint32_t *)buf + 3 * i + l->off[k];
}

static int gap_pack(const void *src, int count, struct nbcx_datatype_s *t,
                    void *dst)
{
    for (int i = 0; i < count; i++)
        for (int k = 0; k < 2; k++)
            memcpy((uint32_t *)dst + 2 * i + k, gap_word(src, i, k, t), 4);
    return NBCX_SUCCESS;
}

static int gap_unpack(const void *src, int count, struct nbcx_datatype_s *t,
                      void *dst)
{
    for (int i = 0; i < count; i++)
        for (int k = 0; k < 2; k++)
            memcpy((void *)(uintptr_t)gap_word(dst, i, k, t),
                   (const uint32_t *)src + 2 * i + k, 4);
    return NBCX_SUCCESS;
}

static int gap_reduce(const void *in, void *inout, int count,
                      struct nbcx_datatype_s *t, int op_id)
{
    if (op_id != (int)(uintptr_t)NBCX_SUM)
        return NBCX_ERR_OP;
    for (int i = 0; i < count; i++)
        for (int k = 0; k < 2; k++) {
            int32_t a, b;
            uint32_t *pb = (uint32_t *)(uintptr_t)gap_word(inout, i, k, t);
            memcpy(&a, gap_word(in, i, k, t), 4);
            memcpy(&b, pb, 4);
            b = (int32_t)((uint32_t)a + (uint32_t)b);
            memcpy(pb, &b, 4);
        }
    return NBCX_SUCCESS;
}

static const struct nbcxi_type_face gap_face = { gap_pack, gap_unpack,
                                                 gap_reduce, NULL };

#define GAP_TYPE(NAME, LAYOUT, LB, TEXT)                                      \
    static struct nbcx_datatype_s NAME = {                                    \
        .magic = NBCXI_TYPE_MAGIC, .id = 0, .name = #NAME, .size = 8,         \
        .extent = 12, .true_lb = LB, .true_extent = TEXT,                     \
        .contiguous = false, .face = &gap_face,                               \
        .handle = (void *)(uintptr_t)&LAYOUT, .refs = 1 }
GAP_TYPE(gap_mid, mid_layout, 0, 12);
GAP_TYPE(gap_front, front_layout, 4, 8);
#define GAP_MID ((nbcx_datatype)&gap_mid)
#define GAP_FRONT ((nbcx_datatype)&gap_front)

/* ------------------------------------------------------------------ */
/* Typed blocks of self-describing words                               */
/* ------------------------------------------------------------------ */

/* Word i of send block blk of rank src in case salt. */
static uint32_t word(int salt, int src, int blk, int i)
{
    return (uint32_t)(salt & 31) << 27 | (uint32_t)src << 21 |
           (uint32_t)blk << 15 | (uint32_t)(i & 0x7fff);
}

static const uint32_t SENTINEL = 0xdeadbeefu;

static void describe_word(char *out, size_t len, uint32_t w)
{
    if (w == SENTINEL)
        snprintf(out, len, "the sentinel (never written)");
    else
        snprintf(out, len, "0x%08x = word %u of block %u from rank %u, "
                 "salt %u", w, w & 0x7fff, (w >> 15) & 63, (w >> 21) & 63,
                 w >> 27);
}

/* A type and its memory layout: element e holds data words dpe * e + k
 * at word w * e + off[k]. */
struct tsel {
    nbcx_datatype type;
    int w, dpe, off[2];
};

static const struct tsel SEL_I32 = { NBCX_INT32, 1, 1, { 0, 0 } };
static const struct tsel SEL_I64 = { NBCX_INT64, 2, 2, { 0, 1 } };
static const struct tsel SEL_GMID = { GAP_MID, 3, 2, { 0, 2 } };
static const struct tsel SEL_GFRONT = { GAP_FRONT, 3, 2, { 1, 2 } };

enum tmode { T_INT32, T_MIXED, T_DERIVED, T_W, NTMODES };
static const char *const tmode_names[NTMODES] = { "int32", "mixed",
                                                  "derived", "w" };

/* The type of block b on the send or receive side of rank r. */
static struct tsel tsel_of(enum tmode m, int r, bool send, int b)
{
    bool even = r % 2 == 0;
    switch (m) {
    case T_INT32: return SEL_I32;
    case T_MIXED: return even == send ? SEL_I32 : SEL_I64;
    case T_DERIVED:
        if (even)
            return send ? SEL_GMID : SEL_GFRONT;
        return send ? SEL_I64 : SEL_I32;
    default: {
        static const struct tsel *const all[4] = { &SEL_I32, &SEL_I64,
                                                   &SEL_GMID, &SEL_GFRONT };
        return *all[(r + b + (send ? 0 : 1)) % 4];
    }
    }
}

/* One side of a rank: n blocks, each with its type, element count and
 * place, in a buffer of `words` words. */
struct side {
    int n;
    struct tsel *sel;
    int *count;        /* elements                               */
    int *displ;        /* elements, or bytes (w)                 */
    ptrdiff_t *adispl; /* bytes                                  */
    nbcx_datatype *types;
    size_t *wpos;      /* word offset of each block              */
    size_t words;
    uint32_t *buf, *want, *orig;
    bool single;       /* the API takes the one block, not the buffer */
};

static void side_init(struct side *s, int n)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    size_t k = (size_t)(n > 0 ? n : 1);
    s->sel = xmalloc(k * sizeof *s->sel);
    s->count = xmalloc(k * sizeof *s->count);
    s->displ = xmalloc(k * sizeof *s->displ);
    s->adispl = xmalloc(k * sizeof *s->adispl);
    s->types = xmalloc(k * sizeof *s->types);
    s->wpos = xmalloc(k * sizeof *s->wpos);
}

static void side_free(struct side *s)
{
    free(s->sel);
    free(s->count);
    free(s->displ);
    free(s->adispl);
    free(s->types);
    free(s->wpos);
    free(s->buf);
    free(s->want);
    free(s->orig);
}

/* Places the blocks (words[b] data words each, in types sel[b]) in
 * reverse order with gaps, and allocates the buffers full of sentinels.
 * byte_displs: displacements in bytes (w variants), else in elements of
 * the side's single type. */
static void side_layout(struct side *s, const int *words, bool byte_displs,
                        bool regular)
{
    size_t pos = byte_displs || s->n == 0 ? 2 : (size_t)s->sel[0].w;
    if (regular) /* MPI's layout of the regular variants: i * count */
        pos = 0;
    for (int b = regular ? 0 : s->n - 1; regular ? b < s->n : b >= 0;
         b += regular ? 1 : -1) {
        struct tsel t = s->sel[b];
        s->count[b] = words[b] / t.dpe;
        s->types[b] = t.type;
        s->wpos[b] = pos;
        s->adispl[b] = (ptrdiff_t)pos * 4;
        s->displ[b] = byte_displs ? (int)pos * 4 : (int)(pos / (size_t)t.w);
        pos += (size_t)s->count[b] * (size_t)t.w;
        /* a gap of 2 words (w: keep 8-byte alignment) or one element */
        if (!regular)
            pos = byte_displs ? ((pos + 1) & ~(size_t)1) + 2
                              : pos + (size_t)t.w;
    }
    if (regular)
        pos += 2; /* a tail that must stay untouched */
    s->words = pos;
    s->buf = xmalloc(pos * 4);
    s->want = xmalloc(pos * 4);
    for (size_t i = 0; i < pos; i++)
        s->buf[i] = s->want[i] = SENTINEL;
}

static uint32_t *at(uint32_t *buf, const struct side *s, int b, int j)
{
    struct tsel t = s->sel[b];
    return buf + s->wpos[b] + (size_t)(j / t.dpe) * (size_t)t.w +
           (size_t)t.off[j % t.dpe];
}

/* Writes the words of (src, sblk) into block b of buf. */
static void put(uint32_t *buf, const struct side *s, int b, int salt, int src,
                int sblk)
{
    int n = s->count[b] * s->sel[b].dpe;
    for (int j = 0; j < n; j++)
        *at(buf, s, b, j) = word(salt, src, sblk, j);
}

static void side_snapshot(struct side *s)
{
    s->orig = xmalloc(s->words * 4);
    memcpy(s->orig, s->buf, s->words * 4);
}

static bool same_words(const char *what, int rank, const uint32_t *got,
                       const uint32_t *want, size_t n)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i] && bad++ == 0)
            first = i;
    if (bad == 0)
        return CHECK(true, "counted");
    char g[96], w[96];
    describe_word(g, sizeof g, got[first]);
    describe_word(w, sizeof w, want[first]);
    CHECK(bad == 0, "%s of rank %d: %zu of %zu words differ; first at word "
          "%zu: got %s, expected %s", what, rank, bad, n, first, g, w);
    return false;
}

/* ------------------------------------------------------------------ */
/* The case: per rank a send and a receive side, and where each        */
/* receive block's data comes from                                     */
/* ------------------------------------------------------------------ */

static int case_salt;

struct xcase {
    int p, salt;
    enum tmode m;
    bool regular;                    /* blocks at i * count, in order */
    struct side S[MAXP], R[MAXP];
    bool has_s[MAXP], has_r[MAXP];   /* the side exists on this rank */
    bool s_in_place[MAXP], r_in_place[MAXP];
};

/* Data words of a block from a to b: 0 for some, up to maxw; even when
 * the types need pairs of words. */
static int block_words(const struct xcase *x, int a, int b, int maxw)
{
    uint32_t h = mix((uint32_t)x->salt, (uint32_t)a, (uint32_t)b);
    int w = maxw == 0 || h % 5 == 0 ? 0 : 1 + (int)((h >> 5) % (unsigned)maxw);
    return x->m == T_INT32 ? w : 2 * w;
}

/* Side of n blocks for rank r with block sizes words[]. */
static void make_side(struct xcase *x, int r, bool send, int n,
                      const int *words)
{
    struct side *s = send ? &x->S[r] : &x->R[r];
    side_init(s, n);
    for (int b = 0; b < n; b++)
        s->sel[b] = tsel_of(x->m, r, send, b);
    side_layout(s, words, x->m == T_W, x->regular);
    (send ? x->has_s : x->has_r)[r] = true;
}

/* Fills send block b of rank r with its words. */
static void fill_send(struct xcase *x, int r)
{
    for (int b = 0; b < x->S[r].n; b++)
        put(x->S[r].buf, &x->S[r], b, x->salt, r, b);
}

static void xcase_free(struct xcase *x)
{
    for (int r = 0; r < x->p; r++) {
        if (x->has_s[r])
            side_free(&x->S[r]);
        if (x->has_r[r])
            side_free(&x->R[r]);
    }
}

/* After the run: send buffers unchanged, receive buffers as expected. */
static void xcase_check(struct xcase *x)
{
    for (int r = 0; r < x->p; r++) {
        if (x->has_s[r] && x->S[r].orig)
            same_words("sendbuf", r, x->S[r].buf, x->S[r].orig,
                       x->S[r].words);
        if (x->has_r[r])
            same_words("recvbuf", r, x->R[r].buf, x->R[r].want,
                       x->R[r].words);
    }
}

static void snapshot_all(struct xcase *x)
{
    for (int r = 0; r < x->p; r++)
        if (x->has_s[r])
            side_snapshot(&x->S[r]);
}

/* Start arguments of one side as the API takes them: a side of one
 * block (the send side of gatherv, say) is passed as that block. */
static void *side_buf(struct side *s)
{
    return s->single ? s->buf + s->wpos[0] : s->buf;
}

static const void *sbuf_of(struct xcase *x, int r)
{
    return x->s_in_place[r] ? NBCX_IN_PLACE
                            : x->has_s[r] ? side_buf(&x->S[r]) : NULL;
}

static void *rbuf_of(struct xcase *x, int r)
{
    return x->r_in_place[r] ? NBCX_IN_PLACE
                            : x->has_r[r] ? side_buf(&x->R[r]) : NULL;
}

/* ------------------------------------------------------------------ */
/* gatherv, scatterv, allgatherv, alltoallv, alltoallw                 */
/* ------------------------------------------------------------------ */

enum vcoll { V_GATHERV, V_SCATTERV, V_ALLGATHERV, V_ALLTOALLV, V_ALLTOALLW,
             NVCOLL };
static const char *const vcoll_names[NVCOLL] = {
    "gatherv", "scatterv", "allgatherv", "alltoallv", "alltoallw" };

static void run_vcase(struct world *w, enum vcoll coll, int maxw, int root,
                      enum tmode m, bool in_place)
{
    describe("%s p=%d mode=%s maxwords=%d root=%d types=%s in_place=%d",
             vcoll_names[coll], w->p, w->mode ? "random" : "ordered", maxw,
             root, tmode_names[m], in_place);
    if (!world_get(w))
        return;
    struct xcase *x = calloc(1, sizeof *x);
    x->p = w->p;
    x->salt = ++case_salt;
    x->m = m;
    const int p = x->p;
    int words[MAXP];
    nbcx_request req[MAXP];
    int started[MAXP] = { 0 };

    switch (coll) {
    case V_GATHERV:
        for (int r = 0; r < p; r++)
            words[r] = block_words(x, r, 0, maxw);
        for (int r = 0; r < p; r++)
            if (!(r == root && in_place)) {
                make_side(x, r, true, 1, &words[r]);
                x->S[r].single = true;
            }
        make_side(x, root, false, p, words);
        for (int r = 0; r < p; r++)
            if (x->has_s[r])
                fill_send(x, r);
        if (in_place) {
            x->s_in_place[root] = true;
            put(x->R[root].buf, &x->R[root], root, x->salt, root, 0);
        }
        for (int i = 0; i < p; i++)
            put(x->R[root].want, &x->R[root], i, x->salt, i, 0);
        break;
    case V_SCATTERV:
        for (int r = 0; r < p; r++)
            words[r] = block_words(x, root, r, maxw);
        make_side(x, root, true, p, words);
        fill_send(x, root);
        for (int r = 0; r < p; r++) {
            if (r == root && in_place) {
                x->r_in_place[r] = true;
                continue;
            }
            make_side(x, r, false, 1, &words[r]);
            x->R[r].single = true;
            put(x->R[r].want, &x->R[r], 0, x->salt, root, r);
        }
        break;
    case V_ALLGATHERV:
        for (int r = 0; r < p; r++)
            words[r] = block_words(x, r, 0, maxw);
        for (int r = 0; r < p; r++) {
            make_side(x, r, false, p, words);
            for (int i = 0; i < p; i++)
                put(x->R[r].want, &x->R[r], i, x->salt, i, 0);
            if (in_place) {
                x->s_in_place[r] = true;
                put(x->R[r].buf, &x->R[r], r, x->salt, r, 0);
            } else {
                make_side(x, r, true, 1, &words[r]);
                x->S[r].single = true;
                fill_send(x, r);
            }
        }
        break;
    default: /* alltoallv, alltoallw */
        for (int r = 0; r < p; r++) {
            int sw[MAXP], rw[MAXP];
            for (int j = 0; j < p; j++) {
                /* in place the blocks are symmetric: sent = received */
                sw[j] = block_words(x, in_place ? NBCXI_MIN(r, j) : r,
                                    in_place ? NBCXI_MAX(r, j) : j, maxw);
                rw[j] = block_words(x, in_place ? NBCXI_MIN(r, j) : j,
                                    in_place ? NBCXI_MAX(r, j) : r, maxw);
            }
            make_side(x, r, false, p, rw);
            for (int i = 0; i < p; i++)
                put(x->R[r].want, &x->R[r], i, x->salt, i, r);
            if (in_place) {
                x->s_in_place[r] = true;
                for (int j = 0; j < p; j++) /* the data to send */
                    put(x->R[r].buf, &x->R[r], j, x->salt, r, j);
            } else {
                make_side(x, r, true, p, sw);
                fill_send(x, r);
            }
        }
        break;
    }
    snapshot_all(x);

    for (int r = 0; r < p; r++) {
        struct side *S = &x->S[r], *R = &x->R[r];
        bool hs = x->has_s[r], hr = x->has_r[r];
        const void *sb = sbuf_of(x, r);
        void *rb = rbuf_of(x, r);
        nbcx_comm c = w->c[r];
        switch (coll) {
        case V_GATHERV:
            /* off the root the receive side is insignificant: NULLs */
            started[r] = nbcx_igatherv(
                sb, hs ? S->count[0] : -1,
                hs ? S->types[0] : NBCX_DATATYPE_NULL, rb,
                hr ? R->count : NULL, hr ? R->displ : NULL,
                hr ? R->types[0] : NBCX_DATATYPE_NULL, root, c, &req[r]);
            break;
        case V_SCATTERV:
            started[r] = nbcx_iscatterv(
                sb, hs ? S->count : NULL, hs ? S->displ : NULL,
                hs ? S->types[0] : NBCX_DATATYPE_NULL, rb,
                hr ? R->count[0] : -1,
                hr ? R->types[0] : NBCX_DATATYPE_NULL, root, c, &req[r]);
            break;
        case V_ALLGATHERV:
            started[r] = nbcx_iallgatherv(
                sb, hs ? S->count[0] : -1,
                hs ? S->types[0] : NBCX_DATATYPE_NULL, rb, R->count,
                R->displ, R->types[0], c, &req[r]);
            break;
        case V_ALLTOALLV:
            started[r] = nbcx_ialltoallv(
                sb, hs ? S->count : NULL, hs ? S->displ : NULL,
                hs ? S->types[0] : NBCX_DATATYPE_NULL, rb, R->count,
                R->displ, R->types[0], c, &req[r]);
            break;
        default:
            started[r] = nbcx_ialltoallw(
                sb, hs ? S->count : NULL, hs ? S->displ : NULL,
                hs ? S->types : NULL, rb, R->count, R->displ, R->types, c,
                &req[r]);
            break;
        }
    }
    if (finish(w, started, req))
        xcase_check(x);
    xcase_free(x);
    free(x);
}

static void run_vcoll(enum vcoll coll, enum loopback_mode mode)
{
    const char *names = NULL;
    char list[256];
    REQUIRE_OK(nbcx_algorithm_names(vcoll_names[coll], &names));
    snprintf(list, sizeof list, "%s auto", names);
    static const int maxws[] = { 0, 3, 60 };
    for (char *save = NULL, *alg = strtok_r(list, " ", &save); alg;
         alg = strtok_r(NULL, " ", &save)) {
        th_context = NULL;
        CHECK_OK(nbcx_algorithm_set(vcoll_names[coll], alg));
        long f0 = th_failures, k0 = th_cases;
        double t0 = th_now();
        for (size_t si = 0; si < TH_COUNT(sizes); si++) {
            struct world w = { .p = sizes[si], .mode = mode,
                               .seed = 31u * (uint64_t)coll + 7 };
            int roots[3] = { 0, w.p - 1, w.p / 2 };
            for (size_t mi = 0; mi < TH_COUNT(maxws); mi++)
                for (int m = 0; m < NTMODES; m++) {
                    if ((m == T_W) != (coll == V_ALLTOALLW))
                        continue;
                    for (int ip = 0; ip < 2; ip++) {
                        bool rooted = coll == V_GATHERV ||
                                      coll == V_SCATTERV;
                        for (int k = 0; k < (rooted ? 3 : 1); k++) {
                            if (k > 0 && (roots[k] == roots[0] ||
                                          roots[k] == roots[k - 1]))
                                continue;
                            run_vcase(&w, coll, maxws[mi], roots[k],
                                      (enum tmode)m, ip);
                        }
                    }
                }
            world_drop(&w);
        }
        th_context = NULL;
        printf("  %-11s %-18s %6ld cases %7.2f s%s\n", vcoll_names[coll],
               alg, th_cases - k0, th_now() - t0,
               th_failures > f0 ? "  FAILED" : "");
    }
    CHECK_OK(nbcx_algorithm_set(vcoll_names[coll], "auto"));
}

/* ------------------------------------------------------------------ */
/* Topologies and the neighbourhood collectives                        */
/* ------------------------------------------------------------------ */

/* This rank's neighbours, and for receive block i the (rank, send block)
 * its data comes from. */
struct nbr {
    int in, out;
    int src[64], dst[64];
    int from_rank[64], from_blk[64];
};

struct topo {
    char name[80];
    bool cart;
    int ndims, dims[3], periods[3];
    struct nbr n[MAXP];
};

/* Cartesian: row-major coordinates; block 2d is the -1 neighbour of
 * dimension d, 2d + 1 the +1 one; what goes towards -1 arrives in the
 * neighbour's +1 block (MPI-4.1 Example 8.10). */
static void topo_cart(struct topo *t, int p, int ndims, const int *dims,
                      const int *periods)
{
    memset(t, 0, sizeof *t);
    t->cart = true;
    t->ndims = ndims;
    int k = snprintf(t->name, sizeof t->name, "cart");
    for (int d = 0; d < ndims; d++) {
        t->dims[d] = dims[d];
        t->periods[d] = periods[d];
        k += snprintf(t->name + k, sizeof t->name - (size_t)k, "%s%d%s",
                      d ? "x" : " ", dims[d], periods[d] ? "p" : "");
    }
    for (int r = 0; r < p; r++) {
        struct nbr *n = &t->n[r];
        n->in = n->out = 2 * ndims;
        int stride = 1;
        for (int d = ndims - 1; d >= 0; d--) {
            int c = (r / stride) % dims[d];
            for (int s = 0; s < 2; s++) {
                int nc = c + (s ? 1 : -1), q = NBCX_PROC_NULL;
                if (periods[d])
                    nc = (nc + dims[d]) % dims[d];
                if (nc >= 0 && nc < dims[d])
                    q = r + (nc - c) * stride;
                n->src[2 * d + s] = n->dst[2 * d + s] = q;
                n->from_rank[2 * d + s] = q;
                n->from_blk[2 * d + s] = (2 * d + s) ^ 1;
            }
            stride *= dims[d];
        }
    }
}

/* An irregular graph: rank r has up to 5 edges to random ranks (repeats
 * and itself included; some ranks none); the sources of every rank are
 * its incoming edges in shuffled order. The k-th occurrence of a among
 * b's sources receives a's k-th edge to b. */
static void topo_graph(struct topo *t, int p, uint32_t seed)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "graph seed %u", (unsigned)seed);
    for (int r = 0; r < p; r++) {
        struct nbr *n = &t->n[r];
        uint32_t h = mix(seed, (uint32_t)r, 99);
        n->out = h % 7 == 3 ? 0 : (int)(h % 6);
        for (int j = 0; j < n->out; j++) {
            uint32_t g = mix(seed, (uint32_t)r, (uint32_t)j + 1000);
            /* favour the next rank, so that edges repeat */
            n->dst[j] = g % 3 == 0 ? (r + 1) % p
                                   : (int)((g >> 4) % (unsigned)p);
        }
    }
    for (int b = 0; b < p; b++) {
        struct nbr *n = &t->n[b];
        n->in = 0;
        for (int a = 0; a < p; a++)
            for (int j = 0; j < t->n[a].out; j++)
                if (t->n[a].dst[j] == b)
                    n->src[n->in++] = a;
        for (int i = n->in - 1; i > 0; i--) { /* Fisher-Yates */
            int k = (int)(mix(seed, (uint32_t)b, (uint32_t)i + 7) %
                          (unsigned)(i + 1));
            int v = n->src[i];
            n->src[i] = n->src[k];
            n->src[k] = v;
        }
        for (int i = 0; i < n->in; i++) {
            int a = n->src[i], k = 0;
            for (int m = 0; m < i; m++)
                k += n->src[m] == a;
            n->from_rank[i] = a;
            for (int j = 0; j < t->n[a].out; j++)
                if (t->n[a].dst[j] == b && k-- == 0) {
                    n->from_blk[i] = j;
                    break;
                }
        }
    }
}

static bool topo_attach(struct world *w, const struct topo *t)
{
    bool ok = true;
    for (int r = 0; r < w->p; r++) {
        const struct nbr *n = &t->n[r];
        int err = t->cart ? nbcx_comm_set_cart(w->c[r], t->ndims, t->dims,
                                               t->periods)
                          : nbcx_comm_set_neighbors(w->c[r], n->in, n->src,
                                                    n->out, n->dst);
        if (!CHECK(err == NBCX_SUCCESS, "%s rank %d: %s", t->name, r,
                   nbcx_error_string(err))) {
            ok = false;
            continue;
        }
        int in = -1, out = -1, src[64], dst[64];
        CHECK_OK(nbcx_comm_neighbors_count(w->c[r], &in, &out));
        CHECK(in == n->in && out == n->out, "%s rank %d: degrees %d %d, "
              "expected %d %d", t->name, r, in, out, n->in, n->out);
        CHECK_OK(nbcx_comm_neighbors(w->c[r], 64, src, 64, dst));
        for (int i = 0; in == n->in && i < n->in; i++)
            CHECK(src[i] == n->src[i], "%s rank %d: source %d is %d, "
                  "expected %d", t->name, r, i, src[i], n->src[i]);
        for (int j = 0; out == n->out && j < n->out; j++)
            CHECK(dst[j] == n->dst[j], "%s rank %d: destination %d is %d, "
                  "expected %d", t->name, r, j, dst[j], n->dst[j]);
    }
    return ok;
}

enum ncoll { N_ALLGATHER, N_ALLGATHERV, N_ALLTOALL, N_ALLTOALLV,
             N_ALLTOALLW, NNCOLL };
static const char *const ncoll_names[NNCOLL] = {
    "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall",
    "neighbor_alltoallv", "neighbor_alltoallw" };

static void run_ncase(struct world *w, const struct topo *t, enum ncoll coll,
                      int maxw, enum tmode m)
{
    describe("%s p=%d mode=%s %s maxwords=%d types=%s", ncoll_names[coll],
             w->p, w->mode ? "random" : "ordered", t->name, maxw,
             tmode_names[m]);
    if (!world_get(w) || !topo_attach(w, t))
        return;
    struct xcase *x = calloc(1, sizeof *x);
    x->p = w->p;
    x->salt = ++case_salt;
    x->m = m;
    const int p = x->p;
    const bool gather = coll == N_ALLGATHER || coll == N_ALLGATHERV;
    const bool regular = coll == N_ALLGATHER || coll == N_ALLTOALL;
    nbcx_request req[MAXP];
    int started[MAXP] = { 0 };
    x->regular = regular;

    /* Block sizes: per sending rank (allgather), per (rank, block), or
     * one for all (regular). */
    for (int r = 0; r < p; r++) {
        const struct nbr *n = &t->n[r];
        int sw[64], rw[64];
        for (int j = 0; j < (gather ? 1 : n->out); j++)
            sw[j] = block_words(x, regular ? 0 : r, regular || gather ? 0 : j,
                                maxw);
        for (int i = 0; i < n->in; i++) {
            int q = n->from_rank[i];
            rw[i] = q == NBCX_PROC_NULL
                        ? block_words(x, 0, 0, maxw) /* any size */
                        : block_words(x, regular ? 0 : q,
                                      regular || gather ? 0 : n->from_blk[i],
                                      maxw);
            if (regular)
                rw[i] = block_words(x, 0, 0, maxw);
        }
        make_side(x, r, true, gather ? 1 : n->out, sw);
        x->S[r].single = gather;
        make_side(x, r, false, n->in, rw);
        fill_send(x, r);
        for (int i = 0; i < n->in; i++)
            if (n->from_rank[i] != NBCX_PROC_NULL)
                put(x->R[r].want, &x->R[r], i, x->salt, n->from_rank[i],
                    gather ? 0 : n->from_blk[i]);
    }
    snapshot_all(x);

    for (int r = 0; r < p; r++) {
        struct side *S = &x->S[r], *R = &x->R[r];
        nbcx_comm c = w->c[r];
        nbcx_datatype st = S->n ? S->types[0] : NBCX_INT32;
        nbcx_datatype rt = R->n ? R->types[0] : NBCX_INT32;
        int sc = S->n ? S->count[0] : 0, rc = R->n ? R->count[0] : 0;
        switch (coll) {
        case N_ALLGATHER:
            started[r] = nbcx_ineighbor_allgather(side_buf(S), sc, st, R->buf,
                                                  rc, rt, c, &req[r]);
            break;
        case N_ALLGATHERV:
            started[r] = nbcx_ineighbor_allgatherv(side_buf(S), sc, st, R->buf,
                                                   R->count, R->displ, rt, c,
                                                   &req[r]);
            break;
        case N_ALLTOALL:
            started[r] = nbcx_ineighbor_alltoall(S->buf, sc, st, R->buf, rc,
                                                 rt, c, &req[r]);
            break;
        case N_ALLTOALLV:
            started[r] = nbcx_ineighbor_alltoallv(S->buf, S->count, S->displ,
                                                  st, R->buf, R->count,
                                                  R->displ, rt, c, &req[r]);
            break;
        default:
            started[r] = nbcx_ineighbor_alltoallw(S->buf, S->count,
                                                  S->adispl, S->types, R->buf,
                                                  R->count, R->adispl,
                                                  R->types, c, &req[r]);
            break;
        }
    }
    if (finish(w, started, req))
        xcase_check(x);
    xcase_free(x);
    free(x);
}

/* The topologies of a world of p ranks: Cartesian grids in 1, 2 and 3
 * dimensions (periodic, not, mixed; dimensions of 1 and 2 included) and
 * two irregular graphs. */
static int topologies(int p, struct topo *t)
{
    int n = 0;
    int one[1] = { p }, per1[1] = { 1 }, nper1[1] = { 0 };
    topo_cart(&t[n++], p, 1, one, per1);
    topo_cart(&t[n++], p, 1, one, nper1);
    int a = 1;
    for (int d = 1; d * d <= p; d++)
        if (p % d == 0)
            a = d; /* the most square 2-D grid */
    int two[2] = { a, p / a }, per2[2] = { 1, 1 }, mix2[2] = { 0, 1 };
    topo_cart(&t[n++], p, 2, two, per2);
    topo_cart(&t[n++], p, 2, two, mix2);
    int flat[2] = { p, 1 };
    topo_cart(&t[n++], p, 2, flat, per2);
    if (p % 2 == 0) {
        int three[3] = { 2, p / 2, 1 }, per3[3] = { 1, 0, 1 };
        topo_cart(&t[n++], p, 3, three, per3);
    }
    topo_graph(&t[n++], p, 11u + (uint32_t)p);
    topo_graph(&t[n++], p, 977u * (uint32_t)p);
    return n;
}

static void run_ncoll(enum ncoll coll, enum loopback_mode mode)
{
    static const int maxws[] = { 0, 3, 40 };
    static struct topo topos[8];
    long f0 = th_failures, k0 = th_cases;
    double t0 = th_now();
    CHECK_OK(nbcx_algorithm_set(ncoll_names[coll], "linear"));
    for (size_t si = 0; si < TH_COUNT(sizes); si++) {
        struct world w = { .p = sizes[si], .mode = mode, .seed = 3 };
        int nt = topologies(w.p, topos);
        for (int k = 0; k < nt; k++)
            for (size_t mi = 0; mi < TH_COUNT(maxws); mi++)
                for (int m = 0; m < NTMODES; m++)
                    if ((m == T_W) == (coll == N_ALLTOALLW))
                        run_ncase(&w, &topos[k], coll, maxws[mi],
                                  (enum tmode)m);
        world_drop(&w);
    }
    th_context = NULL;
    CHECK_OK(nbcx_algorithm_set(ncoll_names[coll], "auto"));
    printf("  %-20s %6ld cases %7.2f s%s\n", ncoll_names[coll],
           th_cases - k0, th_now() - t0, th_failures > f0 ? "  FAILED" : "");
}

/* ------------------------------------------------------------------ */
/* Reductions: reduce_scatter(_block), scan, exscan                    */
/* ------------------------------------------------------------------ */

static void mat_op(const void *in, void *inout, int n, nbcx_datatype t,
                   void *c)
{
    (void)t;
    (void)c;
    mat_mul_into(in, inout, n);
}

enum { MODP = 1000003 };

static void summod_op(const void *in, void *inout, int n, nbcx_datatype t,
                      void *c)
{
    (void)t;
    (void)c;
    const int64_t *a = in;
    int64_t *b = inout;
    for (int i = 0; i < n; i++)
        b[i] = (a[i] + b[i]) % MODP;
}

/* A (type, op) case: element generator, reference inout = in op inout on
 * one element, and which bytes of an element are data (the rest is a gap
 * that must not be written). */
struct redop {
    const char *name;
    nbcx_datatype type;
    size_t ext;
    nbcx_op op;
    nbcx_user_fn *user_fn;
    int commutative;
    void (*gen)(void *e, uint32_t h);
    void (*ref)(const void *in, void *inout);
    size_t gap_lo, gap_hi;
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
GEN(gen_mat, uint32_t, (h % 251) | (h >> 8) % 251 << 8 |
                           (h >> 16) % 251 << 16 |
                           (uint32_t)((h >> 24) * 7 % 251) << 24)
GEN(gen_modp, int64_t, (int64_t)(h % MODP))

#define REF(NAME, T, EXPR)                                                    \
    static void NAME(const void *in_, void *inout_)                           \
    {                                                                         \
        T a, b;                                                               \
        memcpy(&a, in_, sizeof a);                                            \
        memcpy(&b, inout_, sizeof b);                                         \
        T r = (EXPR);                                                         \
        memcpy(inout_, &r, sizeof r);                                         \
    }
REF(ref_i32_sum, int32_t, (int32_t)((uint32_t)a + (uint32_t)b))
REF(ref_i32_max, int32_t, a > b ? a : b)
REF(ref_dbl_sum, double, a + b)
REF(ref_mat, uint32_t, mat_mul(a, b))
REF(ref_modp, int64_t, (a + b) % MODP)

static void gen_gap(void *e, uint32_t h)
{
    int32_t d[2] = { (int32_t)(h % 2001) - 1000,
                     (int32_t)((h >> 11) % 2001) - 1000 };
    memcpy(e, &d[0], 4);
    memcpy((char *)e + 8, &d[1], 4);
}

static void ref_gap_sum(const void *in, void *inout)
{
    for (int k = 0; k < 2; k++)
        ref_i32_sum((const char *)in + 8 * k, (char *)inout + 8 * k);
}

static struct redop redops[] = {
    { "int32/SUM", NBCX_INT32, 4, NBCX_SUM, NULL, 1, gen_i32_small,
      ref_i32_sum, 0, 0 },
    { "int32/MAX", NBCX_INT32, 4, NBCX_MAX, NULL, 1, gen_i32_bits,
      ref_i32_max, 0, 0 },
    { "double/SUM", NBCX_DOUBLE, 8, NBCX_SUM, NULL, 1, gen_dbl_small,
      ref_dbl_sum, 0, 0 },
    { "uint32/user matrix product (non-commutative)", NBCX_UINT32, 4,
      NBCX_OP_NULL, mat_op, 0, gen_mat, ref_mat, 0, 0 },
    { "int64/user sum mod p (commutative)", NBCX_INT64, 8, NBCX_OP_NULL,
      summod_op, 1, gen_modp, ref_modp, 0, 0 },
    { "gap_mid (derived, non-contiguous)/SUM", GAP_MID, 12, NBCX_SUM, NULL,
      1, gen_gap, ref_gap_sum, 4, 8 },
};
#define NREDOPS TH_COUNT(redops)

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

/* count elements of rank r's contribution; gaps filled with 0xa5. */
static unsigned char *contribution(const struct redop *o, int salt, int r,
                                   int count)
{
    unsigned char *b = xmalloc((size_t)count * o->ext);
    memset(b, 0xa5, (size_t)count * o->ext);
    for (int i = 0; i < count; i++)
        o->gen(b + (size_t)i * o->ext,
               mix((uint32_t)salt, (uint32_t)r, (uint32_t)i));
    return b;
}

/* prefix[r] = x(0) op ... op x(r), evaluated in rank order. */
static unsigned char **prefixes(const struct redop *o, int salt, int p,
                                int count)
{
    unsigned char **pre = xmalloc(sizeof *pre * (size_t)p);
    size_t bytes = (size_t)count * o->ext;
    for (int r = 0; r < p; r++) {
        pre[r] = contribution(o, salt, r, count);
        if (r == 0)
            continue;
        unsigned char *acc = xmalloc(bytes ? bytes : 1);
        memcpy(acc, pre[r - 1], bytes);
        for (int i = 0; i < count; i++) { /* acc = acc op x(r) */
            o->ref(acc + (size_t)i * o->ext, pre[r] + (size_t)i * o->ext);
        }
        free(acc);
    }
    return pre;
}

static void free_prefixes(unsigned char **pre, int p)
{
    for (int r = 0; r < p; r++)
        free(pre[r]);
    free(pre);
}

/* Compares count elements (data bytes only) and checks the gaps kept the
 * bytes of `before`. */
static void same_elems(const struct redop *o, const char *what, int rank,
                       const unsigned char *got, const unsigned char *want,
                       const unsigned char *before, int count)
{
    int bad = 0, first = -1, gaps = 0;
    for (int i = 0; i < count; i++) {
        size_t e = (size_t)i * o->ext;
        bool differ = false;
        for (size_t k = 0; k < o->ext; k++) {
            bool gap = k >= o->gap_lo && k < o->gap_hi;
            if (gap)
                gaps += got[e + k] != before[e + k];
            else
                differ = differ || got[e + k] != want[e + k];
        }
        if (differ && bad++ == 0)
            first = i;
    }
    CHECK(bad == 0, "%s of rank %d: %d of %d elements differ, first %d",
          what, rank, bad, count, first);
    CHECK(gaps == 0, "%s of rank %d: %d gap bytes written", what, rank, gaps);
}

enum rcoll { R_REDUCE_SCATTER, R_REDUCE_SCATTER_BLOCK, R_SCAN, R_EXSCAN,
             NRCOLL };
static const char *const rcoll_names[NRCOLL] = {
    "reduce_scatter", "reduce_scatter_block", "scan", "exscan" };

static void run_rcase(struct world *w, enum rcoll coll, int maxc,
                      const struct redop *o, bool in_place)
{
    describe("%s p=%d mode=%s maxcount=%d op=%s in_place=%d",
             rcoll_names[coll], w->p, w->mode ? "random" : "ordered", maxc,
             o->name, in_place);
    if (!world_get(w))
        return;
    const int p = w->p, salt = ++case_salt;
    const bool scan = coll == R_SCAN || coll == R_EXSCAN;
    int counts[MAXP], off[MAXP + 1];
    off[0] = 0;
    for (int i = 0; i < p; i++) {
        uint32_t h = mix((uint32_t)salt, (uint32_t)i, 5);
        counts[i] = coll == R_REDUCE_SCATTER
                        ? (maxc == 0 || h % 4 == 0 ? 0
                                                   : 1 + (int)(h % (unsigned)maxc))
                        : maxc;
        off[i + 1] = off[i] + counts[i];
    }
    const int total = scan ? maxc : off[p];
    unsigned char **pre = prefixes(o, salt, p, total);
    unsigned char *sbuf[MAXP], *sorig[MAXP], *rbuf[MAXP], *rinit[MAXP];
    nbcx_request req[MAXP];
    int started[MAXP] = { 0 };
    for (int r = 0; r < p; r++) {
        size_t rbytes = (size_t)(scan || in_place ? total : counts[r]) *
                        o->ext;
        sbuf[r] = contribution(o, salt, r, total);
        sorig[r] = contribution(o, salt, r, total);
        rbuf[r] = xmalloc(rbytes ? rbytes : 1);
        memset(rbuf[r], 0x5a, rbytes);
        if (in_place)
            memcpy(rbuf[r], sbuf[r], (size_t)total * o->ext);
        rinit[r] = xmalloc(rbytes ? rbytes : 1);
        memcpy(rinit[r], rbuf[r], rbytes);
    }
    for (int r = 0; r < p; r++) {
        const void *sb = in_place ? NBCX_IN_PLACE : sbuf[r];
        nbcx_comm c = w->c[r];
        switch (coll) {
        case R_REDUCE_SCATTER:
            started[r] = nbcx_ireduce_scatter(sb, rbuf[r], counts, o->type,
                                              o->op, c, &req[r]);
            break;
        case R_REDUCE_SCATTER_BLOCK:
            started[r] = nbcx_ireduce_scatter_block(sb, rbuf[r], maxc,
                                                    o->type, o->op, c,
                                                    &req[r]);
            break;
        case R_SCAN:
            started[r] = nbcx_iscan(sb, rbuf[r], total, o->type, o->op, c,
                                    &req[r]);
            break;
        default:
            started[r] = nbcx_iexscan(sb, rbuf[r], total, o->type, o->op, c,
                                      &req[r]);
            break;
        }
    }
    if (finish(w, started, req)) {
        for (int r = 0; r < p; r++) {
            if (!in_place)
                CHECK(memcmp(sbuf[r], sorig[r], (size_t)total * o->ext) == 0,
                      "rank %d: sendbuf modified", r);
            if (coll == R_SCAN)
                same_elems(o, "recvbuf", r, rbuf[r], pre[r], rinit[r], total);
            else if (coll == R_EXSCAN && r > 0)
                same_elems(o, "recvbuf", r, rbuf[r], pre[r - 1], rinit[r],
                           total);
            else if (coll == R_EXSCAN) /* rank 0: untouched */
                CHECK(memcmp(rbuf[r], rinit[r], (size_t)total * o->ext) == 0,
                      "exscan wrote rank 0's recvbuf");
            else
                same_elems(o, "recvbuf", r, rbuf[r],
                           pre[p - 1] + (size_t)off[r] * o->ext, rinit[r],
                           counts[r]);
        }
    }
    for (int r = 0; r < p; r++) {
        free(sbuf[r]);
        free(sorig[r]);
        free(rbuf[r]);
        free(rinit[r]);
    }
    free_prefixes(pre, p);
}

static void run_rcoll(enum rcoll coll, enum loopback_mode mode)
{
    const char *names = NULL;
    char list[256];
    REQUIRE_OK(nbcx_algorithm_names(rcoll_names[coll], &names));
    snprintf(list, sizeof list, "%s auto", names);
    static const int maxcs[] = { 0, 1, 7, 60 };
    create_user_ops();
    nbcx_segsize_set(SEGSIZE);
    for (char *save = NULL, *alg = strtok_r(list, " ", &save); alg;
         alg = strtok_r(NULL, " ", &save)) {
        th_context = NULL;
        CHECK_OK(nbcx_algorithm_set(rcoll_names[coll], alg));
        long f0 = th_failures, k0 = th_cases;
        double t0 = th_now();
        for (size_t si = 0; si < TH_COUNT(sizes); si++) {
            struct world w = { .p = sizes[si], .mode = mode, .seed = 5 };
            for (size_t ci = 0; ci < TH_COUNT(maxcs); ci++)
                for (int k = 0; k < NREDOPS; k++)
                    for (int ip = 0; ip < 2; ip++)
                        run_rcase(&w, coll, maxcs[ci], &redops[k], ip);
            world_drop(&w);
        }
        th_context = NULL;
        printf("  %-20s %-18s %6ld cases %7.2f s%s\n", rcoll_names[coll],
               alg, th_cases - k0, th_now() - t0,
               th_failures > f0 ? "  FAILED" : "");
    }
    CHECK_OK(nbcx_algorithm_set(rcoll_names[coll], "auto"));
    free_user_ops();
}

/* Long vectors: the pipelined scan chain with more fragments than tags
 * would allow (it then lengthens them), every scan algorithm. */
static void test_long_scan(void)
{
    create_user_ops();
    nbcx_segsize_set(4); /* one int32 per fragment: 5000 fragments */
    for (int coll = R_SCAN; coll <= R_EXSCAN; coll++) {
        static const char *const algs[] = { "linear", "recursive_doubling" };
        for (int a = 0; a < 2; a++) {
            CHECK_OK(nbcx_algorithm_set(rcoll_names[coll], algs[a]));
            for (int p = 2; p <= 5; p++) {
                struct world w = { .p = p, .mode = LOOPBACK_RANDOM,
                                   .seed = 9 };
                run_rcase(&w, (enum rcoll)coll, 5000, &redops[0], p % 2);
                run_rcase(&w, (enum rcoll)coll, 5000, &redops[3], false);
                world_drop(&w);
            }
        }
        CHECK_OK(nbcx_algorithm_set(rcoll_names[coll], "auto"));
    }
    nbcx_segsize_set(SEGSIZE);
    free_user_ops();
}

/* ------------------------------------------------------------------ */
/* Bad arguments and topologies                                        */
/* ------------------------------------------------------------------ */

#define REJECT(code, call)                                                    \
    do {                                                                      \
        req = (nbcx_request)(uintptr_t)0x1;                                   \
        CHECK_RC(call, code);                                                 \
        CHECK(req == NBCX_REQUEST_NULL, "*req not reset by a rejected call"); \
    } while (0)

static void test_argument_errors(void)
{
    enum { P = 3 };
    nbcx_comm c[P];
    REQUIRE_OK(loopback_world_create(P, c));
    int32_t a[16] = { 0 }, b[16] = { 0 };
    const int cnt[P] = { 1, 2, 1 }, dsp[P] = { 0, 1, 3 };
    const int neg[P] = { 1, -1, 1 };
    const nbcx_datatype ty[P] = { NBCX_INT32, NBCX_INT32, NBCX_INT32 };
    const nbcx_datatype badty[P] = { NBCX_INT32, (nbcx_datatype)(uintptr_t)99,
                                     NBCX_INT32 };
    const ptrdiff_t adsp[P] = { 0, 4, 12 };
    nbcx_datatype bad = (nbcx_datatype)(uintptr_t)99;
    nbcx_request req;
    void *IP = NBCX_IN_PLACE;
    nbcx_comm c0 = c[0];

    /* gatherv / scatterv (rank 0 is the root unless said otherwise) */
    REJECT(NBCX_ERR_ROOT, nbcx_igatherv(a, 1, NBCX_INT32, b, cnt, dsp,
                                        NBCX_INT32, P, c0, &req));
    REJECT(NBCX_ERR_ARG, nbcx_igatherv(a, 1, NBCX_INT32, b, NULL, dsp,
                                       NBCX_INT32, 0, c0, &req));
    REJECT(NBCX_ERR_ARG, nbcx_igatherv(a, 1, NBCX_INT32, b, cnt, NULL,
                                       NBCX_INT32, 0, c0, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_igatherv(a, 1, NBCX_INT32, b, neg, dsp,
                                         NBCX_INT32, 0, c0, &req));
    REJECT(NBCX_ERR_TYPE, nbcx_igatherv(a, 1, NBCX_INT32, b, cnt, dsp, bad,
                                        0, c0, &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_igatherv(a, 1, NBCX_INT32, NULL, cnt, dsp,
                                          NBCX_INT32, 0, c0, &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_igatherv(a, 1, NBCX_INT32, IP, cnt, dsp,
                                            NBCX_INT32, 0, c0, &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_igatherv(IP, 1, NBCX_INT32, b, cnt, dsp,
                                            NBCX_INT32, 1, c0, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_igatherv(a, -1, NBCX_INT32, NULL, NULL, NULL,
                                         NBCX_DATATYPE_NULL, 1, c0, &req));
    REJECT(NBCX_ERR_ROOT, nbcx_iscatterv(a, cnt, dsp, NBCX_INT32, b, 1,
                                         NBCX_INT32, -1, c0, &req));
    REJECT(NBCX_ERR_ARG, nbcx_iscatterv(a, NULL, dsp, NBCX_INT32, b, 1,
                                        NBCX_INT32, 0, c0, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_iscatterv(a, neg, dsp, NBCX_INT32, b, 1,
                                          NBCX_INT32, 0, c0, &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_iscatterv(a, cnt, dsp, NBCX_INT32, IP, 1,
                                             NBCX_INT32, 2, c0, &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_iscatterv(NULL, cnt, dsp, NBCX_INT32, b, 1,
                                           NBCX_INT32, 0, c0, &req));
    /* allgatherv */
    REJECT(NBCX_ERR_ARG, nbcx_iallgatherv(a, 1, NBCX_INT32, b, cnt, NULL,
                                          NBCX_INT32, c0, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_iallgatherv(a, 1, NBCX_INT32, b, neg, dsp,
                                            NBCX_INT32, c0, &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_iallgatherv(a, 1, NBCX_INT32, IP, cnt,
                                               dsp, NBCX_INT32, c0, &req));
    REJECT(NBCX_ERR_TYPE, nbcx_iallgatherv(a, 1, bad, b, cnt, dsp,
                                           NBCX_INT32, c0, &req));
    /* alltoallv, alltoallw */
    REJECT(NBCX_ERR_ARG, nbcx_ialltoallv(a, cnt, NULL, NBCX_INT32, b, cnt,
                                         dsp, NBCX_INT32, c0, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_ialltoallv(a, neg, dsp, NBCX_INT32, b, cnt,
                                           dsp, NBCX_INT32, c0, &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_ialltoallv(a, cnt, dsp, NBCX_INT32, IP,
                                              cnt, dsp, NBCX_INT32, c0,
                                              &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_ialltoallv(a, cnt, dsp, NBCX_INT32, NULL,
                                            cnt, dsp, NBCX_INT32, c0, &req));
    REJECT(NBCX_ERR_ARG, nbcx_ialltoallw(a, cnt, dsp, NULL, b, cnt, dsp, ty,
                                         c0, &req));
    REJECT(NBCX_ERR_TYPE, nbcx_ialltoallw(a, cnt, dsp, ty, b, cnt, dsp,
                                          badty, c0, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_ialltoallw(a, cnt, dsp, ty, b, neg, dsp, ty,
                                           c0, &req));
    /* the rank's block to itself: sizes that differ are caught at build
     * time (nothing posted), not copied past the end */
    const int cnt2[P] = { 2, 2, 1 };
    REJECT(NBCX_ERR_TRUNCATE, nbcx_ialltoallv(a, cnt, dsp, NBCX_INT32, b,
                                              cnt2, dsp, NBCX_INT32, c0,
                                              &req));
    REJECT(NBCX_ERR_TRUNCATE, nbcx_igatherv(a, 2, NBCX_INT32, b, cnt, dsp,
                                            NBCX_INT32, 0, c0, &req));
    /* reduce_scatter(_block), scan, exscan */
    REJECT(NBCX_ERR_ARG, nbcx_ireduce_scatter(a, b, NULL, NBCX_INT32,
                                              NBCX_SUM, c0, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_ireduce_scatter(a, b, neg, NBCX_INT32,
                                                NBCX_SUM, c0, &req));
    REJECT(NBCX_ERR_OP, nbcx_ireduce_scatter(a, b, cnt, NBCX_INT32,
                                             NBCX_MINLOC, c0, &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_ireduce_scatter(a, IP, cnt, NBCX_INT32,
                                                   NBCX_SUM, c0, &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_ireduce_scatter(NULL, b, cnt, NBCX_INT32,
                                                 NBCX_SUM, c0, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_ireduce_scatter_block(a, b, -1, NBCX_INT32,
                                                      NBCX_SUM, c0, &req));
    REJECT(NBCX_ERR_COUNT,
           nbcx_ireduce_scatter_block(a, b, 1 << 30, NBCX_INT32, NBCX_SUM,
                                      c0, &req)); /* P * count > INT_MAX */
    REJECT(NBCX_ERR_TYPE, nbcx_ireduce_scatter_block(a, b, 1, bad, NBCX_SUM,
                                                     c0, &req));
    REJECT(NBCX_ERR_OP, nbcx_iscan(a, b, 1, NBCX_INT32, NBCX_OP_NULL, c0,
                                   &req));
    REJECT(NBCX_ERR_COUNT, nbcx_iscan(a, b, -3, NBCX_INT32, NBCX_SUM, c0,
                                      &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_iscan(a, IP, 1, NBCX_INT32, NBCX_SUM, c0,
                                         &req));
    REJECT(NBCX_ERR_OP, nbcx_iexscan(a, b, 1, NBCX_DOUBLE, NBCX_BXOR, c0,
                                     &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_iexscan(a, NULL, 1, NBCX_INT32, NBCX_SUM,
                                         c0, &req));
    /* neighbourhood: no topology yet */
    REJECT(NBCX_ERR_TOPOLOGY, nbcx_ineighbor_allgather(a, 1, NBCX_INT32, b,
                                                       1, NBCX_INT32, c0,
                                                       &req));
    REJECT(NBCX_ERR_TOPOLOGY, nbcx_ineighbor_alltoallw(a, cnt, adsp, ty, b,
                                                       cnt, adsp, ty, c0,
                                                       &req));
    int ring_src[2] = { 2, 1 }, ring_dst[2] = { 2, 1 };
    int dims[2] = { 3, 1 }, periods[2] = { 1, 0 };
    CHECK_OK(nbcx_comm_set_neighbors(c0, 2, ring_src, 2, ring_dst));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_ineighbor_allgather(IP, 1, NBCX_INT32, b,
                                                       1, NBCX_INT32, c0,
                                                       &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_ineighbor_alltoall(a, 1, NBCX_INT32, IP,
                                                      1, NBCX_INT32, c0,
                                                      &req));
    REJECT(NBCX_ERR_COUNT, nbcx_ineighbor_alltoall(a, -1, NBCX_INT32, b, 1,
                                                   NBCX_INT32, c0, &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_ineighbor_alltoall(a, 1, NBCX_INT32, NULL,
                                                    1, NBCX_INT32, c0,
                                                    &req));
    REJECT(NBCX_ERR_ARG, nbcx_ineighbor_allgatherv(a, 1, NBCX_INT32, b, cnt,
                                                   NULL, NBCX_INT32, c0,
                                                   &req));
    REJECT(NBCX_ERR_COUNT, nbcx_ineighbor_alltoallv(a, neg, dsp, NBCX_INT32,
                                                    b, cnt, dsp, NBCX_INT32,
                                                    c0, &req));
    REJECT(NBCX_ERR_TYPE, nbcx_ineighbor_alltoallw(a, cnt, adsp, badty, b,
                                                   cnt, adsp, ty, c0, &req));
    REJECT(NBCX_ERR_ARG, nbcx_ineighbor_alltoallw(a, cnt, NULL, ty, b, cnt,
                                                  adsp, ty, c0, &req));
    /* topologies */
    int bad_rank[1] = { P }, self[1] = { 0 }, one[1] = { 1 };
    CHECK_RC(nbcx_comm_set_neighbors(c0, 1, bad_rank, 0, NULL),
             NBCX_ERR_RANK);
    CHECK_RC(nbcx_comm_set_neighbors(c0, -1, NULL, 0, NULL), NBCX_ERR_COUNT);
    CHECK_RC(nbcx_comm_set_neighbors(c0, 1, NULL, 0, NULL), NBCX_ERR_ARG);
    /* an edge to itself must also come back from itself */
    CHECK_RC(nbcx_comm_set_neighbors(c0, 1, one, 1, self), NBCX_ERR_TOPOLOGY);
    CHECK_RC(nbcx_comm_set_neighbors(NBCX_COMM_NULL, 0, NULL, 0, NULL),
             NBCX_ERR_COMM);
    CHECK_RC(nbcx_comm_set_cart(c0, 2, dims, NULL), NBCX_SUCCESS);
    dims[0] = 2;
    CHECK_RC(nbcx_comm_set_cart(c0, 2, dims, periods), NBCX_ERR_TOPOLOGY);
    dims[0] = 0;
    CHECK_RC(nbcx_comm_set_cart(c0, 2, dims, periods), NBCX_ERR_TOPOLOGY);
    CHECK_RC(nbcx_comm_set_cart(c0, 2, NULL, periods), NBCX_ERR_ARG);
    CHECK_RC(nbcx_comm_set_cart(c0, -1, dims, periods), NBCX_ERR_ARG);
    int in, out;
    CHECK_RC(nbcx_comm_neighbors_count(c0, NULL, &out), NBCX_ERR_ARG);
    CHECK_OK(nbcx_comm_neighbors_count(c0, &in, &out));
    CHECK(in == 4 && out == 4, "3x1 grid: %d %d neighbours", in, out);
    CHECK_RC(nbcx_comm_neighbors_count(c[1], &in, &out), NBCX_SUCCESS);
    CHECK(in == 0 && out == 0, "no topology: %d %d", in, out);
    CHECK_RC(nbcx_comm_neighbors(c[1], 0, NULL, 0, NULL), NBCX_ERR_TOPOLOGY);
    th_cases++;

    struct loopback_stats st;
    CHECK_OK(loopback_stats(c0, &st));
    CHECK_INT(st.posted, 0);

    /* The sequence numbers are intact: a real collective matches up. */
    nbcx_request r[P];
    int32_t v[P] = { 0 }, sum[P] = { 0 };
    for (int k = 0; k < P; k++) {
        v[k] = k + 1;
        CHECK_OK(nbcx_iscan(&v[k], &sum[k], 1, NBCX_INT32, NBCX_SUM, c[k],
                            &r[k]));
    }
    CHECK_OK(loopback_waitall(c0, P, r));
    CHECK(sum[0] == 1 && sum[1] == 3 && sum[2] == 6, "scan: %d %d %d",
          (int)sum[0], (int)sum[1], (int)sum[2]);
    loopback_world_destroy(P, c);
}

/* Arguments MPI calls insignificant may be anything: the receive side of
 * gatherv and the send side of scatterv off the root (NULL arrays, bad
 * types and counts), the send side of in-place alltoallv/w. */
static void test_insignificant_args(void)
{
    enum { P = 4, ROOT = 1 };
    nbcx_comm c[P];
    REQUIRE_OK(loopback_world_create(P, c));
    int32_t in[P][8], out[P][8];
    int cnt[P] = { 1, 2, 0, 3 }, dsp[P] = { 0, 1, 3, 3 };
    nbcx_request req[P];
    for (int r = 0; r < P; r++)
        for (int i = 0; i < 8; i++) {
            in[r][i] = 100 * r + i;
            out[r][i] = -1;
        }
    for (int r = 0; r < P; r++)
        CHECK_OK(r == ROOT ? nbcx_igatherv(in[r], cnt[r], NBCX_INT32, out[r],
                                           cnt, dsp, NBCX_INT32, ROOT, c[r],
                                           &req[r])
                           : nbcx_igatherv(in[r], cnt[r], NBCX_INT32, NULL,
                                           NULL, NULL, NBCX_DATATYPE_NULL,
                                           ROOT, c[r], &req[r]));
    CHECK_OK(loopback_waitall(c[0], P, req));
    for (int r = 0; r < P; r++)
        for (int i = 0; i < cnt[r]; i++)
            CHECK(out[ROOT][dsp[r] + i] == 100 * r + i, "gatherv %d %d", r,
                  i);
    for (int r = 0; r < P; r++)
        CHECK_OK(r == ROOT ? nbcx_iscatterv(in[r], cnt, dsp, NBCX_INT32,
                                            out[r], cnt[r], NBCX_INT32, ROOT,
                                            c[r], &req[r])
                           : nbcx_iscatterv(NULL, NULL, NULL,
                                            NBCX_DATATYPE_NULL, out[r],
                                            cnt[r], NBCX_INT32, ROOT, c[r],
                                            &req[r]));
    CHECK_OK(loopback_waitall(c[0], P, req));
    for (int r = 0; r < P; r++)
        for (int i = 0; i < cnt[r]; i++)
            CHECK(out[r][i] == 100 * ROOT + dsp[r] + i, "scatterv %d %d", r,
                  i);
    /* in-place alltoallw: the send side is NULL everywhere */
    int one[P] = { 1, 1, 1, 1 }, bd[P] = { 0, 4, 8, 12 };
    nbcx_datatype ty[P] = { NBCX_INT32, NBCX_INT32, NBCX_INT32, NBCX_INT32 };
    for (int r = 0; r < P; r++)
        CHECK_OK(nbcx_ialltoallw(NBCX_IN_PLACE, NULL, NULL, NULL, in[r], one,
                                 bd, ty, c[r], &req[r]));
    CHECK_OK(loopback_waitall(c[0], P, req));
    for (int r = 0; r < P; r++)
        for (int i = 0; i < P; i++)
            CHECK(in[r][i] == 100 * i + r, "alltoallw in place: rank %d "
                  "block %d is %d", r, i, (int)in[r][i]);
    th_cases += 3;
    loopback_world_destroy(P, c);
}

/* Names and the algorithm API for the new collectives. */
static void test_algorithm_api(void)
{
    static const char *const colls[] = {
        "gatherv", "scatterv", "allgatherv", "alltoallv", "alltoallw",
        "reduce_scatter", "reduce_scatter_block", "scan", "exscan",
        "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall",
        "neighbor_alltoallv", "neighbor_alltoallw" };
    for (int k = 0; k < TH_COUNT(colls); k++) {
        const char *names = NULL;
        CHECK_OK(nbcx_algorithm_names(colls[k], &names));
        CHECK(names && *names, "%s has algorithm names", colls[k]);
        CHECK_OK(nbcx_algorithm_set(colls[k], "auto"));
        CHECK_RC(nbcx_algorithm_set(colls[k], "no_such"), NBCX_ERR_ALGORITHM);
    }
    th_cases++;
}

#define V_TESTS(NAME, ID)                                                     \
    static void test_##NAME(void) { run_vcoll(ID, LOOPBACK_ORDERED); }        \
    static void test_##NAME##_random(void) { run_vcoll(ID, LOOPBACK_RANDOM); }
V_TESTS(gatherv, V_GATHERV)
V_TESTS(scatterv, V_SCATTERV)
V_TESTS(allgatherv, V_ALLGATHERV)
V_TESTS(alltoallv, V_ALLTOALLV)
V_TESTS(alltoallw, V_ALLTOALLW)
#define R_TESTS(NAME, ID)                                                     \
    static void test_##NAME(void) { run_rcoll(ID, LOOPBACK_ORDERED); }        \
    static void test_##NAME##_random(void) { run_rcoll(ID, LOOPBACK_RANDOM); }
R_TESTS(reduce_scatter, R_REDUCE_SCATTER)
R_TESTS(reduce_scatter_block, R_REDUCE_SCATTER_BLOCK)
R_TESTS(scan, R_SCAN)
R_TESTS(exscan, R_EXSCAN)
#define N_TESTS(NAME, ID)                                                     \
    static void test_##NAME(void) { run_ncoll(ID, LOOPBACK_ORDERED); }        \
    static void test_##NAME##_random(void) { run_ncoll(ID, LOOPBACK_RANDOM); }
N_TESTS(neighbor_allgather, N_ALLGATHER)
N_TESTS(neighbor_allgatherv, N_ALLGATHERV)
N_TESTS(neighbor_alltoall, N_ALLTOALL)
N_TESTS(neighbor_alltoallv, N_ALLTOALLV)
N_TESTS(neighbor_alltoallw, N_ALLTOALLW)

#define T(NAME) { #NAME, test_##NAME }, { #NAME "_random", test_##NAME##_random }
static const struct th_test tests[] = {
    { "algorithm_api", test_algorithm_api },
    { "argument_errors", test_argument_errors },
    { "insignificant_args", test_insignificant_args },
    { "long_scan", test_long_scan },
    T(gatherv),
    T(scatterv),
    T(allgatherv),
    T(alltoallv),
    T(alltoallw),
    T(reduce_scatter),
    T(reduce_scatter_block),
    T(scan),
    T(exscan),
    T(neighbor_allgather),
    T(neighbor_allgatherv),
    T(neighbor_alltoall),
    T(neighbor_alltoallv),
    T(neighbor_alltoallw),
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests, TH_COUNT(tests));
}
