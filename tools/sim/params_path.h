/*
 * The default parameter file of nbcx-sim and nbcx-tune (format
 * nbcx-loggp/1): the installed copy, found relative to the program
 * (BIN/NBCX_SIM_BIN_TO_DATA/nbcx/sim/default.json, BIN read from
 * /proc/self/exe, so an installed tree works wherever it is moved),
 * else the source tree's (a program run from the build tree).
 * Needs _POSIX_C_SOURCE >= 200112L (readlink) before the first include.
 */
#ifndef NBCX_SIM_PARAMS_PATH_H
#define NBCX_SIM_PARAMS_PATH_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef NBCX_SIM_DEFAULT_PARAMS
#define NBCX_SIM_DEFAULT_PARAMS "default.json"
#endif
#ifndef NBCX_SIM_BIN_TO_DATA
#define NBCX_SIM_BIN_TO_DATA "../share"
#endif

static inline const char *nbcx_sim_default_params(void)
{
    static char path[4096];
    const char *tail = "/" NBCX_SIM_BIN_TO_DATA "/nbcx/sim/default.json";
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n > 0 && (size_t)n + strlen(tail) < sizeof path) {
        path[n] = '\0';
        char *slash = strrchr(path, '/');
        if (slash) {
            strcpy(slash, tail);
            FILE *f = fopen(path, "r");
            if (f) {
                fclose(f);
                return path;
            }
        }
    }
    return NBCX_SIM_DEFAULT_PARAMS;
}

#endif
