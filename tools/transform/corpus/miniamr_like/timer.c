#include <stddef.h>
#include <sys/time.h>

#include "block.h"

double timer(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + 1.0e-6 * (double)tv.tv_usec;
}
