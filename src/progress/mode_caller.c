/* mode_caller.c - the caller progress mode: no thread; operations advance
 * only inside the application's nbcx calls (start, test, wait,
 * nbcx_progress). A test or a wait advances its own operations, under
 * their communicators' progress locks, and sweeps every active operation
 * when its own stay idle (engine.c: nbcxi_progress_app). */
#include <sched.h>

#include "progress.h"

static void caller_poke(int count, nbcx_request reqs[])
{
    long advanced;
    nbcxi_progress_app(count, reqs, &advanced);
}

/* Polls, yielding the core when polling finds nothing several times in a
 * row (ranks often outnumber cores): at every poll after 64 idle ones
 * between threads of this process, at every 64th between processes.
 * There the peer moves its own data, and a yield at every poll delayed
 * the end of a 64 KiB ibcast by 0.5-1.5 us on 2 Open MPI ranks (nbcx
 * 1.09-1.16x native's time, 1.05-1.07x with a yield every 64th; session
 * 27); MPI libraries yield in their own progress where cores are
 * oversubscribed (Open MPI's mpi_yield_when_idle). Threads of this process
 * need this core to move the data. On a transport that can wake it (UCX),
 * sleeps on its events instead after SLEEP_AFTER idle polls, for
 * SLEEP_MS at first, twice as long after each sleep that moved nothing,
 * up to SLEEP_MAX_MS (the watchdog's timeouts still get their passes).
 * A wait for a late peer then costs about ten wake-ups a second, not a
 * hundred (issue 16: 1 % of a core at 10 ms). */
enum { SLEEP_AFTER = 256, SLEEP_MS = 10, SLEEP_MAX_MS = 100 };

static int caller_wait_some(int count, nbcx_request reqs[])
{
    int i;
    bool events = true; /* until the operations say they cannot wake us */
    int sleep_ms = SLEEP_MS;
    for (int idle = 0; (i = nbcxi_find_complete(count, reqs)) == -1;) {
        long advanced = 0;
        if (!nbcxi_progress_app(count, reqs, &advanced)) {
            sched_yield(); /* the thread that progresses needs a core */
        } else if (advanced) {
            idle = 0;
            sleep_ms = SLEEP_MS;
        } else if (++idle > SLEEP_AFTER && events) {
            int slept = nbcxi_engine_sleep(sleep_ms);
            if (slept > 0) {
                idle = SLEEP_AFTER; /* still idle: the next poll sleeps */
                sleep_ms = sleep_ms * 2 < SLEEP_MAX_MS ? sleep_ms * 2
                                                       : SLEEP_MAX_MS;
            } else if (slept < 0) {
                events = false;
            }
        } else if (idle > 64 &&
                   (idle % 64 == 0 ||
                    nbcxi_any_active_on(count, reqs, nbcxi_peers_in_process))) {
            sched_yield();
        }
    }
    return i;
}

const struct nbcxi_progress_mode nbcxi_caller_mode = {
    .name = "caller",
    .id = NBCX_PROGRESS_CALLER,
    .poke = caller_poke,
    .wait_some = caller_wait_some,
};
