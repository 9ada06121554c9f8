/* comm.c - communicators: rank, size, a transport and a tag sequence. */
#include <stdlib.h>

#include "base.h"

/* Tag slots (struct nbcx_comm_s): the low 12 bits of a transport tag
 * carry the schedule tag (NBCX_SCHED_TAG_MAX), the bits above the tag
 * slot. MPI guarantees tag_ub >= 32767, so there are at least 8 slots;
 * Open MPI and MPICH would give 2^19 and 2^16, of which nbcx uses at most
 * 2^16 (an 8 KiB bitmap per communicator): 32,768 persistent requests
 * and 32,768 nonblocking operations in flight. NBCX_TAG_BITS (14 to 28)
 * narrows the tags (tests use it to wrap in a few operations). */
enum { MAX_SLOTS = 1u << 16 };

static unsigned count_slots(const nbcxi_transport *tp)
{
    unsigned long ub = (unsigned long)tp->tag_ub;
    size_t bits = nbcxi_env_size("NBCX_TAG_BITS", 0);
    if (bits >= 14 && bits <= 28 && ub > (1ul << bits) - 1)
        ub = (1ul << bits) - 1;
    unsigned long n = (ub + 1) >> 12;
    return n > MAX_SLOTS ? MAX_SLOTS : (unsigned)n;
}

int nbcxi_slot_take(struct nbcx_comm_s *c, bool persistent, unsigned *seq,
                    unsigned *slot)
{
    if (persistent) {
        *seq = atomic_fetch_add_explicit(&c->pseq, 1, memory_order_relaxed);
        *slot = *seq % c->npers;
    } else {
        *seq = atomic_fetch_add_explicit(&c->seq, 1, memory_order_relaxed);
        *slot = c->npers + *seq % (c->nslots - c->npers);
    }
    uint64_t bit = 1ull << (*slot % 64);
    uint64_t old = atomic_fetch_or_explicit(&c->held[*slot / 64], bit,
                                            memory_order_acq_rel);
    if (!(old & bit))
        return NBCX_SUCCESS;
    int none = 0;
    atomic_compare_exchange_strong(&c->broken, &none, NBCX_ERR_EXHAUSTED);
    return NBCX_ERR_EXHAUSTED;
}

void nbcxi_slot_release(struct nbcx_comm_s *c, unsigned slot)
{
    atomic_fetch_and_explicit(&c->held[slot / 64], ~(1ull << (slot % 64)),
                              memory_order_acq_rel);
}

int nbcxi_comm_switch_prepare(nbcxi_transport *tp,
                              struct nbcxi_comm_switch *sw)
{
    *sw = (struct nbcxi_comm_switch){ .tp = tp, .nslots = count_slots(tp) };
    if (sw->nslots < 2)
        return nbcxi_error(NBCX_ERR_TRANSPORT, "transport %s has too few "
                           "tags for nbcx", tp->ops->name);
    sw->held = calloc((sw->nslots + 63) / 64, sizeof *sw->held);
    return sw->held ? NBCX_SUCCESS
                    : nbcxi_error(NBCX_ERR_NOMEM, "no memory for the tag "
                                  "slots of transport %s", tp->ops->name);
}

/* c's transport and tag slots become sw's. */
static void take(struct nbcx_comm_s *c, const struct nbcxi_comm_switch *sw)
{
    c->held = sw->held;
    c->nslots = sw->nslots;
    c->npers = sw->nslots / 2;
    c->tp = sw->tp;
    c->plock = nbcxi_transport_can(sw->tp, NBCXI_CAP_COMM_PARALLEL)
                   ? &c->plock_own
                   : &nbcxi_serial_plock;
}

pthread_mutex_t nbcxi_serial_plock = PTHREAD_MUTEX_INITIALIZER;

atomic_bool nbcxi_comm_no_thread;
atomic_bool nbcxi_comm_made;

int nbcxi_comm_create(int rank, int size, nbcxi_transport *tp, nbcx_comm *out)
{
    if (!nbcxi_transport_can(tp, NBCXI_CAP_PROGRESS_THREAD))
        atomic_store(&nbcxi_comm_no_thread, true);
    atomic_store(&nbcxi_comm_made, true); /* (after: modes.c reads both) */
    struct nbcxi_comm_switch sw = { 0 };
    int err = rank < 0 || rank >= size ? NBCX_ERR_TRANSPORT
                                       : nbcxi_comm_switch_prepare(tp, &sw);
    struct nbcx_comm_s *c = err ? NULL : nbcxi_pool_alloc(&nbcxi_comm_pool);
    if (c && pthread_mutex_init(&c->plock_own, NULL) != 0) {
        nbcxi_pool_free(&nbcxi_comm_pool, c, NBCXI_DEAD_MAGIC);
        c = NULL;
    }
    if (!c) {
        free((void *)sw.held);
        tp->ops->destroy(tp);
        return err ? err : NBCX_ERR_NOMEM;
    }
    take(c, &sw);
    atomic_init(&c->pseq, 0);
    atomic_init(&c->broken, 0);
    atomic_init(&c->cache, NULL);
    c->magic = NBCXI_COMM_MAGIC;
    c->rank = rank;
    c->size = size;
    c->kept = NULL;
    atomic_init(&c->seq, 0);
    atomic_init(&c->refs, 1);
    atomic_init(&c->topo, NULL);
    *out = c;
    return NBCX_SUCCESS;
}

void nbcxi_comm_switch_commit(struct nbcx_comm_s *c,
                              struct nbcxi_comm_switch *sw)
{
    /* Nothing holds a tag slot (the caller made sure): the sequence
     * numbers go on, in the new transport's slots. No message of the
     * old transport is left unmatched either (its operations all
     * completed, on every member), so a kept one is clean to go back
     * to. */
    nbcxi_transport *old = c->tp;
    if (sw->tp == c->kept)
        c->kept = NULL;
    free((void *)c->held);
    take(c, sw);
    if (!old->ops->create && !c->kept)
        c->kept = old;
    else
        old->ops->destroy(old);
    *sw = (struct nbcxi_comm_switch){ 0 };
}

void nbcxi_comm_switch_drop(struct nbcx_comm_s *c,
                            struct nbcxi_comm_switch *sw)
{
    free((void *)sw->held);
    if (sw->tp && sw->tp != c->kept)
        sw->tp->ops->destroy(sw->tp);
    *sw = (struct nbcxi_comm_switch){ 0 };
}

void nbcxi_comm_keep_transport(struct nbcx_comm_s *c, nbcxi_transport *tp)
{
    if (c->kept)
        c->kept->ops->destroy(c->kept);
    c->kept = tp;
}

struct nbcxi_pool nbcxi_comm_pool = NBCXI_POOL_INIT(struct nbcx_comm_s);

/* Handles point into nbcxi_comm_pool's memory, which is never freed: a
 * freed communicator's magic says so (0 from nbcx_comm_free while its
 * operations finish, then NBCXI_DEAD_MAGIC). */
struct nbcx_comm_s *nbcxi_comm(nbcx_comm h)
{
    if (!h) {
        nbcxi_error(NBCX_ERR_COMM, "NULL communicator (NBCX_COMM_NULL)");
        return NULL;
    }
    bool ours = (uintptr_t)h > 4096; /* small values are never read */
    if (ours && h->magic == NBCXI_COMM_MAGIC)
        return h;
    /* (a small value reports as "not a communicator handle") */
    nbcxi_bad_handle(NBCX_ERR_COMM, "communicator", "nbcx_comm_free",
                     ours ? h->magic : NBCXI_COMM_MAGIC, h);
    return NULL;
}

void nbcxi_comm_retain(struct nbcx_comm_s *c)
{
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
}

void nbcxi_comm_release(struct nbcx_comm_s *c)
{
    if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1) {
        c->tp->ops->destroy(c->tp);
        if (c->kept)
            c->kept->ops->destroy(c->kept);
        struct nbcxi_comm_ext *cache = atomic_load(&c->cache);
        if (cache)
            cache->free(cache);
        nbcxi_topo_free(atomic_load(&c->topo));
        free((void *)c->held);
        pthread_mutex_destroy(&c->plock_own);
        nbcxi_pool_free(&nbcxi_comm_pool, c, NBCXI_DEAD_MAGIC);
    }
}

int nbcx_comm_rank(nbcx_comm h, int *rank)
{
    struct nbcx_comm_s *c = nbcxi_comm(h);
    if (!c)
        return NBCX_ERR_COMM;
    if (!rank)
        return NBCX_ERR_ARG;
    *rank = c->rank;
    return NBCX_SUCCESS;
}

int nbcx_comm_size(nbcx_comm h, int *size)
{
    struct nbcx_comm_s *c = nbcxi_comm(h);
    if (!c)
        return NBCX_ERR_COMM;
    if (!size)
        return NBCX_ERR_ARG;
    *size = c->size;
    return NBCX_SUCCESS;
}

int nbcx_comm_transport(nbcx_comm h, const char **name)
{
    struct nbcx_comm_s *c = nbcxi_comm(h);
    if (!c)
        return NBCX_ERR_COMM;
    if (!name)
        return NBCX_ERR_ARG;
    *name = c->tp->ops->name;
    return NBCX_SUCCESS;
}
