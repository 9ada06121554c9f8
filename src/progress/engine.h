/*
 * engine.h - the engine's interface (engine.c), the one header through
 * which the progress thread (progress_thread.c), the modes (mode_*.c),
 * modes.c and request.c use it. The engine calls nothing of theirs by
 * name: a mode is a table the engine is handed (struct
 * nbcxi_progress_mode), and the progress thread a table it attaches
 * when it starts (struct nbcxi_engine_thread). So the calls inside
 * progress/ run one way:
 *
 *   request.c -> modes.c -> mode_*.c -> progress_thread.c -> engine.c
 *
 * (each may also use any file further right; tools/layers/check-layers
 * fails on a cycle).
 */
#ifndef NBCX_ENGINE_H
#define NBCX_ENGINE_H

#include <pthread.h>

#include "request.h"

/* ---- the progress modes ---- */
/* A progress mode is a table (one file each). The engine calls it at a
 * start and when a test or a wait finds its requests unfinished. */
struct nbcxi_progress_mode {
    const char *name;          /* as in NBCX_PROGRESS */
    nbcx_progress_mode id;
    bool thread;               /* runs the progress thread */
    /* The first operation does not wait for the thread to be placed
     * (hwloc's topology and the binding: 8-13 ms of CPU): it starts as in
     * caller mode until the thread is live (auto, which decides per
     * operation anyway). Else every start waits until the thread runs.
     * (The MPI face places it when it makes a communicator,
     * nbcxi_progress_prepare: this is for the other transports.) */
    bool place_lazily;
    /* Optional: a schedule about to start (split: marks the nodes the
     * application thread runs). */
    void (*prepare)(struct nbcx_sched_s *s);
    /* Its operations may set work aside for the application thread
     * (split): nbcxi_serve_deferred_locked looks at them alone. */
    bool defers;
    /* Optional: r's schedule has started and is on the active list (lock
     * held); sets *wake to wake the progress thread once the lock is
     * released. */
    void (*started_locked)(struct nbcx_request_s *r, bool *wake);
    /* A test or testall found reqs unfinished: move what this thread
     * should (never blocks). */
    void (*poke)(int count, nbcx_request reqs[]);
    /* A wait found none of reqs complete: waits until one is, returns
     * nbcxi_find_complete's answer. */
    int (*wait_some)(int count, nbcx_request reqs[]);
    /* Optional: the algorithm the mode wants for collective coll when
     * none is forced (NULL: no preference). */
    const char *(*algorithm)(int coll);
    /* A start that finds the engine lock taken may hand its operation
     * to the progress thread rather than wait (not split: its start runs
     * the first tree levels itself). */
    bool handoff;
    /* Optional: appends the mode's standing decisions to nbcx_info's
     * progress line (auto: where long copies run), ' '-prefixed. */
    void (*describe)(char *buf, size_t len);
};
/* ---- the progress thread, as the engine sees it ---- */
/* The progress thread attaches this table when it starts
 * (nbcxi_engine_attach_thread, lock held); the engine kicks and wakes
 * it through it, for a start it adopts or an operation with a
 * completion callback. */
struct nbcxi_engine_thread {
    /* Work arrived, or (urgent) someone waits for it: returns whether to
     * call wake once the lock is released (nbcxi_thread_kick_locked). */
    bool (*kick_locked)(bool urgent);
    void (*wake)(void);
};
NBCX_HIDDEN void
nbcxi_engine_attach_thread(const struct nbcxi_engine_thread *t);

/* A completion callback due (nbcx_request_on_complete): finish()
 * queues it under the lock, whoever releases the lock runs it
 * (nbcxi_engine_unlock), oldest first. It holds copies of fn and arg:
 * the request may be released before it runs. request.c allocates them
 * ahead (cb_notice). */
struct nbcxi_notice {
    nbcx_complete_fn fn;
    void *arg;
    int err;
    struct nbcxi_notice *next;
};

/* ---- engine.c ---- */
/* Starts r (of mode m) in the caller: takes r's progress lock, then the
 * engine lock, begins the schedule (sched_begin) and, unless it
 * finished at once, puts r on the active list and calls m's
 * started_locked with the progress lock released. With hand_off, a
 * start that finds either lock taken hands r over instead
 * (nbcxi_engine_hand_over) and returns false: the caller wakes the
 * thread. Lock not held; *wake: wake the progress thread. */
NBCX_HIDDEN bool nbcxi_engine_start(struct nbcx_request_s *r,
                                    const struct nbcxi_progress_mode *m,
                                    bool hand_off, bool *wake);
/* Hands r's start (of mode m) to the progress thread, without the lock:
 * the thread begins it at its next turn (nbcxi_engine_adopt_locked).
 * The caller wakes the thread. */
NBCX_HIDDEN void nbcxi_engine_hand_over(struct nbcx_request_s *r,
                                        const struct nbcxi_progress_mode *m);
/* An operation with a completion callback has someone waiting for it
 * who makes no calls: the progress thread must drive it, even where a
 * start leaves it to the application's own calls (auto mode's lazy
 * operations; operations between threads of this process that poll for
 * each other). Lock held; *wake as above. */
NBCX_HIDDEN void nbcxi_engine_want_locked(struct nbcx_request_s *r,
                                          bool *wake);
/* The engine lock: the active list, hand-over, notices, waiters (engine.c
 * says what it guards, and the order with the progress locks). */
extern pthread_mutex_t nbcxi_engine_lock;
/* Broadcast (under the lock) when a request completes, or when a
 * schedule sets aside work for its application thread (split mode). */
extern pthread_cond_t nbcxi_done_cv;
/* Threads sleeping in a wait (under the lock). */
extern int nbcxi_waiters;

/* Advances every active operation once, as the application thread or
 * not (app); returns how many nodes finished. Needs the lock. */
NBCX_HIDDEN long nbcxi_progress_all_locked(bool app);
/* Whether any operation is active (or handed over, not yet begun); the
 * earliest predicted completion of their requests (0: none predicted).
 * Need the lock. */
NBCX_HIDDEN bool nbcxi_engine_busy_locked(void);
/* Begins the starts that application threads handed over because the
 * lock was taken (nbcx_start never waits for it where a progress thread
 * runs: request.c). The progress thread calls it at every turn; every
 * progress pass does too. Needs the lock. */
NBCX_HIDDEN void nbcxi_engine_adopt_locked(void);
/* Releases the engine lock, then runs the completion callbacks of the
 * operations that finished while it was held (nbcx_request_on_complete):
 * every release of the lock after a progress pass goes through it. */
NBCX_HIDDEN void nbcxi_engine_unlock(void);
/* Lock held: runs the pending callbacks with the lock released (before a
 * condition wait or a sleep: a callback may start the operation another
 * thread waits for). Returns whether there were any (the lock was
 * released: what it guards may have changed). */
NBCX_HIDDEN bool nbcxi_engine_notify_locked(void);
NBCX_HIDDEN int64_t nbcxi_engine_next_due_locked(void);
/* The latest predicted end of a transfer in flight (0: none predicted):
 * of an active operation as a whole (its bytes from its start, which
 * covers algorithms that send fragments too small to be timed one by
 * one: a ring allreduce) or of one of its requests. Needs the lock. */
NBCX_HIDDEN int64_t nbcxi_engine_transfer_end_locked(void);
/* Whether waiting for the active operations can sleep on their
 * transport's event fd (transport.h: event_fd, arm) instead of polling:
 * when all of them run on transports with the same event fd and none
 * has a poll node, arms it and returns the fd (sleep in poll() on it
 * with the lock released); -2 when events are pending (progress again
 * at once); -1 when they cannot (poll on a timer). Needs the lock. */
NBCX_HIDDEN int nbcxi_engine_arm_locked(void);
/* For an application thread that found nothing to do in a wait: sleeps
 * on the event fd (as above) for ms milliseconds at most and returns 1;
 * returns 0 at once if another thread holds the lock, -1 if the
 * operations cannot be waited for so. Lock not held. The time-out covers
 * an event that another thread consumed. */
NBCX_HIDDEN int nbcxi_engine_sleep(int ms);
/* The progress thread's watch of lazy work (auto mode, progress_thread.c): a
 * progress pass like the thread's, except that a lazy operation is left
 * alone until its look_gap has passed since the application's last
 * progress pass (request.h). Needs the lock. */
NBCX_HIDDEN long nbcxi_engine_look_locked(void);
/* The application's progress passes so far (starts, tests, waits that
 * swept the active list): the watch's sign that the application drives
 * its lazy work itself (progress_thread.c). */
NBCX_HIDDEN unsigned long nbcxi_engine_app_passes_locked(void);
/* Whether an active operation wants the progress thread to poll it now:
 * any that is not lazy (auto mode). Needs the lock. */
NBCX_HIDDEN bool nbcxi_engine_urgent_locked(void);
/* An application thread begins and ends driving progress itself inside
 * a wait (auto mode): the progress thread stays out of its way meanwhile,
 * and is woken when the last driver leaves if it slept for that. */
NBCX_HIDDEN void nbcxi_drive_begin(void);
NBCX_HIDDEN void nbcxi_drive_end(void);
/* For the modes: whether r is complete; whether it counts as complete
 * with nothing to report (NULL, or persistent and inactive); the index
 * of a complete request among reqs (-1: none, -2: all idle). */
NBCX_HIDDEN bool nbcxi_request_done(nbcx_request r);
NBCX_HIDDEN bool nbcxi_request_idle(nbcx_request r);
NBCX_HIDDEN int nbcxi_find_complete(int count, nbcx_request reqs[]);
/* One progress pass as the application thread, unless another thread is
 * making one (it progresses our operations too): waiting threads then do
 * not queue up on the lock, only to find nothing left to do. Returns
 * whether it made the pass; *advanced gets the nodes it finished. */
NBCX_HIDDEN bool nbcxi_progress_unless_busy(long *advanced);
/* A test's or a wait's pass as the application thread: advances reqs'
 * own operations under their communicators' progress locks alone (no
 * engine lock unless one completes), and every SWEEP_AFTER passes that
 * moved nothing sweeps every operation as nbcxi_progress_unless_busy
 * does (a peer may wait for another of our operations). Returns whether
 * it made a pass (false: the locks were taken, yield); *advanced gets the
 * nodes it finished. */
NBCX_HIDDEN bool nbcxi_progress_app(int count, nbcx_request reqs[],
                                    long *advanced);
/* Split mode: runs the application work set aside in every active
 * operation; returns whether there was any. Lock held. */
NBCX_HIDDEN bool nbcxi_serve_deferred_locked(void);
/* Whether any of reqs (not complete) runs on a communicator for which
 * on() holds, e.g. nbcxi_peers_poll. */
NBCX_HIDDEN bool nbcxi_any_active_on(int count, nbcx_request reqs[],
                                     bool (*on)(const struct nbcx_comm_s *));

/* The progress lock that guards r's executor state: its communicator's
 * ("Locks", docs/architecture.md). */
static inline pthread_mutex_t *nbcxi_op_lock(const struct nbcx_request_s *r)
{
    return r->sched->build.comm->plock;
}

/* Whether c's peers are threads of this process. */
static inline bool nbcxi_peers_in_process(const struct nbcx_comm_s *c)
{
    return nbcxi_transport_can(c->tp, NBCXI_CAP_IN_PROCESS);
}

/* Whether c's peers are threads of this process that now have cores
 * enough to poll for each other (the transport says, transport.h). */
static inline bool nbcxi_peers_poll(const struct nbcx_comm_s *c)
{
    return nbcxi_peers_in_process(c) && c->tp->ops->peers_poll &&
           c->tp->ops->peers_poll();
}

/* Whether c's peers are threads of this process too many for the cores
 * to poll for each other. */
static inline bool nbcxi_peers_crowd(const struct nbcx_comm_s *c)
{
    return nbcxi_peers_in_process(c) && !nbcxi_peers_poll(c);
}

#endif /* NBCX_ENGINE_H */
