/* clock.c - the monotonic clock every layer times with. */
#define _GNU_SOURCE /* CLOCK_MONOTONIC_COARSE */
#include <time.h>

#include "base.h"

int64_t nbcxi_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The same clock at the kernel tick's resolution (1-4 ms behind at
 * most), read without the time stamp counter: for spans of tens of
 * milliseconds on paths a small operation takes. */
int64_t nbcxi_now_coarse_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
