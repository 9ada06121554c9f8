/* pace.c - how long the progress thread may sleep: bandwidth measured at
 * run time and the predicted completion of a request.
 *
 * A sample is an operation that receives at least NBCXI_PACE_MIN_BYTES
 * (sched.h): the bytes it receives and the time from its start to its
 * completion. The executor does not see a completion happen, only a
 * progress pass that finds the operation done; the completion lies
 * after the last pass that found it pending. A sample is
 * kept only when that window is at most a quarter of the time since the
 * start (it then errs by at most an eighth), or at most SLACK_NS (an
 * operation of a few microseconds on shared memory, whose passes are as
 * far apart as its length: its bandwidth is still memory's), and is
 * timed at the window's middle:
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
 * The estimate is the median of the last WINDOW samples kept: one that
 * read high because a peer had sent before it began, or low because it
 * made the connections (a transport's first operation with a peer: 1.1-
 * 1.3 ms for 64 KiB over UCX's shared memory, whose next ones took
 * 6-40 us), does not move it. A network that became slower or faster is
 * learnt within WINDOW / 2 operations.
 *
 * A request of b bytes posted at t0 is predicted to complete at
 * t0 + b / bandwidth; small requests (latency-bound) and a process that
 * has not measured anything yet get no prediction. The thread never
 * sleeps past the earliest predicted completion (progress_thread.c).
 *
 * Operations on different communicators complete at once in different
 * threads (progress/engine.c: one progress lock per communicator): the
 * samples are under a lock of their own, and the estimate is an atomic
 * that the progress thread and auto mode read without it.
 */
#include <pthread.h>

#include "sched.h"

enum { WINDOW = 15, SLACK_NS = 50000 };

static double samples[WINDOW]; /* bytes per ns, the last ones kept, a ring */
static int nsamples, next;
static pthread_mutex_t samples_lock = PTHREAD_MUTEX_INITIALIZER;
/* bytes per nanosecond; 0: not measured yet */
static _Atomic double bandwidth;

static double bandwidth_now(void)
{
    return atomic_load_explicit(&bandwidth, memory_order_relaxed);
}

static double median(void)
{
    double v[WINDOW];
    for (int i = 0; i < nsamples; i++) { /* insertion sort */
        int j = i;
        for (; j > 0 && v[j - 1] > samples[i]; j--)
            v[j] = v[j - 1];
        v[j] = samples[i];
    }
    return nsamples % 2 ? v[nsamples / 2]
                        : (v[nsamples / 2 - 1] + v[nsamples / 2]) / 2;
}

void nbcxi_pace_sample(size_t bytes, int64_t t0, int64_t pending,
                       int64_t now)
{
    if (!nbcxi_pace_timed(bytes) || pending <= t0 || now <= pending)
        return;
    int64_t window = now - pending;
    if (4 * window > now - t0 && window > SLACK_NS)
        return; /* completed somewhere in too wide a window */
    pthread_mutex_lock(&samples_lock);
    samples[next] = (double)bytes / ((double)(now - t0) - (double)window / 2);
    next = (next + 1) % WINDOW;
    nsamples += nsamples < WINDOW;
    atomic_store_explicit(&bandwidth, median(), memory_order_relaxed);
    pthread_mutex_unlock(&samples_lock);
}

void nbcxi_pace_reset(void)
{
    pthread_mutex_lock(&samples_lock);
    nsamples = next = 0;
    atomic_store_explicit(&bandwidth, 0, memory_order_relaxed);
    pthread_mutex_unlock(&samples_lock);
}

int64_t nbcxi_pace_due(size_t bytes, int64_t t0)
{
    double bw = bandwidth_now();
    if (!nbcxi_pace_timed(bytes) || !(bw > 0))
        return 0;
    return t0 + (int64_t)((double)bytes / bw);
}

double nbcxi_pace_bandwidth(void)
{
    return bandwidth_now();
}
