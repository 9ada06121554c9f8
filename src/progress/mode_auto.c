/* mode_auto.c - the auto progress mode: per operation, whoever is cheapest.
 *
 * A short operation (its sends and its receives each under
 * NBCX_AUTO_THREAD_BYTES bytes, default 64 KiB, or carried by its
 * transport with no progress call (carried(), below), or predicted by the
 * measured bandwidth to take less than LAZY_NS: sched/pace.c) is over
 * soon once its peers arrive: waking the progress thread for it costs
 * more than the operation, and on a busy node the thread takes a core
 * from the application. So it is left to the application's own calls,
 * as in caller mode (the start posts what is ready, a test or wait
 * drives it), and marked lazy: the
 * progress thread looks at lazy work only once per millisecond (progress_thread.c),
 * enough for a program that blocks elsewhere to see it finish, and is
 * not woken for it while it watches. An operation whose duration the
 * measured bandwidth predicts is not looked at until four times that
 * has passed since the application last drove it (look_gap): the look
 * is there for a program blocked elsewhere, not to do the work of one
 * that computes and will wait. A long operation wakes the thread,
 * as in thread mode, so that it moves while the application computes:
 * on a network, where a wake-up costs little beside the transfer, and
 * where the native library gives no overlap either.
 *
 * Except where the thread could only take the application's core to do
 * the application's copying: when the progress thread has no core to
 * spare (placement.c: every core of the node is an application
 * process's) and
 * the transport moves the data through this node's memory (shared
 * memory, threads of one process: the transport says so when it is
 * made, transport.h), or, where it does not know, the bandwidth measured
 * so far is that of memory, not of a network (at least
 * NBCX_AUTO_COPY_BW bytes per second, default 2 GiB/s: loopback TCP),
 * the transfer is CPU work that whichever thread
 * polls must do. Run on the thread, it costs the computation the same
 * time plus the switches, and measured so (issue 15: 8-43 % progress CPU
 * at 1-4 MiB on shared memory, no overlap gained). Such operations are
 * lazy at every size. NBCX_AUTO_COPY_BW=0 turns the rule off.
 *
 * A wait drives progress itself, as in caller mode, instead of sleeping
 * until the thread announces a completion: the waiting thread has
 * nothing else to do, and a completion seen by the thread costs a
 * wake-up. While it drives, the thread stays out of its way (it counts
 * in nbcxi_drive_begin/end). Only ranks that are threads of this process and
 * outnumber the cores (the transport's peers_poll says no) wait as in
 * thread mode: their polling would take the cores from the ranks that
 * have work to do.
 */
#include <stdio.h>
#include <stdlib.h>

#include "progress.h"

static size_t thread_bytes(void)
{
    static _Atomic size_t bytes; /* 0: not read yet */
    size_t b = atomic_load_explicit(&bytes, memory_order_relaxed);
    if (b == 0) {
        b = nbcxi_env_size("NBCX_AUTO_THREAD_BYTES", 65536);
        b = b ? b : 1;
        atomic_store_explicit(&bytes, b, memory_order_relaxed);
    }
    return b;
}

/* Below this predicted duration an operation is left to the caller. */
enum { LAZY_NS = 250000 };

/* NBCX_AUTO_COPY_BW in bytes per nanosecond; 0: the rule is off. */
static double copy_bw(void)
{
    static _Atomic double bw = -1; /* not read yet */
    double b = atomic_load_explicit(&bw, memory_order_relaxed);
    if (b < 0) {
        b = (double)nbcxi_env_size_or_off("NBCX_AUTO_COPY_BW",
                                          (size_t)2 << 30) / 1e9;
        atomic_store_explicit(&bw, b, memory_order_relaxed);
    }
    return b;
}

/* Whether moving s's data is memory copying with no spare core for the
 * progress thread to do it on (above). What the transport says it is
 * decides (transport.h, enum nbcxi_medium): from the first operation, so
 * that a program's first broadcasts do not go to the thread because
 * nothing was measured yet (issue 35: a cold 64 KiB ibcast on 2 shared-
 * memory ranks took 5-7x native and half a core, the same one after an
 * iallreduce 1.0x and none). Only a transport that does not know is
 * judged by the bandwidth measured so far. */
static bool copy_bound(const struct nbcx_sched_s *s)
{
    double limit = copy_bw();
    if (!(limit > 0))
        return false;
    switch (s->build.comm->tp->medium) {
    case NBCXI_MEDIUM_NETWORK:
        return false;
    case NBCXI_MEDIUM_UNKNOWN:
        if (nbcxi_pace_bandwidth() < limit)
            return false;
        break;
    case NBCXI_MEDIUM_MEMORY:
        break;
    }
    return !nbcxi_placement_spare_core();
}

/* Whether s's transport carries it without progress calls: it is within
 * the transport's carries_max (UCX over TCP: 64 KiB, one eager send
 * segment), and its start posted every send it makes (a forwarding rank
 * of a tree waits for its receive: not carried). The kernel then moves
 * the data while the application computes, and its wait only copies what
 * arrived: through the emulated full-duplex 1 Gbit/s switch, the four
 * 64 KiB operations on 2 ranks overlapped 65-76 % with 0-2 % progress
 * CPU left so, against 49-77 % with 9-16 % on the progress thread
 * (docs/results/ucx, session 14). */
static bool carried(const struct nbcx_sched_s *s, size_t bytes)
{
    const nbcxi_transport *tp = s->build.comm->tp;
    return bytes <= nbcxi_transport_carries(tp) && nbcxi_sched_sends_posted(s);
}

/* Whether s is short: few bytes, carried by its transport, or a predicted
 * end within LAZY_NS. The bytes are the larger of those it sends and
 * receives: a broadcast's leaf, or a gather's root, that leaves a long
 * transfer to the application's calls gets no overlap on a network (the
 * library moves the data only when called). */
static bool short_op(const struct nbcx_sched_s *s)
{
    size_t bytes = nbcxi_sched_bytes(s);
    if (bytes < thread_bytes() || carried(s, bytes))
        return true;
    int64_t now = nbcxi_now_ns(), due = nbcxi_pace_due(bytes, now);
    return (due > 0 && due - now < LAZY_NS) || copy_bound(s);
}

/* How long the thread's watch leaves lazy s to the application after its
 * last progress pass (request.c): four times its predicted duration (a
 * prediction errs short: it leaves out late peers), so that
 * an application computing for as long as the operation takes pays
 * nothing for it (issue 15: a watch that moved a copy-bound 16 MiB
 * allreduce took 39 % of a core). 0 where nothing is predicted (under
 * 32 KiB, or nothing measured yet): every watch looks. */
static int64_t look_gap(const struct nbcx_sched_s *s)
{
    int64_t due = nbcxi_pace_due(nbcxi_sched_bytes(s), s->pace.t_begin);
    return due > s->pace.t_begin ? 4 * (due - s->pace.t_begin) : 0;
}

static void auto_started_locked(struct nbcx_request_s *r, bool *wake)
{
    struct nbcx_sched_s *s = r->sched;
    if (nbcxi_peers_crowd(s->build.comm) || !short_op(s)) {
        nbcxi_thread_started_locked(r, wake);
        return;
    }
    r->lazy = true;
    r->look_gap = look_gap(s);
    if (nbcxi_thread_watch_locked() && nbcxi_thread_kick_locked(false))
        *wake = true;
}

static void auto_poke(int count, nbcx_request reqs[])
{
    nbcxi_caller_mode.poke(count, reqs);
}

static int auto_wait_some(int count, nbcx_request reqs[])
{
    /* between threads of this process too many for the cores to poll for
     * each other */
    if (nbcxi_any_active_on(count, reqs, nbcxi_peers_crowd))
        return nbcxi_thread_wait_some(count, reqs);
    nbcxi_drive_begin();
    int i = nbcxi_caller_mode.wait_some(count, reqs);
    nbcxi_drive_end();
    return i;
}

/* The rule for copies as it stands (nbcx_info): on a transport through
 * memory, operations from NBCX_AUTO_THREAD_BYTES up run on the progress
 * thread only when it has a core of its own. */
static void auto_describe(char *buf, size_t len)
{
    if (!(copy_bw() > 0))
        snprintf(buf, len, " copies=thread (NBCX_AUTO_COPY_BW=0)");
    else if (nbcxi_placement_spare_core())
        snprintf(buf, len, " copies=thread (spare core)");
    else
        snprintf(buf, len, " copies=caller (no spare core)");
}

const struct nbcxi_progress_mode nbcxi_auto_mode = {
    .name = "auto",
    .id = NBCX_PROGRESS_AUTO,
    .thread = true,
    .place_lazily = true,
    .started_locked = auto_started_locked,
    .poke = auto_poke,
    .wait_some = auto_wait_some,
    .handoff = true,
    .describe = auto_describe,
};
