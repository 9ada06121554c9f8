/* settings.c - the table of every NBCX_* environment variable nbcx reads
 * (settings.def), and the one way to read them: nbcxi_getenv (env.c)
 * reads an NBCX_ name only if it is declared here, so that a setting
 * that is read is also listed by nbcx-info and in docs/settings.md. */
#include <string.h>

#include "base.h"

static const struct nbcx_setting table[] = {
#define NBCX_SETTING(name, layer, dflt, what, chapter)                       \
    { name, layer, dflt, what, chapter },
#include "settings.def"
#undef NBCX_SETTING
};
enum { NSETTINGS = (int)(sizeof table / sizeof table[0]) };

int nbcx_settings(const struct nbcx_setting **out, int *count)
{
    if (!out || !count)
        return NBCX_ERR_ARG;
    *out = table;
    *count = NSETTINGS;
    return NBCX_SUCCESS;
}

/* Whether name is entry's name, where "<...>" in entry stands for one
 * or more capitals and digits ("NBCX_<COLL>_ALG": NBCX_ALLREDUCE_ALG). */
static bool matches(const char *entry, const char *name)
{
    const char *open = strchr(entry, '<');
    if (!open)
        return strcmp(entry, name) == 0;
    const char *close = strchr(open, '>');
    size_t pre = (size_t)(open - entry), post = strlen(close + 1);
    size_t n = strlen(name);
    if (n <= pre + post || strncmp(entry, name, pre) != 0 ||
        strcmp(name + n - post, close + 1) != 0)
        return false;
    for (size_t i = pre; i < n - post; i++)
        if (!((name[i] >= 'A' && name[i] <= 'Z') ||
              (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
            return false;
    return true;
}

bool nbcxi_setting_known(const char *name)
{
    for (int i = 0; i < NSETTINGS; i++)
        if (matches(table[i].name, name))
            return true;
    return false;
}

const char *nbcx_setting_value(const char *name)
{
    if (!name || !nbcxi_setting_known(name))
        return NULL;
    return nbcxi_getenv(name);
}
