/* CoMD's performanceTimers.c in small: the timers are private to this file. */
#include "timers.h"

#include <stddef.h>
#include <sys/time.h>

static double started[nTimers], total[nTimers];

static double now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + 1e-6 * (double)tv.tv_usec;
}

void startTimer(int which) { started[which] = now(); }

void stopTimer(int which) { total[which] += now() - started[which]; }

double timerTotal(int which) { return total[which]; }
