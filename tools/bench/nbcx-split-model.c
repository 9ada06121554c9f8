/*
 * nbcx-split-model - the split-tree cost model (nbcx_split_model) as
 * JSON, for every number S = 0..H of tree levels run on the application:
 *
 *   nbcx-split-model --ranks 16 --app-cores 2 --progress-cores 0 --compute 4
 *
 * Times are in units of one point-to-point transfer of the operation's
 * buffer, as in the model; tools/split-sweep measures that unit and
 * nbcx-plot's "split" chart scales the model by it to set it beside the
 * measured times. The program only evaluates the model in the library
 * (src/progress/mode_split.c) so that the chart shows exactly what split mode
 * decides with, not a second copy of the formulas.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbcx.h"
#include "../common/tool_args.h"

static void usage(FILE *f)
{
    fputs(
"Usage: nbcx-split-model --ranks N --app-cores A [--progress-cores P]\n"
"                        --compute C\n"
"\n"
"Prints, as JSON, the split-tree cost model of nbcx (Denis et al., eq. 1-5,\n"
"extended to the cores present; see docs/benchmarking.md) for S = 0..H, the\n"
"number of binomial-tree levels nearest the leaves that run on the\n"
"application cores, H = ceil(log2 N): the time of the collective alone\n"
"(t_collective) and overlapped with the computation (t_overlapped), in units\n"
"of one point-to-point transfer of the operation's buffer, and best_S, the S\n"
"split mode picks when NBCX_SPLIT_LEVELS is unset.\n"
"\n"
"Options:\n"
"  --ranks N           ranks of the collective (>= 1)\n"
"  --app-cores A       cores the application ranks run on (>= 1)\n"
"  --progress-cores P  cores of their own for the progress threads; 0 (the\n"
"                      default): they share the application cores\n"
"  --compute C         the computation overlapped with the collective, in\n"
"                      the same units (a number >= 0)\n"
"  --help              this text\n"
"\n"
"Exit status: 0 success, 2 bad arguments (one line on stderr).\n",
        f);
}

/* One line on stderr; returns the exit status of bad arguments. */
static int bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("nbcx-split-model: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (see --help)\n", stderr);
    va_end(ap);
    return 2;
}

static int parse_int(const char *s, int lo, int *out)
{
    if (*s < '0' || *s > '9') /* no sign, no space, not empty */
        return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end != '\0' || v < lo || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_units(const char *s, double *out)
{
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !isfinite(v) || v < 0)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    nbcx_tool_version(argc, argv, "nbcx-split-model");
    int ranks = -1, app = -1, prog = 0;
    double compute = -1;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strncmp(arg, "--", 2) != 0)
            return bad("unexpected argument '%s'", arg);
        /* --name VALUE or --name=VALUE */
        char name[32];
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        if (len >= sizeof name)
            return bad("unknown option '%s'", arg);
        memcpy(name, arg, len);
        name[len] = '\0';
        int known = !strcmp(name, "--ranks") || !strcmp(name, "--app-cores") ||
                    !strcmp(name, "--progress-cores") ||
                    !strcmp(name, "--compute");
        if (!known)
            return bad("unknown option '%s'", arg);
        const char *val;
        if (eq)
            val = eq + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        else
            return bad("option %s needs a value", name);

        if (!strcmp(name, "--ranks")) {
            if (parse_int(val, 1, &ranks) < 0)
                return bad("bad %s '%s': want an integer >= 1", name, val);
        } else if (!strcmp(name, "--app-cores")) {
            if (parse_int(val, 1, &app) < 0)
                return bad("bad %s '%s': want an integer >= 1", name, val);
        } else if (!strcmp(name, "--progress-cores")) {
            if (parse_int(val, 0, &prog) < 0)
                return bad("bad %s '%s': want an integer >= 0", name, val);
        } else if (parse_units(val, &compute) < 0) {
            return bad("bad %s '%s': want a number of transfer units >= 0",
                       name, val);
        }
    }
    if (ranks < 0)
        return bad("missing --ranks");
    if (app < 0)
        return bad("missing --app-cores");
    if (compute < 0)
        return bad("missing --compute");

    int levels = 0;
    int best = nbcx_split_model(ranks, app, prog, compute, -1, NULL, NULL,
                                &levels);
    if (best < 0) /* the arguments were checked above */
        return bad("the model refused these arguments");

    printf("{\n  \"schema\": \"nbcx-split-model/1\",\n"
           "  \"unit\": \"one point-to-point transfer of the buffer\",\n"
           "  \"ranks\": %d, \"app_cores\": %d, \"progress_cores\": %d,\n"
           "  \"compute\": %.9g, \"levels\": %d,\n  \"points\": [",
           ranks, app, prog, compute, levels);
    for (int s = 0; s <= levels; s++) {
        double tc = 0, to = 0;
        nbcx_split_model(ranks, app, prog, compute, s, &tc, &to, NULL);
        printf("%s\n    {\"S\": %d, \"t_collective\": %.9g, "
               "\"t_overlapped\": %.9g}",
               s ? "," : "", s, tc, to);
    }
    printf("\n  ],\n  \"best_S\": %d\n}\n", best);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
