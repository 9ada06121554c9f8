/* pace.c - how long the progress thread may sleep: bandwidth measured at
 * run time and the predicted completion of a request.
 *
 * Every completed request of at least NBCXI_PACE_MIN_BYTES (sched.h)
 * gives a sample of the bandwidth: its bytes over the time from posting to the poll that
 * saw it complete; so does every completed operation (the bytes it sent,
 * from its start), whose requests may all be smaller fragments. That time includes a late peer and the polling delay,
 * so samples err low; the estimate is therefore a decaying maximum: the
 * largest recent sample, shrinking by 1/64 per sample so that a network
 * that became slower is learnt within a few hundred messages.
 *
 * A request of b bytes posted at t0 is predicted to complete at
 * t0 + b / bandwidth; small requests (latency-bound) and a process that
 * has not measured anything yet get no prediction. The thread never
 * sleeps past the earliest predicted completion (thread.c).
 *
 * All of this runs under the engine lock (the executor's callers hold it).
 */
#include "sched.h"

static double bandwidth; /* bytes per nanosecond; 0: not measured yet */

void nbcxi_pace_sample(size_t bytes, int64_t t0, int64_t now)
{
    if (!nbcxi_pace_timed(bytes) || now <= t0)
        return;
    double b = (double)bytes / (double)(now - t0);
    double decayed = bandwidth * (1.0 - 1.0 / 64);
    bandwidth = b > decayed ? b : decayed;
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
