/* comm.c - freeing a communicator: its handle dies at once, its cached
 * schedules go (api/cache.c), and the object itself when the last
 * operation in flight on it releases it (base/comm.c). */
#include "cache.h"

int nbcx_comm_free(nbcx_comm *h)
{
    if (!h)
        return NBCX_ERR_ARG;
    struct nbcx_comm_s *c = nbcxi_comm(*h);
    if (!c)
        return NBCX_ERR_COMM;
    *h = NBCX_COMM_NULL;
    c->magic = 0; /* the handle is dead; operations in flight hold refs */
    nbcxi_cache_close(c);
    nbcxi_comm_release(c);
    return NBCX_SUCCESS;
}
