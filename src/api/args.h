/* args.h (internal) - what the argument checks of the API layer share
 * (collectives.c, builder.c). */
#ifndef NBCX_API_ARGS_H
#define NBCX_API_ARGS_H

#include "../progress/request.h"

/* Returns expr's error from the calling function, if it is one. */
#define TRY(expr)                                                             \
    do {                                                                      \
        int err_ = (expr);                                                    \
        if (err_ != NBCX_SUCCESS)                                             \
            return err_;                                                      \
    } while (0)

/* A (buffer, count, type) triple: NBCX_ERR_COUNT, NBCX_ERR_TYPE (*t is
 * then NULL) or NBCX_ERR_BUFFER (no buffer for count > 0), in that order.
 * IN_PLACE is not a NULL buffer: callers decide where it is allowed. */
static inline int nbcxi_check_buf(const void *buf, int count, nbcx_datatype h,
                                  struct nbcx_datatype_s **t)
{
    if (count < 0)
        return NBCX_ERR_COUNT;
    if (!(*t = nbcxi_type(h)))
        return NBCX_ERR_TYPE;
    if (count > 0 && !buf && !nbcxi_type_absolute(*t))
        return NBCX_ERR_BUFFER;
    return NBCX_SUCCESS;
}

#endif /* NBCX_API_ARGS_H */
