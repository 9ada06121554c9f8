/* collectives.c - the nonblocking collectives: argument checking, MPI's
 * NBCX_IN_PLACE rules, then build (coll/) and start (progress/); the
 * persistent inits (nbcx_<op>_init) share those checks and plan instead.
 *
 * Every check happens before anything is built or posted, and only
 * arguments MPI calls significant on this rank are checked (a non-root's
 * receive buffer of a gather, say). On error *req is NBCX_REQUEST_NULL.
 */
#include <limits.h>
#include <unistd.h>

#include "args.h"
#include "cache.h"

/* What a public function asks of op_<op>(): start or plan, and the
 * width of its count and displacement arrays (the _c calls: nbcx_count;
 * the others: int). Both widths share every check and the one path to
 * the builders; struct nbcxi_vside carries the width (wide). */
enum { HOW_START = 0, HOW_PLAN = 1, HOW_WIDE = 2 };

_Static_assert(sizeof(nbcx_count) == sizeof(ptrdiff_t),
               "the _c w variants' ptrdiff_t byte displacements are read "
               "as nbcx_count");

/* Entry i of a count or displacement array of a call made with how. */
static nbcx_count at(const void *arr, unsigned how, int i)
{
    return nbcxi_varr(arr, how & HOW_WIDE, i);
}

static int check_op(nbcx_op h, const struct nbcx_datatype_s *t,
                    struct nbcx_op_s **op)
{
    if (!(*op = nbcxi_op(h)))
        return NBCX_ERR_OP;
    return nbcxi_op_check(*op, t);
}

/* Reductions allocate scratch buffers of up to count elements on some
 * ranks (the root, inner tree nodes) and none on others. A size that no
 * rank of this machine could hold (more than its physical memory) is
 * refused with NBCX_ERR_NOMEM, and, being decided from arguments every
 * rank has, on every rank alike: without this the root failed alone while
 * the others posted sends that nothing would ever receive. (An allocation
 * that fails for want of free memory below that size still fails on the
 * ranks that allocate only: see docs/troubleshooting.md.) */
static int check_scratch(long long count, const struct nbcx_datatype_s *t)
{
    static _Atomic long long phys; /* bytes; 0: not read yet */
    long long mem = atomic_load_explicit(&phys, memory_order_relaxed);
    if (mem == 0) {
        long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
        mem = pages > 0 && size > 0 ? (long long)pages * size : LLONG_MAX;
        atomic_store_explicit(&phys, mem, memory_order_relaxed);
    }
    ptrdiff_t stride = t->extent > t->true_extent ? t->extent
                                                  : t->true_extent;
    return count > 0 && stride > 0 && count > mem / stride ? NBCX_ERR_NOMEM
                                                           : NBCX_SUCCESS;
}

/* MPI's send and receive buffers must not overlap (an argument is not
 * aliased with an OUT argument, MPI 4.0 section 2.3): a program that
 * passes the receive buffer, or its own block of it, as the send buffer
 * instead of NBCX_IN_PLACE is refused with NBCX_ERR_ALIAS, on the ranks
 * that do so, before anything starts, as MPICH refuses it (and Open MPI
 * for the reductions); the operation used to run and leave whatever its
 * algorithm made of the overlap. Only this plain case is looked for: the
 * send data starts where this rank's receive data starts, both sides
 * non-empty (s_any, r_any). Buffers that overlap otherwise, or interleave
 * through derived types, are not. r is an address computed as an integer
 * (block_at), s NULL is MPI_BOTTOM (absolute addresses: not compared). */
static int aliased(const void *s, bool s_any, uintptr_t r, bool r_any)
{
    if (s && s != NBCX_IN_PLACE && (uintptr_t)s == r && s_any && r_any)
        return nbcxi_error(NBCX_ERR_ALIAS,
                           "the send buffer is the receive buffer (%p): "
                           "MPI forbids the two to overlap; pass "
                           "NBCX_IN_PLACE (MPI_IN_PLACE) for the send "
                           "buffer instead", s);
    return NBCX_SUCCESS;
}

/* Block i of count elements of t from buf, as an integer (buf may be
 * NULL). */
static uintptr_t block_at(const void *buf, int i, nbcx_count count,
                          const struct nbcx_datatype_s *t)
{
    return (uintptr_t)buf + (uintptr_t)((ptrdiff_t)i * count * t->extent);
}

/* Whether one of n counts is positive. */
static bool any_count(int n, const void *counts, unsigned how)
{
    for (int i = 0; counts && i < n; i++)
        if (at(counts, how, i) > 0)
            return true;
    return false;
}

/* Whether the send and receive sides of an alltoallv/w lay out the same
 * blocks (counts, displacements, types): with one base address they are
 * then one buffer, which MPI forbids (in place: NBCX_IN_PLACE). */
static bool same_blocks(int n, const void *scounts, const void *sdispls,
                        nbcx_datatype stype, const nbcx_datatype *stypes,
                        const void *rcounts, const void *rdispls,
                        nbcx_datatype rtype, const nbcx_datatype *rtypes,
                        unsigned how)
{
    if (!scounts || !sdispls || !rcounts || !rdispls)
        return false;
    for (int i = 0; i < n; i++) {
        if (at(scounts, how, i) != at(rcounts, how, i) ||
            at(sdispls, how, i) != at(rdispls, how, i))
            return false;
        if (stypes && rtypes ? stypes[i] != rtypes[i]
                             : stypes || rtypes || stype != rtype)
            return false;
    }
    return true;
}

/* Common prologue: request pointer and communicator. */
static int begin(nbcx_request *req, nbcx_comm h, struct nbcx_comm_s **c)
{
    if (!req)
        return NBCX_ERR_REQUEST;
    *req = NBCX_REQUEST_NULL;
    if (!(*c = nbcxi_comm(h)))
        return NBCX_ERR_COMM;
    return nbcxi_comm_broken(*c); /* NBCX_ERR_TIMEOUT after a timeout */
}

/* Prologue of gather(v) and scatter(v): begin(), then the root. */
static int rooted_begin(nbcx_request *req, nbcx_comm h, int root,
                        struct nbcx_comm_s **c)
{
    TRY(begin(req, h, c));
    if (root < 0 || root >= (*c)->size)
        return NBCX_ERR_ROOT;
    return NBCX_SUCCESS;
}

/* Starts the checked operation (nbcx_i<op>), or, with HOW_PLAN, plans
 * it as an inactive persistent request (nbcx_<op>_init): the two share
 * their argument checks, op_<op>() below, which takes `how` from its
 * public function. */
static int run(unsigned how, enum nbcxi_coll coll, struct nbcx_comm_s *c,
               struct nbcxi_coll_args *a, nbcx_request *req)
{
    bool plan = how & HOW_PLAN;
    NBCXI_TRACE(nbcxi_trace_enter());
    struct nbcx_sched_s *s = plan ? NULL : nbcxi_cache_take(c, coll, a);
    if (s)
        return nbcxi_start(s, req);
    int err = nbcxi_sched_new(c, &s);
    if (err != NBCX_SUCCESS)
        return err;
    /* builders may choose by it (transport/inproc/slots.c) */
    s->build.persistent = plan;
    err = nbcxi_coll_build(coll, s, a, nbcxi_progress_algorithm(coll));
    if (err == NBCX_SUCCESS && !plan)
        err = nbcxi_cache_label(s, coll, a);
    if (err != NBCX_SUCCESS) {
        nbcxi_sched_destroy(s);
        return err;
    }
    return plan ? nbcxi_plan(s, req) : nbcxi_start(s, req);
}

static int op_barrier(unsigned how, nbcx_comm comm, nbcx_request *req)
{
    struct nbcx_comm_s *c;
    TRY(begin(req, comm, &c));
    struct nbcxi_coll_args a = { 0 };
    return run(how, NBCXI_BARRIER, c, &a, req);
}

int nbcx_ibarrier(nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_barrier(HOW_START, comm, req);
}

static int op_bcast(unsigned how, void *buf, nbcx_count count,
                    nbcx_datatype type, int root, nbcx_comm comm,
                    nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { .rbuf = buf, .rcount = count, .root = root };
    TRY(begin(req, comm, &c));
    TRY(nbcxi_check_buf(buf, count, type, &a.rtype));
    if (buf == NBCX_IN_PLACE)
        return NBCX_ERR_IN_PLACE;
    if (root < 0 || root >= c->size)
        return NBCX_ERR_ROOT;
    return run(how, NBCXI_BCAST, c, &a, req);
}

int nbcx_ibcast(void *buf, int count, nbcx_datatype type, int root,
                nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_bcast(HOW_START, buf, count, type, root, comm, req);
}

/* reduce and allreduce share their checks; root < 0 means allreduce. */
static int reduce_args(const void *sendbuf, void *recvbuf, nbcx_count count,
                       nbcx_datatype type, nbcx_op op, int root,
                       struct nbcx_comm_s *c, struct nbcxi_coll_args *a)
{
    bool all = root < 0;
    bool at_root = all || c->rank == root;
    a->rcount = count;
    a->root = all ? 0 : root;
    if (!all && root >= c->size)
        return NBCX_ERR_ROOT;
    TRY(nbcxi_check_buf(sendbuf, count, type, &a->rtype));
    TRY(check_op(op, a->rtype, &a->op));
    TRY(check_scratch(count, a->rtype));
    if (at_root) {
        TRY(nbcxi_check_buf(recvbuf, count, type, &a->rtype));
        if (recvbuf == NBCX_IN_PLACE)
            return NBCX_ERR_IN_PLACE;
    }
    if (at_root)
        TRY(aliased(sendbuf, count > 0, (uintptr_t)recvbuf, count > 0));
    if (sendbuf == NBCX_IN_PLACE) {
        if (!at_root)
            return NBCX_ERR_IN_PLACE; /* MPI: only the root may */
        sendbuf = recvbuf;
    }
    a->sbuf = sendbuf;
    a->rbuf = at_root ? recvbuf : NULL;
    return NBCX_SUCCESS;
}

static int op_reduce(unsigned how, const void *sendbuf, void *recvbuf,
                     nbcx_count count, nbcx_datatype type, nbcx_op op,
                     int root, nbcx_comm comm, nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { 0 };
    TRY(begin(req, comm, &c));
    if (root < 0)
        return NBCX_ERR_ROOT;
    TRY(reduce_args(sendbuf, recvbuf, count, type, op, root, c, &a));
    return run(how, NBCXI_REDUCE, c, &a, req);
}

int nbcx_ireduce(const void *sendbuf, void *recvbuf, int count,
                 nbcx_datatype type, nbcx_op op, int root, nbcx_comm comm,
                 nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_reduce(HOW_START, sendbuf, recvbuf, count, type, op, root, comm,
                     req);
}

/* allreduce, scan and exscan: the same checks on every rank. */
static int reduce_all(unsigned how, enum nbcxi_coll coll, const void *sendbuf,
                      void *recvbuf, nbcx_count count, nbcx_datatype type,
                      nbcx_op op, nbcx_comm comm, nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { 0 };
    TRY(begin(req, comm, &c));
    TRY(reduce_args(sendbuf, recvbuf, count, type, op, -1, c, &a));
    return run(how, coll, c, &a, req);
}

static int op_allreduce(unsigned how, const void *sendbuf, void *recvbuf,
                        nbcx_count count, nbcx_datatype type, nbcx_op op,
                        nbcx_comm comm, nbcx_request *req)
{
    return reduce_all(how, NBCXI_ALLREDUCE, sendbuf, recvbuf, count, type, op,
                      comm, req);
}

int nbcx_iallreduce(const void *sendbuf, void *recvbuf, int count,
                    nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                    nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_allreduce(HOW_START, sendbuf, recvbuf, count, type, op, comm,
                        req);
}

/* The "send side" and "receive side" of gather/scatter/allgather/alltoall:
 * which of them are significant and which may be IN_PLACE. An ignored
 * side is left empty (NULL, 0). */
enum side { IGNORED, REQUIRED, IN_PLACE_OK };

static int vector_args(const void *sendbuf, nbcx_count sendcount,
                       nbcx_datatype sendtype, void *recvbuf,
                       nbcx_count recvcount, nbcx_datatype recvtype,
                       enum side send, enum side recv,
                       struct nbcxi_coll_args *a)
{
    a->sbuf = send == IGNORED ? NULL : sendbuf;
    a->scount = send == IGNORED ? 0 : sendcount;
    a->rbuf = recv == IGNORED ? NULL : recvbuf;
    a->rcount = recv == IGNORED ? 0 : recvcount;
    if (send != IGNORED) {
        if (sendbuf == NBCX_IN_PLACE && send == IN_PLACE_OK) {
            a->scount = 0; /* sendcount and sendtype are ignored */
        } else {
            if (sendbuf == NBCX_IN_PLACE)
                return NBCX_ERR_IN_PLACE;
            TRY(nbcxi_check_buf(sendbuf, sendcount, sendtype, &a->stype));
        }
    }
    if (recv != IGNORED) {
        if (recvbuf == NBCX_IN_PLACE && recv == IN_PLACE_OK) {
            a->rcount = 0;
        } else {
            if (recvbuf == NBCX_IN_PLACE)
                return NBCX_ERR_IN_PLACE;
            TRY(nbcxi_check_buf(recvbuf, recvcount, recvtype, &a->rtype));
        }
    }
    return NBCX_SUCCESS;
}

/* In place, the send side of a gather or an allgather: block i of the
 * receive side. */
static void send_from_rblock(struct nbcxi_coll_args *a, int i)
{
    a->sbuf = nbcxi_at(a->rbuf, i, a->rcount, a->rtype);
    a->scount = a->rcount;
    a->stype = a->rtype;
}

/* In place, the receive side of a scatter: block i of the send side. */
static void recv_into_sblock(struct nbcxi_coll_args *a, int i)
{
    a->rbuf = nbcxi_at(a->sbuf, i, a->scount, a->stype);
    a->rcount = a->scount;
    a->rtype = a->stype;
}

/* gather and scatter, mirrors: the root's size blocks (the receive side of
 * a gather, the send side of a scatter), ignored off the root, and every
 * rank's own block (the other side), which at the root may be IN_PLACE:
 * the root's own block among its size blocks. */
static int rooted(unsigned how, enum nbcxi_coll coll, const void *sendbuf,
                  nbcx_count sendcount, nbcx_datatype sendtype, void *recvbuf,
                  nbcx_count recvcount, nbcx_datatype recvtype, int root,
                  nbcx_comm comm, nbcx_request *req)
{
    bool gather = coll == NBCXI_GATHER;
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { .root = root };
    TRY(rooted_begin(req, comm, root, &c));
    bool at_root = c->rank == root;
    enum side all = at_root ? REQUIRED : IGNORED;
    enum side own = at_root ? IN_PLACE_OK : REQUIRED;
    TRY(vector_args(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, gather ? own : all, gather ? all : own, &a));
    if (at_root && gather)
        TRY(aliased(sendbuf, sendcount > 0,
                    block_at(recvbuf, root, recvcount, a.rtype),
                    recvcount > 0));
    if (at_root && !gather)
        TRY(aliased(recvbuf, recvcount > 0,
                    block_at(sendbuf, root, sendcount, a.stype),
                    sendcount > 0));
    if (gather && sendbuf == NBCX_IN_PLACE)
        send_from_rblock(&a, root); /* the root's block is in place */
    if (!gather && recvbuf == NBCX_IN_PLACE)
        recv_into_sblock(&a, root); /* the root keeps its block in place */
    return run(how, coll, c, &a, req);
}

static int op_gather(unsigned how, const void *sendbuf, nbcx_count sendcount,
                     nbcx_datatype sendtype, void *recvbuf,
                     nbcx_count recvcount, nbcx_datatype recvtype, int root,
                     nbcx_comm comm, nbcx_request *req)
{
    return rooted(how, NBCXI_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                  recvcount, recvtype, root, comm, req);
}

int nbcx_igather(const void *sendbuf, int sendcount, nbcx_datatype sendtype,
                 void *recvbuf, int recvcount, nbcx_datatype recvtype,
                 int root, nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_gather(HOW_START, sendbuf, sendcount, sendtype, recvbuf,
                     recvcount, recvtype, root, comm, req);
}

static int op_scatter(unsigned how, const void *sendbuf, nbcx_count sendcount,
                      nbcx_datatype sendtype, void *recvbuf,
                      nbcx_count recvcount, nbcx_datatype recvtype, int root,
                      nbcx_comm comm, nbcx_request *req)
{
    return rooted(how, NBCXI_SCATTER, sendbuf, sendcount, sendtype, recvbuf,
                  recvcount, recvtype, root, comm, req);
}

int nbcx_iscatter(const void *sendbuf, int sendcount, nbcx_datatype sendtype,
                  void *recvbuf, int recvcount, nbcx_datatype recvtype,
                  int root, nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_scatter(HOW_START, sendbuf, sendcount, sendtype, recvbuf,
                      recvcount, recvtype, root, comm, req);
}

static int op_allgather(unsigned how, const void *sendbuf,
                        nbcx_count sendcount, nbcx_datatype sendtype,
                        void *recvbuf, nbcx_count recvcount,
                        nbcx_datatype recvtype, nbcx_comm comm,
                        nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { 0 };
    TRY(begin(req, comm, &c));
    TRY(vector_args(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, IN_PLACE_OK, REQUIRED, &a));
    TRY(aliased(sendbuf, sendcount > 0,
                block_at(recvbuf, c->rank, recvcount, a.rtype),
                recvcount > 0));
    if (sendbuf == NBCX_IN_PLACE)
        send_from_rblock(&a, c->rank);
    return run(how, NBCXI_ALLGATHER, c, &a, req);
}

int nbcx_iallgather(const void *sendbuf, int sendcount, nbcx_datatype sendtype,
                    void *recvbuf, int recvcount, nbcx_datatype recvtype,
                    nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_allgather(HOW_START, sendbuf, sendcount, sendtype, recvbuf,
                        recvcount, recvtype, comm, req);
}

static int op_alltoall(unsigned how, const void *sendbuf, nbcx_count sendcount,
                       nbcx_datatype sendtype, void *recvbuf,
                       nbcx_count recvcount, nbcx_datatype recvtype,
                       nbcx_comm comm, nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { 0 };
    TRY(begin(req, comm, &c));
    TRY(vector_args(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, IN_PLACE_OK, REQUIRED, &a));
    TRY(aliased(sendbuf, sendcount > 0, (uintptr_t)recvbuf, recvcount > 0));
    if (sendbuf == NBCX_IN_PLACE) {
        a.in_place = true;
        a.sbuf = NULL;
        a.scount = recvcount;
        a.stype = a.rtype;
    }
    return run(how, NBCXI_ALLTOALL, c, &a, req);
}

int nbcx_ialltoall(const void *sendbuf, int sendcount, nbcx_datatype sendtype,
                   void *recvbuf, int recvcount, nbcx_datatype recvtype,
                   nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_alltoall(HOW_START, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, comm, req);
}

/* ------------------------------------------------------------------ */
/* Persistent collectives: the same checks, planned instead of started */
/* ------------------------------------------------------------------ */

int nbcx_barrier_init(nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_barrier(HOW_PLAN, comm, req);
}

int nbcx_bcast_init(void *buf, int count, nbcx_datatype type, int root,
                    nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_bcast(HOW_PLAN, buf, count, type, root, comm, req);
}

int nbcx_reduce_init(const void *sendbuf, void *recvbuf, int count,
                     nbcx_datatype type, nbcx_op op, int root, nbcx_comm comm,
                     nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_reduce(HOW_PLAN, sendbuf, recvbuf, count, type, op, root, comm,
                     req);
}

int nbcx_allreduce_init(const void *sendbuf, void *recvbuf, int count,
                        nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                        nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_allreduce(HOW_PLAN, sendbuf, recvbuf, count, type, op, comm,
                        req);
}

int nbcx_gather_init(const void *sendbuf, int sendcount,
                     nbcx_datatype sendtype, void *recvbuf, int recvcount,
                     nbcx_datatype recvtype, int root, nbcx_comm comm,
                     nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_gather(HOW_PLAN, sendbuf, sendcount, sendtype, recvbuf,
                     recvcount, recvtype, root, comm, req);
}

int nbcx_scatter_init(const void *sendbuf, int sendcount,
                      nbcx_datatype sendtype, void *recvbuf, int recvcount,
                      nbcx_datatype recvtype, int root, nbcx_comm comm,
                      nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_scatter(HOW_PLAN, sendbuf, sendcount, sendtype, recvbuf,
                      recvcount, recvtype, root, comm, req);
}

int nbcx_allgather_init(const void *sendbuf, int sendcount,
                        nbcx_datatype sendtype, void *recvbuf, int recvcount,
                        nbcx_datatype recvtype, nbcx_comm comm,
                        nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_allgather(HOW_PLAN, sendbuf, sendcount, sendtype, recvbuf,
                        recvcount, recvtype, comm, req);
}

int nbcx_alltoall_init(const void *sendbuf, int sendcount,
                       nbcx_datatype sendtype, void *recvbuf, int recvcount,
                       nbcx_datatype recvtype, nbcx_comm comm,
                       nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_alltoall(HOW_PLAN, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, comm, req);
}

/* ------------------------------------------------------------------ */
/* Vector and w variants                                               */
/* ------------------------------------------------------------------ */

/* Counts of n blocks: the arrays present when there are blocks (else
 * NBCX_ERR_ARG), every count >= 0 and one nbcx serves (else
 * NBCX_ERR_COUNT, nbcxi_check_count). *any: some block is not empty. */
static int check_counts(int n, const void *counts, const void *displs,
                        unsigned how, bool *any)
{
    *any = false;
    if (n > 0 && (!counts || !displs))
        return NBCX_ERR_ARG;
    for (int i = 0; i < n; i++) {
        nbcx_count ci = at(counts, how, i);
        TRY(nbcxi_check_count(ci));
        *any = *any || ci > 0;
    }
    return NBCX_SUCCESS;
}

/* One side of n blocks of one type: counts, then the type, then a buffer
 * when any block is non-empty (NBCX_ERR_BUFFER). IN_PLACE is not NULL:
 * callers decide where it is allowed. */
static int check_vside(const void *buf, int n, const void *counts,
                       const void *displs, unsigned how, nbcx_datatype type,
                       struct nbcx_datatype_s **t)
{
    bool any;
    TRY(check_counts(n, counts, displs, how, &any));
    if (!(*t = nbcxi_type(type)))
        return NBCX_ERR_TYPE;
    return any && !buf && !nbcxi_type_absolute(*t) ? NBCX_ERR_BUFFER
                                                    : NBCX_SUCCESS;
}

/* The same with a type per block (w variants). Their displacements are
 * in bytes, so a NULL buffer (MPI_BOTTOM) is valid with any type: the
 * displacements are then absolute addresses. The
 * blocks' addresses are computed as integers (nbcxi_vblock). */
static int check_wside(const void *buf, int n, const void *counts,
                       const void *displs, unsigned how,
                       const nbcx_datatype *types)
{
    bool any;
    (void)buf;
    if (n > 0 && !types)
        return NBCX_ERR_ARG;
    TRY(check_counts(n, counts, displs, how, &any));
    for (int i = 0; i < n; i++)
        if (!nbcxi_type(types[i]))
            return NBCX_ERR_TYPE;
    return NBCX_SUCCESS;
}

/* gatherv and scatterv, mirrors: the root's size blocks (the receive
 * side of a gatherv, the send side of a scatterv; never IN_PLACE) and
 * every rank's own block (the other side), which may be IN_PLACE at the
 * root only: its count and type are then ignored. */
static int rooted_v(unsigned how, enum nbcxi_coll coll, const void *vbuf,
                    const void *counts, const void *displs,
                    nbcx_datatype vtype, const void *buf, nbcx_count count,
                    nbcx_datatype type, int root, nbcx_comm comm,
                    nbcx_request *req)
{
    bool gather = coll == NBCXI_GATHERV;
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { .root = root };
    struct nbcxi_vside *v = gather ? &a.rv : &a.sv; /* the root's side */
    struct nbcx_datatype_s **vt = gather ? &a.rtype : &a.stype;
    struct nbcx_datatype_s **t = gather ? &a.stype : &a.rtype; /* own */
    nbcx_count *n = gather ? &a.scount : &a.rcount;
    const void *all = NULL, *own = NULL; /* the buffers, when significant */
    TRY(rooted_begin(req, comm, root, &c));
    bool at_root = c->rank == root;
    if (at_root) {
        if (vbuf == NBCX_IN_PLACE)
            return NBCX_ERR_IN_PLACE;
        TRY(check_vside(vbuf, c->size, counts, displs, how, vtype, vt));
        all = vbuf;
        v->counts = counts;
        v->displs = displs;
        v->wide = how & HOW_WIDE;
    }
    if (buf == NBCX_IN_PLACE) {
        if (!at_root)
            return NBCX_ERR_IN_PLACE;
        a.in_place = true; /* count and type are ignored */
    } else {
        TRY(nbcxi_check_buf(buf, count, type, t));
        own = buf;
        *n = count;
    }
    a.sbuf = gather ? own : all;
    a.rbuf = (void *)(uintptr_t)(gather ? all : own);
    if (at_root) /* own, and the root's block of all */
        TRY(aliased(own, *n > 0,
                    (uintptr_t)(gather ? nbcxi_rblock(&a, root)
                                       : nbcxi_sblock(&a, root)).buf,
                    at(counts, how, root) > 0));
    return run(how, coll, c, &a, req);
}

static int op_gatherv(unsigned how, const void *sendbuf, nbcx_count sendcount,
                      nbcx_datatype sendtype, void *recvbuf,
                      const void *recvcounts, const void *displs,
                      nbcx_datatype recvtype, int root, nbcx_comm comm,
                      nbcx_request *req)
{
    return rooted_v(how, NBCXI_GATHERV, recvbuf, recvcounts, displs, recvtype,
                    sendbuf, sendcount, sendtype, root, comm, req);
}

int nbcx_igatherv(const void *sendbuf, int sendcount, nbcx_datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int displs[],
                  nbcx_datatype recvtype, int root, nbcx_comm comm,
                  nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_gatherv(HOW_START, sendbuf, sendcount, sendtype, recvbuf,
                      recvcounts, displs, recvtype, root, comm, req);
}

static int op_scatterv(unsigned how, const void *sendbuf,
                       const void *sendcounts, const void *displs,
                       nbcx_datatype sendtype, void *recvbuf,
                       nbcx_count recvcount, nbcx_datatype recvtype, int root,
                       nbcx_comm comm, nbcx_request *req)
{
    return rooted_v(how, NBCXI_SCATTERV, sendbuf, sendcounts, displs,
                    sendtype, recvbuf, recvcount, recvtype, root, comm, req);
}

int nbcx_iscatterv(const void *sendbuf, const int sendcounts[],
                   const int displs[], nbcx_datatype sendtype, void *recvbuf,
                   int recvcount, nbcx_datatype recvtype, int root,
                   nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_scatterv(HOW_START, sendbuf, sendcounts, displs, sendtype,
                       recvbuf, recvcount, recvtype, root, comm, req);
}

static int op_allgatherv(unsigned how, const void *sendbuf,
                         nbcx_count sendcount, nbcx_datatype sendtype,
                         void *recvbuf, const void *recvcounts,
                         const void *displs, nbcx_datatype recvtype,
                         nbcx_comm comm, nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { 0 };
    TRY(begin(req, comm, &c));
    if (recvbuf == NBCX_IN_PLACE)
        return NBCX_ERR_IN_PLACE;
    TRY(check_vside(recvbuf, c->size, recvcounts, displs, how, recvtype,
                    &a.rtype));
    a.rbuf = recvbuf;
    a.rv.counts = recvcounts;
    a.rv.displs = displs;
    a.rv.wide = how & HOW_WIDE;
    if (sendbuf == NBCX_IN_PLACE) { /* the own block is in rbuf */
        struct nbcxi_block own = nbcxi_rblock(&a, c->rank);
        a.in_place = true;
        a.sbuf = own.buf;
        a.scount = own.count;
        a.stype = own.type;
    } else {
        TRY(nbcxi_check_buf(sendbuf, sendcount, sendtype, &a.stype));
        TRY(aliased(sendbuf, sendcount > 0,
                    (uintptr_t)nbcxi_rblock(&a, c->rank).buf,
                    at(recvcounts, how, c->rank) > 0));
        a.sbuf = sendbuf;
        a.scount = sendcount;
    }
    return run(how, NBCXI_ALLGATHERV, c, &a, req);
}

int nbcx_iallgatherv(const void *sendbuf, int sendcount,
                     nbcx_datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[],
                     nbcx_datatype recvtype, nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_allgatherv(HOW_START, sendbuf, sendcount, sendtype, recvbuf,
                         recvcounts, displs, recvtype, comm, req);
}

/* alltoallv (types NULL) and alltoallw (types per rank, byte displs). */
static int alltoallvw(unsigned how, const void *sendbuf,
                      const void *sendcounts, const void *sdispls,
                      nbcx_datatype sendtype, const nbcx_datatype *sendtypes,
                      void *recvbuf, const void *recvcounts,
                      const void *rdispls, nbcx_datatype recvtype,
                      const nbcx_datatype *recvtypes, bool w, nbcx_comm comm,
                      nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { 0 };
    TRY(begin(req, comm, &c));
    if (recvbuf == NBCX_IN_PLACE)
        return NBCX_ERR_IN_PLACE;
    if (w)
        TRY(check_wside(recvbuf, c->size, recvcounts, rdispls, how,
                        recvtypes));
    else
        TRY(check_vside(recvbuf, c->size, recvcounts, rdispls, how, recvtype,
                        &a.rtype));
    a.rbuf = recvbuf;
    bool wide = how & HOW_WIDE;
    a.rv = (struct nbcxi_vside){ recvcounts, rdispls, NULL, w, recvtypes,
                                 wide };
    if (sendbuf == NBCX_IN_PLACE) {
        a.in_place = true; /* the send side is ignored */
    } else {
        if (w)
            TRY(check_wside(sendbuf, c->size, sendcounts, sdispls, how,
                            sendtypes));
        else
            TRY(check_vside(sendbuf, c->size, sendcounts, sdispls, how,
                            sendtype, &a.stype));
        /* (one base address with different blocks on each side is valid:
         * the two sides may lie apart in one array) */
        if (same_blocks(c->size, sendcounts, sdispls, sendtype, sendtypes,
                        recvcounts, rdispls, recvtype, recvtypes, how))
            TRY(aliased(sendbuf, any_count(c->size, sendcounts, how),
                        (uintptr_t)recvbuf, true));
        a.sbuf = sendbuf;
        a.sv = (struct nbcxi_vside){ sendcounts, sdispls, NULL, w,
                                     sendtypes, wide };
    }
    return run(how, w ? NBCXI_ALLTOALLW : NBCXI_ALLTOALLV, c, &a, req);
}

static int op_alltoallv(unsigned how, const void *sendbuf,
                        const void *sendcounts, const void *sdispls,
                        nbcx_datatype sendtype, void *recvbuf,
                        const void *recvcounts, const void *rdispls,
                        nbcx_datatype recvtype, nbcx_comm comm,
                        nbcx_request *req)
{
    return alltoallvw(how, sendbuf, sendcounts, sdispls, sendtype, NULL,
                      recvbuf, recvcounts, rdispls, recvtype, NULL, false,
                      comm, req);
}

int nbcx_ialltoallv(const void *sendbuf, const int sendcounts[],
                    const int sdispls[], nbcx_datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int rdispls[],
                    nbcx_datatype recvtype, nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_alltoallv(HOW_START, sendbuf, sendcounts, sdispls, sendtype,
                        recvbuf, recvcounts, rdispls, recvtype, comm, req);
}

static int op_alltoallw(unsigned how, const void *sendbuf,
                        const void *sendcounts, const void *sdispls,
                        const nbcx_datatype sendtypes[], void *recvbuf,
                        const void *recvcounts, const void *rdispls,
                        const nbcx_datatype recvtypes[], nbcx_comm comm,
                        nbcx_request *req)
{
    return alltoallvw(how, sendbuf, sendcounts, sdispls, NBCX_DATATYPE_NULL,
                      sendtypes, recvbuf, recvcounts, rdispls,
                      NBCX_DATATYPE_NULL, recvtypes, true, comm, req);
}

int nbcx_ialltoallw(const void *sendbuf, const int sendcounts[],
                    const int sdispls[], const nbcx_datatype sendtypes[],
                    void *recvbuf, const int recvcounts[], const int rdispls[],
                    const nbcx_datatype recvtypes[], nbcx_comm comm,
                    nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_alltoallw(HOW_START, sendbuf, sendcounts, sdispls, sendtypes,
                        recvbuf, recvcounts, rdispls, recvtypes, comm, req);
}

/* ------------------------------------------------------------------ */
/* Reduce-scatter, scan, exscan                                        */
/* ------------------------------------------------------------------ */

/* recvcounts NULL: every block recvcount elements (_block). */
static int reduce_scatter(unsigned how, const void *sendbuf, void *recvbuf,
                          const void *recvcounts, nbcx_count recvcount,
                          nbcx_datatype type, nbcx_op op, bool block,
                          nbcx_comm comm, nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { 0 };
    TRY(begin(req, comm, &c));
    if (!block && !recvcounts)
        return NBCX_ERR_ARG;
    long long total = 0;
    for (int i = 0; i < c->size; i++) {
        nbcx_count n = block ? recvcount : at(recvcounts, how, i);
        TRY(nbcxi_check_count(n));
        if (n > LLONG_MAX - total) /* no buffer holds that much */
            return NBCX_ERR_COUNT;
        total += n;
    }
    /* total may exceed INT_MAX: the schedules count it in 64 bits */
    if (!(a.rtype = nbcxi_type(type)))
        return NBCX_ERR_TYPE;
    TRY(check_op(op, a.rtype, &a.op));
    TRY(check_scratch(total, a.rtype));
    if (recvbuf == NBCX_IN_PLACE)
        return NBCX_ERR_IN_PLACE;
    nbcx_count mine = block ? recvcount : at(recvcounts, how, c->rank);
    if (sendbuf == NBCX_IN_PLACE) { /* the vector is in recvbuf */
        TRY(nbcxi_check_buf(recvbuf, total > 0, type, &a.rtype));
        sendbuf = recvbuf;
    } else {
        TRY(nbcxi_check_buf(sendbuf, total > 0, type, &a.rtype));
        TRY(nbcxi_check_buf(recvbuf, mine, type, &a.rtype));
        TRY(aliased(sendbuf, total > 0, (uintptr_t)recvbuf, mine > 0));
    }
    a.sbuf = sendbuf;
    a.rbuf = recvbuf;
    a.rcount = recvcount;
    a.rv.counts = block ? NULL : recvcounts;
    a.rv.wide = how & HOW_WIDE;
    return run(how, block ? NBCXI_REDUCE_SCATTER_BLOCK : NBCXI_REDUCE_SCATTER,
               c, &a, req);
}

static int op_reduce_scatter(unsigned how, const void *sendbuf, void *recvbuf,
                             const void *recvcounts, nbcx_datatype type,
                             nbcx_op op, nbcx_comm comm, nbcx_request *req)
{
    return reduce_scatter(how, sendbuf, recvbuf, recvcounts, 0, type, op,
                          false, comm, req);
}

int nbcx_ireduce_scatter(const void *sendbuf, void *recvbuf,
                         const int recvcounts[], nbcx_datatype type,
                         nbcx_op op, nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_reduce_scatter(HOW_START, sendbuf, recvbuf, recvcounts, type, op,
                             comm, req);
}

static int op_reduce_scatter_block(unsigned how, const void *sendbuf,
                                   void *recvbuf, nbcx_count recvcount,
                                   nbcx_datatype type, nbcx_op op,
                                   nbcx_comm comm, nbcx_request *req)
{
    return reduce_scatter(how, sendbuf, recvbuf, NULL, recvcount, type, op,
                          true, comm, req);
}

int nbcx_ireduce_scatter_block(const void *sendbuf, void *recvbuf,
                               int recvcount, nbcx_datatype type, nbcx_op op,
                               nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_reduce_scatter_block(HOW_START, sendbuf, recvbuf, recvcount,
                                   type, op, comm, req);
}

static int op_scan(unsigned how, const void *sendbuf, void *recvbuf,
                   nbcx_count count, nbcx_datatype type, nbcx_op op,
                   nbcx_comm comm, nbcx_request *req)
{
    return reduce_all(how, NBCXI_SCAN, sendbuf, recvbuf, count, type, op,
                      comm, req);
}

int nbcx_iscan(const void *sendbuf, void *recvbuf, int count,
               nbcx_datatype type, nbcx_op op, nbcx_comm comm,
               nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_scan(HOW_START, sendbuf, recvbuf, count, type, op, comm, req);
}

static int op_exscan(unsigned how, const void *sendbuf, void *recvbuf,
                     nbcx_count count, nbcx_datatype type, nbcx_op op,
                     nbcx_comm comm, nbcx_request *req)
{
    return reduce_all(how, NBCXI_EXSCAN, sendbuf, recvbuf, count, type, op,
                      comm, req);
}

int nbcx_iexscan(const void *sendbuf, void *recvbuf, int count,
                 nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                 nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_exscan(HOW_START, sendbuf, recvbuf, count, type, op, comm, req);
}

/* ------------------------------------------------------------------ */
/* Neighbourhood collectives                                           */
/* ------------------------------------------------------------------ */

/* Prologue: request, communicator, its topology; MPI has no in-place
 * neighbourhood collectives. */
static int neighbor_begin(nbcx_request *req, nbcx_comm comm,
                          const void *sendbuf, const void *recvbuf,
                          struct nbcx_comm_s **c, struct nbcxi_coll_args *a)
{
    TRY(begin(req, comm, c));
    if (!(a->topo = atomic_load(&(*c)->topo)))
        return NBCX_ERR_TOPOLOGY;
    if (sendbuf == NBCX_IN_PLACE || recvbuf == NBCX_IN_PLACE)
        return NBCX_ERR_IN_PLACE;
    return NBCX_SUCCESS;
}

/* A regular side: n blocks of count elements of type. */
static int check_blocks(const void *buf, int n, nbcx_count count,
                        nbcx_datatype type, struct nbcx_datatype_s **t)
{
    return nbcxi_check_buf(buf, n > 0 ? count : NBCXI_MIN(count, 0), type, t);
}

/* neighbor_allgather and neighbor_alltoall: the same sides. */
static int neighbor_blocks(unsigned how, enum nbcxi_coll coll,
                           const void *sendbuf, nbcx_count sendcount,
                           nbcx_datatype sendtype, void *recvbuf,
                           nbcx_count recvcount, nbcx_datatype recvtype,
                           nbcx_comm comm, nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { 0 };
    TRY(neighbor_begin(req, comm, sendbuf, recvbuf, &c, &a));
    TRY(check_blocks(sendbuf, a.topo->outdegree, sendcount, sendtype,
                     &a.stype));
    TRY(check_blocks(recvbuf, a.topo->indegree, recvcount, recvtype,
                     &a.rtype));
    a.sbuf = sendbuf;
    a.scount = sendcount;
    a.rbuf = recvbuf;
    a.rcount = recvcount;
    return run(how, coll, c, &a, req);
}

static int op_neighbor_allgather(unsigned how, const void *sendbuf,
                                 nbcx_count sendcount, nbcx_datatype sendtype,
                                 void *recvbuf, nbcx_count recvcount,
                                 nbcx_datatype recvtype, nbcx_comm comm,
                                 nbcx_request *req)
{
    return neighbor_blocks(how, NBCXI_NEIGHBOR_ALLGATHER, sendbuf, sendcount,
                           sendtype, recvbuf, recvcount, recvtype, comm, req);
}

int nbcx_ineighbor_allgather(const void *sendbuf, int sendcount,
                             nbcx_datatype sendtype, void *recvbuf,
                             int recvcount, nbcx_datatype recvtype,
                             nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_allgather(HOW_START, sendbuf, sendcount, sendtype,
                                 recvbuf, recvcount, recvtype, comm, req);
}

static int op_neighbor_allgatherv(unsigned how, const void *sendbuf,
                                  nbcx_count sendcount, nbcx_datatype sendtype,
                                  void *recvbuf, const void *recvcounts,
                                  const void *displs, nbcx_datatype recvtype,
                                  nbcx_comm comm, nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { 0 };
    TRY(neighbor_begin(req, comm, sendbuf, recvbuf, &c, &a));
    TRY(check_blocks(sendbuf, a.topo->outdegree, sendcount, sendtype,
                     &a.stype));
    TRY(check_vside(recvbuf, a.topo->indegree, recvcounts, displs, how,
                    recvtype, &a.rtype));
    a.sbuf = sendbuf;
    a.scount = sendcount;
    a.rbuf = recvbuf;
    a.rv.counts = recvcounts;
    a.rv.displs = displs;
    a.rv.wide = how & HOW_WIDE;
    return run(how, NBCXI_NEIGHBOR_ALLGATHERV, c, &a, req);
}

int nbcx_ineighbor_allgatherv(const void *sendbuf, int sendcount,
                              nbcx_datatype sendtype, void *recvbuf,
                              const int recvcounts[], const int displs[],
                              nbcx_datatype recvtype, nbcx_comm comm,
                              nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_allgatherv(HOW_START, sendbuf, sendcount, sendtype,
                                  recvbuf, recvcounts, displs, recvtype, comm,
                                  req);
}

static int op_neighbor_alltoall(unsigned how, const void *sendbuf,
                                nbcx_count sendcount, nbcx_datatype sendtype,
                                void *recvbuf, nbcx_count recvcount,
                                nbcx_datatype recvtype, nbcx_comm comm,
                                nbcx_request *req)
{
    return neighbor_blocks(how, NBCXI_NEIGHBOR_ALLTOALL, sendbuf, sendcount,
                           sendtype, recvbuf, recvcount, recvtype, comm, req);
}

int nbcx_ineighbor_alltoall(const void *sendbuf, int sendcount,
                            nbcx_datatype sendtype, void *recvbuf,
                            int recvcount, nbcx_datatype recvtype,
                            nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_alltoall(HOW_START, sendbuf, sendcount, sendtype,
                                recvbuf, recvcount, recvtype, comm, req);
}

static int op_neighbor_alltoallv(unsigned how, const void *sendbuf,
                                 const void *sendcounts, const void *sdispls,
                                 nbcx_datatype sendtype, void *recvbuf,
                                 const void *recvcounts, const void *rdispls,
                                 nbcx_datatype recvtype, nbcx_comm comm,
                                 nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { 0 };
    TRY(neighbor_begin(req, comm, sendbuf, recvbuf, &c, &a));
    TRY(check_vside(sendbuf, a.topo->outdegree, sendcounts, sdispls, how,
                    sendtype, &a.stype));
    TRY(check_vside(recvbuf, a.topo->indegree, recvcounts, rdispls, how,
                    recvtype, &a.rtype));
    a.sbuf = sendbuf;
    a.sv.counts = sendcounts;
    a.sv.displs = sdispls;
    a.sv.wide = how & HOW_WIDE;
    a.rbuf = recvbuf;
    a.rv.counts = recvcounts;
    a.rv.displs = rdispls;
    a.rv.wide = how & HOW_WIDE;
    return run(how, NBCXI_NEIGHBOR_ALLTOALLV, c, &a, req);
}

int nbcx_ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                             const int sdispls[], nbcx_datatype sendtype,
                             void *recvbuf, const int recvcounts[],
                             const int rdispls[], nbcx_datatype recvtype,
                             nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_alltoallv(HOW_START, sendbuf, sendcounts, sdispls,
                                 sendtype, recvbuf, recvcounts, rdispls,
                                 recvtype, comm, req);
}

static int op_neighbor_alltoallw(unsigned how, const void *sendbuf,
                                 const void *sendcounts,
                                 const ptrdiff_t sdispls[],
                                 const nbcx_datatype sendtypes[],
                                 void *recvbuf, const void *recvcounts,
                                 const ptrdiff_t rdispls[],
                                 const nbcx_datatype recvtypes[],
                                 nbcx_comm comm, nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { 0 };
    TRY(neighbor_begin(req, comm, sendbuf, recvbuf, &c, &a));
    TRY(check_wside(sendbuf, a.topo->outdegree, sendcounts, sdispls, how,
                    sendtypes));
    TRY(check_wside(recvbuf, a.topo->indegree, recvcounts, rdispls, how,
                    recvtypes));
    a.sbuf = sendbuf;
    bool wide = how & HOW_WIDE;
    a.sv = (struct nbcxi_vside){ sendcounts, NULL, sdispls, true, sendtypes,
                                 wide };
    a.rbuf = recvbuf;
    a.rv = (struct nbcxi_vside){ recvcounts, NULL, rdispls, true, recvtypes,
                                 wide };
    return run(how, NBCXI_NEIGHBOR_ALLTOALLW, c, &a, req);
}

int nbcx_ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                             const ptrdiff_t sdispls[],
                             const nbcx_datatype sendtypes[], void *recvbuf,
                             const int recvcounts[], const ptrdiff_t rdispls[],
                             const nbcx_datatype recvtypes[], nbcx_comm comm,
                             nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_alltoallw(HOW_START, sendbuf, sendcounts, sdispls,
                                 sendtypes, recvbuf, recvcounts, rdispls,
                                 recvtypes, comm, req);
}

/* ------------------------------------------------------------------ */
/* Persistent forms of the vector, scan and neighbourhood collectives   */
/* ------------------------------------------------------------------ */

int nbcx_gatherv_init(const void *sendbuf, int sendcount,
                      nbcx_datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[],
                      nbcx_datatype recvtype, int root, nbcx_comm comm,
                      nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_gatherv(HOW_PLAN, sendbuf, sendcount, sendtype, recvbuf,
                      recvcounts, displs, recvtype, root, comm, req);
}

int nbcx_scatterv_init(const void *sendbuf, const int sendcounts[],
                       const int displs[], nbcx_datatype sendtype,
                       void *recvbuf, int recvcount, nbcx_datatype recvtype,
                       int root, nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_scatterv(HOW_PLAN, sendbuf, sendcounts, displs, sendtype,
                       recvbuf, recvcount, recvtype, root, comm, req);
}

int nbcx_allgatherv_init(const void *sendbuf, int sendcount,
                         nbcx_datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[],
                         nbcx_datatype recvtype, nbcx_comm comm,
                         nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_allgatherv(HOW_PLAN, sendbuf, sendcount, sendtype, recvbuf,
                         recvcounts, displs, recvtype, comm, req);
}

int nbcx_alltoallv_init(const void *sendbuf, const int sendcounts[],
                        const int sdispls[], nbcx_datatype sendtype,
                        void *recvbuf, const int recvcounts[],
                        const int rdispls[], nbcx_datatype recvtype,
                        nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_alltoallv(HOW_PLAN, sendbuf, sendcounts, sdispls, sendtype,
                        recvbuf, recvcounts, rdispls, recvtype, comm, req);
}

int nbcx_alltoallw_init(const void *sendbuf, const int sendcounts[],
                        const int sdispls[], const nbcx_datatype sendtypes[],
                        void *recvbuf, const int recvcounts[],
                        const int rdispls[], const nbcx_datatype recvtypes[],
                        nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_alltoallw(HOW_PLAN, sendbuf, sendcounts, sdispls, sendtypes,
                        recvbuf, recvcounts, rdispls, recvtypes, comm, req);
}

int nbcx_reduce_scatter_init(const void *sendbuf, void *recvbuf,
                             const int recvcounts[], nbcx_datatype type,
                             nbcx_op op, nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_reduce_scatter(HOW_PLAN, sendbuf, recvbuf, recvcounts, type, op,
                             comm, req);
}

int nbcx_reduce_scatter_block_init(const void *sendbuf, void *recvbuf,
                                   int recvcount, nbcx_datatype type,
                                   nbcx_op op, nbcx_comm comm,
                                   nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_reduce_scatter_block(HOW_PLAN, sendbuf, recvbuf, recvcount, type,
                                   op, comm, req);
}

int nbcx_scan_init(const void *sendbuf, void *recvbuf, int count,
                   nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                   nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_scan(HOW_PLAN, sendbuf, recvbuf, count, type, op, comm, req);
}

int nbcx_exscan_init(const void *sendbuf, void *recvbuf, int count,
                     nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                     nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_exscan(HOW_PLAN, sendbuf, recvbuf, count, type, op, comm, req);
}

int nbcx_neighbor_allgather_init(const void *sendbuf, int sendcount,
                                 nbcx_datatype sendtype, void *recvbuf,
                                 int recvcount, nbcx_datatype recvtype,
                                 nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_allgather(HOW_PLAN, sendbuf, sendcount, sendtype,
                                 recvbuf, recvcount, recvtype, comm, req);
}

int nbcx_neighbor_allgatherv_init(const void *sendbuf, int sendcount,
                                  nbcx_datatype sendtype, void *recvbuf,
                                  const int recvcounts[], const int displs[],
                                  nbcx_datatype recvtype, nbcx_comm comm,
                                  nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_allgatherv(HOW_PLAN, sendbuf, sendcount, sendtype,
                                  recvbuf, recvcounts, displs, recvtype, comm,
                                  req);
}

int nbcx_neighbor_alltoall_init(const void *sendbuf, int sendcount,
                                nbcx_datatype sendtype, void *recvbuf,
                                int recvcount, nbcx_datatype recvtype,
                                nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_alltoall(HOW_PLAN, sendbuf, sendcount, sendtype,
                                recvbuf, recvcount, recvtype, comm, req);
}

int nbcx_neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[],
                                 const int sdispls[], nbcx_datatype sendtype,
                                 void *recvbuf, const int recvcounts[],
                                 const int rdispls[], nbcx_datatype recvtype,
                                 nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_alltoallv(HOW_PLAN, sendbuf, sendcounts, sdispls,
                                 sendtype, recvbuf, recvcounts, rdispls,
                                 recvtype, comm, req);
}

int nbcx_neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                 const ptrdiff_t sdispls[],
                                 const nbcx_datatype sendtypes[],
                                 void *recvbuf, const int recvcounts[],
                                 const ptrdiff_t rdispls[],
                                 const nbcx_datatype recvtypes[],
                                 nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_alltoallw(HOW_PLAN, sendbuf, sendcounts, sdispls,
                                 sendtypes, recvbuf, recvcounts, rdispls,
                                 recvtypes, comm, req);
}

/* ------------------------------------------------------------------ */
/* Large counts (nbcx_i<op>_c, nbcx_<op>_init_c): the same op_<op>()   */
/* with HOW_WIDE, its arrays read as nbcx_count                        */
/* ------------------------------------------------------------------ */

int nbcx_ibcast_c(void *buf, nbcx_count count, nbcx_datatype type, int root,
                  nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_bcast(HOW_START | HOW_WIDE, buf, count, type, root, comm, req);
}

int nbcx_ireduce_c(const void *sendbuf, void *recvbuf, nbcx_count count,
                   nbcx_datatype type, nbcx_op op, int root, nbcx_comm comm,
                   nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_reduce(HOW_START | HOW_WIDE, sendbuf, recvbuf, count, type, op,
                     root, comm, req);
}

int nbcx_iallreduce_c(const void *sendbuf, void *recvbuf, nbcx_count count,
                      nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                      nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_allreduce(HOW_START | HOW_WIDE, sendbuf, recvbuf, count, type,
                        op, comm, req);
}

int nbcx_igather_c(const void *sendbuf, nbcx_count sendcount,
                   nbcx_datatype sendtype, void *recvbuf, nbcx_count recvcount,
                   nbcx_datatype recvtype, int root, nbcx_comm comm,
                   nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_gather(HOW_START | HOW_WIDE, sendbuf, sendcount, sendtype,
                     recvbuf, recvcount, recvtype, root, comm, req);
}

int nbcx_iscatter_c(const void *sendbuf, nbcx_count sendcount,
                    nbcx_datatype sendtype, void *recvbuf,
                    nbcx_count recvcount, nbcx_datatype recvtype, int root,
                    nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_scatter(HOW_START | HOW_WIDE, sendbuf, sendcount, sendtype,
                      recvbuf, recvcount, recvtype, root, comm, req);
}

int nbcx_iallgather_c(const void *sendbuf, nbcx_count sendcount,
                      nbcx_datatype sendtype, void *recvbuf,
                      nbcx_count recvcount, nbcx_datatype recvtype,
                      nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_allgather(HOW_START | HOW_WIDE, sendbuf, sendcount, sendtype,
                        recvbuf, recvcount, recvtype, comm, req);
}

int nbcx_ialltoall_c(const void *sendbuf, nbcx_count sendcount,
                     nbcx_datatype sendtype, void *recvbuf,
                     nbcx_count recvcount, nbcx_datatype recvtype,
                     nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_alltoall(HOW_START | HOW_WIDE, sendbuf, sendcount, sendtype,
                       recvbuf, recvcount, recvtype, comm, req);
}

int nbcx_igatherv_c(const void *sendbuf, nbcx_count sendcount,
                    nbcx_datatype sendtype, void *recvbuf,
                    const nbcx_count recvcounts[], const nbcx_count displs[],
                    nbcx_datatype recvtype, int root, nbcx_comm comm,
                    nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_gatherv(HOW_START | HOW_WIDE, sendbuf, sendcount, sendtype,
                      recvbuf, recvcounts, displs, recvtype, root, comm, req);
}

int nbcx_iscatterv_c(const void *sendbuf, const nbcx_count sendcounts[],
                     const nbcx_count displs[], nbcx_datatype sendtype,
                     void *recvbuf, nbcx_count recvcount,
                     nbcx_datatype recvtype, int root, nbcx_comm comm,
                     nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_scatterv(HOW_START | HOW_WIDE, sendbuf, sendcounts, displs,
                       sendtype, recvbuf, recvcount, recvtype, root, comm,
                       req);
}

int nbcx_iallgatherv_c(const void *sendbuf, nbcx_count sendcount,
                       nbcx_datatype sendtype, void *recvbuf,
                       const nbcx_count recvcounts[],
                       const nbcx_count displs[], nbcx_datatype recvtype,
                       nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_allgatherv(HOW_START | HOW_WIDE, sendbuf, sendcount, sendtype,
                         recvbuf, recvcounts, displs, recvtype, comm, req);
}

int nbcx_ialltoallv_c(const void *sendbuf, const nbcx_count sendcounts[],
                      const nbcx_count sdispls[], nbcx_datatype sendtype,
                      void *recvbuf, const nbcx_count recvcounts[],
                      const nbcx_count rdispls[], nbcx_datatype recvtype,
                      nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_alltoallv(HOW_START | HOW_WIDE, sendbuf, sendcounts, sdispls,
                        sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                        req);
}

int nbcx_ialltoallw_c(const void *sendbuf, const nbcx_count sendcounts[],
                      const ptrdiff_t sdispls[],
                      const nbcx_datatype sendtypes[], void *recvbuf,
                      const nbcx_count recvcounts[], const ptrdiff_t rdispls[],
                      const nbcx_datatype recvtypes[], nbcx_comm comm,
                      nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_alltoallw(HOW_START | HOW_WIDE, sendbuf, sendcounts, sdispls,
                        sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                        comm, req);
}

int nbcx_ireduce_scatter_c(const void *sendbuf, void *recvbuf,
                           const nbcx_count recvcounts[], nbcx_datatype type,
                           nbcx_op op, nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_reduce_scatter(HOW_START | HOW_WIDE, sendbuf, recvbuf,
                             recvcounts, type, op, comm, req);
}

int nbcx_ireduce_scatter_block_c(const void *sendbuf, void *recvbuf,
                                 nbcx_count recvcount, nbcx_datatype type,
                                 nbcx_op op, nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_reduce_scatter_block(HOW_START | HOW_WIDE, sendbuf, recvbuf,
                                   recvcount, type, op, comm, req);
}

int nbcx_iscan_c(const void *sendbuf, void *recvbuf, nbcx_count count,
                 nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                 nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_scan(HOW_START | HOW_WIDE, sendbuf, recvbuf, count, type, op,
                   comm, req);
}

int nbcx_iexscan_c(const void *sendbuf, void *recvbuf, nbcx_count count,
                   nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                   nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_exscan(HOW_START | HOW_WIDE, sendbuf, recvbuf, count, type, op,
                     comm, req);
}

int nbcx_ineighbor_allgather_c(const void *sendbuf, nbcx_count sendcount,
                               nbcx_datatype sendtype, void *recvbuf,
                               nbcx_count recvcount, nbcx_datatype recvtype,
                               nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_allgather(HOW_START | HOW_WIDE, sendbuf, sendcount,
                                 sendtype, recvbuf, recvcount, recvtype, comm,
                                 req);
}

int nbcx_ineighbor_allgatherv_c(const void *sendbuf, nbcx_count sendcount,
                                nbcx_datatype sendtype, void *recvbuf,
                                const nbcx_count recvcounts[],
                                const nbcx_count displs[],
                                nbcx_datatype recvtype, nbcx_comm comm,
                                nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_allgatherv(HOW_START | HOW_WIDE, sendbuf, sendcount,
                                  sendtype, recvbuf, recvcounts, displs,
                                  recvtype, comm, req);
}

int nbcx_ineighbor_alltoall_c(const void *sendbuf, nbcx_count sendcount,
                              nbcx_datatype sendtype, void *recvbuf,
                              nbcx_count recvcount, nbcx_datatype recvtype,
                              nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_alltoall(HOW_START | HOW_WIDE, sendbuf, sendcount,
                                sendtype, recvbuf, recvcount, recvtype, comm,
                                req);
}

int nbcx_ineighbor_alltoallv_c(const void *sendbuf,
                               const nbcx_count sendcounts[],
                               const nbcx_count sdispls[],
                               nbcx_datatype sendtype, void *recvbuf,
                               const nbcx_count recvcounts[],
                               const nbcx_count rdispls[],
                               nbcx_datatype recvtype, nbcx_comm comm,
                               nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_alltoallv(HOW_START | HOW_WIDE, sendbuf, sendcounts,
                                 sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, comm, req);
}

int nbcx_ineighbor_alltoallw_c(const void *sendbuf,
                               const nbcx_count sendcounts[],
                               const ptrdiff_t sdispls[],
                               const nbcx_datatype sendtypes[], void *recvbuf,
                               const nbcx_count recvcounts[],
                               const ptrdiff_t rdispls[],
                               const nbcx_datatype recvtypes[], nbcx_comm comm,
                               nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_alltoallw(HOW_START | HOW_WIDE, sendbuf, sendcounts,
                                 sdispls, sendtypes, recvbuf, recvcounts,
                                 rdispls, recvtypes, comm, req);
}

int nbcx_bcast_init_c(void *buf, nbcx_count count, nbcx_datatype type,
                      int root, nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_bcast(HOW_PLAN | HOW_WIDE, buf, count, type, root, comm, req);
}

int nbcx_reduce_init_c(const void *sendbuf, void *recvbuf, nbcx_count count,
                       nbcx_datatype type, nbcx_op op, int root,
                       nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_reduce(HOW_PLAN | HOW_WIDE, sendbuf, recvbuf, count, type, op,
                     root, comm, req);
}

int nbcx_allreduce_init_c(const void *sendbuf, void *recvbuf, nbcx_count count,
                          nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                          nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_allreduce(HOW_PLAN | HOW_WIDE, sendbuf, recvbuf, count, type, op,
                        comm, req);
}

int nbcx_gather_init_c(const void *sendbuf, nbcx_count sendcount,
                       nbcx_datatype sendtype, void *recvbuf,
                       nbcx_count recvcount, nbcx_datatype recvtype, int root,
                       nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_gather(HOW_PLAN | HOW_WIDE, sendbuf, sendcount, sendtype,
                     recvbuf, recvcount, recvtype, root, comm, req);
}

int nbcx_scatter_init_c(const void *sendbuf, nbcx_count sendcount,
                        nbcx_datatype sendtype, void *recvbuf,
                        nbcx_count recvcount, nbcx_datatype recvtype, int root,
                        nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_scatter(HOW_PLAN | HOW_WIDE, sendbuf, sendcount, sendtype,
                      recvbuf, recvcount, recvtype, root, comm, req);
}

int nbcx_allgather_init_c(const void *sendbuf, nbcx_count sendcount,
                          nbcx_datatype sendtype, void *recvbuf,
                          nbcx_count recvcount, nbcx_datatype recvtype,
                          nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_allgather(HOW_PLAN | HOW_WIDE, sendbuf, sendcount, sendtype,
                        recvbuf, recvcount, recvtype, comm, req);
}

int nbcx_alltoall_init_c(const void *sendbuf, nbcx_count sendcount,
                         nbcx_datatype sendtype, void *recvbuf,
                         nbcx_count recvcount, nbcx_datatype recvtype,
                         nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_alltoall(HOW_PLAN | HOW_WIDE, sendbuf, sendcount, sendtype,
                       recvbuf, recvcount, recvtype, comm, req);
}

int nbcx_gatherv_init_c(const void *sendbuf, nbcx_count sendcount,
                        nbcx_datatype sendtype, void *recvbuf,
                        const nbcx_count recvcounts[],
                        const nbcx_count displs[], nbcx_datatype recvtype,
                        int root, nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_gatherv(HOW_PLAN | HOW_WIDE, sendbuf, sendcount, sendtype,
                      recvbuf, recvcounts, displs, recvtype, root, comm, req);
}

int nbcx_scatterv_init_c(const void *sendbuf, const nbcx_count sendcounts[],
                         const nbcx_count displs[], nbcx_datatype sendtype,
                         void *recvbuf, nbcx_count recvcount,
                         nbcx_datatype recvtype, int root, nbcx_comm comm,
                         nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_scatterv(HOW_PLAN | HOW_WIDE, sendbuf, sendcounts, displs,
                       sendtype, recvbuf, recvcount, recvtype, root, comm,
                       req);
}

int nbcx_allgatherv_init_c(const void *sendbuf, nbcx_count sendcount,
                           nbcx_datatype sendtype, void *recvbuf,
                           const nbcx_count recvcounts[],
                           const nbcx_count displs[], nbcx_datatype recvtype,
                           nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_allgatherv(HOW_PLAN | HOW_WIDE, sendbuf, sendcount, sendtype,
                         recvbuf, recvcounts, displs, recvtype, comm, req);
}

int nbcx_alltoallv_init_c(const void *sendbuf, const nbcx_count sendcounts[],
                          const nbcx_count sdispls[], nbcx_datatype sendtype,
                          void *recvbuf, const nbcx_count recvcounts[],
                          const nbcx_count rdispls[], nbcx_datatype recvtype,
                          nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_alltoallv(HOW_PLAN | HOW_WIDE, sendbuf, sendcounts, sdispls,
                        sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                        req);
}

int nbcx_alltoallw_init_c(const void *sendbuf, const nbcx_count sendcounts[],
                          const ptrdiff_t sdispls[],
                          const nbcx_datatype sendtypes[], void *recvbuf,
                          const nbcx_count recvcounts[],
                          const ptrdiff_t rdispls[],
                          const nbcx_datatype recvtypes[], nbcx_comm comm,
                          nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_alltoallw(HOW_PLAN | HOW_WIDE, sendbuf, sendcounts, sdispls,
                        sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                        comm, req);
}

int nbcx_reduce_scatter_init_c(const void *sendbuf, void *recvbuf,
                               const nbcx_count recvcounts[],
                               nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                               nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_reduce_scatter(HOW_PLAN | HOW_WIDE, sendbuf, recvbuf, recvcounts,
                             type, op, comm, req);
}

int nbcx_reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf,
                                     nbcx_count recvcount, nbcx_datatype type,
                                     nbcx_op op, nbcx_comm comm,
                                     nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_reduce_scatter_block(HOW_PLAN | HOW_WIDE, sendbuf, recvbuf,
                                   recvcount, type, op, comm, req);
}

int nbcx_scan_init_c(const void *sendbuf, void *recvbuf, nbcx_count count,
                     nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                     nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_scan(HOW_PLAN | HOW_WIDE, sendbuf, recvbuf, count, type, op,
                   comm, req);
}

int nbcx_exscan_init_c(const void *sendbuf, void *recvbuf, nbcx_count count,
                       nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                       nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_exscan(HOW_PLAN | HOW_WIDE, sendbuf, recvbuf, count, type, op,
                     comm, req);
}

int nbcx_neighbor_allgather_init_c(const void *sendbuf, nbcx_count sendcount,
                                   nbcx_datatype sendtype, void *recvbuf,
                                   nbcx_count recvcount,
                                   nbcx_datatype recvtype, nbcx_comm comm,
                                   nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_allgather(HOW_PLAN | HOW_WIDE, sendbuf, sendcount,
                                 sendtype, recvbuf, recvcount, recvtype, comm,
                                 req);
}

int nbcx_neighbor_allgatherv_init_c(const void *sendbuf, nbcx_count sendcount,
                                    nbcx_datatype sendtype, void *recvbuf,
                                    const nbcx_count recvcounts[],
                                    const nbcx_count displs[],
                                    nbcx_datatype recvtype, nbcx_comm comm,
                                    nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_allgatherv(HOW_PLAN | HOW_WIDE, sendbuf, sendcount,
                                  sendtype, recvbuf, recvcounts, displs,
                                  recvtype, comm, req);
}

int nbcx_neighbor_alltoall_init_c(const void *sendbuf, nbcx_count sendcount,
                                  nbcx_datatype sendtype, void *recvbuf,
                                  nbcx_count recvcount, nbcx_datatype recvtype,
                                  nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_alltoall(HOW_PLAN | HOW_WIDE, sendbuf, sendcount,
                                sendtype, recvbuf, recvcount, recvtype, comm,
                                req);
}

int nbcx_neighbor_alltoallv_init_c(const void *sendbuf,
                                   const nbcx_count sendcounts[],
                                   const nbcx_count sdispls[],
                                   nbcx_datatype sendtype, void *recvbuf,
                                   const nbcx_count recvcounts[],
                                   const nbcx_count rdispls[],
                                   nbcx_datatype recvtype, nbcx_comm comm,
                                   nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_alltoallv(HOW_PLAN | HOW_WIDE, sendbuf, sendcounts,
                                 sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, comm, req);
}

int nbcx_neighbor_alltoallw_init_c(const void *sendbuf,
                                   const nbcx_count sendcounts[],
                                   const ptrdiff_t sdispls[],
                                   const nbcx_datatype sendtypes[],
                                   void *recvbuf,
                                   const nbcx_count recvcounts[],
                                   const ptrdiff_t rdispls[],
                                   const nbcx_datatype recvtypes[],
                                   nbcx_comm comm, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    return op_neighbor_alltoallw(HOW_PLAN | HOW_WIDE, sendbuf, sendcounts,
                                 sdispls, sendtypes, recvbuf, recvcounts,
                                 rdispls, recvtypes, comm, req);
}
