/* request.c - requests, the list of active operations, and test/wait.
 *
 * Every started operation is on one process-wide list. Whoever makes
 * progress advances all of them, not just the one asked about: a rank
 * waiting for one collective must keep serving the others, or two ranks
 * waiting for different collectives would deadlock. One mutex guards the
 * list and every executor call.
 *
 * Application threads never wait for that mutex to start an operation
 * while a progress thread runs: a start that finds it taken (most often
 * by the progress thread's pass over every operation) pushes its request
 * onto a lock-free stack and wakes the thread, which begins it at its
 * next turn (nbcxi_engine_adopt_locked; every progress pass adopts too).
 * Tests and waits only try the lock (nbcxi_progress_unless_busy). The
 * in-process transport and split mode always begin in the caller: the
 * first publishes shared buffers other ranks poll for, the second runs
 * the first tree levels inside the start.
 *
 * What differs between the progress modes (who drives the list, how a
 * wait waits, what a start does besides posting) is in each mode's table
 * (struct nbcxi_progress_mode): mode_caller.c, mode_thread.c, mode_split.c; modes.c
 * says which one is in force. The engine calls the table and names no
 * mode.
 */
#define _POSIX_C_SOURCE 200809L
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "progress.h"

pthread_mutex_t nbcxi_engine_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t nbcxi_done_cv = PTHREAD_COND_INITIALIZER;
int nbcxi_waiters;

static struct nbcx_request_s *active; /* doubly linked, under the lock */
/* Starts handed over (newest first, linked by ->handed): pushed without
 * the lock, taken whole under it. */
static _Atomic(struct nbcx_request_s *) handed;

/* ------------------------------------------------------------------ */
/* The active list                                                     */
/* ------------------------------------------------------------------ */

static void unlink_request(struct nbcx_request_s *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        active = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->prev = r->next = NULL;
}

/* A completion callback due (nbcx_request_on_complete): finish()
 * queues it under the lock, whoever releases the lock runs it
 * (nbcx_engine_unlock), oldest first. It holds copies of fn and arg: the
 * request may be released before it runs. */
struct nbcxi_notice {
    nbcx_complete_fn fn;
    void *arg;
    int err;
    struct nbcxi_notice *next;
};
static struct nbcxi_notice *notices, **notices_tail = &notices;

static void finish(struct nbcx_request_s *r, int err)
{
    struct nbcx_sched_s *s = r->sched;
    if (!r->persistent && s->holds_slot) { /* its tags are free again */
        nbcxi_slot_release(s->comm, s->slot);
        s->holds_slot = false;
    }
    r->err = err;
    struct nbcxi_notice *n = r->cb_notice;
    if (n) {
        r->cb_notice = NULL;
        *n = (struct nbcxi_notice){ .fn = r->cb_fn, .arg = r->cb_arg,
                                    .err = err };
        *notices_tail = n;
        notices_tail = &n->next;
    }
    NBCXI_TRACE(r->trace.done = nbcxi_now_ns());
    atomic_store_explicit(&r->complete, true, memory_order_release);
}

/* NBCX_TRACE (base/trace.h): what a start, a start's return and a
 * completion reported to the application tell the recorder. */
enum trace_point { TRACE_STARTING, TRACE_STARTED, TRACE_RETIRED };
static void trace(struct nbcx_request_s *r, enum trace_point at)
{
    const struct nbcx_sched_s *s = r->sched;
    struct nbcxi_trace_op op = {
        .op = s->op_name ? s->op_name : "schedule",
        .alg = s->alg_name ? s->alg_name : "user",
        .bytes = s->msg_bytes, .comm = s->comm, .rank = s->comm->rank,
        .size = s->comm->size };
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

void nbcxi_engine_unlock(void)
{
    struct nbcxi_notice *n = notices;
    notices = NULL;
    notices_tail = &notices;
    pthread_mutex_unlock(&nbcxi_engine_lock);
    while (n) {
        struct nbcxi_notice *next = n->next;
        n->fn(n->arg, n->err);
        free(n);
        n = next;
    }
}

bool nbcxi_engine_notify_locked(void)
{
    if (!notices)
        return false;
    nbcxi_engine_unlock();
    pthread_mutex_lock(&nbcxi_engine_lock);
    return true;
}

bool nbcxi_request_done(nbcx_request r)
{
    return atomic_load_explicit(&r->complete, memory_order_acquire);
}

/* Advances one active operation; returns the nodes finished. Sets
 * *wake if a waiter may want to know: the operation completed, or it set
 * aside work for the application thread (split). Once finish() has run,
 * r belongs to its owner, who may free it at once: it is not touched
 * after that. */
static long progress_one_locked(struct nbcx_request_s *r, bool app,
                                bool *wake, int64_t wd_now)
{
    struct nbcx_sched_s *s = r->sched;
    int64_t tr0 = nbcxi_trace_now(); /* (0: not tracing) */
    int before = s->ndone, deferred = s->ndeferred;
    bool done;
    int err = nbcxi_sched_progress(s, app, &done);
    /* The watchdog's verdict (timeout, broken communicator; watchdog.c) */
    if (!done && wd_now &&
        (err = nbcxi_watchdog_verdict_locked(s, wd_now)) != NBCX_SUCCESS) {
        nbcxi_sched_abort(s, err);
        done = true;
    }
    long advanced = s->ndone - before;
    *wake |= s->ndeferred > deferred;
    NBCXI_TRACE(nbcxi_trace_cpu(&r->trace, tr0));
    if (done) {
        unlink_request(r);
        finish(r, err);
        advanced++;
        *wake = true;
    }
    return advanced;
}

/* The application's progress passes so far (lock held): a change tells
 * the watch that the application drives its lazy work (look_due). */
static unsigned long app_passes;

/* Whether the watch should look at r now: not lazy, nothing predicted,
 * or its look_gap passed since the application last made a pass. */
static bool look_due(struct nbcx_request_s *r, int64_t now)
{
    if (!r->lazy || r->look_gap <= 0)
        return true;
    if (r->passes_seen != app_passes) {
        r->passes_seen = app_passes;
        r->quiet_since = now;
    }
    return now - r->quiet_since >= r->look_gap;
}

/* Waiters are woken when a request completes or work is set aside for
 * them, not for every node that finishes inside an operation: with many
 * waiters (ranks that are threads) that would wake them all for nothing
 * at every step of every operation. */
static long progress_list_locked(bool app, bool look)
{
    nbcxi_engine_adopt_locked();
    long advanced = 0;
    bool wake = false;
    int64_t wd_now = atomic_load_explicit(&nbcxi_watchdog_armed,
                                          memory_order_relaxed)
                         ? nbcxi_watchdog_pass_locked(active)
                         : 0;
    int64_t now = look ? nbcxi_now_ns() : 0;
    app_passes += app;
    for (struct nbcx_request_s *r = active, *next; r; r = next) {
        next = r->next;
        if (!look || look_due(r, now))
            advanced += progress_one_locked(r, app, &wake, wd_now);
    }
    if (wake && nbcxi_waiters)
        pthread_cond_broadcast(&nbcxi_done_cv);
    return advanced;
}

long nbcxi_progress_all_locked(bool app)
{
    return progress_list_locked(app, false);
}

long nbcxi_engine_look_locked(void)
{
    return progress_list_locked(false, true);
}

bool nbcxi_engine_busy_locked(void)
{
    return active != NULL ||
           atomic_load_explicit(&handed, memory_order_relaxed) != NULL;
}

bool nbcxi_engine_urgent_locked(void)
{
    for (struct nbcx_request_s *r = active; r; r = r->next)
        if (!r->lazy)
            return true;
    return false;
}

int nbcxi_engine_arm_locked(void)
{
    nbcxi_transport *tp = NULL;
    int fd = -1;
    for (struct nbcx_request_s *r = active; r; r = r->next) {
        struct nbcx_sched_s *s = r->sched;
        nbcxi_transport *t = s->comm->tp;
        if (s->npolls > 0 || !nbcxi_transport_can(t, NBCXI_CAP_WAKES))
            return -1; /* a poll node, or a transport that cannot wake us */
        int f = t->ops->event_fd(t);
        if (f < 0 || (fd >= 0 && f != fd))
            return -1; /* (one fd only: one UCX worker per process) */
        fd = f;
        tp = t;
    }
    if (!tp)
        return -1;
    int armed = tp->ops->arm(tp);
    return armed == 0 ? fd : armed == 1 ? -2 : -1;
}

int nbcxi_engine_sleep(int ms)
{
    if (pthread_mutex_trylock(&nbcxi_engine_lock) != 0)
        return 0;
    int fd = nbcxi_engine_arm_locked();
    pthread_mutex_unlock(&nbcxi_engine_lock);
    if (fd == -2)
        return 1;
    if (fd < 0)
        return -1;
    struct pollfd p = { .fd = fd, .events = POLLIN };
    poll(&p, 1, ms);
    return 1;
}

int64_t nbcxi_engine_transfer_end_locked(void)
{
    int64_t end = 0;
    for (struct nbcx_request_s *r = active; r; r = r->next) {
        struct nbcx_sched_s *s = r->sched;
        int64_t d = s->t_begin ? nbcxi_pace_due(nbcxi_sched_bytes(s),
                                                s->t_begin)
                               : 0;
        end = NBCXI_MAX(end, NBCXI_MAX(d, s->next_due));
    }
    return end;
}

int64_t nbcxi_engine_next_due_locked(void)
{
    int64_t due = 0;
    for (struct nbcx_request_s *r = active; r; r = r->next) {
        int64_t d = r->sched->next_due;
        if (d && (!due || d < due))
            due = d;
    }
    return due;
}

/* ------------------------------------------------------------------ */
/* Start                                                               */
/* ------------------------------------------------------------------ */

/* Split mode: runs the application work set aside in every active
 * operation, not only in those the caller is blocked on: another rank may
 * need our part of an earlier operation before it can reach the one we
 * wait for. Returns whether there was any. Lock held. */
bool nbcxi_serve_deferred_locked(void)
{
    bool any = false, wake = false;
    for (struct nbcx_request_s *r = active, *next; r; r = next) {
        next = r->next;
        if (r->sched->ndeferred > 0) {
            progress_one_locked(r, true, &wake, 0);
            any = true;
        }
    }
    if (wake && nbcxi_waiters) /* another thread's request, perhaps */
        pthread_cond_broadcast(&nbcxi_done_cv);
    return any;
}

/* A request for schedule s, with the next sequence number and tag slot
 * of its kind (persistent or not) on its communicator; NULL (s
 * destroyed, *err set) on failure. */
static struct nbcx_request_s *new_request(struct nbcx_sched_s *s,
                                          bool persistent, int *err)
{
    *err = nbcxi_sched_prepare(s);
    struct nbcx_request_s *r = *err ? NULL
                                    : nbcxi_pool_alloc(&nbcxi_request_pool);
    int broken = nbcxi_comm_broken(s->comm);
    if (r && broken) {
        *err = broken;
    } else if (r) {
        /* Nonblocking collectives are started, and persistent ones
         * planned, in the same order on every rank, so each kind's
         * sequence number (and with it the tag slot) agrees everywhere;
         * a persistent request keeps its slot until it is freed, so it
         * may be started in any order. A failure here uses the number up
         * all the same: the ranks stay in step. */
        s->persistent = persistent;
        *err = nbcxi_slot_take(s->comm, persistent, &s->seq, &s->slot);
        s->holds_slot = *err == NBCX_SUCCESS;
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

/* An operation with a completion callback has someone waiting for it
 * who makes no calls: the progress thread must drive it, even where a
 * start leaves it to the application's own calls (auto mode's lazy
 * operations; operations between threads of this process that poll for
 * each other). Lock held. */
static void wanted_locked(struct nbcx_request_s *r, bool *wake)
{
    r->lazy = false;
    if (nbcxi_thread_kick_locked(true))
        *wake = true;
}

static void activate(struct nbcx_request_s *r);
static bool begin_locked(struct nbcx_request_s *r,
                         const struct nbcxi_progress_mode *m, bool *wake);

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

/* Starts r's schedule: begins it (begin_locked), or hands it over to
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
    for (int i = 0; i < s->nnodes; i++)
        s->nodes[i].app = false;
    s->app_up_left = s->app_down_left = 0;
    if (m->prepare)
        m->prepare(s);

    /* Where a progress thread will adopt it, a start does not wait for
     * the lock (above). */
    if (nbcxi_mode_hands_off(m, s->comm->tp) && nbcxi_thread_live()) {
        if (pthread_mutex_trylock(&nbcxi_engine_lock) != 0) {
            struct nbcx_request_s *top =
                atomic_load_explicit(&handed, memory_order_relaxed);
            do
                r->handed = top;
            while (!atomic_compare_exchange_weak_explicit(
                &handed, &top, r, memory_order_release,
                memory_order_relaxed));
            nbcxi_thread_wake();
            return;
        }
    } else {
        pthread_mutex_lock(&nbcxi_engine_lock);
    }
    bool wake = false;
    begin_locked(r, m, &wake);
    nbcxi_engine_unlock();
    if (wake)
        nbcxi_thread_wake();
}

/* Begins r's schedule and, unless it finished at once, puts r on the
 * active list; returns whether it finished (r may then be freed by its
 * owner at once). Lock held. */
static bool begin_locked(struct nbcx_request_s *r,
                         const struct nbcxi_progress_mode *m, bool *wake)
{
    struct nbcx_sched_s *s = r->sched;
    bool done,
        in_process = nbcxi_transport_can(s->comm->tp, NBCXI_CAP_IN_PROCESS);
    int err = nbcxi_sched_begin(s, &done);
    if (done) {
        /* A communication error met while starting (the executor has
         * cancelled what it posted) is reported at completion, as MPI
         * does: part of the schedule may already have run. */
        finish(r, err);
        if (in_process) /* as below */
            nbcxi_progress_all_locked(false);
        return true;
    }
    r->next = active;
    if (active)
        active->prev = r;
    active = r;
    r->quiet_since = s->t_begin; /* the start is the application's */
    r->passes_seen = app_passes;
    /* In-process peers: this start (a message sent, a buffer published
     * or read) may have completed other ranks' operations, whose waiters
     * need not wait for the progress thread's poll. */
    if (in_process)
        nbcxi_progress_all_locked(false);
    if (m->started_locked)
        m->started_locked(r, wake);
    if (r->cb_notice)
        wanted_locked(r, wake);
    return false;
}

void nbcxi_engine_adopt_locked(void)
{
    struct nbcx_request_s *r =
        atomic_exchange_explicit(&handed, NULL, memory_order_acquire);
    if (!r)
        return;
    struct nbcx_request_s *fifo = NULL; /* oldest first, as started */
    while (r) {
        struct nbcx_request_s *older = r->handed;
        r->handed = fifo;
        fifo = r;
        r = older;
    }
    const struct nbcxi_progress_mode *m = nbcxi_mode();
    bool wake = false, ended = false;
    for (r = fifo; r;) {
        struct nbcx_request_s *next = r->handed; /* before r may be freed */
        r->handed = NULL;
        ended |= begin_locked(r, m, &wake);
        r = next;
    }
    if (ended && nbcxi_waiters) /* its owner may already wait */
        pthread_cond_broadcast(&nbcxi_done_cv);
    if (wake)
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
    return nbcxi_comm_broken(r->sched->comm);
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
        wanted_locked(req, &wake);
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

/* Requests that count as complete with nothing to report: NULL, and
 * inactive persistent ones (MPI's "inactive" requests). */
bool nbcxi_request_idle(nbcx_request r)
{
    return !r || (r->persistent && !r->started);
}

/* One progress pass as the application thread, unless another thread is
 * making one (it progresses our operations too): waiting threads then
 * do not queue up on the lock, only to find nothing left to do. Returns
 * whether it made the pass; *advanced gets the nodes it finished. */
bool nbcxi_progress_unless_busy(long *advanced)
{
    *advanced = 0;
    if (pthread_mutex_trylock(&nbcxi_engine_lock) != 0)
        return false;
    *advanced = nbcxi_progress_all_locked(true);
    nbcxi_engine_unlock();
    return true;
}

/* Whether any of reqs (not complete) runs on a transport whose peers are
 * threads of this process with cores enough to poll for each other. */
bool nbcxi_any_local(int count, nbcx_request reqs[])
{
    for (int i = 0; i < count; i++)
        if (!nbcxi_request_idle(reqs[i]) && !nbcxi_request_done(reqs[i]) &&
            nbcxi_peers_poll(reqs[i]->sched->comm))
            return true;
    return false;
}

/* Index of a complete request among reqs, -1 if none, -2 if all are
 * NBCX_REQUEST_NULL. */
int nbcxi_find_complete(int count, nbcx_request reqs[])
{
    bool any = false;
    for (int i = 0; i < count; i++) {
        if (nbcxi_request_idle(reqs[i]))
            continue;
        if (nbcxi_request_done(reqs[i]))
            return i;
        any = true;
    }
    return any ? -1 : -2;
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
