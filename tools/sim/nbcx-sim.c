/*
 * nbcx-sim - predicts the time of an nbcx collective on many ranks with
 * the LogGP simulator (src/model/sim, docs/sim.md).
 *
 *   nbcx-sim --op allreduce --alg ring --size 1m --ranks 100000 \
 *            --ranks-per-node 2 --params file.json [--compute-us 500]
 *            [--progress thread|caller|split] [--split-levels S|all]
 *            [--progress-cores K] [--json]
 *
 * --op, --alg, --size (--sizes) and --ranks take comma-separated lists
 * (and "all" for --op and --alg): every combination is simulated, one
 * line (or one JSON object) each. A point nbcx cannot serve (buffers
 * beyond its int counts) is reported on its line and the sweep goes on.
 * Exit status: 0 done; 2 bad input, or no point could be served
 * (nothing simulated); 3 some combination was too large to simulate
 * (reported on its line); 4 a schedule could not be built or matched
 * (a bug: nbcx-check would find it).
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

#include "coll/coll.h"
#include "model/sim/sim.h"
#include "params_path.h"
#include "../common/tool_args.h"

#ifndef NBCX_SIM_DEFAULT_PARAMS
#define NBCX_SIM_DEFAULT_PARAMS "default.json"
#endif

enum { EXIT_USAGE = 2, EXIT_TOOBIG = 3, EXIT_BUG = 4 };
/* a reference row whose peer algorithm nbcx lacks (not an error; not an
 * exit status either) */
enum { EXIT_UNMODELLED = 100 };

static const char usage[] =
"usage: nbcx-sim --op OP[,OP..|all] [--alg ALG[,ALG..]|all|auto]\n"
"                --size SIZE[,SIZE..] --ranks N[,N..] [options]\n"
"Predicts the completion time of nbcx collectives with the LogGP\n"
"simulator: the real builders' schedules of every rank, run in simulated\n"
"time (docs/sim.md).\n"
"  --op LIST            collectives (barrier, bcast, ..., or all)\n"
"  --alg LIST           algorithms (default auto: nbcx's automatic\n"
"                       choice; all: every algorithm of the op)\n"
"  --size, --sizes LIST bytes of the buffer (bcast, reductions, scans) or\n"
"                       of one block (gather, alltoall, ...): 8, 4k, 1m\n"
"                       (k, m, g = 2^10, 2^20, 2^30); barrier ignores it\n"
"  --ranks LIST         numbers of ranks\n"
"  --ranks-per-node C   ranks per node (default: the file's cores_per_node)\n"
"  --params FILE        parameter file, format nbcx-loggp/1 (default:\n"
"                       share/nbcx/sim/default.json of the installation,\n"
"                       from a build tree tools/sim/params/default.json)\n"
"  --compute-us C       a computation of C us between start and wait:\n"
"                       prints the overlap it gets (default 0: none)\n"
"  --progress MODE      thread (a progress core per rank runs the\n"
"                       operation during the computation; default),\n"
"                       caller (it progresses only in start and wait) or\n"
"                       split (the --split-levels S binomial-tree levels\n"
"                       nearest the leaves on the application core, the\n"
"                       others on the progress core; default S = 0)\n"
"  --split-levels S|all split mode's S (0..127); all: every S from 0 to\n"
"                       the tree height, a line each, the best marked\n"
"                       (least t_with_comp, else t_max)\n"
"  --progress-cores K   thread and split: K progress cores per node shared\n"
"                       by all its ranks (earliest free first) instead of\n"
"                       one per rank (default 0: one per rank)\n"
"  --segsize SIZE       fragment of pipelined algorithms (default 64k)\n"
"  --root R             root of rooted collectives (default 0)\n"
"  --fold auto|on|off   simulate one node's ranks when every rank's\n"
"                       schedule is a shift of another's (default auto)\n"
"  --max-nodes N        refuse schedules of more nodes (default 60000000)\n"
"  --verify             also run each combination (up to 256 ranks) with\n"
"                       real data through the real executor (data mode)\n"
"                       and compare every rank's buffers with those of the\n"
"                       op's first algorithm: prints data ok or DIFFERS\n"
"  --reference LIST     also simulate, at every point, the algorithm a\n"
"                       peer's nonblocking collective chooses by default,\n"
"                       as the nbcx algorithm with the same schedule:\n"
"                       mpich, openmpi-libnbc (barrier, bcast, reduce,\n"
"                       allreduce, allgather, alltoall, reduce_scatter);\n"
"                       without --alg, only those (docs/sim.md)\n"
"  --json               one JSON document on stdout (nbcx-plot sim)\n"
"  -h, --help           this text\n"
"A point nbcx cannot serve (buffers beyond its int counts) is reported\n"
"on its line and the others go on.\n"
"The automatic choice reads NBCX_TUNING (a selection table) and\n"
"NBCX_<COLL>_ALG as the library does; a bad one is bad input.\n"
"Exit status: 0 done, 2 bad input (or no point could be served), 3 too\n"
"large to simulate, 4 a bug.\n";

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("nbcx-sim: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (nbcx-sim --help)\n", stderr);
    exit(EXIT_USAGE);
}

/* "4k" -> 4096; -1 when not a size. */
static long long parse_size(const char *s)
{
    if (!s || !*s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *e;
    unsigned long long v = strtoull(s, &e, 10);
    if (errno)
        return -1;
    unsigned long long mul = 1;
    if (*e) {
        switch (tolower((unsigned char)*e)) {
        case 'k': mul = 1ull << 10; break;
        case 'm': mul = 1ull << 20; break;
        case 'g': mul = 1ull << 30; break;
        case 'b': mul = 1; break;
        default: return -1;
        }
        e++;
        if (tolower((unsigned char)e[-1]) != 'b') {
            if (strcasecmp(e, "ib") == 0 || strcasecmp(e, "b") == 0)
                e += strlen(e);
        }
        if (*e)
            return -1;
    }
    if (v > (unsigned long long)LLONG_MAX / mul)
        return -1;
    return (long long)(v * mul);
}

/* Splits a comma list into a malloc'd array of strings (in a copy). */
static char **split(const char *opt, const char *s, int *n)
{
    char *copy = strdup(s);
    int cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    char **v = malloc(sizeof(char *) * (size_t)cap);
    if (!copy || !v)
        die("out of memory");
    *n = 0;
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t;
         t = strtok_r(NULL, ",", &save))
        v[(*n)++] = t;
    if (*n == 0)
        die("%s needs a value", opt);
    return v;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
}

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

struct opts {
    char **ops, **algs, **sizes, **ranks, **refs;
    char **ops_given; /* --op's list, when "all" replaced it */
    int nops, nalgs, nsizes, nranks, nrefs;
    int rpn, root, fold, progress, split_levels, progress_cores;
    bool split_all; /* --split-levels all: S = 0..H, and the best */
    double compute;
    long long segsize;
    long long max_nodes;
    const char *params;
    bool json, verify;
};

static const char *need(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        die("%s needs a value", argv[*i]);
    return argv[++*i];
}

static void parse(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof *o);
    o->fold = NBCXI_SIM_FOLD_AUTO;
    o->progress = NBCXI_SIM_THREAD;
    const char *alg = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        char *e;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            exit(0);
        } else if (strcmp(a, "--op") == 0 || strcmp(a, "--ops") == 0) {
            o->ops = split(a, need(argc, argv, &i), &o->nops);
        } else if (strcmp(a, "--alg") == 0 || strcmp(a, "--algs") == 0) {
            alg = need(argc, argv, &i);
        } else if (strcmp(a, "--size") == 0 || strcmp(a, "--sizes") == 0) {
            o->sizes = split(a, need(argc, argv, &i), &o->nsizes);
        } else if (strcmp(a, "--ranks") == 0) {
            o->ranks = split(a, need(argc, argv, &i), &o->nranks);
        } else if (strcmp(a, "--ranks-per-node") == 0) {
            const char *v = need(argc, argv, &i);
            long x = strtol(v, &e, 10);
            if (*e || e == v || x < 1 || x > 1 << 20)
                die("--ranks-per-node %s: not a number from 1 to %d", v,
                    1 << 20);
            o->rpn = (int)x;
        } else if (strcmp(a, "--root") == 0) {
            const char *v = need(argc, argv, &i);
            long x = strtol(v, &e, 10);
            if (*e || e == v || x < 0 || x > INT_MAX)
                die("--root %s: not a rank", v);
            o->root = (int)x;
        } else if (strcmp(a, "--params") == 0) {
            o->params = need(argc, argv, &i);
        } else if (strcmp(a, "--compute-us") == 0) {
            const char *v = need(argc, argv, &i);
            o->compute = strtod(v, &e);
            if (*e || e == v || !(o->compute >= 0) || o->compute > 1e15)
                die("--compute-us %s: not a time >= 0 in microseconds", v);
        } else if (strcmp(a, "--progress") == 0) {
            const char *v = need(argc, argv, &i);
            if (strcmp(v, "thread") == 0)
                o->progress = NBCXI_SIM_THREAD;
            else if (strcmp(v, "caller") == 0)
                o->progress = NBCXI_SIM_CALLER;
            else if (strcmp(v, "split") == 0)
                o->progress = NBCXI_SIM_SPLIT;
            else
                die("--progress %s: thread, caller or split", v);
        } else if (strcmp(a, "--split-levels") == 0) {
            const char *v = need(argc, argv, &i);
            o->split_all = strcmp(v, "all") == 0;
            if (o->split_all)
                continue;
            long x = strtol(v, &e, 10);
            if (*e || e == v || x < 0 || x > 127)
                die("--split-levels %s: a number of tree levels, 0 to 127",
                    v);
            o->split_levels = (int)x;
        } else if (strcmp(a, "--progress-cores") == 0) {
            const char *v = need(argc, argv, &i);
            long x = strtol(v, &e, 10);
            if (*e || e == v || x < 0 || x > 1 << 20)
                die("--progress-cores %s: a number of cores per node, 0 to "
                    "%d", v, 1 << 20);
            o->progress_cores = (int)x;
        } else if (strcmp(a, "--segsize") == 0) {
            const char *v = need(argc, argv, &i);
            o->segsize = parse_size(v);
            if (o->segsize < 1 || o->segsize > INT_MAX)
                die("--segsize %s: not a size from 1 byte to 2g", v);
        } else if (strcmp(a, "--fold") == 0) {
            const char *v = need(argc, argv, &i);
            o->fold = strcmp(v, "auto") == 0  ? NBCXI_SIM_FOLD_AUTO
                      : strcmp(v, "on") == 0  ? NBCXI_SIM_FOLD_ON
                      : strcmp(v, "off") == 0 ? NBCXI_SIM_FOLD_OFF
                                              : -1;
            if (o->fold < 0)
                die("--fold %s: auto, on or off", v);
        } else if (strcmp(a, "--max-nodes") == 0) {
            const char *v = need(argc, argv, &i);
            o->max_nodes = strtoll(v, &e, 10);
            if (*e || e == v || o->max_nodes < 1 ||
                o->max_nodes > 4000000000LL)
                die("--max-nodes %s: a number from 1 to 4000000000", v);
        } else if (strcmp(a, "--reference") == 0 ||
                   strcmp(a, "--references") == 0) {
            o->refs = split(a, need(argc, argv, &i), &o->nrefs);
            for (int k = 0; k < o->nrefs; k++) {
                bool known = false;
                const char *n;
                for (int j = 0; (n = nbcxi_sim_reference_name(j)); j++)
                    known |= strcasecmp(n, o->refs[k]) == 0;
                if (!known)
                    die("--reference %s: no such peer (have: mpich, "
                        "openmpi-libnbc)", o->refs[k]);
            }
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--verify") == 0) {
            o->verify = true;
        } else {
            die("unknown argument '%s'", a);
        }
    }
    if (o->split_all && o->progress != NBCXI_SIM_SPLIT)
        die("--split-levels all needs --progress split");
    if (!o->ops)
        die("--op is required");
    if (!o->ranks)
        die("--ranks is required");
    if (!o->sizes) {
        static char *zero[] = { "0" };
        bool barrier_only = true;
        for (int i = 0; i < o->nops; i++)
            barrier_only &= strcasecmp(o->ops[i], "barrier") == 0;
        if (!barrier_only)
            die("--size is required");
        o->sizes = zero;
        o->nsizes = 1;
    }
    if (alg)
        o->algs = split("--alg", alg, &o->nalgs);
    else if (!o->refs) /* default auto; with --reference, the peers only */
        o->algs = split("--alg", "auto", &o->nalgs);
    /* --op all */
    for (int i = 0; i < o->nops; i++)
        if (strcasecmp(o->ops[i], "all") == 0) {
            if (o->nops != 1)
                die("--op all stands alone");
            o->ops_given = o->ops;
            o->ops = malloc(sizeof(char *) * NBCXI_NCOLL);
            if (!o->ops)
                die("out of memory");
            for (int c = 0; c < NBCXI_NCOLL; c++)
                o->ops[c] = (char *)nbcxi_coll_name(c);
            o->nops = NBCXI_NCOLL;
            break;
        }
    for (int i = 0; i < o->nops; i++) {
        int c = nbcxi_sim_coll(o->ops[i]);
        if (c < 0) {
            fprintf(stderr, "nbcx-sim: --op %s: no such collective (have:",
                    o->ops[i]);
            for (int k = 0; k < NBCXI_NCOLL; k++)
                fprintf(stderr, " %s", nbcxi_coll_name(k));
            fprintf(stderr, ")\n");
            exit(EXIT_USAGE);
        }
        for (int k = 0; k < o->nalgs; k++) {
            const char *n = o->algs[k];
            if (strcasecmp(n, "all") == 0) {
                if (o->nalgs != 1)
                    die("--alg all stands alone");
                continue;
            }
            if (!nbcxi_sim_has_alg(c, n)) {
                fprintf(stderr, "nbcx-sim: --alg %s: %s has no such "
                        "algorithm (have: auto", n, nbcxi_coll_name(c));
                const char *x;
                for (int j = 0; (x = nbcxi_sim_alg(c, j)); j++)
                    fprintf(stderr, " %s", x);
                fprintf(stderr, ")\n");
                exit(EXIT_USAGE);
            }
        }
    }
    for (int i = 0; i < o->nsizes; i++)
        if (parse_size(o->sizes[i]) < 0)
            die("--size %s: not a size (bytes, or 4k, 1m, 1g)", o->sizes[i]);
    for (int i = 0; i < o->nranks; i++) {
        char *e;
        long x = strtol(o->ranks[i], &e, 10);
        if (*e || e == o->ranks[i] || x < 1 || x > INT_MAX / 2)
            die("--ranks %s: not a number of ranks from 1 to %d",
                o->ranks[i], INT_MAX / 2);
        if (o->root >= x)
            die("--root %d: not a rank of %ld", o->root, x);
    }
}

static const char *progress_name(int p)
{
    return p == NBCXI_SIM_CALLER ? "caller"
           : p == NBCXI_SIM_SPLIT ? "split"
                                  : "thread";
}

struct row {
    const char *op, *alg_req;
    const char *ref;             /* --reference: the peer, else NULL */
    struct nbcxi_sim_ref refalg; /* its algorithm */
    int ranks, rpn;
    long long bytes;
    int rc;
    char err[512];
    struct nbcxi_sim_info info;
    struct nbcxi_sim_result pure, with;
    double overlap, wall, peak;
    int S;     /* split mode: the S simulated */
    bool best; /* --split-levels all: the best S of its sweep */
    const char *verified; /* NULL: not asked; "ok", "DIFFERS", ... */
    char verr[256];
};

/* A reference row's algorithm: "mpich=rabenseifner", "~" when a variant
 * of the peer's, the op when it differs ("...=allgatherv:linear"). */
static const char *ref_label(const struct row *r, char *buf, size_t len)
{
    const struct nbcxi_sim_ref *x = &r->refalg;
    bool other = x->coll != nbcxi_sim_coll(r->op);
    if (x->match == NBCXI_SIM_REF_NONE)
        snprintf(buf, len, "%s=%s", r->ref, x->peer_alg);
    else
        snprintf(buf, len, "%s=%s%s%s%s", r->ref,
                 other ? nbcxi_coll_name(x->coll) : "", other ? ":" : "",
                 x->alg, x->match == NBCXI_SIM_REF_VARIANT ? "~" : "");
    return buf;
}

static void print_row_text(const struct opts *o, const struct row *r)
{
    char size[32], label[160];
    snprintf(size, sizeof size, "%lld", r->bytes);
    const char *alg = r->ref ? ref_label(r, label, sizeof label)
                      : r->rc ? r->alg_req
                              : r->info.alg;
    if (r->rc) {
        printf("%-20s %-18s %8d %4d %10s  %s\n", r->op, alg, r->ranks,
               r->rpn, size, r->err);
        return;
    }
    char fold[32];
    if (r->info.period)
        snprintf(fold, sizeof fold, "fold %d%s", r->info.period,
                 r->info.approx ? "~" : "");
    else
        snprintf(fold, sizeof fold, "full");
    printf("%-20s %-18s %8d %4d %10s %12.2f %12.2f %12.2f", r->op,
           alg, r->ranks, r->rpn, size, r->pure.t_max,
           r->pure.t_median, r->pure.t_min);
    if (o->compute > 0)
        printf(" %12.2f %7.1f", r->with.t_total_max, 100 * r->overlap);
    printf(" %-9s %8.2f %8.1f", fold, r->wall, r->peak);
    if (o->progress == NBCXI_SIM_SPLIT)
        printf("  S=%d%s", r->S, r->best ? " best" : "");
    if (r->verified)
        printf("  data %s%s%s", r->verified, r->verr[0] ? ": " : "",
               r->verr);
    printf("\n");
}

static void print_header_text(const struct opts *o,
                              const struct nbcxi_sim_params *p)
{
    printf("# nbcx-sim: parameters %s (%s); progress %s", o->params,
           p->source[0] ? p->source : "no source given",
           progress_name(o->progress));
    if (o->progress == NBCXI_SIM_SPLIT && o->split_all)
        printf(" (S = 0..H, best: least t_with_comp, else t_max)");
    else if (o->progress == NBCXI_SIM_SPLIT)
        printf(" (S = %d)", o->split_levels);
    if (o->progress_cores > 0 && o->progress != NBCXI_SIM_CALLER)
        printf(", %d shared progress core(s) per node", o->progress_cores);
    if (o->compute > 0)
        printf(", computation %.2f us", o->compute);
    printf("\n# times in us from the start; t_max: the last rank done; "
           "fold N: ranks 0..N-1 simulated for all (~: sizes rounded)\n");
    printf("%-20s %-18s %8s %4s %10s %12s %12s %12s", "# op", "alg",
           "ranks", "rpn", "bytes", "t_max", "t_median", "t_min");
    if (o->compute > 0)
        printf(" %12s %7s", "t_with_comp", "ovrl%");
    printf(" %-9s %8s %8s", "sim", "wall_s", "peak_MiB");
    printf(o->progress == NBCXI_SIM_SPLIT ? "  S\n" : "\n");
}

static void print_row_json(const struct opts *o, const struct row *r,
                           bool first)
{
    printf("%s\n    {\"op\": ", first ? "" : ",");
    json_str(r->op);
    printf(", \"alg_requested\": ");
    json_str(r->alg_req);
    printf(", \"ranks\": %d, \"ranks_per_node\": %d, \"bytes\": %lld",
           r->ranks, r->rpn, r->bytes);
    if (r->ref) {
        const struct nbcxi_sim_ref *x = &r->refalg;
        printf(", \"reference\": ");
        json_str(r->ref);
        printf(", \"peer_alg\": ");
        json_str(x->peer_alg);
        printf(", \"match\": \"%s\"",
               x->match == NBCXI_SIM_REF_SAME      ? "same"
               : x->match == NBCXI_SIM_REF_VARIANT ? "variant"
                                                   : "none");
        if (x->match != NBCXI_SIM_REF_NONE) {
            printf(", \"simulated_op\": ");
            json_str(nbcxi_coll_name(x->coll));
            if (x->segsize)
                printf(", \"segsize\": %zu", x->segsize);
        }
    }
    if (r->rc) {
        printf(", \"error\": ");
        json_str(r->err);
        printf("}");
        return;
    }
    printf(", \"alg\": ");
    json_str(r->info.alg);
    printf(", \"t_max_us\": %.6g, \"t_median_us\": %.6g, \"t_min_us\": "
           "%.6g, \"t_start_us\": %.6g",
           r->pure.t_max, r->pure.t_median, r->pure.t_min,
           r->pure.t_start_max);
    if (o->compute > 0)
        printf(", \"t_with_compute_us\": %.6g, \"overlap\": %.4f",
               r->with.t_total_max, r->overlap);
    printf(", \"folded\": %d, \"approx\": %s, \"messages\": %lld, "
           "\"nodes_simulated\": %lld, \"events\": %lld, \"build_s\": %.3f,"
           " \"sim_s\": %.3f, \"wall_s\": %.3f, \"peak_rss_mib\": %.1f",
           r->info.period, r->info.approx ? "true" : "false",
           r->info.messages_total, r->info.nodes, r->pure.events,
           r->info.build_seconds, r->pure.sim_seconds + r->with.sim_seconds,
           r->wall, r->peak);
    if (o->progress == NBCXI_SIM_SPLIT)
        printf(", \"split_levels\": %d, \"split_best\": %s", r->S,
               r->best ? "true" : "false");
    if (r->verified) {
        printf(", \"verified\": ");
        json_str(r->verified);
        if (r->verr[0]) {
            printf(", \"verify_error\": ");
            json_str(r->verr);
        }
    }
    printf("}");
}

/* The data mode (nbcxi_sim_execute) of cfg against the op's first
 * algorithm's. */
static void verify(struct nbcxi_sim_config *cfg, struct row *r)
{
    if (cfg->ranks > 256) {
        r->verified = "skipped";
        snprintf(r->verr, sizeof r->verr, "more than 256 ranks");
        return;
    }
    unsigned char *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    const char *alg = cfg->alg;
    int rc = nbcxi_sim_execute(cfg, &a, &na, r->verr, sizeof r->verr);
    if (rc == NBCXI_SIM_OK) {
        cfg->alg = nbcxi_sim_alg(cfg->coll, 0);
        rc = nbcxi_sim_execute(cfg, &b, &nb, r->verr, sizeof r->verr);
        cfg->alg = alg;
    }
    if (rc != NBCXI_SIM_OK)
        r->verified = "FAILED";
    else if (na != nb || memcmp(a, b, na) != 0)
        r->verified = "DIFFERS", snprintf(r->verr, sizeof r->verr,
                                          "from %s's", nbcxi_sim_alg(cfg->coll,
                                                                     0));
    else
        r->verified = "ok", r->verr[0] = '\0';
    free(a);
    free(b);
}

static int simulate_seg(const struct opts *o,
                        const struct nbcxi_sim_params *p, struct row *r,
                        int coll, const char *alg, long long ranks,
                        long long bytes, long long segsize)
{
    struct nbcxi_sim_config cfg = {
        .coll = coll, .alg = alg, .ranks = (int)ranks,
        .ranks_per_node = o->rpn ? o->rpn : p->cores_per_node,
        .bytes = (size_t)bytes,
        .segsize = (size_t)(segsize ? segsize : o->segsize),
        .root = o->root, .max_nodes = (size_t)o->max_nodes,
        /* a shared link is simulated on every rank (simulate.c) */
        .fold = p->inter_shared && o->fold == NBCXI_SIM_FOLD_AUTO
                    ? NBCXI_SIM_FOLD_OFF
                    : o->fold,
    };
    memset(r, 0, sizeof *r);
    r->op = nbcxi_coll_name(coll);
    r->alg_req = alg;
    r->ranks = cfg.ranks;
    r->rpn = cfg.ranks_per_node;
    r->bytes = bytes;
    double t0 = now_s();
    struct nbcxi_sim_job *job;
    r->rc = nbcxi_sim_prepare(&cfg, p, &job, r->err, sizeof r->err);
    if (r->rc == NBCXI_SIM_OK) {
        nbcxi_sim_job_info(job, &r->info);
        struct nbcxi_sim_run run = { o->progress, 0, o->split_levels,
                                     o->progress_cores };
        r->S = o->split_levels;
        r->rc = nbcxi_sim_simulate_err(job, p, &run, &r->pure, r->err,
                                       sizeof r->err);
        if (r->rc == NBCXI_SIM_OK && o->compute > 0) {
            run.compute_us = o->compute;
            r->rc = nbcxi_sim_simulate_err(job, p, &run, &r->with, r->err,
                                           sizeof r->err);
            r->overlap = nbcxi_sim_overlap(r->pure.t_total_max, o->compute,
                                           r->with.t_total_max);
        }
        nbcxi_sim_free(job);
    }
    if (r->rc == NBCXI_SIM_OK && o->verify)
        verify(&cfg, r);
    r->wall = now_s() - t0;
    r->peak = peak_mib();
    return r->rc;
}

static int simulate(const struct opts *o, const struct nbcxi_sim_params *p,
                    struct row *r, int coll, const char *alg, long long ranks,
                    long long bytes)
{
    return simulate_seg(o, p, r, coll, alg, ranks, bytes, 0);
}

/* --reference: the peer's choice at this point, simulated as the nbcx
 * algorithm with its schedule (and the peer's fragment size). A choice
 * nbcx has no algorithm for is a row with an error, not a failure. */
static int simulate_ref(const struct opts *o,
                        const struct nbcxi_sim_params *p, struct row *r,
                        int coll, const char *peer, long long ranks,
                        long long bytes)
{
    struct nbcxi_sim_ref x;
    int rc = nbcxi_sim_reference(peer, coll, (int)ranks, (size_t)bytes, &x);
    if (rc == 0 && x.alg) {
        rc = simulate_seg(o, p, r, x.coll, x.alg, ranks, bytes,
                          (long long)x.segsize);
    } else {
        memset(r, 0, sizeof *r);
        r->ranks = (int)ranks;
        r->rpn = o->rpn ? o->rpn : p->cores_per_node;
        r->bytes = bytes;
        if (rc) {
            snprintf(r->err, sizeof r->err, "%s's choice for %s is not "
                     "modelled", peer, nbcxi_coll_name(coll));
            x.peer_alg = "?";
            x.match = NBCXI_SIM_REF_NONE;
        } else {
            snprintf(r->err, sizeof r->err, "%s's %s: nbcx has no such "
                     "algorithm (not modelled)", peer, x.peer_alg);
        }
        rc = r->rc = EXIT_UNMODELLED;
    }
    r->op = nbcxi_coll_name(coll);
    r->alg_req = peer;
    r->ref = peer;
    r->refalg = x;
    return rc;
}

/* --split-levels all: S = 0..H (H = ceil(log2 ranks), the binomial
 * tree's height), a row each, the best marked (least time with the
 * computation, else alone; ties: the smaller S, as the model). The rows
 * are printed once the sweep is over; *r is left as the best one (or the
 * first that failed). */
static int sweep_split(struct opts *o, const struct nbcxi_sim_params *p,
                       struct row *r, int coll, const char *alg,
                       long long ranks, long long bytes, bool *first)
{
    int h = 0;
    while (h < 31 && (1LL << h) < ranks)
        h++;
    struct row *rows = calloc((size_t)h + 1, sizeof *rows);
    if (!rows)
        die("out of memory");
    int n = 0, best = -1, rc = 0;
    for (int S = 0; S <= h; S++) {
        o->split_levels = S;
        rc = simulate(o, p, &rows[n], coll, alg, ranks, bytes);
        n++;
        if (rc)
            break;
        const struct row *x = &rows[n - 1];
        double t = o->compute > 0 ? x->with.t_total_max : x->pure.t_max;
        if (best < 0 ||
            t < (o->compute > 0 ? rows[best].with.t_total_max
                                : rows[best].pure.t_max) -
                    1e-9 * t)
            best = n - 1;
    }
    o->split_levels = 0;
    if (best >= 0 && !rc)
        rows[best].best = true;
    for (int i = 0; i < n; i++) {
        if (o->json)
            print_row_json(o, &rows[i], *first);
        else
            print_row_text(o, &rows[i]);
        *first = false;
    }
    *r = rc || best < 0 ? rows[n - 1] : rows[best];
    free(rows);
    return rc;
}

int main(int argc, char **argv)
{
    static struct opts o; /* reachable at exit(): no leak reports */
    nbcx_tool_version(argc, argv, "nbcx-sim");
    parse(argc, argv, &o);
    struct nbcxi_sim_params p;
    char err[512];
    if (!o.params) /* the installed copy, else the source tree's */
        o.params = nbcx_sim_default_params();
    if (nbcxi_sim_params_load(o.params, &p, err, sizeof err)) {
        fprintf(stderr, "nbcx-sim: --params %s\n", err);
        return EXIT_USAGE;
    }
    /* A bad NBCX_TUNING file (or NBCX_<COLL>_ALG) fails every call the
     * library makes, so every point would be "the builder failed":
     * stop before the first, with the reason (select.c printed the file's
     * line above). */
    int env = nbcxi_select_env_error();
    if (env) {
        fprintf(stderr, "nbcx-sim: NBCX_TUNING or an NBCX_<COLL>_ALG "
                "cannot be used (the message above): nothing simulated\n");
        return EXIT_USAGE;
    }
    int status = 0, simulated = 0, refused = 0;
    char last_refusal[512] = "";
    bool first = true;
    if (o.json) {
        char sched[32] = "null"; /* null: no time-sharing */
        if (p.time_share)
            snprintf(sched, sizeof sched, "%g", p.sched_latency);
        printf("{\"format\": \"nbcx-sim/1\", \"params_file\": ");
        json_str(o.params);
        printf(", \"params\": {\"source\": ");
        json_str(p.source);
        printf(", \"cores_per_node\": %d, \"intra\": {\"L\": %g, \"o\": %g, "
               "\"g\": %g, \"G\": %g}, \"inter\": {\"L\": %g, \"o\": %g, "
               "\"g\": %g, \"G\": %g}, \"copy_per_byte\": %g, "
               "\"reduce_per_byte\": %g, \"start_cost\": %g, "
               "\"node_cost\": %g, \"message_cost\": %g, "
               "\"intra_cpu_share\": %g, "
               "\"sched_latency\": %s, "
               "\"eager_limit\": %.0f, \"rndv_latency\": %g, "
               "\"cache_bytes\": %.0f, "
               "\"copy_per_byte_cached\": %g, "
               "\"reduce_per_byte_cached\": %g}",
               p.cores_per_node, p.intra.L, p.intra.o, p.intra.g, p.intra.G,
               p.inter.L, p.inter.o, p.inter.g, p.inter.G, p.copy_per_byte,
               p.reduce_per_byte, p.start_cost, p.node_cost, p.message_cost,
               p.intra_cpu_share, sched, p.eager_limit, p.rndv_latency,
               p.cache_bytes,
               p.copy_per_byte_cached, p.reduce_per_byte_cached);
        printf(", \"progress\": \"%s\", \"split_levels\": ",
               progress_name(o.progress));
        if (o.split_all)
            printf("\"all\"");
        else
            printf("%d", o.split_levels);
        printf(", \"progress_cores_per_node\": %d, \"compute_us\": %g, "
               "\"results\": [",
               o.progress_cores, o.compute);
    } else {
        print_header_text(&o, &p);
    }
    fflush(stdout);
    for (int i = 0; i < o.nops; i++) {
        int coll = nbcxi_sim_coll(o.ops[i]);
        int nalg = o.nalgs;
        bool all = nalg > 0 && strcasecmp(o.algs[0], "all") == 0;
        if (all)
            for (nalg = 0; nbcxi_sim_alg(coll, nalg); nalg++)
                ;
        /* the algorithms, then the references */
        for (int a = 0; a < nalg + o.nrefs; a++) {
            const char *ref = a >= nalg ? o.refs[a - nalg] : NULL;
            const char *alg = ref ? NULL
                              : all ? nbcxi_sim_alg(coll, a)
                                    : o.algs[a];
            for (int k = 0; k < o.nranks; k++)
                for (int s = 0; s < o.nsizes; s++) {
                    struct row r;
                    long long nr = atoll(o.ranks[k]);
                    long long nb = parse_size(o.sizes[s]);
                    int rc = ref ? simulate_ref(&o, &p, &r, coll, ref, nr, nb)
                             : o.split_all
                                 ? sweep_split(&o, &p, &r, coll, alg, nr, nb,
                                               &first)
                                 : simulate(&o, &p, &r, coll, alg, nr, nb);
                    if (ref && o.split_all) /* (the best S is not swept) */
                        r.S = o.split_levels;
                    if (!o.split_all || ref) {
                        if (o.json)
                            print_row_json(&o, &r, first);
                        else
                            print_row_text(&o, &r);
                        first = false;
                    }
                    fflush(stdout);
                    /* a point that cannot be simulated (beyond nbcx's
                     * int counts, parameters without the blocks it
                     * needs) is reported on its line; the sweep goes on */
                    if (rc == EXIT_UNMODELLED) {
                        continue;
                    } else if (rc == NBCXI_SIM_EARG) {
                        refused++;
                        snprintf(last_refusal, sizeof last_refusal, "%s",
                                 r.err);
                    } else {
                        simulated++;
                    }
                    if (r.verified && (strcmp(r.verified, "FAILED") == 0 ||
                                       strcmp(r.verified, "DIFFERS") == 0))
                        status = EXIT_BUG;
                    if (rc == NBCXI_SIM_ETOOBIG || rc == NBCXI_SIM_ENOMEM) {
                        if (status < EXIT_TOOBIG)
                            status = EXIT_TOOBIG;
                    } else if (rc && rc != NBCXI_SIM_EARG) {
                        status = EXIT_BUG;
                    }
                }
        }
    }
    if (o.json)
        printf("\n]}\n");
    if (refused && !simulated) { /* nothing could be simulated */
        fprintf(stderr, "nbcx-sim: %s\n", last_refusal);
        return EXIT_USAGE;
    }
    if (refused)
        fprintf(stderr, "nbcx-sim: %d of %d point(s) not simulated (see "
                "their lines), e.g.: %s\n", refused, refused + simulated,
                last_refusal);
    return status;
}
