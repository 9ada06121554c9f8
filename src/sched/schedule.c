/* schedule.c - building a schedule: nodes, edges, scratch buffers.
 *
 * A schedule is one rank's DAG. Building it only records: nodes in an
 * array, edges as (from, to) pairs, scratch buffers in a list. The
 * executor turns the edges into successor lists when the schedule starts.
 * Every helper records the first failure in s->err and turns later calls
 * into no-ops returning -1, so builders can check once at the end. Nodes
 * retain the datatypes and operations they use until the schedule dies.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

/* Schedules alive (built and not destroyed, cached ones included). */
static atomic_long live_scheds;

long nbcxi_sched_live(void)
{
    return atomic_load(&live_scheds);
}

int nbcxi_sched_new(struct nbcx_comm_s *comm, struct nbcx_sched_s **out)
{
    struct nbcx_sched_s *s = calloc(1, sizeof *s);
    if (!s)
        return NBCX_ERR_NOMEM;
    atomic_fetch_add(&live_scheds, 1);
    nbcxi_comm_retain(comm);
    s->comm = comm;
    s->rank = comm->rank;
    s->size = comm->size;
    *out = s;
    return NBCX_SUCCESS;
}

static void node_release(struct nbcxi_node *n)
{
    switch (n->kind) {
    case NBCXI_NODE_SEND:
    case NBCXI_NODE_RECV:
        nbcxi_type_release(n->u.p2p.type);
        break;
    case NBCXI_NODE_REDUCE:
        nbcxi_type_release(n->u.red.type);
        nbcxi_op_release(n->u.red.op);
        break;
    case NBCXI_NODE_COPY:
        nbcxi_type_release(n->u.copy.stype);
        nbcxi_type_release(n->u.copy.dtype);
        break;
    case NBCXI_NODE_POLL:
        if (n->u.poll.type)
            nbcxi_type_release(n->u.poll.type);
        if (n->u.poll.type2)
            nbcxi_type_release(n->u.poll.type2);
        if (n->u.poll.op)
            nbcxi_op_release(n->u.poll.op);
        break;
    default:
        break;
    }
}

void nbcxi_sched_destroy(struct nbcx_sched_s *s)
{
    if (!s)
        return;
    nbcxi_sched_release_requests(s);
    if (s->keeper)
        s->keeper->forget(s);
    if (s->holds_slot) /* a persistent request, or an error path */
        nbcxi_slot_release(s->comm, s->slot);
    for (int i = 0; i < s->nnodes; i++)
        node_release(&s->nodes[i]);
    for (int i = 0; i < s->ntmps; i++)
        free(s->tmps[i]);
    free(s->tmps);
    free(s->nodes);
    free(s->edges);
    free(s->succ);
    free(s->ready);
    free(s->reqs);
    free(s->req_node);
    free(s->done_idx);
    free(s->req_t0);
    free(s->deferred);
    free(s->polls);
    nbcxi_comm_release(s->comm);
    free(s);
    atomic_fetch_sub(&live_scheds, 1);
}

void nbcxi_sched_retire(struct nbcx_sched_s *s, int err)
{
    if (s->keeper)
        s->keeper->done(s, err);
    else
        nbcxi_sched_destroy(s);
}

/* Grows *arr (of *cap elements of size elem) to hold need elements. */
static bool grow(void **arr, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return true;
    int ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    void *p = realloc(*arr, (size_t)ncap * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = ncap;
    return true;
}

static int fail(struct nbcx_sched_s *s, int err)
{
    if (s->err == NBCX_SUCCESS)
        s->err = err;
    return -1;
}

void *nbcxi_sched_tmp(struct nbcx_sched_s *s, size_t bytes)
{
    if (s->err)
        return NULL;
    if (!grow((void **)&s->tmps, &s->tmps_cap, s->ntmps + 1, sizeof(void *))) {
        fail(s, NBCX_ERR_NOMEM);
        return NULL;
    }
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fail(s, NBCX_ERR_NOMEM);
        return NULL;
    }
    s->tmps[s->ntmps++] = p;
    return p;
}

void *nbcxi_sched_tmp_typed(struct nbcx_sched_s *s, int count,
                            struct nbcx_datatype_s *type)
{
    ptrdiff_t shift;
    size_t bytes = nbcxi_type_span(type, count, &shift);
    char *p = nbcxi_sched_tmp(s, bytes);
    return p ? p + shift : NULL;
}

/* Appends a node of nd's kind with nd's operands (every other field
 * zero). Returns its id, or -1 with s->err set. */
static nbcx_node add_node(struct nbcx_sched_s *s, struct nbcxi_node nd)
{
    if (s->err)
        return -1;
    if (!grow((void **)&s->nodes, &s->nodes_cap, s->nnodes + 1,
              sizeof *s->nodes)) {
        fail(s, NBCX_ERR_NOMEM);
        return -1;
    }
    struct nbcxi_node *n = &s->nodes[s->nnodes];
    memset(n, 0, sizeof *n);
    n->kind = nd.kind;
    n->u = nd.u;
    return s->nnodes++;
}

static nbcx_node p2p(struct nbcx_sched_s *s, int kind, const void *buf,
                     int count, struct nbcx_datatype_s *type, int peer,
                     int tag)
{
    nbcx_node id = add_node(s, (struct nbcxi_node){
        .kind = (uint8_t)kind,
        .u.p2p = { .buf = (void *)(uintptr_t)buf, .count = count,
                   .type = type, .peer = peer, .tag = tag } });
    if (id >= 0)
        nbcxi_type_retain(type);
    return id;
}

nbcx_node nbcxi_send(struct nbcx_sched_s *s, const void *buf, int count,
                     struct nbcx_datatype_s *type, int peer, int tag)
{
    return p2p(s, NBCXI_NODE_SEND, buf, count, type, peer, tag);
}

nbcx_node nbcxi_recv(struct nbcx_sched_s *s, void *buf, int count,
                     struct nbcx_datatype_s *type, int peer, int tag)
{
    return p2p(s, NBCXI_NODE_RECV, buf, count, type, peer, tag);
}

nbcx_node nbcxi_reduce_node(struct nbcx_sched_s *s, const void *in,
                            void *inout, int count,
                            struct nbcx_datatype_s *type,
                            struct nbcx_op_s *op)
{
    nbcx_node id = add_node(s, (struct nbcxi_node){
        .kind = NBCXI_NODE_REDUCE,
        .u.red = { .in = in, .inout = inout, .count = count, .type = type,
                   .op = op } });
    if (id >= 0) {
        nbcxi_type_retain(type);
        nbcxi_op_retain(op);
    }
    return id;
}

nbcx_node nbcxi_copy(struct nbcx_sched_s *s, const void *src, int scount,
                     struct nbcx_datatype_s *stype, void *dst, int dcount,
                     struct nbcx_datatype_s *dtype)
{
    nbcx_node id = add_node(s, (struct nbcxi_node){
        .kind = NBCXI_NODE_COPY,
        .u.copy = { .src = src, .dst = dst, .scount = scount,
                    .dcount = dcount, .stype = stype, .dtype = dtype } });
    if (id >= 0) {
        nbcxi_type_retain(stype);
        nbcxi_type_retain(dtype);
    }
    return id;
}

nbcx_node nbcxi_call(struct nbcx_sched_s *s, nbcx_sched_fn *fn, void *arg)
{
    return add_node(s, (struct nbcxi_node){
        .kind = NBCXI_NODE_CALL, .u.call = { .fn = fn, .arg = arg } });
}

nbcx_node nbcxi_poll(struct nbcx_sched_s *s, nbcxi_poll_fn *fn, void *arg,
                     struct nbcx_datatype_s *type,
                     struct nbcx_datatype_s *type2, struct nbcx_op_s *op)
{
    nbcx_node id = add_node(s, (struct nbcxi_node){
        .kind = NBCXI_NODE_POLL,
        .u.poll = { .fn = fn, .arg = arg, .type = type, .type2 = type2,
                    .op = op } });
    if (id < 0)
        return -1;
    if (type)
        nbcxi_type_retain(type);
    if (type2)
        nbcxi_type_retain(type2);
    if (op)
        nbcxi_op_retain(op);
    return id;
}

void nbcxi_dep(struct nbcx_sched_s *s, nbcx_node before, nbcx_node after)
{
    if (s->err || before < 0 || after < 0)
        return;
    if (before >= s->nnodes || after >= s->nnodes || before == after) {
        fail(s, NBCX_ERR_NODE);
        return;
    }
    if (!grow((void **)&s->edges, &s->edges_cap, s->nedges + 1,
              sizeof *s->edges)) {
        fail(s, NBCX_ERR_NOMEM);
        return;
    }
    s->edges[s->nedges++] = (struct nbcxi_edge){ before, after };
    s->nodes[after].npred++;
}

void nbcxi_sched_tree(struct nbcx_sched_s *s, int height)
{
    s->tree_height = height;
}

void nbcxi_level(struct nbcx_sched_s *s, nbcx_node n, int level,
                 enum nbcxi_tree_dir dir)
{
    if (n >= 0 && n < s->nnodes && level > 0 && level <= 127)
        s->nodes[n].level = (int8_t)(dir == NBCXI_TREE_UP ? level : -level);
}
