/* pool.c - memory for objects reached through handles (communicators,
 * user operations, face datatypes, requests) that is never given back to
 * the system: a released object keeps its memory, with a magic word that
 * says it is dead, until an object of the same kind reuses it. A stale
 * handle (a copy kept after nbcx_comm_free, nbcx_op_free, a request's
 * completion) therefore reads valid memory and is told apart from a live
 * one by its magic, instead of reading freed memory and being right only
 * by luck. What it cannot tell: a handle whose memory a newer object of
 * the same kind has taken (as with MPI's own handles, using a freed handle
 * is erroneous; nbcx only promises not to crash on the common case). The
 * memory held is that of the most objects of each kind alive at once.
 *
 * Every object starts with its uint32_t magic; the free list link is
 * stored after it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

struct free_obj {
    uint32_t magic;
    struct free_obj *next;
};

void *nbcxi_pool_alloc(struct nbcxi_pool *p)
{
    pthread_mutex_lock(&p->lock);
    struct free_obj *o = p->free;
    if (o)
        p->free = o->next;
    pthread_mutex_unlock(&p->lock);
    if (!o)
        o = calloc(1, p->size);
    else
        memset(o, 0, p->size);
    if (o)
        atomic_fetch_add(&p->live, 1);
    return o;
}

void nbcxi_pool_free(struct nbcxi_pool *p, void *obj, uint32_t dead_magic)
{
    if (!obj)
        return;
    struct free_obj *o = obj;
    memset(obj, 0, p->size);
    o->magic = dead_magic;
    pthread_mutex_lock(&p->lock);
    o->next = p->free;
    p->free = o;
    pthread_mutex_unlock(&p->lock);
    atomic_fetch_sub(&p->live, 1);
}

long nbcxi_pool_live(struct nbcxi_pool *p)
{
    return atomic_load(&p->live);
}
