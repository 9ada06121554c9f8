/* mode_thread.c - the thread progress mode: the progress thread
 * (progress_thread.c) drives the active list; a test only looks, and a wait polls
 * briefly, then sleeps on nbcxi_done_cv until the thread announces a
 * completion. The split mode (mode_split.c) shares these functions. */
#include <sched.h>

#include "progress.h"

/* Wakes a sleeping progress thread for a new operation, unless it waits
 * for nothing but other ranks of this process (shared-memory slots, no
 * message in flight) and they have cores enough to poll: their own calls
 * (start, test, wait) move it, and waking a thread for it would cost more
 * than the operation. A wait that finds it unfinished wakes the thread
 * anyway. */
void nbcxi_thread_started_locked(struct nbcx_request_s *r, bool *wake)
{
    struct nbcx_sched_s *s = r->sched;
    bool self_moving = s->exec.nactive == 0 && nbcxi_peers_poll(s->build.comm);
    if (!self_moving && nbcxi_thread_kick_locked(false))
        *wake = true;
}

/* Only the application work set aside (split); but a sweep as well when
 * one of reqs runs between ranks of this process (inproc) that have cores
 * enough: such operations are moved by the ranks' own calls, their starts
 * do not wake the progress thread, and a rank may test rather than
 * wait. */
void nbcxi_thread_poke(int count, nbcx_request reqs[])
{
    long advanced;
    if (nbcxi_any_active_on(count, reqs, nbcxi_peers_poll)) {
        nbcxi_progress_app(count, reqs, &advanced);
        return;
    }
    pthread_mutex_lock(&nbcxi_engine_lock);
    nbcxi_serve_deferred_locked();
    nbcxi_engine_unlock();
}

/* Polls for at most WAIT_POLL_NS, then sleeps until the progress thread
 * announces a completion or work set aside for us. Operations between
 * ranks of this process (inproc) are completed by the other ranks' calls,
 * typically sooner than a sleeping thread would wake up: their waiters
 * poll as in caller mode (yielding the core after 64 polls that moved
 * nothing) for up to WAIT_POLL_LOCAL_NS before they sleep, unless the
 * rank threads crowd the cores (the transport's peers_poll): polling
 * waiters would then take the cores from the ranks that have work to
 * do. */
enum { WAIT_POLL_NS = 20000, WAIT_POLL_LOCAL_NS = 1000000 };

int nbcxi_thread_wait_some(int count, nbcx_request reqs[])
{
    /* Spin, then block: a short operation is over within a few polls,
     * sooner than two thread switches would take. */
    int i;
    bool local = nbcxi_any_active_on(count, reqs, nbcxi_peers_poll);
    int64_t now = nbcxi_now_ns();
    int64_t until = now + (local ? WAIT_POLL_LOCAL_NS : WAIT_POLL_NS);
    for (unsigned k = 1, idle = 0;; k++) {
        long advanced;
        bool busy = !nbcxi_progress_app(count, reqs, &advanced);
        if ((i = nbcxi_find_complete(count, reqs)) != -1)
            return i;
        idle = advanced ? 0 : idle + 1;
        if (busy || (local && idle > 64)) /* as in caller mode */
            sched_yield();
        if (k % 8 == 0 && (now = nbcxi_now_ns()) >= until)
            break; /* (the clock costs more than a poll) */
    }
    pthread_mutex_lock(&nbcxi_engine_lock);
    nbcxi_waiters++;
    if (nbcxi_thread_kick_locked(true)) /* a waiter: poll closer */
        nbcxi_thread_wake();
    while ((i = nbcxi_find_complete(count, reqs)) == -1)
        if (!nbcxi_engine_notify_locked() && !nbcxi_serve_deferred_locked())
            pthread_cond_wait(&nbcxi_done_cv, &nbcxi_engine_lock);
    nbcxi_waiters--;
    nbcxi_engine_unlock();
    return i;
}

const struct nbcxi_progress_mode nbcxi_thread_mode = {
    .name = "thread",
    .id = NBCX_PROGRESS_THREAD,
    .thread = true,
    .started_locked = nbcxi_thread_started_locked,
    .poke = nbcxi_thread_poke,
    .wait_some = nbcxi_thread_wait_some,
    .handoff = true,
};
