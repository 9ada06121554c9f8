/*
 * options.c - the command line of nbcx-bench.
 *
 * With MPI every rank parses the same argv, so every rank reaches the
 * same verdict without communicating; the driver prints the message on
 * rank 0 only.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define DEFAULT_MIN_SIZE ((size_t)4)
#define DEFAULT_MAX_SIZE ((size_t)16 << 20)
#define DEFAULT_BUDGET 0.2
#define DEFAULT_WARMUP 2
#define MAX_COUNT_OPTION 1000000
#define DEFAULT_RANKS 4
#define DEFAULT_TRANSPORT (NBCX_BENCH_MPI ? TRANSPORT_MPI : TRANSPORT_INPROC)

void options_usage(FILE *f)
{
    fprintf(f,
"Usage: mpiexec -n RANKS nbcx-bench [options]            (MPI)\n"
"       nbcx-bench --transport inproc [--ranks N] [options]   (no MPI)\n"
"\n"
"Measures nonblocking collectives against a blocking reference. For each\n"
"operation and size, in the same run and on the same inputs:\n"
"  t_block   the blocking reference: with MPI the MPI library's blocking\n"
"            collective; inproc, nbcx's blocking-style use (start + wait\n"
"            at once in --block-progress mode)\n"
"  t_pure    start, then wait at once (with MPI: native MPI_I... and nbcx;\n"
"            inproc: nbcx, paper 000's 'nbc')\n"
"  t_cpu     a floating-point loop calibrated on each rank to last t_pure\n"
"            (or t_block: --compute), timed alone right before each t_ovrl\n"
"  t_ovrl    start, compute t_cpu (with --tests K test calls), wait\n"
"            (paper 000's 'nbc+overlap')\n"
"  overlap   max(0, min(1, (t_pure + t_cpu - t_ovrl) / min(t_pure, t_cpu)))\n"
"  overhead  time inside the start, test and wait calls during t_ovrl:\n"
"            the communication time of nbc+overlap ('comm' inproc)\n"
"  cpu       CPU time of the process's other threads during t_ovrl, over\n"
"            t_ovrl's wall time (progress threads; 0 in caller mode; inproc\n"
"            the rank threads do not count)\n"
"Each figure is the maximum over ranks of one repetition; the table shows\n"
"the median over repetitions (the JSON also min, max and every value).\n"
"Every result of nbcx is checked before timing: with MPI against native\n"
"MPI's, inproc (blocking and nonblocking) against a sequential reference.\n"
"\n"
"Options:\n"
"  --op LIST         operations, comma-separated, or 'all' (default):\n"
"                    ibarrier ibcast ireduce iallreduce igather iscatter\n"
"                    iallgather ialltoall igatherv iscatterv iallgatherv\n"
"                    ialltoallv ireduce_scatter_block iscan iexscan\n"
"                    ireduce_scatter ialltoallw ineighbor_allgather\n"
"                    ineighbor_allgatherv ineighbor_alltoall\n"
"                    ineighbor_alltoallv ineighbor_alltoallw (on a\n"
"                    periodic ring: a Cartesian grid of 1 dimension)\n"
"  --sizes LIST      message sizes in bytes, comma-separated; suffixes\n"
"                    k, m, g are powers of 1024 (4,64,1k,1M)\n"
"                    (default: powers of two from --min-size to --max-size)\n"
"  --min-size N      smallest size (default 4; with --sizes: a filter)\n"
"  --max-size N      largest size (default 16M; with --sizes: a filter)\n"
"  --reps N          repetitions of every measurement (default: automatic)\n"
"  --budget SEC      automatic repetitions, per operation and size:\n"
"                    reps = clamp(ceil(SEC / t), %d, %d), where t is the\n"
"                    slowest of the blocking and nonblocking runs in the\n"
"                    last warm-up round (max over ranks). Each variant's\n"
"                    series then lasts about SEC, one operation at one size\n"
"                    about 9 SEC in all with MPI (default %.1f)\n"
"  --warmup N        discarded runs of every variant before timing\n"
"                    (default %d)\n"
"  --tests K         K test calls spread evenly through the computation\n"
"                    of t_ovrl (default 0)\n"
"  --compute WHAT    what the computation of t_ovrl lasts: 'pure' (default),\n"
"                    each implementation's median t_pure, as IMB-NBC; or\n"
"                    'block', the median t_block of the blocking collective\n"
"                    for both, as the split-tree paper (Denis et al.)\n"
"  --transport T     'mpi': ranks are MPI processes, run under mpiexec\n"
"                    %s\n"
"                    'inproc': ranks are threads of this process, no MPI,\n"
"                    no mpiexec%s\n"
"  --ranks N         inproc: thread ranks (default %d)\n"
"  --block-progress M  inproc: progress mode of the blocking variant:\n"
"                    'caller' (default: the calling thread runs the\n"
"                    collective inside wait, as a blocking collective does),\n"
"                    'thread', 'split', or 'same' (the run's mode, set by\n"
"                    NBCX_PROGRESS: blocking and nbc are then the same calls)\n"
"  --persistent      persistent requests: nbcx_<op>_init once per size, then\n"
"                    nbcx_start + wait for every run (request freed after\n"
"                    the size); the native side likewise with MPI_<op>_init\n"
"                    (MPI-4) or MPIX_<op>_init (Open MPI 4), or the\n"
"                    nonblocking call where MPI has no reliable ones\n"
"  --pmpi            with MPI: the same MPI_I... calls (and, with\n"
"                    --persistent, MPI_<op>_init) also through libnbcx-pmpi,\n"
"                    the PMPI shim, loaded into this run: native, shim and\n"
"                    nbcx side by side ('shim' columns; JSON 'shim' and\n"
"                    'pmpi'). The shim is the libnbcx-pmpi.so next to the\n"
"                    libnbcx this program runs with (install tree: the same\n"
"                    directory), or in the build tree, or NBCX_BENCH_PMPI_LIB\n"
"  --pure-only       measure t_block and t_pure only (no computation, no\n"
"                    overlapped run: t_cpu, t_ovrl, overlap, overhead and\n"
"                    cpu are 0), e.g. to compare with nbcx-sim's\n"
"                    predictions; several times faster\n"
"  --json FILE       write every figure as JSON (schema nbcx-bench/1 with\n"
"                    MPI, nbcx-bench/1.1 inproc)\n"
"  --verbose         every rank reports the calibration of t_cpu on stderr\n"
"  --help            this text\n"
"\n"
"Reductions use doubles with SUM, the other operations bytes: sizes are\n"
"rounded down to whole elements (at least one) and the table shows real\n"
"bytes: the buffer of ibcast/ireduce/iallreduce/iscan/iexscan, the per-peer\n"
"block of igather/iscatter/iallgather/ialltoall, of their v variants (every\n"
"block the same size) and of ireduce_scatter_block. Rooted operations use\n"
"root 0.\n"
"Environment: NBCX_BENCH_NETWORK names the network in the output\n"
"(default \"shm\"); NBCX_PROGRESS the progress mode of nbcx. Exit status:\n"
"0 success, 1 failure (e.g. a result of nbcx is wrong), 2 bad arguments.\n",
            BENCH_AUTO_REPS_MIN, BENCH_AUTO_REPS_MAX, DEFAULT_BUDGET,
            DEFAULT_WARMUP,
            NBCX_BENCH_MPI ? "(the default)"
                           : "(not in this build: built without MPI)",
            NBCX_BENCH_MPI ? "" : " (the default)", DEFAULT_RANKS);
}

const char *bench_compute_name(enum bench_compute c)
{
    return c == COMPUTE_BLOCK ? "block" : "pure";
}

const char *bench_progress_name(int mode)
{
    switch (mode) {
    case NBCX_PROGRESS_CALLER: return "caller";
    case NBCX_PROGRESS_THREAD: return "thread";
    case NBCX_PROGRESS_SPLIT: return "split";
    case NBCX_PROGRESS_AUTO: return "auto";
    default: return "same";
    }
}

enum bench_transport options_transport(int argc, char **argv)
{
    enum bench_transport t = DEFAULT_TRANSPORT; /* the last one counts */
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "--transport") == 0 && i + 1 < argc)
            v = argv[++i];
        else if (strncmp(argv[i], "--transport=", 12) == 0)
            v = argv[i] + 12;
        if (v)
            t = strcmp(v, "mpi") == 0 ? DEFAULT_TRANSPORT : TRANSPORT_INPROC;
    }
    return t;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* A size: decimal digits and an optional k/m/g suffix (powers of 1024).
 * Returns 0, or -1 if s is not exactly that or the value is 0 or huge. */
static int parse_size(const char *s, size_t *out)
{
    if (*s < '0' || *s > '9') /* no sign, no space, not empty */
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end != '\0' || v == 0 || v > ((unsigned long long)1 << 40) >> shift)
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* "all" or a comma-separated list of operation names; duplicates are
 * dropped, empty elements are errors. */
static int parse_ops(const char *list, struct bench_options *o, char *err,
                     size_t errlen)
{
    o->nops = 0;
    if (strcmp(list, "all") == 0) {
        for (int i = 0; i < bench_nops; i++)
            o->ops[o->nops++] = i;
        return 0;
    }
    const char *p = list;
    for (;;) {
        size_t len = strcspn(p, ",");
        char name[32];
        if (len == 0 || len >= sizeof name)
            return fail(err, errlen, "bad --op list '%s'", list);
        memcpy(name, p, len);
        name[len] = '\0';
        int i = bench_op_find(name);
        if (i < 0)
        {
            char known[512] = "";
            for (int k = 0; k < bench_nops; k++)
                snprintf(known + strlen(known), sizeof known - strlen(known),
                         "%s%s", k ? " " : "", bench_ops[k].name);
            return fail(err, errlen, "unknown operation '%s' (known: %s)",
                        name, known);
        }
        int seen = 0;
        for (int k = 0; k < o->nops; k++)
            seen |= o->ops[k] == i;
        if (!seen)
            o->ops[o->nops++] = i;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

static int parse_sizes(const char *list, struct bench_options *o, char *err,
                       size_t errlen)
{
    size_t n = 1;
    for (const char *c = list; *c; c++)
        n += *c == ',';
    size_t *v = malloc(n * sizeof *v);
    if (!v)
        return fail(err, errlen, "out of memory");
    const char *p = list;
    for (size_t i = 0; i < n; i++) {
        size_t len = strcspn(p, ",");
        char item[32];
        if (len == 0 || len >= sizeof item) {
            free(v);
            return fail(err, errlen, "bad --sizes list '%s'", list);
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (parse_size(item, &v[i]) < 0) {
            free(v);
            return fail(err, errlen,
                        "bad size '%s' in --sizes '%s' (want 1 to 2^40 bytes, "
                        "optional suffix k, m or g)", item, list);
        }
        p += len + 1;
    }
    free(o->sizes);
    o->sizes = v;
    o->nsizes = (int)n;
    return 0;
}

/* The default list: min, 2 min, 4 min, ... up to max. */
static int default_sizes(struct bench_options *o, size_t min, size_t max,
                         char *err, size_t errlen)
{
    int n = 0;
    for (size_t s = min; s <= max; s *= 2)
        n++;
    o->sizes = malloc((size_t)(n + 1) * sizeof *o->sizes);
    if (!o->sizes)
        return fail(err, errlen, "out of memory");
    o->nsizes = 0;
    for (size_t s = min; s <= max; s *= 2)
        o->sizes[o->nsizes++] = s;
    return 0;
}

/* Sorts, removes duplicates and keeps [min, max]. */
static void filter_sizes(struct bench_options *o, size_t min, size_t max)
{
    qsort(o->sizes, (size_t)o->nsizes, sizeof *o->sizes, cmp_size);
    int n = 0;
    for (int i = 0; i < o->nsizes; i++) {
        size_t s = o->sizes[i];
        if (s >= min && s <= max && (n == 0 || o->sizes[n - 1] != s))
            o->sizes[n++] = s;
    }
    o->nsizes = n;
}

enum opt_id {
    OPT_OP, OPT_SIZES, OPT_MIN, OPT_MAX, OPT_REPS, OPT_BUDGET, OPT_WARMUP,
    OPT_TESTS, OPT_COMPUTE, OPT_TRANSPORT, OPT_RANKS, OPT_BLOCK_PROGRESS,
    OPT_JSON, OPT_VERBOSE, OPT_HELP, OPT_PERSISTENT, OPT_PMPI,
    OPT_PURE_ONLY
};

static const struct {
    const char *name;
    enum opt_id id;
    int has_value;
} options[] = {
    { "op", OPT_OP, 1 },         { "sizes", OPT_SIZES, 1 },
    { "min-size", OPT_MIN, 1 },  { "max-size", OPT_MAX, 1 },
    { "reps", OPT_REPS, 1 },     { "budget", OPT_BUDGET, 1 },
    { "warmup", OPT_WARMUP, 1 }, { "tests", OPT_TESTS, 1 },
    { "compute", OPT_COMPUTE, 1 }, { "transport", OPT_TRANSPORT, 1 },
    { "ranks", OPT_RANKS, 1 },   { "block-progress", OPT_BLOCK_PROGRESS, 1 },
    { "json", OPT_JSON, 1 },
    { "verbose", OPT_VERBOSE, 0 }, { "help", OPT_HELP, 0 },
    { "persistent", OPT_PERSISTENT, 0 }, { "pmpi", OPT_PMPI, 0 },
    { "pure-only", OPT_PURE_ONLY, 0 },
};

int options_parse(int argc, char **argv, struct bench_options *o, char *err,
                  size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->budget = DEFAULT_BUDGET;
    o->warmup = DEFAULT_WARMUP;
    o->transport = DEFAULT_TRANSPORT;
    o->ranks = DEFAULT_RANKS;
    o->block_progress = NBCX_PROGRESS_CALLER;
    int have_ranks = 0, have_block = 0;
    parse_ops("all", o, err, errlen);
    const char *sizes = NULL;
    size_t min = 0, max = SIZE_MAX;
    int have_min = 0, have_max = 0;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) != 0)
            return fail(err, errlen, "unexpected argument '%s' (see --help)",
                        arg);
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        int k = -1;
        for (int j = 0; j < (int)(sizeof options / sizeof options[0]); j++)
            if (strlen(options[j].name) == len &&
                strncmp(options[j].name, name, len) == 0)
                k = j;
        if (k < 0)
            return fail(err, errlen, "unknown option '%s' (see --help)", arg);
        const char *val = NULL;
        if (options[k].has_value) {
            if (eq)
                val = eq + 1;
            else if (i + 1 < argc)
                val = argv[++i];
            else
                return fail(err, errlen, "option --%s needs a value",
                            options[k].name);
        } else if (eq) {
            return fail(err, errlen, "option --%s takes no value",
                        options[k].name);
        }

        switch (options[k].id) {
        case OPT_OP:
            if (parse_ops(val, o, err, errlen) < 0)
                return -1;
            break;
        case OPT_SIZES:
            sizes = val;
            break;
        case OPT_MIN:
        case OPT_MAX: {
            size_t v;
            if (parse_size(val, &v) < 0)
                return fail(err, errlen,
                            "bad size '%s' for --%s (want 1 to 2^40 bytes, "
                            "optional suffix k, m or g)", val,
                            options[k].name);
            if (options[k].id == OPT_MIN) {
                min = v;
                have_min = 1;
            } else {
                max = v;
                have_max = 1;
            }
            break;
        }
        case OPT_REPS:
            if (parse_int(val, 1, MAX_COUNT_OPTION, &o->reps) < 0)
                return fail(err, errlen, "bad --reps '%s' (want 1..%d)", val,
                            MAX_COUNT_OPTION);
            break;
        case OPT_BUDGET: {
            char *end;
            errno = 0;
            double b = strtod(val, &end);
            if (errno || end == val || *end != '\0' || !isfinite(b) ||
                b <= 0 || b > 1e6)
                return fail(err, errlen,
                            "bad --budget '%s' (want seconds > 0)", val);
            o->budget = b;
            break;
        }
        case OPT_WARMUP:
            if (parse_int(val, 0, MAX_COUNT_OPTION, &o->warmup) < 0)
                return fail(err, errlen, "bad --warmup '%s' (want 0..%d)",
                            val, MAX_COUNT_OPTION);
            break;
        case OPT_TESTS:
            if (parse_int(val, 0, MAX_COUNT_OPTION, &o->tests) < 0)
                return fail(err, errlen, "bad --tests '%s' (want 0..%d)", val,
                            MAX_COUNT_OPTION);
            break;
        case OPT_COMPUTE:
            if (strcmp(val, "pure") == 0)
                o->compute = COMPUTE_PURE;
            else if (strcmp(val, "block") == 0)
                o->compute = COMPUTE_BLOCK;
            else
                return fail(err, errlen,
                            "bad --compute '%s' (want pure or block)", val);
            break;
        case OPT_TRANSPORT:
            if (strcmp(val, "inproc") == 0)
                o->transport = TRANSPORT_INPROC;
            else if (strcmp(val, "mpi") == 0 && NBCX_BENCH_MPI)
                o->transport = TRANSPORT_MPI;
            else if (strcmp(val, "mpi") == 0)
                return fail(err, errlen,
                            "--transport mpi: this nbcx-bench was built "
                            "without MPI (use --transport inproc)");
            else
                return fail(err, errlen,
                            "bad --transport '%s' (want mpi or inproc)", val);
            break;
        case OPT_RANKS:
            if (parse_int(val, 1, BENCH_MAX_RANKS, &o->ranks) < 0)
                return fail(err, errlen, "bad --ranks '%s' (want 1..%d)", val,
                            BENCH_MAX_RANKS);
            have_ranks = 1;
            break;
        case OPT_BLOCK_PROGRESS:
            if (strcmp(val, "caller") == 0)
                o->block_progress = NBCX_PROGRESS_CALLER;
            else if (strcmp(val, "thread") == 0)
                o->block_progress = NBCX_PROGRESS_THREAD;
            else if (strcmp(val, "split") == 0)
                o->block_progress = NBCX_PROGRESS_SPLIT;
            else if (strcmp(val, "same") == 0)
                o->block_progress = 0;
            else
                return fail(err, errlen,
                            "bad --block-progress '%s' (want caller, thread, "
                            "split or same)", val);
            have_block = 1;
            break;
        case OPT_JSON:
            if (*val == '\0')
                return fail(err, errlen, "empty --json file name");
            o->json = val;
            break;
        case OPT_VERBOSE:
            o->verbose = 1;
            break;
        case OPT_PERSISTENT:
            o->persistent = 1;
            break;
        case OPT_PMPI:
            o->pmpi = 1;
            break;
        case OPT_PURE_ONLY:
            o->pure_only = 1;
            break;
        case OPT_HELP:
            o->help = 1;
            break;
        }
    }
    if (o->help)
        return 0;

    if (o->transport == TRANSPORT_MPI && have_ranks)
        return fail(err, errlen, "--ranks is for --transport inproc (with "
                                 "MPI, mpiexec -n sets the ranks)");
    if (o->transport == TRANSPORT_MPI && have_block)
        return fail(err, errlen, "--block-progress is for --transport inproc "
                                 "(with MPI the blocking reference is MPI's "
                                 "own collective)");
    if (o->transport != TRANSPORT_MPI && o->pmpi)
        return fail(err, errlen, "--pmpi is for --transport mpi (the shim "
                                 "runs MPI's calls on nbcx)");
    if (min > max)
        return fail(err, errlen, "--min-size is larger than --max-size");
    if (sizes) {
        if (parse_sizes(sizes, o, err, errlen) < 0)
            return -1;
    } else if (default_sizes(o, have_min ? min : DEFAULT_MIN_SIZE,
                             have_max ? max : DEFAULT_MAX_SIZE, err,
                             errlen) < 0) {
        return -1;
    }
    filter_sizes(o, min, max);
    if (o->nsizes == 0) {
        options_free(o);
        return fail(err, errlen, "no size left between --min-size and "
                                 "--max-size");
    }
    return 0;
}

void options_free(struct bench_options *o)
{
    free(o->sizes);
    o->sizes = NULL;
    o->nsizes = 0;
}
