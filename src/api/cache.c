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
 * recently used, and is emptied when the communicator is freed. Only the
 * collectives whose arguments are all scalars are cached: for the
 * v-variants the counts live in user arrays whose contents may change
 * under the same address.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../progress/request.h"
#include "cache.h"

struct nbcxi_cache_key {
    enum nbcxi_coll coll;
    const void *sbuf;
    void *rbuf;
    int scount, rcount, root;
    bool in_place;
    struct nbcx_datatype_s *stype, *rtype;
    struct nbcx_op_s *op;
    struct nbcxi_selection sel;
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
    int cap = (int)nbcxi_env_size("NBCX_SCHED_CACHE", 16);
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

static void key_free(struct nbcxi_cache_key *k)
{
    if (!k)
        return;
    if (k->stype)
        nbcxi_type_release(k->stype);
    if (k->rtype)
        nbcxi_type_release(k->rtype);
    if (k->op)
        nbcxi_op_release(k->op);
    free(k);
}

static void forget(struct nbcx_sched_s *s)
{
    key_free(s->keep.key);
    s->keep.key = NULL;
    s->keep.by = NULL;
}

static void put(struct nbcx_sched_s *s, int err);

static bool cacheable(enum nbcxi_coll coll)
{
    return coll <= NBCXI_ALLTOALL; /* the core collectives */
}

static void key_fill(struct nbcxi_cache_key *k, enum nbcxi_coll coll,
                     const struct nbcxi_coll_args *a)
{
    memset(k, 0, sizeof *k); /* padding too: keys compare with memcmp */
    k->coll = coll;
    k->sbuf = a->sbuf;
    k->rbuf = a->rbuf;
    k->scount = a->scount;
    k->rcount = a->rcount;
    k->root = a->root;
    k->in_place = a->in_place;
    k->stype = a->stype;
    k->rtype = a->rtype;
    k->op = a->op;
    nbcxi_coll_selection(coll, &k->sel);
    k->sel.mode = nbcxi_progress_mode_id();
}

struct nbcx_sched_s *nbcxi_cache_take(struct nbcx_comm_s *comm,
                                      enum nbcxi_coll coll,
                                      const struct nbcxi_coll_args *a)
{
    if (!cacheable(coll))
        return NULL;
    struct nbcxi_cache *c = cache_of(comm);
    if (!c || !c->cap)
        return NULL;
    struct nbcxi_cache_key k;
    key_fill(&k, coll, a);
    struct nbcx_sched_s *s = NULL;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < c->n; i++) {
        if (memcmp(c->e[i].key, &k, sizeof k) == 0) {
            s = c->e[i].s;
            c->e[i] = c->e[--c->n];
            break;
        }
    }
    pthread_mutex_unlock(&c->lock);
    atomic_fetch_add_explicit(s ? &hits : &misses, 1, memory_order_relaxed);
    return s;
}

int nbcxi_cache_label(struct nbcx_sched_s *s, enum nbcxi_coll coll,
                      const struct nbcxi_coll_args *a)
{
    if (!cacheable(coll))
        return NBCX_SUCCESS;
    struct nbcxi_cache *c = cache_of(s->build.comm);
    if (!c || !c->cap)
        return NBCX_SUCCESS;
    struct nbcxi_cache_key *k = malloc(sizeof *k);
    if (!k)
        return NBCX_SUCCESS; /* just not cached */
    key_fill(k, coll, a);
    if (k->stype)
        nbcxi_type_retain(k->stype);
    if (k->rtype)
        nbcxi_type_retain(k->rtype);
    if (k->op)
        nbcxi_op_retain(k->op);
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
