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
 * errors name the rank, node, peer and tag.
 *
 * Budget: before a check of more than 1,024 ranks, its time and memory
 * are estimated from a few ranks' schedules (nbcx_check_estimate_cost);
 * one over the budget (--budget-s, default 120 s; --max-mem, default
 * 8 GiB) is not run: the line says so, with the estimate and the largest
 * size that fits (about: a bisection over estimates), and --fit checks
 * that size instead. Algorithms with a message between every pair of
 * ranks cost O(p^2) and stop fitting between about 7,000 and 15,000
 * ranks, depending on the machine's load (docs/results/check-scale.md). A budget of 0 turns the guard off.
 *
 * Exit status: 0 all proven, 1 some check found errors, 2 bad arguments,
 * 3 no errors found, but some checks were over the budget (not run, or
 * run on fewer ranks with --fit).
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
#include "../common/tool_args.h"

static void usage(FILE *f)
{
    fputs("usage: nbcx-check [options]\n"
          "  --op NAME|all       collective (default: all)\n"
          "  --alg NAME|all      algorithm (default: all); knomial2 .. "
          "knomial8:\n"
          "                      the k-nomial tree of that radix\n"
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
          "the engine's:\n"
          "                      65536, and at least 262144 in the ring "
          "allreduce)\n"
          "  --ranks-per-node C  the transport says blocks of C consecutive\n"
          "                      ranks are the nodes (node-aware algorithms;\n"
          "                      default: it does not know)\n"
          "  --topology T        neighbourhood collectives: torus "
          "(default), grid, graph\n"
          "  --max-errors N      error messages shown per check (default: "
          "20)\n"
          "  --quiet             print failures and the summary only\n"
          "  --budget-s S        skip a check of more than 1,024 ranks whose\n"
          "                      estimated time exceeds S seconds (default:\n"
          "                      120; 0: no limit)\n"
          "  --max-mem SIZE      ... or whose estimated memory exceeds SIZE\n"
          "                      bytes, K/M/G suffixes (default: 8G; 0: no\n"
          "                      limit)\n"
          "  --estimate          print each check's estimated cost before it\n"
          "  --fit               over the budget: check the largest size\n"
          "                      that fits instead of skipping\n"
          "  --list              list the collectives and algorithms\n"
          "exit status: 0 all proven, 1 errors found, 2 bad arguments,\n"
          "3 no errors, but some checks over the budget (skipped or fitted)\n",
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

/* "8G", "512M", "1000000" -> bytes. */
static bool parse_bytes(const char *s, double *out)
{
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || v < 0 || end == s)
        return false;
    double mul = 1;
    if (*end == 'K' || *end == 'k')
        mul = 1024.0, end++;
    else if (*end == 'M' || *end == 'm')
        mul = 1024.0 * 1024, end++;
    else if (*end == 'G' || *end == 'g')
        mul = 1024.0 * 1024 * 1024, end++;
    if (*end == 'i' && mul > 1) /* KiB, MiB, GiB */
        end++;
    if (*end == 'B')
        end++;
    if (*end)
        return false;
    *out = v * mul;
    return true;
}

struct budget {
    double seconds, bytes; /* 0: no limit */
};

enum { BUDGET_MIN_RANKS = 1024 }; /* smaller checks are not estimated */

/* Whether the estimate fits (errors of the estimate: it fits, and the
 * check itself will report them). */
static bool fits(const struct budget *b, const char *c, const char *alg,
                 int size, int count, nbcx_check_options opt, int root,
                 nbcx_check_estimate *est)
{
    opt.root = root % size;
    if (nbcx_check_estimate_cost(c, alg, size, count, &opt, est) !=
        NBCX_SUCCESS)
        return true;
    return !((b->seconds > 0 && est->seconds > b->seconds) ||
             (b->bytes > 0 && est->bytes > b->bytes));
}

/* The largest size in [1, size) whose estimate fits, to about 1%. */
static int largest_fit(const struct budget *b, const char *c,
                       const char *alg, int size, int count,
                       nbcx_check_options opt, int root)
{
    nbcx_check_estimate est;
    int lo = 1, hi = size; /* lo fits (or is 1), hi does not */
    if (!fits(b, c, alg, BUDGET_MIN_RANKS, count, opt, root, &est))
        hi = BUDGET_MIN_RANKS;
    else
        lo = BUDGET_MIN_RANKS;
    while (hi - lo > 1 && hi - lo > lo / 100) {
        int mid = lo + (hi - lo) / 2;
        if (fits(b, c, alg, mid, count, opt, root, &est))
            lo = mid;
        else
            hi = mid;
    }
    return lo;
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
/* Whether `alg` (the --alg argument) names the listed algorithm `name`:
 * the same, or "knomialK" (K = 2..8) for "knomial" with radix K. */
static bool names_alg(const char *alg, const char *name)
{
    return strcmp(alg, name) == 0 ||
           (strcmp(name, "knomial") == 0 && strncmp(alg, "knomial", 7) == 0 &&
            alg[7] >= '2' && alg[7] <= '8' && alg[8] == '\0');
}

static bool listed(const char *list, const char *alg)
{
    for (const char *p = list; *p;) {
        while (*p == ' ')
            p++;
        size_t k = strcspn(p, " ");
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)k, p);
        if (names_alg(alg, name))
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
    bool quiet = false, list = false, fit = false, estimate = false;
    struct budget budget = { 120, 8.0 * 1024 * 1024 * 1024 };
    nbcx_check_options opt = { 0 };
    nbcx_tool_version(argc, argv, "nbcx-check");

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
        } else if (!strcmp(a, "--ranks-per-node") && v) {
            if (!parse_int(v, 1, INT_MAX, &opt.ranks_per_node))
                return bad("bad ranks per node", v);
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
        } else if (!strcmp(a, "--budget-s") && v) {
            char *end;
            errno = 0;
            budget.seconds = strtod(v, &end);
            if (errno || *end || end == v || budget.seconds < 0)
                return bad("bad budget", v);
            i++;
        } else if (!strcmp(a, "--max-mem") && v) {
            if (!parse_bytes(v, &budget.bytes))
                return bad("bad memory size", v);
            i++;
        } else if (!strcmp(a, "--estimate")) {
            estimate = true;
        } else if (!strcmp(a, "--fit")) {
            fit = true;
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

    long checks = 0, failed = 0, skipped = 0, over = 0;
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
            if (!*name || (strcmp(alg, "all") && !names_alg(alg, name)))
                continue;
            if (strcmp(alg, "all") != 0) /* knomialK: the radix too */
                snprintf(name, sizeof name, "%s", alg);
            if (strcmp(name, "slots") == 0) {
                /* shared memory between in-process ranks: no messages */
                if (strcmp(alg, "all") != 0)
                    printf("%s/slots: shared-memory slots, no message "
                           "schedule to check\n", c);
                continue;
            }
            for (int s = 0; s < nsizes; s++) {
                nbcx_check_result res;
                int size = sizes[s];
                opt.root = root % size;
                if (!quiet) {
                    printf("%s/%s ranks=%d count=%d%s:\n", c, name, size,
                           count, opt.in_place ? " in-place" : "");
                    fflush(stdout);
                }
                nbcx_check_estimate est;
                if (estimate) {
                    fits(&budget, c, name, size, count, opt, root, &est);
                    printf("  estimate: %.3f s, %.1f MiB, nodes=%lld "
                           "messages=%lld kept=%lld (%d ranks sampled)\n",
                           est.seconds, est.bytes / (1 << 20), est.nodes,
                           est.messages, est.kept, est.sampled);
                    fflush(stdout);
                }
                if ((budget.seconds > 0 || budget.bytes > 0) &&
                    size > BUDGET_MIN_RANKS &&
                    !fits(&budget, c, name, size, count, opt, root, &est)) {
                    over++;
                    int n = largest_fit(&budget, c, name, size, count, opt,
                                        root);
                    if (quiet)
                        printf("%s/%s ranks=%d count=%d%s:\n", c, name,
                               size, count, opt.in_place ? " in-place" : "");
                    printf("  OVER BUDGET: estimated %.0f s, %.1f GiB, %.3g "
                           "messages (budget %.0f s, %.1f GiB)%s; fits up "
                           "to about %d ranks\n",
                           est.seconds, est.bytes / (1 << 30),
                           (double)est.messages, budget.seconds,
                           budget.bytes / (1 << 30),
                           fit ? "" : ": not checked", n);
                    fflush(stdout);
                    if (!fit)
                        continue;
                    size = n;
                    opt.root = root % size;
                    printf("%s/%s ranks=%d count=%d%s (fitted, instead of "
                           "%d):\n", c, name, size, count,
                           opt.in_place ? " in-place" : "", sizes[s]);
                    fflush(stdout);
                }
                int err = nbcx_check_collective(c, name, size, count, &opt,
                                                &res);
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
                           name, size, count, nbcx_error_string(err));
                    continue;
                }
                if (err == NBCX_ERR_NODE) {
                    failed++;
                    if (quiet)
                        printf("%s/%s ranks=%d count=%d%s:\n", c, name,
                               size, count,
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
    long unchecked = fit ? 0 : over;
    printf("%ld checks: %ld proven, %ld failed, %ld skipped (algorithm not "
           "usable), %ld over budget (%s); peak RSS %.1f MiB\n",
           checks + unchecked, checks - failed - skipped, failed, skipped,
           over, fit ? "checked on fewer ranks" : "not checked", peak_mib());
    return failed ? 1 : over ? 3 : 0;
}
