/*
 * loopback.c - the unit tests' transport: N virtual ranks in one process
 * and one thread (see loopback.h for the semantics).
 *
 * Every posted send or receive is an operation record (struct lb_op); the
 * executor's request slot holds just a pointer to it, so the executor may
 * move slots around freely. A record goes through three states:
 *
 *     POSTED  --match-->  MATCHED  --deliver-->  DONE  --reported--> freed
 *
 * POSTED records wait in one of two FIFO queues of their destination
 * rank: the receives it posted, and the sends addressed to it. A new send
 * takes the first receive of its destination with the same (source, tag);
 * a new receive takes the first send with the same (source, tag) (MPI's
 * non-overtaking order). Delivery packs the sender's data into bytes and
 * unpacks them at the receiver; both records are then DONE and each is
 * reported by its own rank's testsome. In ordered mode delivery happens
 * at match time and testsome reports every DONE record; in random mode
 * both happen at random later calls.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "loopback.h"

enum lb_state { LB_POSTED, LB_MATCHED, LB_DONE };

struct lb_op {
    struct lb_op *prev, *next; /* in a queue, while POSTED */
    struct lb_op *lprev, *lnext; /* live sends: in the owner's list */
    uintptr_t lo, hi;          /* bytes [lo, hi) the operation touches */
    bool is_send;
    int state;
    int err;                   /* of a DONE receive */
    int rank, peer, tag;       /* owner, the other side, transport tag */
    void *buf;
    int count;
    struct nbcx_datatype_s *type;
    struct lb_op *partner;     /* while MATCHED */
    long serial;               /* posting order, for messages */
};

struct lb_queue {
    struct lb_op *head, *tail;
};

/* The live receives of a rank that touch memory, sorted by address. They
 * never overlap (that is checked), so their ends are sorted too and one
 * binary search finds any overlap. */
struct lb_ranges {
    struct lb_op **v;
    int n, cap;
};

struct lb_world {
    int nranks;
    int refs;                  /* the creator + one per endpoint */
    struct loopback_options opt;
    int *nodes;                /* opt.nodes, copied (NULL: none) */
    uint64_t rng;
    struct lb_queue *recvs;    /* [r]: unmatched receives posted by r */
    struct lb_queue *sends;    /* [r]: unmatched sends addressed to r */
    struct lb_op **live_sends; /* [r]: sends posted by r, not released */
    struct lb_ranges *live_recvs; /* [r]: receives of r, not released */
    long posted, matched, live, unmatched;
    long cross;                /* matched between two nodes (nodes set) */
    long pairs;                /* MATCHED pairs not yet delivered */
    long unreported;           /* DONE records not yet reported */
    long activity;             /* bumped by every change of state */
    struct nbcxi_transport_ops ops; /* lb_ops, with opt.segsize */
};

/* The transport state of one virtual rank. */
struct lb_endpoint {
    struct lb_world *w;
    int rank;
};

static const struct nbcxi_transport_ops lb_ops;

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

/* splitmix64: small, good enough to pick random legal orders. */
static uint64_t lb_rand(struct lb_world *w)
{
    uint64_t z = (w->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* In ordered mode always; in random mode with probability 1/2. */
static bool lb_now(struct lb_world *w)
{
    return w->opt.mode == LOOPBACK_ORDERED || (lb_rand(w) & 1u);
}

static void q_append(struct lb_queue *q, struct lb_op *op)
{
    op->next = NULL;
    op->prev = q->tail;
    if (q->tail)
        q->tail->next = op;
    else
        q->head = op;
    q->tail = op;
}

static void q_remove(struct lb_queue *q, struct lb_op *op)
{
    if (op->prev)
        op->prev->next = op->next;
    else
        q->head = op->next;
    if (op->next)
        op->next->prev = op->prev;
    else
        q->tail = op->prev;
    op->prev = op->next = NULL;
}

static struct lb_op *slot_get(const void *slot)
{
    struct lb_op *op;
    memcpy(&op, slot, sizeof op);
    return op;
}

static void slot_put(void *slot, struct lb_op *op)
{
    memcpy(slot, &op, sizeof op);
}

static void world_unref(struct lb_world *w)
{
    if (--w->refs > 0)
        return;
    /* Every record is released by testsome or cancel before the last
     * communicator goes away; anything left is a bug of the engine. */
    long left = 0;
    for (int r = 0; r < w->nranks; r++) {
        struct lb_queue *qs[2] = { &w->recvs[r], &w->sends[r] };
        for (int k = 0; k < 2; k++) {
            while (qs[k]->head) {
                struct lb_op *op = qs[k]->head;
                q_remove(qs[k], op);
                free(op);
                left++;
            }
        }
    }
    if (left || w->live != left)
        fprintf(stderr, "loopback: world freed with %ld operations never "
                "released by nbcx (%ld unmatched)\n", w->live, left);
    free(w->nodes);
    free(w->recvs);
    free(w->sends);
    for (int r = 0; r < w->nranks; r++)
        free(w->live_recvs[r].v);
    free(w->live_sends);
    free(w->live_recvs);
    free(w);
}

/* ------------------------------------------------------------------ */
/* Buffers of pending operations                                       */
/* ------------------------------------------------------------------ */

/* Index of the first live receive that ends after lo. */
static int ranges_find(const struct lb_ranges *rg, uintptr_t lo)
{
    int a = 0, b = rg->n;
    while (a < b) {
        int m = a + (b - a) / 2;
        if (rg->v[m]->hi <= lo)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

/* A live operation of `rank` that [lo, hi) may not share bytes with: any
 * receive; for a new receive, any send as well. NULL if none. */
static struct lb_op *conflict(struct lb_world *w, int rank, bool is_send,
                              uintptr_t lo, uintptr_t hi)
{
    if (lo >= hi)
        return NULL;
    const struct lb_ranges *rg = &w->live_recvs[rank];
    int i = ranges_find(rg, lo);
    if (i < rg->n && rg->v[i]->lo < hi)
        return rg->v[i];
    if (!is_send)
        for (struct lb_op *o = w->live_sends[rank]; o; o = o->lnext)
            if (o->lo < hi && lo < o->hi)
                return o;
    return NULL;
}

static bool live_add(struct lb_world *w, struct lb_op *op)
{
    if (op->is_send) {
        op->lnext = w->live_sends[op->rank];
        if (op->lnext)
            op->lnext->lprev = op;
        w->live_sends[op->rank] = op;
        return true;
    }
    if (op->lo >= op->hi)
        return true; /* touches no memory */
    struct lb_ranges *rg = &w->live_recvs[op->rank];
    if (rg->n == rg->cap) {
        int cap = rg->cap ? 2 * rg->cap : 16;
        struct lb_op **v = realloc(rg->v, sizeof *v * (size_t)cap);
        if (!v)
            return false;
        rg->v = v;
        rg->cap = cap;
    }
    int i = ranges_find(rg, op->lo); /* no overlap: its place in order */
    memmove(rg->v + i + 1, rg->v + i, sizeof *rg->v * (size_t)(rg->n - i));
    rg->v[i] = op;
    rg->n++;
    return true;
}

static void live_remove(struct lb_world *w, struct lb_op *op)
{
    if (op->is_send) {
        if (op->lprev)
            op->lprev->lnext = op->lnext;
        else
            w->live_sends[op->rank] = op->lnext;
        if (op->lnext)
            op->lnext->lprev = op->lprev;
        return;
    }
    if (op->lo >= op->hi)
        return;
    struct lb_ranges *rg = &w->live_recvs[op->rank];
    int i = ranges_find(rg, op->lo);
    if (i < rg->n && rg->v[i] == op) {
        memmove(rg->v + i, rg->v + i + 1,
                sizeof *rg->v * (size_t)(rg->n - i - 1));
        rg->n--;
    }
}

/* ------------------------------------------------------------------ */
/* Matching and delivery                                               */
/* ------------------------------------------------------------------ */

static void tag_split(int tag, unsigned *seq, int *stag)
{
    *seq = (unsigned)tag >> 12;
    *stag = tag & NBCX_SCHED_TAG_MAX;
}

/* Moves the data of send s into receive r; both become DONE. */
static void deliver(struct lb_world *w, struct lb_op *s, struct lb_op *r)
{
    size_t bytes = (size_t)s->count * s->type->size;
    size_t cap = (size_t)r->count * r->type->size;
    int err = NBCX_SUCCESS;
    int n = (int)(r->type->size ? bytes / r->type->size : 0);
    unsigned seq;
    int stag;
    tag_split(r->tag, &seq, &stag);
    if (bytes > cap) {
        err = NBCX_ERR_TRUNCATE;
        n = r->count; /* MPI fills the receive buffer, no more */
        if (!w->opt.quiet)
            fprintf(stderr, "loopback: rank %d receives %zu bytes from rank "
                    "%d (seq %u, tag %d) into %zu bytes: truncated\n",
                    r->rank, bytes, s->rank, seq, stag, cap);
    } else if (r->type->size && bytes % r->type->size) {
        err = NBCX_ERR_TRANSPORT;
        if (!w->opt.quiet)
            fprintf(stderr, "loopback: rank %d receives %zu bytes from rank "
                    "%d (seq %u, tag %d) as %s (%zu bytes each): type "
                    "signatures differ\n", r->rank, bytes, s->rank, seq,
                    stag, r->type->name, r->type->size);
    }
    if (bytes > 0) {
        void *tmp = malloc(bytes);
        int e = tmp ? nbcxi_type_pack(s->buf, s->count, s->type, tmp)
                    : NBCX_ERR_NOMEM;
        if (e == NBCX_SUCCESS && n > 0)
            e = nbcxi_type_unpack(tmp, n, r->type, r->buf);
        free(tmp);
        if (err == NBCX_SUCCESS)
            err = e;
    }
    s->state = r->state = LB_DONE;
    s->partner = r->partner = NULL;
    s->err = NBCX_SUCCESS; /* MPI: truncation is the receiver's error */
    r->err = err;
    w->pairs--;
    w->unreported += 2;
    w->activity++;
}

static void match(struct lb_world *w, struct lb_op *s, struct lb_op *r)
{
    s->state = r->state = LB_MATCHED;
    s->partner = r;
    r->partner = s;
    w->matched++;
    if (w->nodes && w->nodes[s->rank] != w->nodes[r->rank])
        w->cross++;
    w->pairs++;
    if (w->opt.mode == LOOPBACK_ORDERED)
        deliver(w, s, r);
}

static int post(nbcxi_transport *t, bool is_send, const void *buf,
                int count, struct nbcx_datatype_s *type, int peer, int tag,
                void *req)
{
    struct lb_endpoint *ep = t->state;
    struct lb_world *w = ep->w;
    if (peer < 0 || peer >= w->nranks || tag < 0 || tag > t->tag_ub ||
        count < 0) {
        if (!w->opt.quiet)
            fprintf(stderr, "loopback: rank %d posts a %s with peer %d, "
                    "tag %d, count %d (world of %d, tag_ub %d)\n", ep->rank,
                    is_send ? "send" : "receive", peer, tag, count,
                    w->nranks, t->tag_ub);
        return NBCX_ERR_TRANSPORT;
    }
    /* The bytes the operation touches; a receive must not share any with
     * another live operation of its rank, a send none with a live
     * receive (MPI: buffers of pending operations are off limits). */
    uintptr_t lo = 0, hi = 0;
    if (count > 0 && type->size > 0) {
        ptrdiff_t shift;
        size_t span = nbcxi_type_span(type, count, &shift);
        lo = (uintptr_t)buf - (uintptr_t)shift;
        hi = lo + span;
    }
    struct lb_op *o = conflict(w, ep->rank, is_send, lo, hi);
    if (o) {
        if (!w->opt.quiet) {
            unsigned seq, oseq;
            int stag, ostag;
            tag_split(tag, &seq, &stag);
            tag_split(o->tag, &oseq, &ostag);
            fprintf(stderr, "loopback: rank %d posts a %s (peer %d, seq %u, "
                    "tag %d) on bytes that a pending %s (peer %d, seq %u, "
                    "tag %d) uses: a missing dependency\n", ep->rank,
                    is_send ? "send" : "receive", peer, seq, stag,
                    o->is_send ? "send" : "receive", o->peer, oseq, ostag);
        }
        return NBCX_ERR_TRANSPORT;
    }

    struct lb_op *op = calloc(1, sizeof *op);
    if (!op)
        return NBCX_ERR_NOMEM;
    op->lo = lo;
    op->hi = hi;
    op->is_send = is_send;
    op->rank = ep->rank;
    if (!live_add(w, op)) {
        free(op);
        return NBCX_ERR_NOMEM;
    }
    op->state = LB_POSTED;
    op->peer = peer;
    op->tag = tag;
    op->buf = (void *)(uintptr_t)buf;
    op->count = count;
    op->type = type;
    op->serial = w->posted++;
    w->live++;
    w->activity++;
    slot_put(req, op);

    /* The first posted counterpart with the same (source, tag). */
    struct lb_queue *q = is_send ? &w->recvs[peer] : &w->sends[ep->rank];
    int want_src = is_send ? ep->rank : peer;
    for (struct lb_op *c = q->head; c; c = c->next) {
        int src = is_send ? c->peer : c->rank;
        if (src == want_src && c->tag == tag) {
            q_remove(q, c);
            w->unmatched--;
            if (is_send)
                match(w, op, c);
            else
                match(w, c, op);
            return NBCX_SUCCESS;
        }
    }
    q_append(is_send ? &w->sends[peer] : &w->recvs[ep->rank], op);
    w->unmatched++;
    return NBCX_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* The transport functions                                             */
/* ------------------------------------------------------------------ */

static int lb_isend(nbcxi_transport *t, const void *buf, int count,
                    struct nbcx_datatype_s *type, int peer, int tag,
                    void *req)
{
    return post(t, true, buf, count, type, peer, tag, req);
}

static int lb_irecv(nbcxi_transport *t, void *buf, int count,
                    struct nbcx_datatype_s *type, int peer, int tag,
                    void *req)
{
    return post(t, false, buf, count, type, peer, tag, req);
}

static void release(struct lb_world *w, struct lb_op *op)
{
    if (op->state == LB_DONE)
        w->unreported--;
    live_remove(w, op);
    w->live--;
    w->activity++;
    free(op);
}

static int lb_testsome(nbcxi_transport *t, int n, void *reqs, int *ndone,
                       int *idx)
{
    struct lb_world *w = ((struct lb_endpoint *)t->state)->w;
    size_t rsz = lb_ops.req_size;
    int k = 0;
    *ndone = 0;
    for (int i = 0; i < n; i++) {
        struct lb_op *op = slot_get((char *)reqs + (size_t)i * rsz);
        if (op->state == LB_MATCHED && lb_now(w)) {
            if (op->is_send)
                deliver(w, op, op->partner);
            else
                deliver(w, op->partner, op);
        }
        if (op->state != LB_DONE)
            continue;
        if (op->err != NBCX_SUCCESS)
            return op->err; /* the executor cancels every slot */
        if (lb_now(w))
            idx[k++] = i;
    }
    if (w->opt.mode == LOOPBACK_RANDOM) /* any order is legal */
        for (int i = k - 1; i > 0; i--) {
            int j = (int)(lb_rand(w) % (uint64_t)(i + 1));
            int tmp = idx[i];
            idx[i] = idx[j];
            idx[j] = tmp;
        }
    for (int i = 0; i < k; i++) {
        char *slot = (char *)reqs + (size_t)idx[i] * rsz;
        release(w, slot_get(slot));
        slot_put(slot, NULL);
    }
    *ndone = k;
    return NBCX_SUCCESS;
}

/* Error paths only. A matched operation cannot be cancelled (as in MPI):
 * it is delivered first, so its partner completes normally. */
static void lb_cancel(nbcxi_transport *t, void *req)
{
    struct lb_endpoint *ep = t->state;
    struct lb_world *w = ep->w;
    struct lb_op *op = slot_get(req);
    if (!op)
        return;
    if (op->state == LB_POSTED) {
        q_remove(op->is_send ? &w->sends[op->peer] : &w->recvs[op->rank],
                 op);
        w->unmatched--;
    } else if (op->state == LB_MATCHED) {
        if (op->is_send)
            deliver(w, op, op->partner);
        else
            deliver(w, op->partner, op);
    }
    release(w, op);
    slot_put(req, NULL);
}

static void lb_destroy(nbcxi_transport *t)
{
    struct lb_endpoint *ep = t->state;
    world_unref(ep->w);
    free(ep);
    free(t);
}

static int lb_node_of(const nbcxi_transport *t, int r)
{
    const struct lb_endpoint *ep = t->state;
    return ep->w->nodes[r];
}

static size_t lb_lazy_max(const nbcxi_transport *t)
{
    const struct lb_endpoint *ep = t->state;
    return ep->w->opt.lazy_max;
}

/* One thread drives all ranks of a loopback world: its queues take no
 * lock, and its deadlock detector counts polls that moved nothing. So it
 * declares itself not safe for a progress thread (no
 * NBCXI_CAP_PROGRESS_THREAD): a program that uses it runs in caller mode
 * unless its environment (CTest sets NBCX_PROGRESS=caller too) or the
 * test itself (nbcx_progress_set) chooses another; a test run by hand
 * under the default auto mode's progress thread corrupted memory. (Also
 * when nbcx_info came first: the default waits for a transport,
 * progress/modes.c, tests/unit/test_mode.c.) */
static const struct nbcxi_transport_ops lb_ops = {
    .name = "loopback",
    .req_size = sizeof(struct lb_op *),
    .isend = lb_isend,
    .irecv = lb_irecv,
    .testsome = lb_testsome,
    .cancel = lb_cancel,
    .destroy = lb_destroy,
    .caps = 0,
};

/* ------------------------------------------------------------------ */
/* Worlds                                                              */
/* ------------------------------------------------------------------ */

static struct lb_world *world_of(nbcx_comm comm)
{
    struct nbcx_comm_s *c = nbcxi_comm(comm);
    if (!c || c->tp->ops->isend != lb_isend)
        return NULL;
    return ((struct lb_endpoint *)c->tp->state)->w;
}

int loopback_world_create_ex(int nranks, const struct loopback_options *opt,
                             nbcx_comm comms[])
{
    if (nranks <= 0 || !comms)
        return NBCX_ERR_ARG;
    for (int r = 0; r < nranks; r++)
        comms[r] = NBCX_COMM_NULL;
    struct lb_world *w = calloc(1, sizeof *w);
    if (!w)
        return NBCX_ERR_NOMEM;
    w->recvs = calloc((size_t)nranks, sizeof *w->recvs);
    w->sends = calloc((size_t)nranks, sizeof *w->sends);
    w->live_sends = calloc((size_t)nranks, sizeof *w->live_sends);
    w->live_recvs = calloc((size_t)nranks, sizeof *w->live_recvs);
    w->nranks = nranks;
    w->refs = 1;
    if (opt)
        w->opt = *opt;
    if (w->opt.tag_ub == 0)
        w->opt.tag_ub = INT32_MAX;
    w->ops = lb_ops;
    w->ops.segsize = w->opt.segsize;
    if (w->opt.lazy_max)
        w->ops.carries_max = lb_lazy_max;
    w->rng = w->opt.seed;
    if (w->opt.nodes) {
        w->nodes = malloc(sizeof(int) * (size_t)nranks);
        if (w->nodes) {
            memcpy(w->nodes, w->opt.nodes, sizeof(int) * (size_t)nranks);
            w->ops.node_of = lb_node_of;
        }
        w->opt.nodes = NULL;
    }
    int err = (w->recvs && w->sends && w->live_sends && w->live_recvs &&
               (!opt || !opt->nodes || w->nodes))
                  ? NBCX_SUCCESS
                  : NBCX_ERR_NOMEM;

    for (int r = 0; r < nranks && err == NBCX_SUCCESS; r++) {
        nbcxi_transport *t = calloc(1, sizeof *t);
        struct lb_endpoint *ep = calloc(1, sizeof *ep);
        if (!t || !ep) {
            free(t);
            free(ep);
            err = NBCX_ERR_NOMEM;
            break;
        }
        ep->w = w;
        ep->rank = r;
        w->refs++;
        t->ops = &w->ops;
        t->tag_ub = w->opt.tag_ub;
        t->state = ep;
        t->medium = (enum nbcxi_medium)w->opt.medium;
        t->one_node = w->opt.one_node;
        for (int q = 0; w->nodes && q < nranks; q++)
            t->nnodes += w->nodes[q] == q;
        /* Takes ownership of t, and destroys it on failure. */
        err = nbcxi_comm_create(r, nranks, t, &comms[r]);
    }
    if (err != NBCX_SUCCESS)
        loopback_world_destroy(nranks, comms);
    world_unref(w); /* the endpoints keep it alive */
    return err;
}

int loopback_world_create(int nranks, nbcx_comm comms[])
{
    return loopback_world_create_ex(nranks, NULL, comms);
}

void loopback_world_destroy(int nranks, nbcx_comm comms[])
{
    for (int r = 0; r < nranks; r++)
        if (comms[r] != NBCX_COMM_NULL)
            nbcx_comm_free(&comms[r]);
}

int loopback_stats(nbcx_comm comm, struct loopback_stats *st)
{
    struct lb_world *w = world_of(comm);
    if (!w || !st)
        return NBCX_ERR_ARG;
    st->posted = w->posted;
    st->matched = w->matched;
    st->cross = w->cross;
    st->live = w->live;
    st->unmatched = w->unmatched;
    return NBCX_SUCCESS;
}

void loopback_dump(nbcx_comm comm)
{
    struct lb_world *w = world_of(comm);
    if (!w)
        return;
    int shown = 0, limit = 40;
    fprintf(stderr, "loopback: %ld operations unmatched in a world of %d "
            "ranks:\n", w->unmatched, w->nranks);
    for (int r = 0; r < w->nranks; r++) {
        struct lb_queue *qs[2] = { &w->recvs[r], &w->sends[r] };
        for (int k = 0; k < 2; k++) {
            for (struct lb_op *o = qs[k]->head; o; o = o->next) {
                if (shown++ >= limit)
                    continue;
                unsigned seq;
                int stag;
                tag_split(o->tag, &seq, &stag);
                fprintf(stderr, "  rank %d: %s %s rank %d, seq %u, tag %d, "
                        "%d x %s (posted #%ld)\n", o->rank,
                        o->is_send ? "send" : "recv",
                        o->is_send ? "to" : "from", o->peer, seq, stag,
                        o->count, o->type->name, o->serial);
            }
        }
    }
    if (shown > limit)
        fprintf(stderr, "  ... and %d more\n", shown - limit);
}

int loopback_waitall(nbcx_comm comm, int n, nbcx_request reqs[])
{
    struct lb_world *w = world_of(comm);
    if (!w)
        return NBCX_ERR_ARG;
    for (;;) {
        long before = w->activity;
        int flag = 0;
        int err = nbcx_testall(n, reqs, &flag);
        if (flag || err != NBCX_SUCCESS)
            return err;
        /* Nothing moved in a whole pass over every operation, and nothing
         * is waiting for a random delivery or report: frozen for good. */
        if (w->activity == before && w->pairs == 0 && w->unreported == 0) {
            fprintf(stderr, "loopback: deadlock (no request can complete)"
                    "\n");
            loopback_dump(comm);
            return LOOPBACK_DEADLOCK;
        }
    }
}
