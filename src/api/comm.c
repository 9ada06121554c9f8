/* comm.c - communicators: rank, size, a transport and a tag sequence. */
#include <stdlib.h>

#include "../core.h"

int nbcxi_comm_create(int rank, int size, nbcxi_transport *tp, nbcx_comm *out)
{
    /* Tags: the low 12 bits carry the schedule tag (NBCX_SCHED_TAG_MAX),
     * the bits above the sequence number of the collective, modulo nseq.
     * MPI guarantees tag_ub >= 32767, so nseq >= 8; Open MPI and MPICH
     * give 2^19 and 2^16 collectives in flight per communicator. */
    unsigned nseq = ((unsigned)tp->tag_ub + 1u) >> 12;
    if (nseq == 0 || rank < 0 || rank >= size) {
        tp->ops->destroy(tp);
        return NBCX_ERR_TRANSPORT;
    }
    struct nbcx_comm_s *c = calloc(1, sizeof *c);
    struct nbcxi_cache *cache = nbcxi_cache_new();
    if (!c || !cache) {
        nbcxi_cache_free(cache);
        free(c);
        tp->ops->destroy(tp);
        return NBCX_ERR_NOMEM;
    }
    c->cache = cache;
    c->magic = NBCXI_COMM_MAGIC;
    c->rank = rank;
    c->size = size;
    c->tp = tp;
    c->nseq = nseq;
    atomic_init(&c->seq, 0);
    atomic_init(&c->refs, 1);
    atomic_init(&c->topo, NULL);
    *out = c;
    return NBCX_SUCCESS;
}

struct nbcx_comm_s *nbcxi_comm(nbcx_comm h)
{
    if (!h)
        return NULL;
    return h->magic == NBCXI_COMM_MAGIC ? h : NULL;
}

void nbcxi_comm_retain(struct nbcx_comm_s *c)
{
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
}

void nbcxi_comm_release(struct nbcx_comm_s *c)
{
    if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1) {
        c->tp->ops->destroy(c->tp);
        nbcxi_cache_free(c->cache);
        nbcxi_topo_free(atomic_load(&c->topo));
        free(c);
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

int nbcx_comm_free(nbcx_comm *h)
{
    if (!h)
        return NBCX_ERR_ARG;
    struct nbcx_comm_s *c = nbcxi_comm(*h);
    if (!c)
        return NBCX_ERR_COMM;
    *h = NBCX_COMM_NULL;
    c->magic = 0; /* the handle is dead; operations in flight hold refs */
    nbcxi_cache_close(c);
    nbcxi_comm_release(c);
    return NBCX_SUCCESS;
}
