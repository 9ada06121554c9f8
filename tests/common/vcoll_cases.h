/*
 * vcoll_cases.h - the cases and the sequential reference of the vector,
 * w, reduce-scatter, scan and neighbourhood collectives, shared by the
 * loopback test (tests/unit/test_vcoll.c: one thread drives every rank)
 * and the in-process test (tests/inproc/test_inproc_vcoll.c: ranks are
 * threads). A case is built for all ranks at once (*_setup), started
 * rank by rank on each rank's communicator (*_start: the only part a
 * rank thread runs) and checked for all ranks once every rank has
 * completed (*_check). Setup and check use the harness (not thread-safe):
 * one thread at a time.
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
 * Words name ranks and blocks in 6 bits each: worlds of up to 64 ranks.
 */
#ifndef NBCX_TEST_VCOLL_CASES_H
#define NBCX_TEST_VCOLL_CASES_H

#include <stdint.h>

#include "gaptype.h"
#include "coll/coll.h"
#include "progress/request.h"
#include "harness.h"
#include "redops.h"
#include "wordcheck.h"

enum { MAXP = 64 };

static char ctx[300];

/* Sets the harness context to this case (and counts it). */
static void describe(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx, sizeof ctx, fmt, ap);
    va_end(ap);
    th_context = ctx;
    th_cases++;
}

/* ------------------------------------------------------------------ */
/* Typed blocks of self-describing words                               */
/* ------------------------------------------------------------------ */

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

/* The case: per rank a send and a receive side, and where each        */
/* receive block's data comes from                                     */
/* ------------------------------------------------------------------ */

static int case_salt;

struct xcase {
    int p, salt;
    int coll, root;                  /* enum vcoll, enum ncoll */
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

/* Case x (zeroed by the caller) of coll on p ranks: the buffers of every
 * rank and what they must hold afterwards. where: the world, for the
 * failure messages. */
static void vcase_setup(struct xcase *x, const char *where, int p,
                        enum vcoll coll, int maxw, int root, enum tmode m,
                        bool in_place)
{
    describe("%s %s maxwords=%d root=%d types=%s in_place=%d",
             vcoll_names[coll], where, maxw, root, tmode_names[m], in_place);
    x->p = p;
    x->salt = ++case_salt;
    x->m = m;
    x->coll = (int)coll;
    x->root = root;
    int words[MAXP] = { 0 };

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
}

/* Starts rank r's part of case x on its communicator c. */
static int vcase_start(struct xcase *x, int r, nbcx_comm c,
                       nbcx_request *req)
{
    struct side *S = &x->S[r], *R = &x->R[r];
    bool hs = x->has_s[r], hr = x->has_r[r];
    const void *sb = sbuf_of(x, r);
    void *rb = rbuf_of(x, r);
    const int root = x->root;
    switch ((enum vcoll)x->coll) {
    case V_GATHERV:
        /* off the root the receive side is insignificant: NULLs */
        return nbcx_igatherv(sb, hs ? S->count[0] : -1,
                             hs ? S->types[0] : NBCX_DATATYPE_NULL, rb,
                             hr ? R->count : NULL, hr ? R->displ : NULL,
                             hr ? R->types[0] : NBCX_DATATYPE_NULL, root, c,
                             req);
    case V_SCATTERV:
        return nbcx_iscatterv(sb, hs ? S->count : NULL, hs ? S->displ : NULL,
                              hs ? S->types[0] : NBCX_DATATYPE_NULL, rb,
                              hr ? R->count[0] : -1,
                              hr ? R->types[0] : NBCX_DATATYPE_NULL, root, c,
                              req);
    case V_ALLGATHERV:
        return nbcx_iallgatherv(sb, hs ? S->count[0] : -1,
                                hs ? S->types[0] : NBCX_DATATYPE_NULL, rb,
                                R->count, R->displ, R->types[0], c, req);
    case V_ALLTOALLV:
        return nbcx_ialltoallv(sb, hs ? S->count : NULL, hs ? S->displ : NULL,
                               hs ? S->types[0] : NBCX_DATATYPE_NULL, rb,
                               R->count, R->displ, R->types[0], c, req);
    default:
        return nbcx_ialltoallw(sb, hs ? S->count : NULL, hs ? S->displ : NULL,
                               hs ? S->types : NULL, rb, R->count, R->displ,
                               R->types, c, req);
    }
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

/* Attaches topology t to rank r's communicator c (rank r's part). */
static int topo_set(const struct topo *t, int r, nbcx_comm c)
{
    const struct nbr *n = &t->n[r];
    return t->cart ? nbcx_comm_set_cart(c, t->ndims, t->dims, t->periods)
                   : nbcx_comm_set_neighbors(c, n->in, n->src, n->out,
                                             n->dst);
}

/* What nbcx says rank r's neighbours are, after topo_set returned err. */
struct nbr_seen {
    int err, cerr, lerr, in, out, src[64], dst[64];
};

static void topo_seen(int err, nbcx_comm c, struct nbr_seen *s)
{
    s->err = err;
    s->in = s->out = -1;
    s->cerr = nbcx_comm_neighbors_count(c, &s->in, &s->out);
    s->lerr = nbcx_comm_neighbors(c, 64, s->src, 64, s->dst);
}

/* Checks what rank r saw against t. */
static bool topo_check(const struct topo *t, int r, const struct nbr_seen *s)
{
    const struct nbr *n = &t->n[r];
    if (!CHECK(s->err == NBCX_SUCCESS, "%s rank %d: %s", t->name, r,
               nbcx_error_string(s->err)))
        return false;
    CHECK_OK(s->cerr);
    CHECK_OK(s->lerr);
    CHECK(s->in == n->in && s->out == n->out, "%s rank %d: degrees %d %d, "
          "expected %d %d", t->name, r, s->in, s->out, n->in, n->out);
    for (int i = 0; s->in == n->in && i < n->in; i++)
        CHECK(s->src[i] == n->src[i], "%s rank %d: source %d is %d, "
              "expected %d", t->name, r, i, s->src[i], n->src[i]);
    for (int j = 0; s->out == n->out && j < n->out; j++)
        CHECK(s->dst[j] == n->dst[j], "%s rank %d: destination %d is %d, "
              "expected %d", t->name, r, j, s->dst[j], n->dst[j]);
    return true;
}

enum ncoll { N_ALLGATHER, N_ALLGATHERV, N_ALLTOALL, N_ALLTOALLV,
             N_ALLTOALLW, NNCOLL };
static const char *const ncoll_names[NNCOLL] = {
    "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall",
    "neighbor_alltoallv", "neighbor_alltoallw" };

/* Case x (zeroed by the caller) of coll on the p ranks of topology t. */
static void ncase_setup(struct xcase *x, const char *where, int p,
                        const struct topo *t, enum ncoll coll, int maxw,
                        enum tmode m)
{
    describe("%s %s %s maxwords=%d types=%s", ncoll_names[coll], where,
             t->name, maxw, tmode_names[m]);
    x->p = p;
    x->salt = ++case_salt;
    x->m = m;
    x->coll = (int)coll;
    const bool gather = coll == N_ALLGATHER || coll == N_ALLGATHERV;
    const bool regular = coll == N_ALLGATHER || coll == N_ALLTOALL;
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
}

/* Starts rank r's part of case x on its communicator c. */
static int ncase_start(struct xcase *x, int r, nbcx_comm c,
                       nbcx_request *req)
{
    struct side *S = &x->S[r], *R = &x->R[r];
    nbcx_datatype st = S->n ? S->types[0] : NBCX_INT32;
    nbcx_datatype rt = R->n ? R->types[0] : NBCX_INT32;
    int sc = S->n ? S->count[0] : 0, rc = R->n ? R->count[0] : 0;
    switch ((enum ncoll)x->coll) {
    case N_ALLGATHER:
        return nbcx_ineighbor_allgather(side_buf(S), sc, st, R->buf, rc, rt,
                                        c, req);
    case N_ALLGATHERV:
        return nbcx_ineighbor_allgatherv(side_buf(S), sc, st, R->buf,
                                         R->count, R->displ, rt, c, req);
    case N_ALLTOALL:
        return nbcx_ineighbor_alltoall(S->buf, sc, st, R->buf, rc, rt, c,
                                       req);
    case N_ALLTOALLV:
        return nbcx_ineighbor_alltoallv(S->buf, S->count, S->displ, st,
                                        R->buf, R->count, R->displ, rt, c,
                                        req);
    default:
        return nbcx_ineighbor_alltoallw(S->buf, S->count, S->adispl,
                                        S->types, R->buf, R->count,
                                        R->adispl, R->types, c, req);
    }
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

/* ------------------------------------------------------------------ */
/* Reductions: reduce_scatter(_block), scan, exscan                    */
/* ------------------------------------------------------------------ */

static struct redop redops[] = {
    REDOP_INT32_SUM, REDOP_INT32_MAX, REDOP_DOUBLE_SUM,
    REDOP_MATRIX,    REDOP_SUMMOD,    REDOP_GAP_SUM,
};
#define NREDOPS TH_COUNT(redops)

static void create_user_ops(void) { redops_create_user(redops, NREDOPS); }

static void free_user_ops(void) { redops_free_user(redops, NREDOPS); }

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

/* A reduction case: every rank's buffers and the reference. */
struct rcase {
    int p, salt, maxc, total;
    enum rcoll coll;
    const struct redop *o;
    bool in_place;
    int counts[MAXP], off[MAXP + 1];
    unsigned char **pre, *sbuf[MAXP], *sorig[MAXP], *rbuf[MAXP],
        *rinit[MAXP];
};

static void rcase_setup(struct rcase *x, const char *where, int p,
                        enum rcoll coll, int maxc, const struct redop *o,
                        bool in_place)
{
    describe("%s %s maxcount=%d op=%s in_place=%d", rcoll_names[coll],
             where, maxc, o->name, in_place);
    const int salt = ++case_salt;
    const bool scan = coll == R_SCAN || coll == R_EXSCAN;
    x->p = p;
    x->salt = salt;
    x->maxc = maxc;
    x->coll = coll;
    x->o = o;
    x->in_place = in_place;
    x->off[0] = 0;
    for (int i = 0; i < p; i++) {
        uint32_t h = mix((uint32_t)salt, (uint32_t)i, 5);
        x->counts[i] =
            coll == R_REDUCE_SCATTER
                ? (maxc == 0 || h % 4 == 0 ? 0
                                           : 1 + (int)(h % (unsigned)maxc))
                : maxc;
        x->off[i + 1] = x->off[i] + x->counts[i];
    }
    x->total = scan ? maxc : x->off[p];
    x->pre = prefixes(o, salt, p, x->total);
    for (int r = 0; r < p; r++) {
        size_t rbytes =
            (size_t)(scan || in_place ? x->total : x->counts[r]) * o->ext;
        x->sbuf[r] = contribution(o, salt, r, x->total);
        x->sorig[r] = contribution(o, salt, r, x->total);
        x->rbuf[r] = xmalloc(rbytes ? rbytes : 1);
        memset(x->rbuf[r], 0x5a, rbytes);
        if (in_place)
            memcpy(x->rbuf[r], x->sbuf[r], (size_t)x->total * o->ext);
        x->rinit[r] = xmalloc(rbytes ? rbytes : 1);
        memcpy(x->rinit[r], x->rbuf[r], rbytes);
    }
}

/* Starts rank r's part of case x on its communicator c. */
static int rcase_start(struct rcase *x, int r, nbcx_comm c,
                       nbcx_request *req)
{
    const void *sb = x->in_place ? NBCX_IN_PLACE : x->sbuf[r];
    const struct redop *o = x->o;
    switch (x->coll) {
    case R_REDUCE_SCATTER:
        return nbcx_ireduce_scatter(sb, x->rbuf[r], x->counts, o->type,
                                    o->op, c, req);
    case R_REDUCE_SCATTER_BLOCK:
        return nbcx_ireduce_scatter_block(sb, x->rbuf[r], x->maxc, o->type,
                                          o->op, c, req);
    case R_SCAN:
        return nbcx_iscan(sb, x->rbuf[r], x->total, o->type, o->op, c, req);
    default:
        return nbcx_iexscan(sb, x->rbuf[r], x->total, o->type, o->op, c,
                            req);
    }
}

/* After every rank completed: the results against the reference. */
static void rcase_check(struct rcase *x)
{
    const struct redop *o = x->o;
    const size_t bytes = (size_t)x->total * o->ext;
    for (int r = 0; r < x->p; r++) {
        if (!x->in_place)
            CHECK(memcmp(x->sbuf[r], x->sorig[r], bytes) == 0,
                  "rank %d: sendbuf modified", r);
        if (x->coll == R_SCAN)
            same_elems(o, "recvbuf", r, x->rbuf[r], x->pre[r], x->rinit[r],
                       x->total);
        else if (x->coll == R_EXSCAN && r > 0)
            same_elems(o, "recvbuf", r, x->rbuf[r], x->pre[r - 1],
                       x->rinit[r], x->total);
        else if (x->coll == R_EXSCAN) /* rank 0: untouched */
            CHECK(memcmp(x->rbuf[r], x->rinit[r], bytes) == 0,
                  "exscan wrote rank 0's recvbuf");
        else
            same_elems(o, "recvbuf", r, x->rbuf[r],
                       x->pre[x->p - 1] + (size_t)x->off[r] * o->ext,
                       x->rinit[r], x->counts[r]);
    }
}

static void rcase_free(struct rcase *x)
{
    for (int r = 0; r < x->p; r++) {
        free(x->sbuf[r]);
        free(x->sorig[r]);
        free(x->rbuf[r]);
        free(x->rinit[r]);
    }
    free_prefixes(x->pre, x->p);
}

#endif /* NBCX_TEST_VCOLL_CASES_H */
