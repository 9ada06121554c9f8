/*
 * progress.h - the progress layer's internal interface.
 *
 *   request.c          requests: the public start, test and wait, and
 *                      persistent requests (the top: calls the rest)
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
 *   engine.c           the engine (engine.h): the process-wide list of
 *                      active operations, its lock, progress passes;
 *                      calls the modes and the thread only through
 *                      their tables
 *   placement.c        where the progress thread runs (hwloc)
 *   watchdog.c         timeouts (NBCX_TIMEOUT) and the dump
 *                      (NBCX_DEBUG_DUMP)
 *
 * One mutex (nbcxi_engine_lock) guards the active list and every
 * executor call; completions are announced on nbcxi_done_cv. A start
 * that finds it taken hands its operation to the progress thread
 * instead of waiting (engine.c), and tests and waits only try it.
 */
#ifndef NBCX_PROGRESS_H
#define NBCX_PROGRESS_H

#include <pthread.h>

#include "engine.h"

/* ---- the progress modes (the table: engine.h) ---- */
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
