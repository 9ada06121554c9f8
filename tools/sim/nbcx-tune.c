/*
 * nbcx-tune - picks the fastest algorithm (and fragment size) of each
 * collective by simulation and writes a selection table for NBCX_TUNING
 * (src/coll/tuning.c; docs/sim.md).
 *
 *   nbcx-tune --params machine.json --ops bcast,allreduce,alltoall \
 *             --ranks 2,4,8 --sizes 1k,16k,256k,4m [--segsizes 16k,64k,256k]
 *             [--ranks-per-node C] [--out table.txt] [--report]
 *
 * For every collective, number of ranks and size of the grid it simulates
 * every algorithm of the core table (nbcxi_sim_alg; the k-nomial trees at
 * radices 3 to 8) with every fragment
 * size, under the parameter file (nbcx-loggp's measurements), and keeps
 * the fastest completion (t_max: the last rank done, no computation). A
 * grid point's choice holds halfway, geometrically, to its neighbours:
 * the rules cover every rank count and size, the first from 1 rank and 0
 * bytes, the last to "*". Neighbouring ranges with the same choice are
 * merged. A fragment size is written only when it changes the predicted
 * time of that algorithm (0 otherwise: NBCX_SEGSIZE stays in force).
 *
 * The model is not exact: the built-in choice stays unless the fastest
 * is predicted --min-gain times faster (default 1.05; on the emulated
 * network a 1 % predicted gain of ring over bruck allgather at 1 KiB was
 * a 1.3-2x loss measured, docs/results/sim/).
 *
 * --report prints, per grid point, the choice and its predicted time
 * beside the built-in choice's (the hand thresholds of coll/select.c,
 * simulated the same way): the gain the table promises on this model.
 *
 * --split writes split-progress rules instead (`split COLL RANKS BYTES
 * S`, coll/tuning.c): for each of the split mode's collectives (bcast,
 * reduce, gather, scatter on binomial trees, allreduce as reduce + bcast)
 * and grid point it simulates the split mode with S = 0..H, H the tree
 * height, with --progress-cores K shared progress cores per node (0: one
 * per rank) and a computation of --compute-us µs between start and wait
 * (default: the blocking time of the same collective, the paper's
 * assumption and the split model's), and keeps the S whose last wait
 * returns first (ties: the smaller S). mode_split.c uses it unless
 * NBCX_SPLIT_LEVELS forces S.
 *
 * Exit status: 0 done; 2 bad input (nothing written); 3 some point could
 * not be simulated (too large: reported, left to the built-in choice);
 * 4 a schedule could not be built or matched (a bug).
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "coll/coll.h"
#include "progress/progress.h"
#include "model/sim/sim.h"
#include "params_path.h"
#include "../common/tool_args.h"

#ifndef NBCX_SIM_DEFAULT_PARAMS
#define NBCX_SIM_DEFAULT_PARAMS "default.json"
#endif

enum { EXIT_USAGE = 2, EXIT_TOOBIG = 3, EXIT_BUG = 4 };
enum { MAXLIST = 64 };

static const char usage[] =
"usage: nbcx-tune --params FILE [--ops LIST|all] [--ranks LIST]\n"
"                 [--sizes LIST] [--segsizes LIST] [--ranks-per-node LIST]\n"
"                 [--ranks-from N] [--out FILE] [--report]\n"
"Picks the fastest algorithm of each collective by simulation (the LogGP\n"
"model of nbcx-sim) and writes a selection table for NBCX_TUNING.\n"
"  --params FILE        parameter file, format nbcx-loggp/1 (default:\n"
"                       share/nbcx/sim/default.json of the installation,\n"
"                       from a build tree tools/sim/params/default.json)\n"
"  --ops LIST           collectives (default: bcast, reduce, allreduce,\n"
"                       gather, scatter, allgather, alltoall,\n"
"                       reduce_scatter_block, scan; all: every one but\n"
"                       the neighbourhood collectives)\n"
"  --ranks LIST         numbers of ranks of the grid (default 2,4,8,16,64)\n"
"  --sizes LIST         bytes of the grid: the buffer (bcast, reductions)\n"
"                       or one block (gather, alltoall, ...); k, m, g\n"
"                       suffixes (default 8,1k,16k,256k,4m)\n"
"  --segsizes LIST      fragment sizes tried for pipelined algorithms\n"
"                       (default 16k,64k,256k)\n"
"  --ranks-per-node LIST  ranks per node (default: the file's\n"
"                       cores_per_node); several values: the rules get a\n"
"                       ranks-per-node column (format nbcx-tune/2), each\n"
"                       value's choice holding halfway to its neighbours\n"
"  --ranks-from N       the rules cover N ranks and more (default 1)\n"
"  --min-gain R         keep the built-in choice unless the fastest is\n"
"                       predicted R times faster (default 1.05: the\n"
"                       model's error; 1: always the fastest)\n"
"  --out FILE           the table (default: standard output)\n"
"  --report             per grid point: choice, predicted time, and the\n"
"                       built-in choice's (on standard error with --out -)\n"
"  --split              split-progress rules instead: the S (binomial-tree\n"
"                       levels on the application) the simulation of split\n"
"                       mode finds fastest (default ops: bcast, reduce,\n"
"                       gather, scatter, allreduce)\n"
"  --progress-cores K   --split: K progress cores per node shared by its\n"
"                       ranks (default 0: one per rank)\n"
"  --compute-us C       --split: the computation between start and wait\n"
"                       (default: the blocking time of the collective)\n"
"  -h, --help           this text\n"
"Exit status: 0 done, 2 bad input, 3 some point too large to simulate,\n"
"4 a bug.\n";

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("nbcx-tune: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (nbcx-tune --help)\n", stderr);
    exit(EXIT_USAGE);
}

/* "4k" -> 4096; -1 when not a size (k, m, g: powers of 1024). */
static long long parse_size(const char *s)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *e;
    unsigned long long v = strtoull(s, &e, 10);
    unsigned long long mul = 1;
    switch (tolower((unsigned char)*e)) {
    case 'k': mul = 1ull << 10; e++; break;
    case 'm': mul = 1ull << 20; e++; break;
    case 'g': mul = 1ull << 30; e++; break;
    default: break;
    }
    if (errno || *e || v > (unsigned long long)LLONG_MAX / mul)
        return -1;
    return (long long)(v * mul);
}

/* A comma list of sizes (or numbers), ascending and distinct. */
static int parse_list(const char *opt, const char *s, long long *out,
                      long long min, long long max)
{
    char *copy = strdup(s);
    if (!copy)
        die("out of memory");
    int n = 0;
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t;
         t = strtok_r(NULL, ",", &save)) {
        long long v = parse_size(t);
        if (v < min || v > max)
            die("%s: '%s' is not a value from %lld to %lld", opt, t, min,
                max);
        if (n == MAXLIST)
            die("%s: more than %d values", opt, MAXLIST);
        if (n > 0 && v <= out[n - 1])
            die("%s: values must ascend ('%s')", opt, t);
        out[n++] = v;
    }
    free(copy);
    if (n == 0)
        die("%s needs a value", opt);
    return n;
}

static const char *default_ops[] = { "bcast", "reduce", "allreduce",
                                     "gather", "scatter", "allgather",
                                     "alltoall", "reduce_scatter_block",
                                     "scan" };

struct choice {
    const char *alg; /* NULL: not simulated (too large) */
    size_t segsize;  /* 0: the default */
    double t;        /* predicted, µs */
    char builtin[64];
    double t_builtin;
};

/* A configuration that could not be built or simulated (rc, err): -1
 * when it is too large (*status raised) or its algorithm cannot serve
 * the point; exits on a bug. */
static double failed(const struct nbcxi_sim_config *cfg, int rc,
                     const char *err, int *status)
{
    if (rc == NBCXI_SIM_ETOOBIG || rc == NBCXI_SIM_ENOMEM) {
        fprintf(stderr, "nbcx-tune: %s %s on %d ranks, %zu bytes: %s\n",
                nbcxi_coll_name(cfg->coll), cfg->alg ? cfg->alg : "auto",
                cfg->ranks, cfg->bytes, err);
        if (*status < EXIT_TOOBIG)
            *status = EXIT_TOOBIG;
        return -1;
    }
    if (rc == NBCXI_SIM_EARG && cfg->alg) /* not a candidate here (a vector
                                            beyond int, say) */
        return -1;
    fprintf(stderr, "nbcx-tune: %s %s on %d ranks, %zu bytes: %s\n",
            nbcxi_coll_name(cfg->coll), cfg->alg ? cfg->alg : "auto",
            cfg->ranks, cfg->bytes, err);
    exit(EXIT_BUG);
}

/* cfg's schedules in *job: 0, else -1 as failed(). */
static int build(const struct nbcxi_sim_config *cfg,
                 const struct nbcxi_sim_params *par,
                 struct nbcxi_sim_job **job, int *status)
{
    char err[512];
    int rc = nbcxi_sim_prepare(cfg, par, job, err, sizeof err);
    if (!rc)
        return 0;
    failed(cfg, rc, err, status);
    return -1;
}

/* The predicted time of job (cfg's; thread progress, no computation),
 * <0 as failed(). */
static double run_job(const struct nbcxi_sim_config *cfg,
                      struct nbcxi_sim_job *job,
                      const struct nbcxi_sim_params *par, int *status)
{
    struct nbcxi_sim_run run = { .progress = NBCXI_SIM_THREAD,
                                 .compute_us = 0 };
    struct nbcxi_sim_result res;
    char err[512];
    int rc = nbcxi_sim_simulate_err(job, par, &run, &res, err, sizeof err);
    return rc ? failed(cfg, rc, err, status) : res.t_max;
}

/* One configuration's predicted time; <0 when too large to simulate
 * (*status raised), exits on a bug. A schedule the same as `same`'s
 * (not NULL: simulated already, in time t_same) is not simulated again:
 * the simulation is a function of the schedule alone. */
static double simulate(const struct nbcxi_sim_config *cfg,
                       const struct nbcxi_sim_params *par,
                       const struct nbcxi_sim_job *same, double t_same,
                       int *status)
{
    struct nbcxi_sim_job *job;
    if (build(cfg, par, &job, status))
        return -1;
    double t = same && nbcxi_sim_job_same(same, job)
                   ? t_same
                   : run_job(cfg, job, par, status);
    nbcxi_sim_free(job);
    return t;
}

/* The i-th candidate algorithm of coll: those of the core table, with
 * "knomial" tried at every radix, knomial3 .. knomial8 (knomial2 is the
 * binomial tree); NULL past the last. */
static const char *candidate(int coll, int i)
{
    const char *alg;
    for (int j = 0; (alg = nbcxi_sim_alg(coll, j)); j++) {
        if (strcmp(alg, "knomial") != 0) {
            if (i-- == 0)
                return alg;
            continue;
        }
        for (int k = 3; k <= NBCXI_KNOMIAL_MAX; k++)
            if (i-- == 0)
                return nbcxi_knomial_name(k);
    }
    return NULL;
}

/* Candidate cfg->alg's best time and fragment size (*seg; cfg->segsize
 * is left changed), <0 when it cannot be simulated here. Its schedules
 * are built at every fragment size, but simulated only where they differ
 * from its default fragment's (most algorithms do not cut their
 * messages). *builtin (not NULL: the built-in choice's schedules, whose
 * algorithm this candidate is) is simulated only if it differs from
 * this candidate's at the default fragment, its time put in *t_builtin,
 * and freed before the other fragment sizes are built. */
static double candidate_time(struct nbcxi_sim_config *cfg,
                             const long long *segs, int nsegs,
                             const struct nbcxi_sim_params *par,
                             struct nbcxi_sim_job **builtin,
                             double *t_builtin, size_t *seg, int *status)
{
    struct nbcxi_sim_job *job0;
    double t0 = -1;
    cfg->segsize = 0;
    if (!build(cfg, par, &job0, status))
        t0 = run_job(cfg, job0, par, status);
    else
        job0 = NULL;
    if (*builtin) {
        struct nbcxi_sim_config auto_cfg = *cfg;
        auto_cfg.alg = NULL;
        *t_builtin = t0 >= 0 && nbcxi_sim_job_same(*builtin, job0)
                         ? t0
                         : run_job(&auto_cfg, *builtin, par, status);
        nbcxi_sim_free(*builtin);
        *builtin = NULL;
    }
    if (t0 < 0) {
        nbcxi_sim_free(job0);
        return -1;
    }
    double t_best = t0;
    *seg = 0;
    for (int s = 0; s < nsegs; s++) {
        cfg->segsize = (size_t)segs[s];
        double t = simulate(cfg, par, job0, t0, status);
        /* a fragment size only when it matters (1 ns) */
        if (t >= 0 && t < t_best - 1e-3) {
            t_best = t;
            *seg = (size_t)segs[s];
        }
    }
    nbcxi_sim_free(job0);
    return t_best;
}

/* The fastest algorithm and fragment size at one grid point, and the
 * built-in choice's time. The built-in choice is built first, and its
 * algorithm's candidate tried first: at the default fragment their
 * schedules are mostly the same, then simulated once (a simulation is
 * a function of the schedule). Ties go to the earlier candidate. */
static struct choice best_at(int coll, int p, int rpn, size_t bytes,
                             const long long *segs, int nsegs,
                             const struct nbcxi_sim_params *par,
                             double min_gain, int *status)
{
    struct choice c = { .alg = NULL, .t = INFINITY, .t_builtin = -1 };
    struct nbcxi_sim_config cfg = { .coll = coll, .ranks = p,
                                    .ranks_per_node = rpn, .bytes = bytes,
                                    .fold = par->inter_shared
                                                ? NBCXI_SIM_FOLD_OFF
                                                : NBCXI_SIM_FOLD_AUTO };
    struct nbcxi_sim_job *builtin; /* cfg.alg NULL: the built-in choice */
    struct nbcxi_sim_info info = { .alg = "" };
    if (!build(&cfg, par, &builtin, status))
        nbcxi_sim_job_info(builtin, &info);
    else
        builtin = NULL;
    const char *alg;
    int first = -1, c_i = -1; /* the built-in's candidate; the best's */
    for (int i = 0; builtin && (alg = candidate(coll, i)); i++)
        if (strcmp(alg, info.alg) == 0) {
            first = i;
            break;
        }
    struct nbcxi_sim_job *none = NULL;
    for (int k = first >= 0 ? -1 : 0;; k++) {
        int i = k < 0 ? first : k; /* the built-in's candidate first */
        if (k >= 0 && i == first)
            continue;
        if (!(alg = candidate(coll, i)))
            break;
        cfg.alg = alg;
        size_t seg;
        double t = candidate_time(&cfg, segs, nsegs, par,
                                  i == first ? &builtin : &none,
                                  &c.t_builtin, &seg, status);
        if (t >= 0 && (t < c.t || (t == c.t && i < c_i))) {
            c.t = t;
            c.alg = alg;
            c.segsize = seg;
            c_i = i;
        }
    }
    if (builtin) { /* no candidate of its name */
        cfg.alg = NULL;
        cfg.segsize = 0;
        c.t_builtin = run_job(&cfg, builtin, par, status);
        nbcxi_sim_free(builtin);
    }
    if (c.t_builtin >= 0)
        snprintf(c.builtin, sizeof c.builtin, "%s", info.alg);
    /* The model is not exact: the built-in choice stays unless the best
     * is predicted at least min_gain times faster. */
    if (c.alg && c.t_builtin > 0 && c.t_builtin < c.t * min_gain) {
        for (int i = 0; (alg = candidate(coll, i)); i++)
            if (strcmp(alg, c.builtin) == 0) {
                c.alg = alg;
                c.segsize = 0;
                c.t = c.t_builtin;
            }
    }
    return c;
}

/* --split at one grid point: the S whose last wait returns first (the
 * smaller S on ties), -1 when too large to simulate; *t its time. */
static int split_at(int coll, int p, int rpn, size_t bytes, int cores,
                    double compute, const struct nbcxi_sim_params *par,
                    double *t, int *status)
{
    struct nbcxi_sim_config cfg = {
        .coll = coll, .alg = nbcxi_split_mode.algorithm(coll), .ranks = p,
        .ranks_per_node = rpn, .bytes = bytes,
        .fold = par->inter_shared ? NBCXI_SIM_FOLD_OFF : NBCXI_SIM_FOLD_AUTO };
    struct nbcxi_sim_job *job;
    char err[512];
    int rc = nbcxi_sim_build(&cfg, &job, err, sizeof err);
    if (rc == NBCXI_SIM_ETOOBIG || rc == NBCXI_SIM_ENOMEM) {
        fprintf(stderr, "nbcx-tune: split %s on %d ranks, %zu bytes: %s\n",
                nbcxi_coll_name(coll), p, bytes, err);
        if (*status < EXIT_TOOBIG)
            *status = EXIT_TOOBIG;
        return -1;
    }
    if (rc) {
        fprintf(stderr, "nbcx-tune: split %s on %d ranks, %zu bytes: %s\n",
                nbcxi_coll_name(coll), p, bytes, err);
        exit(EXIT_BUG);
    }
    struct nbcxi_sim_result res;
    struct nbcxi_sim_run run = { NBCXI_SIM_CALLER, 0, 0, 0 };
    rc = nbcxi_sim_simulate(job, par, &run, &res); /* blocking */
    if (compute < 0)
        compute = res.t_max;
    int h = 0;
    while (h < 31 && (1LL << h) < p)
        h++;
    int best = -1;
    for (int S = 0; S <= h && !rc; S++) {
        run = (struct nbcxi_sim_run){ NBCXI_SIM_SPLIT, compute, S, cores };
        rc = nbcxi_sim_simulate(job, par, &run, &res);
        if (!rc && (best < 0 || res.t_total_max < *t * (1 - 1e-9))) {
            best = S;
            *t = res.t_total_max;
        }
    }
    nbcxi_sim_free(job);
    if (rc) {
        fprintf(stderr, "nbcx-tune: split %s on %d ranks: simulation "
                "failed (%d)\n", nbcxi_coll_name(coll), p, rc);
        exit(EXIT_BUG);
    }
    return best;
}

/* The boundary between grid values a < b: their geometric mean, rounded
 * up, so that a's range is [.., m - 1] and b's [m, ..]. */
static long long boundary(long long a, long long b)
{
    long long m = (long long)ceil(sqrt((double)(a > 0 ? a : 1) * (double)b));
    if (m <= a)
        m = a + 1;
    if (m > b)
        m = b;
    return m;
}

static void range(char *buf, size_t len, long long lo, long long hi)
{
    if (hi < 0)
        snprintf(buf, len, "%lld-*", lo);
    else if (lo == hi)
        snprintf(buf, len, "%lld", lo);
    else
        snprintf(buf, len, "%lld-%lld", lo, hi);
}

/* The rule range of grid point i of a sorted list v of n values: from
 * the boundary with the previous point (first: `first`) to the one
 * with the next, minus one ("*" after the last). */
static void grid_range(char *buf, size_t len, const long long *v, int n,
                       int i, long long first)
{
    long long lo = i == 0 ? first : boundary(v[i - 1], v[i]);
    long long hi = i + 1 < n ? boundary(v[i], v[i + 1]) - 1 : -1;
    range(buf, len, lo, hi);
}

/* The byte range of sizes[si..sj], a run of equal choices merged. */
static void bytes_range(char *buf, size_t len, const long long *sizes,
                        int nsizes, int si, int sj)
{
    long long lo = si == 0 ? 0 : boundary(sizes[si - 1], sizes[si]);
    long long hi = sj + 1 < nsizes ? boundary(sizes[sj], sizes[sj + 1]) - 1
                                   : -1;
    range(buf, len, lo, hi);
}

/* --split: the rules of every collective, merged over sizes as the
 * algorithm rules are. */
static int tune_split(FILE *out, const int *colls, int ncolls,
                      const long long *ranks, int nranks,
                      long long ranks_from, const long long *sizes, int nsizes, int rpn, int cores,
                      double compute, const struct nbcxi_sim_params *par,
                      FILE *rep)
{
    int status = 0;
    int *S = calloc((size_t)nsizes, sizeof *S);
    if (!S)
        die("out of memory");
    if (rep)
        fprintf(rep, "# %-20s %7s %10s %3s %12s\n", "coll", "ranks",
                "bytes", "S", "t_us");
    for (int ci = 0; ci < ncolls; ci++) {
        int coll = colls[ci];
        if (!nbcxi_split_mode.algorithm(coll)) {
            fprintf(stderr, "nbcx-tune: --split: split mode does not split "
                            "%s; skipped\n", nbcxi_coll_name(coll));
            continue;
        }
        for (int ri = 0; ri < nranks; ri++) {
            int p = (int)ranks[ri];
            for (int si = 0; si < nsizes; si++) {
                double t = 0;
                S[si] = split_at(coll, p, rpn, (size_t)sizes[si], cores,
                                 compute, par, &t, &status);
                if (rep && S[si] >= 0)
                    fprintf(rep, "  %-20s %7d %10lld %3d %12.2f\n",
                            nbcxi_coll_name(coll), p, sizes[si], S[si], t);
            }
            char pr[48];
            grid_range(pr, sizeof pr, ranks, nranks, ri, ranks_from);
            for (int si = 0; si < nsizes;) {
                int sj = si;
                while (sj + 1 < nsizes && S[sj + 1] == S[si])
                    sj++;
                if (S[si] >= 0) {
                    char br[64];
                    bytes_range(br, sizeof br, sizes, nsizes, si, sj);
                    fprintf(out, "split %-14s %-12s %-22s %d\n",
                            nbcxi_coll_name(coll), pr, br, S[si]);
                }
                si = sj + 1;
            }
        }
    }
    free(S);
    return status;
}

int main(int argc, char **argv)
{
    nbcx_tool_version(argc, argv, "nbcx-tune");
    const char *params = NULL, *out_path = NULL;
    const char *ops_arg = NULL;
    long long ranks[MAXLIST], sizes[MAXLIST], segs[MAXLIST];
    int nranks = parse_list("--ranks", "2,4,8,16,64", ranks, 1, INT_MAX);
    int nsizes = parse_list("--sizes", "8,1k,16k,256k,4m", sizes, 0,
                            1ll << 40);
    int nsegs = parse_list("--segsizes", "16k,64k,256k", segs, 1, 1ll << 40);
    long long rpns[MAXLIST];
    int nrpn = 0, cores = 0;
    long long ranks_from = 1;
    double compute = -1;
    bool report = false, split = false;
    double min_gain = 1.05;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            return 0;
        }
        if (strcmp(a, "--report") == 0) {
            report = true;
            continue;
        }
        if (strcmp(a, "--split") == 0) {
            split = true;
            continue;
        }
        static const char *const with_value[] = {
            "--params", "--ops", "--ranks", "--sizes", "--segsizes",
            "--ranks-per-node", "--out", "--progress-cores",
            "--compute-us", "--min-gain", "--ranks-from" };
        bool known = false;
        for (size_t k = 0; k < sizeof with_value / sizeof *with_value; k++)
            known = known || strcmp(a, with_value[k]) == 0;
        if (!known)
            die("unknown option '%s'", a);
        if (i + 1 >= argc)
            die("%s needs a value", a);
        const char *v = argv[++i];
        if (strcmp(a, "--params") == 0)
            params = v;
        else if (strcmp(a, "--ops") == 0)
            ops_arg = v;
        else if (strcmp(a, "--ranks") == 0)
            nranks = parse_list(a, v, ranks, 1, INT_MAX);
        else if (strcmp(a, "--sizes") == 0)
            nsizes = parse_list(a, v, sizes, 0, 1ll << 40);
        else if (strcmp(a, "--segsizes") == 0)
            nsegs = parse_list(a, v, segs, 1, 1ll << 40);
        else if (strcmp(a, "--ranks-per-node") == 0)
            nrpn = parse_list(a, v, rpns, 1, INT_MAX);
        else if (strcmp(a, "--ranks-from") == 0) {
            ranks_from = parse_size(v);
            if (ranks_from < 1 || ranks_from > INT_MAX)
                die("--ranks-from: '%s' is not a positive number", v);
        } else if (strcmp(a, "--progress-cores") == 0) {
            long long k = parse_size(v);
            if (k < 0 || k > 1 << 20)
                die("--progress-cores: '%s' is not a number of cores", v);
            cores = (int)k;
        } else if (strcmp(a, "--compute-us") == 0) {
            char *e;
            compute = strtod(v, &e);
            if (*e || e == v || !(compute >= 0) || compute > 1e15)
                die("--compute-us: '%s' is not a time >= 0 in us", v);
        } else if (strcmp(a, "--min-gain") == 0) {
            char *end;
            min_gain = strtod(v, &end);
            if (*end || !(min_gain >= 1.0) || min_gain > 100)
                die("--min-gain: '%s' is not a ratio from 1 to 100", v);
        } else /* --out */
            out_path = v;
    }

    int colls[NBCXI_NCOLL], ncolls = 0;
    if (!ops_arg && split) {
        for (int c = 0; c < NBCXI_NCOLL; c++)
            if (nbcxi_split_mode.algorithm(c))
                colls[ncolls++] = c;
    } else if (!ops_arg) {
        for (size_t i = 0; i < sizeof default_ops / sizeof *default_ops; i++)
            colls[ncolls++] = nbcxi_sim_coll(default_ops[i]);
    } else if (strcmp(ops_arg, "all") == 0) {
        for (int c = 0; c < NBCXI_NCOLL; c++)
            if (strncmp(nbcxi_coll_name(c), "neighbor", 8) != 0)
                colls[ncolls++] = c;
    } else {
        char *copy = strdup(ops_arg);
        for (char *save = NULL, *t = strtok_r(copy, ",", &save); t;
             t = strtok_r(NULL, ",", &save)) {
            int c = nbcxi_sim_coll(t);
            if (c < 0)
                die("--ops: unknown collective '%s'", t);
            if (strncmp(t, "neighbor", 8) == 0)
                die("--ops: %s depends on the topology: not tuned", t);
            if (ncolls == NBCXI_NCOLL)
                die("--ops: too many");
            colls[ncolls++] = c;
        }
        free(copy);
    }

    if (!params) /* the installed copy, else the source tree's */
        params = nbcx_sim_default_params();
    struct nbcxi_sim_params par;
    char err[512];
    if (nbcxi_sim_params_load(params, &par, err, sizeof err) != 0)
        die("%s", err);
    if (nrpn == 0)
        rpns[nrpn++] = par.cores_per_node > 0 ? par.cores_per_node : 1;
    if (nrpn > 1 && split)
        die("--split tunes one number of ranks per node");
    if (ranks_from > ranks[0])
        die("--ranks-from %lld: above the grid's first rank count %lld",
            ranks_from, ranks[0]);
    /* The built-in choice each point is compared with is the library's,
     * which reads NBCX_TUNING and NBCX_<COLL>_ALG: a bad one fails every
     * point ("the builder failed"), so stop before the first, and before
     * --out is written (tuning.c or select.c printed the reason). */
    if (nbcxi_select_env_error()) {
        fprintf(stderr, "nbcx-tune: NBCX_TUNING or an NBCX_<COLL>_ALG "
                        "cannot be used (the message above): nothing "
                        "tuned\n");
        return EXIT_USAGE;
    }
    const int rpn = (int)rpns[0]; /* (one value: the nbcx-tune/1 format) */
    const bool rpn_column = nrpn > 1;

    FILE *out = stdout;
    if (out_path && strcmp(out_path, "-") != 0) {
        out = fopen(out_path, "w");
        if (!out)
            die("--out %s: %s", out_path, strerror(errno));
    }
    FILE *rep = out == stdout ? stderr : stdout;
    int status = 0;

    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(out, "# nbcx-tune/%d %s\n# params: %s\n# source: %s\n",
            rpn_column ? 2 : 1, date, params, par.source);
    fprintf(out, "# grid: ranks");
    for (int i = 0; i < nranks; i++)
        fprintf(out, "%s%lld", i ? "," : " ", ranks[i]);
    fprintf(out, ", bytes");
    for (int i = 0; i < nsizes; i++)
        fprintf(out, "%s%lld", i ? "," : " ", sizes[i]);
    if (rpn_column) {
        fprintf(out, ", ranks per node");
        for (int i = 0; i < nrpn; i++)
            fprintf(out, "%s%lld", i ? "," : " ", rpns[i]);
    } else {
        fprintf(out, ", %d ranks per node", rpn);
    }
    fprintf(out, "; each choice holds halfway (geometrically) to its "
                 "neighbours\n");
    if (split) {
        fprintf(out, "# split rules: %d progress core(s) per node%s, "
                     "computation %s\n",
                cores, cores ? "" : " (0: one per rank)",
                compute < 0 ? "= the blocking collective's time" : "given");
        if (compute >= 0)
            fprintf(out, "# computation %g us\n", compute);
        fprintf(out, "# split coll ranks bytes S\n");
        int status = tune_split(out, colls, ncolls, ranks, nranks,
                                ranks_from, sizes, nsizes, rpn, cores,
                                compute, &par, report ? rep : NULL);
        if (out != stdout && fclose(out) != 0) {
            fprintf(stderr, "nbcx-tune: --out %s: %s\n", out_path,
                    strerror(errno));
            return EXIT_USAGE;
        }
        return status;
    }
    fprintf(out, "# coll ranks%s bytes algorithm segsize\n",
            rpn_column ? " rpn" : "");
    if (report) /* (the rpn column only where the table has one) */
        fprintf(rep, "# %-20s %7s%s %10s  %-24s %12s  %-24s %12s %6s\n",
                "coll", "ranks", rpn_column ? "   rpn" : "", "bytes",
                "choice", "t_us", "built-in", "t_us", "gain");

    struct choice *row = calloc((size_t)nsizes, sizeof *row);
    if (!row)
        die("out of memory");
    for (int ci = 0; ci < ncolls; ci++) {
        int coll = colls[ci];
        for (int ri = 0; ri < nranks; ri++)
        for (int ni = 0; ni < nrpn; ni++) {
            int p = (int)ranks[ri];
            int node = (int)rpns[ni];
            for (int si = 0; si < nsizes; si++) {
                row[si] = best_at(coll, p, node, (size_t)sizes[si], segs,
                                  nsegs, &par, min_gain, &status);
                char rc[16] = "";
                if (rpn_column)
                    snprintf(rc, sizeof rc, " %5d", node);
                if (report && row[si].alg)
                    fprintf(rep,
                            "  %-20s %7d%s %10lld  %-17s %6zu %12.2f  "
                            "%-24s %12.2f %5.2fx\n",
                            nbcxi_coll_name(coll), p, rc, sizes[si],
                            row[si].alg, row[si].segsize, row[si].t,
                            row[si].builtin, row[si].t_builtin,
                            row[si].t > 0 ? row[si].t_builtin / row[si].t
                                          : 1.0);
            }
            char pr[48], nr[48] = "";
            grid_range(pr, sizeof pr, ranks, nranks, ri, ranks_from);
            if (rpn_column) {
                char r[40];
                grid_range(r, sizeof r, rpns, nrpn, ni, 1);
                snprintf(nr, sizeof nr, " %-8s", r);
            }
            /* runs of equal choices, merged */
            for (int si = 0; si < nsizes;) {
                int sj = si;
                while (sj + 1 < nsizes && row[sj + 1].alg == row[si].alg &&
                       row[sj + 1].segsize == row[si].segsize)
                    sj++;
                if (row[si].alg) {
                    char br[64];
                    bytes_range(br, sizeof br, sizes, nsizes, si, sj);
                    fprintf(out, "%-20s %-12s%s %-22s %-20s %zu\n",
                            nbcxi_coll_name(coll), pr, nr, br, row[si].alg,
                            row[si].segsize);
                }
                si = sj + 1;
            }
        }
    }
    free(row);
    if (out != stdout && fclose(out) != 0) {
        fprintf(stderr, "nbcx-tune: --out %s: %s\n", out_path,
                strerror(errno));
        return EXIT_USAGE;
    }
    return status;
}
