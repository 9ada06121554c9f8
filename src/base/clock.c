/* clock.c - the monotonic clock every layer times with. */
#define _GNU_SOURCE /* CLOCK_MONOTONIC_COARSE */
#include <time.h>

#include "base.h"

static int64_t now_of(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t nbcxi_now_ns(void)
{
    return now_of(CLOCK_MONOTONIC);
}

/* The same clock at the kernel tick's resolution (1-4 ms behind at
 * most), read without the time stamp counter: for spans of tens of
 * milliseconds on paths a small operation takes. */
int64_t nbcxi_now_coarse_ns(void)
{
    return now_of(CLOCK_MONOTONIC_COARSE);
}
