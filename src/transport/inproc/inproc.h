/* inproc.h (internal) - what the in-process transport (transport.c)
 * shares with its shared-memory slot collectives (slots.c) and the tests.
 *
 * An inproc "world" is the set of communicators made by one
 * nbcx_inproc_run call: ranks are threads of this process. Besides the
 * point-to-point queues (private to transport.c) a world has an array of
 * slots for the slot collectives, laid out here and used only by
 * slots.c, which documents the protocol.
 */
#ifndef NBCX_TRANSPORT_INPROC_H
#define NBCX_TRANSPORT_INPROC_H

#include "../../coll/coll.h"

enum { NBCXI_CACHE_LINE = 64 };

/* One rank's part of a slot, on a cache line of its own: what the rank
 * published for the operation holding the slot, and how far it got. */
struct nbcxi_shm_entry {
    _Alignas(NBCXI_CACHE_LINE) const void *sbuf;
    void *rbuf;
    int scount, rcount;
    struct nbcx_datatype_s *stype, *rtype;
    atomic_int stage;   /* 0: not there yet, 1: published, 2: result out */
    atomic_int readers; /* other ranks done with this rank's buffers */
};

struct nbcxi_shm_slot {
    _Alignas(NBCXI_CACHE_LINE) _Atomic uint64_t state; /* see slots.c */
    atomic_int left;    /* ranks done with the slot (the last frees it) */
    atomic_int arrived; /* barrier: ranks that entered */
    atomic_int published; /* entries at stage 1 or more */
    atomic_int results;   /* entries at stage 2 (allreduce) */
    /* What operation the first rank to arrive runs, which every other
     * rank must run too (set before the state becomes BUSY): ranks that
     * start different collectives, roots or amounts of data fail instead
     * of reading each other's buffers wrongly (slots.c). */
    int coll, root;
    size_t bytes;
    struct nbcxi_shm_entry *e; /* [nranks] */
};

struct nbcxi_shm {
    int nranks;
    unsigned nslots;    /* a power of two (NBCX_INPROC_SLOTS rounded up) */
    size_t slot_max;    /* NBCX_INPROC_SLOT_MAX: automatic choice limit */
    struct nbcxi_shm_slot *slots;
    atomic_uint *ticket; /* [nranks]: slot operations each rank started */
    atomic_bool *failed; /* the world's: a rank's body returned an error */
};

/* Slot states: the ticket of a slot operation (see slots.c) and a
 * phase, FREE (the slot waits for operation `ticket`), INIT (it is being
 * set up for it) or BUSY (it uses it). Slot k starts FREE for ticket k. */
enum { NBCXI_SHM_FREE = 0, NBCXI_SHM_INIT = 1, NBCXI_SHM_BUSY = 2 };
static inline uint64_t nbcxi_shm_state(unsigned ticket, int phase)
{
    return (uint64_t)ticket << 2 | (uint64_t)phase;
}

/* The slots of c's world, or NULL if c is not on the inproc transport. */
NBCX_HIDDEN struct nbcxi_shm *nbcxi_inproc_shm(const struct nbcx_comm_s *c);

/* A world of nranks communicators without threads: one thread may drive
 * all of them (tests). Free them with nbcx_comm_free. */
NBCX_HIDDEN int nbcxi_inproc_world_create(int nranks, nbcx_comm comms[]);

/* The backend's table (transport.c) and the algorithms it serves
 * natively (slots.c). */
extern NBCX_HIDDEN const struct nbcxi_transport_ops nbcxi_inproc_ops;
extern NBCX_HIDDEN const struct nbcxi_algorithm nbcxi_inproc_algorithms[];

#endif
