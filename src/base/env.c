/* env.c - environment variables: the one place that calls getenv for
 * nbcx's settings (tests/docs/check_docs.py fails on another). */
#include <stdlib.h>
#include <string.h>

#include "base.h"

const char *nbcxi_getenv(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return NULL;
    /* An NBCX_ name not in the table (settings.def) reads nothing: a
     * setting is declared, documented and listed, or it does not exist.
     * (Looked up only for a value that is set: some settings are read at
     * every start, NBCX_SPLIT_LEVELS, and are mostly unset.) */
    if (strncmp(name, "NBCX_", 5) == 0 && !nbcxi_setting_known(name))
        return NULL;
    return v;
}

/* A byte count with an optional k/m/g suffix (powers of 1024) in v, or
 * dflt where v is NULL, not one, or 0. */
static size_t parse_size(const char *v, size_t dflt)
{
    if (!v)
        return dflt;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    switch (*end) {
    case 'k': case 'K': n <<= 10; end++; break;
    case 'm': case 'M': n <<= 20; end++; break;
    case 'g': case 'G': n <<= 30; end++; break;
    default: break;
    }
    if (end == v || *end != '\0' || n == 0)
        return dflt;
    return (size_t)n;
}

size_t nbcxi_env_size(const char *name, size_t dflt)
{
    return parse_size(nbcxi_getenv(name), dflt);
}

size_t nbcxi_env_size_or_off(const char *name, size_t dflt)
{
    const char *v = nbcxi_getenv(name);
    if (v && v[0] == '0' && v[1] == '\0')
        return 0;
    return parse_size(v, dflt);
}
