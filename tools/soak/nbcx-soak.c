/*
 * nbcx-soak - a long run of mixed collectives on one communicator, every
 * result checked, with the throughput and the resident memory reported
 * at the start and at the end (issue 12: "RSS must not grow").
 *
 *   mpiexec -n 2 nbcx-soak --ops 10000000 [--seed S] [--max-inflight 64]
 *       [--max-count N] [--report-every K] [--pool P] [--reinit-every N]
 *       [--max-rss-growth KIB] [--inject-error OP]
 *
 * Every rank draws the same pseudo-random sequence from the shared seed
 * (the "shared" generator), so every rank starts the same collectives in
 * the same order: nonblocking ones (ibarrier, ibcast, ireduce,
 * iallreduce, igather(v), iscatter(v), iallgather(v), ialltoall(v),
 * ireduce_scatter(_block), iscan, iexscan) with random counts (mostly
 * small, some up to --max-count), datatypes, operations, roots and
 * per-rank counts, and restarts (nbcx_start, or nbcx_startall of 2 to 4
 * at once) of a pool of long-lived
 * persistent requests made with nbcx_<op>_init (--pool, 16; one is
 * freed and planned again once per --reinit-every operations on
 * average, 4,096). A persistent request is restarted in the same order
 * on every rank relative to the other collectives (the MPI standard asks
 * for it; nbcx would allow any order), so the soak does not exercise
 * starts in different orders on different ranks. The number allowed in flight changes every
 * 1,024 operations (1 to --max-inflight, also from the shared
 * generator). How operations are completed is decided by each rank on
 * its own (a per-rank generator): waitany, wait on a random one, test on
 * random ones, waitall; so completion orders differ between ranks.
 *
 * Inputs are deterministic functions of (operation index, rank,
 * element); on completion each rank builds the image its receive buffer
 * must hold (expected values, and a sentinel byte pattern wherever the
 * operation must not write: gaps between blocks, 64 guard bytes past
 * the end, the receive buffer of non-roots and of rank 0 in exscan)
 * with a sequential reference and compares byte for byte. A mismatch or
 * an error code prints the operation's index, kind, type, count and
 * makes the exit status 1. --inject-error OP flips one received byte of
 * the first operation at or after index OP on rank 0 that receives
 * anything, to show the check can fail.
 *
 * RSS (VmRSS of /proc/self/status) is read after a warm-up of the first
 * 1% of the operations (the "start" figure), every 10,000 operations
 * (the maximum), at every report and at the end (before the requests and
 * the communicator are freed); so is the heap in use (glibc's mallinfo2:
 * bytes allocated and not freed, which a leak moves and fragmentation
 * does not). Buffers of the soak itself are allocated and touched
 * before the first figure. Reports drain all
 * operations first (so the MPI calls that gather the figures never wait
 * behind a pending collective, whatever the progress mode). Rank 0
 * prints one line per rank at every report and a final JSON line.
 * Exit status: 0 if every result was right, 1 on a wrong result or an
 * error (or RSS growth over --max-rss-growth), 2 on bad arguments.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "nbcx_mpi.h"
#include "../common/tool_args.h"

/* ------------------------------------------------------------------ */
/* Random numbers                                                      */
/* ------------------------------------------------------------------ */

static uint64_t splitmix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

typedef struct { uint64_t s; } rng_t;

static uint64_t rnd(rng_t *g)
{
    g->s += 0x9E3779B97F4A7C15ull;
    uint64_t x = g->s;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Uniform in [0, n). */
static int rndn(rng_t *g, int n) { return (int)(rnd(g) % (uint64_t)n); }

static uint64_t g_seed;

/* The input value of element `key` contributed by rank `src` to
 * operation `op`: a small integer in [-100, 100], so that sums of
 * floating-point values are exact whatever the order. */
static long val(uint64_t op, int src, uint64_t key)
{
    uint64_t h = splitmix(g_seed ^ splitmix(op * 0x100000001B3ull ^
                                            ((uint64_t)src << 48) ^ key));
    return (long)(h % 201) - 100;
}

/* ------------------------------------------------------------------ */
/* Datatypes and reductions (the sequential reference)                 */
/* ------------------------------------------------------------------ */

enum { T_U8, T_I16, T_I32, T_I64, T_F32, T_F64, NTYPES };
static const char *const type_names[NTYPES] = {"uint8", "int16", "int32",
                                               "int64", "float", "double"};
static const size_t type_size[NTYPES] = {1, 2, 4, 8, 4, 8};
static nbcx_datatype type_handle(int t)
{
    static const nbcx_datatype h[NTYPES] = {NBCX_UINT8, NBCX_INT16,
                                            NBCX_INT32, NBCX_INT64,
                                            NBCX_FLOAT, NBCX_DOUBLE};
    return h[t];
}

enum { R_SUM, R_MAX, R_MIN, R_BAND, R_BOR, R_BXOR, NROPS };
static const char *const rop_names[NROPS] = {"sum", "max", "min",
                                             "band", "bor", "bxor"};
static nbcx_op rop_handle(int r)
{
    static const nbcx_op h[NROPS] = {NBCX_SUM,  NBCX_MAX, NBCX_MIN,
                                     NBCX_BAND, NBCX_BOR, NBCX_BXOR};
    return h[r];
}

static void put(int t, void *base, size_t idx, long v)
{
    switch (t) {
    case T_U8: ((uint8_t *)base)[idx] = (uint8_t)(v & 0xff); break;
    case T_I16: ((int16_t *)base)[idx] = (int16_t)v; break;
    case T_I32: ((int32_t *)base)[idx] = (int32_t)v; break;
    case T_I64: ((int64_t *)base)[idx] = (int64_t)v; break;
    case T_F32: ((float *)base)[idx] = (float)v; break;
    default: ((double *)base)[idx] = (double)v; break;
    }
}

#define RED_INT(T)                                                         \
    do {                                                                   \
        T a = *(T *)acc, b = *(const T *)in;                               \
        switch (r) {                                                       \
        case R_SUM: a = (T)(a + b); break;                                 \
        case R_MAX: a = a > b ? a : b; break;                              \
        case R_MIN: a = a < b ? a : b; break;                              \
        case R_BAND: a = (T)(a & b); break;                                \
        case R_BOR: a = (T)(a | b); break;                                 \
        default: a = (T)(a ^ b); break;                                    \
        }                                                                  \
        *(T *)acc = a;                                                     \
    } while (0)
#define RED_FLT(T)                                                         \
    do {                                                                   \
        T a = *(T *)acc, b = *(const T *)in;                               \
        switch (r) {                                                       \
        case R_SUM: a = a + b; break;                                      \
        case R_MAX: a = a > b ? a : b; break;                              \
        default: a = a < b ? a : b; break;                                 \
        }                                                                  \
        *(T *)acc = a;                                                     \
    } while (0)

/* One element: *acc = *in op *acc (all operations here commute). */
static void combine(int t, int r, void *acc, const void *in)
{
    switch (t) {
    case T_U8: RED_INT(uint8_t); break;
    case T_I16: RED_INT(int16_t); break;
    case T_I32: RED_INT(int32_t); break;
    case T_I64: RED_INT(int64_t); break;
    case T_F32: RED_FLT(float); break;
    default: RED_FLT(double); break;
    }
}

/* Element idx of out: the reduction over ranks lo..hi of val(op, q, key). */
static void reduce_ref(int t, int r, uint64_t op, int lo, int hi,
                       uint64_t key, void *out, size_t idx)
{
    unsigned char acc[8], in[8];
    put(t, acc, 0, val(op, lo, key));
    for (int q = lo + 1; q <= hi; q++) {
        put(t, in, 0, val(op, q, key));
        combine(t, r, acc, in);
    }
    memcpy((char *)out + idx * type_size[t], acc, type_size[t]);
}

/* ------------------------------------------------------------------ */
/* Operations                                                          */
/* ------------------------------------------------------------------ */

enum {
    K_BARRIER, K_BCAST, K_REDUCE, K_ALLREDUCE, K_GATHER, K_GATHERV,
    K_SCATTER, K_SCATTERV, K_ALLGATHER, K_ALLGATHERV, K_ALLTOALL,
    K_ALLTOALLV, K_RSCAT, K_RSCAT_BLOCK, K_SCAN, K_EXSCAN, NKINDS
};
static const char *const kind_names[NKINDS] = {
    "barrier",   "bcast",     "reduce",         "allreduce",
    "gather",    "gatherv",   "scatter",        "scatterv",
    "allgather", "allgatherv", "alltoall",      "alltoallv",
    "reduce_scatter", "reduce_scatter_block", "scan", "exscan"};
static int is_reduction(int k)
{
    return k == K_REDUCE || k == K_ALLREDUCE || k == K_RSCAT ||
           k == K_RSCAT_BLOCK || k == K_SCAN || k == K_EXSCAN;
}

#define GUARD 64         /* sentinel bytes checked past every receive */
#define SENTINEL 0xA5

/* One collective: what all ranks agree on (drawn from the shared
 * generator) and this rank's layout of it. */
typedef struct {
    int kind, t, rop, root, count, in_place;
    int *cnt;            /* [P] per-rank counts (v kinds, reduce_scatter) */
    int *dsp;            /* [P] this rank's displacements for cnt        */
    int *scnt, *sdsp, *rcnt, *rdsp; /* [P] alltoallv, this rank's side   */
    size_t slen, rlen;   /* elements in this rank's send/receive buffer  */
    size_t cap;          /* bytes each of sbuf and rbuf can hold         */
    unsigned char *sbuf, *rbuf;
    uint64_t opidx;      /* index of the run the buffers hold now        */
    int persistent;
    nbcx_request req;
    int active;
} op_t;

static int P, R; /* communicator size, this rank */
static nbcx_comm g_comm;
static int max_count = 1024;

/* Mostly small, some up to max_count. */
static int draw_count(rng_t *g)
{
    int u = rndn(g, 100);
    if (u < 55)
        return rndn(g, 9);
    if (u < 88)
        return rndn(g, (max_count < 256 ? max_count : 256) + 1);
    return rndn(g, max_count + 1);
}

/* Displacements with small gaps (checked to stay untouched). */
static size_t displs(const int *cnt, int *dsp)
{
    size_t end = 0;
    for (int q = 0; q < P; q++) {
        dsp[q] = (int)end;
        end += (size_t)cnt[q] + (size_t)(q % 3);
    }
    return end;
}

/* Draws an operation's parameters from the shared generator (identical
 * on every rank) and computes this rank's layout. pool_ok: persistent. */
static void draw_op(rng_t *g, op_t *o)
{
    static const int kind_weight[NKINDS] = {3, 8, 8, 14, 5, 5, 5, 5,
                                            6, 5, 6, 5, 5, 5, 5, 5};
    int tot = 0;
    for (int k = 0; k < NKINDS; k++)
        tot += kind_weight[k];
    int u = rndn(g, tot), k = 0;
    while (u >= kind_weight[k])
        u -= kind_weight[k++];
    o->kind = k;
    o->t = rndn(g, NTYPES);
    o->rop = R_SUM;
    if (is_reduction(k)) {
        int nops = (o->t == T_F32 || o->t == T_F64) ? 3 : NROPS;
        o->rop = rnd(g) % 2 ? R_SUM : rndn(g, nops);
    }
    o->root = rndn(g, P);
    o->count = draw_count(g);
    o->in_place = k == K_ALLREDUCE && rndn(g, 5) == 0;
    size_t c = (size_t)o->count;
    if (k == K_GATHERV || k == K_SCATTERV || k == K_ALLGATHERV ||
        k == K_RSCAT)
        for (int q = 0; q < P; q++)
            o->cnt[q] = draw_count(g);
    if (k == K_ALLTOALLV)
        for (int s = 0; s < P; s++)
            for (int d = 0; d < P; d++) {
                int n = draw_count(g);
                if (s == R)
                    o->scnt[d] = n;
                if (d == R)
                    o->rcnt[s] = n;
            }
    int root = R == o->root;
    o->slen = o->rlen = 0;
    switch (k) {
    case K_BARRIER: break;
    case K_BCAST: o->rlen = c; break;
    case K_REDUCE: o->slen = c; o->rlen = root ? c : 0; break;
    case K_ALLREDUCE: o->slen = o->in_place ? 0 : c; o->rlen = c; break;
    case K_GATHER: o->slen = c; o->rlen = root ? P * c : 0; break;
    case K_GATHERV:
        o->slen = (size_t)o->cnt[R];
        o->rlen = root ? displs(o->cnt, o->dsp) : 0;
        break;
    case K_SCATTER: o->slen = root ? P * c : 0; o->rlen = c; break;
    case K_SCATTERV:
        o->slen = root ? displs(o->cnt, o->dsp) : 0;
        o->rlen = (size_t)o->cnt[R];
        break;
    case K_ALLGATHER: o->slen = c; o->rlen = P * c; break;
    case K_ALLGATHERV:
        o->slen = (size_t)o->cnt[R];
        o->rlen = displs(o->cnt, o->dsp);
        break;
    case K_ALLTOALL: o->slen = o->rlen = P * c; break;
    case K_ALLTOALLV:
        o->slen = displs(o->scnt, o->sdsp);
        o->rlen = displs(o->rcnt, o->rdsp);
        break;
    case K_RSCAT: {
        size_t s = 0;
        for (int q = 0; q < P; q++)
            s += (size_t)o->cnt[q];
        o->slen = s;
        o->rlen = (size_t)o->cnt[R];
        break;
    }
    case K_RSCAT_BLOCK: o->slen = P * c; o->rlen = c; break;
    default: o->slen = o->rlen = c; break; /* scan, exscan */
    }
}

/* Fills the send buffer with the inputs of run `idx` and the receive
 * buffer (plus guard) with the sentinel. */
static void fill(op_t *o, uint64_t idx)
{
    int t = o->t;
    size_t es = type_size[t];
    if (o->slen * es > o->cap || o->rlen * es + GUARD > o->cap) {
        fprintf(stderr, "nbcx-soak: internal error: op %" PRIu64 " needs "
                        "more than its buffers\n", idx);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    o->opidx = idx;
    memset(o->rbuf, SENTINEL, o->rlen * es + GUARD);
    switch (o->kind) {
    case K_BARRIER: break;
    case K_BCAST:
        if (R == o->root)
            for (size_t e = 0; e < o->rlen; e++)
                put(t, o->rbuf, e, val(idx, R, e));
        break;
    case K_ALLREDUCE:
        if (o->in_place) {
            for (size_t e = 0; e < o->rlen; e++)
                put(t, o->rbuf, e, val(idx, R, e));
            break;
        }
        /* fall through */
    case K_REDUCE: case K_GATHER: case K_GATHERV: case K_ALLGATHER:
    case K_ALLGATHERV: case K_RSCAT: case K_RSCAT_BLOCK: case K_SCAN:
    case K_EXSCAN:
        for (size_t e = 0; e < o->slen; e++)
            put(t, o->sbuf, e, val(idx, R, e));
        break;
    case K_SCATTER:
        for (int q = 0; q < P && R == o->root; q++)
            for (int e = 0; e < o->count; e++)
                put(t, o->sbuf, (size_t)q * o->count + e, val(idx, q, e));
        break;
    case K_SCATTERV:
        for (int q = 0; q < P && R == o->root; q++)
            for (int e = 0; e < o->cnt[q]; e++)
                put(t, o->sbuf, (size_t)o->dsp[q] + e, val(idx, q, e));
        break;
    case K_ALLTOALL:
        for (int d = 0; d < P; d++)
            for (int e = 0; e < o->count; e++)
                put(t, o->sbuf, (size_t)d * o->count + e,
                    val(idx, R, ((uint64_t)d << 32) | (uint64_t)e));
        break;
    case K_ALLTOALLV:
        for (int d = 0; d < P; d++)
            for (int e = 0; e < o->scnt[d]; e++)
                put(t, o->sbuf, (size_t)o->sdsp[d] + e,
                    val(idx, R, ((uint64_t)d << 32) | (uint64_t)e));
        break;
    }
}

/* Builds in img the bytes rbuf must hold (rlen elements + GUARD). */
static void expect(const op_t *o, unsigned char *img)
{
    int t = o->t, r = o->rop;
    uint64_t idx = o->opidx;
    memset(img, SENTINEL, o->rlen * type_size[t] + GUARD);
    switch (o->kind) {
    case K_BARRIER: break;
    case K_BCAST:
        for (size_t e = 0; e < o->rlen; e++)
            put(t, img, e, val(idx, o->root, e));
        break;
    case K_REDUCE: case K_ALLREDUCE:
        for (size_t e = 0; e < o->rlen; e++)
            reduce_ref(t, r, idx, 0, P - 1, e, img, e);
        break;
    case K_SCAN:
        for (size_t e = 0; e < o->rlen; e++)
            reduce_ref(t, r, idx, 0, R, e, img, e);
        break;
    case K_EXSCAN:
        for (size_t e = 0; e < o->rlen && R > 0; e++)
            reduce_ref(t, r, idx, 0, R - 1, e, img, e);
        break;
    case K_RSCAT: case K_RSCAT_BLOCK: {
        size_t off = 0;
        for (int q = 0; q < R; q++)
            off += o->kind == K_RSCAT ? (size_t)o->cnt[q] : (size_t)o->count;
        for (size_t e = 0; e < o->rlen; e++)
            reduce_ref(t, r, idx, 0, P - 1, off + e, img, e);
        break;
    }
    case K_GATHER: case K_ALLGATHER:
        if (o->rlen)
            for (int q = 0; q < P; q++)
                for (int e = 0; e < o->count; e++)
                    put(t, img, (size_t)q * o->count + e, val(idx, q, e));
        break;
    case K_GATHERV: case K_ALLGATHERV:
        if (o->rlen)
            for (int q = 0; q < P; q++)
                for (int e = 0; e < o->cnt[q]; e++)
                    put(t, img, (size_t)o->dsp[q] + e, val(idx, q, e));
        break;
    case K_SCATTER: case K_SCATTERV:
        for (size_t e = 0; e < o->rlen; e++)
            put(t, img, e, val(idx, R, e));
        break;
    case K_ALLTOALL:
        for (int s = 0; s < P; s++)
            for (int e = 0; e < o->count; e++)
                put(t, img, (size_t)s * o->count + e,
                    val(idx, s, ((uint64_t)R << 32) | (uint64_t)e));
        break;
    case K_ALLTOALLV:
        for (int s = 0; s < P; s++)
            for (int e = 0; e < o->rcnt[s]; e++)
                put(t, img, (size_t)o->rdsp[s] + e,
                    val(idx, s, ((uint64_t)R << 32) | (uint64_t)e));
        break;
    }
}

/* Starts o: nonblocking (init = 0) or plans it (init = 1). */
static int start_op(op_t *o, int init)
{
    nbcx_datatype dt = type_handle(o->t);
    nbcx_op op = rop_handle(o->rop);
    nbcx_comm cm = g_comm;
    void *s = o->sbuf, *rb = o->rbuf;
    int c = o->count, rt = o->root;
    nbcx_request *q = &o->req;
    switch (o->kind) {
    case K_BARRIER:
        return init ? nbcx_barrier_init(cm, q) : nbcx_ibarrier(cm, q);
    case K_BCAST:
        return init ? nbcx_bcast_init(rb, c, dt, rt, cm, q)
                    : nbcx_ibcast(rb, c, dt, rt, cm, q);
    case K_REDUCE:
        return init ? nbcx_reduce_init(s, rb, c, dt, op, rt, cm, q)
                    : nbcx_ireduce(s, rb, c, dt, op, rt, cm, q);
    case K_ALLREDUCE:
        if (o->in_place)
            s = NBCX_IN_PLACE;
        return init ? nbcx_allreduce_init(s, rb, c, dt, op, cm, q)
                    : nbcx_iallreduce(s, rb, c, dt, op, cm, q);
    case K_GATHER:
        return init ? nbcx_gather_init(s, c, dt, rb, c, dt, rt, cm, q)
                    : nbcx_igather(s, c, dt, rb, c, dt, rt, cm, q);
    case K_GATHERV:
        return init ? nbcx_gatherv_init(s, o->cnt[R], dt, rb, o->cnt, o->dsp,
                                        dt, rt, cm, q)
                    : nbcx_igatherv(s, o->cnt[R], dt, rb, o->cnt, o->dsp, dt,
                                    rt, cm, q);
    case K_SCATTER:
        return init ? nbcx_scatter_init(s, c, dt, rb, c, dt, rt, cm, q)
                    : nbcx_iscatter(s, c, dt, rb, c, dt, rt, cm, q);
    case K_SCATTERV:
        return init ? nbcx_scatterv_init(s, o->cnt, o->dsp, dt, rb, o->cnt[R],
                                         dt, rt, cm, q)
                    : nbcx_iscatterv(s, o->cnt, o->dsp, dt, rb, o->cnt[R], dt,
                                     rt, cm, q);
    case K_ALLGATHER:
        return init ? nbcx_allgather_init(s, c, dt, rb, c, dt, cm, q)
                    : nbcx_iallgather(s, c, dt, rb, c, dt, cm, q);
    case K_ALLGATHERV:
        return init ? nbcx_allgatherv_init(s, o->cnt[R], dt, rb, o->cnt,
                                           o->dsp, dt, cm, q)
                    : nbcx_iallgatherv(s, o->cnt[R], dt, rb, o->cnt, o->dsp,
                                       dt, cm, q);
    case K_ALLTOALL:
        return init ? nbcx_alltoall_init(s, c, dt, rb, c, dt, cm, q)
                    : nbcx_ialltoall(s, c, dt, rb, c, dt, cm, q);
    case K_ALLTOALLV:
        return init ? nbcx_alltoallv_init(s, o->scnt, o->sdsp, dt, rb,
                                          o->rcnt, o->rdsp, dt, cm, q)
                    : nbcx_ialltoallv(s, o->scnt, o->sdsp, dt, rb, o->rcnt,
                                      o->rdsp, dt, cm, q);
    case K_RSCAT:
        return init ? nbcx_reduce_scatter_init(s, rb, o->cnt, dt, op, cm, q)
                    : nbcx_ireduce_scatter(s, rb, o->cnt, dt, op, cm, q);
    case K_RSCAT_BLOCK:
        return init ? nbcx_reduce_scatter_block_init(s, rb, c, dt, op, cm, q)
                    : nbcx_ireduce_scatter_block(s, rb, c, dt, op, cm, q);
    case K_SCAN:
        return init ? nbcx_scan_init(s, rb, c, dt, op, cm, q)
                    : nbcx_iscan(s, rb, c, dt, op, cm, q);
    default:
        return init ? nbcx_exscan_init(s, rb, c, dt, op, cm, q)
                    : nbcx_iexscan(s, rb, c, dt, op, cm, q);
    }
}

/* ------------------------------------------------------------------ */
/* State                                                               */
/* ------------------------------------------------------------------ */

static op_t *slots;      /* nonblocking operations, max_inflight of them */
static int nslots;
static op_t *pool;       /* persistent requests */
static int npool = 16;
static int reinit_every = 4096; /* a pool re-init per this many ops, on average */
static int inflight;
static unsigned char *img; /* expected image, the largest receive + GUARD */
static long errors;
static double bytes_checked; /* expected bytes compared (data, not guard) */
static long long inject_at = -1;
static int injected;
static rng_t local_rng;  /* this rank's own choices (completion order) */

static int alloc_op(op_t *o, size_t cap)
{
    o->cnt = calloc((size_t)P * 6, sizeof(int));
    if (!o->cnt)
        return -1;
    o->dsp = o->cnt + P;
    o->scnt = o->cnt + 2 * P;
    o->sdsp = o->cnt + 3 * P;
    o->rcnt = o->cnt + 4 * P;
    o->rdsp = o->cnt + 5 * P;
    o->cap = cap;
    o->req = NBCX_REQUEST_NULL;
    o->sbuf = malloc(cap);
    o->rbuf = malloc(cap);
    if (!o->sbuf || !o->rbuf)
        return -1;
    /* Every page touched now, so that the soak's own buffers are all
     * resident before the first RSS figure; not with zeros, which the
     * compiler may turn malloc + memset into calloc for, and calloc
     * leaves fresh pages untouched. */
    memset(o->sbuf, 0x5A, cap);
    memset(o->rbuf, SENTINEL, cap);
    return 0;
}

static void report_error(const op_t *o, const char *what, int rc)
{
    errors++;
    if (errors > 20)
        return;
    fprintf(stderr,
            "nbcx-soak: rank %d: %s: op %" PRIu64 " %s%s %s %s count %d "
            "root %d%s (%s)\n",
            R, what, o->opidx, o->persistent ? "persistent " : "",
            kind_names[o->kind], type_names[o->t],
            is_reduction(o->kind) ? rop_names[o->rop] : "-", o->count,
            o->root, o->in_place ? " in-place" : "",
            rc ? nbcx_error_string(rc) : "wrong result");
    if (errors == 20)
        fprintf(stderr, "nbcx-soak: rank %d: further errors not printed\n",
                R);
}

/* The operation completed with code rc: check it and free its place. */
static void finish(op_t *o, int rc)
{
    o->active = 0;
    inflight--;
    if (!o->persistent)
        o->req = NBCX_REQUEST_NULL;
    if (rc != NBCX_SUCCESS) {
        report_error(o, "error", rc);
        return;
    }
    size_t es = type_size[o->t];
    if (inject_at >= 0 && !injected && R == 0 &&
        o->opidx >= (uint64_t)inject_at && o->rlen > 0) {
        o->rbuf[(o->rlen * es) / 2] ^= 0x10;
        injected = 1;
        fprintf(stderr, "nbcx-soak: rank 0: --inject-error: one byte of op "
                        "%" PRIu64 " flipped\n", o->opidx);
    }
    expect(o, img);
    size_t n = o->rlen * es + GUARD;
    bytes_checked += (double)(o->rlen * es);
    if (memcmp(img, o->rbuf, n) != 0) {
        size_t b = 0;
        while (img[b] == o->rbuf[b])
            b++;
        report_error(o, "MISMATCH", 0);
        if (errors <= 20)
            fprintf(stderr,
                    "nbcx-soak: rank %d:   first difference at byte %zu of "
                    "%zu (%s)\n", R, b, o->rlen * es,
                    b >= o->rlen * es ? "guard past the end" : "data");
    }
}

/* The active operations, their requests copied into reqs. */
static int active_list(op_t **ops, nbcx_request *reqs)
{
    int n = 0;
    for (int i = 0; i < nslots; i++)
        if (slots[i].active) {
            ops[n] = &slots[i];
            reqs[n++] = slots[i].req;
        }
    for (int i = 0; i < npool; i++)
        if (pool[i].active) {
            ops[n] = &pool[i];
            reqs[n++] = pool[i].req;
        }
    return n;
}

static op_t **tmp_ops;
static nbcx_request *tmp_reqs;

/* Completes at least one operation, in a way chosen by this rank. */
static void complete_some(void)
{
    int n = active_list(tmp_ops, tmp_reqs);
    if (n == 0)
        return;
    int how = rndn(&local_rng, 100);
    if (how < 35) { /* waitany */
        int k = -1;
        int rc = nbcx_waitany(n, tmp_reqs, &k);
        if (k < 0) {
            errors++;
            fprintf(stderr, "nbcx-soak: rank %d: waitany returned index %d "
                            "(%s)\n", R, k, nbcx_error_string(rc));
            return;
        }
        finish(tmp_ops[k], rc);
    } else if (how < 60) { /* wait for a random one */
        int k = rndn(&local_rng, n);
        int rc = nbcx_wait(&tmp_ops[k]->req);
        finish(tmp_ops[k], rc);
    } else if (how < 92) { /* test random ones until one is done */
        for (int tries = 0;; tries++) {
            int k = rndn(&local_rng, n), flag = 0;
            int rc = nbcx_test(&tmp_ops[k]->req, &flag);
            if (flag || rc != NBCX_SUCCESS) {
                finish(tmp_ops[k], rc);
                return;
            }
            if (tries >= 8) {
                rc = nbcx_wait(&tmp_ops[k]->req);
                finish(tmp_ops[k], rc);
                return;
            }
        }
    } else { /* waitall */
        int rc = nbcx_waitall(n, tmp_reqs);
        for (int k = 0; k < n; k++)
            finish(tmp_ops[k], rc);
    }
}

static void drain(void)
{
    while (inflight > 0)
        complete_some();
}

/* The value of a "Vm...:" line of /proc/self/status (field with its
 * colon, e.g. "VmRSS:"), in KiB; -1 when there is none. */
static long status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    size_t len = strlen(field);
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, len) == 0) {
            kib = strtol(line + len, NULL, 10);
            break;
        }
    fclose(f);
    return kib;
}

static long rss_kib(void) { return status_kib("VmRSS:"); }

static double now(void) { return MPI_Wtime(); }

/* Bytes the process has allocated with malloc and not freed (glibc,
 * every arena, mmapped blocks included), in KiB; -1 elsewhere. Unlike
 * RSS it does not move with fragmentation or pages returned late: a
 * leak shows here. */
static long heap_kib(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 mi = mallinfo2();
    return (long)((mi.uordblks + mi.hblkhd) / 1024);
#else
    return -1;
#endif
}

/* Plans pool entry o anew: draws its parameters (its buffers, allocated
 * at the largest size once, fit any). */
static int pool_init(op_t *o, rng_t *shared)
{
    draw_op(shared, o);
    memset(o->rbuf, SENTINEL, o->rlen * type_size[o->t] + GUARD);
    o->persistent = 1;
    o->opidx = 0;
    int rc = start_op(o, 1);
    if (rc != NBCX_SUCCESS)
        o->req = NBCX_REQUEST_NULL;
    return rc;
}

/* ------------------------------------------------------------------ */
/* Arguments                                                           */
/* ------------------------------------------------------------------ */

static void usage_error(const char *msg, const char *arg)
{
    if (R == 0)
        fprintf(stderr, "nbcx-soak: %s%s%s (usage: nbcx-soak [--ops N] "
                "[--seed S] [--max-inflight M] [--max-count N] "
                "[--report-every K] [--pool P] [--reinit-every N] "
                "[--max-rss-growth KIB] [--inject-error OP])\n", msg, arg ? ": " : "",
                arg ? arg : "");
    MPI_Finalize();
    exit(2);
}

static long long parse_num(const char *opt, const char *s, long long lo,
                           long long hi)
{
    char *end;
    errno = 0;
    if (!s)
        usage_error("missing value for", opt);
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        usage_error("bad value for", opt);
    return v;
}

struct stats {
    double ops, seconds, rss_start, rss_end, rss_max, rss_hwm, errors,
        bytes_checked, heap_start, heap_end;
};

static long hwm_kib(void) { return status_kib("VmHWM:"); }

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

/* Every rank's figures, printed by rank 0, one line per rank. */
static void report(const char *when, long long ops, double t0, double tprev,
                   long long opsprev, long rss)
{
    double t = now();
    double mine[5] = {(double)ops, (double)ops / (t - t0),
                      (double)(ops - opsprev) / (t - tprev), (double)rss,
                      (double)heap_kib()};
    double *all = R == 0 ? malloc(sizeof mine * (size_t)P) : NULL;
    MPI_Gather(mine, 5, MPI_DOUBLE, all, 5, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (R == 0) {
        for (int q = 0; q < P; q++)
            printf("soak: %-8s rank %d: ops %.0f  %.1f s  ops/s %.0f "
                   "(since last report %.0f)  RSS %.0f KiB  heap in use "
                   "%.0f KiB\n",
                   when, q, all[5 * q], t - t0, all[5 * q + 1],
                   all[5 * q + 2], all[5 * q + 3], all[5 * q + 4]);
        fflush(stdout);
        free(all);
    }
}

static const char soak_usage[] =
"Usage: mpiexec -n P nbcx-soak [OPTIONS]\n"
"\n"
"A long run of mixed nonblocking and persistent collectives of nbcx on\n"
"one communicator, every result checked byte for byte, with throughput\n"
"and resident memory (RSS, heap in use) reported at the start and end.\n"
"\n"
"Options:\n"
"  --ops N             operations in all (default 100000)\n"
"  --seed S            seed of the shared random sequence (default 1)\n"
"  --max-inflight M    most operations in flight (1..1024, default 64)\n"
"  --max-count N       largest element count (default 1024)\n"
"  --report-every K    a report every K operations (default: none)\n"
"  --pool P            persistent requests kept and restarted (default 16)\n"
"  --reinit-every N    free and re-plan one persistent request every N\n"
"                      operations on average (default 4096)\n"
"  --max-rss-growth KIB  fail when RSS grows by more than KIB\n"
"  --inject-error OP   corrupt one received byte at operation OP (the\n"
"                      check must then fail)\n"
"  -h, --help          this text\n"
"  --version           the version of nbcx\n"
"\n"
"Exit status: 0 if every result was right, 1 on a wrong result, an\n"
"error or RSS growth over --max-rss-growth, 2 on bad arguments.\n";

int main(int argc, char **argv)
{
    /* Before MPI_Init: answered without mpiexec. */
    nbcx_tool_version(argc, argv, "nbcx-soak");
    if (nbcx_tool_wants_help(argc, argv)) {
        fputs(soak_usage, stdout);
        return 0;
    }
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &R);
    MPI_Comm_size(MPI_COMM_WORLD, &P);

    long long nops = 100000, report_every = 0, max_growth = -1;
    int max_inflight = 64;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--ops"))
            nops = parse_num(a, v, 1, LLONG_MAX / 2);
        else if (!strcmp(a, "--seed"))
            seed = (uint64_t)parse_num(a, v, 0, LLONG_MAX);
        else if (!strcmp(a, "--max-inflight"))
            max_inflight = (int)parse_num(a, v, 1, 1024);
        else if (!strcmp(a, "--max-count"))
            max_count = (int)parse_num(a, v, 0, 1 << 20);
        else if (!strcmp(a, "--report-every"))
            report_every = parse_num(a, v, 0, LLONG_MAX);
        else if (!strcmp(a, "--pool"))
            npool = (int)parse_num(a, v, 0, 1024);
        else if (!strcmp(a, "--reinit-every"))
            reinit_every = (int)parse_num(a, v, 0, INT_MAX);
        else if (!strcmp(a, "--max-rss-growth"))
            max_growth = parse_num(a, v, 0, LLONG_MAX);
        else if (!strcmp(a, "--inject-error"))
            inject_at = parse_num(a, v, 0, LLONG_MAX);
        else
            usage_error("unknown option", a);
        i++;
    }
    if (provided < MPI_THREAD_MULTIPLE && R == 0)
        fprintf(stderr, "nbcx-soak: MPI gives thread level %d, not "
                        "MPI_THREAD_MULTIPLE\n", provided);
    g_seed = splitmix(seed);
    rng_t shared = {splitmix(seed ^ 0x5EED)};
    local_rng.s = splitmix(seed ^ ((uint64_t)(R + 1) << 32));

    if (nbcx_comm_from_mpi(MPI_COMM_WORLD, &g_comm) != NBCX_SUCCESS) {
        fprintf(stderr, "nbcx-soak: rank %d: nbcx_comm_from_mpi failed\n",
                R);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* The largest receive or send: P blocks of max_count plus gaps. */
    size_t cap = ((size_t)P * ((size_t)max_count + 2) + 1) * 8 + GUARD;
    nslots = max_inflight;
    slots = calloc((size_t)nslots, sizeof *slots);
    pool = calloc((size_t)(npool ? npool : 1), sizeof *pool);
    tmp_ops = calloc((size_t)(nslots + npool), sizeof *tmp_ops);
    tmp_reqs = calloc((size_t)(nslots + npool), sizeof *tmp_reqs);
    img = malloc(cap);
    int bad = !slots || !pool || !tmp_ops || !tmp_reqs || !img;
    if (img)
        memset(img, 0x5A, cap); /* touched (not zeros: see alloc_op) */
    for (int i = 0; i < nslots && !bad; i++)
        bad = alloc_op(&slots[i], cap) != 0;
    for (int i = 0; i < npool && !bad; i++) {
        bad = alloc_op(&pool[i], cap) != 0;
        int rc = bad ? NBCX_ERR_NOMEM : pool_init(&pool[i], &shared);
        if (rc != NBCX_SUCCESS) {
            fprintf(stderr, "nbcx-soak: rank %d: persistent init of %s: %s\n",
                    R, kind_names[pool[i].kind], nbcx_error_string(rc));
            bad = 1;
        }
    }
    if (bad) {
        fprintf(stderr, "nbcx-soak: rank %d: setup failed\n", R);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    nbcx_progress_mode mode = 0;
    nbcx_progress_get(&mode);
    const char *mode_name = mode == NBCX_PROGRESS_CALLER   ? "caller"
                            : mode == NBCX_PROGRESS_THREAD ? "thread"
                            : mode == NBCX_PROGRESS_SPLIT  ? "split"
                            : mode == NBCX_PROGRESS_AUTO   ? "auto"
                                                           : "unknown";
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen = 0;
    MPI_Get_library_version(lib, &liblen);
    lib[liblen < (int)sizeof lib ? liblen : (int)sizeof lib - 1] = '\0';
    char *nl = strchr(lib, '\n');
    if (nl)
        *nl = '\0';
    long long warm = nops / 100 > 0 ? nops / 100 : 1;
    if (R == 0) {
        printf("soak: %lld ops on %d ranks, seed %" PRIu64 ", 1-%d in flight, "
               "counts up to %d, %d persistent requests, progress %s\n"
               "soak: %s\n"
               "soak: RSS 'start' is measured after a warm-up of the first "
               "%lld ops (1%%)\n",
               nops, P, seed, max_inflight, max_count, npool, mode_name, lib,
               warm);
        fflush(stdout);
    }

    long rss_start = -1, rss_max = 0, heap_start = -1, rss_end = -1,
         heap_end = -1;
    long long nb_started = 0, p_started = 0, reinits = 0, startalls = 0;
    int window = max_inflight;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now(), tprev = t0, twarm = t0;
    long long opsprev = 0;
    for (long long i = 0; i <= nops; i++) {
        if (i == warm || i == nops ||
            (report_every > 0 && i > 0 && i % report_every == 0)) {
            drain();
            long rss = rss_kib();
            if (rss > rss_max && i >= warm)
                rss_max = rss;
            if (i == nops) { /* before anything is freed, like the start */
                rss_end = rss;
                heap_end = heap_kib();
            }
            if (i == warm) {
                rss_start = rss;
                heap_start = heap_kib();
                twarm = now();
            }
            report(i == nops ? "end" : i == warm ? "warm-up" : "progress", i,
                   t0, tprev, opsprev, rss);
            tprev = now();
            opsprev = i;
        }
        if (i == nops)
            break;
        if (i % 10000 == 0 && i > warm) {
            long rss = rss_kib();
            if (rss > rss_max)
                rss_max = rss;
        }
        if (i % 1024 == 0)
            window = 1 + rndn(&shared, max_inflight);
        /* Now and then a persistent request is freed and planned anew
         * (between collectives, in the same order on every rank). */
        if (npool > 0 && reinit_every > 0 && rndn(&shared, reinit_every) == 0) {
            op_t *o = &pool[rndn(&shared, npool)];
            if (o->active)
                finish(o, nbcx_wait(&o->req));
            int rc = nbcx_request_free(&o->req);
            if (rc == NBCX_SUCCESS)
                rc = pool_init(o, &shared);
            else
                (void)pool_init(o, &shared); /* keep the draws in step */
            if (rc != NBCX_SUCCESS) {
                report_error(o, "persistent re-init", rc);
                o->req = NBCX_REQUEST_NULL;
            }
            reinits++;
        }
        op_t *o;
        if (npool > 0 && rndn(&shared, 4) == 0) {
            /* One restart with nbcx_start, or (1 in 8) 2 to 4 of them with
             * nbcx_startall, counted as that many operations; never past
             * the next report. */
            int k = 1;
            if (npool > 1 && rndn(&shared, 8) == 0) {
                long long next = nops;
                if (warm > i && warm < next)
                    next = warm;
                if (report_every > 0 && (i / report_every + 1) * report_every < next)
                    next = (i / report_every + 1) * report_every;
                k = 2 + rndn(&shared, 3);
                if (k > npool)
                    k = npool;
                if (k > next - i)
                    k = (int)(next - i);
            }
            int j0 = rndn(&shared, npool), n = 0;
            nbcx_request reqs[4];
            op_t *ops[4];
            for (int m = 0; m < k; m++) {
                o = &pool[(j0 + m) % npool];
                if (o->active)
                    finish(o, nbcx_wait(&o->req));
                if (o->req != NBCX_REQUEST_NULL) /* else its init failed */
                    ops[n++] = o;
            }
            while (inflight > 0 && inflight + n > window)
                complete_some();
            for (int m = 0; m < n; m++) {
                fill(ops[m], (uint64_t)(i + m));
                reqs[m] = ops[m]->req;
            }
            i += k - 1;
            if (n == 0)
                continue;
            int rc = n == 1 && k == 1 ? nbcx_start(&ops[0]->req)
                                      : nbcx_startall(n, reqs);
            if (rc != NBCX_SUCCESS) {
                report_error(ops[0], n == 1 && k == 1 ? "start" : "startall",
                             rc);
                continue;
            }
            if (k > 1)
                startalls++;
            p_started += n;
            for (int m = 0; m < n; m++) {
                ops[m]->active = 1;
                inflight++;
            }
            continue;
        } else {
            while (inflight >= window)
                complete_some();
            o = NULL;
            for (int k = 0; k < nslots; k++)
                if (!slots[k].active) {
                    o = &slots[k];
                    break;
                }
            draw_op(&shared, o);
            o->persistent = 0;
            fill(o, (uint64_t)i);
            int rc = start_op(o, 0);
            if (rc != NBCX_SUCCESS) {
                o->req = NBCX_REQUEST_NULL;
                report_error(o, "start", rc);
                continue;
            }
            nb_started++;
        }
        o->active = 1;
        inflight++;
    }
    double t1 = now();

    for (int i = 0; i < npool; i++)
        if (pool[i].req != NBCX_REQUEST_NULL &&
            nbcx_request_free(&pool[i].req) != NBCX_SUCCESS) {
            errors++;
            fprintf(stderr, "nbcx-soak: rank %d: request_free failed\n", R);
        }
    if (nbcx_comm_free(&g_comm) != NBCX_SUCCESS) {
        errors++;
        fprintf(stderr, "nbcx-soak: rank %d: comm_free failed\n", R);
    }

    if (rss_end > rss_max)
        rss_max = rss_end;
    struct stats mine = {(double)nops, t1 - t0, (double)rss_start,
                         (double)rss_end, (double)rss_max, (double)hwm_kib(),
                         (double)errors, bytes_checked,
                         (double)heap_start, (double)heap_end};
    enum { NS = sizeof(struct stats) / sizeof(double) };
    struct stats *all = R == 0 ? calloc((size_t)P, sizeof *all) : NULL;
    MPI_Gather(&mine, NS, MPI_DOUBLE, all, NS, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    long long counts[4] = {nb_started, p_started, reinits, startalls},
              sums[4];
    /* The same on every rank (the shared draws): the largest. */
    MPI_Reduce(counts, sums, 4, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    int status = 0;
    if (R == 0) {
        double secs = 0, tot_err = 0, s_max = 0, e_max = 0, m_max = 0;
        double growth = -1e300;
        for (int q = 0; q < P; q++) {
            secs = all[q].seconds > secs ? all[q].seconds : secs;
            tot_err += all[q].errors;
            s_max = all[q].rss_start > s_max ? all[q].rss_start : s_max;
            e_max = all[q].rss_end > e_max ? all[q].rss_end : e_max;
            m_max = all[q].rss_max > m_max ? all[q].rss_max : m_max;
            double g = all[q].rss_end - all[q].rss_start;
            growth = g > growth ? g : growth;
        }
        double warm_secs = twarm - t0;
        printf("soak: %s: %lld ops in %.1f s, %.0f ops/s (%.0f after the "
               "warm-up); RSS growth after the warm-up %+.0f KiB (max over "
               "ranks); %.0f errors\n",
               tot_err ? "FAILED" : "ok", nops, secs, (double)nops / secs,
               (double)(nops - warm) / (secs - warm_secs), growth, tot_err);
        printf("{\"tool\": \"nbcx-soak\", \"ops\": %lld, \"seconds\": %.3f, "
               "\"ops_per_s\": %.1f, \"ops_per_s_after_warmup\": %.1f, "
               "\"warmup_ops\": %lld, \"rss_start_kib\": %.0f, "
               "\"rss_end_kib\": %.0f, \"rss_max_kib\": %.0f, "
               "\"rss_growth_kib\": %.0f, \"errors\": %.0f, \"ranks\": %d, "
               "\"mpi_library\": ",
               nops, secs, (double)nops / secs,
               (double)(nops - warm) / (secs - warm_secs), warm, s_max, e_max,
               m_max, growth, tot_err, P);
        json_string(lib);
        printf(", \"progress\": \"%s\", \"seed\": %" PRIu64
               ", \"max_inflight\": %d, \"max_count\": %d, "
               "\"persistent_pool\": %d, \"nonblocking_started\": %lld, "
               "\"persistent_started\": %lld, \"persistent_startalls\": %lld, "
               "\"persistent_reinits\": %lld, "
               "\"per_rank\": [",
               mode_name, seed, max_inflight, max_count, npool, sums[0],
               sums[1], sums[3], sums[2]);
        for (int q = 0; q < P; q++)
            printf("%s{\"rank\": %d, \"rss_start_kib\": %.0f, "
                   "\"rss_end_kib\": %.0f, \"rss_max_kib\": %.0f, "
                   "\"rss_hwm_kib\": %.0f, \"errors\": %.0f, "
                   "\"heap_start_kib\": %.0f, \"heap_end_kib\": %.0f, "
                   "\"bytes_checked\": %.0f}",
                   q ? ", " : "", q, all[q].rss_start, all[q].rss_end,
                   all[q].rss_max, all[q].rss_hwm, all[q].errors,
                   all[q].heap_start, all[q].heap_end, all[q].bytes_checked);
        printf("]}\n");
        fflush(stdout);
        status = tot_err > 0;
        if (max_growth >= 0 && growth > (double)max_growth) {
            fprintf(stderr, "nbcx-soak: RSS grew by %.0f KiB, more than "
                            "--max-rss-growth %lld\n", growth, max_growth);
            status = 1;
        }
        free(all);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; i < nslots; i++) {
        free(slots[i].sbuf);
        free(slots[i].rbuf);
        free(slots[i].cnt);
    }
    for (int i = 0; i < npool; i++) {
        free(pool[i].sbuf);
        free(pool[i].rbuf);
        free(pool[i].cnt);
    }
    free(slots);
    free(pool);
    free(tmp_ops);
    free(tmp_reqs);
    free(img);
    MPI_Finalize();
    return status;
}
