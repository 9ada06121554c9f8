/*
 * nbcx-bench - nonblocking collectives of nbcx side by side with the
 * native MPI ones: time, overlap, overhead and CPU cost of progress.
 *
 *   mpiexec -n 4 nbcx-bench --op iallreduce,ialltoall --sizes 64k,1M
 *
 * The method follows NBCBench (Hoefler & Lumsdaine) and IMB-NBC. For one
 * operation at one size:
 *   1. check: run native MPI and nbcx once on the same inputs; nbcx's
 *      result must equal MPI's bit for bit (else exit 1);
 *   2. warm-up runs (discarded), which also time one iteration so the
 *      number of repetitions fits the time budget;
 *   3. t_block (the blocking MPI collective) and t_pure (start, wait at
 *      once) of native MPI and of nbcx;
 *   4. t_cpu of each implementation: the synthetic computation, sized on
 *      each rank to last that implementation's median t_pure, or with
 *      --compute block the median t_block (its rate measured once at
 *      start-up, then checked and corrected here);
 *   5. t_ovrl of native MPI and of nbcx: start, compute for t_cpu with
 *      --tests K test calls spread evenly, wait; also the time inside
 *      those calls (overhead) and the CPU time of the process's other
 *      threads meanwhile (cpu_progress). Each repetition times the same
 *      computation alone right before (t_cpu, the series reported), and
 *      its overlap comes from that t_cpu, its t_ovrl and the median
 *      t_pure.
 * In steps 3 and 5 the variants alternate within every repetition, so a
 * change of conditions during the run (another process taking a core)
 * hits native MPI and nbcx alike. Every run starts after an MPI_Barrier;
 * each repetition's figure is the maximum over ranks; reports give the
 * median, min and max over repetitions.
 *
 * --persistent: at every size, nbcx's runs (check, warm-up, t_pure,
 * t_ovrl) all start one persistent request, made once with
 * nbcx_<op>_init, with nbcx_start, and free it after the last; the native
 * runs likewise start one MPI_<op>_init (MPI-4) or MPIX_<op>_init (Open
 * MPI 4's mpi-ext.h) request, or, where MPI has no reliable persistent
 * collectives (bench_native_persistent "none"), keep calling the
 * nonblocking collective. The check then verifies the persistent path.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* t_cpu is accepted when each rank's median is within this fraction of
 * the target; otherwise the ranks rescale and measure again. */
#define CPU_TOLERANCE 0.05
#define CPU_ATTEMPTS 3

struct bench {
    const struct bench_options *o;
    int rank, ranks;
    MPI_Comm comm;   /* native MPI; the barriers between repetitions */
    nbcx_comm ncomm; /* nbcx, over the same ranks                    */
    double rate;     /* units of cpu_work per second on this rank    */
};

/* ---- fatal errors ------------------------------------------------------ */

/* A failure of MPI or nbcx in the middle of a collective: the other ranks
 * may be blocked in it, so only MPI_Abort ends the run reliably. */
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("nbcx-bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1); /* not reached */
}

static void check(int err, const struct bench_op *op, const char *call)
{
    if (err != NBCX_SUCCESS)
        die("%s: %s failed: %s", op->name, call, nbcx_error_string(err));
}

/* ---- one request of either implementation ----------------------------- */

/* With --persistent, mpi and nbcx point at the buffers' persistent
 * requests (b->persistent), which op_start starts and op_wait completes,
 * leaving them inactive for the next run; else at own and fresh ones. */
struct request {
    enum bench_impl impl;
    const struct bench_op *op;
    MPI_Request own_mpi, *mpi;
    nbcx_request own_nbcx, *nbcx;
};

/* MPI calls use MPI_ERRORS_ARE_FATAL, so only nbcx's codes are checked. */
static void op_start(struct request *r, const struct bench_buf *b)
{
    struct bench_persistent *p = b->persistent;
    r->mpi = &r->own_mpi;
    r->nbcx = &r->own_nbcx;
    if (r->impl == IMPL_NATIVE) {
        if (p && p->mpi != MPI_REQUEST_NULL) {
            r->mpi = &p->mpi;
            MPI_Start(r->mpi);
        } else {
            r->op->native(b, r->mpi);
        }
    } else if (p) {
        r->nbcx = &p->nbcx;
        check(nbcx_start(r->nbcx), r->op, "nbcx_start");
    } else {
        check(r->op->nbcx(b, r->nbcx), r->op, "start");
    }
}

static void op_test(struct request *r)
{
    int flag;
    if (r->impl == IMPL_NATIVE)
        MPI_Test(r->mpi, &flag, MPI_STATUS_IGNORE);
    else
        check(nbcx_test(r->nbcx, &flag), r->op, "nbcx_test");
}

static void op_wait(struct request *r)
{
    if (r->impl == IMPL_NATIVE)
        MPI_Wait(r->mpi, MPI_STATUS_IGNORE);
    else
        check(nbcx_wait(r->nbcx), r->op, "nbcx_wait");
}

/* --persistent: the persistent requests of op on the buffers b, made
 * once and used by every run at this size. Collective (MPI's and nbcx's
 * init calls are). */
static void persistent_init(const struct bench_op *op, struct bench_buf *b,
                            struct bench_persistent *p)
{
    p->mpi = MPI_REQUEST_NULL;
    p->nbcx = NBCX_REQUEST_NULL;
    if (op->native_init)
        op->native_init(b, &p->mpi);
    check(op->nbcx_init(b, &p->nbcx), op, "nbcx persistent init");
    b->persistent = p;
}

static void persistent_free(const struct bench_op *op, struct bench_buf *b)
{
    struct bench_persistent *p = b->persistent;
    if (!p)
        return;
    if (p->mpi != MPI_REQUEST_NULL)
        MPI_Request_free(&p->mpi);
    check(nbcx_request_free(&p->nbcx), op, "nbcx_request_free");
    b->persistent = NULL;
}

/* ---- the measurements, one function each ------------------------------- */

/* t_block: the blocking MPI collective. */
static double measure_block(const struct bench *c, const struct bench_op *op,
                            const struct bench_buf *b)
{
    MPI_Barrier(c->comm);
    double t0 = MPI_Wtime();
    op->blocking(b);
    return MPI_Wtime() - t0;
}

/* t_pure: start, then wait at once. */
static double measure_pure(const struct bench *c, const struct bench_op *op,
                           const struct bench_buf *b, enum bench_impl impl)
{
    struct request r = { .impl = impl, .op = op };
    MPI_Barrier(c->comm);
    double t0 = MPI_Wtime();
    op_start(&r, b);
    op_wait(&r);
    return MPI_Wtime() - t0;
}

/* t_cpu: the computation alone. */
static double measure_cpu(const struct bench *c, long units)
{
    MPI_Barrier(c->comm);
    double t0 = MPI_Wtime();
    cpu_work(units);
    return MPI_Wtime() - t0;
}

struct ovrl {
    double t;        /* wall time from start to the end of wait         */
    double overhead; /* inside start, test and wait                     */
    double cpu;      /* CPU time of the other threads / t               */
};

/* t_ovrl: start, the computation with `tests` test calls at 1/(tests+1),
 * 2/(tests+1), ... of it, then wait. */
static struct ovrl measure_ovrl(const struct bench *c,
                                const struct bench_op *op,
                                const struct bench_buf *b,
                                enum bench_impl impl, long units, int tests)
{
    struct request r = { .impl = impl, .op = op };
    struct cpu_snapshot before, after;
    /* Read /proc before the barrier: it is slow, and the barrier then
     * starts all ranks together again. */
    cpu_snapshot_take(&before);
    MPI_Barrier(c->comm);

    double t0 = MPI_Wtime();
    op_start(&r, b);
    double overhead = MPI_Wtime() - t0;
    for (long k = 0; k <= tests; k++) {
        cpu_work(units * (k + 1) / (tests + 1) - units * k / (tests + 1));
        if (k < tests) {
            double t = MPI_Wtime();
            op_test(&r);
            overhead += MPI_Wtime() - t;
        }
    }
    double tw = MPI_Wtime();
    op_wait(&r);
    double t1 = MPI_Wtime();
    overhead += t1 - tw;

    cpu_snapshot_take(&after);
    struct ovrl o = { t1 - t0, overhead, 0 };
    o.cpu = cpu_snapshot_delta(&before, &after) / o.t;
    return o;
}

/* ---- series: repetitions and their maximum over ranks ------------------ */

static void max_over_ranks(const struct bench *c, double *v, int n)
{
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, c->comm);
}

/* Step 3: t_block and both t_pure, alternating within each repetition. */
static void series_pure(const struct bench *c, const struct bench_op *op,
                        const struct bench_buf *b, struct bench_result *r)
{
    for (int k = 0; k < r->reps; k++) {
        r->t_block[k] = measure_block(c, op, b);
        for (int i = 0; i < IMPL_COUNT; i++)
            r->impl[i].t_pure[k] = measure_pure(c, op, b, (enum bench_impl)i);
    }
    max_over_ranks(c, r->t_block, r->reps);
    for (int i = 0; i < IMPL_COUNT; i++)
        max_over_ranks(c, r->impl[i].t_pure, r->reps);
}

/* Step 4, one t_cpu series: each rank computes `target` seconds' worth
 * of units at its own rate. A rank whose median misses the target by more
 * than CPU_TOLERANCE rescales its units, and all ranks measure again (at
 * most CPU_ATTEMPTS series). Returns this rank's units; t_cpu gets the
 * maxima over ranks. */
static long series_cpu(const struct bench *c, double target, int reps,
                       double *t_cpu)
{
    long units = lround(target * c->rate);
    for (int attempt = 1;; attempt++) {
        if (units < 1)
            units = 1;
        for (int k = 0; k < reps; k++)
            t_cpu[k] = measure_cpu(c, units);
        double mine = bench_stat_of(t_cpu, reps).median;
        int off = fabs(mine / target - 1) > CPU_TOLERANCE;
        if (c->o->verbose)
            fprintf(stderr,
                    "nbcx-bench: rank %d: t_cpu attempt %d: %ld units, "
                    "median %.3g s for a target of %.3g s\n",
                    c->rank, attempt, units, mine, target);
        MPI_Allreduce(MPI_IN_PLACE, &off, 1, MPI_INT, MPI_MAX, c->comm);
        if (!off || attempt == CPU_ATTEMPTS)
            break;
        if (mine > 0)
            units = lround((double)units * target / mine);
    }
    max_over_ranks(c, t_cpu, reps);
    return units;
}

/* IMB-NBC overlap, clamped to [0, 1]. */
static double overlap(double pure, double cpu, double ovrl)
{
    double d = fmin(pure, cpu);
    if (!(d > 0))
        return 0;
    return fmax(0, fmin(1, (pure + cpu - ovrl) / d));
}

/* Step 5: t_ovrl of both implementations, alternating within each
 * repetition; units[i] is this rank's computation for implementation i.
 * Right before each t_ovrl the same computation is timed alone, and that
 * repetition's overlap uses this t_cpu: on a shared or virtual machine
 * the speed of a core drifts by tens of percent over seconds, and an
 * overlap taken against a t_cpu measured seconds earlier reports the
 * drift, not the overlap. The t_cpu series reported is this one. */
static void series_ovrl(const struct bench *c, const struct bench_op *op,
                        const struct bench_buf *b, const long *units,
                        struct bench_result *r)
{
    for (int k = 0; k < r->reps; k++) {
        for (int i = 0; i < IMPL_COUNT; i++) {
            struct bench_impl_result *x = &r->impl[i];
            x->t_cpu[k] = measure_cpu(c, units[i]);
            struct ovrl o = measure_ovrl(c, op, b, (enum bench_impl)i,
                                         units[i], c->o->tests);
            x->t_ovrl[k] = o.t;
            x->overhead[k] = o.overhead;
            x->cpu_progress[k] = o.cpu;
        }
    }
    for (int i = 0; i < IMPL_COUNT; i++) {
        struct bench_impl_result *x = &r->impl[i];
        max_over_ranks(c, x->t_cpu, r->reps);
        max_over_ranks(c, x->t_ovrl, r->reps);
        max_over_ranks(c, x->overhead, r->reps);
        max_over_ranks(c, x->cpu_progress, r->reps);
        double pure = bench_stat_of(x->t_pure, r->reps).median;
        for (int k = 0; k < r->reps; k++)
            x->overlap[k] = overlap(pure, x->t_cpu[k], x->t_ovrl[k]);
    }
}

/* ---- one operation at one size ----------------------------------------- */

/* Runs native MPI, then nbcx, once each on the same inputs and compares
 * the results. Returns the slower run's time (max over ranks), or -1 when
 * the results differ on some rank (rank 0 reports it). */
static double verify(const struct bench *c, const struct bench_op *op,
                     struct bench_buf *b)
{
    const void *res;
    size_t n;
    bench_result(op, b, &res, &n);
    void *ref = n ? malloc(n) : NULL;
    if (n && !ref)
        die("%s: out of memory (%zu bytes)", op->name, n);

    double t = measure_pure(c, op, b, IMPL_NATIVE);
    if (n)
        memcpy(ref, res, n);
    bench_poison(op, b);
    t = fmax(t, measure_pure(c, op, b, IMPL_NBCX));
    int bad = n && memcmp(ref, res, n) != 0;
    free(ref);

    int first_bad = bad ? c->rank : c->ranks;
    MPI_Allreduce(MPI_IN_PLACE, &first_bad, 1, MPI_INT, MPI_MIN, c->comm);
    max_over_ranks(c, &t, 1);
    if (first_bad < c->ranks) {
        if (c->rank == 0)
            fprintf(stderr,
                    "nbcx-bench: %s of %zu bytes on %d ranks: nbcx's result "
                    "differs from MPI's (first on rank %d)\n",
                    op->name, (size_t)b->count * b->elem, c->ranks,
                    first_bad);
        return -1;
    }
    return t;
}

/* Discarded runs of every variant; returns the last round's slowest
 * variant (max over ranks), or t_verify without warm-up. */
static double warm_up(const struct bench *c, const struct bench_op *op,
                      const struct bench_buf *b, double t_verify)
{
    double t = t_verify;
    for (int w = 0; w < c->o->warmup; w++) {
        t = measure_block(c, op, b);
        t = fmax(t, measure_pure(c, op, b, IMPL_NATIVE));
        t = fmax(t, measure_pure(c, op, b, IMPL_NBCX));
    }
    max_over_ranks(c, &t, 1);
    return t;
}

/* --reps, or as many as fit the budget: clamp(ceil(budget / t)). */
static int choose_reps(const struct bench_options *o, double t)
{
    if (o->reps)
        return o->reps;
    double n = t > 0 ? ceil(o->budget / t) : BENCH_AUTO_REPS_MAX;
    if (n < BENCH_AUTO_REPS_MIN)
        return BENCH_AUTO_REPS_MIN;
    if (n > BENCH_AUTO_REPS_MAX)
        return BENCH_AUTO_REPS_MAX;
    return (int)n;
}

/* Arrays of one result: t_block and 6 per implementation, one block. */
#define RESULT_ARRAYS (1 + 6 * IMPL_COUNT)

static int result_alloc(struct bench_result *r, int reps)
{
    double *v = calloc((size_t)RESULT_ARRAYS * (size_t)reps, sizeof *v);
    if (!v)
        return -1;
    r->reps = reps;
    r->t_block = v;
    for (int i = 0; i < IMPL_COUNT; i++) {
        struct bench_impl_result *x = &r->impl[i];
        double *p = v + (size_t)reps * (size_t)(1 + 6 * i);
        x->t_pure = p;
        x->t_cpu = p + reps;
        x->t_ovrl = p + 2 * reps;
        x->overhead = p + 3 * reps;
        x->cpu_progress = p + 4 * reps;
        x->overlap = p + 5 * reps;
    }
    return 0;
}

static void result_free(struct bench_result *r)
{
    free(r->t_block);
    r->t_block = NULL;
}

/* Measures op with count elements per block into r. Returns 0, or -1
 * when nbcx's result is wrong. */
static int run_one(const struct bench *c, const struct bench_op *op,
                   int count, struct bench_result *r)
{
    struct bench_buf b;
    int nomem = bench_buf_init(&b, op, count, c->rank, c->ranks, c->comm,
                               c->ncomm) != 0;
    MPI_Allreduce(MPI_IN_PLACE, &nomem, 1, MPI_INT, MPI_MAX, c->comm);
    if (nomem)
        die("%s: out of memory for %d elements per block", op->name, count);

    struct bench_persistent preq;
    if (c->o->persistent)
        persistent_init(op, &b, &preq);
    double t = verify(c, op, &b);
    if (t < 0) {
        persistent_free(op, &b);
        bench_buf_free(&b);
        return -1;
    }
    t = warm_up(c, op, &b, t);

    r->op = op;
    r->count = count;
    r->bytes = (size_t)count * b.elem;
    if (result_alloc(r, choose_reps(c->o, t)) != 0)
        die("out of memory");
    series_pure(c, op, &b, r);
    long units[IMPL_COUNT];
    double block = bench_stat_of(r->t_block, r->reps).median;
    for (int i = 0; i < IMPL_COUNT; i++) {
        double target = c->o->compute == COMPUTE_BLOCK
                            ? block
                            : bench_stat_of(r->impl[i].t_pure, r->reps).median;
        units[i] = series_cpu(c, target, r->reps, r->impl[i].t_cpu);
    }
    series_ovrl(c, op, &b, units, r);
    persistent_free(op, &b);
    bench_buf_free(&b);
    return 0;
}

/* ---- main ------------------------------------------------------------ */

/* Every (op, size) must have an element count that fits an int, also
 * multiplied by the number of ranks for per-rank buffers. */
static int check_counts(const struct bench_options *o, int ranks, char *err,
                        size_t errlen)
{
    for (int i = 0; i < o->nops; i++) {
        const struct bench_op *op = &bench_ops[o->ops[i]];
        for (int j = 0; j < o->nsizes; j++) {
            size_t s = o->sizes[j];
            if (bench_op_count(op, s, 1) < 0) {
                snprintf(err, errlen,
                         "size %zu is too large for %s: more than INT_MAX "
                         "elements", s, op->name);
                return -1;
            }
            if (bench_op_count(op, s, ranks) < 0) {
                snprintf(err, errlen,
                         "%s of %zu bytes on %d ranks needs more than "
                         "INT_MAX elements per buffer: more ranks than the "
                         "operation supports at this size", op->name, s,
                         ranks);
                return -1;
            }
        }
    }
    return 0;
}

/* Rank 0 checks that the JSON file can be written (its directory too:
 * the file is written beside it, then renamed). */
static int check_json(const struct bench_options *o, int rank, char *err,
                      size_t errlen)
{
    int ok = 1;
    if (rank == 0 && o->json) {
        size_t len = strlen(o->json) + 5;
        char *tmp = malloc(len);
        FILE *f = NULL;
        if (tmp) {
            snprintf(tmp, len, "%s.tmp", o->json);
            f = fopen(tmp, "w");
        }
        ok = f != NULL;
        if (f) {
            fclose(f);
            remove(tmp);
        }
        free(tmp);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok)
        snprintf(err, errlen, "cannot write --json file '%s'", o->json);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    /* MPI_THREAD_MULTIPLE lets nbcx run its progress thread. */
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);

    /* Bad arguments: one line on rank 0, exit code 2 on every rank. */
    struct bench_options o;
    char err[512];
    int bad = options_parse(argc, argv, &o, err, sizeof err) != 0;
    if (!bad && o.help) {
        if (rank == 0)
            options_usage(stdout);
        options_free(&o);
        MPI_Finalize();
        return 0;
    }
    bad = bad || check_counts(&o, ranks, err, sizeof err) != 0 ||
          check_json(&o, rank, err, sizeof err) != 0;
    if (bad) {
        if (rank == 0)
            fprintf(stderr, "nbcx-bench: %s\n", err);
        options_free(&o);
        MPI_Finalize();
        return 2;
    }

    struct bench c = { .o = &o, .rank = rank, .ranks = ranks,
                       .comm = MPI_COMM_WORLD };
    int e = nbcx_comm_from_mpi(MPI_COMM_WORLD, &c.ncomm);
    if (e != NBCX_SUCCESS)
        die("nbcx_comm_from_mpi: %s", nbcx_error_string(e));
    struct bench_meta meta = { 0 };
    if (rank == 0)
        meta_collect(&meta, c.ncomm, ranks);
    c.rate = cpu_calibrate();
    if (o.verbose)
        fprintf(stderr, "nbcx-bench: rank %d: %.4g units of computation per "
                        "second; CPU accounting by %s\n",
                rank, c.rate, cpu_snapshot_method());

    struct bench_result *results =
        calloc((size_t)o.nops * (size_t)o.nsizes, sizeof *results);
    if (!results)
        die("out of memory");
    int nresults = 0, status = 0;
    for (int i = 0; i < o.nops && status == 0; i++) {
        const struct bench_op *op = &bench_ops[o.ops[i]];
        if (rank == 0) {
            table_header(stdout, &meta, &o, op);
            fflush(stdout);
        }
        size_t last_bytes = (size_t)-1;
        for (int j = 0; j < o.nsizes; j++) {
            int count = (int)bench_op_count(op, o.sizes[j], ranks);
            size_t bytes = (size_t)count * bench_op_elem(op);
            if (bytes == last_bytes) /* same after rounding: done already */
                continue;
            last_bytes = bytes;
            struct bench_result *r = &results[nresults];
            if (run_one(&c, op, count, r) != 0) {
                status = 1;
                break;
            }
            nresults++;
            if (rank == 0) {
                table_row(stdout, r);
                fflush(stdout);
            }
        }
        if (rank == 0) {
            putchar('\n');
            fflush(stdout);
            /* After every operation, so a long run that is cut short
             * still leaves its results. */
            if (o.json && json_write(o.json, &meta, &o, results,
                                     nresults) != 0)
                die("cannot write %s", o.json);
        }
    }

    for (int i = 0; i < nresults; i++)
        result_free(&results[i]);
    free(results);
    nbcx_comm_free(&c.ncomm);
    options_free(&o);
    MPI_Finalize();
    return status;
}
