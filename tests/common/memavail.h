/* memavail.h - the memory a large test may count on: MemAvailable of
 * /proc/meminfo, in bytes (-1 when unknown). The large in-process tests
 * (test_inproc_large.c, test_inproc_large_c.c) skip below their peak. */
#ifndef NBCX_TEST_MEMAVAIL_H
#define NBCX_TEST_MEMAVAIL_H

#include <stdio.h>

static inline long long available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

#endif
