/*
 * module.h - backends built as loadable modules (base/transport.h,
 * "backends built as loadable modules"): the stand-in the generated
 * registry (cmake/backends.c.in) holds for each, and the loader behind
 * it (base/module.c).
 */
#ifndef NBCX_MODULE_H
#define NBCX_MODULE_H

#include "base.h"

/* One module backend: its name ("ucx": the file libnbcx-ucx.so, the
 * entry point nbcx_module_ucx) and, once loaded, its table. Loaded at
 * most once per process and never unloaded (its transports and the
 * libraries it pulled in, e.g. UCX, keep state); a failed load is tried
 * again at the next create. */
struct nbcxi_module {
    const char *name;
    pthread_mutex_t lock;
    const struct nbcxi_transport_ops *ops; /* under lock; NULL: not loaded */
};

/* ops->create of a module backend: loads the module if it is not yet
 * loaded, has every member of the group say whether that worked (one
 * allgather: all fail with NBCX_ERR_TRANSPORT if one rank cannot load
 * it), then lets the module's own create make the transport. */
NBCX_HIDDEN int nbcxi_module_create(struct nbcxi_module *m,
                                    const struct nbcxi_bootstrap *b,
                                    nbcxi_transport **out);
/* ops->describe: the module's, "" when it is not loaded. */
NBCX_HIDDEN void nbcxi_module_describe(struct nbcxi_module *m, char *buf,
                                       size_t len);

/* The registry's stand-in for module backend `nm` (a bare word), named
 * nbcxi_<nm>_module_ops. */
#define NBCXI_MODULE_BACKEND(nm)                                             \
    static struct nbcxi_module nbcxi_##nm##_module = {                       \
        .name = #nm, .lock = PTHREAD_MUTEX_INITIALIZER };                    \
    static int nbcxi_##nm##_module_create(const struct nbcxi_bootstrap *b,   \
                                          nbcxi_transport **out)             \
    {                                                                        \
        return nbcxi_module_create(&nbcxi_##nm##_module, b, out);            \
    }                                                                        \
    static void nbcxi_##nm##_module_describe(char *buf, size_t len)          \
    {                                                                        \
        nbcxi_module_describe(&nbcxi_##nm##_module, buf, len);               \
    }                                                                        \
    static const struct nbcxi_transport_ops nbcxi_##nm##_module_ops = {      \
        .name = #nm,                                                         \
        .create = nbcxi_##nm##_module_create,                                \
        .describe = nbcxi_##nm##_module_describe,                            \
    };

#endif /* NBCX_MODULE_H */
