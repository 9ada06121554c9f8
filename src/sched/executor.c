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
 * s->exec.polls, whose functions are called again at every progress pass,
 * right after the transport requests are tested. A progress pass thus
 * sees two kinds of pending work, requests and polls, and finishes nodes
 * of either kind the same way (node_done releases their successors).
 *
 * In split progress mode some nodes belong to the application thread
 * (node->app): when another thread finds one ready it is set aside in
 * s->split.deferred, and run the next time the application thread progresses.
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
    if (s->exec.succ)
        return NBCX_SUCCESS; /* prepared already (restart) */
    int n = s->build.nnodes;
    size_t rsz = s->build.comm->tp->ops->req_size;
    int ne = s->build.nedges;
    s->exec.succ = malloc(sizeof(int) * (size_t)(ne ? ne : 1));
    s->exec.ready = malloc(sizeof(int) * (size_t)(n ? n : 1));
    s->exec.reqs = malloc(rsz * (size_t)(n ? n : 1));
    s->exec.req_node = malloc(sizeof(int) * (size_t)(n ? n : 1));
    s->exec.done_idx = malloc(sizeof(int) * (size_t)(n ? n : 1));
    s->pace.req_t0 = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    s->split.deferred = malloc(sizeof(int) * (size_t)(n ? n : 1));
    s->exec.polls = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!s->exec.succ || !s->exec.ready || !s->exec.reqs ||
        !s->exec.req_node || !s->exec.done_idx || !s->pace.req_t0 ||
        !s->split.deferred || !s->exec.polls)
        return NBCX_ERR_NOMEM;

    for (int i = 0; i < n; i++)
        s->build.nodes[i].nsucc = 0;
    for (int e = 0; e < s->build.nedges; e++)
        s->build.nodes[s->build.edges[e].from].nsucc++;
    int pos = 0;
    for (int i = 0; i < n; i++) {
        s->build.nodes[i].succ = pos;
        pos += s->build.nodes[i].nsucc;
        s->build.nodes[i].nsucc = 0;
    }
    for (int e = 0; e < s->build.nedges; e++) {
        struct nbcxi_node *from = &s->build.nodes[s->build.edges[e].from];
        s->exec.succ[from->succ + from->nsucc++] = s->build.edges[e].to;
    }

    /* Kahn: every node must be reachable in topological order. */
    int head = 0, tail = 0;
    s->exec.send_bytes = s->exec.recv_bytes = 0;
    for (int i = 0; i < n; i++) {
        if (s->build.nodes[i].kind == NBCXI_NODE_SEND)
            s->exec.send_bytes += p2p_bytes(&s->build.nodes[i]);
        else if (s->build.nodes[i].kind == NBCXI_NODE_RECV)
            s->exec.recv_bytes += p2p_bytes(&s->build.nodes[i]);
        s->build.nodes[i].pending = s->build.nodes[i].npred;
        if (s->build.nodes[i].npred == 0)
            s->exec.ready[tail++] = i;
    }
    while (head < tail) {
        struct nbcxi_node *nd = &s->build.nodes[s->exec.ready[head++]];
        for (int k = 0; k < nd->nsucc; k++)
            if (--s->build.nodes[s->exec.succ[nd->succ + k]].pending == 0)
                s->exec.ready[tail++] = s->exec.succ[nd->succ + k];
    }
    return tail == n ? NBCX_SUCCESS : NBCX_ERR_NODE;
}

static void push_ready(struct nbcx_sched_s *s, int node)
{
    s->exec.ready[s->exec.ready_tail++] = node;
}

static void node_done(struct nbcx_sched_s *s, int node)
{
    struct nbcxi_node *nd = &s->build.nodes[node];
    s->exec.ndone++;
    if (nd->app) {
        if (nd->level > 0)
            s->split.app_up_left--;
        else
            s->split.app_down_left--;
    }
    for (int k = 0; k < nd->nsucc; k++) {
        int succ = s->exec.succ[nd->succ + k];
        if (--s->build.nodes[succ].pending == 0)
            push_ready(s, succ);
    }
}

static void *slot(struct nbcx_sched_s *s, int i)
{
    return s->exec.reqs + (size_t)i * s->build.comm->tp->ops->req_size;
}

/* The prepared request of node i (persistent operations). */
static void *prepared(struct nbcx_sched_s *s, int i)
{
    return s->persist.prepared + (size_t)i * s->build.comm->tp->ops->req_size;
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
    nbcxi_transport *tp = s->build.comm->tp;
    int started = s->exec.nactive - s->persist.unstarted;
    for (int i = 0; i < started; i++) {
        if (s->persist.prepared)
            tp->ops->cancel_prepared(tp, slot(s, i));
        else
            tp->ops->cancel(tp, slot(s, i));
    }
    if (s->persist.prepared)
        s->persist.failed = err;
    s->exec.nactive = s->persist.unstarted = 0;
    s->exec.npolls = 0;
    s->split.ndeferred = 0;
    s->exec.ready_head = s->exec.ready_tail;
    return err;
}

void nbcxi_sched_abort(struct nbcx_sched_s *s, int err)
{
    abort_all(s, err);
}

int nbcxi_sched_prepare_requests(struct nbcx_sched_s *s)
{
    nbcxi_transport *tp = s->build.comm->tp;
    if (!tp->ops->send_init || s->persist.prepared)
        return NBCX_SUCCESS;
    int n = s->build.nnodes;
    s->persist.prepared = malloc(tp->ops->req_size * (size_t)(n ? n : 1));
    if (!s->persist.prepared)
        return NBCX_ERR_NOMEM;
    for (int i = 0; i < s->build.nnodes; i++) {
        struct nbcxi_node *nd = &s->build.nodes[i];
        if (!is_p2p(nd))
            continue;
        int tag = nbcxi_tag(s->tag.slot, nd->u.p2p.tag);
        int err = nd->kind == NBCXI_NODE_SEND
                      ? tp->ops->send_init(tp, nd->u.p2p.buf, nd->u.p2p.count,
                                           nd->u.p2p.type, nd->u.p2p.peer,
                                           tag, prepared(s, i))
                      : tp->ops->recv_init(tp, nd->u.p2p.buf, nd->u.p2p.count,
                                           nd->u.p2p.type, nd->u.p2p.peer,
                                           tag, prepared(s, i));
        if (err != NBCX_SUCCESS) {
            while (--i >= 0)
                if (is_p2p(&s->build.nodes[i]))
                    tp->ops->free_prepared(tp, prepared(s, i));
            free(s->persist.prepared);
            s->persist.prepared = NULL;
            return err;
        }
    }
    return NBCX_SUCCESS;
}

void nbcxi_sched_release_requests(struct nbcx_sched_s *s)
{
    if (!s->persist.prepared)
        return;
    nbcxi_transport *tp = s->build.comm->tp;
    for (int i = 0; i < s->build.nnodes; i++)
        if (is_p2p(&s->build.nodes[i]))
            tp->ops->free_prepared(tp, prepared(s, i));
    free(s->persist.prepared);
    s->persist.prepared = NULL;
}

/* Starts the copies of prepared requests queued by run_node, together:
 * they are the last s->persist.unstarted slots. */
static int start_prepared(struct nbcx_sched_s *s)
{
    if (!s->persist.unstarted)
        return NBCX_SUCCESS;
    nbcxi_transport *tp = s->build.comm->tp;
    int err = tp->ops->start(tp, s->persist.unstarted,
                             slot(s, s->exec.nactive - s->persist.unstarted));
    if (err == NBCX_SUCCESS)
        s->persist.unstarted = 0;
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
    nbcxi_transport *tp = s->build.comm->tp;
    struct nbcxi_node *nd = &s->build.nodes[id];
    int err;
    NBCXI_TRACE(nbcxi_trace_node(trace_kind[nd->kind]));
    switch (nd->kind) {
    case NBCXI_NODE_SEND:
    case NBCXI_NODE_RECV: {
        int tag = nbcxi_tag(s->tag.slot, nd->u.p2p.tag);
        void *req = slot(s, s->exec.nactive);
        if (s->persist.prepared) { /* persistent: started with the others */
            memcpy(req, prepared(s, id), tp->ops->req_size);
            s->persist.unstarted++;
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
            s->exec.req_node[s->exec.nactive] = id;
            s->pace.req_t0[s->exec.nactive] =
                nbcxi_pace_timed(p2p_bytes(nd)) ? nbcxi_now_ns() : 0;
            s->exec.nactive++;
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
            s->exec.polls[s->exec.npolls++] = id;
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
        while (s->split.ndeferred > 0) {
            int err = run_node(s, s->split.deferred[--s->split.ndeferred]);
            if (err != NBCX_SUCCESS)
                return abort_all(s, err);
        }
    }
    while (s->exec.ready_head < s->exec.ready_tail) {
        int id = s->exec.ready[s->exec.ready_head++];
        if (s->build.nodes[id].app && !app) {
            s->split.deferred[s->split.ndeferred++] = id;
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
    int err = s->persist.failed ? s->persist.failed : nbcxi_sched_prepare(s);
    if (err != NBCX_SUCCESS) {
        *done = true;
        return err;
    }
    s->exec.ndone = 0;
    s->persist.unstarted = 0;
    s->exec.nactive = 0;
    s->exec.npolls = 0;
    s->split.ndeferred = 0;
    s->pace.next_due = 0;
    s->pace.t_begin =
        nbcxi_pace_timed(nbcxi_sched_bytes(s)) ? nbcxi_now_ns() : 0;
    s->pace.t_pass = s->pace.t_pending = 0;
    s->exec.ready_head = s->exec.ready_tail = 0;
    s->watch.ndone = -1; /* the watchdog starts its clock when it looks */
    s->watch.since = 0;
    for (int i = 0; i < s->build.nnodes; i++)
        s->build.nodes[i].pending = s->build.nodes[i].npred;
    /* Receives first: they are posted before any send of this rank. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < s->build.nnodes; i++)
            if (s->build.nodes[i].npred == 0 &&
                (s->build.nodes[i].kind == NBCXI_NODE_RECV) == (pass == 0))
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
    if (s->exec.ready_head != s->exec.ready_tail || s->split.ndeferred)
        return false;
    for (int i = 0; i < s->build.nnodes; i++)
        if (s->build.nodes[i].kind == NBCXI_NODE_SEND &&
            s->build.nodes[i].pending > 0)
            return false;
    return true;
}

/* The earliest predicted completion among the active requests. */
static int64_t next_due(const struct nbcx_sched_s *s)
{
    int64_t due = 0;
    for (int i = 0; i < s->exec.nactive; i++) {
        const struct nbcxi_node *nd = &s->build.nodes[s->exec.req_node[i]];
        int64_t d = nbcxi_pace_due(p2p_bytes(nd), s->pace.req_t0[i]);
        if (d && (!due || d < due))
            due = d;
    }
    return due;
}

/* Tests the active transport requests once; retires the completed ones
 * (their successors become ready) and counts them in *moved. */
static int test_requests(struct nbcx_sched_s *s, int *moved)
{
    nbcxi_transport *tp = s->build.comm->tp;
    int ndone = 0;
    int err = tp->ops->testsome(tp, s->exec.nactive, s->exec.reqs, &ndone,
                                s->exec.done_idx);
    if (err != NBCX_SUCCESS)
        return err;
    /* The passes of an operation that can be a sample are timed (below):
     * one that receives too little to be one (a broadcast's root) reads
     * no clock. */
    if (s->pace.t_begin && nbcxi_pace_timed(s->exec.recv_bytes))
        s->pace.t_pass = nbcxi_now_ns();
    if (ndone == 0)
        return NBCX_SUCCESS;
    /* Retire the finished slots, keeping the others in order. */
    for (int k = 0; k < ndone; k++) {
        int i = s->exec.done_idx[k];
        node_done(s, s->exec.req_node[i]);
        s->exec.req_node[i] = -1;
    }
    int kept = 0;
    size_t rsz = tp->ops->req_size;
    for (int i = 0; i < s->exec.nactive; i++) {
        if (s->exec.req_node[i] < 0)
            continue;
        if (kept != i) {
            memcpy(slot(s, kept), slot(s, i), rsz);
            s->exec.req_node[kept] = s->exec.req_node[i];
            s->pace.req_t0[kept] = s->pace.req_t0[i];
        }
        kept++;
    }
    s->exec.nactive = kept;
    *moved += ndone;
    return NBCX_SUCCESS;
}

/* Calls the function of every waiting POLL node once; the done ones leave
 * the list (in order) and count in *moved. */
static int test_polls(struct nbcx_sched_s *s, int *moved)
{
    int kept = 0, err = NBCX_SUCCESS;
    for (int i = 0; i < s->exec.npolls; i++) {
        int id = s->exec.polls[i];
        struct nbcxi_node *nd = &s->build.nodes[id];
        int rc = err == NBCX_SUCCESS ? nd->u.poll.fn(nd->u.poll.arg) : 0;
        if (rc > 0) {
            node_done(s, id);
            (*moved)++;
            continue;
        }
        if (rc < 0)
            err = -rc;
        s->exec.polls[kept++] = id;
    }
    s->exec.npolls = kept;
    return err;
}

int nbcxi_sched_progress(struct nbcx_sched_s *s, bool app, bool *done)
{
    int err = app && s->split.ndeferred ? run_ready(s, true) : NBCX_SUCCESS;
    while (err == NBCX_SUCCESS && (s->exec.nactive > 0 || s->exec.npolls > 0)) {
        int moved = 0;
        if (s->exec.nactive > 0)
            err = test_requests(s, &moved);
        if (err == NBCX_SUCCESS && s->exec.npolls > 0)
            err = test_polls(s, &moved);
        if (err != NBCX_SUCCESS) {
            abort_all(s, err);
            break;
        }
        if (moved == 0)
            break;
        err = run_ready(s, app);
    }
    s->pace.next_due = err == NBCX_SUCCESS ? next_due(s) : 0;
    *done = err != NBCX_SUCCESS || s->exec.ndone == s->build.nnodes;
    /* A timed operation is a sample of the bandwidth when it completes:
     * it was pending at the end of its last progress call. */
    if (s->pace.t_begin && nbcxi_pace_timed(s->exec.recv_bytes) &&
        err == NBCX_SUCCESS) {
        int64_t now = s->pace.t_pass ? s->pace.t_pass : nbcxi_now_ns();
        if (*done)
            nbcxi_pace_sample(s->exec.recv_bytes, s->pace.t_begin,
                              s->pace.t_pending, now);
        else
            s->pace.t_pending = now;
    }
    return err;
}
