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
 * Persistent operations (nbcx_<op>_init) keep a prepared transport request
 * per send and receive (MPI_Send_init / MPI_Recv_init), made once by
 * nbcxi_sched_prepare_requests; running such a node copies it into a slot,
 * and the slots queued by one pass over the ready nodes are started
 * together (MPI_Startall). Nothing is allocated per start.
 *
 * POLL nodes wait for conditions no transport request stands for (the
 * shared-memory slots of transport/inproc/slots.c): a ready POLL node's function is
 * called at once; if it answers "not yet" the node joins the list
 * s->polls, whose functions are called again at every progress pass,
 * right after the transport requests are tested. A progress pass thus
 * sees two kinds of pending work, requests and polls, and finishes nodes
 * of either kind the same way (node_done releases their successors).
 *
 * In split progress mode some nodes belong to the application thread
 * (node->app): when another thread finds one ready it is set aside in
 * s->deferred, and run the next time the application thread progresses.
 *
 * The executor is not thread-safe by itself: the progress engine calls it
 * under its lock, from whichever thread makes progress. It also records
 * when each request was posted, which feeds the progress thread's pacing
 * (sched/pace.c).
 */
#include <stdlib.h>
#include <string.h>

#include "sched.h"

static size_t p2p_bytes(const struct nbcxi_node *nd)
{
    return (size_t)nd->u.p2p.count * nd->u.p2p.type->size;
}

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
    s->req_t0 = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    s->deferred = malloc(sizeof(int) * (size_t)(n ? n : 1));
    s->polls = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!s->succ || !s->ready || !s->reqs || !s->req_node || !s->done_idx ||
        !s->req_t0 || !s->deferred || !s->polls)
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
    s->send_bytes = s->recv_bytes = 0;
    for (int i = 0; i < n; i++) {
        if (s->nodes[i].kind == NBCXI_NODE_SEND)
            s->send_bytes += p2p_bytes(&s->nodes[i]);
        else if (s->nodes[i].kind == NBCXI_NODE_RECV)
            s->recv_bytes += p2p_bytes(&s->nodes[i]);
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
    if (nd->app) {
        if (nd->level > 0)
            s->app_up_left--;
        else
            s->app_down_left--;
    }
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

/* The prepared request of node i (persistent operations). */
static void *prepared(struct nbcx_sched_s *s, int i)
{
    return s->prepared + (size_t)i * s->comm->tp->ops->req_size;
}

static bool is_p2p(const struct nbcxi_node *nd)
{
    return nd->kind == NBCXI_NODE_SEND || nd->kind == NBCXI_NODE_RECV;
}

/* Cancels every active request: the schedule is over (on error). A
 * persistent operation keeps its prepared requests (they are released
 * with it) but fails every later start with the same error: MPI leaves a
 * request whose operation failed in an unspecified state. */
static int abort_all(struct nbcx_sched_s *s, int err)
{
    nbcxi_transport *tp = s->comm->tp;
    int started = s->nactive - s->unstarted;
    for (int i = 0; i < started; i++) {
        if (s->prepared)
            tp->ops->cancel_prepared(tp, slot(s, i));
        else
            tp->ops->cancel(tp, slot(s, i));
    }
    if (s->prepared)
        s->failed = err;
    s->nactive = s->unstarted = 0;
    s->npolls = 0;
    s->ndeferred = 0;
    s->ready_head = s->ready_tail;
    return err;
}

void nbcxi_sched_abort(struct nbcx_sched_s *s, int err)
{
    abort_all(s, err);
}

int nbcxi_sched_prepare_requests(struct nbcx_sched_s *s)
{
    nbcxi_transport *tp = s->comm->tp;
    if (!tp->ops->send_init || s->prepared)
        return NBCX_SUCCESS;
    s->prepared = malloc(tp->ops->req_size * (size_t)(s->nnodes ? s->nnodes
                                                                 : 1));
    if (!s->prepared)
        return NBCX_ERR_NOMEM;
    for (int i = 0; i < s->nnodes; i++) {
        struct nbcxi_node *nd = &s->nodes[i];
        if (!is_p2p(nd))
            continue;
        int tag = nbcxi_tag(s->slot, nd->u.p2p.tag);
        int err = nd->kind == NBCXI_NODE_SEND
                      ? tp->ops->send_init(tp, nd->u.p2p.buf, nd->u.p2p.count,
                                           nd->u.p2p.type, nd->u.p2p.peer,
                                           tag, prepared(s, i))
                      : tp->ops->recv_init(tp, nd->u.p2p.buf, nd->u.p2p.count,
                                           nd->u.p2p.type, nd->u.p2p.peer,
                                           tag, prepared(s, i));
        if (err != NBCX_SUCCESS) {
            while (--i >= 0)
                if (is_p2p(&s->nodes[i]))
                    tp->ops->free_prepared(tp, prepared(s, i));
            free(s->prepared);
            s->prepared = NULL;
            return err;
        }
    }
    return NBCX_SUCCESS;
}

void nbcxi_sched_release_requests(struct nbcx_sched_s *s)
{
    if (!s->prepared)
        return;
    nbcxi_transport *tp = s->comm->tp;
    for (int i = 0; i < s->nnodes; i++)
        if (is_p2p(&s->nodes[i]))
            tp->ops->free_prepared(tp, prepared(s, i));
    free(s->prepared);
    s->prepared = NULL;
}

/* Starts the copies of prepared requests queued by run_node, together:
 * they are the last s->unstarted slots. */
static int start_prepared(struct nbcx_sched_s *s)
{
    if (!s->unstarted)
        return NBCX_SUCCESS;
    nbcxi_transport *tp = s->comm->tp;
    int err = tp->ops->start(tp, s->unstarted,
                             slot(s, s->nactive - s->unstarted));
    if (err == NBCX_SUCCESS)
        s->unstarted = 0;
    return err;
}

static int run_copy(const struct nbcxi_node *c)
{
    return nbcxi_type_move(c->u.copy.src, c->u.copy.scount, c->u.copy.stype,
                           c->u.copy.dst, c->u.copy.dcount, c->u.copy.dtype);
}

/* The trace's name of each kind of node (base/trace.h). */
static const signed char trace_kind[] = {
    [NBCXI_NODE_SEND] = NBCXI_TRACE_SEND, [NBCXI_NODE_RECV] = NBCXI_TRACE_RECV,
    [NBCXI_NODE_REDUCE] = NBCXI_TRACE_REDUCE,
    [NBCXI_NODE_COPY] = NBCXI_TRACE_COPY, [NBCXI_NODE_CALL] = NBCXI_TRACE_OTHER,
    [NBCXI_NODE_POLL] = NBCXI_TRACE_OTHER };

/* Runs one ready node: posts it (send, receive) or does it now. */
static int run_node(struct nbcx_sched_s *s, int id)
{
    nbcxi_transport *tp = s->comm->tp;
    struct nbcxi_node *nd = &s->nodes[id];
    int err;
    NBCXI_TRACE(nbcxi_trace_node(trace_kind[nd->kind]));
    switch (nd->kind) {
    case NBCXI_NODE_SEND:
    case NBCXI_NODE_RECV: {
        int tag = nbcxi_tag(s->slot, nd->u.p2p.tag);
        void *req = slot(s, s->nactive);
        if (s->prepared) { /* persistent: started with the others */
            memcpy(req, prepared(s, id), tp->ops->req_size);
            s->unstarted++;
            err = NBCX_SUCCESS;
        } else {
            err = nd->kind == NBCXI_NODE_SEND
                      ? tp->ops->isend(tp, nd->u.p2p.buf, nd->u.p2p.count,
                                       nd->u.p2p.type, nd->u.p2p.peer, tag,
                                       req)
                      : tp->ops->irecv(tp, nd->u.p2p.buf, nd->u.p2p.count,
                                       nd->u.p2p.type, nd->u.p2p.peer, tag,
                                       req);
        }
        if (err == NBCX_SUCCESS) {
            s->req_node[s->nactive] = id;
            s->req_t0[s->nactive] =
                nbcxi_pace_timed(p2p_bytes(nd)) ? nbcxi_now_ns() : 0;
            s->nactive++;
        }
        return err;
    }
    case NBCXI_NODE_REDUCE:
        err = nbcxi_reduce(nd->u.red.in, nd->u.red.inout, nd->u.red.count,
                           nd->u.red.type, nd->u.red.op);
        break;
    case NBCXI_NODE_COPY:
        err = run_copy(nd);
        break;
    case NBCXI_NODE_CALL:
        err = nd->u.call.fn(nd->u.call.arg);
        break;
    case NBCXI_NODE_POLL: {
        int rc = nd->u.poll.fn(nd->u.poll.arg);
        if (rc == 0) { /* not yet: polled again at every pass */
            s->polls[s->npolls++] = id;
            return NBCX_SUCCESS;
        }
        err = rc > 0 ? NBCX_SUCCESS : -rc;
        break;
    }
    default:
        err = NBCX_ERR_INTERN;
    }
    if (err == NBCX_SUCCESS)
        node_done(s, id);
    return err;
}

/* Runs ready nodes until the queue is empty; application nodes only if
 * the caller is the application thread (app), else they are deferred. */
static int run_ready(struct nbcx_sched_s *s, bool app)
{
    if (app) {
        while (s->ndeferred > 0) {
            int err = run_node(s, s->deferred[--s->ndeferred]);
            if (err != NBCX_SUCCESS)
                return abort_all(s, err);
        }
    }
    while (s->ready_head < s->ready_tail) {
        int id = s->ready[s->ready_head++];
        if (s->nodes[id].app && !app) {
            s->deferred[s->ndeferred++] = id;
            continue;
        }
        int err = run_node(s, id);
        if (err != NBCX_SUCCESS)
            return abort_all(s, err);
    }
    int err = start_prepared(s);
    return err == NBCX_SUCCESS ? err : abort_all(s, err);
}

int nbcxi_sched_begin(struct nbcx_sched_s *s, bool *done)
{
    *done = false;
    /* (A communicator broken before the start was refused by the start
     * itself, progress/request.c. One broken since then does not stop
     * it: the start was accepted, perhaps before another operation broke
     * the communicator, and the progress thread may begin it later; a
     * timeout aborts what is in flight anyway, progress/watchdog.c.) */
    int err = s->failed ? s->failed : nbcxi_sched_prepare(s);
    if (err != NBCX_SUCCESS) {
        *done = true;
        return err;
    }
    s->ndone = 0;
    s->unstarted = 0;
    s->nactive = 0;
    s->npolls = 0;
    s->ndeferred = 0;
    s->next_due = 0;
    s->t_begin = nbcxi_pace_timed(nbcxi_sched_bytes(s)) ? nbcxi_now_ns() : 0;
    s->t_pass = s->t_pending = 0;
    s->ready_head = s->ready_tail = 0;
    s->wd_ndone = -1; /* the watchdog starts its clock when it looks */
    s->wd_since = 0;
    for (int i = 0; i < s->nnodes; i++)
        s->nodes[i].pending = s->nodes[i].npred;
    /* Receives first: they are posted before any send of this rank. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < s->nnodes; i++)
            if (s->nodes[i].npred == 0 &&
                (s->nodes[i].kind == NBCXI_NODE_RECV) == (pass == 0))
                push_ready(s, i);
    err = run_ready(s, true);
    if (err == NBCX_SUCCESS)
        err = nbcxi_sched_progress(s, true, done); /* test on start */
    else
        *done = true;
    return err;
}

bool nbcxi_sched_sends_posted(const struct nbcx_sched_s *s)
{
    if (s->ready_head != s->ready_tail || s->ndeferred)
        return false;
    for (int i = 0; i < s->nnodes; i++)
        if (s->nodes[i].kind == NBCXI_NODE_SEND && s->nodes[i].pending > 0)
            return false;
    return true;
}

/* The earliest predicted completion among the active requests. */
static int64_t next_due(const struct nbcx_sched_s *s)
{
    int64_t due = 0;
    for (int i = 0; i < s->nactive; i++) {
        int64_t d = nbcxi_pace_due(p2p_bytes(&s->nodes[s->req_node[i]]),
                                   s->req_t0[i]);
        if (d && (!due || d < due))
            due = d;
    }
    return due;
}

/* Tests the active transport requests once; retires the completed ones
 * (their successors become ready) and counts them in *moved. */
static int test_requests(struct nbcx_sched_s *s, int *moved)
{
    nbcxi_transport *tp = s->comm->tp;
    int ndone = 0;
    int err = tp->ops->testsome(tp, s->nactive, s->reqs, &ndone, s->done_idx);
    if (err != NBCX_SUCCESS)
        return err;
    /* The passes of an operation that can be a sample are timed (below):
     * one that receives too little to be one (a broadcast's root) reads
     * no clock. */
    if (s->t_begin && nbcxi_pace_timed(s->recv_bytes))
        s->t_pass = nbcxi_now_ns();
    if (ndone == 0)
        return NBCX_SUCCESS;
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
            s->req_t0[kept] = s->req_t0[i];
        }
        kept++;
    }
    s->nactive = kept;
    *moved += ndone;
    return NBCX_SUCCESS;
}

/* Calls the function of every waiting POLL node once; the done ones leave
 * the list (in order) and count in *moved. */
static int test_polls(struct nbcx_sched_s *s, int *moved)
{
    int kept = 0, err = NBCX_SUCCESS;
    for (int i = 0; i < s->npolls; i++) {
        int id = s->polls[i];
        struct nbcxi_node *nd = &s->nodes[id];
        int rc = err == NBCX_SUCCESS ? nd->u.poll.fn(nd->u.poll.arg) : 0;
        if (rc > 0) {
            node_done(s, id);
            (*moved)++;
            continue;
        }
        if (rc < 0)
            err = -rc;
        s->polls[kept++] = id;
    }
    s->npolls = kept;
    return err;
}

int nbcxi_sched_progress(struct nbcx_sched_s *s, bool app, bool *done)
{
    int err = app && s->ndeferred ? run_ready(s, true) : NBCX_SUCCESS;
    while (err == NBCX_SUCCESS && (s->nactive > 0 || s->npolls > 0)) {
        int moved = 0;
        if (s->nactive > 0)
            err = test_requests(s, &moved);
        if (err == NBCX_SUCCESS && s->npolls > 0)
            err = test_polls(s, &moved);
        if (err != NBCX_SUCCESS) {
            abort_all(s, err);
            break;
        }
        if (moved == 0)
            break;
        err = run_ready(s, app);
    }
    s->next_due = err == NBCX_SUCCESS ? next_due(s) : 0;
    *done = err != NBCX_SUCCESS || s->ndone == s->nnodes;
    /* A timed operation is a sample of the bandwidth when it completes:
     * it was pending at the end of its last progress call. */
    if (s->t_begin && nbcxi_pace_timed(s->recv_bytes) &&
        err == NBCX_SUCCESS) {
        int64_t now = s->t_pass ? s->t_pass : nbcxi_now_ns();
        if (*done)
            nbcxi_pace_sample(s->recv_bytes, s->t_begin, s->t_pending, now);
        else
            s->t_pending = now;
    }
    return err;
}
