/* builder.c - the public schedule builder: checks arguments, then uses
 * the same helpers as nbcx's own algorithms (sched/schedule.c). A bad
 * argument returns an error and leaves the schedule as it was. */
#include "args.h"

/* A buffer of a node: as nbcxi_check_buf, and never IN_PLACE
 * (NBCX_ERR_BUFFER when count > 0). */
static int check_typed(const void *buf, int count, nbcx_datatype h,
                       struct nbcx_datatype_s **t)
{
    int err = nbcxi_check_buf(buf, count, h, t);
    if (err == NBCX_SUCCESS && count > 0 && buf == NBCX_IN_PLACE)
        return NBCX_ERR_BUFFER;
    return err;
}

/* Reports the new node (or the schedule's pending error). */
static int added(struct nbcx_sched_s *s, nbcx_node id, nbcx_node *node)
{
    if (node)
        *node = id;
    return s->build.err;
}

int nbcx_sched_create(nbcx_comm comm, nbcx_sched *sched)
{
    if (!sched)
        return NBCX_ERR_ARG;
    *sched = NULL;
    struct nbcx_comm_s *c = nbcxi_comm(comm);
    if (!c)
        return NBCX_ERR_COMM;
    return nbcxi_sched_new(c, sched);
}

static int p2p(nbcx_sched s, bool send, const void *buf, int count,
               nbcx_datatype type, int peer, int tag, nbcx_node *node)
{
    struct nbcx_datatype_s *t;
    if (!s)
        return NBCX_ERR_ARG;
    TRY(check_typed(buf, count, type, &t));
    if (peer < 0 || peer >= s->build.size)
        return NBCX_ERR_RANK;
    if (tag < 0 || tag > NBCX_SCHED_TAG_MAX)
        return NBCX_ERR_TAG;
    nbcx_node id = send ? nbcxi_send(s, buf, count, t, peer, tag)
                        : nbcxi_recv(s, (void *)(uintptr_t)buf, count, t,
                                     peer, tag);
    return added(s, id, node);
}

int nbcx_sched_send(nbcx_sched s, const void *buf, int count,
                    nbcx_datatype type, int peer, int tag, nbcx_node *node)
{
    return p2p(s, true, buf, count, type, peer, tag, node);
}

int nbcx_sched_recv(nbcx_sched s, void *buf, int count, nbcx_datatype type,
                    int peer, int tag, nbcx_node *node)
{
    return p2p(s, false, buf, count, type, peer, tag, node);
}

int nbcx_sched_reduce(nbcx_sched s, const void *in, void *inout, int count,
                      nbcx_datatype type, nbcx_op op, nbcx_node *node)
{
    struct nbcx_datatype_s *t;
    struct nbcx_op_s *o;
    if (!s)
        return NBCX_ERR_ARG;
    TRY(check_typed(in, count, type, &t));
    TRY(check_typed(inout, count, type, &t));
    if (!(o = nbcxi_op(op)))
        return NBCX_ERR_OP;
    TRY(nbcxi_op_check(o, t));
    return added(s, nbcxi_reduce_node(s, in, inout, count, t, o), node);
}

int nbcx_sched_copy(nbcx_sched s, const void *src, int srccount,
                    nbcx_datatype srctype, void *dst, int dstcount,
                    nbcx_datatype dsttype, nbcx_node *node)
{
    struct nbcx_datatype_s *st, *dt;
    if (!s)
        return NBCX_ERR_ARG;
    TRY(check_typed(src, srccount, srctype, &st));
    TRY(check_typed(dst, dstcount, dsttype, &dt));
    if ((size_t)srccount * st->size != (size_t)dstcount * dt->size)
        return NBCX_ERR_ARG; /* signatures must hold the same bytes */
    return added(s, nbcxi_copy(s, src, srccount, st, dst, dstcount, dt),
                 node);
}

int nbcx_sched_call(nbcx_sched s, nbcx_sched_fn *fn, void *arg,
                    nbcx_node *node)
{
    if (!s || !fn)
        return NBCX_ERR_ARG;
    return added(s, nbcxi_call(s, fn, arg), node);
}

int nbcx_sched_depend(nbcx_sched s, nbcx_node before, nbcx_node after)
{
    if (!s)
        return NBCX_ERR_ARG;
    if (before < 0 || before >= s->build.nnodes || after < 0 ||
        after >= s->build.nnodes || before == after)
        return NBCX_ERR_NODE;
    nbcxi_dep(s, before, after);
    return s->build.err;
}

int nbcx_sched_tmp(nbcx_sched s, size_t bytes, void **buf)
{
    if (!s || !buf)
        return NBCX_ERR_ARG;
    *buf = nbcxi_sched_tmp(s, bytes);
    return *buf ? NBCX_SUCCESS : s->build.err;
}

int nbcx_sched_start(nbcx_sched *sched, nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    if (!req)
        return NBCX_ERR_REQUEST;
    *req = NBCX_REQUEST_NULL;
    if (!sched || !*sched)
        return NBCX_ERR_ARG;
    struct nbcx_sched_s *s = *sched;
    *sched = NULL; /* consumed, whatever happens next */
    int broken = nbcxi_comm_broken(s->build.comm); /* broken: a timeout */
    if (s->build.err || broken) {
        int err = s->build.err ? s->build.err : broken;
        nbcxi_sched_destroy(s);
        return err;
    }
    return nbcxi_start(s, req); /* a cycle is rejected before posting */
}

int nbcx_sched_free(nbcx_sched *sched)
{
    if (!sched)
        return NBCX_ERR_ARG;
    nbcxi_sched_destroy(*sched);
    *sched = NULL;
    return NBCX_SUCCESS;
}
