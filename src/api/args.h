/* args.h (internal) - what the argument checks of the API layer share
 * (collectives.c, builder.c). */
#ifndef NBCX_API_ARGS_H
#define NBCX_API_ARGS_H

#include <limits.h>

#include "../progress/request.h"

/* Returns expr's error from the calling function, if it is one. */
#define TRY(expr)                                                             \
    do {                                                                      \
        int err_ = (expr);                                                    \
        if (err_ != NBCX_SUCCESS)                                             \
            return err_;                                                      \
    } while (0)

/* A count (of a call, or of one block): NBCX_ERR_COUNT when negative.
 * Counts above INT_MAX (the large-count calls) are served by every
 * collective: the schedules count in 64 bits and cut messages of more
 * than INT_MAX bytes into chunks (sched/sched.h). */
static inline int nbcxi_check_count(nbcx_count count)
{
    return count < 0 ? NBCX_ERR_COUNT : NBCX_SUCCESS;
}

/* A (buffer, count, type) triple: NBCX_ERR_COUNT (nbcxi_check_count),
 * NBCX_ERR_TYPE (*t is then NULL) or NBCX_ERR_BUFFER (no buffer for
 * count > 0), in that order. IN_PLACE is not a NULL buffer: callers
 * decide where it is allowed. */
static inline int nbcxi_check_buf(const void *buf, nbcx_count count,
                                  nbcx_datatype h, struct nbcx_datatype_s **t)
{
    TRY(nbcxi_check_count(count));
    if (!(*t = nbcxi_type(h)))
        return NBCX_ERR_TYPE;
    if (count > 0 && !buf && !nbcxi_type_absolute(*t))
        return NBCX_ERR_BUFFER;
    return NBCX_SUCCESS;
}

#endif /* NBCX_API_ARGS_H */
