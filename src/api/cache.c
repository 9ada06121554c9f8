/* cache.c - schedules of repeated nonblocking calls, kept for reuse.
 *
 * Applications often repeat the same nonblocking collective with the same
 * arguments on the same communicator (a time step's allreduce, say). The
 * schedule such a call builds depends only on those arguments (buffer
 * addresses, counts, types, operation, root) and on the algorithm
 * selection in force (forced algorithm, fragment size, progress mode):
 * builders never look at buffer contents. So a completed schedule goes to
 * its communicator's cache instead of being freed, and an identical call
 * takes it back and starts it again, skipping the build and its
 * allocations.
 *
 * Results cannot change: a schedule is in the cache only while no
 * operation uses it (an identical call made while it runs builds a new
 * one), the key holds references to its types and operation so their
 * addresses cannot be reused by other objects, and a failed run is never
 * cached. The cache keeps at most NBCX_SCHED_CACHE schedules per
 * communicator (default 16, 0 turns caching off), evicting the least
 * recently used, and is emptied when the communicator is freed.
 *
 * Every collective is cached. The v, w and neighbourhood variants take
 * their counts, displacements and types from user arrays whose contents
 * may change under the same address, so their key holds a copy of the
 * arrays the call reads (and a reference to each block's type), and a
 * call takes a schedule back only when its arrays hold the same values.
 * A neighbourhood collective's key also holds its topology, which lives
 * as long as the communicator (base/topo.c keeps the older ones).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../progress/request.h"
#include "cache.h"

/* The scalar part of a key: compared with memcmp (key_head zeroes its
 * padding). */
struct key_head {
    enum nbcxi_coll coll;
    const void *sbuf;
    void *rbuf;
    nbcx_count scount, rcount;
    int root;
    bool in_place;
    struct nbcx_datatype_s *stype, *rtype;
    struct nbcx_op_s *op;
    const struct nbcxi_topo *topo;
    struct nbcxi_selection sel;
    /* the arrays of each side: how many blocks, and which arrays the
     * call gave (bit 0 counts, 1 displs, 2 adispls, 3 types, 4 byte
     * displacements) */
    int n[2];
    unsigned has[2];
};

/* A copy of one side's arrays (struct nbcxi_vside), types resolved;
 * counts and displacements widened to nbcx_count whatever the call's
 * width, so that an int call and its _c form with the same values share
 * an entry. */
struct side_copy {
    nbcx_count *counts, *displs;
    ptrdiff_t *adispls;
    struct nbcx_datatype_s **types;
};

struct nbcxi_cache_key {
    struct key_head h;
    struct side_copy side[2]; /* send, receive; in the same allocation */
};

struct entry {
    struct nbcxi_cache_key *key;
    struct nbcx_sched_s *s;
    unsigned long used; /* clock of the last put */
};

struct nbcxi_cache {
    struct nbcxi_comm_ext ext; /* freed with the communicator */
    pthread_mutex_t lock;
    int n, cap;
    unsigned long clock;
    bool closed;          /* the communicator was freed */
    struct entry e[];
};

static atomic_ulong hits, misses;

static void cache_free(struct nbcxi_comm_ext *ext)
{
    struct nbcxi_cache *c = (struct nbcxi_cache *)ext;
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* comm's cache, made on first use; NULL if out of memory. */
static struct nbcxi_cache *cache_of(struct nbcx_comm_s *comm)
{
    struct nbcxi_comm_ext *have = atomic_load(&comm->cache);
    if (have)
        return (struct nbcxi_cache *)have;
    int cap = (int)nbcxi_env_size_or_off("NBCX_SCHED_CACHE", 16);
    if (cap > 1024)
        cap = 1024;
    struct nbcxi_cache *c = calloc(1, sizeof *c + sizeof(struct entry) *
                                               (size_t)cap);
    if (!c)
        return NULL;
    c->ext.free = cache_free;
    pthread_mutex_init(&c->lock, NULL);
    c->cap = cap;
    if (atomic_compare_exchange_strong(&comm->cache, &have, &c->ext))
        return c;
    cache_free(&c->ext); /* another thread made it first */
    return (struct nbcxi_cache *)have;
}

enum { HAS_COUNTS = 1, HAS_DISPLS = 2, HAS_ADISPLS = 4, HAS_TYPES = 8,
       HAS_BYTE_DISPLS = 16 };

static void key_free(struct nbcxi_cache_key *k)
{
    if (!k)
        return;
    if (k->h.stype)
        nbcxi_type_release(k->h.stype);
    if (k->h.rtype)
        nbcxi_type_release(k->h.rtype);
    if (k->h.op)
        nbcxi_op_release(k->h.op);
    for (int i = 0; i < 2; i++)
        if (k->side[i].types)
            for (int j = 0; j < k->h.n[i]; j++)
                nbcxi_type_release(k->side[i].types[j]);
    free(k);
}

static void forget(struct nbcx_sched_s *s)
{
    key_free(s->keep.key);
    s->keep.key = NULL;
    s->keep.by = NULL;
}

static void put(struct nbcx_sched_s *s, int err);

static bool is_neighbor(enum nbcxi_coll coll)
{
    return coll >= NBCXI_NEIGHBOR_ALLGATHER && coll < NBCXI_NCOLL;
}

/* The arrays side v of the call reads: api/ leaves the pointers of a
 * side that is not significant on this rank NULL. */
static unsigned side_has(const struct nbcxi_vside *v)
{
    return (v->counts ? HAS_COUNTS : 0u) | (v->displs ? HAS_DISPLS : 0u) |
           (v->adispls ? HAS_ADISPLS : 0u) | (v->types ? HAS_TYPES : 0u) |
           (v->byte_displs ? HAS_BYTE_DISPLS : 0u);
}

/* The scalar part of the call's key; each side's number of blocks is
 * the communicator's size, or for a neighbourhood collective the
 * topology's out-degree (send) or in-degree (receive). */
static void key_head(struct key_head *h, enum nbcxi_coll coll,
                     const struct nbcx_comm_s *comm,
                     const struct nbcxi_coll_args *a)
{
    memset(h, 0, sizeof *h); /* padding too: heads compare with memcmp */
    h->coll = coll;
    h->sbuf = a->sbuf;
    h->rbuf = a->rbuf;
    h->scount = a->scount;
    h->rcount = a->rcount;
    h->root = a->root;
    h->in_place = a->in_place;
    h->stype = a->stype;
    h->rtype = a->rtype;
    h->op = a->op;
    h->topo = a->topo;
    nbcxi_coll_selection(coll, &h->sel);
    h->sel.mode = nbcxi_progress_mode_id();
    const struct nbcxi_vside *v[2] = { &a->sv, &a->rv };
    for (int i = 0; i < 2; i++) {
        h->has[i] = side_has(v[i]);
        if (h->has[i] & ~(unsigned)HAS_BYTE_DISPLS)
            h->n[i] = !is_neighbor(coll) ? comm->size
                      : i == 0            ? a->topo->outdegree
                                          : a->topo->indegree;
    }
}

/* The bytes a copy of the side's arrays takes (pointers first, so that
 * every array of the allocation is aligned). */
static size_t side_bytes(unsigned has, int n)
{
    size_t b = 0, m = (size_t)n;
    b += has & HAS_TYPES ? m * sizeof(struct nbcx_datatype_s *) : 0;
    b += has & HAS_ADISPLS ? m * sizeof(ptrdiff_t) : 0;
    b += has & HAS_COUNTS ? m * sizeof(nbcx_count) : 0;
    b += has & HAS_DISPLS ? m * sizeof(nbcx_count) : 0;
    /* the next side's pointers start aligned */
    const size_t al = _Alignof(max_align_t);
    return (b + al - 1) / al * al;
}

/* Whether the n entries of copy hold the values of arr (int or wide). */
static bool values_equal(const nbcx_count *copy, const void *arr, bool wide,
                         size_t n)
{
    if (wide)
        return memcmp(copy, arr, n * sizeof *copy) == 0;
    for (size_t j = 0; j < n; j++)
        if (copy[j] != ((const int *)arr)[j])
            return false;
    return true;
}

/* Whether key k's arrays hold the values of the call's (heads equal). */
static bool sides_equal(const struct nbcxi_cache_key *k,
                        const struct nbcxi_coll_args *a)
{
    const struct nbcxi_vside *v[2] = { &a->sv, &a->rv };
    for (int i = 0; i < 2; i++) {
        const struct side_copy *c = &k->side[i];
        size_t m = (size_t)k->h.n[i];
        if (c->counts && !values_equal(c->counts, v[i]->counts, v[i]->wide, m))
            return false;
        if (c->displs && !values_equal(c->displs, v[i]->displs, v[i]->wide, m))
            return false;
        if (c->adispls &&
            memcmp(c->adispls, v[i]->adispls, m * sizeof(ptrdiff_t)))
            return false;
        if (c->types)
            for (size_t j = 0; j < m; j++)
                if (c->types[j] != nbcxi_type(v[i]->types[j]))
                    return false;
    }
    return true;
}

struct nbcx_sched_s *nbcxi_cache_take(struct nbcx_comm_s *comm,
                                      enum nbcxi_coll coll,
                                      const struct nbcxi_coll_args *a)
{
    struct nbcxi_cache *c = cache_of(comm);
    if (!c || !c->cap)
        return NULL;
    struct key_head h;
    key_head(&h, coll, comm, a);
    struct nbcx_sched_s *s = NULL;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < c->n; i++) {
        if (memcmp(&c->e[i].key->h, &h, sizeof h) == 0 &&
            sides_equal(c->e[i].key, a)) {
            s = c->e[i].s;
            c->e[i] = c->e[--c->n];
            break;
        }
    }
    pthread_mutex_unlock(&c->lock);
    atomic_fetch_add_explicit(s ? &hits : &misses, 1, memory_order_relaxed);
    return s;
}

/* Copies side v's arrays into c, carved from *mem; types are resolved
 * and retained. */
static void side_copy(struct side_copy *c, const struct nbcxi_vside *v,
                      unsigned has, int n, unsigned char **mem)
{
    size_t m = (size_t)n;
    unsigned char *end = *mem + side_bytes(has, n);
    if (has & HAS_TYPES) {
        c->types = (struct nbcx_datatype_s **)(void *)*mem;
        *mem += m * sizeof *c->types;
        for (size_t j = 0; j < m; j++) {
            c->types[j] = nbcxi_type(v->types[j]);
            nbcxi_type_retain(c->types[j]);
        }
    }
    if (has & HAS_ADISPLS) {
        c->adispls = (ptrdiff_t *)(void *)*mem;
        memcpy(c->adispls, v->adispls, m * sizeof *c->adispls);
        *mem += m * sizeof *c->adispls;
    }
    if (has & HAS_COUNTS) {
        c->counts = (nbcx_count *)(void *)*mem;
        for (size_t j = 0; j < m; j++)
            c->counts[j] = nbcxi_varr(v->counts, v->wide, (int)j);
        *mem += m * sizeof *c->counts;
    }
    if (has & HAS_DISPLS) {
        c->displs = (nbcx_count *)(void *)*mem;
        for (size_t j = 0; j < m; j++)
            c->displs[j] = nbcxi_varr(v->displs, v->wide, (int)j);
    }
    *mem = end;
}

int nbcxi_cache_label(struct nbcx_sched_s *s, enum nbcxi_coll coll,
                      const struct nbcxi_coll_args *a)
{
    struct nbcxi_cache *c = cache_of(s->build.comm);
    if (!c || !c->cap)
        return NBCX_SUCCESS;
    struct key_head h;
    key_head(&h, coll, s->build.comm, a);
    size_t tail = side_bytes(h.has[0], h.n[0]) + side_bytes(h.has[1], h.n[1]);
    struct nbcxi_cache_key *k = calloc(1, sizeof *k + tail);
    if (!k)
        return NBCX_SUCCESS; /* just not cached */
    k->h = h;
    unsigned char *mem = (unsigned char *)(k + 1);
    side_copy(&k->side[0], &a->sv, h.has[0], h.n[0], &mem);
    side_copy(&k->side[1], &a->rv, h.has[1], h.n[1], &mem);
    if (h.stype)
        nbcxi_type_retain(h.stype);
    if (h.rtype)
        nbcxi_type_retain(h.rtype);
    if (h.op)
        nbcxi_op_retain(h.op);
    static const struct nbcxi_sched_keeper keeper = { put, forget };
    s->keep.by = &keeper;
    s->keep.key = k;
    return NBCX_SUCCESS;
}

/* A labelled schedule whose operation is over: kept if it succeeded. */
static void put(struct nbcx_sched_s *s, int err)
{
    struct nbcxi_cache *c =
        (struct nbcxi_cache *)atomic_load(&s->build.comm->cache);
    if (err != NBCX_SUCCESS || !c) {
        nbcxi_sched_destroy(s);
        return;
    }
    struct nbcx_sched_s *evicted = NULL;
    pthread_mutex_lock(&c->lock);
    if (c->closed) {
        evicted = s;
    } else {
        if (c->n == c->cap) { /* evict the least recently used */
            int lru = 0;
            for (int i = 1; i < c->n; i++)
                if (c->e[i].used < c->e[lru].used)
                    lru = i;
            evicted = c->e[lru].s;
            c->e[lru] = c->e[--c->n];
        }
        c->e[c->n++] = (struct entry){ s->keep.key, s, ++c->clock };
    }
    pthread_mutex_unlock(&c->lock);
    nbcxi_sched_destroy(evicted);
}

/* Frees every schedule kept for comm; close: and keeps none from now
 * on. */
static void drain(struct nbcx_comm_s *comm, bool close)
{
    struct nbcxi_cache *c = (struct nbcxi_cache *)atomic_load(&comm->cache);
    if (!c)
        return;
    for (;;) {
        pthread_mutex_lock(&c->lock);
        c->closed |= close;
        struct nbcx_sched_s *s = c->n ? c->e[--c->n].s : NULL;
        pthread_mutex_unlock(&c->lock);
        if (!s)
            return;
        nbcxi_sched_destroy(s); /* releases the communicator */
    }
}

void nbcxi_cache_close(struct nbcx_comm_s *comm)
{
    drain(comm, true);
}

void nbcxi_cache_flush(struct nbcx_comm_s *comm)
{
    drain(comm, false);
}

void nbcxi_cache_stats(unsigned long *h, unsigned long *m)
{
    *h = atomic_load(&hits);
    *m = atomic_load(&misses);
}
