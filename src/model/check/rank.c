/*
 * rank.c - the checker's look at one rank's schedule.
 *
 * 1. Validity: node kinds, peers in [0, size), tags in
 *    [0, NBCX_SCHED_TAG_MAX], counts >= 0, copies moving as many bytes as
 *    they read, edges between existing nodes.
 * 2. Local order: a topological sort (Kahn) that starts like the executor
 *    (sched/executor.c): the nodes without predecessors, receives first,
 *    each kind in creation order, then first-in first-out. pos[v] is v's
 *    place in it; a cycle is an error. "a before b" below means a path
 *    a -> ... -> b (b starts only after a is complete); it is decided by
 *    a depth-first search from a that never leaves pos <= pos[b].
 * 3. Posting order of messages with the same (peer, tag): MPI matches
 *    them in the order they are posted. The executor posts every node
 *    without predecessors when the schedule starts, in the order of step
 *    2, and any other node later; so a is surely posted before b when a
 *    has no predecessors (and comes first in that order), or when a is
 *    before b. Consecutive members of each group (in pos order) must be
 *    ordered so; otherwise the matching is ambiguous.
 * 4. Buffers: each node's accesses as byte intervals (send: reads its
 *    buffer; receive: writes it; reduce: reads in, reads and writes
 *    inout; copy: reads src, writes dst; callbacks: unknown, none). A
 *    sweep over the sorted interval ends cuts memory into segments with
 *    the same set of accessors; in each segment, walking the accessors in
 *    pos order, every writer must be after the previous writer, every
 *    reader after the previous writer, and every writer after the readers
 *    since the previous writer. These consecutive checks order every
 *    conflicting pair, by transitivity, and each failure is a real pair
 *    that nothing orders. Reads before any write are allowed only where
 *    the bytes hold input; scratch that no node writes is taken to be
 *    initialised at build time (the barrier's token byte). Writes go only
 *    to result bytes or scratch; result bytes must all be written.
 * 5. The compact form for the global graph (check.h): messages, and the
 *    local nodes that both follow and precede a message.
 */
#define _GNU_SOURCE /* malloc_usable_size */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#define CK_HAVE_USABLE_SIZE 1
#endif

#include "check.h"

enum {
    FL_P2P = 1,   /* a valid send or receive                 */
    FL_INIT = 2,  /* no predecessors                         */
    FL_ANC = 4,   /* a message comes before it (strictly)    */
    FL_DESC = 8,  /* a message comes after it (strictly)     */
};

enum { M_R = 1, M_W = 2 };
enum { EV_ROLE_END, EV_ACC_END, EV_ROLE_START, EV_ACC_START };

struct ck_acc {
    uintptr_t lo, hi;
    int node;
    uint8_t mode;
    uint8_t scratch;
};

/* An event of the sweep, packed: (address - base) << mbits | id << 2 |
 * type, so a radix sort moves 8 bytes and only the address digits. */
typedef uint64_t ck_ev;

struct ck_p2p {
    uint64_t group;
    uint32_t pos;
    int node;
};

/* An access active in the sweep; the active set is kept sorted by
 * (pos, acc), so a node's accesses are neighbours. */
struct ck_act {
    uint32_t pos;
    int node;
    int acc;
    uint8_t mode;
};

struct ck_tmp {
    uintptr_t lo, hi;
    int idx;
};

struct ck_cache {
    int a, b;
    uint32_t gen;
    uint8_t res;
};

enum { CACHE_SIZE = 1 << 14, SEEN_SIZE = 1 << 12 };

struct ck_ws {
    int cap_n, cap_e;
    int *soff, *sadj, *indeg, *order, *dfs;
    uint32_t *pos, *stamp;
    uint32_t epoch;
    uint8_t *flag;
    int *newid;

    struct ck_p2p *p2p;
    int cap_p;
    struct ck_acc *acc;
    int nacc, cap_acc;
    ck_ev *ev;
    int cap_ev;
    struct ck_act *act, *fresh; /* the active set; accesses starting */
    int cap_act, cap_fresh;
    uint8_t *gone;              /* per access: ended at this address  */
    int cap_gone, ngone;
    int *readers;
    int cap_readers;
    struct ck_tmp *tmps;
    int cap_tmps;

    struct ck_cache *cache;
    uint32_t gen; /* one generation per rank analysed */
    uint64_t *seen;
    uint32_t *seen_gen;
};

static bool grow(void *pp, int *cap, long need, size_t elem)
{
    void **p = pp;
    if (need <= *cap)
        return true;
    if (need > INT32_MAX / 2)
        return false;
    long ncap = *cap ? *cap : 64;
    while (ncap < need)
        ncap *= 2;
    void *q = realloc(*p, (size_t)ncap * elem);
    if (!q)
        return false;
    *p = q;
    *cap = (int)ncap;
    return true;
}

/* The arrays of one entry per node (ws_reserve sizes them together). */
static void free_node_arrays(struct ck_ws *w)
{
    free(w->soff);
    free(w->indeg);
    free(w->order);
    free(w->dfs);
    free(w->pos);
    free(w->stamp);
    free(w->flag);
    free(w->newid);
}

int ck_ws_new(struct ck_ws **out)
{
    struct ck_ws *w = calloc(1, sizeof *w);
    if (w) {
        w->cache = calloc(CACHE_SIZE, sizeof *w->cache);
        w->seen = calloc(SEEN_SIZE, sizeof *w->seen);
        w->seen_gen = calloc(SEEN_SIZE, sizeof *w->seen_gen);
    }
    if (!w || !w->cache || !w->seen || !w->seen_gen) {
        ck_ws_free(w);
        return NBCX_ERR_NOMEM;
    }
    *out = w;
    return NBCX_SUCCESS;
}

void ck_ws_free(struct ck_ws *w)
{
    if (!w)
        return;
    free_node_arrays(w);
    free(w->sadj);
    free(w->p2p);
    free(w->acc);
    free(w->ev);
    free(w->act);
    free(w->fresh);
    free(w->gone);
    free(w->readers);
    free(w->tmps);
    free(w->cache);
    free(w->seen);
    free(w->seen_gen);
    free(w);
}

static int ws_reserve(struct ck_ws *w, int n, int e)
{
    if (n + 1 > w->cap_n) {
        int cap = w->cap_n ? w->cap_n : 64;
        while (cap < n + 1) {
            if (cap > INT32_MAX / 2)
                return NBCX_ERR_NOMEM;
            cap *= 2;
        }
        free_node_arrays(w);
        w->soff = malloc(sizeof(int) * (size_t)cap);
        w->indeg = malloc(sizeof(int) * (size_t)cap);
        w->order = malloc(sizeof(int) * (size_t)cap);
        w->dfs = malloc(sizeof(int) * (size_t)cap);
        w->pos = malloc(sizeof(uint32_t) * (size_t)cap);
        w->stamp = calloc((size_t)cap, sizeof(uint32_t));
        w->flag = malloc((size_t)cap);
        w->newid = malloc(sizeof(int) * (size_t)cap);
        w->epoch = 0;
        w->cap_n = cap;
        if (!w->soff || !w->indeg || !w->order || !w->dfs || !w->pos ||
            !w->stamp || !w->flag || !w->newid) {
            w->cap_n = 0;
            return NBCX_ERR_NOMEM;
        }
    }
    if (!grow(&w->sadj, &w->cap_e, e ? e : 1, sizeof(int)))
        return NBCX_ERR_NOMEM;
    return NBCX_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Descriptions and errors                                             */
/* ------------------------------------------------------------------ */

static size_t p2p_bytes(const struct nbcxi_node *nd)
{
    return nd->u.p2p.type ? (size_t)nd->u.p2p.count * nd->u.p2p.type->size
                          : 0;
}

void ck_describe(const struct nbcx_sched_s *s, int node, char *buf,
                 size_t len)
{
    if (node < 0 || node >= s->build.nnodes) {
        snprintf(buf, len, "node %d (none)", node);
        return;
    }
    const struct nbcxi_node *nd = &s->build.nodes[node];
    switch (nd->kind) {
    case NBCXI_NODE_SEND:
    case NBCXI_NODE_RECV:
        snprintf(buf, len, "node %d (%s %zu B %s rank %d, tag %d)", node,
                 nd->kind == NBCXI_NODE_SEND ? "send" : "recv",
                 p2p_bytes(nd), nd->kind == NBCXI_NODE_SEND ? "to" : "from",
                 nd->u.p2p.peer, nd->u.p2p.tag);
        break;
    case NBCXI_NODE_REDUCE:
        snprintf(buf, len, "node %d (reduce %d x %s)", node, nd->u.red.count,
                 nd->u.red.type ? nd->u.red.type->name
                                    ? nd->u.red.type->name
                                    : "derived"
                                : "?");
        break;
    case NBCXI_NODE_COPY:
        snprintf(buf, len, "node %d (copy %zu B)", node,
                 nd->u.copy.stype ? (size_t)nd->u.copy.scount *
                                        nd->u.copy.stype->size
                                  : 0);
        break;
    case NBCXI_NODE_CALL:
        snprintf(buf, len, "node %d (callback)", node);
        break;
    default:
        snprintf(buf, len, "node %d (kind %d)", node, nd->kind);
    }
}

/* First report of `key` on this rank? (Repeats of one finding over many
 * byte segments are counted once.) */
static bool first_time(struct ck_ws *w, uint64_t key)
{
    uint64_t h = key * 0x9e3779b97f4a7c15ull;
    for (int probe = 0; probe < 64; probe++) {
        uint32_t i = (uint32_t)((h >> 40) + (uint64_t)probe) & (SEEN_SIZE - 1);
        if (w->seen_gen[i] != w->gen) {
            w->seen_gen[i] = w->gen;
            w->seen[i] = key;
            return true;
        }
        if (w->seen[i] == key)
            return false;
    }
    return true; /* table crowded: report again rather than lose it */
}

static uint64_t fkey(int what, int a, int b)
{
    return ((uint64_t)what << 58) ^ ((uint64_t)(uint32_t)a << 29) ^
           (uint64_t)(uint32_t)b;
}

/* ------------------------------------------------------------------ */
/* Order                                                               */
/* ------------------------------------------------------------------ */

/* Is there an edge a -> b? Successor lists are sorted (local_order). */
static bool edge(const struct ck_ws *w, int a, int b)
{
    int lo = w->soff[a], hi = w->soff[a + 1];
    while (hi - lo > 8) {
        int m = lo + (hi - lo) / 2;
        if (w->sadj[m] < b)
            lo = m + 1;
        else
            hi = m + 1; /* sadj[m] may be b */
    }
    for (; lo < hi; lo++)
        if (w->sadj[lo] == b)
            return true;
    return false;
}

/* Is there a path a -> ... -> b? */
static bool before(struct ck_ws *w, int a, int b)
{
    if (a == b || w->pos[a] >= w->pos[b])
        return false;
    bool small = w->soff[a + 1] - w->soff[a] <= 8;
    if (small && edge(w, a, b))
        return true;
    uint32_t h = ((uint32_t)a * 2654435761u) ^ ((uint32_t)b * 40503u);
    struct ck_cache *c = &w->cache[h & (CACHE_SIZE - 1)];
    if (c->gen == w->gen && c->a == a && c->b == b)
        return c->res;
    if (!small && edge(w, a, b)) {
        *c = (struct ck_cache){ a, b, w->gen, true };
        return true;
    }

    if (++w->epoch == 0) { /* wrapped: clear the stamps */
        memset(w->stamp, 0, sizeof(uint32_t) * (size_t)w->cap_n);
        w->epoch = 1;
    }
    uint32_t limit = w->pos[b], ep = w->epoch;
    bool found = false;
    int top = 0;
    w->dfs[top++] = a;
    w->stamp[a] = ep;
    while (top > 0 && !found) {
        int v = w->dfs[--top];
        for (int k = w->soff[v]; k < w->soff[v + 1]; k++) {
            int x = w->sadj[k];
            if (x == b) {
                found = true;
                break;
            }
            if (w->pos[x] < limit && w->stamp[x] != ep) {
                w->stamp[x] = ep;
                w->dfs[top++] = x;
            }
        }
    }
    *c = (struct ck_cache){ a, b, w->gen, found };
    return found;
}

/* ------------------------------------------------------------------ */
/* Buffers                                                             */
/* ------------------------------------------------------------------ */

/* Bytes touched by count elements of t at buf: [*lo, *hi); false if
 * none. */
static bool span(const void *buf, int count, const struct nbcx_datatype_s *t,
                 uintptr_t *lo, uintptr_t *hi)
{
    if (!t || count <= 0 || t->size == 0)
        return false;
    uintptr_t b = (uintptr_t)buf + (uintptr_t)t->true_lb;
    *lo = b;
    *hi = b + (uintptr_t)((ptrdiff_t)(count - 1) * t->extent +
                          t->true_extent);
    return true;
}

struct rank_ctx {
    struct ck_job *J;
    struct ck_ws *w;
    const struct nbcx_sched_s *s;
    const struct ck_regions *reg;
    int r;
    int ntmps;
    const struct ck_tmp *last_tmp;
};

/* Where bytes [lo, hi) are, for messages: "recvbuf[0, 40)". */
static void where(const struct rank_ctx *c, uintptr_t lo, uintptr_t hi,
                  bool scratch, char *buf, size_t len)
{
    if (scratch) {
        for (int i = 0; i < c->ntmps; i++) {
            const struct ck_tmp *t = &c->w->tmps[i];
            if (lo >= t->lo && lo < t->hi) {
                snprintf(buf, len, "scratch %d[%zu, %zu)", t->idx,
                         (size_t)(lo - t->lo), (size_t)(hi - t->lo));
                return;
            }
        }
    }
    for (int i = 0; i < c->reg->nbounds; i++) {
        const struct ck_range *b = &c->reg->bounds[i];
        if (lo >= b->lo && lo < b->hi) {
            snprintf(buf, len, "%s[%zu, %zu)", b->name, (size_t)(lo - b->lo),
                     (size_t)(hi - b->lo));
            return;
        }
    }
    snprintf(buf, len, "memory [%p, %p)", (void *)lo, (void *)hi);
}

static int cmp_tmp(const void *x, const void *y)
{
    const struct ck_tmp *a = x, *b = y;
    return (a->lo > b->lo) - (a->lo < b->lo);
}

/* The schedule's scratch buffers, sorted by address. */
static int collect_tmps(struct rank_ctx *c)
{
    struct ck_ws *w = c->w;
    const struct nbcx_sched_s *s = c->s;
    if (!grow(&w->tmps, &w->cap_tmps, s->build.ntmps + 1, sizeof *w->tmps))
        return NBCX_ERR_NOMEM;
    c->ntmps = 0;
    for (int i = 0; i < s->build.ntmps; i++) {
        uintptr_t lo = (uintptr_t)s->build.tmps[i];
#ifdef CK_HAVE_USABLE_SIZE
        uintptr_t hi = lo + malloc_usable_size(s->build.tmps[i]);
#else
        uintptr_t hi = lo + 1; /* unknown: see where_is() */
#endif
        w->tmps[c->ntmps++] = (struct ck_tmp){ lo, hi, i };
    }
    bool sorted = true;
    for (int i = 1; i < c->ntmps && sorted; i++)
        sorted = w->tmps[i - 1].lo <= w->tmps[i].lo;
    if (!sorted)
        qsort(w->tmps, (size_t)c->ntmps, sizeof *w->tmps, cmp_tmp);
    return NBCX_SUCCESS;
}

/* Scratch buffer holding [lo, hi), or NULL. */
static const struct ck_tmp *find_tmp(struct rank_ctx *c, uintptr_t lo,
                                     uintptr_t hi)
{
    const struct ck_tmp *last = c->last_tmp; /* nodes come in runs */
    if (last && lo >= last->lo && hi <= last->hi)
        return last;
    int a = 0, b = c->ntmps; /* first tmp with tmps.lo > lo */
    while (a < b) {
        int m = (a + b) / 2;
        if (c->w->tmps[m].lo <= lo)
            a = m + 1;
        else
            b = m;
    }
    if (a == 0)
        return NULL;
    const struct ck_tmp *t = &c->w->tmps[a - 1];
#ifdef CK_HAVE_USABLE_SIZE
    if (hi > t->hi)
        return NULL;
#endif
    c->last_tmp = t;
    return t;
}

/* Records the access [lo, hi) of node `node`, after checking where it
 * goes. */
static int add_interval(struct rank_ctx *c, int node, uintptr_t lo,
                        uintptr_t hi, int mode)
{
    struct ck_job *J = c->J;
    struct ck_ws *w = c->w;
    char d[128];
    bool scratch = false;
    const char *what = mode & M_W ? "writes" : "reads";
    if (lo < 65536) {
        if (!J->silent && first_time(w, fkey(1, node, 0))) {
            ck_describe(c->s, node, d, sizeof d);
            ck_error(J, "rank %d: %s %s %zu bytes at the null address %p",
                     c->r, d, what, (size_t)(hi - lo), (void *)lo);
        }
        return NBCX_SUCCESS;
    }
    uintptr_t m0 = (uintptr_t)J->mem, m1 = m0 + J->memlen;
    if (J->mem && hi > m0 && lo < m1) {
        bool inside = false;
        for (int i = 0; i < c->reg->nbounds && !inside; i++)
            inside = lo >= c->reg->bounds[i].lo &&
                     hi <= c->reg->bounds[i].hi;
        if (!inside) {
            if (!J->silent && first_time(w, fkey(2, node, 0))) {
                char at[96];
                ck_describe(c->s, node, d, sizeof d);
                where(c, lo, hi, false, at, sizeof at);
                ck_error(J, "rank %d: %s %s %s, outside the user's buffers",
                         c->r, d, what, at);
            }
            return NBCX_SUCCESS;
        }
    } else if (find_tmp(c, lo, hi)) {
        scratch = true;
    } else if (J->mem) {
        /* Builders get fake user buffers: anything else must be scratch. */
        if (!J->silent && first_time(w, fkey(3, node, 0))) {
            ck_describe(c->s, node, d, sizeof d);
            ck_error(J,
                     "rank %d: %s %s %zu bytes at %p, in neither the user's "
                     "buffers nor the schedule's scratch",
                     c->r, d, what, (size_t)(hi - lo), (void *)lo);
        }
        return NBCX_SUCCESS;
    }
    if (!grow(&w->acc, &w->cap_acc, w->nacc + 1, sizeof *w->acc))
        return NBCX_ERR_NOMEM;
    w->acc[w->nacc++] = (struct ck_acc){ lo, hi, node, (uint8_t)mode,
                                         scratch };
    return NBCX_SUCCESS;
}

/* A read of elements of a type with a gap between them (the padding of
 * MPI_DOUBLE_INT, a resized type) is recorded element by element up to
 * this many, so that a message spanning blocks of several ranks (a
 * node's run of blocks in the node-aware allgather) reads only its
 * elements, not the gaps between blocks, which hold nothing; above it,
 * the span (an over-approximation: a read of such a gap may then be
 * reported). Writes keep their span, as the result regions do (setup.c):
 * a gap inside a block counts as written. */
enum { CK_SPLIT_MAX = 4096 };

/* Records node `node`'s access of count elements of t at buf. */
static int add_access(struct rank_ctx *c, int node, const void *buf,
                      int count, const struct nbcx_datatype_s *t, int mode)
{
    uintptr_t lo, hi;
    if (!span(buf, count, t, &lo, &hi))
        return NBCX_SUCCESS;
    if (mode != M_R || count == 1 || count > CK_SPLIT_MAX ||
        t->true_extent >= t->extent)
        return add_interval(c, node, lo, hi, mode);
    for (int i = 0; i < count; i++) {
        uintptr_t e = lo + (uintptr_t)((ptrdiff_t)i * t->extent);
        int err = add_interval(c, node, e, e + (uintptr_t)t->true_extent,
                               mode);
        if (err)
            return err;
    }
    return NBCX_SUCCESS;
}

/* A node's two operands must not overlap (memcpy, and reductions, need
 * distinct buffers). */
static void check_operands(struct rank_ctx *c, int node, const void *b1,
                           int n1, const struct nbcx_datatype_s *t1,
                           const void *b2, int n2,
                           const struct nbcx_datatype_s *t2)
{
    uintptr_t l1, h1, l2, h2;
    if (!span(b1, n1, t1, &l1, &h1) || !span(b2, n2, t2, &l2, &h2))
        return;
    if (l1 < h2 && l2 < h1 && !c->J->silent) {
        char d[128];
        ck_describe(c->s, node, d, sizeof d);
        ck_error(c->J, "rank %d: %s reads and writes overlapping bytes",
                 c->r, d);
    }
}

static int collect_accesses(struct rank_ctx *c)
{
    const struct nbcx_sched_s *s = c->s;
    c->w->nacc = 0;
    int err = NBCX_SUCCESS;
    for (int i = 0; i < s->build.nnodes && !err; i++) {
        const struct nbcxi_node *nd = &s->build.nodes[i];
        switch (nd->kind) {
        case NBCXI_NODE_SEND:
        case NBCXI_NODE_RECV:
            if (c->w->flag[i] & FL_P2P)
                err = add_access(c, i, nd->u.p2p.buf, nd->u.p2p.count,
                                 nd->u.p2p.type,
                                 nd->kind == NBCXI_NODE_SEND ? M_R : M_W);
            break;
        case NBCXI_NODE_REDUCE:
            check_operands(c, i, nd->u.red.in, nd->u.red.count,
                           nd->u.red.type, nd->u.red.inout, nd->u.red.count,
                           nd->u.red.type);
            err = add_access(c, i, nd->u.red.in, nd->u.red.count,
                             nd->u.red.type, M_R);
            if (!err)
                err = add_access(c, i, nd->u.red.inout, nd->u.red.count,
                                 nd->u.red.type, M_R | M_W);
            break;
        case NBCXI_NODE_COPY:
            check_operands(c, i, nd->u.copy.src, nd->u.copy.scount,
                           nd->u.copy.stype, nd->u.copy.dst,
                           nd->u.copy.dcount, nd->u.copy.dtype);
            err = add_access(c, i, nd->u.copy.src, nd->u.copy.scount,
                             nd->u.copy.stype, M_R);
            if (!err)
                err = add_access(c, i, nd->u.copy.dst, nd->u.copy.dcount,
                                 nd->u.copy.dtype, M_W);
            break;
        default:
            break;
        }
    }
    return err;
}

enum { F_WW = 10, F_RW, F_WR, F_RBW, F_RBW_SELF, F_UNSET, F_INPUT,
       F_UNTOUCHED, F_UNWRITTEN };

/* A finding about two nodes on bytes [lo, hi). */
static void pair_error(struct rank_ctx *c, int what, int a, int b,
                       uintptr_t lo, uintptr_t hi, bool scratch)
{
    if (c->J->silent || !first_time(c->w, fkey(what, a, b)))
        return;
    char da[128], db[128] = "", at[96];
    ck_describe(c->s, a, da, sizeof da);
    if (b >= 0)
        ck_describe(c->s, b, db, sizeof db);
    where(c, lo, hi, scratch, at, sizeof at);
    const char *fmt = NULL;  /* arguments: rank, at, da, db */
    const char *fmt1 = NULL; /* one node; arguments: rank, da, at */
    switch (what) {
    case F_WW:
        fmt = "rank %d: write-write race on %s: %s and %s both write it and "
              "no path orders them";
        break;
    case F_RW:
        fmt = "rank %d: %s may be overwritten while it is read: %s reads it "
              "and %s writes it, and no path orders the read first";
        break;
    case F_WR:
        fmt = "rank %d: %s may be read before it is written: %s writes it "
              "and %s reads it, and no path orders the write first";
        break;
    case F_RBW:
        fmt = "rank %d: read before write on %s: %s reads it before %s, the "
              "first node that writes it (and it holds no input)";
        break;
    case F_RBW_SELF: /* one node, but at before da (db is empty) */
        fmt = "rank %d: read before write on %s: %s reads and updates it, "
              "but it holds no input and no node wrote it before";
        break;
    case F_UNSET:
        fmt1 = "rank %d: %s reads %s, which holds no input and which no "
               "node writes";
        break;
    case F_INPUT:
        fmt1 = "rank %d: %s writes %s, which is input only (MPI forbids "
               "changing it)";
        break;
    case F_UNTOUCHED:
        fmt1 = "rank %d: %s writes %s, which is not part of the result "
               "(MPI leaves it untouched)";
        break;
    default:
        break;
    }
    if (fmt)
        ck_error(c->J, fmt, c->r, at, da, db);
    else if (fmt1)
        ck_error(c->J, fmt1, c->r, da, at);
}

/* Checks one segment [lo, hi): its accessors are w->act[0 .. nact-1],
 * nw of them writers. */
static void segment(struct rank_ctx *c, uintptr_t lo, uintptr_t hi,
                    int flags, bool scratch, int nact, int nw)
{
    struct ck_ws *w = c->w;
    const struct ck_act *act = w->act;
    if (flags & CK_MUST && nw == 0) {
        if (!c->J->silent && first_time(w, fkey(F_UNWRITTEN, 0, 0))) {
            char at[96];
            where(c, lo, hi, false, at, sizeof at);
            ck_error(c->J,
                     "rank %d: %s is part of the result but no node writes "
                     "it",
                     c->r, at);
        }
    }
    if (nact == 0)
        return;
    if (nw == 0) {
        if (!scratch && !(flags & CK_IN))
            for (int i = 0; i < nact; i++)
                pair_error(c, F_UNSET, act[i].node, -1, lo, hi, scratch);
        return;
    }
    if (!scratch && !(flags & CK_OUT))
        for (int i = 0; i < nact; i++)
            if (act[i].mode & M_W)
                pair_error(c, flags & CK_IN ? F_INPUT : F_UNTOUCHED,
                           act[i].node, -1, lo, hi, scratch);

    int first_w = -1;
    for (int i = 0; i < nact && first_w < 0; i++)
        if (act[i].mode & M_W)
            first_w = act[i].node;
    /* readers[] since the last writer; a reader known to be after that
     * writer is stored as -(node + 1). */
    int last_w = -1, nreaders = 0;
    for (int i = 0; i < nact;) {
        int x = act[i].node;
        int mode = act[i].mode;
        for (i++; i < nact && act[i].node == x; i++) /* in and inout */
            mode |= act[i].mode;
        if (mode & M_W) {
            bool implied = false; /* last_w -> reader -> x */
            for (int j = 0; j < nreaders; j++) {
                int rd = w->readers[j] < 0 ? -w->readers[j] - 1
                                           : w->readers[j];
                if (!before(w, rd, x))
                    pair_error(c, F_RW, rd, x, lo, hi, scratch);
                else if (w->readers[j] < 0)
                    implied = true;
            }
            if (last_w >= 0 && !implied && !before(w, last_w, x))
                pair_error(c, F_WW, last_w, x, lo, hi, scratch);
            if ((mode & M_R) && last_w < 0 && !(flags & CK_IN))
                pair_error(c, F_RBW_SELF, x, -1, lo, hi, scratch);
            last_w = x;
            nreaders = 0;
        } else {
            bool after = false;
            if (last_w >= 0) {
                after = before(w, last_w, x);
                /* Unordered: where the bytes hold input, the read was
                 * meant to come first; elsewhere the write. */
                if (!after && (flags & CK_IN) && !(flags & CK_ASSUMED))
                    pair_error(c, F_RW, x, last_w, lo, hi, scratch);
                else if (!after)
                    pair_error(c, F_WR, last_w, x, lo, hi, scratch);
            } else if (!(flags & CK_IN)) {
                pair_error(c, F_RBW, x, first_w, lo, hi, scratch);
            }
            w->readers[nreaders++] = after ? -x - 1 : x;
        }
    }
}

/* LSD radix sorts (stable, 8-bit digits; digits all alike are skipped).
 * tmp has room for n elements; the result ends in a. */
/* LSD radix sort of n events on their address part (bits above mbits),
 * `digits` bytes of it; tmp has room for n. Stable; digits all alike
 * are skipped. The result ends in a. */
static void radix_ev(ck_ev *a, ck_ev *tmp, size_t n, int mbits, int digits)
{
    size_t cnt[8][256];
    uint64_t all = ~(uint64_t)0, any = 0; /* digits that vary */
    for (size_t i = 0; i < n; i++) {
        all &= a[i] >> mbits;
        any |= a[i] >> mbits;
    }
    uint64_t vary = all ^ any;
    int dv[8], nd = 0;
    for (int d = 0; d < digits; d++)
        if ((vary >> (8 * d)) & 255)
            dv[nd++] = d;
    memset(cnt, 0, sizeof cnt[0] * (size_t)nd);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = a[i] >> mbits;
        for (int j = 0; j < nd; j++)
            cnt[j][(k >> (8 * dv[j])) & 255]++;
    }
    ck_ev *src = a, *dst = tmp;
    for (int j = 0; j < nd; j++) {
        int d = dv[j];
        size_t *cnt_d = cnt[j];
        size_t at = 0;
        for (int b = 0; b < 256; b++) {
            size_t c = cnt_d[b];
            cnt_d[b] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[cnt_d[((src[i] >> mbits) >> (8 * d)) & 255]++] = src[i];
        ck_ev *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}

static int cmp_act(const void *x, const void *y)
{
    const struct ck_act *a = x, *b = y;
    if (a->pos != b->pos)
        return a->pos < b->pos ? -1 : 1;
    return (a->acc > b->acc) - (a->acc < b->acc);
}

/* Applies the accesses ending and starting at one address to the active
 * set (sorted by pos): removes the ended ones (gone[] marks them), then
 * merges the new ones, sorted, in one pass. Many accesses of one
 * address (a chain of reductions into one buffer) cost a sort, not a
 * move each. Returns the new size. */
static int act_update(struct ck_ws *w, int nact, int nnew)
{
    if (w->ngone) {
        int k = 0;
        for (int i = 0; i < nact; i++) {
            if (w->gone[w->act[i].acc])
                w->gone[w->act[i].acc] = 0;
            else
                w->act[k++] = w->act[i];
        }
        nact = k;
        w->ngone = 0;
    }
    if (nnew == 0)
        return nact;
    struct ck_act *nw = w->fresh;
    if (nnew > 16) {
        qsort(nw, (size_t)nnew, sizeof *nw, cmp_act);
    } else {
        for (int i = 1; i < nnew; i++) {
            struct ck_act x = nw[i];
            int j = i;
            while (j > 0 && cmp_act(&nw[j - 1], &x) > 0) {
                nw[j] = nw[j - 1];
                j--;
            }
            nw[j] = x;
        }
    }
    /* merge from the back, in place */
    int i = nact - 1, j = nnew - 1, k = nact + nnew - 1;
    while (j >= 0) {
        if (i >= 0 && cmp_act(&w->act[i], &nw[j]) > 0)
            w->act[k--] = w->act[i--];
        else
            w->act[k--] = nw[j--];
    }
    return nact + nnew;
}

/* Sweeps the events ev[0 .. ne-1] of one area (scratch, or user memory
 * with its roles), packed against base with mbits bits of id and type:
 * sorts them, then checks each segment. */
static void sweep(struct rank_ctx *c, ck_ev *ev, int ne, uintptr_t base,
                  int mbits, int digits, bool scratch)
{
    struct ck_ws *w = c->w;
    const struct ck_regions *reg = c->reg;
    radix_ev(ev, ev + ne, (size_t)ne, mbits, digits);
    /* Hand-built schedules: all user memory holds input and may be
     * written. */
    int flags0 = scratch     ? CK_OUT
                 : c->J->mem ? 0
                             : CK_IN | CK_OUT | CK_ASSUMED;
    int nact = 0, nw = 0, cin = 0, cout = 0, cmust = 0;
    const uint64_t mask = ((uint64_t)1 << mbits) - 1;
    uintptr_t prev = ne ? base + (uintptr_t)(ev[0] >> mbits) : 0;
    for (int i = 0; i < ne;) {
        uintptr_t addr = base + (uintptr_t)(ev[i] >> mbits);
        if (addr > prev && (nact > 0 || cmust > 0))
            segment(c, prev, addr,
                    flags0 | (cin ? CK_IN : 0) | (cout ? CK_OUT : 0) |
                        (cmust ? CK_MUST : 0),
                    scratch, nact, nw);
        int nnew = 0;
        for (; i < ne && base + (uintptr_t)(ev[i] >> mbits) == addr; i++) {
            int type = (int)(ev[i] & 3);
            int id = (int)((ev[i] & mask) >> 2);
            if (type == EV_ACC_START || type == EV_ACC_END) {
                const struct ck_acc *a = &w->acc[id];
                int wr = (a->mode & M_W) ? 1 : 0;
                if (type == EV_ACC_START) {
                    w->fresh[nnew++] = (struct ck_act){ w->pos[a->node],
                                                        a->node, id,
                                                        a->mode };
                    nw += wr;
                } else {
                    w->gone[id] = 1;
                    w->ngone++;
                    nw -= wr;
                }
                continue;
            }
            int f = reg->roles[id].flags;
            int d = type == EV_ROLE_START ? 1 : -1;
            cin += (f & CK_IN) ? d : 0;
            cout += (f & CK_OUT) ? d : 0;
            cmust += (f & CK_MUST) ? d : 0;
        }
        nact = act_update(w, nact, nnew);
        prev = addr;
    }
}

static int check_buffers(struct rank_ctx *c)
{
    struct ck_ws *w = c->w;
    const struct ck_regions *reg = c->reg;
    int err = collect_tmps(c);
    if (!err)
        err = collect_accesses(c);
    if (err)
        return err;
    int nacc = w->nacc, nroles = reg->nroles;
    long nev = 2L * (nacc + nroles);
    if (nev == 0)
        return NBCX_SUCCESS;
    if (!grow(&w->ev, &w->cap_ev, 2 * nev, sizeof *w->ev) || /* + tmp */
        !grow(&w->act, &w->cap_act, nacc + 1, sizeof *w->act) ||
        !grow(&w->fresh, &w->cap_fresh, nacc + 1, sizeof *w->fresh) ||
        !grow(&w->gone, &w->cap_gone, nacc + 1, 1) ||
        !grow(&w->readers, &w->cap_readers, nacc + 1, sizeof(int)))
        return NBCX_ERR_NOMEM;

    memset(w->gone, 0, (size_t)nacc);
    w->ngone = 0;
    /* Scratch, then user memory with its roles: segments never span
     * the two, and each area's addresses are close, so few digits to
     * sort. */
    int mbits = 2; /* id and type */
    for (long m = nacc > nroles ? nacc : nroles; m > 0; m >>= 1)
        mbits++;
    for (int pass = 0; pass < 2; pass++) {
        bool scratch = pass == 0;
        uintptr_t lo = UINTPTR_MAX, hi = 0;
        for (int i = 0; i < nacc; i++) {
            if (w->acc[i].scratch != scratch)
                continue;
            lo = w->acc[i].lo < lo ? w->acc[i].lo : lo;
            hi = w->acc[i].hi > hi ? w->acc[i].hi : hi;
        }
        for (int i = 0; i < nroles && !scratch; i++) {
            lo = reg->roles[i].lo < lo ? reg->roles[i].lo : lo;
            hi = reg->roles[i].hi > hi ? reg->roles[i].hi : hi;
        }
        if (lo > hi)
            continue; /* nothing in this area */
        int digits = 0;
        for (uint64_t range = hi - lo; range; range >>= 8)
            digits++;
        if (mbits + 8 * digits > 64) { /* never for buffers < 2^40 B */
            if (!c->J->silent)
                ck_error(c->J, "rank %d: buffers span too many bytes for "
                               "the checker", c->r);
            return NBCX_SUCCESS;
        }
        int ne = 0;
#define EV(addr, id, type)                                                   \
    (((uint64_t)((addr) - lo) << mbits) | ((uint64_t)(id) << 2) | (type))
        for (int i = 0; i < nacc; i++) {
            if (w->acc[i].scratch != scratch)
                continue;
            w->ev[ne++] = EV(w->acc[i].lo, i, EV_ACC_START);
            w->ev[ne++] = EV(w->acc[i].hi, i, EV_ACC_END);
        }
        for (int i = 0; i < nroles && !scratch; i++) {
            if (reg->roles[i].lo >= reg->roles[i].hi)
                continue;
            w->ev[ne++] = EV(reg->roles[i].lo, i, EV_ROLE_START);
            w->ev[ne++] = EV(reg->roles[i].hi, i, EV_ROLE_END);
        }
#undef EV
        sweep(c, w->ev, ne, lo, mbits, digits, scratch); /* tmp: ev + ne */
    }
    return NBCX_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Validity, order, messages                                           */
/* ------------------------------------------------------------------ */

static bool valid_type(const struct nbcx_datatype_s *t)
{
    return t && t->extent > 0 && t->true_extent >= 0;
}

static void node_error(struct rank_ctx *c, int node, const char *why)
{
    if (c->J->silent)
        return;
    char d[128];
    ck_describe(c->s, node, d, sizeof d);
    ck_error(c->J, "rank %d: %s: %s", c->r, d, why);
}

/* Step 1: marks valid messages FL_P2P; false if a node is invalid, and
 * *edges_ok false if an edge is (the graph cannot be analysed then). */
static bool validate(struct rank_ctx *c, bool *edges_ok)
{
    const struct nbcx_sched_s *s = c->s;
    struct ck_ws *w = c->w;
    bool ok = true;
    for (int i = 0; i < s->build.nnodes; i++) {
        const struct nbcxi_node *nd = &s->build.nodes[i];
        w->flag[i] = 0;
        switch (nd->kind) {
        case NBCXI_NODE_SEND:
        case NBCXI_NODE_RECV:
            if (nd->u.p2p.peer < 0 || nd->u.p2p.peer >= c->J->size)
                node_error(c, i, "the peer is not a rank of the communicator");
            else if (nd->u.p2p.tag < 0 || nd->u.p2p.tag > NBCX_SCHED_TAG_MAX)
                node_error(c, i, "the tag is outside [0, NBCX_SCHED_TAG_MAX]");
            else if (nd->u.p2p.count < 0 || !valid_type(nd->u.p2p.type))
                node_error(c, i, "negative count or invalid datatype");
            else {
                w->flag[i] = FL_P2P;
                break;
            }
            ok = false;
            break;
        case NBCXI_NODE_REDUCE:
            if (nd->u.red.count < 0 || !valid_type(nd->u.red.type) ||
                !nd->u.red.op) {
                node_error(c, i, "negative count, invalid datatype or no op");
                ok = false;
            }
            break;
        case NBCXI_NODE_COPY:
            if (nd->u.copy.scount < 0 || nd->u.copy.dcount < 0 ||
                !valid_type(nd->u.copy.stype) ||
                !valid_type(nd->u.copy.dtype)) {
                node_error(c, i, "negative count or invalid datatype");
                ok = false;
            } else if ((size_t)nd->u.copy.scount * nd->u.copy.stype->size !=
                       (size_t)nd->u.copy.dcount * nd->u.copy.dtype->size) {
                node_error(c, i,
                           "the source and destination hold different "
                           "numbers of bytes");
                ok = false;
            }
            break;
        case NBCXI_NODE_CALL:
            break;
        default:
            node_error(c, i, "unknown node kind");
            ok = false;
        }
    }
    *edges_ok = true;
    for (int e = 0; e < s->build.nedges; e++) {
        int from = s->build.edges[e].from, to = s->build.edges[e].to;
        if (from < 0 || from >= s->build.nnodes || to < 0 ||
            to >= s->build.nnodes || from == to) {
            if (!c->J->silent)
                ck_error(c->J, "rank %d: edge %d (%d -> %d) is invalid", c->r,
                         e, from, to);
            *edges_ok = false;
        }
    }
    return ok && *edges_ok;
}

static int cmp_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

static void sort_ints(int *v, int n)
{
    if (n > 32) {
        qsort(v, (size_t)n, sizeof *v, cmp_int);
        return;
    }
    for (int i = 1; i < n; i++) {
        int x = v[i], j = i;
        while (j > 0 && v[j - 1] > x) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

/* Step 2: CSR successors and the executor-like topological order. Returns
 * the number of nodes sorted (< n: a cycle). */
static int local_order(struct rank_ctx *c)
{
    const struct nbcx_sched_s *s = c->s;
    struct ck_ws *w = c->w;
    const int n = s->build.nnodes;
    for (int i = 0; i <= n; i++)
        w->soff[i] = 0;
    for (int e = 0; e < s->build.nedges; e++)
        w->soff[s->build.edges[e].from + 1]++;
    for (int i = 0; i < n; i++)
        w->soff[i + 1] += w->soff[i];
    for (int i = 0; i < n; i++)
        w->indeg[i] = w->soff[i]; /* fill cursor, reset below */
    for (int e = 0; e < s->build.nedges; e++)
        w->sadj[w->indeg[s->build.edges[e].from]++] = s->build.edges[e].to;
    for (int i = 0; i < n; i++)
        sort_ints(w->sadj + w->soff[i], w->soff[i + 1] - w->soff[i]);
    for (int i = 0; i < n; i++)
        w->indeg[i] = 0;
    for (int e = 0; e < s->build.nedges; e++)
        w->indeg[s->build.edges[e].to]++;

    int head = 0, tail = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++)
            if (w->indeg[i] == 0 &&
                (s->build.nodes[i].kind == NBCXI_NODE_RECV) == (pass == 0)) {
                w->order[tail++] = i;
                w->flag[i] |= FL_INIT;
            }
    while (head < tail) {
        int v = w->order[head];
        w->pos[v] = (uint32_t)head++;
        for (int k = w->soff[v]; k < w->soff[v + 1]; k++)
            if (--w->indeg[w->sadj[k]] == 0)
                w->order[tail++] = w->sadj[k];
    }
    int sorted = tail;
    if (sorted < n) {
        int shown = 0;
        char list[160] = "";
        size_t len = 0;
        for (int i = 0; i < n; i++) {
            if (w->indeg[i] > 0) {
                w->pos[i] = (uint32_t)tail;
                w->order[tail++] = i;
                if (shown++ < 8 && len < sizeof list)
                    len += (size_t)snprintf(list + len, sizeof list - len,
                                            " %d", i);
            }
        }
        if (!c->J->silent)
            ck_error(c->J,
                     "rank %d: the schedule's dependencies form a cycle; %d "
                     "nodes can never start:%s%s",
                     c->r, n - sorted, list, n - sorted > 8 ? " ..." : "");
    }
    return sorted;
}

static int cmp_p2p(const struct ck_p2p *a, const struct ck_p2p *b)
{
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

/* Digit d of the sort key (group, pos): pos first (least significant). */
static unsigned p2p_digit(const struct ck_p2p *x, int d)
{
    return d < 4 ? (x->pos >> (8 * d)) & 255
                 : (unsigned)(x->group >> (8 * (d - 4))) & 255;
}

static void radix_p2p(struct ck_p2p *a, struct ck_p2p *tmp, size_t n)
{
    enum { D = 10 }; /* 4 bytes of pos, 6 of the 44-bit group */
    size_t cnt[D][256];
    uint32_t pall = ~0u, pany = 0;
    uint64_t gall = ~(uint64_t)0, gany = 0;
    for (size_t i = 0; i < n; i++) {
        pall &= a[i].pos, pany |= a[i].pos;
        gall &= a[i].group, gany |= a[i].group;
    }
    int dv[D], nd = 0; /* the digits that vary */
    for (int d = 0; d < D; d++)
        if (d < 4 ? ((pall ^ pany) >> (8 * d)) & 255
                  : ((gall ^ gany) >> (8 * (d - 4))) & 255)
            dv[nd++] = d;
    memset(cnt, 0, sizeof cnt[0] * (size_t)nd);
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < nd; j++)
            cnt[j][p2p_digit(&a[i], dv[j])]++;
    struct ck_p2p *src = a, *dst = tmp;
    for (int j = 0; j < nd; j++) {
        int d = dv[j];
        size_t at = 0;
        for (int b = 0; b < 256; b++) {
            size_t c = cnt[j][b];
            cnt[j][b] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[cnt[j][p2p_digit(&src[i], d)]++] = src[i];
        struct ck_p2p *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}

/* Step 3: the messages sorted by (kind, peer, tag, order); same-group
 * neighbours must be posted in a fixed order. Returns their number. */
static int messages(struct rank_ctx *c, bool acyclic)
{
    const struct nbcx_sched_s *s = c->s;
    struct ck_ws *w = c->w;
    int np = 0;
    for (int i = 0; i < s->build.nnodes; i++) {
        if (!(w->flag[i] & FL_P2P))
            continue;
        const struct nbcxi_node *nd = &s->build.nodes[i];
        int kind = nd->kind == NBCXI_NODE_RECV;
        w->p2p[np++] = (struct ck_p2p){
            CK_GROUP(CK_KEY(kind, nd->u.p2p.peer, nd->u.p2p.tag, 0)),
            w->pos[i], i };
    }
    bool sorted = true;
    for (int i = 1; i < np && sorted; i++)
        sorted = cmp_p2p(&w->p2p[i - 1], &w->p2p[i]) < 0;
    if (!sorted)
        radix_p2p(w->p2p, w->p2p + np, (size_t)np);
    if (!acyclic)
        return np;
    for (int i = 1; i < np; i++) {
        if (w->p2p[i].group != w->p2p[i - 1].group)
            continue;
        int a = w->p2p[i - 1].node, b = w->p2p[i].node;
        if ((w->flag[a] & FL_INIT) || before(w, a, b))
            continue;
        if (!c->J->silent && first_time(w, fkey(20, a, b))) {
            char da[128], db[128];
            ck_describe(s, a, da, sizeof da);
            ck_describe(s, b, db, sizeof db);
            ck_error(c->J,
                     "rank %d: ambiguous matching: %s and %s have the same "
                     "peer and tag, and either may be posted first (no path "
                     "between them)",
                     c->r, da, db);
        }
    }
    return np;
}

/* The edges between kept nodes, renumbered (the CSR of struct ck_rank):
 * with cur NULL, counts each kept node's successors in R->soff[nv + 1];
 * else writes them at R->succ[cur[nv]++]. */
static void kept_succ(const struct ck_ws *w, int n, struct ck_rank *R,
                      uint32_t *cur)
{
    for (int v = 0; v < n; v++) {
        int nv = w->newid[v];
        if (nv < 0)
            continue;
        for (int e = w->soff[v]; e < w->soff[v + 1]; e++) {
            int nw = w->newid[w->sadj[e]];
            if (nw < 0)
                continue;
            if (cur)
                R->succ[cur[nv]++] = (uint32_t)nw;
            else
                R->soff[nv + 1]++;
        }
    }
}

/* Step 5: the compact form (or only its numbering, for reports). */
static int compact(struct rank_ctx *c, int np, bool acyclic, int **map,
                   uint32_t *nmap)
{
    const struct nbcx_sched_s *s = c->s;
    struct ck_ws *w = c->w;
    const int n = s->build.nnodes;

    if (acyclic) {
        for (int k = 0; k < n; k++) { /* topological order */
            int v = w->order[k];
            uint8_t give = (w->flag[v] & (FL_P2P | FL_ANC)) ? FL_ANC : 0;
            for (int e = w->soff[v]; e < w->soff[v + 1] && give; e++)
                w->flag[w->sadj[e]] |= give;
        }
        for (int k = n - 1; k >= 0; k--) {
            int v = w->order[k];
            for (int e = w->soff[v]; e < w->soff[v + 1]; e++)
                if (w->flag[w->sadj[e]] & (FL_P2P | FL_DESC))
                    w->flag[v] |= FL_DESC;
        }
    }
    for (int i = 0; i < n; i++)
        w->newid[i] = -1;
    int kept = 0;
    for (int i = 0; i < np; i++)
        w->newid[w->p2p[i].node] = kept++;
    if (acyclic)
        for (int k = 0; k < n; k++) {
            int v = w->order[k];
            if (!(w->flag[v] & FL_P2P) && (w->flag[v] & FL_ANC) &&
                (w->flag[v] & FL_DESC))
                w->newid[v] = kept++;
        }

    if (map) {
        *map = malloc(sizeof(int) * (size_t)(kept ? kept : 1));
        if (!*map)
            return NBCX_ERR_NOMEM;
        for (int i = 0; i < n; i++)
            if (w->newid[i] >= 0)
                (*map)[w->newid[i]] = i;
        *nmap = (uint32_t)kept;
        return NBCX_SUCCESS;
    }

    struct ck_job *J = c->J;
    struct ck_rank *R = &J->ranks[c->r];
    long nsucc = 0;
    if (acyclic)
        for (int v = 0; v < n; v++)
            if (w->newid[v] >= 0)
                for (int e = w->soff[v]; e < w->soff[v + 1]; e++)
                    nsucc += w->newid[w->sadj[e]] >= 0;
    R->n = (uint32_t)kept;
    R->np = (uint32_t)np;
    R->key = malloc(sizeof(uint64_t) * (size_t)(np ? np : 1));
    R->pend = calloc((size_t)(kept ? kept : 1), sizeof(uint32_t));
    if (nsucc) {
        R->soff = calloc((size_t)kept + 1, sizeof(uint32_t));
        R->succ = malloc(sizeof(uint32_t) * (size_t)nsucc);
    }
    if (!R->key || !R->pend || (nsucc && (!R->soff || !R->succ)))
        return NBCX_ERR_NOMEM;
    for (int i = 0; i < np; i++) {
        const struct nbcxi_node *nd = &s->build.nodes[w->p2p[i].node];
        uint32_t sz;
        int err = ck_size_index(J, p2p_bytes(nd), &sz);
        if (err)
            return err;
        R->key[i] = (w->p2p[i].group << 20) | sz;
    }
    J->res.kept += kept;
    if (!nsucc)
        return NBCX_SUCCESS;
    kept_succ(w, n, R, NULL);
    for (int i = 0; i < kept; i++)
        R->soff[i + 1] += R->soff[i];
    /* fill, with a cursor per node */
    uint32_t *cur = malloc(sizeof(uint32_t) * (size_t)kept);
    if (!cur)
        return NBCX_ERR_NOMEM;
    memcpy(cur, R->soff, sizeof(uint32_t) * (size_t)kept);
    kept_succ(w, n, R, cur);
    free(cur);
    return NBCX_SUCCESS;
}

int ck_rank_analyse(struct ck_job *J, int r, struct nbcx_sched_s *s,
                    const struct ck_regions *reg, int **map, uint32_t *nmap)
{
    struct ck_ws *w = J->ws;
    int err = ws_reserve(w, s->build.nnodes, s->build.nedges);
    if (!err && !grow(&w->p2p, &w->cap_p, 2L * s->build.nnodes + 1,
                      sizeof *w->p2p))
        err = NBCX_ERR_NOMEM;
    if (err)
        return err;
    w->gen++;
    struct rank_ctx c = { J, w, s, reg, r, 0, NULL };
    if (!map) {
        J->res.nodes += s->build.nnodes;
        J->res.edges += s->build.nedges;
    }
    bool edges_ok;
    if (!validate(&c, &edges_ok)) {
        J->fatal = true; /* the global checks would only add noise */
        if (!edges_ok)
            return NBCX_SUCCESS;
    }
    bool acyclic = local_order(&c) == s->build.nnodes;
    if (!acyclic)
        J->cyclic = true;
    int np = messages(&c, acyclic);
    if (!map)
        for (int i = 0; i < np; i++)
            J->res.messages += CK_KIND(w->p2p[i].group << 20) == 0;
    if (acyclic && !map) {
        err = check_buffers(&c);
        if (err)
            return err;
    }
    return compact(&c, np, acyclic, map, nmap);
}
