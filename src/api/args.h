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

/* A count (of a call, or of one block): NBCX_ERR_COUNT when negative, or
 * above INT_MAX, which the large-count calls can pass but nbcx's builders
 * do not take (their element counts and offsets are int): refused with
 * a message saying so rather than truncated. */
static inline int nbcxi_check_count(nbcx_count count)
{
    if (count < 0)
        return NBCX_ERR_COUNT;
    if (count > INT_MAX)
        return nbcxi_error(NBCX_ERR_COUNT,
                           "count %lld is above INT_MAX (%d), the most "
                           "elements nbcx's algorithms take in one count "
                           "or block; describe the data with a larger "
                           "datatype (a contiguous type of k elements)",
                           (long long)count, INT_MAX);
    return NBCX_SUCCESS;
}

/* A (buffer, count, type) triple: NBCX_ERR_COUNT (nbcxi_check_count;
 * any_count: only a negative count, for the element-wise collectives,
 * built in pieces above INT_MAX), NBCX_ERR_TYPE (*t is then NULL) or
 * NBCX_ERR_BUFFER (no buffer for count > 0), in that order. IN_PLACE is
 * not a NULL buffer: callers decide where it is allowed. */
static inline int nbcxi_check_buf_of(const void *buf, nbcx_count count,
                                     nbcx_datatype h,
                                     struct nbcx_datatype_s **t,
                                     bool any_count)
{
    if (count < 0)
        return NBCX_ERR_COUNT;
    if (!any_count)
        TRY(nbcxi_check_count(count));
    if (!(*t = nbcxi_type(h)))
        return NBCX_ERR_TYPE;
    if (count > 0 && !buf && !nbcxi_type_absolute(*t))
        return NBCX_ERR_BUFFER;
    return NBCX_SUCCESS;
}

static inline int nbcxi_check_buf(const void *buf, nbcx_count count,
                                  nbcx_datatype h, struct nbcx_datatype_s **t)
{
    return nbcxi_check_buf_of(buf, count, h, t, false);
}

#endif /* NBCX_API_ARGS_H */
