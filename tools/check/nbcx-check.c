/*
 * nbcx-check - proves collective schedules correct for many ranks,
 * without MPI and without moving a byte (include/nbcx_check.h).
 *
 *   nbcx-check --op bcast --alg binomial --ranks 100000 --count 4
 *   nbcx-check --op all --alg all --ranks 1-64 --count 3 --in-place
 *
 * For each collective, algorithm and communicator size it builds the
 * schedules of all ranks with nbcx's own builders and checks that every
 * send meets one receive of the same size and tag, that the ranks'
 * graphs together cannot deadlock, and that no buffer is read before it
 * is written or written while another node uses it. One line per check
 * with its time and the process's peak memory (getrusage ru_maxrss);
 * errors name the rank, node, peer and tag. Exit status: 0 all proven,
 * 1 some check found errors, 2 bad arguments.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "nbcx_check.h"

static void usage(FILE *f)
{
    fputs("usage: nbcx-check [options]\n"
          "  --op NAME|all       collective (default: all)\n"
          "  --alg NAME|all      algorithm (default: all)\n"
          "  --ranks LIST        communicator sizes: 64, 1-64, 2,7,4096 "
          "(default: 1-16)\n"
          "  --count N           elements per rank or block (default: 1)\n"
          "  --root R            root of rooted collectives, modulo the "
          "size (default: 0)\n"
          "  --in-place          NBCX_IN_PLACE where MPI allows it\n"
          "  --type NAME         int8 ... uint64, float, double, byte, "
          "char,\n"
          "                      float_int, double_int, long_int, 2int, "
          "short_int\n"
          "                      (default: int32)\n"
          "  --noncommutative    reductions with a non-commutative "
          "operation\n"
          "  --segsize BYTES     fragment size of pipelines (default: "
          "65536)\n"
          "  --topology T        neighbourhood collectives: torus "
          "(default), grid, graph\n"
          "  --max-errors N      error messages shown per check (default: "
          "20)\n"
          "  --quiet             print failures and the summary only\n"
          "  --list              list the collectives and algorithms\n",
          f);
}

static int bad(const char *what, const char *arg)
{
    fprintf(stderr, "nbcx-check: %s: '%s' (see --help)\n", what,
            arg ? arg : "");
    return 2;
}

static bool parse_int(const char *s, long lo, long hi, int *out)
{
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

/* "1-64", "2,7,4096", "100000" -> sizes (malloc'd). */
static int parse_ranks(const char *s, int **out, int *n)
{
    int cap = 16, k = 0;
    int *v = malloc(sizeof(int) * (size_t)cap);
    char *copy = strdup(s);
    if (!v || !copy) {
        free(v);
        free(copy);
        return -1;
    }
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int lo, hi;
        char *dash = strchr(tok, '-');
        if (dash) {
            *dash = '\0';
            if (!parse_int(tok, 1, INT_MAX, &lo) ||
                !parse_int(dash + 1, 1, INT_MAX, &hi) || hi < lo)
                goto fail;
        } else if (!parse_int(tok, 1, INT_MAX, &lo)) {
            goto fail;
        } else {
            hi = lo;
        }
        for (long x = lo; x <= hi; x++) {
            if (k == cap) {
                cap *= 2;
                int *w = realloc(v, sizeof(int) * (size_t)cap);
                if (!w)
                    goto fail;
                v = w;
            }
            v[k++] = (int)x;
        }
    }
    free(copy);
    if (k == 0) {
        free(v);
        return -1;
    }
    *out = v;
    *n = k;
    return 0;
fail:
    free(copy);
    free(v);
    return -1;
}

static const struct {
    const char *name;
    nbcx_datatype type;
} types[] = {
    { "int8", NBCX_INT8 },       { "uint8", NBCX_UINT8 },
    { "int16", NBCX_INT16 },     { "uint16", NBCX_UINT16 },
    { "int32", NBCX_INT32 },     { "uint32", NBCX_UINT32 },
    { "int64", NBCX_INT64 },     { "uint64", NBCX_UINT64 },
    { "float", NBCX_FLOAT },     { "double", NBCX_DOUBLE },
    { "byte", NBCX_BYTE },       { "char", NBCX_CHAR },
    { "float_int", NBCX_FLOAT_INT }, { "double_int", NBCX_DOUBLE_INT },
    { "long_int", NBCX_LONG_INT }, { "2int", NBCX_2INT },
    { "short_int", NBCX_SHORT_INT },
};

/* Whether `name` is in the space-separated list. */
static bool listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        while (*p == ' ')
            p++;
        size_t k = strcspn(p, " ");
        if (k == n && strncmp(p, name, n) == 0)
            return true;
        p += k;
    }
    return false;
}

static void print_error(const char *msg, void *ctx)
{
    (void)ctx;
    printf("    %s\n", msg);
}

static double peak_mib(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
}

int main(int argc, char **argv)
{
    const char *op = "all", *alg = "all", *ranks = "1-16";
    int count = 1, root = 0, max_errors = 20;
    bool quiet = false, list = false;
    nbcx_check_options opt = { 0 };

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--op") && v) {
            op = v, i++;
        } else if (!strcmp(a, "--alg") && v) {
            alg = v, i++;
        } else if (!strcmp(a, "--ranks") && v) {
            ranks = v, i++;
        } else if (!strcmp(a, "--count") && v) {
            if (!parse_int(v, 0, INT_MAX, &count))
                return bad("bad count", v);
            i++;
        } else if (!strcmp(a, "--root") && v) {
            if (!parse_int(v, 0, INT_MAX, &root))
                return bad("bad root", v);
            i++;
        } else if (!strcmp(a, "--type") && v) {
            opt.type = NULL;
            for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
                if (!strcmp(v, types[k].name))
                    opt.type = types[k].type;
            if (!opt.type)
                return bad("unknown type", v);
            i++;
        } else if (!strcmp(a, "--segsize") && v) {
            int s;
            if (!parse_int(v, 1, INT_MAX, &s))
                return bad("bad segsize", v);
            opt.segsize = (size_t)s;
            i++;
        } else if (!strcmp(a, "--topology") && v) {
            if (!strcmp(v, "torus"))
                opt.topology = NBCX_CHECK_TORUS;
            else if (!strcmp(v, "grid"))
                opt.topology = NBCX_CHECK_GRID;
            else if (!strcmp(v, "graph"))
                opt.topology = NBCX_CHECK_GRAPH;
            else
                return bad("unknown topology", v);
            i++;
        } else if (!strcmp(a, "--max-errors") && v) {
            if (!parse_int(v, 1, INT_MAX, &max_errors))
                return bad("bad max-errors", v);
            i++;
        } else if (!strcmp(a, "--in-place")) {
            opt.in_place = 1;
        } else if (!strcmp(a, "--noncommutative")) {
            opt.noncommutative = 1;
        } else if (!strcmp(a, "--quiet")) {
            quiet = true;
        } else if (!strcmp(a, "--list")) {
            list = true;
        } else {
            return bad("unknown option or missing value", a);
        }
    }
    opt.max_reports = max_errors;
    opt.report = print_error;

    if (list) {
        const char *c, *names;
        for (int i = 0; (c = nbcx_check_collective_name(i)); i++)
            if (nbcx_algorithm_names(c, &names) == NBCX_SUCCESS)
                printf("%-22s %s\n", c, names);
        return 0;
    }

    int *sizes, nsizes;
    if (parse_ranks(ranks, &sizes, &nsizes) != 0)
        return bad("bad rank list", ranks);
    bool any_op = false;
    const char *c, *names;
    for (int i = 0; (c = nbcx_check_collective_name(i)); i++)
        any_op = any_op || !strcmp(op, "all") || !strcmp(op, c);
    if (!any_op) {
        free(sizes);
        return bad("unknown collective (try --list)", op);
    }
    if (strcmp(alg, "all") != 0 && strcmp(op, "all") != 0 &&
        (nbcx_algorithm_names(op, &names) != NBCX_SUCCESS ||
         !listed(names, alg))) {
        free(sizes);
        return bad("unknown algorithm (try --list)", alg);
    }

    long checks = 0, failed = 0, skipped = 0;
    for (int i = 0; (c = nbcx_check_collective_name(i)); i++) {
        if (strcmp(op, "all") && strcmp(op, c))
            continue;
        if (nbcx_algorithm_names(c, &names) != NBCX_SUCCESS)
            continue;
        for (const char *p = names; *p;) {
            while (*p == ' ')
                p++;
            size_t k = strcspn(p, " ");
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)k, p);
            p += k;
            if (!*name || (strcmp(alg, "all") && strcmp(alg, name)))
                continue;
            if (strcmp(name, "slots") == 0) {
                /* shared memory between in-process ranks: no messages */
                if (strcmp(alg, "all") != 0)
                    printf("%s/slots: shared-memory slots, no message "
                           "schedule to check\n", c);
                continue;
            }
            for (int s = 0; s < nsizes; s++) {
                nbcx_check_result res;
                opt.root = root % sizes[s];
                if (!quiet) {
                    printf("%s/%s ranks=%d count=%d%s:\n", c, name,
                           sizes[s], count, opt.in_place ? " in-place" : "");
                    fflush(stdout);
                }
                int err = nbcx_check_collective(c, name, sizes[s], count,
                                                &opt, &res);
                checks++;
                if (err == NBCX_ERR_ALGORITHM) {
                    skipped++;
                    if (!quiet)
                        printf("  skipped: the algorithm cannot serve this "
                               "call\n");
                    continue;
                }
                if (err != NBCX_SUCCESS && err != NBCX_ERR_NODE) {
                    failed++;
                    printf("%s/%s ranks=%d count=%d: cannot check: %s\n", c,
                           name, sizes[s], count, nbcx_error_string(err));
                    continue;
                }
                if (err == NBCX_ERR_NODE) {
                    failed++;
                    if (quiet)
                        printf("%s/%s ranks=%d count=%d%s:\n", c, name,
                               sizes[s], count,
                               opt.in_place ? " in-place" : "");
                    printf("  FAILED: %lld errors\n", res.errors);
                }
                if (!quiet || err)
                    printf("  %s nodes=%lld edges=%lld messages=%lld "
                           "kept=%lld  time=%.3f s (builders %.3f s)  peak "
                           "RSS=%.1f MiB\n",
                           err ? "  " : "ok", res.nodes, res.edges,
                           res.messages, res.kept, res.seconds,
                           res.build_seconds, peak_mib());
                fflush(stdout);
            }
        }
    }
    free(sizes);
    printf("%ld checks: %ld proven, %ld failed, %ld skipped (algorithm not "
           "usable); peak RSS %.1f MiB\n",
           checks, checks - failed - skipped, failed, skipped, peak_mib());
    return failed ? 1 : 0;
}
