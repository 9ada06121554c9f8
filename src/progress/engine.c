/* engine.c - the engine: the list of active operations, its lock, the
 * progress passes over it, and the starts that begin on it.
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
 * onto a lock-free stack (nbcxi_engine_hand_over) and wakes the thread,
 * which begins it at its next turn (nbcxi_engine_adopt_locked; every
 * progress pass adopts too). Tests and waits only try the lock
 * (nbcxi_progress_unless_busy). The in-process transport and split mode
 * always begin in the caller: the first publishes shared buffers other
 * ranks poll for, the second runs the first tree levels inside the start.
 *
 * The engine calls nothing above it. What differs between the progress
 * modes it reaches through the mode's table (struct nbcxi_progress_mode,
 * passed in by the caller: request.c, or the request's own for a start
 * handed over), and the progress thread through the table the thread
 * attaches when it starts (struct nbcxi_engine_thread): the modes, the
 * thread, modes.c and request.c call the engine (engine.h), never the
 * other way round.
 */
#define _POSIX_C_SOURCE 200809L
#include <poll.h>
#include <stdlib.h>

#include "engine.h"
#include "progress.h" /* the watchdog (watchdog.c) */

pthread_mutex_t nbcxi_engine_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t nbcxi_done_cv = PTHREAD_COND_INITIALIZER;
int nbcxi_waiters;

static struct nbcx_request_s *active; /* doubly linked, under the lock */
/* Starts handed over (newest first, linked by ->handed): pushed without
 * the lock, taken whole under it. */
static _Atomic(struct nbcx_request_s *) handed;
/* The progress thread's table, once a thread was started (under the
 * lock): until then there is none to kick or wake. */
static const struct nbcxi_engine_thread *thread_ops;

void nbcxi_engine_attach_thread(const struct nbcxi_engine_thread *t)
{
    thread_ops = t;
}

static bool kick_locked(bool urgent)
{
    return thread_ops && thread_ops->kick_locked(urgent);
}

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
static struct nbcxi_notice *notices, **notices_tail = &notices;

static void finish(struct nbcx_request_s *r, int err)
{
    struct nbcx_sched_s *s = r->sched;
    if (!r->persistent && s->tag.held) { /* its tags are free again */
        nbcxi_slot_release(s->build.comm, s->tag.slot);
        s->tag.held = false;
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
    int before = s->exec.ndone, deferred = s->split.ndeferred;
    bool done;
    int err = nbcxi_sched_progress(s, app, &done);
    /* The watchdog's verdict (timeout, broken communicator; watchdog.c) */
    if (!done && wd_now &&
        (err = nbcxi_watchdog_verdict_locked(s, wd_now)) != NBCX_SUCCESS) {
        nbcxi_sched_abort(s, err);
        done = true;
    }
    long advanced = s->exec.ndone - before;
    *wake |= s->split.ndeferred > deferred;
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

unsigned long nbcxi_engine_app_passes_locked(void)
{
    return app_passes;
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
        nbcxi_transport *t = s->build.comm->tp;
        if (s->exec.npolls > 0 || !nbcxi_transport_can(t, NBCXI_CAP_WAKES))
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
        int64_t d = s->pace.t_begin ? nbcxi_pace_due(nbcxi_sched_bytes(s),
                                                s->pace.t_begin)
                               : 0;
        end = NBCXI_MAX(end, NBCXI_MAX(d, s->pace.next_due));
    }
    return end;
}

int64_t nbcxi_engine_next_due_locked(void)
{
    int64_t due = 0;
    for (struct nbcx_request_s *r = active; r; r = r->next) {
        int64_t d = r->sched->pace.next_due;
        if (d && (!due || d < due))
            due = d;
    }
    return due;
}

/* ------------------------------------------------------------------ */
/* Start and hand-over                                                 */
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
        if (r->sched->split.ndeferred > 0) {
            progress_one_locked(r, true, &wake, 0);
            any = true;
        }
    }
    if (wake && nbcxi_waiters) /* another thread's request, perhaps */
        pthread_cond_broadcast(&nbcxi_done_cv);
    return any;
}

/* An operation with a completion callback has someone waiting for it
 * who makes no calls: the progress thread must drive it, even where a
 * start leaves it to the application's own calls (auto mode's lazy
 * operations; operations between threads of this process that poll for
 * each other). Lock held. */
void nbcxi_engine_want_locked(struct nbcx_request_s *r, bool *wake)
{
    r->lazy = false;
    if (kick_locked(true))
        *wake = true;
}

/* Begins r's schedule and, unless it finished at once, puts r on the
 * active list; returns whether it finished (r may then be freed by its
 * owner at once). Lock held. */
bool nbcxi_engine_begin_locked(struct nbcx_request_s *r,
                               const struct nbcxi_progress_mode *m,
                               bool *wake)
{
    struct nbcx_sched_s *s = r->sched;
    bool done,
        in_process = nbcxi_transport_can(s->build.comm->tp,
                                         NBCXI_CAP_IN_PROCESS);
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
    r->quiet_since = s->pace.t_begin; /* the start is the application's */
    r->passes_seen = app_passes;
    /* In-process peers: this start (a message sent, a buffer published
     * or read) may have completed other ranks' operations, whose waiters
     * need not wait for the progress thread's poll. */
    if (in_process)
        nbcxi_progress_all_locked(false);
    if (m->started_locked)
        m->started_locked(r, wake);
    if (r->cb_notice)
        nbcxi_engine_want_locked(r, wake);
    return false;
}

void nbcxi_engine_hand_over(struct nbcx_request_s *r,
                            const struct nbcxi_progress_mode *m)
{
    r->handed_mode = m;
    struct nbcx_request_s *top =
        atomic_load_explicit(&handed, memory_order_relaxed);
    do
        r->handed = top;
    while (!atomic_compare_exchange_weak_explicit(
        &handed, &top, r, memory_order_release, memory_order_relaxed));
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
    bool wake = false, ended = false;
    for (r = fifo; r;) {
        struct nbcx_request_s *next = r->handed; /* before r may be freed */
        r->handed = NULL;
        ended |= nbcxi_engine_begin_locked(r, r->handed_mode, &wake);
        r = next;
    }
    if (ended && nbcxi_waiters) /* its owner may already wait */
        pthread_cond_broadcast(&nbcxi_done_cv);
    if (wake && thread_ops)
        thread_ops->wake();
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
            nbcxi_peers_poll(reqs[i]->sched->build.comm))
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
