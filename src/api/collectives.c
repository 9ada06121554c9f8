/* collectives.c - the nonblocking collectives: argument checking, MPI's
 * NBCX_IN_PLACE rules, then build (coll/) and start (progress/); the
 * persistent inits (nbcx_<op>_init) share those checks and plan instead.
 *
 * Every check happens before anything is built or posted, and only
 * arguments MPI calls significant on this rank are checked (a non-root's
 * receive buffer of a gather, say). On error *req is NBCX_REQUEST_NULL.
 */
#include "../coll/coll.h"

/* Shared checks of a (buffer, count, type) triple. IN_PLACE is not a
 * NULL buffer; callers decide where it is allowed. */
static int check_buf(const void *buf, int count, nbcx_datatype h,
                     struct nbcx_datatype_s **t)
{
    if (count < 0)
        return NBCX_ERR_COUNT;
    if (!(*t = nbcxi_type(h)))
        return NBCX_ERR_TYPE;
    if (count > 0 && !buf)
        return NBCX_ERR_BUFFER;
    return NBCX_SUCCESS;
}

static int check_op(nbcx_op h, const struct nbcx_datatype_s *t,
                    struct nbcx_op_s **op)
{
    if (!(*op = nbcxi_op(h)))
        return NBCX_ERR_OP;
    return nbcxi_op_check(*op, t);
}

/* Common prologue: request pointer and communicator. */
static int begin(nbcx_request *req, nbcx_comm h, struct nbcx_comm_s **c)
{
    if (!req)
        return NBCX_ERR_REQUEST;
    *req = NBCX_REQUEST_NULL;
    if (!(*c = nbcxi_comm(h)))
        return NBCX_ERR_COMM;
    return NBCX_SUCCESS;
}

/* Set by an nbcx_<op>_init for the duration of its nbcx_i<op> call, so
 * that persistent and nonblocking calls share one argument check: run()
 * then plans the operation instead of starting it. */
static _Thread_local bool planning;

static int run(enum nbcxi_coll coll, struct nbcx_comm_s *c,
               struct nbcxi_coll_args *a, nbcx_request *req)
{
    struct nbcx_sched_s *s = planning ? NULL : nbcxi_cache_take(c, coll, a);
    if (s)
        return nbcxi_start(s, req);
    int err = nbcxi_sched_new(c, &s);
    if (err != NBCX_SUCCESS)
        return err;
    err = nbcxi_coll_build(coll, s, a);
    if (err == NBCX_SUCCESS && !planning)
        err = nbcxi_cache_label(s, coll, a);
    if (err != NBCX_SUCCESS) {
        nbcxi_sched_destroy(s);
        return err;
    }
    return planning ? nbcxi_plan(s, req) : nbcxi_start(s, req);
}

/* Runs `call` (a nonblocking collective) as a persistent init. */
#define PLAN(call)                                                            \
    do {                                                                      \
        planning = true;                                                      \
        int err_ = (call);                                                    \
        planning = false;                                                     \
        return err_;                                                          \
    } while (0)

#define TRY(expr)                                                             \
    do {                                                                      \
        int err_ = (expr);                                                    \
        if (err_ != NBCX_SUCCESS)                                             \
            return err_;                                                      \
    } while (0)

int nbcx_ibarrier(nbcx_comm comm, nbcx_request *req)
{
    struct nbcx_comm_s *c;
    TRY(begin(req, comm, &c));
    struct nbcxi_coll_args a = { 0 };
    return run(NBCXI_BARRIER, c, &a, req);
}

int nbcx_ibcast(void *buf, int count, nbcx_datatype type, int root,
                nbcx_comm comm, nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { .rbuf = buf, .rcount = count, .root = root };
    TRY(begin(req, comm, &c));
    TRY(check_buf(buf, count, type, &a.rtype));
    if (buf == NBCX_IN_PLACE)
        return NBCX_ERR_IN_PLACE;
    if (root < 0 || root >= c->size)
        return NBCX_ERR_ROOT;
    return run(NBCXI_BCAST, c, &a, req);
}

/* reduce and allreduce share their checks; root < 0 means allreduce. */
static int reduce_args(const void *sendbuf, void *recvbuf, int count,
                       nbcx_datatype type, nbcx_op op, int root,
                       struct nbcx_comm_s *c, struct nbcxi_coll_args *a)
{
    bool all = root < 0;
    bool at_root = all || c->rank == root;
    a->rcount = count;
    a->root = all ? 0 : root;
    if (!all && root >= c->size)
        return NBCX_ERR_ROOT;
    TRY(check_buf(sendbuf, count, type, &a->rtype));
    TRY(check_op(op, a->rtype, &a->op));
    if (at_root) {
        TRY(check_buf(recvbuf, count, type, &a->rtype));
        if (recvbuf == NBCX_IN_PLACE)
            return NBCX_ERR_IN_PLACE;
    }
    if (sendbuf == NBCX_IN_PLACE) {
        if (!at_root)
            return NBCX_ERR_IN_PLACE; /* MPI: only the root may */
        sendbuf = recvbuf;
    }
    a->sbuf = sendbuf;
    a->rbuf = at_root ? recvbuf : NULL;
    return NBCX_SUCCESS;
}

int nbcx_ireduce(const void *sendbuf, void *recvbuf, int count,
                 nbcx_datatype type, nbcx_op op, int root, nbcx_comm comm,
                 nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { 0 };
    TRY(begin(req, comm, &c));
    if (root < 0)
        return NBCX_ERR_ROOT;
    TRY(reduce_args(sendbuf, recvbuf, count, type, op, root, c, &a));
    return run(NBCXI_REDUCE, c, &a, req);
}

int nbcx_iallreduce(const void *sendbuf, void *recvbuf, int count,
                    nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                    nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { 0 };
    TRY(begin(req, comm, &c));
    TRY(reduce_args(sendbuf, recvbuf, count, type, op, -1, c, &a));
    return run(NBCXI_ALLREDUCE, c, &a, req);
}

/* The "send side" and "receive side" of gather/scatter/allgather/alltoall:
 * which of them are significant and which may be IN_PLACE. */
enum side { IGNORED, REQUIRED, IN_PLACE_OK };

static int vector_args(const void *sendbuf, int sendcount,
                       nbcx_datatype sendtype, void *recvbuf, int recvcount,
                       nbcx_datatype recvtype, enum side send,
                       enum side recv, struct nbcxi_coll_args *a)
{
    a->sbuf = sendbuf;
    a->scount = sendcount;
    a->rbuf = recvbuf;
    a->rcount = recvcount;
    if (send != IGNORED) {
        if (sendbuf == NBCX_IN_PLACE && send == IN_PLACE_OK) {
            a->scount = 0; /* sendcount and sendtype are ignored */
        } else {
            if (sendbuf == NBCX_IN_PLACE)
                return NBCX_ERR_IN_PLACE;
            TRY(check_buf(sendbuf, sendcount, sendtype, &a->stype));
        }
    }
    if (recv != IGNORED) {
        if (recvbuf == NBCX_IN_PLACE && recv == IN_PLACE_OK) {
            a->rcount = 0;
        } else {
            if (recvbuf == NBCX_IN_PLACE)
                return NBCX_ERR_IN_PLACE;
            TRY(check_buf(recvbuf, recvcount, recvtype, &a->rtype));
        }
    }
    return NBCX_SUCCESS;
}

int nbcx_igather(const void *sendbuf, int sendcount, nbcx_datatype sendtype,
                 void *recvbuf, int recvcount, nbcx_datatype recvtype,
                 int root, nbcx_comm comm, nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { .root = root };
    TRY(begin(req, comm, &c));
    if (root < 0 || root >= c->size)
        return NBCX_ERR_ROOT;
    bool at_root = c->rank == root;
    TRY(vector_args(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, at_root ? IN_PLACE_OK : REQUIRED,
                    at_root ? REQUIRED : IGNORED, &a));
    if (sendbuf == NBCX_IN_PLACE) { /* the root's block is in place */
        a.sbuf = nbcxi_at(recvbuf, root, recvcount, a.rtype);
        a.scount = recvcount;
        a.stype = a.rtype;
    }
    if (!at_root) {
        a.rbuf = NULL;
        a.rcount = 0;
    }
    return run(NBCXI_GATHER, c, &a, req);
}

int nbcx_iscatter(const void *sendbuf, int sendcount, nbcx_datatype sendtype,
                  void *recvbuf, int recvcount, nbcx_datatype recvtype,
                  int root, nbcx_comm comm, nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { .root = root };
    TRY(begin(req, comm, &c));
    if (root < 0 || root >= c->size)
        return NBCX_ERR_ROOT;
    bool at_root = c->rank == root;
    TRY(vector_args(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, at_root ? REQUIRED : IGNORED,
                    at_root ? IN_PLACE_OK : REQUIRED, &a));
    if (recvbuf == NBCX_IN_PLACE) { /* the root keeps its block in place */
        a.rbuf = nbcxi_at(sendbuf, root, sendcount, a.stype);
        a.rcount = sendcount;
        a.rtype = a.stype;
    }
    if (!at_root) {
        a.sbuf = NULL;
        a.scount = 0;
    }
    return run(NBCXI_SCATTER, c, &a, req);
}

int nbcx_iallgather(const void *sendbuf, int sendcount,
                    nbcx_datatype sendtype, void *recvbuf, int recvcount,
                    nbcx_datatype recvtype, nbcx_comm comm,
                    nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { 0 };
    TRY(begin(req, comm, &c));
    TRY(vector_args(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, IN_PLACE_OK, REQUIRED, &a));
    if (sendbuf == NBCX_IN_PLACE) {
        a.sbuf = nbcxi_at(recvbuf, c->rank, recvcount, a.rtype);
        a.scount = recvcount;
        a.stype = a.rtype;
    }
    return run(NBCXI_ALLGATHER, c, &a, req);
}

int nbcx_ialltoall(const void *sendbuf, int sendcount,
                   nbcx_datatype sendtype, void *recvbuf, int recvcount,
                   nbcx_datatype recvtype, nbcx_comm comm, nbcx_request *req)
{
    struct nbcx_comm_s *c;
    struct nbcxi_coll_args a = { 0 };
    TRY(begin(req, comm, &c));
    TRY(vector_args(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, IN_PLACE_OK, REQUIRED, &a));
    if (sendbuf == NBCX_IN_PLACE) {
        a.in_place = true;
        a.sbuf = NULL;
        a.scount = recvcount;
        a.stype = a.rtype;
    }
    return run(NBCXI_ALLTOALL, c, &a, req);
}

/* ------------------------------------------------------------------ */
/* Persistent collectives: the same checks, planned instead of started */
/* ------------------------------------------------------------------ */

int nbcx_barrier_init(nbcx_comm comm, nbcx_request *req)
{
    PLAN(nbcx_ibarrier(comm, req));
}

int nbcx_bcast_init(void *buf, int count, nbcx_datatype type, int root,
                    nbcx_comm comm, nbcx_request *req)
{
    PLAN(nbcx_ibcast(buf, count, type, root, comm, req));
}

int nbcx_reduce_init(const void *sendbuf, void *recvbuf, int count,
                     nbcx_datatype type, nbcx_op op, int root, nbcx_comm comm,
                     nbcx_request *req)
{
    PLAN(nbcx_ireduce(sendbuf, recvbuf, count, type, op, root, comm, req));
}

int nbcx_allreduce_init(const void *sendbuf, void *recvbuf, int count,
                        nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                        nbcx_request *req)
{
    PLAN(nbcx_iallreduce(sendbuf, recvbuf, count, type, op, comm, req));
}

int nbcx_gather_init(const void *sendbuf, int sendcount,
                     nbcx_datatype sendtype, void *recvbuf, int recvcount,
                     nbcx_datatype recvtype, int root, nbcx_comm comm,
                     nbcx_request *req)
{
    PLAN(nbcx_igather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                      recvtype, root, comm, req));
}

int nbcx_scatter_init(const void *sendbuf, int sendcount,
                      nbcx_datatype sendtype, void *recvbuf, int recvcount,
                      nbcx_datatype recvtype, int root, nbcx_comm comm,
                      nbcx_request *req)
{
    PLAN(nbcx_iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                       recvtype, root, comm, req));
}

int nbcx_allgather_init(const void *sendbuf, int sendcount,
                        nbcx_datatype sendtype, void *recvbuf, int recvcount,
                        nbcx_datatype recvtype, nbcx_comm comm,
                        nbcx_request *req)
{
    PLAN(nbcx_iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, comm, req));
}

int nbcx_alltoall_init(const void *sendbuf, int sendcount,
                       nbcx_datatype sendtype, void *recvbuf, int recvcount,
                       nbcx_datatype recvtype, nbcx_comm comm,
                       nbcx_request *req)
{
    PLAN(nbcx_ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, comm, req));
}
