/* engine.c - the engine: the list of active operations, its lock, the
 * progress passes over it, and the starts that begin on it.
 *
 * Every started operation is on one process-wide list. Whoever makes
 * progress advances all of them, not just the one asked about: a rank
 * waiting for one collective must keep serving the others, or two ranks
 * waiting for different collectives would deadlock.
 *
 * Two kinds of lock (docs/architecture.md, "Locks"):
 *   - the engine lock (nbcxi_engine_lock) guards the active list, the
 *     hand-over queue, the completion notices, the waiters and their
 *     condition, the watchdog's scan and the progress thread's state;
 *     every completion is marked under it (finish);
 *   - a communicator's progress lock (base.h: plock) guards the executor
 *     state of its operations (begin, progress, abort) and the calls into
 *     its transport, and a request's begun and ending flags.
 * Order: a thread holds at most one progress lock; holding one, it may
 * wait for the engine lock; holding the engine lock, it only tries a
 * progress lock (pthread_mutex_trylock) and passes over an operation
 * whose lock is taken: whoever holds it is advancing it, or starting on
 * its communicator. So no thread waits for a lock while holding one that
 * the holder of the first waits for: no deadlock.
 *
 * A test or a wait advances the caller's own operations under their
 * progress locks only (nbcxi_progress_app): threads on different
 * communicators do not queue on the engine lock; only a completion takes
 * it, briefly. Every SWEEP_AFTER passes that moved nothing, it sweeps
 * every operation too (as above: a peer may need another of ours).
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
#include <sched.h>
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
/* Starts taken from `handed` but not yet begun, oldest first (linked by
 * ->handed), under the engine lock: the adopter found their
 * communicator's progress lock taken (nbcxi_engine_adopt_locked). */
static struct nbcx_request_s *adopting;

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

/* Advances one begun operation under its progress lock (held); returns
 * the nodes finished. Sets *wake if a waiter may want to know: the
 * operation completed, or it set aside work for the application thread
 * (split). When it is done, sets r->ending and *err: the caller
 * releases the progress lock, then completes it under the engine lock
 * (finish: the owner may free r, and with it the communicator, once it
 * is marked complete, so no lock of r's may be held then). The
 * watchdog runs only where wd_now is set: in a sweep, under the engine
 * lock (its scan state). */
static long advance(struct nbcx_request_s *r, bool app, bool *wake,
                    int64_t wd_now, int *err)
{
    if (!r->begun || r->ending)
        return 0; /* (handed over, or its completion is under way) */
    struct nbcx_sched_s *s = r->sched;
    int64_t tr0 = nbcxi_trace_now(); /* (0: not tracing) */
    int before = s->exec.ndone, deferred = s->split.ndeferred;
    bool done;
    *err = nbcxi_sched_progress(s, app, &done);
    /* The watchdog's verdict (timeout, broken communicator; watchdog.c) */
    if (!done && wd_now &&
        (*err = nbcxi_watchdog_verdict_locked(s, wd_now)) != NBCX_SUCCESS) {
        nbcxi_sched_abort(s, *err);
        done = true;
    }
    long advanced = s->exec.ndone - before;
    *wake |= s->split.ndeferred > deferred;
    NBCXI_TRACE(nbcxi_trace_cpu(&r->trace, tr0));
    if (done) {
        r->ending = true;
        advanced++;
        *wake = true;
    }
    return advanced;
}

/* What try_step did with an operation. */
enum step {
    STEP_BUSY,  /* its progress lock was taken: its holder advances it */
    STEP_RAN,   /* advanced (or left, see try_step), still running */
    STEP_ENDED  /* it ended in this step: the caller completes it */
};

/* The step every pass takes with one operation, whoever makes it (a
 * sweep, split mode's service of deferred work, an own pass): tries r's
 * progress lock, advances r under it, releases it. Only where `deferred`
 * is set, r is advanced only if it holds work set aside for the
 * application (*had tells whether it did; split mode). Adds the nodes
 * finished to *advanced. STEP_ENDED: r just ended, with *err its result;
 * the caller completes it, under the engine lock, now that the progress
 * lock is released (advance). */
static enum step try_step(struct nbcx_request_s *r, bool app, bool deferred,
                          int64_t wd_now, bool *wake, long *advanced,
                          int *err, bool *had)
{
    pthread_mutex_t *l = nbcxi_op_lock(r);
    if (pthread_mutex_trylock(l) != 0)
        return STEP_BUSY;
    *err = NBCX_SUCCESS;
    bool was_ending = r->ending;
    bool go = !deferred || r->sched->split.ndeferred > 0;
    if (had)
        *had = go;
    if (go)
        *advanced += advance(r, app, wake, wd_now, err);
    bool ended = r->ending && !was_ending;
    pthread_mutex_unlock(l);
    return ended ? STEP_ENDED : STEP_RAN;
}

/* try_step under the engine lock (a sweep, split mode's service), which
 * completes r at once if it ended. */
static enum step step_locked(struct nbcx_request_s *r, bool app,
                             bool deferred, int64_t wd_now, bool *wake,
                             long *advanced, bool *had)
{
    int err;
    enum step st = try_step(r, app, deferred, wd_now, wake, advanced, &err,
                            had);
    if (st == STEP_ENDED) {
        unlink_request(r);
        finish(r, err);
    }
    return st;
}

/* The application's progress passes so far, its own (nbcxi_progress_app,
 * without the engine lock) and its sweeps: a change tells the watch that
 * the application drives its lazy work (look_due). */
static atomic_ulong app_passes;

/* Whether the watch should look at r now: not lazy, nothing predicted,
 * or its look_gap passed since the application last made a pass. */
static bool look_due(struct nbcx_request_s *r, int64_t now)
{
    if (!r->lazy || r->look_gap <= 0)
        return true;
    unsigned long passes =
        atomic_load_explicit(&app_passes, memory_order_relaxed);
    if (r->passes_seen != passes) {
        r->passes_seen = passes;
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
    if (app)
        atomic_fetch_add_explicit(&app_passes, 1, memory_order_relaxed);
    for (struct nbcx_request_s *r = active, *next; r; r = next) {
        next = r->next;
        if (!look || look_due(r, now))
            step_locked(r, app, false, wd_now, &wake, &advanced, NULL);
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
    return atomic_load_explicit(&app_passes, memory_order_relaxed);
}

long nbcxi_engine_look_locked(void)
{
    return progress_list_locked(false, true);
}

bool nbcxi_engine_busy_locked(void)
{
    return active != NULL || adopting != NULL ||
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
        if (!nbcxi_transport_can(t, NBCXI_CAP_WAKES))
            return -1; /* a transport that cannot wake us */
        if (pthread_mutex_trylock(nbcxi_op_lock(r)) != 0)
            return -2; /* being advanced now: look again at once */
        int npolls = s->exec.npolls;
        pthread_mutex_unlock(nbcxi_op_lock(r));
        if (npolls > 0)
            return -1; /* a poll node */
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
        if (pthread_mutex_trylock(nbcxi_op_lock(r)) != 0)
            continue; /* its application thread drives it (an estimate) */
        int64_t d = s->pace.t_begin ? nbcxi_pace_due(nbcxi_sched_bytes(s),
                                                s->pace.t_begin)
                               : 0;
        end = NBCXI_MAX(end, NBCXI_MAX(d, s->pace.next_due));
        pthread_mutex_unlock(nbcxi_op_lock(r));
    }
    return end;
}

int64_t nbcxi_engine_next_due_locked(void)
{
    int64_t due = 0;
    for (struct nbcx_request_s *r = active; r; r = r->next) {
        if (pthread_mutex_trylock(nbcxi_op_lock(r)) != 0)
            continue; /* its application thread drives it (an estimate) */
        int64_t d = r->sched->pace.next_due;
        pthread_mutex_unlock(nbcxi_op_lock(r));
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
 * wait for. Returns whether there was any, or an operation whose
 * progress lock was taken: then it has released the engine lock for a
 * moment (the holder may wait for it to complete its operation), and
 * the caller looks again rather than sleep. Lock held. */
bool nbcxi_serve_deferred_locked(void)
{
    bool any = false, wake = false, busy = false;
    for (struct nbcx_request_s *r = active, *next; r; r = next) {
        next = r->next;
        if (!r->defers)
            continue; /* (never any: not split mode's) */
        long advanced = 0;
        bool has = false;
        if (step_locked(r, true, true, 0, &wake, &advanced, &has) ==
            STEP_BUSY)
            busy = true;
        any |= has;
    }
    if (wake && nbcxi_waiters) /* another thread's request, perhaps */
        pthread_cond_broadcast(&nbcxi_done_cv);
    if (busy) {
        nbcxi_engine_unlock();
        sched_yield();
        pthread_mutex_lock(&nbcxi_engine_lock);
    }
    return any || busy;
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

/* Begins r's schedule, under its progress lock and the engine lock, and
 * puts r on the active list unless it finished at once. Returns whether
 * it did (with r->ending set and *err its result: the caller completes
 * it once the progress lock is released, as in a sweep). */
static bool begin_locked(struct nbcx_request_s *r, int *err)
{
    struct nbcx_sched_s *s = r->sched;
    bool done;
    /* A communication error met while starting (the executor has
     * cancelled what it posted) is reported at completion, as MPI does:
     * part of the schedule may already have run. */
    *err = nbcxi_sched_begin(s, &done);
    r->begun = true;
    if (done) {
        r->ending = true;
        return true;
    }
    r->next = active;
    if (active)
        active->prev = r;
    active = r;
    r->quiet_since = s->pace.t_begin; /* the start is the application's */
    r->passes_seen = atomic_load_explicit(&app_passes, memory_order_relaxed);
    return false;
}

/* The mode's hook and a completion callback's kick, for r just begun
 * and still running (engine lock held). Who calls it makes sure no
 * other thread advances r meanwhile (the hooks read its schedule). */
static void started_locked(struct nbcx_request_s *r,
                           const struct nbcxi_progress_mode *m, bool *wake)
{
    if (m->started_locked)
        m->started_locked(r, wake);
    if (r->cb_notice)
        nbcxi_engine_want_locked(r, wake);
}

bool nbcxi_engine_start(struct nbcx_request_s *r,
                        const struct nbcxi_progress_mode *m, bool hand_off,
                        bool *wake)
{
    struct nbcx_sched_s *s = r->sched;
    bool in_process = nbcxi_transport_can(s->build.comm->tp,
                                          NBCXI_CAP_IN_PROCESS);
    r->begun = r->ending = false; /* (not yet seen by other threads) */
    r->defers = m->defers;
    if (!hand_off) {
        pthread_mutex_lock(nbcxi_op_lock(r));
        pthread_mutex_lock(&nbcxi_engine_lock);
    } else if (pthread_mutex_trylock(nbcxi_op_lock(r)) != 0) {
        nbcxi_engine_hand_over(r, m); /* (never waits: either lock) */
        return false;
    } else if (pthread_mutex_trylock(&nbcxi_engine_lock) != 0) {
        pthread_mutex_unlock(nbcxi_op_lock(r));
        nbcxi_engine_hand_over(r, m);
        return false;
    }
    int err;
    bool done = begin_locked(r, &err);
    pthread_mutex_unlock(nbcxi_op_lock(r));
    /* No other thread advances r now: a sweep needs the engine lock,
     * which this thread holds, and r's own passes are its owner's, this
     * thread. Split mode's hook waits here for the progress thread to
     * run the upper levels: it needs the progress lock free. */
    if (done)
        finish(r, err);
    else
        started_locked(r, m, wake);
    /* In-process peers: this start (a message sent, a buffer published
     * or read) may have completed other ranks' operations, whose waiters
     * need not wait for the progress thread's poll. */
    if (in_process)
        nbcxi_progress_all_locked(false);
    nbcxi_engine_unlock();
    return true;
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

/* Moves the starts handed over to the end of `adopting`, oldest first. */
static void take_handed_locked(void)
{
    struct nbcx_request_s *r =
        atomic_exchange_explicit(&handed, NULL, memory_order_acquire);
    struct nbcx_request_s *fifo = NULL; /* oldest first, as started */
    while (r) {
        struct nbcx_request_s *older = r->handed;
        r->handed = fifo;
        fifo = r;
        r = older;
    }
    struct nbcx_request_s **tail = &adopting;
    while (*tail)
        tail = &(*tail)->handed;
    *tail = fifo;
}

/* Begins the starts handed over, in their order, until one's progress
 * lock is taken (the engine lock is held: it may only be tried); the
 * rest wait for the next turn, in order. The mode's hook runs with the
 * progress lock still held: the owner may already advance r in a wait
 * (handed-over starts are never split mode's, whose hook waits). */
void nbcxi_engine_adopt_locked(void)
{
    if (!adopting && !atomic_load_explicit(&handed, memory_order_relaxed))
        return;
    take_handed_locked();
    bool wake = false, ended = false;
    while (adopting) {
        struct nbcx_request_s *r = adopting;
        if (pthread_mutex_trylock(nbcxi_op_lock(r)) != 0)
            break;
        adopting = r->handed; /* before r may be freed */
        r->handed = NULL;
        int err;
        bool done = begin_locked(r, &err);
        if (!done)
            started_locked(r, r->handed_mode, &wake);
        pthread_mutex_unlock(nbcxi_op_lock(r));
        if (done)
            finish(r, err);
        ended |= done;
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

/* Completes r, which this thread's own pass found done (r->ending),
 * its progress lock released: under the engine lock, as every
 * completion (a waiter sleeping on nbcxi_done_cv checks under it). */
static void complete_own(struct nbcx_request_s *r, int err)
{
    pthread_mutex_lock(&nbcxi_engine_lock);
    unlink_request(r);
    finish(r, err);
    if (nbcxi_waiters)
        pthread_cond_broadcast(&nbcxi_done_cv);
    nbcxi_engine_unlock();
}

/* An own pass set work aside for the application (split mode): waiters
 * wake on it as after a sweep (the work may be another thread's). */
static void announce(void)
{
    pthread_mutex_lock(&nbcxi_engine_lock);
    if (nbcxi_waiters)
        pthread_cond_broadcast(&nbcxi_done_cv);
    nbcxi_engine_unlock();
}

/* One pass over reqs' operations, each under its progress lock alone;
 * returns the nodes finished. *busy: a lock was taken by another thread
 * (it advances that operation). */
static long progress_own(int count, nbcx_request reqs[], bool *busy)
{
    long advanced = 0;
    for (int i = 0; i < count; i++) {
        struct nbcx_request_s *r = reqs[i];
        if (nbcxi_request_idle(r) || nbcxi_request_done(r))
            continue;
        int err;
        bool wake = false;
        enum step st = try_step(r, true, false, 0, &wake, &advanced, &err,
                                NULL);
        if (st == STEP_BUSY)
            *busy = true;
        else if (st == STEP_ENDED)
            complete_own(r, err);
        else if (wake)
            announce();
    }
    atomic_fetch_add_explicit(&app_passes, 1, memory_order_relaxed);
    return advanced;
}

/* Own passes that moved nothing before a sweep of every operation. */
enum { SWEEP_AFTER = 64 };

bool nbcxi_progress_app(int count, nbcx_request reqs[], long *advanced)
{
    static _Thread_local unsigned idle; /* own passes that moved nothing */
    bool busy = false;
    *advanced = progress_own(count, reqs, &busy);
    if (*advanced > 0) {
        idle = 0;
        return true;
    }
    if (!busy && ++idle < SWEEP_AFTER)
        return true;
    idle = 0;
    long swept;
    bool made = nbcxi_progress_unless_busy(&swept);
    *advanced += swept;
    return made || !busy;
}

/* Whether any of reqs (not complete) runs on a transport whose peers are
 * threads of this process with cores enough to poll for each other. */
bool nbcxi_any_active_on(int count, nbcx_request reqs[],
                         bool (*on)(const struct nbcx_comm_s *))
{
    for (int i = 0; i < count; i++)
        if (!nbcxi_request_idle(reqs[i]) && !nbcxi_request_done(reqs[i]) &&
            on(reqs[i]->sched->build.comm))
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
