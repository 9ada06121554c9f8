/*
 * nbcx-info - what this nbcx is and how it is set, as ompi_info and
 * ucx_info say it of theirs: the version, the progress mode and
 * transports in force (nbcx_info), the algorithms of every collective,
 * and every setting (NBCX_*: docs/settings.md) with its value in this
 * environment and where the value comes from. NBCX_ variables set in the
 * environment that are no setting are named: nbcx ignores them.
 *
 *   nbcx-info               everything, as text
 *   nbcx-info --settings    the settings only
 *   nbcx-info --markdown    the settings table of docs/settings.md
 *                           (a test compares it with the committed file)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/tool_args.h"
#include "nbcx.h"

extern char **environ;

static void usage(FILE *f)
{
    fprintf(f,
"Usage: nbcx-info [--settings | --markdown]\n"
"\n"
"Prints what this nbcx is and how it is set: the version, the progress\n"
"mode and transports in force, the algorithms of every collective, and\n"
"every setting (the NBCX_* environment variables nbcx reads) with its\n"
"value here and where that value comes from (environment or default).\n"
"NBCX_ variables in the environment that are no setting are named too:\n"
"nbcx ignores them (a misspelt name, say).\n"
"\n"
"Options:\n"
"  --settings   the settings only\n"
"  --markdown   the settings as the Markdown table of docs/settings.md\n"
"  --help       this text\n"
"  --version    the version\n");
}

/* Text without Markdown's backquotes. */
static void plain(const char *s, char *out, size_t len)
{
    size_t n = 0;
    for (; *s && n + 1 < len; s++)
        if (*s != '`')
            out[n++] = *s;
    out[n] = '\0';
}

static void markdown(const struct nbcx_setting *t, int n)
{
    printf("| variable | default | what it does | more |\n");
    printf("|---|---|---|---|\n");
    for (int i = 0; i < n; i++)
        printf("| `%s` | %s | %s | [%s](%s) |\n", t[i].name, t[i].dflt,
               t[i].what, t[i].chapter, t[i].chapter);
}

/* The NBCX_ variables of the environment that name no setting. */
static void strays(void)
{
    int any = 0;
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "NBCX_", 5) != 0)
            continue;
        char name[128];
        size_t len = strcspn(*e, "=");
        if (len >= sizeof name)
            continue;
        memcpy(name, *e, len);
        name[len] = '\0';
        if (nbcx_setting_value(name) || !getenv(name) || !*getenv(name))
            continue;
        if (!any)
            printf("\nIgnored (NBCX_ variables that are no setting of "
                   "nbcx):\n");
        any = 1;
        printf("  %s\n", *e);
    }
}

static void settings(const struct nbcx_setting *t, int n)
{
    printf("Settings (docs/settings.md; value: here, else the default):\n");
    for (int i = 0; i < n; i++) {
        char dflt[256], what[512];
        plain(t[i].dflt, dflt, sizeof dflt);
        plain(t[i].what, what, sizeof what);
        const char *v, *open = strchr(t[i].name, '<');
        if (open) { /* NBCX_<COLL>_ALG: the ones set here, by name */
            printf("  %-26s %s  (default)\n", t[i].name, dflt);
            const char *close = strchr(open, '>');
            size_t pre = (size_t)(open - t[i].name);
            for (char **e = environ; e && *e; e++) {
                char name[128];
                size_t len = strcspn(*e, "=");
                if (len >= sizeof name ||
                    strncmp(*e, t[i].name, pre) != 0)
                    continue;
                memcpy(name, *e, len);
                name[len] = '\0';
                size_t post = strlen(close + 1);
                const char *v = nbcx_setting_value(name);
                if (v && len > pre + post &&
                    strcmp(name + len - post, close + 1) == 0)
                    printf("  %-26s %s  (environment)\n", name, v);
            }
        } else if ((v = nbcx_setting_value(t[i].name)))
            printf("  %-26s %s  (environment)\n", t[i].name, v);
        else
            printf("  %-26s %s  (default)\n", t[i].name, dflt);
        printf("  %-26s   [%s] %s\n", "", t[i].layer, what);
    }
    strays();
}

static void algorithms(void)
{
    static const char *const colls[] = {
        "barrier", "bcast", "reduce", "allreduce", "gather", "scatter",
        "allgather", "alltoall", "gatherv", "scatterv", "allgatherv",
        "alltoallv", "alltoallw", "reduce_scatter", "reduce_scatter_block",
        "scan", "exscan", "neighbor_allgather", "neighbor_allgatherv",
        "neighbor_alltoall", "neighbor_alltoallv", "neighbor_alltoallw",
    };
    printf("Algorithms (NBCX_<COLL>_ALG, nbcx_algorithm_set; auto unless "
           "forced):\n");
    for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++) {
        const char *names = NULL;
        if (nbcx_algorithm_names(colls[i], &names) == NBCX_SUCCESS && names)
            printf("  %-22s %s\n", colls[i], names);
    }
}

int main(int argc, char **argv)
{
    nbcx_tool_version(argc, argv, "nbcx-info");
    if (nbcx_tool_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    int only_settings = 0, md = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--settings") == 0) {
            only_settings = 1;
        } else if (strcmp(argv[i], "--markdown") == 0) {
            md = 1;
        } else {
            fprintf(stderr, "nbcx-info: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    const struct nbcx_setting *t;
    int n;
    if (nbcx_settings(&t, &n) != NBCX_SUCCESS)
        return 1;
    if (md) {
        markdown(t, n);
        return 0;
    }
    if (!only_settings) {
        char info[1024];
        if (nbcx_info(info, sizeof info) == NBCX_SUCCESS)
            printf("%s\n\n", info);
        algorithms();
        printf("\n");
    }
    settings(t, n);
    return 0;
}
