/* progress_thread.c - the progress thread (thread and split modes).
 *
 * One thread per process serves every communicator and every operation.
 * It never spins flat out:
 *   - it always sleeps in poll() on a wake-up eventfd (written by a
 *     start, a kick or a stop); a write is never lost, even one made
 *     just before the thread goes to sleep;
 *   - nothing active: it sleeps until a start wakes it;
 *   - operations active on a transport that can wake it (UCX: an event
 *     fd, transport.h) and no transfer predicted to be in flight: after
 *     an idle poll it arms the transport and sleeps on that fd too, for
 *     EVENT_WAIT_MS at most (the watchdog's timeouts still get their
 *     passes). Nothing is spent while waiting. While a transfer is
 *     predicted (pace.c), or seen still moving past its prediction (a
 *     wake-up by the fd whose poll finished nothing, or events pending
 *     at an arm) while no application thread waits, it polls on the
 *     timer below instead, as for MPI: a fd that fires at every chunk
 *     of a stream would wake it for each (wait_on_events_locked and
 *     sleep_on_events_locked say which, and why).
 *   - at every turn it adopts the starts handed over to it by
 *     application threads that found the engine lock taken (request.c).
 *   - operations active otherwise: MPI point-to-point cannot wake anyone,
 *     so the thread polls, sleeping in between. After a poll that moved
 *     something it polls again almost at once (the next message of a
 *     pipeline or a protocol handshake is often due); after an idle poll
 *     the pause doubles, up to a ceiling (NBCX_PROGRESS_POLL_MAX
 *     microseconds, default 500; 100 while some thread waits), and never
 *     past the predicted completion of the next request (pace.c), nor
 *     below an eighth of the time left until then (a 64 KiB message on
 *     a 1 Gbit/s link: polls from 60 us, not from 2; its progress CPU
 *     went from 20-26 % to 10-12 %). A start or a new waiter cuts the
 *     pause short.
 *   - while an application thread waits, its core is idle: the first
 *     SPIN_POLLS idle polls only yield the core (sched_yield) instead of
 *     sleeping, so a short operation completes with the latency of a
 *     poll rather than of a timer; then the pauses grow as above. The
 *     spin comes again after progress or a kick, not after a transport
 *     event that finished nothing: UCX's TCP transport signals its fd at
 *     every socket event of a large transfer, and a spin after each made
 *     the thread poll ~25 times more (issue 16).
 *   auto mode: operations the application drives itself (lazy ones,
 *     mode_auto.c) and operations some application thread is driving in a
 *     wait do not make the thread poll: it looks at them once per
 *     WATCH_NS, and keeps watching so for LINGER_NS after the last lazy
 *     start, so that a run of small operations never wakes it, while a
 *     program that blocks elsewhere (say in MPI_Recv) still sees them
 *     finish. (A lazy operation with a predicted duration is looked at
 *     only once four times that has passed without a progress pass of
 *     the application's: mode_auto.c, request.c.) While a waiting thread
 *     drives lazy work and nothing else is active, the thread sleeps
 *     until the last such wait returns (nbcxi_drive_end wakes it), or
 *     DRIVEN_WATCH_NS at most: a wait that lasts costs no progress CPU
 *     (issue 16: a look every 10 ms was half of an idle wait's 197
 *     wake-ups a second).
 * Timer slack is set to 1 us so the kernel honours short pauses.
 *
 * The thread asks the scheduler for a short time slice
 * (NBCX_PROGRESS_SLICE_US, default 100; 0 leaves the kernel's): where it
 * shares a core with a computing application thread, Linux's EEVDF
 * scheduler (6.12 and later honour a fair task's requested slice) lets a
 * task with a short slice preempt the running one when it wakes, so a
 * message that has arrived is answered within a poll instead of at the
 * end of the computation's slice (up to a few ms). The thread runs
 * briefly at each wake-up, so the short slice costs it nothing. Kernels
 * without custom slices ignore the request.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

enum {
    POLL_MIN_NS = 2000,          /* right after progress              */
    POLL_MAX_NS = 500000,        /* idle, nobody waiting              */
    POLL_MAX_WAITING_NS = 100000,/* idle, a thread waits              */
    SPIN_POLLS = 64,             /* idle polls that only yield, while
                                    a thread waits                     */
    WATCH_NS = 1000000,          /* auto mode: a look at lazy work     */
    WATCH_MAX_NS = 16000000,     /* ... backed off to, while the
                                    application drives it itself      */
    DRIVEN_WATCH_NS = 100000000, /* the same while a wait drives it:
                                    the wait's end wakes it sooner     */
    EVENT_WAIT_MS = 100,         /* longest sleep on transport events  */
    EVENT_GRACE_NS = 2000000,    /* the timer still, this long after a
                                    predicted completion               */
};
static const int64_t LINGER_NS = 100000000; /* watching after the last
                                               lazy start (100 ms)     */

static pthread_t thread;
static bool running;             /* under the engine lock */
static bool stopping;            /* under the engine lock */
static bool kicked;              /* under the engine lock */
static bool ready;               /* placed, under the engine lock */
static bool idle_sleep;          /* waiting for work, under the lock */
static bool watching;            /* in a WATCH_NS sleep, under the lock */
static int64_t lazy_seen;        /* last lazy start (coarse ns), locked */
static atomic_int drivers;       /* application threads driving a wait */
static atomic_bool driven_sleep; /* asleep until the last driver leaves */
static atomic_bool live;         /* the thread runs and will adopt
                                    handed-over starts                 */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static char where[96];           /* placement, under the engine lock */
static int64_t poll_max_ns = POLL_MAX_NS;
static bool events_always;      /* NBCX_PROGRESS_EVENTS=always */
static bool event_woke;          /* the last sleep ended on the
                                    transport's fd, under the lock    */
static int64_t stream_until;     /* a transfer seen moving: the timer
                                    until then, under the lock        */
/* The thread sleeps in poll() on this eventfd, and is woken by writing
 * to it. Unlike a condition variable signalled without the lock, a
 * write made before the thread goes to sleep is not lost: that is what
 * lets a start hand its operation over without taking the lock
 * (request.c). */
static int wake_fd = -1;

static void init_once_fn(void)
{
    const char *v = nbcxi_getenv("NBCX_PROGRESS_POLL_MAX");
    long us = v ? atol(v) : 0;
    if (us > 0)
        poll_max_ns = (int64_t)us * 1000;
    v = nbcxi_getenv("NBCX_PROGRESS_EVENTS");
    events_always = v && strcmp(v, "always") == 0;
    wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

/* Sleeps until t (0: until woken) or a wake-up, with the lock released;
 * on the transport's event fd too where fd >= 0. Returns whether that fd
 * signalled. */
static bool sleep_locked(int64_t t, int fd)
{
    int64_t tr0 = nbcxi_trace_now(); /* (0: not tracing) */
    nbcxi_engine_unlock(); /* (callbacks first: they may start work) */
    struct pollfd p[2] = { { .fd = wake_fd, .events = POLLIN },
                           { .fd = fd, .events = POLLIN } };
    struct timespec ts, *timeout = NULL;
    if (t) {
        int64_t d = NBCXI_MAX(t - nbcxi_now_ns(), 0);
        ts = (struct timespec){ .tv_sec = (time_t)(d / 1000000000),
                                .tv_nsec = (long)(d % 1000000000) };
        timeout = &ts;
    }
    uint64_t n;
    bool any = ppoll(p, fd >= 0 ? 2 : 1, timeout, NULL) > 0;
    if (any && (p[0].revents & POLLIN))
        (void)!read(wake_fd, &n, sizeof n);
    pthread_mutex_lock(&nbcxi_engine_lock);
    bool event = any && fd >= 0 && (p[1].revents & POLLIN);
    NBCXI_TRACE(nbcxi_trace_sleep(tr0, event));
    return event;
}

static void sleep_until_locked(int64_t t)
{
    sleep_locked(t, -1);
}

/* The pause after an idle poll. */
static int64_t next_pause(int64_t pause, int64_t now)
{
    int64_t ceiling = nbcxi_waiters ? NBCXI_MIN(poll_max_ns,
                                                POLL_MAX_WAITING_NS)
                                    : poll_max_ns;
    pause = NBCXI_MIN(pause * 2, ceiling);
    int64_t due = nbcxi_engine_next_due_locked();
    if (due > now) {
        pause = NBCXI_MIN(pause, due - now);
        /* Far from the predicted end, quick polls only cost CPU: an
         * eighth of the time left, at least. */
        pause = NBCXI_MAX(pause, NBCXI_MIN((due - now) / 8, ceiling));
    }
    return NBCXI_MAX(pause, POLL_MIN_NS);
}

/* Whether the thread, after an idle poll, waits on the transport's
 * events or on the paced timer (next_pause). The one place that
 * chooses (issue 16). Events cost nothing while nothing moves (a late
 * peer, a long wait: test_ucx_idle), but a transport that moves a large
 * message only when polled signals its fd at every chunk (UCX on TCP: a
 * socket event per segment), and a thread that wakes for each shares a
 * core with the computation at every one of them: 10-24 % progress CPU
 * on the emulated 1 Gbit/s network, against the MPI transport's 3-13 %
 * on the timer. So while a transfer is predicted to be in flight (the
 * predicted end of an active operation or of one of its requests,
 * sched/pace.c, still ahead, or passed by less than EVENT_GRACE_NS: the
 * prediction, from the best bandwidth seen, errs early) the thread
 * polls on the timer, exactly as for a transport without events; once
 * nothing is due any more (nothing predicted, or the prediction long
 * passed: the peer is late) it arms and sleeps on the fd.
 * NBCX_PROGRESS_EVENTS=always keeps the older rule (the fd after every
 * idle poll), for comparison. */
static bool wait_on_events_locked(int64_t now)
{
    if (events_always)
        return true;
    if (now < stream_until)
        return false;
    int64_t end = nbcxi_engine_transfer_end_locked();
    return end == 0 || now - end > EVENT_GRACE_NS;
}

/* After an idle poll: sleeps until a transport event, a wake-up or
 * EVENT_WAIT_MS, if every active operation's transport can wake us
 * (nbcxi_engine_arm_locked) and no transfer is in flight
 * (wait_on_events_locked). Returns false, having done nothing, when the
 * thread must poll on the timer instead. Lock held (released while
 * asleep).
 *
 * A transfer is in flight also when it is seen moving past its
 * prediction: this poll came right after a wake-up by the transport's
 * fd and finished nothing (a chunk of a stream), or the transport,
 * asked to arm, has events pending. The prediction is short where the
 * two directions of an exchange share one link (an alltoall or
 * allreduce on 2 ranks over one emulated link takes twice what the
 * bandwidth of one direction predicts), and the thread then woke at
 * every chunk for the second half: ialltoall 4 MiB took 9-11 % progress
 * CPU against the MPI transport's 3-4 %, and overlapped 59 % against
 * 76 % (docs/results/ucx, session 11). So it then polls on the timer
 * for EVENT_GRACE_NS more (stream_until), renewed while the stream
 * moves: 4 % and 75 %. Not while an application thread waits: the wait leaves
 * its core idle, and a wake-up per event costs less than the timer's
 * polls at their waiting ceiling (unit.events.spurious_events). */
static bool sleep_on_events_locked(void)
{
    int64_t now = nbcxi_now_ns();
    if (event_woke && !nbcxi_waiters) /* (the poll finished nothing) */
        stream_until = now + EVENT_GRACE_NS;
    event_woke = false;
    if (!wait_on_events_locked(now))
        return false;
    int fd = nbcxi_engine_arm_locked();
    if (fd == -2 && !nbcxi_waiters) {
        stream_until = now + EVENT_GRACE_NS;
        return false;
    }
    if (fd == -2)
        return true; /* events pending: poll again now */
    if (fd < 0)
        return false;
    idle_sleep = true; /* a start or a kick must wake us */
    event_woke = sleep_locked(now + (int64_t)EVENT_WAIT_MS * 1000000, fd);
    idle_sleep = false;
    return true;
}

/* sched_setattr(2)'s argument (glibc has no wrapper): policy
 * SCHED_OTHER, sched_runtime = the requested slice. */
struct slice_attr {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
};

/* Requests a short slice for the calling thread (above); appends what was
 * done to desc. */
static void request_slice(char *desc, size_t len)
{
    size_t us = nbcxi_env_size_or_off("NBCX_PROGRESS_SLICE_US", 100);
    if (us == 0)
        return;
    struct slice_attr a = { .size = sizeof a, .policy = 0 /* OTHER */,
                            .runtime = (uint64_t)us * 1000 };
    struct slice_attr got = { 0 };
    size_t n = strlen(desc);
    if (syscall(SYS_sched_setattr, 0, &a, 0) != 0 ||
        syscall(SYS_sched_getattr, 0, &got, sizeof got, 0) != 0 ||
        got.runtime != a.runtime)
        return;
    /* "cpus=0 (why)" becomes "cpus=0 (why; slice 100 us)" */
    bool paren = n > 0 && desc[n - 1] == ')';
    if (paren)
        n--;
    if (n < len)
        snprintf(desc + n, len - n, "%sslice %zu us%s", paren ? "; " : " (",
                 us, ")");
}

static void *main_loop(void *arg)
{
    (void)arg;
    /* Named, for top -H, perf and gdb (and the tests: mpi.test_prepare) */
    prctl(PR_SET_NAME, "nbcx-progress", 0, 0, 0);
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    char desc[sizeof where];
    nbcxi_placement_bind_self(desc, sizeof desc);
    request_slice(desc, sizeof desc);
    NBCXI_TRACE(nbcxi_trace_progress_thread(!nbcxi_placement_spare_core()));

    pthread_mutex_lock(&nbcxi_engine_lock);
    memcpy(where, desc, sizeof where);
    ready = true;
    atomic_store(&live, true);
    pthread_cond_broadcast(&nbcxi_done_cv); /* nbcxi_thread_ensure */
    int64_t pause = POLL_MIN_NS;
    int idle = 0;
    /* The watch's period, and the application's passes at its last look:
     * while the application makes progress passes between two looks it
     * drives its lazy work itself (a program that waits for its own
     * collectives), and each wake-up of the watch would only take a core
     * from it where there is none to spare (PETSc's pipelined solvers:
     * 11 % slower than caller mode with a look every millisecond,
     * docs/results/petsc); so the period doubles, up to WATCH_MAX_NS,
     * and the look is skipped. A period without a pass (a program blocked
     * elsewhere, in MPI_Recv say) brings it back to WATCH_NS and looks. */
    int64_t watch_ns = WATCH_NS;
    unsigned long passes_seen = 0;
    while (!stopping) {
        nbcxi_engine_adopt_locked(); /* starts handed over (request.c) */
        bool busy = nbcxi_engine_busy_locked();
        bool driven = atomic_load_explicit(&drivers,
                                           memory_order_relaxed) > 0;
        if ((busy && (driven || !nbcxi_engine_urgent_locked())) ||
            (!busy && lazy_seen &&
             nbcxi_now_coarse_ns() - lazy_seen < LINGER_NS)) {
            /* Auto mode: only work the application drives itself (and
             * nothing to do while a waiting thread drives it). */
            unsigned long passes = nbcxi_engine_app_passes_locked();
            bool app_drove = passes != passes_seen;
            passes_seen = passes;
            if (app_drove) {
                watch_ns = NBCXI_MIN(2 * watch_ns, (int64_t)WATCH_MAX_NS);
            } else {
                watch_ns = WATCH_NS;
                if (busy && !driven)
                    nbcxi_engine_look_locked();
            }
            /* Lazy work that a waiting thread drives needs no look at
             * all while it does: a rare one, only for what may be left
             * when the wait returns. */
            bool all_driven = busy && driven &&
                              !nbcxi_engine_urgent_locked();
            watching = idle_sleep = true;
            if (!all_driven) {
                sleep_until_locked(nbcxi_now_ns() + watch_ns);
            } else {
                /* Told, or seen, when the last driver leaves (Dekker:
                 * both sides store, then load, sequentially consistent). */
                atomic_store(&driven_sleep, true);
                if (atomic_load(&drivers) > 0)
                    sleep_until_locked(nbcxi_now_ns() + DRIVEN_WATCH_NS);
                atomic_store(&driven_sleep, false);
            }
            watching = idle_sleep = false;
            pause = POLL_MIN_NS;
            idle = 0;
            continue;
        }
        if (!busy) {
            idle_sleep = true;
            sleep_until_locked(0);
            idle_sleep = false;
            pause = POLL_MIN_NS;
            idle = 0;
            continue;
        }
        kicked = false;
        int64_t tr0 = nbcxi_trace_now();
        long advanced = nbcxi_progress_all_locked(false);
        NBCXI_TRACE(nbcxi_trace_pass(tr0, advanced));
        nbcxi_engine_notify_locked(); /* completion callbacks, promptly */
        if (advanced) {
            pause = POLL_MIN_NS;
            idle = 0;
            event_woke = false;
        } else if (nbcxi_waiters && ++idle <= SPIN_POLLS) {
            nbcxi_engine_unlock();
            sched_yield();
            pthread_mutex_lock(&nbcxi_engine_lock);
            continue;
        }
        if (!advanced && sleep_on_events_locked()) {
            /* Woken: the next poll is now. By an event that finishes
             * nothing (on TCP, a chunk of a large transfer) no new spin
             * is earned, nor a new pause: the timer that may take over
             * (stream_until) goes on at the pace it had reached, instead
             * of backing off from POLL_MIN_NS again after every chunk.
             * Only a start or a new waiter (a kick), or progress, earns
             * them. */
            if (kicked) {
                pause = POLL_MIN_NS;
                idle = 0;
            }
            continue;
        }
        int64_t now = nbcxi_now_ns();
        if (!advanced)
            pause = next_pause(pause, now);
        sleep_until_locked(now + pause);
        if (kicked) {
            pause = POLL_MIN_NS;
            idle = 0;
        }
    }
    nbcxi_engine_adopt_locked(); /* nothing left behind */
    atomic_store(&live, false);
    nbcxi_engine_unlock();
    return NULL;
}

/* At exit, a thread launched without waiting (place_lazily) must have
 * finished placing itself: hwloc's topology load, which may load plugins
 * whose libraries (libX11, by hwloc's gl component) the process's exit
 * then unloads under it (ThreadSanitizer saw XInitThreads in the thread
 * race XFreeThreads at exit in a program that ended right after its
 * first operation). Exit handlers run before the libraries' destructors. */
static void placed_before_exit(void)
{
    pthread_mutex_lock(&nbcxi_engine_lock);
    while (running && !ready)
        pthread_cond_wait(&nbcxi_done_cv, &nbcxi_engine_lock);
    pthread_mutex_unlock(&nbcxi_engine_lock);
}

/* The thread as the engine sees it (engine.h): it kicks and wakes the
 * thread through this table, never by name. */
static const struct nbcxi_engine_thread engine_view = {
    .kick_locked = nbcxi_thread_kick_locked,
    .wake = nbcxi_thread_wake,
};

/* Starts the thread unless it runs; with wait, until it is placed. */
static int start_thread(bool wait)
{
    if (atomic_load_explicit(&live, memory_order_acquire))
        return NBCX_SUCCESS; /* (every start asks: no lock for that) */
    pthread_once(&init_once, init_once_fn);
    if (wake_fd < 0)
        return NBCX_ERR_NOMEM; /* no eventfd: no thread (caller mode) */
    pthread_mutex_lock(&nbcxi_engine_lock);
    nbcxi_engine_attach_thread(&engine_view); /* (the same every time) */
    int err = NBCX_SUCCESS;
    if (!running) {
        stopping = false;
        ready = false;
        if (pthread_create(&thread, NULL, main_loop, NULL) == 0)
            running = true;
        else
            err = NBCX_ERR_NOMEM;
        static bool exit_hooked; /* (under the engine lock) */
        if (running && !wait && !exit_hooked)
            exit_hooked = atexit(placed_before_exit) == 0;
    }
    /* Placed before any work: the binding is known (nbcx_info) and the
     * first operation does not race the thread's own set-up. */
    while (wait && running && !ready)
        pthread_cond_wait(&nbcxi_done_cv, &nbcxi_engine_lock);
    pthread_mutex_unlock(&nbcxi_engine_lock);
    return err;
}

int nbcxi_thread_ensure(void)
{
    return start_thread(true);
}

int nbcxi_thread_launch(void)
{
    return start_thread(false);
}

bool nbcxi_thread_kick_locked(bool urgent)
{
    if (!running || (!urgent && !idle_sleep))
        return false;
    kicked = true;
    return true;
}

bool nbcxi_thread_watch_locked(void)
{
    lazy_seen = nbcxi_now_coarse_ns(); /* (every lazy start) */
    /* Polling, or in a watch sleep: it will look. Asleep for lack of
     * work: it must be woken. */
    return running && idle_sleep && !watching;
}

void nbcxi_drive_begin(void)
{
    atomic_fetch_add(&drivers, 1);
}

void nbcxi_drive_end(void)
{
    if (atomic_fetch_sub(&drivers, 1) == 1 && atomic_load(&driven_sleep))
        nbcxi_thread_wake();
}

void nbcxi_thread_wake(void)
{
    uint64_t one = 1;
    if (wake_fd >= 0)
        (void)!write(wake_fd, &one, sizeof one);
}

bool nbcxi_thread_live(void)
{
    return atomic_load_explicit(&live, memory_order_acquire);
}

void nbcxi_thread_stop(void)
{
    pthread_mutex_lock(&nbcxi_engine_lock);
    bool join = running;
    if (running) {
        stopping = true;
        running = false;
        atomic_store(&live, false); /* starts no longer hand over */
    }
    pthread_mutex_unlock(&nbcxi_engine_lock);
    if (join)
        nbcxi_thread_wake();
    if (join)
        pthread_join(thread, NULL);
}

void nbcxi_thread_describe(char *buf, size_t len)
{
    pthread_mutex_lock(&nbcxi_engine_lock);
    snprintf(buf, len, "%s", running ? where : "");
    pthread_mutex_unlock(&nbcxi_engine_lock);
}
