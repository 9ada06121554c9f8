/* pace.c - how long the progress thread may sleep: bandwidth measured at
 * run time and the predicted completion of a request.
 *
 * A sample is an operation that receives at least NBCXI_PACE_MIN_BYTES
 * (sched.h): the bytes it receives and the time from its start to its
 * completion. The executor does not
 * see a completion happen, only a progress pass that finds the operation
 * done; it lies after the last pass that found it pending. A sample is
 * kept only when that window is at most a quarter of the time since the
 * start, and is then timed at the window's middle (it errs by at most an
 * eighth):
 *   - one found done at the first pass, in its start, is dropped: its
 *     sends were buffered and its data had arrived before it began, so
 *     it moved at memory speed whatever the network (on the 0.125 GB/s
 *     emulated link such requests read up to 50 GB/s, docs/results/ucx);
 *   - one found done long after, by an application that computed
 *     meanwhile, is dropped: the time was the application's.
 * What is sent does not count: a send completes once the transport or
 * the kernel has buffered it, which says nothing of the network (the
 * root of a 1 MiB broadcast read 4-5 GB/s on the 0.125 GB/s link, whose
 * other rank received in 8 ms); nor do single requests: a receive posted
 * at the start of a pipelined operation waits for the fragments before
 * its own (on shared memory, 64 KiB fragment receives read 0.05-1.2 GB/s
 * where their 1 MiB operations read 4 GB/s).
 *
 * The estimate is the throughput of the last WINDOW samples kept, their
 * bytes over their time: a large operation weighs in proportion to its
 * bytes, a small one (whose time is mostly latency and the ranks'
 * arrival) little, and one that read high because a peer had sent
 * before it began adds no more than its bytes. A network that became
 * slower or faster is learnt within WINDOW operations.
 *
 * A request of b bytes posted at t0 is predicted to complete at
 * t0 + b / bandwidth; small requests (latency-bound) and a process that
 * has not measured anything yet get no prediction. The thread never
 * sleeps past the earliest predicted completion (thread.c).
 *
 * All of this runs under the engine lock (the executor's callers hold it).
 */
#include "sched.h"

enum { WINDOW = 16 };

static struct {
    double bytes, ns;
} samples[WINDOW]; /* the last ones kept, a ring */
static int nsamples, next;
static double bandwidth; /* bytes per nanosecond; 0: not measured yet */

void nbcxi_pace_sample(size_t bytes, int64_t t0, int64_t pending,
                       int64_t now)
{
    if (!nbcxi_pace_timed(bytes) || pending <= t0 || now <= pending)
        return;
    if (4 * (now - pending) > now - t0)
        return; /* completed somewhere in too wide a window */
    samples[next].bytes = (double)bytes;
    samples[next].ns = (double)(now - t0) - (double)(now - pending) / 2;
    next = (next + 1) % WINDOW;
    nsamples += nsamples < WINDOW;
    double b = 0, ns = 0;
    for (int i = 0; i < nsamples; i++) {
        b += samples[i].bytes;
        ns += samples[i].ns;
    }
    bandwidth = b / ns;
}

void nbcxi_pace_reset(void)
{
    nsamples = next = 0;
    bandwidth = 0;
}

int64_t nbcxi_pace_due(size_t bytes, int64_t t0)
{
    if (!nbcxi_pace_timed(bytes) || !(bandwidth > 0))
        return 0;
    return t0 + (int64_t)((double)bytes / bandwidth);
}

double nbcxi_pace_bandwidth(void)
{
    return bandwidth;
}
