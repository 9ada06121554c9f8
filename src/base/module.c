/* module.c - loading a backend built as a module (libnbcx-<name>.so,
 * base/transport.h) the first time a communicator asks for it.
 *
 * Where: the directories of NBCX_MODULE_PATH (colon-separated) first;
 * then, unless NBCX_MODULE_PATH_ONLY is set (tests use it to make the
 * load fail), nbcx/ beside the libnbcx that runs (dladdr: the build tree
 * for a libnbcx in the build tree, <libdir>/nbcx for an installed one,
 * wherever the prefix was moved), the build tree's nbcx/ (a program
 * linked with the static library in the build tree) and
 * <libdir>/nbcx of the configured prefix (one linked with the installed
 * static library). NBCX_MODULE_VERBOSE prints every attempt on stderr.
 *
 * A file that is there but does not load (a library it needs is missing,
 * it was built for another libnbcx) is reported with dlerror() and the
 * next directory is tried; the error names the first such failure, or
 * the directories searched when the file is nowhere. A module that
 * loads stays loaded: its transports and the libraries it pulled in
 * (UCX) keep state. Nothing is kept of a failed attempt.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "module.h"

#ifndef NBCXI_MODULE_BUILD_DIR
#define NBCXI_MODULE_BUILD_DIR ""
#endif
#ifndef NBCXI_MODULE_INSTALL_DIR
#define NBCXI_MODULE_INSTALL_DIR ""
#endif

static const struct nbcxi_module_host host = {
    .abi = NBCXI_MODULE_ABI,
    .version = NBCX_VERSION_MAJOR * 10000 + NBCX_VERSION_MINOR * 100 +
               NBCX_VERSION_PATCH,
    .ops_size = sizeof(struct nbcxi_transport_ops),
    .type_size = sizeof(struct nbcx_datatype_s),
    .verror = nbcxi_verror,
    .getenv = nbcxi_getenv,
    .type_pack = nbcxi_type_pack,
    .type_unpack = nbcxi_type_unpack,
};

/* snprintf that may truncate (paths and dlerror() in short messages). */
__attribute__((format(printf, 3, 4))) static void say(char *buf, size_t len,
                                                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

struct search {
    const char *name;
    bool verbose;
    char file[64];       /* libnbcx-<name>.so */
    char entry[64];      /* nbcx_module_<name> */
    char failure[512];   /* the first file that was there but did not load */
    char tried[512];     /* the directories searched */
    const struct nbcxi_transport_ops *ops;
};

/* Tries dir (len bytes of it); true when the module is loaded. */
static bool try_dir(struct search *s, const char *dir, size_t len)
{
    if (len == 0 || s->ops)
        return s->ops != NULL;
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%.*s/%s", (int)len, dir,
                         s->file) >= sizeof path)
        return false;
    size_t n = strlen(s->tried);
    if (n + len + 3 < sizeof s->tried) /* (duplicates are searched once) */
        say(s->tried + n, sizeof s->tried - n, "%s%.*s", n ? ", " : "",
                 (int)len, dir);
    if (access(path, F_OK) != 0) {
        if (s->verbose)
            fprintf(stderr, "nbcx: module %s: %s: not there\n", s->name,
                    path);
        return false;
    }
    char why[400] = "";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        say(why, sizeof why, "%s", e ? e : path);
    } else {
        nbcxi_module_init_fn *init;
        *(void **)&init = dlsym(h, s->entry);
        if (!init) {
            const char *e = dlerror();
            say(why, sizeof why, "%s", e ? e : s->entry);
        } else {
            char no[300] = "";
            s->ops = init(&host, no, sizeof no);
            if (!s->ops)
                say(why, sizeof why, "%s: %s", path,
                         no[0] ? no : "the module refused to start");
        }
        if (!s->ops)
            dlclose(h); /* (only its version checks ran) */
    }
    if (s->verbose)
        fprintf(stderr, "nbcx: module %s: %s: %s\n", s->name, path,
                s->ops ? "loaded" : why);
    if (!s->ops && !s->failure[0])
        say(s->failure, sizeof s->failure, "%s", why);
    return s->ops != NULL;
}

/* Tries every directory of a colon-separated list. */
static bool try_list(struct search *s, const char *list)
{
    while (list && *list) {
        const char *end = strchr(list, ':');
        size_t len = end ? (size_t)(end - list) : strlen(list);
        if (try_dir(s, list, len))
            return true;
        list = end ? end + 1 : NULL;
    }
    return false;
}

/* nbcx/ beside the shared object (or program) this code is part of. */
static bool try_beside_libnbcx(struct search *s)
{
    Dl_info info;
    if (!dladdr((void *)&host, &info) || !info.dli_fname ||
        !strchr(info.dli_fname, '/'))
        return false;
    char dir[PATH_MAX];
    const char *slash = strrchr(info.dli_fname, '/');
    size_t len = (size_t)(slash - info.dli_fname);
    if ((size_t)snprintf(dir, sizeof dir, "%.*s/nbcx", (int)len,
                         info.dli_fname) >= sizeof dir)
        return false;
    return try_dir(s, dir, strlen(dir));
}

static bool search(struct search *s)
{
    if (try_list(s, nbcxi_getenv("NBCX_MODULE_PATH")))
        return true;
    if (nbcxi_getenv("NBCX_MODULE_PATH_ONLY"))
        return false;
    return try_beside_libnbcx(s) ||
           try_dir(s, NBCXI_MODULE_BUILD_DIR,
                   strlen(NBCXI_MODULE_BUILD_DIR)) ||
           try_dir(s, NBCXI_MODULE_INSTALL_DIR,
                   strlen(NBCXI_MODULE_INSTALL_DIR));
}

/* Loads m if it is not loaded; on failure, why says what went wrong. */
static bool load(struct nbcxi_module *m, char *why, size_t len)
{
    pthread_mutex_lock(&m->lock);
    if (m->ops) {
        pthread_mutex_unlock(&m->lock);
        return true;
    }
    struct search s = { .name = m->name,
                        .verbose = nbcxi_getenv("NBCX_MODULE_VERBOSE") };
    snprintf(s.file, sizeof s.file, "libnbcx-%s.so", m->name);
    snprintf(s.entry, sizeof s.entry, "nbcx_module_%s", m->name);
    if (search(&s))
        m->ops = s.ops;
    else if (s.failure[0])
        say(why, len, "the module %s does not load: %s", s.file,
                 s.failure);
    else
        say(why, len, "the module %s is not in %s (NBCX_MODULE_PATH "
                 "names more directories)", s.file,
                 s.tried[0] ? s.tried : "any directory");
    pthread_mutex_unlock(&m->lock);
    return s.ops != NULL;
}

int nbcxi_module_create(struct nbcxi_module *m,
                        const struct nbcxi_bootstrap *b,
                        nbcxi_transport **out)
{
    *out = NULL;
    char why[600] = "";
    bool ok = load(m, why, sizeof why);
    int bad;
    int err = b->first_failed(b->ctx, ok, &bad);
    if (err != NBCX_SUCCESS)
        return err;
    if (!ok)
        return nbcxi_error(NBCX_ERR_TRANSPORT, "NBCX_TRANSPORT=%s: %s",
                           m->name, why);
    if (bad >= 0)
        return nbcxi_error(NBCX_ERR_TRANSPORT, "NBCX_TRANSPORT=%s: the "
                           "module libnbcx-%s.so could not be loaded on "
                           "rank %d (see its error there)", m->name,
                           m->name, bad);
    pthread_mutex_lock(&m->lock);
    const struct nbcxi_transport_ops *ops = m->ops;
    pthread_mutex_unlock(&m->lock);
    return ops->create(b, out);
}

void nbcxi_module_describe(struct nbcxi_module *m, char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    pthread_mutex_lock(&m->lock);
    const struct nbcxi_transport_ops *ops = m->ops;
    pthread_mutex_unlock(&m->lock);
    if (ops && ops->describe)
        ops->describe(buf, len);
}
