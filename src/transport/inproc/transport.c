/* transport.c - the in-process transport: ranks are threads of one process
 * (nbcx_inproc_run), messages move through shared memory. After the
 * shared-memory device of FastMPJ (smdev, Ramos et al., paper 000,
 * Section 3.1).
 *
 * Queues. Every rank r has a pair of FIFO queues: the receives r posted
 * that no message has matched yet, and the messages sent to r that no
 * receive has matched yet ("unexpected"). A send to r first looks for
 * the oldest matching receive of r, a receive for the oldest matching
 * message; matching is on (source, tag), in posting order (MPI's
 * non-overtaking rule; there are no wildcards). Both queues of r are
 * guarded by r's own lock and nothing else: there is no global lock, and
 * two pairs of ranks never contend. (One lock for the pair rather than
 * one per queue: a send and a receive meeting at the same moment must
 * each see the other's queue as it is, or both could miss each other and
 * wait forever. The lock is held only to search and link; data is
 * copied outside it.)
 *
 * Protocols (paper 000, Fig. 1):
 *   - the receive is there first: the sender copies straight from its
 *     buffer into the receive buffer and completes both (zero copy);
 *   - the message is first and small (at most NBCX_INPROC_EAGER bytes,
 *     default 16 KiB): eager. The sender packs it into a buffer of the
 *     message record and completes at once; the receiver unpacks it;
 *   - the message is first and large: rendezvous. The sender leaves a
 *     reference to its buffer; the receiver copies from it straight into
 *     the receive buffer, then completes both.
 * So whichever side comes second does the single copy (two for eager).
 * Derived, non-contiguous datatypes are moved with their pack/unpack;
 * a message longer than the receive buffer fills it and fails the
 * receive with NBCX_ERR_TRUNCATE, as in MPI.
 *
 * Requests. The executor's request slot holds a pointer: either to an
 * operation record (struct ip_req) still waiting for its counterpart, or
 * into the static array ip_done[], whose element e means "complete, with
 * error e" (an operation completed when posted needs no record). A record
 * is completed by the other side with a release store of `done`, seen by
 * testsome with an acquire load; the owner then recycles it. Records come
 * from a small free list per rank (under that rank's lock), so the hot
 * path does not call malloc; eager records keep their payload buffer.
 *
 * Failure. When a rank's body returns an error (nbcx_inproc_run), the
 * world is marked failed: requests still pending, and slot collectives
 * (slots.c), then fail with NBCX_ERR_TRANSPORT instead of waiting for
 * a rank that is gone.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "inproc.h"

/* Free records kept per rank; beyond the first IP_POOL_BIG_MAX of them
 * a record drops an eager payload buffer larger than IP_POOL_BIG bytes. */
enum { IP_POOL_MAX = 256, IP_POOL_BIG_MAX = 16, IP_POOL_BIG = 4096 };

struct ip_req {
    struct ip_req *prev, *next; /* in a queue (under the lock of `rank`) */
    atomic_int done;            /* set by the side that completes it */
    int err;                    /* the operation's result, once done */
    int rank;                   /* whose queue and free list it is in */
    bool queued;                /* in the queue (under the lock) */
    bool msg;                   /* a message (else a posted receive) */
    bool eager;                 /* a message carrying its payload */
    int src, tag;               /* the sender; the transport tag */
    void *buf;                  /* receive buffer / rendezvous source */
    int count;
    struct nbcx_datatype_s *type;
    void *payload;              /* eager: packed data, cap bytes */
    size_t bytes, cap;
};

struct ip_queue {
    struct ip_req *head, *tail;
};

struct ip_rank {
    _Alignas(NBCXI_CACHE_LINE) pthread_mutex_t lock;
    struct ip_queue recvs; /* receives posted by this rank, unmatched */
    struct ip_queue msgs;  /* messages sent to this rank, unmatched   */
    struct ip_req *pool;   /* free records (linked through next)     */
    int npool;
};

struct ip_world {
    int nranks;
    atomic_int refs;       /* endpoints + a running nbcx_inproc_run */
    atomic_bool failed;    /* (a split's world uses its root's: shm.failed) */
    struct ip_world *root; /* a split's: the world of nbcx_inproc_run */
    size_t eager;          /* NBCX_INPROC_EAGER */
    size_t node_ranks;     /* NBCX_NODE_RANKS (0: one node, the truth) */
    struct ip_rank *ranks;
    struct nbcxi_shm shm;
};

struct ip_endpoint {
    struct ip_world *w;
    int rank;
};

/* ip_done[e]: a request complete with error e, needing no record. */
static const char ip_done[NBCX_ERR_LASTCODE];

extern const struct nbcxi_transport_ops nbcxi_inproc_ops;

/* ------------------------------------------------------------------ */
/* Slots and records                                                   */
/* ------------------------------------------------------------------ */

static void *slot_get(const void *slot)
{
    void *p;
    memcpy(&p, slot, sizeof p);
    return p;
}

static void slot_put(void *slot, const void *p)
{
    memcpy(slot, &p, sizeof p);
}

static const void *done_mark(int err)
{
    return &ip_done[err >= 0 && err < NBCX_ERR_LASTCODE ? err
                                                        : NBCX_ERR_INTERN];
}

/* The error of a done mark, or -1 if p is a record. */
static int done_err(const void *p)
{
    const char *c = p;
    return c >= ip_done && c < ip_done + NBCX_ERR_LASTCODE
               ? (int)(c - ip_done)
               : -1;
}

static void q_append(struct ip_queue *q, struct ip_req *r)
{
    r->next = NULL;
    r->prev = q->tail;
    if (q->tail)
        q->tail->next = r;
    else
        q->head = r;
    q->tail = r;
    r->queued = true;
}

static void q_remove(struct ip_queue *q, struct ip_req *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        q->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        q->tail = r->prev;
    r->prev = r->next = NULL;
    r->queued = false;
}

/* The oldest record of q from src with tag, or NULL. */
static struct ip_req *q_find(const struct ip_queue *q, int src, int tag)
{
    for (struct ip_req *r = q->head; r; r = r->next)
        if (r->src == src && r->tag == tag)
            return r;
    return NULL;
}

/* A record from rank's free list (lock held), or a new one. */
static struct ip_req *req_get_locked(struct ip_rank *rk, int rank)
{
    struct ip_req *r = rk->pool;
    if (r) {
        rk->pool = r->next;
        rk->npool--;
    } else if (!(r = calloc(1, sizeof *r))) {
        return NULL;
    }
    void *payload = r->payload;
    size_t cap = r->cap;
    memset(r, 0, sizeof *r);
    r->payload = payload;
    r->cap = cap;
    r->rank = rank;
    atomic_init(&r->done, 0);
    return r;
}

static void req_free_locked(struct ip_rank *rk, struct ip_req *r)
{
    if (r->cap > IP_POOL_BIG && rk->npool >= IP_POOL_BIG_MAX) {
        free(r->payload);
        r->payload = NULL;
        r->cap = 0;
    }
    if (rk->npool < IP_POOL_MAX) {
        r->next = rk->pool;
        rk->pool = r;
        rk->npool++;
    } else {
        free(r->payload);
        free(r);
    }
}

static void req_free(struct ip_world *w, struct ip_req *r)
{
    struct ip_rank *rk = &w->ranks[r->rank];
    pthread_mutex_lock(&rk->lock);
    req_free_locked(rk, r);
    pthread_mutex_unlock(&rk->lock);
}

/* ------------------------------------------------------------------ */
/* Moving data                                                         */
/* ------------------------------------------------------------------ */

/* How many whole receive elements `bytes` fill, and the receive's error:
 * NBCX_ERR_TRUNCATE if they do not fit (the buffer is filled), and
 * NBCX_ERR_TRANSPORT if they end inside an element (the type signatures
 * differ; the whole elements are delivered). */
static int fit(size_t bytes, int rcount, const struct nbcx_datatype_s *rt,
               int *n)
{
    size_t cap = (size_t)rcount * rt->size;
    if (bytes > cap) {
        *n = rcount;
        return NBCX_ERR_TRUNCATE;
    }
    *n = rt->size ? (int)(bytes / rt->size) : 0;
    return rt->size && bytes % rt->size ? NBCX_ERR_TRANSPORT : NBCX_SUCCESS;
}

/* Unpacks packed bytes into a receive buffer; the receive's result. */
static int deliver_packed(const void *data, size_t bytes, void *rbuf,
                          int rcount, struct nbcx_datatype_s *rt)
{
    int n;
    int err = fit(bytes, rcount, rt, &n);
    int e = nbcxi_type_unpack(data, n, rt, rbuf);
    return err ? err : e;
}

/* The single copy of a message from the send buffer into the receive
 * buffer; returns the receive's result. */
static int deliver(const void *sbuf, int scount, struct nbcx_datatype_s *st,
                   void *rbuf, int rcount, struct nbcx_datatype_s *rt)
{
    size_t bytes = (size_t)scount * st->size;
    int n;
    int err = fit(bytes, rcount, rt, &n);
    if (err == NBCX_SUCCESS)
        return nbcxi_type_move(sbuf, scount, st, rbuf, n, rt);
    /* Error paths: whatever fits, through a packed copy. */
    void *tmp = malloc(bytes ? bytes : 1);
    int e = tmp ? nbcxi_type_pack(sbuf, scount, st, tmp) : NBCX_ERR_NOMEM;
    if (e == NBCX_SUCCESS)
        e = nbcxi_type_unpack(tmp, n, rt, rbuf);
    free(tmp);
    return err;
}

/* Completes a record for the side that waits on it. */
static void complete(struct ip_req *r, int err)
{
    r->err = err;
    atomic_store_explicit(&r->done, 1, memory_order_release);
}

/* ------------------------------------------------------------------ */
/* The transport functions                                             */
/* ------------------------------------------------------------------ */

static struct ip_endpoint *ep_of(const nbcxi_transport *t)
{
    return t->state;
}

/* The rank whose queues a message between us and peer goes through
 * (peer's when we send, ours when we receive), locked; NULL when peer or
 * count is off. */
static struct ip_rank *lock_queues(struct ip_endpoint *ep, int peer,
                                   int count, bool send)
{
    struct ip_world *w = ep->w;
    if (peer < 0 || peer >= w->nranks || count < 0)
        return NULL;
    struct ip_rank *rk = &w->ranks[send ? peer : ep->rank];
    pthread_mutex_lock(&rk->lock);
    return rk;
}

static int ip_isend(nbcxi_transport *t, const void *buf, int count,
                    struct nbcx_datatype_s *type, int peer, int tag,
                    void *req)
{
    struct ip_endpoint *ep = ep_of(t);
    struct ip_rank *rk = lock_queues(ep, peer, count, true);
    if (!rk)
        return NBCX_ERR_TRANSPORT;
    struct ip_req *r = q_find(&rk->recvs, ep->rank, tag);
    if (r) { /* the receive is waiting: copy straight into it */
        q_remove(&rk->recvs, r);
        pthread_mutex_unlock(&rk->lock);
        complete(r, deliver(buf, count, type, r->buf, r->count, r->type));
        slot_put(req, done_mark(NBCX_SUCCESS));
        return NBCX_SUCCESS;
    }
    struct ip_req *m = req_get_locked(rk, peer);
    if (!m) {
        pthread_mutex_unlock(&rk->lock);
        return NBCX_ERR_NOMEM;
    }
    m->msg = true;
    m->src = ep->rank;
    m->tag = tag;
    size_t bytes = (size_t)count * type->size;
    if (bytes <= ep->w->eager) { /* eager: packed now, complete now */
        if (m->cap < bytes) {
            void *p = realloc(m->payload, bytes);
            if (!p) {
                req_free_locked(rk, m);
                pthread_mutex_unlock(&rk->lock);
                return NBCX_ERR_NOMEM;
            }
            m->payload = p;
            m->cap = bytes;
        }
        int err = nbcxi_type_pack(buf, count, type, m->payload);
        if (err != NBCX_SUCCESS) {
            req_free_locked(rk, m);
            pthread_mutex_unlock(&rk->lock);
            return err;
        }
        m->eager = true;
        m->bytes = bytes;
        q_append(&rk->msgs, m);
        pthread_mutex_unlock(&rk->lock);
        slot_put(req, done_mark(NBCX_SUCCESS));
        return NBCX_SUCCESS;
    }
    /* rendezvous: the receiver copies from our buffer */
    m->buf = (void *)(uintptr_t)buf;
    m->count = count;
    m->type = type;
    q_append(&rk->msgs, m);
    pthread_mutex_unlock(&rk->lock);
    slot_put(req, m);
    return NBCX_SUCCESS;
}

static int ip_irecv(nbcxi_transport *t, void *buf, int count,
                    struct nbcx_datatype_s *type, int peer, int tag,
                    void *req)
{
    struct ip_endpoint *ep = ep_of(t);
    struct ip_rank *rk = lock_queues(ep, peer, count, false);
    if (!rk)
        return NBCX_ERR_TRANSPORT;
    struct ip_req *m = q_find(&rk->msgs, peer, tag);
    if (m) { /* the message is here: take it */
        q_remove(&rk->msgs, m);
        pthread_mutex_unlock(&rk->lock);
        int err;
        if (m->eager) {
            err = deliver_packed(m->payload, m->bytes, buf, count, type);
            req_free(ep->w, m);
        } else {
            err = deliver(m->buf, m->count, m->type, buf, count, type);
            complete(m, NBCX_SUCCESS); /* truncation is the receiver's */
        }
        slot_put(req, done_mark(err));
        return NBCX_SUCCESS;
    }
    struct ip_req *r = req_get_locked(rk, ep->rank);
    if (!r) {
        pthread_mutex_unlock(&rk->lock);
        return NBCX_ERR_NOMEM;
    }
    r->src = peer;
    r->tag = tag;
    r->buf = buf;
    r->count = count;
    r->type = type;
    q_append(&rk->recvs, r);
    pthread_mutex_unlock(&rk->lock);
    slot_put(req, r);
    return NBCX_SUCCESS;
}

/* Takes a pending record back: out of its queue if no one matched it
 * yet, else after the side that matched it has finished copying. */
static void withdraw(struct ip_world *w, struct ip_req *r)
{
    struct ip_rank *rk = &w->ranks[r->rank];
    pthread_mutex_lock(&rk->lock);
    bool queued = r->queued;
    if (queued)
        q_remove(r->msg ? &rk->msgs : &rk->recvs, r);
    pthread_mutex_unlock(&rk->lock);
    if (!queued)
        while (!atomic_load_explicit(&r->done, memory_order_acquire))
            sched_yield(); /* a copy in progress on another thread */
    req_free(w, r);
}

static int ip_testsome(nbcxi_transport *t, int n, void *reqs, int *ndone,
                       int *idx)
{
    struct ip_world *w = ep_of(t)->w;
    bool failed = atomic_load_explicit(w->shm.failed, memory_order_relaxed);
    int out = 0, err = NBCX_SUCCESS;
    for (int i = 0; i < n; i++) {
        void *slot = (char *)reqs + (size_t)i * nbcxi_inproc_ops.req_size;
        struct ip_req *r = slot_get(slot);
        int e = done_err(r);
        if (e < 0) {
            if (atomic_load_explicit(&r->done, memory_order_acquire)) {
                e = r->err;
                req_free(w, r);
            } else if (failed) {
                withdraw(w, r);
                e = NBCX_ERR_TRANSPORT;
            } else {
                continue;
            }
        }
        /* released: a cancel (the executor cancels everything once we
         * report an error) must find nothing to do */
        slot_put(slot, done_mark(e));
        idx[out++] = i;
        if (err == NBCX_SUCCESS)
            err = e;
    }
    *ndone = out;
    return err;
}

static void ip_cancel(nbcxi_transport *t, void *slot)
{
    struct ip_req *r = slot_get(slot);
    if (done_err(r) >= 0)
        return;
    if (atomic_load_explicit(&r->done, memory_order_acquire))
        req_free(ep_of(t)->w, r);
    else
        withdraw(ep_of(t)->w, r);
}

/* ------------------------------------------------------------------ */
/* Worlds                                                              */
/* ------------------------------------------------------------------ */

static void *aligned_calloc(size_t n, size_t size)
{
    size_t bytes = n * size;
    bytes = (bytes + NBCXI_CACHE_LINE - 1) / NBCXI_CACHE_LINE *
            NBCXI_CACHE_LINE;
    void *p = aligned_alloc(NBCXI_CACHE_LINE, bytes ? bytes : NBCXI_CACHE_LINE);
    if (p)
        memset(p, 0, bytes);
    return p;
}

static void free_list(struct ip_req *r)
{
    while (r) {
        struct ip_req *next = r->next;
        free(r->payload);
        free(r);
        r = next;
    }
}

static void world_unref(struct ip_world *w);

static void world_free(struct ip_world *w)
{
    if (w->ranks) {
        for (int i = 0; i < w->nranks; i++) {
            struct ip_rank *rk = &w->ranks[i];
            /* Completed operations release their records; only eager
             * messages never received can be left (a program that did not
             * receive what it was sent). */
            free_list(rk->recvs.head);
            free_list(rk->msgs.head);
            free_list(rk->pool);
            pthread_mutex_destroy(&rk->lock);
        }
    }
    if (w->shm.slots)
        for (unsigned k = 0; k < w->shm.nslots; k++)
            free(w->shm.slots[k].e);
    free(w->shm.slots);
    free(w->shm.ticket);
    free(w->ranks);
    struct ip_world *root = w->root;
    free(w);
    if (root)
        world_unref(root);
}

static void world_unref(struct ip_world *w)
{
    if (atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) == 1)
        world_free(w);
}

/* NBCX_INPROC_SLOT_MAX: bytes, with k/m/g; "0" turns the automatic
 * choice of slots off; default: no limit. */
static size_t read_slot_max(void)
{
    return nbcxi_env_size_or_off("NBCX_INPROC_SLOT_MAX", SIZE_MAX);
}

static int world_new(int nranks, struct ip_world **out)
{
    struct ip_world *w = calloc(1, sizeof *w);
    if (!w)
        return NBCX_ERR_NOMEM;
    w->nranks = nranks;
    w->node_ranks = nbcxi_env_size("NBCX_NODE_RANKS", 0);
    atomic_init(&w->refs, 1);
    atomic_init(&w->failed, false);
    w->eager = nbcxi_env_size("NBCX_INPROC_EAGER", 16384);
    size_t want = nbcxi_env_size("NBCX_INPROC_SLOTS", 16);
    unsigned nslots = 1;
    while (nslots < want && nslots < 4096)
        nslots <<= 1;
    w->shm.nranks = nranks;
    w->shm.nslots = nslots;
    w->shm.slot_max = read_slot_max();
    w->shm.failed = &w->failed;
    w->ranks = aligned_calloc((size_t)nranks, sizeof *w->ranks);
    w->shm.slots = aligned_calloc(nslots, sizeof *w->shm.slots);
    w->shm.ticket = calloc((size_t)nranks, sizeof *w->shm.ticket);
    if (!w->ranks || !w->shm.slots || !w->shm.ticket) {
        free(w->ranks);
        w->ranks = NULL;
        world_free(w);
        return NBCX_ERR_NOMEM;
    }
    for (int i = 0; i < nranks; i++) {
        pthread_mutex_init(&w->ranks[i].lock, NULL);
        atomic_init(&w->shm.ticket[i], 0);
    }
    for (unsigned k = 0; k < nslots; k++) {
        struct nbcxi_shm_slot *sl = &w->shm.slots[k];
        atomic_init(&sl->state, nbcxi_shm_state(k, NBCXI_SHM_FREE));
        atomic_init(&sl->left, 0);
        atomic_init(&sl->arrived, 0);
        atomic_init(&sl->published, 0);
        atomic_init(&sl->results, 0);
        sl->e = aligned_calloc((size_t)nranks, sizeof *sl->e);
        if (!sl->e) {
            world_free(w);
            return NBCX_ERR_NOMEM;
        }
        for (int i = 0; i < nranks; i++) {
            atomic_init(&sl->e[i].stage, 0);
            atomic_init(&sl->e[i].readers, 0);
        }
    }
    *out = w;
    return NBCX_SUCCESS;
}

static void ip_destroy(nbcxi_transport *t)
{
    struct ip_endpoint *ep = ep_of(t);
    world_unref(ep->w);
    free(ep);
    free(t);
}

static bool ip_peers_poll(void);
static int ip_split(nbcxi_transport *t, struct nbcx_comm_s *c, int color,
                    int key, struct nbcx_comm_s **out);

static size_t ip_native_max(const nbcxi_transport *t)
{
    return ep_of(t)->w->shm.slot_max;
}

/* The ranks are threads of one process: one node, unless NBCX_NODE_RANKS
 * says blocks of that many ranks are (for tests of the node-aware
 * algorithms). */
static int ip_node_of(const nbcxi_transport *t, int r)
{
    size_t n = ((const struct ip_endpoint *)t->state)->w->node_ranks;
    return n ? r - (int)((size_t)r % n) : 0;
}

const struct nbcxi_transport_ops nbcxi_inproc_ops = {
    .name = "inproc",
    .req_size = sizeof(void *),
    .isend = ip_isend,
    .irecv = ip_irecv,
    .testsome = ip_testsome,
    .cancel = ip_cancel,
    .destroy = ip_destroy,
    .caps = NBCXI_CAP_IN_PROCESS | NBCXI_CAP_PROGRESS_THREAD |
            NBCXI_CAP_COMM_PARALLEL, /* (per-rank locks, no global) */
    .peers_poll = ip_peers_poll,
    .algorithms = nbcxi_inproc_algorithms,
    .native_max = ip_native_max,
    .split = ip_split,
    .node_of = ip_node_of,
};

/* Rank `rank`'s communicator on w (which gains a reference). */
static int comm_new(struct ip_world *w, int rank, nbcx_comm *out)
{
    nbcxi_transport *t = calloc(1, sizeof *t);
    struct ip_endpoint *ep = calloc(1, sizeof *ep);
    if (!t || !ep) {
        free(t);
        free(ep);
        return NBCX_ERR_NOMEM;
    }
    ep->w = w;
    ep->rank = rank;
    atomic_fetch_add_explicit(&w->refs, 1, memory_order_relaxed);
    t->ops = &nbcxi_inproc_ops;
    t->state = ep;
    t->tag_ub = INT_MAX;
    t->medium = NBCXI_MEDIUM_MEMORY; /* threads of this process */
    t->one_node = true;
    t->nnodes = w->node_ranks ? (int)(((size_t)w->nranks + w->node_ranks - 1) /
                                      w->node_ranks)
                              : 1;
    return nbcxi_comm_create(rank, w->nranks, t, out); /* owns t */
}

struct nbcxi_shm *nbcxi_inproc_shm(const struct nbcx_comm_s *c)
{
    if (c->tp->ops != &nbcxi_inproc_ops)
        return NULL;
    return &((struct ip_endpoint *)c->tp->state)->w->shm;
}

/* A world and its nranks communicators; the caller's reference to the
 * world is returned in *wout (NULL: dropped). */
static int world_comms(int nranks, nbcx_comm comms[], struct ip_world **wout)
{
    struct ip_world *w;
    int err = world_new(nranks, &w);
    if (err != NBCX_SUCCESS)
        return err;
    for (int r = 0; r < nranks && err == NBCX_SUCCESS; r++) {
        err = comm_new(w, r, &comms[r]);
        if (err != NBCX_SUCCESS)
            while (r-- > 0)
                nbcx_comm_free(&comms[r]);
    }
    if (err != NBCX_SUCCESS || !wout)
        world_unref(w);
    else
        *wout = w;
    return err;
}

int nbcxi_inproc_world_create(int nranks, nbcx_comm comms[])
{
    if (nranks < 1 || !comms)
        return NBCX_ERR_ARG;
    return world_comms(nranks, comms, NULL);
}

/* ------------------------------------------------------------------ */
/* nbcx_comm_split on in-process communicators                         */
/* ------------------------------------------------------------------ */

/* Every member learns every member's (color, key) by an allgather on c;
 * the first member of each color in the new order (its leader) makes
 * the new world, with a reference for each member, and a second
 * allgather hands its address (or its error) to the others, who each
 * make their endpoint on it and drop the reference taken for them. The
 * new world shares the failure flag of the nbcx_inproc_run world it
 * comes from (and holds a reference to that world). */
static int ip_split(nbcxi_transport *t, struct nbcx_comm_s *c, int color,
                    int key, struct nbcx_comm_s **out)
{
    struct ip_world *parent = ep_of(t)->w;
    int p = c->size, me = c->rank;
    int32_t mine[2] = { color, key };
    int32_t *ck = malloc(2 * (size_t)p * sizeof *ck);
    int64_t *hand = malloc(2 * (size_t)p * sizeof *hand);
    if (!ck || !hand) {
        free(ck);
        free(hand);
        return NBCX_ERR_NOMEM;
    }
    nbcx_request r;
    int err = nbcx_iallgather(mine, 2, NBCX_INT32, ck, 2, NBCX_INT32, c, &r);
    if (err == NBCX_SUCCESS)
        err = nbcx_wait(&r);
    /* My new rank, my group's size and its leader (rank in c). */
    int newrank = 0, n = 0, leader = -1;
    for (int j = 0; err == NBCX_SUCCESS && j < p; j++) {
        if (ck[2 * j] != color)
            continue;
        n++;
        if (ck[2 * j + 1] < key || (ck[2 * j + 1] == key && j < me))
            newrank++;
    }
    for (int j = 0; err == NBCX_SUCCESS && j < p && color != NBCX_UNDEFINED;
         j++) {
        if (ck[2 * j] != color)
            continue;
        int before = 0; /* members of the color ranked before j */
        for (int q = 0; q < p; q++)
            if (ck[2 * q] == color &&
                (ck[2 * q + 1] < ck[2 * j + 1] ||
                 (ck[2 * q + 1] == ck[2 * j + 1] && q < j)))
                before++;
        if (before == 0) {
            leader = j;
            break;
        }
    }
    free(ck);
    if (err != NBCX_SUCCESS) {
        free(hand);
        return err;
    }
    int64_t mine2[2] = { 0, NBCX_SUCCESS };
    struct ip_world *w = NULL;
    if (leader == me) {
        int e = world_new(n, &w);
        if (e == NBCX_SUCCESS) {
            struct ip_world *root = parent->root ? parent->root : parent;
            atomic_fetch_add_explicit(&root->refs, 1, memory_order_relaxed);
            w->root = root;
            w->shm.failed = &root->failed;
            atomic_fetch_add_explicit(&w->refs, n - 1, memory_order_relaxed);
            mine2[0] = (int64_t)(intptr_t)w;
        }
        mine2[1] = e;
    }
    err = nbcx_iallgather(mine2, 2, NBCX_INT64, hand, 2, NBCX_INT64, c, &r);
    if (err == NBCX_SUCCESS)
        err = nbcx_wait(&r);
    if (err != NBCX_SUCCESS) {
        /* (an in-process allgather fails only when the world has failed:
         * then no member uses the new world; the leader frees it) */
        if (w)
            for (int k = 0; k < n; k++)
                world_unref(w);
        free(hand);
        return err;
    }
    if (leader >= 0) {
        err = (int)hand[2 * leader + 1];
        w = (struct ip_world *)(intptr_t)hand[2 * leader];
    }
    free(hand);
    if (leader < 0 || err != NBCX_SUCCESS)
        return err;
    err = comm_new(w, newrank, out);
    world_unref(w); /* the reference the leader took for this member */
    return err;
}

/* ------------------------------------------------------------------ */
/* nbcx_inproc_run                                                     */
/* ------------------------------------------------------------------ */

/* Rank threads of every nbcx_inproc_run running now, and the cores this
 * process may use (read once). Ranks poll for each other (request.c) up
 * to CROWDED rank threads per core; beyond that the polling of dozens of
 * threads would take the cores from the few that have work, and waiting
 * ranks sleep and leave the work to the progress thread, as with MPI.
 * (Measured on 2 cores: 4 ranks poll best, 64 must not poll.) */
enum { CROWDED = 4 };
static atomic_int running_ranks;
static pthread_once_t cores_once = PTHREAD_ONCE_INIT;
static int cores = 1;

static void count_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        cores = CPU_COUNT(&set);
    cores = cores > 0 ? cores : 1;
}

static bool crowded(void)
{
    pthread_once(&cores_once, count_cores);
    return atomic_load_explicit(&running_ranks, memory_order_relaxed) >
           CROWDED * cores;
}

/* Whether the rank threads have cores enough to poll for each other. */
static bool ip_peers_poll(void)
{
    return !crowded();
}

/* The threads wait at a gate until all of them exist: if one cannot be
 * created, none runs its body (nothing is started). */
struct ip_run {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int gate;                /* 0: wait, 1: run, -1: give up */
    nbcx_inproc_body *body;
    void *arg;
    struct ip_world *w;
};

struct ip_thread {
    pthread_t th;
    struct ip_run *run;
    nbcx_comm comm;
    int rc;
};

static void *rank_main(void *p)
{
    struct ip_thread *me = p;
    struct ip_run *run = me->run;
    pthread_mutex_lock(&run->lock);
    while (run->gate == 0)
        pthread_cond_wait(&run->cv, &run->lock);
    int gate = run->gate;
    pthread_mutex_unlock(&run->lock);
    if (gate < 0)
        return NULL;
    /* Our own reference keeps the communicator readable if the body
     * frees it. */
    struct nbcx_comm_s *c = nbcxi_comm(me->comm);
    nbcxi_comm_retain(c);
    me->rc = run->body(me->comm, run->arg);
    if (me->rc != NBCX_SUCCESS)
        atomic_store_explicit(&run->w->failed, true, memory_order_relaxed);
    if (c->magic == NBCXI_COMM_MAGIC) /* the body did not free it */
        nbcx_comm_free(&me->comm);
    nbcxi_comm_release(c);
    return NULL;
}

int nbcx_inproc_run(int nranks, nbcx_inproc_body *body, void *arg)
{
    if (nranks < 1 || !body)
        return NBCX_ERR_ARG;
    struct ip_thread *th = calloc((size_t)nranks, sizeof *th);
    nbcx_comm *comms = calloc((size_t)nranks, sizeof *comms);
    struct ip_run run = { .gate = 0, .body = body, .arg = arg };
    int err = th && comms ? world_comms(nranks, comms, &run.w)
                          : NBCX_ERR_NOMEM;
    if (err != NBCX_SUCCESS) {
        free(th);
        free(comms);
        return err;
    }
    pthread_mutex_init(&run.lock, NULL);
    pthread_cond_init(&run.cv, NULL);
    atomic_fetch_add_explicit(&running_ranks, nranks, memory_order_relaxed);
    int started = 0;
    for (; started < nranks; started++) {
        th[started].run = &run;
        th[started].comm = comms[started];
        if (pthread_create(&th[started].th, NULL, rank_main, &th[started]))
            break;
    }
    pthread_mutex_lock(&run.lock);
    run.gate = started == nranks ? 1 : -1;
    pthread_cond_broadcast(&run.cv);
    pthread_mutex_unlock(&run.lock);
    for (int r = 0; r < started; r++)
        pthread_join(th[r].th, NULL);
    atomic_fetch_sub_explicit(&running_ranks, nranks, memory_order_relaxed);
    if (started < nranks) {
        for (int r = 0; r < nranks; r++)
            nbcx_comm_free(&comms[r]);
        err = NBCX_ERR_NOMEM;
    } else {
        for (int r = 0; r < nranks && err == NBCX_SUCCESS; r++)
            err = th[r].rc;
    }
    world_unref(run.w);
    pthread_cond_destroy(&run.cv);
    pthread_mutex_destroy(&run.lock);
    free(th);
    free(comms);
    return err;
}
