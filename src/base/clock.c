/* clock.c - the monotonic clock every layer times with. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "base.h"

int64_t nbcxi_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
