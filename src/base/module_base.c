/* module_base.c - base/ inside a backend built as a module (MODULE in
 * its nbcx_backend() line; base/transport.h): compiled into the
 * module, not into libnbcx. The module does not link libnbcx (whose
 * internals are hidden, and which a program may have linked statically):
 * the few functions of base/ a backend calls are forwarded here to
 * libnbcx's own, through the table libnbcx hands the module's entry
 * point, nbcx_module_<name>, when it loads it (base/module.c). Calling
 * them before that is a bug; the entry point is the first thing libnbcx
 * calls.
 *
 * The build defines NBCXI_MODULE_NAME (e.g. ucx) and NBCXI_MODULE_OPS,
 * the backend's table (e.g. nbcxi_ucx_ops).
 */
#include <stdio.h>

#include "base.h"

#if !defined(NBCXI_MODULE_NAME) || !defined(NBCXI_MODULE_OPS)
#error "module_base.c is compiled into a module: NBCXI_MODULE_NAME, NBCXI_MODULE_OPS"
#endif
#define NBCXI_CAT_(a, b) a##b
#define NBCXI_CAT(a, b) NBCXI_CAT_(a, b)

static const struct nbcxi_module_host *host;

int nbcxi_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    host->verror(code, fmt, ap);
    va_end(ap);
    return code;
}

const char *nbcxi_getenv(const char *name)
{
    return host->getenv(name);
}

int nbcxi_type_pack(const void *src, int count, struct nbcx_datatype_s *t,
                    void *dst)
{
    return host->type_pack(src, count, t, dst);
}

int nbcxi_type_unpack(const void *src, int count, struct nbcx_datatype_s *t,
                      void *dst)
{
    return host->type_unpack(src, count, t, dst);
}

extern NBCX_HIDDEN const struct nbcxi_transport_ops NBCXI_MODULE_OPS;

/* The entry point (nbcxi_module_init_fn): a module built for another
 * libnbcx (another version, or these structures otherwise laid out)
 * refuses to start. */
__attribute__((visibility("default"))) nbcxi_module_init_fn
    NBCXI_CAT(nbcx_module_, NBCXI_MODULE_NAME);

const struct nbcxi_transport_ops *
NBCXI_CAT(nbcx_module_, NBCXI_MODULE_NAME)(const struct nbcxi_module_host *h,
                                           char *why, size_t len)
{
    unsigned version = NBCX_VERSION_MAJOR * 10000 + NBCX_VERSION_MINOR * 100 +
                       NBCX_VERSION_PATCH;
    if (h->abi != NBCXI_MODULE_ABI || h->version != version ||
        h->ops_size != sizeof(struct nbcxi_transport_ops) ||
        h->type_size != sizeof(struct nbcx_datatype_s)) {
        snprintf(why, len, "built for nbcx %u.%u.%u (module interface %u), "
                 "not for this libnbcx (%u.%u.%u, interface %u)",
                 version / 10000, version / 100 % 100, version % 100,
                 NBCXI_MODULE_ABI, h->version / 10000, h->version / 100 % 100,
                 h->version % 100, h->abi);
        return NULL;
    }
    host = h;
    return &NBCXI_MODULE_OPS;
}
