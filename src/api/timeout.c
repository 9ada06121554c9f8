/* timeout.c - nbcx_comm_set_timeout / nbcx_comm_get_timeout (the
 * watchdog itself is progress/watchdog.c). */
#include "../progress/progress.h"

int nbcx_comm_set_timeout(nbcx_comm comm, double seconds)
{
    struct nbcx_comm_s *c = nbcxi_comm(comm);
    if (!c)
        return NBCX_ERR_COMM;
    if (!(seconds >= 0) || seconds > 1e9) /* NaN, negative, absurd */
        return NBCX_ERR_ARG;
    int64_t ns = (int64_t)(seconds * 1e9);
    nbcxi_watchdog_set_timeout(c, seconds > 0 && ns == 0 ? 1 : ns);
    return NBCX_SUCCESS;
}

int nbcx_comm_get_timeout(nbcx_comm comm, double *seconds)
{
    struct nbcx_comm_s *c = nbcxi_comm(comm);
    if (!c)
        return NBCX_ERR_COMM;
    if (!seconds)
        return NBCX_ERR_ARG;
    *seconds = (double)nbcxi_watchdog_timeout_ns(c) / 1e9;
    return NBCX_SUCCESS;
}
