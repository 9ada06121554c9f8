/* errors.c - error messages: one per code, and for this thread the
 * detail of the last error that had one. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base.h"

static const char *const messages[NBCX_ERR_LASTCODE] = {
    [NBCX_SUCCESS] = "success",
    [NBCX_ERR_ARG] = "invalid argument",
    [NBCX_ERR_COUNT] = "invalid count (negative, or too large)",
    [NBCX_ERR_BUFFER] = "invalid buffer (NULL with a nonzero count)",
    [NBCX_ERR_ROOT] = "invalid root (outside [0, size))",
    [NBCX_ERR_RANK] = "invalid peer rank (outside [0, size))",
    [NBCX_ERR_TYPE] = "invalid or freed datatype",
    [NBCX_ERR_OP] = "invalid operation, or operation not defined on datatype",
    [NBCX_ERR_COMM] = "invalid or freed communicator",
    [NBCX_ERR_REQUEST] = "invalid request (NULL pointer, freed or unknown "
                         "handle, active, or not persistent: "
                         "nbcx_error_detail() says which)",
    [NBCX_ERR_TAG] = "invalid schedule tag (outside [0, NBCX_SCHED_TAG_MAX])",
    [NBCX_ERR_NODE] = "invalid schedule node",
    [NBCX_ERR_IN_PLACE] = "NBCX_IN_PLACE is not allowed for this argument",
    [NBCX_ERR_NOMEM] = "out of memory",
    [NBCX_ERR_TRANSPORT] = "the transport (e.g. MPI) reported an error",
    [NBCX_ERR_TRUNCATE] = "message truncated (longer than the receive buffer)",
    [NBCX_ERR_ALGORITHM] = "unknown collective or algorithm name",
    [NBCX_ERR_INTERN] = "internal error in nbcx (please report it)",
    [NBCX_ERR_TOPOLOGY] = "the communicator has no neighbourhood topology, "
                          "or the topology is invalid",
    [NBCX_ERR_EXHAUSTED] = "tag space of the communicator exhausted (the "
                           "operation that used these tags earlier is still "
                           "in flight, or the persistent request planned "
                           "that many inits earlier is not freed); other "
                           "ranks may have started this operation, so the "
                           "communicator is now broken: free it",
    [NBCX_ERR_TIMEOUT] = "timed out: no progress for the communicator's "
                         "timeout, or the communicator is broken by an "
                         "earlier timeout (see the diagnosis on stderr)",
    [NBCX_ERR_BUSY] = "the communicator is in use: operations in flight, "
                      "persistent requests or schedules on it",
    [NBCX_ERR_ALIAS] = "the send buffer is the receive buffer (or this "
                       "rank's block of it): pass NBCX_IN_PLACE instead",
};

const char *nbcx_error_string(int err)
{
    if (err < 0 || err >= NBCX_ERR_LASTCODE || !messages[err])
        return "unknown nbcx error code";
    return messages[err];
}

static _Thread_local int detail_code;
static _Thread_local char detail[256];

int nbcxi_verror(int code, const char *fmt, va_list ap)
{
    vsnprintf(detail, sizeof detail, fmt, ap);
    detail_code = code;
    return code;
}

int nbcxi_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nbcxi_verror(code, fmt, ap);
    va_end(ap);
    return code;
}

int nbcxi_bad_handle(int code, const char *kind, const char *freed_by,
                     uint32_t magic, const void *h)
{
    if (magic == 0 || magic == NBCXI_DEAD_MAGIC)
        return nbcxi_error(code, "%s %p was freed (%s); this is a stale "
                           "copy of its handle", kind, h, freed_by);
    return nbcxi_error(code, "%p is not a%s %s handle", h,
                       strchr("aeiou", kind[0]) ? "n" : "", kind);
}

const char *nbcx_error_detail(int err)
{
    if (err != NBCX_SUCCESS && err == detail_code && detail[0])
        return detail;
    return nbcx_error_string(err);
}
