/*
 * progress.h - the progress layer's internal interface.
 *
 *   request.c          requests, the process-wide list of active
 *                      operations, start, test and wait
 *   modes.c            which progress mode is in force (NBCX_PROGRESS,
 *                      nbcx_progress_set)
 *   mode_caller.c      the caller mode's table
 *   mode_thread.c      the thread mode's table
 *   mode_auto.c        the auto mode's table (small operations: caller;
 *                      large ones: thread)
 *   mode_split.c       the split mode's table, the split-tree cost model
 *                      and the choice of S
 *   progress_thread.c  the progress thread: sleeps while nothing is
 *                      active, otherwise polls with an adaptive,
 *                      predicted back-off
 *   placement.c        where the progress thread runs (hwloc)
 *   watchdog.c         timeouts (NBCX_TIMEOUT) and the dump
 *                      (NBCX_DEBUG_DUMP)
 *
 * One mutex (nbcxi_engine_lock) guards the active list and every
 * executor call; completions are announced on nbcxi_done_cv. A start
 * that finds it taken hands its operation to the progress thread
 * instead of waiting (request.c), and tests and waits only try it.
 */
#ifndef NBCX_PROGRESS_H
#define NBCX_PROGRESS_H

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
     * (hwloc's topology and the binding: 4-8 ms): it starts as in caller
     * mode until the thread is live (auto, which decides per operation
     * anyway). Else every start waits until the thread runs. */
    bool place_lazily;
    /* Optional: a schedule about to start (split: marks the nodes the
     * application thread runs). */
    void (*prepare)(struct nbcx_sched_s *s);
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
extern NBCX_HIDDEN const struct nbcxi_progress_mode nbcxi_caller_mode,
    nbcxi_thread_mode, nbcxi_split_mode, nbcxi_auto_mode;
/* Whether a start of mode m on transport tp may hand its operation to the
 * progress thread when the engine lock is taken: the mode hands off, and
 * the transport's peers are not threads of this process (an in-process
 * start progresses the peers' operations itself). */
static inline bool nbcxi_mode_hands_off(const struct nbcxi_progress_mode *m,
                                        const nbcxi_transport *tp)
{
    return m->handoff && !nbcxi_transport_can(tp, NBCXI_CAP_IN_PROCESS);
}
/* The mode in force (modes.c). */
NBCX_HIDDEN const struct nbcxi_progress_mode *nbcxi_mode(void);

/* Split mode (mode_split.c), for a schedule about to start: chooses S (model
 * or NBCX_SPLIT_LEVELS), marks the nodes with 1 <= |level| <= S as
 * application nodes and counts them in app_up_left/app_down_left. */
NBCX_HIDDEN void nbcxi_split_mark(struct nbcx_sched_s *s);

/* Thread and split modes share these (mode_thread.c). */
NBCX_HIDDEN void nbcxi_thread_started_locked(struct nbcx_request_s *r,
                                             bool *wake);
NBCX_HIDDEN void nbcxi_thread_poke(int count, nbcx_request reqs[]);
NBCX_HIDDEN int nbcxi_thread_wait_some(int count, nbcx_request reqs[]);

/* ---- request.c ---- */
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
/* Split mode: runs the application work set aside in every active
 * operation; returns whether there was any. Lock held. */
NBCX_HIDDEN bool nbcxi_serve_deferred_locked(void);
/* Whether any of reqs (not complete) runs between peers that are threads
 * of this process with cores enough to poll for each other. */
NBCX_HIDDEN bool nbcxi_any_local(int count, nbcx_request reqs[]);

/* Whether c's peers are threads of this process that now have cores
 * enough to poll for each other (the transport says, transport.h). */
static inline bool nbcxi_peers_poll(const struct nbcx_comm_s *c)
{
    return nbcxi_transport_can(c->tp, NBCXI_CAP_IN_PROCESS) &&
           c->tp->ops->peers_poll && c->tp->ops->peers_poll();
}

/* Whether c's peers are threads of this process too many for the cores
 * to poll for each other. */
static inline bool nbcxi_peers_crowd(const struct nbcx_comm_s *c)
{
    return nbcxi_transport_can(c->tp, NBCXI_CAP_IN_PROCESS) &&
           !nbcxi_peers_poll(c);
}

/* ---- progress_thread.c ---- */
/* Starts the progress thread if it is not running. */
NBCX_HIDDEN int nbcxi_thread_ensure(void);
/* Starts the thread where it is not running, without waiting for it to
 * be placed; nbcxi_thread_live says when it runs. */
NBCX_HIDDEN int nbcxi_thread_launch(void);
/* Tells the thread that work arrived (it matters only if the thread
 * sleeps for lack of work) or, urgent, that a thread waits (it should
 * poll closer). Lock held. Returns whether to call nbcxi_thread_wake()
 * once the lock is released: signalling under the lock would wake the
 * thread only to block it on the lock we hold. */
NBCX_HIDDEN bool nbcxi_thread_kick_locked(bool urgent);
NBCX_HIDDEN void nbcxi_thread_wake(void);
/* Whether the thread runs and adopts handed-over starts at every turn
 * (request.c); lock not needed. */
NBCX_HIDDEN bool nbcxi_thread_live(void);
/* Auto mode: a lazy operation started (lock held). The thread looks at
 * lazy work once per watch period, and keeps doing so for a while after
 * the last lazy start, so that a run of small operations never wakes it;
 * returns whether it must be woken now (it sleeps with no time-out). */
NBCX_HIDDEN bool nbcxi_thread_watch_locked(void);
/* Stops and joins the thread (lock not held); idempotent. */
NBCX_HIDDEN void nbcxi_thread_stop(void);
/* Writes where the thread runs, e.g. "cpus=1 (idle core)", or "" when
 * no thread runs. */
NBCX_HIDDEN void nbcxi_thread_describe(char *buf, size_t len);

/* ---- watchdog.c ---- */
/* Whether a timeout or the dump was ever asked for: until then the
 * engine does not call the watchdog. */
extern atomic_bool nbcxi_watchdog_armed;
/* Reads NBCX_TIMEOUT and NBCX_DEBUG_DUMP (once). */
NBCX_HIDDEN void nbcxi_watchdog_init(void);
/* The timeout of c's operations in ns (0: none); sets it (ns <= 0: off). */
NBCX_HIDDEN int64_t nbcxi_watchdog_timeout_ns(struct nbcx_comm_s *c);
NBCX_HIDDEN void nbcxi_watchdog_set_timeout(struct nbcx_comm_s *c,
                                            int64_t ns);
/* At the start of a progress pass over the active list (armed only):
 * prints a dump that was asked for (SIGUSR1, NBCX_DEBUG_DUMP), and
 * returns the time if the operations are to be judged in this pass, else
 * 0. Lock held. */
NBCX_HIDDEN int64_t nbcxi_watchdog_pass_locked(struct nbcx_request_s *active);
/* The verdict on an operation still running after its progress in such
 * a pass: NBCX_SUCCESS, or the error to abort it with (timeout, or its
 * communicator broken). Lock held. */
NBCX_HIDDEN int nbcxi_watchdog_verdict_locked(struct nbcx_sched_s *s,
                                              int64_t now);

/* ---- placement.c ---- */
/* Where the progress thread runs, with hwloc. A face that knows the other
 * processes of this node (MPI: MPI_Comm_split_type SHARED) tells which
 * cores their application threads are bound to, so "auto" can find an
 * idle core; without that, only this process's own binding is known. */
/* Binds the calling thread (the progress thread) as NBCX_PROGRESS_CPUS
 * says: a core list ("2", "0,2-3"), or "auto"/unset: an idle core (one no
 * process of the node is bound to; the node's processes take them in
 * turn) when there is one, else the application's own cores. Writes a
 * description such as "cpus=1 (idle core)" or "cpus=0 (shared with the
 * application)". Errors (an unknown core, hwloc failing) are reported in
 * the description and leave the thread unbound; never fatal. */
NBCX_HIDDEN void nbcxi_placement_bind_self(char *desc, size_t len);
/* For the split-tree model: cores the node's application processes run
 * on, and cores the progress threads have to themselves (0: they share
 * the application's). Valid after nbcxi_placement_bind_self(). */
NBCX_HIDDEN void nbcxi_placement_cores(int *app_cores, int *progress_cores);
/* Whether the progress thread has a core the application does not need:
 * a core of its own, or, where processes are not bound, more cores on
 * the node than processes. Valid after nbcxi_placement_bind_self(). */
NBCX_HIDDEN bool nbcxi_placement_spare_core(void);


#endif /* NBCX_PROGRESS_H */
