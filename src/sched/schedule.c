/* schedule.c - building a schedule: nodes, edges, scratch buffers.
 *
 * A schedule is one rank's DAG. Building it only records: nodes in an
 * array, edges as (from, to) pairs, scratch buffers in a list. The
 * executor turns the edges into successor lists when the schedule starts.
 * Every helper records the first failure in s->build.err and turns later calls
 * into no-ops returning -1, so builders can check once at the end. Nodes
 * retain the datatypes and operations they use until the schedule dies.
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
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

/* Where messages, reductions and copies are cut (sched.h); lowered by
 * NBCX_CHUNK_TEST (read_chunk_test) and by the unit tests. */
struct nbcxi_sched_chunking nbcxi_sched_chunking = {
    INT_MAX, NBCXI_CHUNK_BYTES, INT_MAX, (ptrdiff_t)1 << 30 };

/* NBCX_CHUNK_TEST=N (tests): cut above N bytes into chunks of N bytes
 * rounded down to a multiple of 48 (at least 48, so that every built-in
 * type's size divides them, as it does the real 768 MiB), and build the
 * element-wise collectives above N elements in pieces of N / 2 + 1: the
 * paths of counts above INT_MAX, at sizes a test can afford. */
static pthread_once_t chunk_once = PTHREAD_ONCE_INIT;
static void read_chunk_test(void)
{
    const char *v = nbcxi_getenv("NBCX_CHUNK_TEST");
    long long n = v ? atoll(v) : 0;
    if (n <= 0 || n > INT_MAX)
        return;
    nbcxi_sched_chunking = (struct nbcxi_sched_chunking){
        (ptrdiff_t)n, NBCXI_MAX((ptrdiff_t)n / 48 * 48, (ptrdiff_t)48),
        (ptrdiff_t)n, (ptrdiff_t)n / 2 + 1 };
}

int nbcxi_sched_new(struct nbcx_comm_s *comm, struct nbcx_sched_s **out)
{
    struct nbcx_sched_s *s = calloc(1, sizeof *s);
    if (!s)
        return NBCX_ERR_NOMEM;
    atomic_fetch_add(&live_scheds, 1);
    pthread_once(&chunk_once, read_chunk_test);
    nbcxi_comm_retain(comm);
    s->build.comm = comm;
    s->build.rank = comm->rank;
    s->build.size = comm->size;
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
    if (s->keep.by)
        s->keep.by->forget(s);
    if (s->tag.held) /* a persistent request, or an error path */
        nbcxi_slot_release(s->build.comm, s->tag.slot);
    for (int i = 0; i < s->build.nnodes; i++)
        node_release(&s->build.nodes[i]);
    for (int i = 0; i < s->build.ntmps; i++)
        free(s->build.tmps[i]);
    free(s->build.tmps);
    free(s->build.nodes);
    free(s->build.edges);
    free(s->exec.succ);
    free(s->exec.ready);
    free(s->exec.reqs);
    free(s->exec.req_node);
    free(s->exec.done_idx);
    free(s->pace.req_t0);
    free(s->split.deferred);
    free(s->exec.polls);
    nbcxi_comm_release(s->build.comm);
    free(s);
    atomic_fetch_sub(&live_scheds, 1);
}

void nbcxi_sched_retire(struct nbcx_sched_s *s, int err)
{
    if (s->keep.by)
        s->keep.by->done(s, err);
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
    if (s->build.err == NBCX_SUCCESS)
        s->build.err = err;
    return -1;
}

void *nbcxi_sched_tmp(struct nbcx_sched_s *s, size_t bytes)
{
    if (s->build.err)
        return NULL;
    if (!grow((void **)&s->build.tmps, &s->build.tmps_cap, s->build.ntmps + 1,
              sizeof(void *))) {
        fail(s, NBCX_ERR_NOMEM);
        return NULL;
    }
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fail(s, NBCX_ERR_NOMEM);
        return NULL;
    }
    s->build.tmps[s->build.ntmps++] = p;
    return p;
}

void *nbcxi_sched_tmp_typed(struct nbcx_sched_s *s, ptrdiff_t count,
                            struct nbcx_datatype_s *type)
{
    ptrdiff_t shift;
    size_t bytes = nbcxi_type_span(type, count, &shift);
    char *p = nbcxi_sched_tmp(s, bytes);
    return p ? p + shift : NULL;
}

/* Appends a node of nd's kind with nd's operands (every other field
 * zero). Returns its id, or -1 with s->build.err set. */
static nbcx_node add_node(struct nbcx_sched_s *s, struct nbcxi_node nd)
{
    if (s->build.err)
        return -1;
    if (!grow((void **)&s->build.nodes, &s->build.nodes_cap,
              s->build.nnodes + 1, sizeof *s->build.nodes)) {
        fail(s, NBCX_ERR_NOMEM);
        return -1;
    }
    struct nbcxi_node *n = &s->build.nodes[s->build.nnodes];
    memset(n, 0, sizeof *n);
    n->kind = nd.kind;
    n->u = nd.u;
    return s->build.nnodes++;
}

/* Elements of a chunk of a type of size sz bytes (reductions: local, so
 * any cut will do): the chunk's bytes, at least one element and at most
 * INT_MAX. */
static ptrdiff_t chunk_elems(size_t sz)
{
    ptrdiff_t per = sz ? nbcxi_sched_chunking.bytes / (ptrdiff_t)sz : INT_MAX;
    return NBCXI_MIN(NBCXI_MAX(per, (ptrdiff_t)1), (ptrdiff_t)INT_MAX);
}

/* Bytes of count elements of type, or -1 past PTRDIFF_MAX. */
static ptrdiff_t data_bytes(ptrdiff_t count, const struct nbcx_datatype_s *t)
{
    ptrdiff_t sz = (ptrdiff_t)t->size;
    return sz && count > PTRDIFF_MAX / sz ? -1 : count * sz;
}

/* Marks first .. last (the chunks of one builder's node) as one node. */
static nbcx_node spanned(struct nbcx_sched_s *s, nbcx_node first,
                         nbcx_node last)
{
    if (first < 0 || last < 0)
        return -1;
    s->build.nodes[first].span = last - first + 1;
    return first;
}

static nbcx_node p2p_one(struct nbcx_sched_s *s, int kind, const void *buf,
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

static nbcx_node p2p(struct nbcx_sched_s *s, int kind, const void *buf,
                     ptrdiff_t count, struct nbcx_datatype_s *type, int peer,
                     int tag);

/* A message of a type whose size does not divide the chunks: the two
 * sides would cut at different bytes, so this side moves it packed, as
 * bytes (a scratch copy of the whole message: only for such types). */
static nbcx_node p2p_packed(struct nbcx_sched_s *s, int kind,
                            const void *buf, ptrdiff_t count,
                            struct nbcx_datatype_s *type, ptrdiff_t bytes,
                            int peer, int tag)
{
    struct nbcx_datatype_s *byte = nbcxi_type(NBCX_BYTE);
    void *tmp = nbcxi_sched_tmp(s, (size_t)bytes);
    if (!tmp)
        return -1;
    nbcx_node first, msg, unpack;
    if (kind == NBCXI_NODE_SEND) {
        first = nbcxi_copy(s, buf, count, type, tmp, bytes, byte);
        msg = p2p(s, kind, tmp, bytes, byte, peer, tag);
        nbcxi_dep(s, first, msg);
    } else {
        first = msg = p2p(s, kind, tmp, bytes, byte, peer, tag);
        unpack = nbcxi_copy(s, tmp, bytes, byte, (void *)(uintptr_t)buf,
                            count, type);
        nbcxi_dep(s, msg, unpack);
    }
    return s->build.err ? -1 : spanned(s, first, s->build.nnodes - 1);
}

/* Messages are cut by their bytes, the one measure both sides share
 * (their types may differ), at multiples of the chunk's bytes. */
static nbcx_node p2p(struct nbcx_sched_s *s, int kind, const void *buf,
                     ptrdiff_t count, struct nbcx_datatype_s *type, int peer,
                     int tag)
{
    const ptrdiff_t bytes = data_bytes(count, type);
    if (count < 0 || bytes < 0)
        return fail(s, NBCX_ERR_COUNT);
    if (bytes <= nbcxi_sched_chunking.limit) /* (empty elements: none) */
        return p2p_one(s, kind, buf, (int)NBCXI_MIN(count, INT_MAX), type,
                       peer, tag);
    const ptrdiff_t sz = (ptrdiff_t)type->size;
    if (nbcxi_sched_chunking.bytes % sz != 0)
        return p2p_packed(s, kind, buf, count, type, bytes, peer, tag);
    const ptrdiff_t per = nbcxi_sched_chunking.bytes / sz;
    nbcx_node first = -1, id = -1;
    for (ptrdiff_t done = 0; done < count && !s->build.err; done += per) {
        id = p2p_one(s, kind, nbcxi_at(buf, done, 1, type),
                     (int)NBCXI_MIN(per, count - done), type, peer, tag);
        first = first < 0 ? id : first;
    }
    return spanned(s, first, id);
}

nbcx_node nbcxi_send(struct nbcx_sched_s *s, const void *buf,
                     ptrdiff_t count, struct nbcx_datatype_s *type, int peer,
                     int tag)
{
    return p2p(s, NBCXI_NODE_SEND, buf, count, type, peer, tag);
}

nbcx_node nbcxi_recv(struct nbcx_sched_s *s, void *buf, ptrdiff_t count,
                     struct nbcx_datatype_s *type, int peer, int tag)
{
    return p2p(s, NBCXI_NODE_RECV, buf, count, type, peer, tag);
}

static nbcx_node reduce_one(struct nbcx_sched_s *s, const void *in,
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

nbcx_node nbcxi_reduce_node(struct nbcx_sched_s *s, const void *in,
                            void *inout, ptrdiff_t count,
                            struct nbcx_datatype_s *type,
                            struct nbcx_op_s *op)
{
    const ptrdiff_t bytes = data_bytes(count, type);
    if (count < 0 || bytes < 0)
        return fail(s, NBCX_ERR_COUNT);
    if (bytes <= nbcxi_sched_chunking.limit)
        return reduce_one(s, in, inout, (int)NBCXI_MIN(count, INT_MAX), type,
                          op);
    const ptrdiff_t per = chunk_elems(type->size);
    nbcx_node first = -1, id = -1;
    for (ptrdiff_t done = 0; done < count && !s->build.err; done += per) {
        id = reduce_one(s, nbcxi_at(in, done, 1, type),
                        nbcxi_at(inout, done, 1, type),
                        (int)NBCXI_MIN(per, count - done), type, op);
        first = first < 0 ? id : first;
    }
    return spanned(s, first, id);
}

static nbcx_node copy_one(struct nbcx_sched_s *s, const void *src,
                          int scount, struct nbcx_datatype_s *stype,
                          void *dst, int dcount,
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

static size_t gcd(size_t a, size_t b)
{
    while (b) {
        size_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

nbcx_node nbcxi_copy(struct nbcx_sched_s *s, const void *src,
                     ptrdiff_t scount, struct nbcx_datatype_s *stype,
                     void *dst, ptrdiff_t dcount,
                     struct nbcx_datatype_s *dtype)
{
    if (scount < 0 || dcount < 0)
        return fail(s, NBCX_ERR_COUNT);
    const size_t ss = stype->size, ds = dtype->size;
    const ptrdiff_t lim = nbcxi_sched_chunking.limit;
    const ptrdiff_t sb = data_bytes(scount, stype),
                    db = data_bytes(dcount, dtype);
    if (sb < 0 || db < 0)
        return fail(s, NBCX_ERR_COUNT);
    if ((sb <= lim && db <= lim) || !ss || !ds)
        return copy_one(s, src, (int)NBCXI_MIN(scount, (ptrdiff_t)INT_MAX),
                        stype, dst,
                        (int)NBCXI_MIN(dcount, (ptrdiff_t)INT_MAX), dtype);
    /* Cut at multiples of lcm(ss, ds) bytes: whole elements both sides. */
    const ptrdiff_t unit = (ptrdiff_t)(ss / gcd(ss, ds) * ds);
    const ptrdiff_t per =
        NBCXI_MAX(nbcxi_sched_chunking.bytes / unit, (ptrdiff_t)1) *
        unit; /* bytes of a chunk */
    if (per / (ptrdiff_t)ss > INT_MAX || per / (ptrdiff_t)ds > INT_MAX)
        return fail(s, NBCX_ERR_COUNT);
    const ptrdiff_t sbytes = sb, dbytes = db;
    nbcx_node first = -1, id = -1;
    for (ptrdiff_t done = 0; done < sbytes && !s->build.err; done += per) {
        ptrdiff_t n = NBCXI_MIN(per, sbytes - done);
        ptrdiff_t dn = NBCXI_MIN(n, dbytes - done);
        id = copy_one(s, nbcxi_at(src, done / (ptrdiff_t)ss, 1, stype),
                      (int)(n / (ptrdiff_t)ss), stype,
                      nbcxi_at(dst, done / (ptrdiff_t)ds, 1, dtype),
                      (int)(NBCXI_MAX(dn, (ptrdiff_t)0) / (ptrdiff_t)ds),
                      dtype);
        first = first < 0 ? id : first;
    }
    return spanned(s, first, id);
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

/* Nodes a builder's node n stands for (its chunks). */
static int span_of(const struct nbcx_sched_s *s, nbcx_node n)
{
    return NBCXI_MAX(s->build.nodes[n].span, 1);
}

void nbcxi_dep(struct nbcx_sched_s *s, nbcx_node before, nbcx_node after)
{
    if (s->build.err || before < 0 || after < 0)
        return;
    if (before >= s->build.nnodes || after >= s->build.nnodes ||
        before == after) {
        fail(s, NBCX_ERR_NODE);
        return;
    }
    const int nb = span_of(s, before), na = span_of(s, after);
    if (!grow((void **)&s->build.edges, &s->build.edges_cap,
              s->build.nedges + nb * na, sizeof *s->build.edges)) {
        fail(s, NBCX_ERR_NOMEM);
        return;
    }
    for (int i = 0; i < nb; i++)
        for (int j = 0; j < na; j++) {
            s->build.edges[s->build.nedges++] =
                (struct nbcxi_edge){ before + i, after + j };
            s->build.nodes[after + j].npred++;
        }
}

void nbcxi_sched_tree(struct nbcx_sched_s *s, int height)
{
    s->build.tree_height = height;
}

void nbcxi_level(struct nbcx_sched_s *s, nbcx_node n, int level,
                 enum nbcxi_tree_dir dir)
{
    if (n >= 0 && n < s->build.nnodes && level > 0 && level <= 127)
        for (int i = 0; i < span_of(s, n); i++)
            s->build.nodes[n + i].level =
                (int8_t)(dir == NBCXI_TREE_UP ? level : -level);
}
