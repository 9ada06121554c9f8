/*
 * --help and --version for nbcx's installed programs, answered before
 * anything else (before MPI_Init in the MPI tools, so that `nbcx-soak
 * --help` needs no mpiexec and starts no ranks). Header only: each
 * program includes it as "../common/tool_args.h".
 *
 *   nbcx_tool_version(argc, argv, "nbcx-sim");   exits 0 on --version
 *   if (nbcx_tool_wants_help(argc, argv)) { usage(stdout); return 0; }
 *
 * The --version line, "NAME (nbcx) MAJOR.MINOR.PATCH", is the form
 * help2man reads (the man pages in share/man are made from --help and
 * --version, see docs/man/).
 */
#ifndef NBCX_TOOL_ARGS_H
#define NBCX_TOOL_ARGS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbcx.h"

/* True when an argument before "--" is -h or --help. */
static inline int nbcx_tool_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
    return 0;
}

/* Prints "NAME (nbcx) X.Y.Z" and exits 0 when an argument before "--"
 * is --version. */
static inline void nbcx_tool_version(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--version") == 0) {
            printf("%s (nbcx) %d.%d.%d\n", name, NBCX_VERSION_MAJOR,
                   NBCX_VERSION_MINOR, NBCX_VERSION_PATCH);
            exit(0);
        }
}

#endif
