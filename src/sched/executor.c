/* executor.c - runs one rank's DAG.
 *
 * At start every node waits for as many predecessors as it has; nodes
 * with none go to the ready queue, receives first, so every receive with
 * no real dependency is posted the moment the operation starts. Running a
 * ready node either posts it on the transport (send, receive) or does it
 * at once (reduce, copy, call); a finished node releases its successors.
 * Active transport requests live in one contiguous array of slots so the
 * transport can test them all in one call (MPI_Testsome).
 *
 * The executor is not thread-safe by itself: the progress engine calls it
 * under its lock, from whichever thread makes progress.
 */
#include <stdlib.h>
#include <string.h>

#include "../core.h"

/* Successor lists in CSR form, and a check that the graph is acyclic
 * (Kahn's algorithm); on a cycle nothing is posted. */
int nbcxi_sched_prepare(struct nbcx_sched_s *s)
{
    if (s->succ)
        return NBCX_SUCCESS; /* prepared already (restart) */
    int n = s->nnodes;
    size_t rsz = s->comm->tp->ops->req_size;
    s->succ = malloc(sizeof(int) * (size_t)(s->nedges ? s->nedges : 1));
    s->ready = malloc(sizeof(int) * (size_t)(n ? n : 1));
    s->reqs = malloc(rsz * (size_t)(n ? n : 1));
    s->req_node = malloc(sizeof(int) * (size_t)(n ? n : 1));
    s->done_idx = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!s->succ || !s->ready || !s->reqs || !s->req_node || !s->done_idx)
        return NBCX_ERR_NOMEM;

    for (int i = 0; i < n; i++)
        s->nodes[i].nsucc = 0;
    for (int e = 0; e < s->nedges; e++)
        s->nodes[s->edges[e].from].nsucc++;
    int pos = 0;
    for (int i = 0; i < n; i++) {
        s->nodes[i].succ = pos;
        pos += s->nodes[i].nsucc;
        s->nodes[i].nsucc = 0;
    }
    for (int e = 0; e < s->nedges; e++) {
        struct nbcxi_node *from = &s->nodes[s->edges[e].from];
        s->succ[from->succ + from->nsucc++] = s->edges[e].to;
    }

    /* Kahn: every node must be reachable in topological order. */
    int head = 0, tail = 0;
    for (int i = 0; i < n; i++) {
        s->nodes[i].pending = s->nodes[i].npred;
        if (s->nodes[i].npred == 0)
            s->ready[tail++] = i;
    }
    while (head < tail) {
        struct nbcxi_node *nd = &s->nodes[s->ready[head++]];
        for (int k = 0; k < nd->nsucc; k++)
            if (--s->nodes[s->succ[nd->succ + k]].pending == 0)
                s->ready[tail++] = s->succ[nd->succ + k];
    }
    return tail == n ? NBCX_SUCCESS : NBCX_ERR_NODE;
}

static void push_ready(struct nbcx_sched_s *s, int node)
{
    s->ready[s->ready_tail++] = node;
}

static void node_done(struct nbcx_sched_s *s, int node)
{
    struct nbcxi_node *nd = &s->nodes[node];
    s->ndone++;
    for (int k = 0; k < nd->nsucc; k++) {
        int succ = s->succ[nd->succ + k];
        if (--s->nodes[succ].pending == 0)
            push_ready(s, succ);
    }
}

static void *slot(struct nbcx_sched_s *s, int i)
{
    return s->reqs + (size_t)i * s->comm->tp->ops->req_size;
}

/* Cancels every active request: the schedule is over (on error). */
static int abort_all(struct nbcx_sched_s *s, int err)
{
    nbcxi_transport *tp = s->comm->tp;
    for (int i = 0; i < s->nactive; i++)
        tp->ops->cancel(tp, slot(s, i));
    s->nactive = 0;
    s->ready_head = s->ready_tail;
    return err;
}

/* Runs ready nodes until the queue is empty. */
static int run_ready(struct nbcx_sched_s *s)
{
    nbcxi_transport *tp = s->comm->tp;
    while (s->ready_head < s->ready_tail) {
        int id = s->ready[s->ready_head++];
        struct nbcxi_node *nd = &s->nodes[id];
        int err = NBCX_SUCCESS;
        switch (nd->kind) {
        case NBCXI_NODE_SEND:
        case NBCXI_NODE_RECV: {
            int tag = nbcxi_tag(s->comm, s->seq, nd->u.p2p.tag);
            void *req = slot(s, s->nactive);
            err = nd->kind == NBCXI_NODE_SEND
                      ? tp->ops->isend(tp, nd->u.p2p.buf, nd->u.p2p.count,
                                       nd->u.p2p.type, nd->u.p2p.peer, tag,
                                       req)
                      : tp->ops->irecv(tp, nd->u.p2p.buf, nd->u.p2p.count,
                                       nd->u.p2p.type, nd->u.p2p.peer, tag,
                                       req);
            if (err == NBCX_SUCCESS)
                s->req_node[s->nactive++] = id;
            break;
        }
        case NBCXI_NODE_REDUCE:
            err = nbcxi_reduce(nd->u.red.in, nd->u.red.inout, nd->u.red.count,
                               nd->u.red.type, nd->u.red.op);
            if (err == NBCX_SUCCESS)
                node_done(s, id);
            break;
        case NBCXI_NODE_COPY: {
            const struct nbcxi_node *c = nd;
            if (c->u.copy.stype == c->u.copy.dtype &&
                c->u.copy.scount == c->u.copy.dcount)
                err = nbcxi_type_copy(c->u.copy.src, c->u.copy.dst,
                                      c->u.copy.scount, c->u.copy.stype);
            else if (c->u.copy.dtype->contiguous)
                err = nbcxi_type_pack(c->u.copy.src, c->u.copy.scount,
                                      c->u.copy.stype, c->u.copy.dst);
            else if (c->u.copy.stype->contiguous)
                err = nbcxi_type_unpack(c->u.copy.src, c->u.copy.dcount,
                                        c->u.copy.dtype, c->u.copy.dst);
            else {
                size_t bytes = (size_t)c->u.copy.scount * c->u.copy.stype->size;
                void *tmp = malloc(bytes ? bytes : 1);
                err = tmp ? nbcxi_type_pack(c->u.copy.src, c->u.copy.scount,
                                            c->u.copy.stype, tmp)
                          : NBCX_ERR_NOMEM;
                if (err == NBCX_SUCCESS)
                    err = nbcxi_type_unpack(tmp, c->u.copy.dcount,
                                            c->u.copy.dtype, c->u.copy.dst);
                free(tmp);
            }
            if (err == NBCX_SUCCESS)
                node_done(s, id);
            break;
        }
        case NBCXI_NODE_CALL:
            err = nd->u.call.fn(nd->u.call.arg);
            if (err == NBCX_SUCCESS)
                node_done(s, id);
            break;
        default:
            err = NBCX_ERR_INTERN;
        }
        if (err != NBCX_SUCCESS)
            return abort_all(s, err);
    }
    return NBCX_SUCCESS;
}

int nbcxi_sched_begin(struct nbcx_sched_s *s, bool *done)
{
    *done = false;
    int err = nbcxi_sched_prepare(s);
    if (err != NBCX_SUCCESS) {
        *done = true;
        return err;
    }
    s->ndone = 0;
    s->nactive = 0;
    s->ready_head = s->ready_tail = 0;
    for (int i = 0; i < s->nnodes; i++)
        s->nodes[i].pending = s->nodes[i].npred;
    /* Receives first: they are posted before any send of this rank. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < s->nnodes; i++)
            if (s->nodes[i].npred == 0 &&
                (s->nodes[i].kind == NBCXI_NODE_RECV) == (pass == 0))
                push_ready(s, i);
    err = run_ready(s);
    if (err == NBCX_SUCCESS)
        err = nbcxi_sched_progress(s, done); /* test on start */
    else
        *done = true;
    return err;
}

int nbcxi_sched_progress(struct nbcx_sched_s *s, bool *done)
{
    nbcxi_transport *tp = s->comm->tp;
    int err = NBCX_SUCCESS;
    while (s->nactive > 0) {
        int ndone = 0;
        err = tp->ops->testsome(tp, s->nactive, s->reqs, &ndone, s->done_idx);
        if (err != NBCX_SUCCESS) {
            abort_all(s, err);
            break;
        }
        if (ndone == 0)
            break;
        /* Retire the finished slots, keeping the others in order. */
        for (int k = 0; k < ndone; k++) {
            int i = s->done_idx[k];
            node_done(s, s->req_node[i]);
            s->req_node[i] = -1;
        }
        int kept = 0;
        size_t rsz = tp->ops->req_size;
        for (int i = 0; i < s->nactive; i++) {
            if (s->req_node[i] < 0)
                continue;
            if (kept != i) {
                memcpy(slot(s, kept), slot(s, i), rsz);
                s->req_node[kept] = s->req_node[i];
            }
            kept++;
        }
        s->nactive = kept;
        err = run_ready(s);
        if (err != NBCX_SUCCESS)
            break;
    }
    *done = err != NBCX_SUCCESS || s->ndone == s->nnodes;
    return err;
}
