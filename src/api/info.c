/* info.c - nbcx_info: the version, the progress mode, the algorithm
 * selection, the schedule cache's counts and the transports created by
 * name that run in this process (transport=ucx(tls=...)), the counts of
 * objects alive (live_*), in one line. */
#include <stdio.h>

#include "../progress/request.h"
#include "cache.h"

int nbcx_info(char *buf, size_t len)
{
    if (!buf || len == 0)
        return NBCX_ERR_ARG;
    char progress[192];
    nbcxi_progress_describe(progress, sizeof progress);
    size_t n = (size_t)snprintf(buf, len, "nbcx %d.%d.%d: %s",
                                NBCX_VERSION_MAJOR, NBCX_VERSION_MINOR,
                                NBCX_VERSION_PATCH, progress);
    if (n < len)
        n += (size_t)nbcxi_coll_describe(buf + n, len - n);
    unsigned long hits, misses;
    nbcxi_cache_stats(&hits, &misses);
    if (n < len)
        n += (size_t)snprintf(buf + n, len - n,
                              " cache_hits=%lu cache_misses=%lu", hits,
                              misses);
    /* Objects alive: a loop that frees what it makes holds these flat
     * (the Java binding's leak test compares them round by round). */
    if (n < len)
        n += (size_t)snprintf(
            buf + n, len - n,
            " live_comms=%ld live_ops=%ld live_types=%ld live_requests=%ld"
            " live_schedules=%ld",
            nbcxi_pool_live(&nbcxi_comm_pool), nbcxi_pool_live(&nbcxi_op_pool),
            nbcxi_pool_live(&nbcxi_type_pool),
            nbcxi_pool_live(&nbcxi_request_pool), nbcxi_sched_live());
    /* Backends created by name that run in this process (e.g. "ucx"). */
    for (int b = 0; nbcxi_backends[b] && n < len; b++) {
        char d[256];
        if (!nbcxi_backends[b]->describe)
            continue;
        nbcxi_backends[b]->describe(d, sizeof d);
        if (d[0])
            n += (size_t)snprintf(buf + n, len - n, " transport=%s", d);
    }
    return NBCX_SUCCESS;
}
