/* request.c - requests: the public start, test and wait functions, the
 * planning of persistent requests, and completion callbacks.
 *
 * A start makes the request and asks the mode in force (modes.c) what it
 * does: it begins the schedule on the engine's active list
 * (nbcxi_engine_start, engine.c) or, where a progress thread will
 * adopt it, hands it over when the engine lock is taken. A test or a
 * wait that finds its requests unfinished calls the mode's table (poke,
 * wait_some). This file is the top of progress/: it calls the engine,
 * the modes and the thread; none of them calls it.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "progress.h"

enum trace_point { TRACE_STARTING, TRACE_STARTED, TRACE_RETIRED };
static void trace(struct nbcx_request_s *r, enum trace_point at)
{
    const struct nbcx_sched_s *s = r->sched;
    struct nbcxi_trace_op op = {
        .op = s->build.op_name ? s->build.op_name : "schedule",
        .alg = s->build.alg_name ? s->build.alg_name : "user",
        .bytes = s->build.msg_bytes, .comm = s->build.comm,
        .rank = s->build.comm->rank, .size = s->build.comm->size };
    if (at == TRACE_STARTING)
        nbcxi_trace_starting(&r->trace, &op);
    else if (at == TRACE_STARTED)
        nbcxi_trace_started(&r->trace, &op);
    else
        nbcxi_trace_retired(&r->trace, &op);
}

/* A test that leaves operations pending: its time was exposed. */
static void trace_pending(int count, nbcx_request reqs[])
{
    for (int i = 0; i < count; i++)
        if (!nbcxi_request_idle(reqs[i]) && !nbcxi_request_done(reqs[i]))
            nbcxi_trace_pending(&reqs[i]->trace);
}

static struct nbcx_request_s *new_request(struct nbcx_sched_s *s,
                                          bool persistent, int *err)
{
    *err = nbcxi_sched_prepare(s);
    struct nbcx_request_s *r = *err ? NULL
                                    : nbcxi_pool_alloc(&nbcxi_request_pool);
    int broken = nbcxi_comm_broken(s->build.comm);
    if (r && broken) {
        *err = broken;
    } else if (r) {
        /* Nonblocking collectives are started, and persistent ones
         * planned, in the same order on every rank, so each kind's
         * sequence number (and with it the tag slot) agrees everywhere;
         * a persistent request keeps its slot until it is freed, so it
         * may be started in any order. A failure here uses the number up
         * all the same: the ranks stay in step. */
        s->build.persistent = persistent;
        *err = nbcxi_slot_take(s->build.comm, persistent, &s->tag.seq,
                               &s->tag.slot);
        s->tag.held = *err == NBCX_SUCCESS;
    }
    if (!r || *err) {
        nbcxi_pool_free(&nbcxi_request_pool, r, NBCXI_DEAD_MAGIC);
        nbcxi_sched_destroy(s);
        *err = *err ? *err : NBCX_ERR_NOMEM;
        return NULL;
    }
    r->magic = NBCXI_REQUEST_MAGIC;
    r->sched = s;
    r->persistent = persistent;
    atomic_init(&r->complete, false);
    return r;
}

static void activate(struct nbcx_request_s *r);

int nbcxi_start(struct nbcx_sched_s *s, nbcx_request *req)
{
    *req = NBCX_REQUEST_NULL;
    int err;
    struct nbcx_request_s *r = new_request(s, false, &err);
    if (!r)
        return err;
    activate(r);
    *req = r;
    return NBCX_SUCCESS;
}

int nbcxi_plan(struct nbcx_sched_s *s, nbcx_request *req)
{
    *req = NBCX_REQUEST_NULL;
    int err;
    struct nbcx_request_s *r = new_request(s, true, &err);
    if (!r)
        return err;
    err = nbcxi_sched_prepare_requests(s);
    if (err != NBCX_SUCCESS) {
        nbcxi_sched_destroy(s);
        nbcxi_pool_free(&nbcxi_request_pool, r, NBCXI_DEAD_MAGIC);
        return err;
    }
    atomic_store(&r->complete, true); /* inactive */
    *req = r;
    return NBCX_SUCCESS;
}

/* Starts r's schedule (activate_now), traced. */
static void activate_now(struct nbcx_request_s *r);
static void activate(struct nbcx_request_s *r)
{
    NBCXI_TRACE(trace(r, TRACE_STARTING));
    activate_now(r);
    NBCXI_TRACE(trace(r, TRACE_STARTED));
}

/* Starts r's schedule: begins it (nbcxi_engine_start), or hands it over to
 * the progress thread. */
static void activate_now(struct nbcx_request_s *r)
{
    struct nbcx_sched_s *s = r->sched;
    nbcxi_watchdog_init(); /* NBCX_TIMEOUT, NBCX_DEBUG_DUMP (once) */
    r->started = true;
    r->lazy = false;
    r->look_gap = 0;
    r->err = NBCX_SUCCESS;
    atomic_store_explicit(&r->complete, false, memory_order_relaxed);

    const struct nbcxi_progress_mode *m = nbcxi_mode();
    if (m->thread && (m->place_lazily ? nbcxi_thread_launch()
                                      : nbcxi_thread_ensure()) !=
                         NBCX_SUCCESS) {
        /* No thread to rely on: waits must drive progress themselves. */
        nbcxi_progress_threads_allowed(false, "a progress thread, which "
                                              "could not be created");
        m = &nbcxi_caller_mode;
    }
    for (int i = 0; i < s->build.nnodes; i++)
        s->build.nodes[i].app = false;
    s->split.app_up_left = s->split.app_down_left = 0;
    if (m->prepare)
        m->prepare(s);

    /* Where a progress thread will adopt it, a start does not wait for
     * the engine lock (above). */
    bool hand_off = nbcxi_mode_hands_off(m, s->build.comm->tp) &&
                    nbcxi_thread_live();
    bool wake = false;
    if (!nbcxi_engine_start(r, m, hand_off, &wake) || wake)
        nbcxi_thread_wake();
}

/* Requests live in this pool (base/pool.c): a stale handle (a copy kept
 * after the request was completed and released) reads valid memory
 * marked dead. */
struct nbcxi_pool nbcxi_request_pool = NBCXI_POOL_INIT(struct nbcx_request_s);

/* NBCX_SUCCESS if r is a live request (or NULL, where null_ok), else
 * NBCX_ERR_REQUEST with a message that says what is wrong. */
static int check_request(const char *fn, nbcx_request r, bool null_ok)
{
    if (!r)
        return null_ok ? NBCX_SUCCESS
                       : nbcxi_error(NBCX_ERR_REQUEST, "%s: the request is "
                                     "NBCX_REQUEST_NULL", fn);
    if ((uintptr_t)r > 4096 && r->magic == NBCXI_REQUEST_MAGIC)
        return NBCX_SUCCESS;
    if ((uintptr_t)r > 4096 && r->magic == NBCXI_DEAD_MAGIC)
        return nbcxi_error(NBCX_ERR_REQUEST, "%s: request %p was already "
                           "completed and released (by a wait, a test or "
                           "nbcx_request_free); this is a stale copy of its "
                           "handle", fn, (void *)r);
    return nbcxi_error(NBCX_ERR_REQUEST, "%s: %p is not a request handle",
                       fn, (void *)r);
}

/* The same for an array (NULL entries allowed). */
static int check_requests(const char *fn, int count, nbcx_request reqs[])
{
    if (count < 0)
        return nbcxi_error(NBCX_ERR_REQUEST, "%s: negative count (%d)", fn,
                           count);
    if (count > 0 && !reqs)
        return nbcxi_error(NBCX_ERR_REQUEST, "%s: NULL request array", fn);
    for (int i = 0; i < count; i++) {
        int err = check_request(fn, reqs[i], true);
        if (err != NBCX_SUCCESS)
            return err;
    }
    return NBCX_SUCCESS;
}

static int null_pointer(const char *fn)
{
    return nbcxi_error(NBCX_ERR_REQUEST, "%s: NULL request pointer", fn);
}

/* Whether r can be started: a live persistent request, not active, on a
 * communicator that is not broken. */
static int check_startable(const char *fn, nbcx_request r)
{
    int err = check_request(fn, r, false);
    if (err != NBCX_SUCCESS)
        return err;
    if (!r->persistent)
        return nbcxi_error(NBCX_ERR_REQUEST, "%s: request %p is not "
                           "persistent (only those of nbcx_<op>_init can "
                           "be started)", fn, (void *)r);
    if (r->started)
        return nbcxi_error(NBCX_ERR_REQUEST, "%s: request %p is already "
                           "active (started and not yet completed by a "
                           "wait or test)", fn, (void *)r);
    return nbcxi_comm_broken(r->sched->build.comm);
}

/* A persistent request with a callback needs a notice for this start's
 * completion (the last one went with the last completion). */
static int ready_notice(const char *fn, nbcx_request r)
{
    if (!r->cb_fn || r->cb_notice)
        return NBCX_SUCCESS;
    struct nbcxi_notice *n = calloc(1, sizeof *n);
    if (!n)
        return nbcxi_error(NBCX_ERR_NOMEM, "%s: no memory for the "
                           "completion callback's notice", fn);
    pthread_mutex_lock(&nbcxi_engine_lock);
    if (r->cb_notice)
        free(n); /* (a registration from another thread came first) */
    else
        r->cb_notice = n;
    pthread_mutex_unlock(&nbcxi_engine_lock);
    return NBCX_SUCCESS;
}

int nbcx_start(nbcx_request *req)
{
    NBCXI_TRACE_CALLER();
    NBCXI_TRACE(nbcxi_trace_enter());
    if (!req)
        return null_pointer("nbcx_start");
    int err = check_startable("nbcx_start", *req);
    if (err == NBCX_SUCCESS)
        err = ready_notice("nbcx_start", *req);
    if (err == NBCX_SUCCESS)
        activate(*req);
    return err;
}

int nbcx_startall(int count, nbcx_request reqs[])
{
    NBCXI_TRACE_CALLER();
    NBCXI_TRACE(nbcxi_trace_enter());
    if (count < 0 || (count > 0 && !reqs))
        return check_requests("nbcx_startall", count, reqs);
    /* All checked before any starts: nothing half-started. A request
     * listed twice would be started twice. */
    for (int i = 0; i < count; i++) {
        int err = check_startable("nbcx_startall", reqs[i]);
        for (int j = 0; j < i && err == NBCX_SUCCESS; j++)
            if (reqs[j] == reqs[i])
                err = nbcxi_error(NBCX_ERR_REQUEST, "nbcx_startall: "
                                  "request %p is listed twice (entries %d "
                                  "and %d)", (void *)reqs[i], j, i);
        if (err != NBCX_SUCCESS)
            return err;
    }
    for (int i = 0; i < count; i++) {
        int err = ready_notice("nbcx_startall", reqs[i]);
        if (err != NBCX_SUCCESS)
            return err;
    }
    for (int i = 0; i < count; i++)
        activate(reqs[i]);
    return NBCX_SUCCESS;
}

int nbcx_request_free(nbcx_request *req)
{
    if (!req)
        return null_pointer("nbcx_request_free");
    struct nbcx_request_s *r = *req;
    int err = check_request("nbcx_request_free", r, true);
    if (!r || err != NBCX_SUCCESS)
        return err;
    /* An operation in flight cannot be abandoned: its buffers are in use
     * and its peers expect it. Wait for it first. */
    if (r->persistent ? r->started : !nbcxi_request_done(r))
        return nbcxi_error(NBCX_ERR_REQUEST, "nbcx_request_free: request "
                           "%p is active (its operation is in flight): "
                           "complete it with a wait or test first",
                           (void *)r);
    NBCXI_TRACE(trace(r, TRACE_RETIRED)); /* (never waited for: callbacks) */
    free(r->cb_notice);
    nbcxi_sched_destroy(r->sched);
    nbcxi_pool_free(&nbcxi_request_pool, r, NBCXI_DEAD_MAGIC);
    *req = NBCX_REQUEST_NULL;
    return NBCX_SUCCESS;
}

int nbcx_request_on_complete(nbcx_request req, nbcx_complete_fn fn,
                             void *arg)
{
    static const char name[] = "nbcx_request_on_complete";
    int err = check_request(name, req, false);
    if (err != NBCX_SUCCESS)
        return err;
    if (!fn)
        return nbcxi_error(NBCX_ERR_ARG, "%s: the callback is NULL", name);
    struct nbcxi_notice *n = calloc(1, sizeof *n);
    if (!n)
        return nbcxi_error(NBCX_ERR_NOMEM, "%s: no memory for the "
                           "callback's notice", name);
    pthread_mutex_lock(&nbcxi_engine_lock);
    if (!req->persistent && req->cb_fn) {
        pthread_mutex_unlock(&nbcxi_engine_lock);
        free(n);
        return nbcxi_error(NBCX_ERR_REQUEST, "%s: request %p already has "
                           "a completion callback (a nonblocking request "
                           "takes one)", name, (void *)req);
    }
    req->cb_fn = fn;
    req->cb_arg = arg;
    /* Completion is marked under the lock (finish): either it has been,
     * and fn runs here, or finish() will queue it. An inactive
     * persistent request keeps it for its starts. */
    bool now = nbcxi_request_done(req) && !nbcxi_request_idle(req);
    int result = req->err;
    if (!now && !req->cb_notice) {
        req->cb_notice = n;
        n = NULL;
    }
    bool wake = false;
    if (!now && !nbcxi_request_idle(req))
        nbcxi_engine_want_locked(req, &wake);
    nbcxi_engine_unlock();
    if (wake)
        nbcxi_thread_wake();
    free(n);
    if (now)
        fn(arg, result);
    return NBCX_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Completion                                                          */
/* ------------------------------------------------------------------ */

int nbcx_progress(void)
{
    pthread_mutex_lock(&nbcxi_engine_lock);
    nbcxi_progress_all_locked(true);
    nbcxi_engine_unlock();
    return NBCX_SUCCESS;
}

/* Releases a completed request and returns its result; a persistent one
 * becomes inactive instead, ready for the next start. */
static int retire(nbcx_request *req)
{
    struct nbcx_request_s *r = *req;
    NBCXI_TRACE(trace(r, TRACE_RETIRED));
    int err = r->err;
    if (r->persistent) {
        r->started = false;
        return err;
    }
    nbcxi_sched_retire(r->sched, err);
    nbcxi_pool_free(&nbcxi_request_pool, r, NBCXI_DEAD_MAGIC);
    *req = NBCX_REQUEST_NULL;
    return err;
}
/* Waits until one of reqs is complete (or all are NULL); returns
 * nbcxi_find_complete's answer. How it waits is the mode's. */
static int wait_some(int count, nbcx_request reqs[])
{
    int i = nbcxi_find_complete(count, reqs);
    return i != -1 ? i : nbcxi_mode()->wait_some(count, reqs);
}

static int test_one(nbcx_request *req, int *flag)
{
    if (!req || !flag)
        return req ? nbcxi_error(NBCX_ERR_REQUEST, "nbcx_test: NULL flag "
                                 "pointer")
                   : null_pointer("nbcx_test");
    *flag = 0;
    int err = check_request("nbcx_test", *req, true);
    if (err != NBCX_SUCCESS)
        return err;
    if (nbcxi_request_idle(*req)) {
        *flag = 1;
        return NBCX_SUCCESS;
    }
    if (!nbcxi_request_done(*req))
        nbcxi_mode()->poke(1, req);
    NBCXI_TRACE(trace_pending(1, req));
    if (!nbcxi_request_done(*req))
        return NBCX_SUCCESS;
    *flag = 1;
    return retire(req);
}

static int wait_one(nbcx_request *req)
{
    if (!req)
        return null_pointer("nbcx_wait");
    int err = check_request("nbcx_wait", *req, true);
    if (err != NBCX_SUCCESS)
        return err;
    if (nbcxi_request_idle(*req))
        return NBCX_SUCCESS;
    wait_some(1, req);
    return retire(req);
}

static int test_all(int count, nbcx_request reqs[], int *flag)
{
    if (!flag)
        return nbcxi_error(NBCX_ERR_REQUEST, "nbcx_testall: NULL flag "
                           "pointer");
    *flag = 0;
    int err = check_requests("nbcx_testall", count, reqs);
    if (err != NBCX_SUCCESS)
        return err;
    nbcxi_mode()->poke(count, reqs);
    NBCXI_TRACE(trace_pending(count, reqs));
    for (int i = 0; i < count; i++)
        if (!nbcxi_request_idle(reqs[i]) && !nbcxi_request_done(reqs[i]))
            return NBCX_SUCCESS;
    /* All complete: release them all (MPI_Testall semantics). */
    for (int i = 0; i < count; i++) {
        if (!nbcxi_request_idle(reqs[i])) {
            int e = retire(&reqs[i]);
            if (err == NBCX_SUCCESS)
                err = e;
        }
    }
    *flag = 1;
    return err;
}

static int wait_all(int count, nbcx_request reqs[])
{
    int err = check_requests("nbcx_waitall", count, reqs);
    if (err != NBCX_SUCCESS)
        return err;
    for (int i; (i = wait_some(count, reqs)) >= 0;) {
        int e = retire(&reqs[i]);
        if (err == NBCX_SUCCESS)
            err = e;
    }
    return err;
}

static int wait_any(int count, nbcx_request reqs[], int *index)
{
    if (!index)
        return nbcxi_error(NBCX_ERR_REQUEST, "nbcx_waitany: NULL index "
                           "pointer");
    int err = check_requests("nbcx_waitany", count, reqs);
    if (err != NBCX_SUCCESS)
        return err;
    int i = wait_some(count, reqs);
    *index = i < 0 ? -1 : i;
    return i < 0 ? NBCX_SUCCESS : retire(&reqs[i]);
}

/* The public tests and waits: the application's time inside them is a
 * slice of its track when tracing (base/trace.h). */
#define TRACED(what, call)                                                    \
    do {                                                                      \
        NBCXI_TRACE(nbcxi_trace_enter());                                     \
        int err_ = (call);                                                    \
        NBCXI_TRACE(nbcxi_trace_leave(what));                                 \
        return err_;                                                          \
    } while (0)

int nbcx_test(nbcx_request *req, int *flag)
{
    TRACED("test", test_one(req, flag));
}

int nbcx_wait(nbcx_request *req)
{
    TRACED("wait", wait_one(req));
}

int nbcx_testall(int count, nbcx_request reqs[], int *flag)
{
    TRACED("testall", test_all(count, reqs, flag));
}

int nbcx_waitall(int count, nbcx_request reqs[])
{
    TRACED("waitall", wait_all(count, reqs));
}

int nbcx_waitany(int count, nbcx_request reqs[], int *index)
{
    TRACED("waitany", wait_any(count, reqs, index));
}
