/* shm.c - the "slots" algorithms: collectives through shared memory for
 * ranks that are threads of one process (the inproc transport), after
 * FastMPJ's nonblocking shared-memory collectives (Ramos et al., paper
 * 000, Section 3.4, Fig. 4-5).
 *
 * Slots. The world of an inproc communicator has an array of
 * NBCX_INPROC_SLOTS slots (transport/inproc.h). Every slot operation takes
 * a ticket when it starts: the number of slot operations its rank started
 * before, the same on every rank since ranks start collectives in the
 * same order and choose algorithms alike. (The paper uses the operation's
 * tag, i.e. its sequence number; tickets count only the operations that
 * use slots, so that point-to-point ones in between leave no slot
 * waiting for them.) Ticket t uses slot t mod NBCX_INPROC_SLOTS. A slot's
 * state is one atomic word holding a ticket and a phase:
 *
 *   FREE(t)  free, and reserved for ticket t: the next one to map here,
 *            so an operation never takes a slot before an older one that
 *            maps to it (that older one could be what another rank is
 *            waiting for);
 *   INIT(t)  the first rank of operation t to arrive (compare-and-swap
 *            from FREE(t)) clears the slot's counters;
 *   BUSY(t)  operation t uses the slot; its ranks may come in.
 *
 * A rank that finds the slot still in use by an older operation (or being
 * set up) simply tries again at its next poll: the operation stays
 * pending, never fails, so any number of operations may be outstanding.
 * When a rank is done with the slot it counts itself out (`left`); the
 * last one sets the state to FREE(t + NBCX_INPROC_SLOTS).
 *
 * Inside a slot every rank has an entry (its own cache line) where it
 * publishes references to its buffers, then raises its `stage` (release;
 * the others read the references after an acquire load of it). Nothing is
 * copied into the slot: the ranks copy directly between user buffers, one
 * copy per receiver, each rank doing its own copies:
 *
 *   bcast      the root publishes its buffer; every other rank copies
 *              from it;
 *   scatter    the root publishes its send buffer; every rank copies its
 *              block from it;
 *   gather     the root publishes its receive buffer; every rank copies
 *              its block into it;
 *   allgather  every rank publishes its block; every rank copies each
 *              block it does not have;
 *   alltoall   every rank publishes its send buffer; every rank copies
 *              its block of each (not in place: the fallback does that);
 *   reduce     every rank publishes its send buffer (the root also its
 *              receive buffer); the count is cut into one chunk per rank,
 *              and rank k reduces chunk k of all the send buffers into the
 *              root's receive buffer: all ranks reduce at once, each
 *              element is combined in rank order (any operation);
 *   allreduce  as reduce, each rank reducing its chunk into its own
 *              receive buffer and raising its stage to 2; then every rank
 *              copies the other chunks from their reducers;
 *   barrier    every rank counts itself in and waits for the count.
 *
 * A rank's buffers must stay untouched until the others are done with
 * them: every rank that finishes reading (or writing) rank q's buffers
 * increments q's `readers`, and q completes only when its count is full.
 *
 * Each operation is one POLL node (sched/executor.c) whose function is
 * the state machine below, called until it answers done. It never
 * blocks; when the world has failed (a rank's body returned an error,
 * transport/inproc/transport.c) a waiting operation fails with NBCX_ERR_TRANSPORT.
 * There are no tree levels: in split progress mode these run as in
 * thread mode.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "inproc.h"

struct shm_op {
    struct nbcx_sched_s *s;
    struct nbcxi_shm *shm;
    enum nbcxi_coll coll;
    struct nbcxi_coll_args a;
    int step;                   /* see shm_poll */
    unsigned ticket;
    struct nbcxi_shm_slot *slot;
    unsigned char *got;         /* [size]: blocks/chunks taken already */
    int ngot;
    int seen;                   /* the counter news() looked at last */
    void *tmp;                  /* allreduce in place: one chunk */
};

/* Steps: take a ticket (at the first poll, which runs inside the start
 * call: the node has no predecessors); take the slot and publish; do our
 * copies or our chunk (and collect the other chunks, allreduce); wait
 * until our buffers are free; done (the slot left). */
enum { STEP_TICKET, STEP_ENTER, STEP_WORK, STEP_COLLECT, STEP_WAIT,
       STEP_DONE };

/* ------------------------------------------------------------------ */
/* Slots                                                               */
/* ------------------------------------------------------------------ */

/* The amount of data every rank of a correct program agrees on: the
 * block each rank sends or receives, or the whole buffer. */
static size_t agreed_bytes(const struct shm_op *o)
{
    const struct nbcxi_coll_args *a = &o->a;
    switch (o->coll) {
    case NBCXI_GATHER:
    case NBCXI_ALLGATHER:
    case NBCXI_ALLTOALL:
        return (size_t)a->scount * a->stype->size;
    case NBCXI_BARRIER:
        return 0;
    default: /* bcast, scatter, reduce, allreduce */
        return (size_t)a->rcount * a->rtype->size;
    }
}

/* Whether the operation this rank runs is the one the slot was set up
 * for: ranks that disagree (an erroneous program) would copy between
 * buffers of other sizes. */
static bool agrees(const struct shm_op *o)
{
    const struct nbcxi_shm_slot *sl = o->slot;
    bool rooted = o->coll == NBCXI_BCAST || o->coll == NBCXI_REDUCE ||
                  o->coll == NBCXI_GATHER || o->coll == NBCXI_SCATTER;
    return sl->coll == (int)o->coll && sl->bytes == agreed_bytes(o) &&
           (!rooted || sl->root == o->a.root);
}

/* Takes (or joins) the slot of ticket o->ticket; false: not yet. */
static bool slot_enter(struct shm_op *o)
{
    struct nbcxi_shm *shm = o->shm;
    struct nbcxi_shm_slot *sl = &shm->slots[o->ticket & (shm->nslots - 1)];
    uint64_t busy = nbcxi_shm_state(o->ticket, NBCXI_SHM_BUSY);
    uint64_t st = atomic_load_explicit(&sl->state, memory_order_acquire);
    if (st != busy) {
        if (st != nbcxi_shm_state(o->ticket, NBCXI_SHM_FREE) ||
            !atomic_compare_exchange_strong_explicit(
                &sl->state, &st, nbcxi_shm_state(o->ticket, NBCXI_SHM_INIT),
                memory_order_acq_rel, memory_order_acquire))
            return false;
        for (int r = 0; r < shm->nranks; r++) {
            atomic_store_explicit(&sl->e[r].stage, 0, memory_order_relaxed);
            atomic_store_explicit(&sl->e[r].readers, 0,
                                  memory_order_relaxed);
        }
        atomic_store_explicit(&sl->left, 0, memory_order_relaxed);
        atomic_store_explicit(&sl->arrived, 0, memory_order_relaxed);
        atomic_store_explicit(&sl->published, 0, memory_order_relaxed);
        atomic_store_explicit(&sl->results, 0, memory_order_relaxed);
        sl->coll = (int)o->coll;
        sl->root = o->a.root;
        sl->bytes = agreed_bytes(o);
        atomic_store_explicit(&sl->state, busy, memory_order_release);
    }
    o->slot = sl;
    return true;
}

static void slot_leave(struct shm_op *o)
{
    struct nbcxi_shm_slot *sl = o->slot;
    if (atomic_fetch_add_explicit(&sl->left, 1, memory_order_acq_rel) ==
        o->shm->nranks - 1)
        atomic_store_explicit(
            &sl->state,
            nbcxi_shm_state(o->ticket + o->shm->nslots, NBCXI_SHM_FREE),
            memory_order_release);
}

static struct nbcxi_shm_entry *entry(const struct shm_op *o, int rank)
{
    return &o->slot->e[rank];
}

/* Our entry: the references are in place; the others may read them. */
static void publish(struct shm_op *o, const void *sbuf, int scount,
                    struct nbcx_datatype_s *stype, void *rbuf, int rcount,
                    struct nbcx_datatype_s *rtype)
{
    struct nbcxi_shm_entry *me = entry(o, o->s->build.rank);
    me->sbuf = sbuf;
    me->scount = scount;
    me->stype = stype;
    me->rbuf = rbuf;
    me->rcount = rcount;
    me->rtype = rtype;
    atomic_store_explicit(&me->stage, 1, memory_order_release);
    atomic_fetch_add_explicit(&o->slot->published, 1, memory_order_release);
}

/* Whether entries reached `stage` since the last look (their counter
 * moved): a poll that finds nothing new skips its scan of the entries,
 * which are on as many cache lines as there are ranks. */
static bool news(struct shm_op *o, int stage)
{
    atomic_int *c = stage == 1 ? &o->slot->published : &o->slot->results;
    int n = atomic_load_explicit(c, memory_order_acquire);
    if (n == o->seen)
        return false;
    o->seen = n;
    return true;
}

static bool reached(const struct nbcxi_shm_entry *e, int stage)
{
    return atomic_load_explicit(&e->stage, memory_order_acquire) >= stage;
}

/* We are done with rank q's buffers. */
static void release_to(struct shm_op *o, int q)
{
    atomic_fetch_add_explicit(&entry(o, q)->readers, 1,
                              memory_order_release);
}

/* Everybody who needed our buffers is done with them. */
static bool readers_done(const struct shm_op *o, int expected)
{
    return atomic_load_explicit(&entry(o, o->s->build.rank)->readers,
                                memory_order_acquire) >= expected;
}

/* What we take from rank q once its entry e has reached a stage. */
typedef int take_fn(struct shm_op *o, int q,
                    const struct nbcxi_shm_entry *e);

/* Takes, once each, what every other rank has out at `stage` (take), and
 * releases its buffers. Returns 1 when all p - 1 are taken, 0 while some
 * are not there yet, or -error. */
static int collect(struct shm_op *o, int stage, take_fn *take)
{
    int rank = o->s->build.rank, p = o->s->build.size;
    for (int k = 1; k < p && (k > 1 || news(o, stage)); k++) {
        int q = (rank + k) % p;
        const struct nbcxi_shm_entry *e = entry(o, q);
        if (o->got[q] || !reached(e, stage))
            continue;
        int err = take(o, q, e);
        release_to(o, q);
        o->got[q] = 1;
        o->ngot++;
        if (err != NBCX_SUCCESS)
            return -err;
    }
    return o->ngot < p - 1 ? 0 : 1;
}

/* ------------------------------------------------------------------ */
/* The operations: 1 done, 0 not yet, < 0 error                        */
/* ------------------------------------------------------------------ */

static int status(int err)
{
    return err == NBCX_SUCCESS ? 1 : -err;
}

/* Chunk k of n elements cut into p: [*lo, *lo + *len). */
static void chunk(int n, int p, int k, int *lo, int *len)
{
    int a = (int)((int64_t)n * k / p), b = (int)((int64_t)n * (k + 1) / p);
    *lo = a;
    *len = b - a;
}

/* bcast, scatter, gather: the root publishes, the others copy from or
 * into its buffer, then the root waits for them. */
static int rooted(struct shm_op *o)
{
    const struct nbcxi_coll_args *a = &o->a;
    int rank = o->s->build.rank, root = a->root, p = o->s->build.size;
    if (o->step == STEP_WORK) {
        int err = NBCX_SUCCESS;
        if (rank == root) {
            /* the root's own block (unless it is in place) */
            if (o->coll == NBCXI_SCATTER) {
                const void *mine = nbcxi_at(a->sbuf, root, a->scount,
                                            a->stype);
                if (a->rbuf != mine)
                    err = nbcxi_type_move(mine, a->scount, a->stype, a->rbuf,
                                          a->rcount, a->rtype);
            } else if (o->coll == NBCXI_GATHER) {
                void *mine = nbcxi_at(a->rbuf, root, a->rcount, a->rtype);
                if (a->sbuf != mine)
                    err = nbcxi_type_move(a->sbuf, a->scount, a->stype, mine,
                                          a->rcount, a->rtype);
            }
            o->step = STEP_WAIT;
            if (err != NBCX_SUCCESS)
                return -err;
        } else {
            const struct nbcxi_shm_entry *e = entry(o, root);
            if (!reached(e, 1))
                return 0;
            if (o->coll == NBCXI_BCAST)
                err = nbcxi_type_move(e->sbuf, e->scount, e->stype, a->rbuf,
                                      a->rcount, a->rtype);
            else if (o->coll == NBCXI_SCATTER)
                err = nbcxi_type_move(
                    nbcxi_at(e->sbuf, rank, e->scount, e->stype), e->scount,
                    e->stype, a->rbuf, a->rcount, a->rtype);
            else
                err = nbcxi_type_move(
                    a->sbuf, a->scount, a->stype,
                    nbcxi_at(e->rbuf, rank, e->rcount, e->rtype), e->rcount,
                    e->rtype);
            release_to(o, root);
            return status(err);
        }
    }
    return readers_done(o, p - 1) ? 1 : 0;
}

/* allgather, alltoall: rank q's block for us, into our block q. */
static int take_block(struct shm_op *o, int q,
                      const struct nbcxi_shm_entry *e)
{
    const struct nbcxi_coll_args *a = &o->a;
    const void *src = o->coll == NBCXI_ALLGATHER
                          ? e->sbuf
                          : nbcxi_at(e->sbuf, o->s->build.rank, e->scount,
                                     e->stype);
    return nbcxi_type_move(src, e->scount, e->stype,
                           nbcxi_at(a->rbuf, q, a->rcount, a->rtype),
                           a->rcount, a->rtype);
}

/* allgather, alltoall: every rank publishes, takes every other rank's
 * block for it, then waits for the others to take theirs. */
static int all_to_all(struct shm_op *o)
{
    int p = o->s->build.size;
    if (o->step == STEP_WORK) {
        int done = collect(o, 1, take_block);
        if (done <= 0)
            return done;
        o->step = STEP_WAIT;
    }
    return readers_done(o, p - 1) ? 1 : 0;
}

/* Our own block of allgather and alltoall, when we publish. */
static int own_block(struct shm_op *o)
{
    const struct nbcxi_coll_args *a = &o->a;
    int rank = o->s->build.rank;
    void *dst = nbcxi_at(a->rbuf, rank, a->rcount, a->rtype);
    const void *src = o->coll == NBCXI_ALLGATHER
                          ? a->sbuf
                          : nbcxi_at(a->sbuf, rank, a->scount, a->stype);
    if (src == dst)
        return NBCX_SUCCESS; /* in place */
    return nbcxi_type_move(src, a->scount, a->stype, dst, a->rcount,
                           a->rtype);
}

/* Reduces our chunk of every rank's send buffer, in rank order, into
 * dst (element lo of the destination buffer), through acc when the
 * destination is also one of the inputs (in place). */
static int reduce_chunk(struct shm_op *o, void *dst_buf, bool in_place,
                        void *tmp)
{
    const struct nbcxi_coll_args *a = &o->a;
    int p = o->s->build.size, lo, len;
    chunk(a->rcount, p, o->s->build.rank, &lo, &len);
    if (len == 0 || (in_place && p == 1))
        return NBCX_SUCCESS;
    struct nbcx_datatype_s *t = a->rtype;
    void *dst = nbcxi_at(dst_buf, lo, 1, t);
    void *acc = in_place ? tmp : dst;
    int err = nbcxi_type_copy(nbcxi_at(entry(o, p - 1)->sbuf, lo, 1, t), acc,
                              len, t);
    for (int q = p - 2; q >= 0 && err == NBCX_SUCCESS; q--)
        err = nbcxi_reduce(nbcxi_at(entry(o, q)->sbuf, lo, 1, t), acc, len,
                           t, a->op);
    if (err == NBCX_SUCCESS && in_place)
        err = nbcxi_type_copy(acc, dst, len, t);
    return err;
}

/* allreduce: rank q's chunk of the result, into ours. */
static int take_chunk(struct shm_op *o, int q,
                      const struct nbcxi_shm_entry *e)
{
    const struct nbcxi_coll_args *a = &o->a;
    int lo, len;
    chunk(a->rcount, o->s->build.size, q, &lo, &len);
    return nbcxi_type_copy(nbcxi_at(e->rbuf, lo, 1, a->rtype),
                           nbcxi_at(a->rbuf, lo, 1, a->rtype), len, a->rtype);
}

/* reduce and allreduce */
static int reduction(struct shm_op *o)
{
    const struct nbcxi_coll_args *a = &o->a;
    int rank = o->s->build.rank, p = o->s->build.size;
    bool all = o->coll == NBCXI_ALLREDUCE;
    if (o->step == STEP_WORK) {
        /* every rank's send buffer is needed */
        if (atomic_load_explicit(&o->slot->published,
                                 memory_order_acquire) < p)
            return 0;
        int err;
        if (all) {
            err = reduce_chunk(o, a->rbuf, a->sbuf == a->rbuf, o->tmp);
        } else {
            const struct nbcxi_shm_entry *r = entry(o, a->root);
            bool in_place = r->sbuf == r->rbuf;
            void *tmp = NULL;
            int lo, len;
            chunk(a->rcount, p, rank, &lo, &len);
            if (in_place && len > 0 && p > 1) {
                ptrdiff_t shift;
                size_t bytes = nbcxi_type_span(a->rtype, len, &shift);
                char *m = malloc(bytes);
                tmp = m ? m + shift : NULL;
                if (!m) {
                    for (int q = 0; q < p; q++)
                        if (q != rank)
                            release_to(o, q);
                    return -NBCX_ERR_NOMEM;
                }
            }
            err = reduce_chunk(o, r->rbuf, in_place, tmp);
            if (tmp) {
                ptrdiff_t shift;
                nbcxi_type_span(a->rtype, len, &shift);
                free((char *)tmp - shift);
            }
        }
        for (int q = 0; q < p; q++)
            if (q != rank)
                release_to(o, q);
        if (all) { /* our chunk of the result is out */
            atomic_store_explicit(&entry(o, rank)->stage, 2,
                                  memory_order_release);
            atomic_fetch_add_explicit(&o->slot->results, 1,
                                      memory_order_release);
            o->seen = 0;
        }
        o->step = all ? STEP_COLLECT : STEP_WAIT;
        if (err != NBCX_SUCCESS)
            return -err;
    }
    if (o->step == STEP_COLLECT) { /* allreduce: the others' chunks */
        int done = collect(o, 2, take_chunk);
        if (done <= 0)
            return done;
        o->step = STEP_WAIT;
    }
    return readers_done(o, all ? 2 * (p - 1) : p - 1) ? 1 : 0;
}

static int barrier(struct shm_op *o)
{
    if (o->step == STEP_WORK) {
        atomic_fetch_add_explicit(&o->slot->arrived, 1, memory_order_acq_rel);
        o->step = STEP_WAIT;
    }
    return atomic_load_explicit(&o->slot->arrived, memory_order_acquire) ==
                   o->s->build.size
               ? 1
               : 0;
}

/* The POLL node's function. */
static int shm_poll(void *arg)
{
    struct shm_op *o = arg;
    const struct nbcxi_coll_args *a = &o->a;
    if (o->step == STEP_DONE) /* started again (persistent operations) */
        o->step = STEP_TICKET;
    if (o->step == STEP_TICKET) {
        o->ticket = atomic_fetch_add_explicit(
            &o->shm->ticket[o->s->build.rank], 1, memory_order_relaxed);
        o->step = STEP_ENTER;
    }
    if (o->step == STEP_ENTER) {
        if (!slot_enter(o))
            return atomic_load_explicit(o->shm->failed, memory_order_relaxed)
                       ? -NBCX_ERR_TRANSPORT
                       : 0;
        /* A disagreement fails the world, before any copy: the others'
         * operations end with NBCX_ERR_TRANSPORT, as when a rank's body
         * fails. */
        if (!agrees(o)) {
            atomic_store_explicit(o->shm->failed, true, memory_order_relaxed);
            slot_leave(o);
            o->step = STEP_DONE;
            return -nbcxi_error(NBCX_ERR_ARG, "thread ranks started "
                                "different collectives, roots or amounts "
                                "of data as their shared-memory collective "
                                "number %u; their world has failed",
                                o->ticket + 1);
        }
        o->ngot = 0;
        o->seen = 0;
        if (o->got)
            memset(o->got, 0, (size_t)o->s->build.size);
        int rank = o->s->build.rank, err = NBCX_SUCCESS;
        switch (o->coll) {
        case NBCXI_BCAST:
            if (rank == a->root)
                publish(o, a->rbuf, a->rcount, a->rtype, NULL, 0, NULL);
            break;
        case NBCXI_SCATTER:
            if (rank == a->root)
                publish(o, a->sbuf, a->scount, a->stype, NULL, 0, NULL);
            break;
        case NBCXI_GATHER:
            if (rank == a->root)
                publish(o, NULL, 0, NULL, a->rbuf, a->rcount, a->rtype);
            break;
        case NBCXI_ALLGATHER:
        case NBCXI_ALLTOALL:
            publish(o, a->sbuf, a->scount, a->stype, a->rbuf, a->rcount,
                    a->rtype);
            err = own_block(o);
            break;
        case NBCXI_REDUCE:
        case NBCXI_ALLREDUCE:
            publish(o, a->sbuf, a->rcount, a->rtype, a->rbuf, a->rcount,
                    a->rtype);
            break;
        default:
            break;
        }
        o->step = STEP_WORK;
        if (err != NBCX_SUCCESS)
            return -err; /* the others wait for us: a fatal error */
    }
    int rc;
    switch (o->coll) {
    case NBCXI_BARRIER:
        rc = barrier(o);
        break;
    case NBCXI_ALLGATHER:
    case NBCXI_ALLTOALL:
        rc = all_to_all(o);
        break;
    case NBCXI_REDUCE:
    case NBCXI_ALLREDUCE:
        rc = reduction(o);
        break;
    default:
        rc = rooted(o);
        break;
    }
    if (rc == 0 && atomic_load_explicit(o->shm->failed, memory_order_relaxed))
        rc = -NBCX_ERR_TRANSPORT;
    if (rc == 1) {
        slot_leave(o);
        o->step = STEP_DONE;
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* Builders                                                            */
/* ------------------------------------------------------------------ */

static int build(enum nbcxi_coll coll, struct nbcx_sched_s *s,
                 const struct nbcxi_coll_args *a)
{
    struct nbcxi_shm *shm = nbcxi_inproc_shm(s->build.comm);
    if (!shm)
        return NBCX_ERR_INTERN; /* usable() said no */
    struct shm_op *o = nbcxi_sched_tmp(s, sizeof *o);
    if (!o)
        return s->build.err;
    memset(o, 0, sizeof *o);
    o->s = s;
    o->shm = shm;
    o->coll = coll;
    o->a = *a;
    o->step = STEP_TICKET;
    if (coll == NBCXI_ALLGATHER || coll == NBCXI_ALLTOALL ||
        coll == NBCXI_ALLREDUCE)
        o->got = nbcxi_sched_tmp(s, (size_t)s->build.size);
    if (coll == NBCXI_ALLREDUCE && a->sbuf == a->rbuf && s->build.size > 1) {
        int lo, len;
        chunk(a->rcount, s->build.size, s->build.rank, &lo, &len);
        o->tmp = nbcxi_sched_tmp_typed(s, len, a->rtype);
    }
    bool two = a->stype && a->rtype && a->stype != a->rtype;
    nbcxi_poll(s, shm_poll, o, a->rtype ? a->rtype : a->stype,
               two ? a->stype : NULL,
               (coll == NBCXI_REDUCE || coll == NBCXI_ALLREDUCE) ? a->op
                                                                 : NULL);
    return s->build.err;
}

static bool usable(const struct nbcx_sched_s *s,
                   const struct nbcxi_coll_args *a)
{
    /* Not for persistent requests: tickets are taken in start order,
     * and the starts of persistent requests may come in any order (their
     * point-to-point algorithms have a tag slot of their own). */
    /* Nor above INT_MAX bytes (the _c calls): a slot's counts are int;
     * the point-to-point algorithms serve those. Decided by the bytes,
     * which every rank agrees on (a gather's leaf may send fewer than
     * INT_MAX elements of a larger type), then by the counts, which
     * pass INT_MAX within that only with empty elements. */
    size_t sb = a->stype ? (size_t)a->scount * a->stype->size : 0;
    size_t rb = a->rtype ? (size_t)a->rcount * a->rtype->size : 0;
    return nbcxi_inproc_shm(s->build.comm) != NULL && !a->in_place &&
           !s->build.persistent && sb <= INT_MAX && rb <= INT_MAX &&
           a->scount <= INT_MAX && a->rcount <= INT_MAX;
}

#define SLOTS_BUILDER(op, COLL)                                               \
    static int build_##op(struct nbcx_sched_s *s,                             \
                          const struct nbcxi_coll_args *a)                    \
    {                                                                         \
        return build(COLL, s, a);                                             \
    }
SLOTS_BUILDER(barrier, NBCXI_BARRIER)
SLOTS_BUILDER(bcast, NBCXI_BCAST)
SLOTS_BUILDER(reduce, NBCXI_REDUCE)
SLOTS_BUILDER(allreduce, NBCXI_ALLREDUCE)
SLOTS_BUILDER(gather, NBCXI_GATHER)
SLOTS_BUILDER(scatter, NBCXI_SCATTER)
SLOTS_BUILDER(allgather, NBCXI_ALLGATHER)
SLOTS_BUILDER(alltoall, NBCXI_ALLTOALL)

/* The algorithms the inproc backend serves natively (its table's
 * `algorithms`, coll/select.c): alltoall not in place. */
const struct nbcxi_algorithm nbcxi_inproc_algorithms[] = {
    { NBCXI_BARRIER, "slots", build_barrier, usable },
    { NBCXI_BCAST, "slots", build_bcast, usable },
    { NBCXI_REDUCE, "slots", build_reduce, usable },
    { NBCXI_ALLREDUCE, "slots", build_allreduce, usable },
    { NBCXI_GATHER, "slots", build_gather, usable },
    { NBCXI_SCATTER, "slots", build_scatter, usable },
    { NBCXI_ALLGATHER, "slots", build_allgather, usable },
    { NBCXI_ALLTOALL, "slots", build_alltoall, usable },
    { 0, NULL, NULL, NULL }
};
