/*
 * harness.c - the measurements of nbcx-bench, independent of the
 * transport: the driver (driver_mpi.c, driver_inproc.c) provides the
 * barriers, the maxima over ranks, the clock and the blocking reference.
 *
 * The method follows NBCBench (Hoefler & Lumsdaine) and IMB-NBC, and
 * paper 000's Fig. 6 (blocking, nbc, nbc+overlap). For one operation at
 * one size:
 *   1. check: with MPI, run native MPI and nbcx once on the same inputs,
 *      nbcx's result (and with --pmpi the shim's) must equal MPI's bit
 *      for bit; on the inproc
 *      transport, the blocking variant and nbcx's nonblocking run must
 *      both equal the sequential reference (else exit 1);
 *   2. warm-up runs (discarded), which also time one iteration so the
 *      number of repetitions fits the time budget;
 *   3. t_block (the blocking reference: the MPI library's blocking
 *      collective, or nbcx's blocking-style call path on inproc) and
 *      t_pure (start, wait at once) of each nonblocking implementation
 *      (native MPI and nbcx, or nbcx alone; with --pmpi also the same
 *      MPI calls through libnbcx-pmpi, the shim);
 *   4. t_cpu of each implementation: the synthetic computation, sized on
 *      each rank to last that implementation's median t_pure, or with
 *      --compute block the median t_block (its rate measured once at
 *      start-up, then checked and corrected here);
 *   5. t_ovrl of each implementation: start, compute for t_cpu with
 *      --tests K test calls spread evenly, wait; also the time inside
 *      those calls (overhead: paper 000's communication time of
 *      nbc+overlap) and the CPU time of the process's other threads
 *      meanwhile (cpu_progress; on inproc not counting the rank
 *      threads). Each repetition times the same computation alone right
 *      before (t_cpu, the series reported), and its overlap comes from
 *      that t_cpu, its t_ovrl and the median t_pure.
 * In steps 3 and 5 the variants alternate within every repetition, so a
 * change of conditions during the run (another process taking a core)
 * hits every variant alike. Every run starts after a barrier; each
 * repetition's figure is the maximum over ranks; reports give the
 * median, min and max over repetitions.
 */
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* t_cpu is accepted when each rank's median is within this fraction of
 * the target; otherwise the ranks rescale and measure again. */
#define CPU_TOLERANCE 0.05
#define CPU_ATTEMPTS 3

/* ---- fatal errors ------------------------------------------------------ */

void bench_die(const struct bench *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("nbcx-bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    c->d->die();
    exit(1); /* not reached */
}

static void check(const struct bench *c, int err, const struct bench_op *op,
                  const char *call)
{
    if (err != NBCX_SUCCESS)
        bench_die(c, "%s: %s failed: %s", op->name, call,
                  nbcx_error_detail(err));
}

/* The first implementation measured: native MPI where there is one. */
static int first_impl(const struct bench *c)
{
    return c->d->native ? IMPL_NATIVE : IMPL_NBCX;
}

/* The MPI-style calls of an implementation: the native library's, the
 * shim's (--pmpi), NULL for nbcx's own API. */
static const struct bench_calls *impl_calls(const struct bench *c, int impl)
{
    return impl == IMPL_NATIVE ? c->d->native
           : impl == IMPL_SHIM ? c->shim
                               : NULL;
}

/* Whether implementation i runs: nbcx always, the others when present. */
static int impl_on(const struct bench *c, int i)
{
    return i == IMPL_NBCX || impl_calls(c, i) != NULL;
}

/* Every implementation that runs, in enum order from first_impl. */
#define FOR_IMPL(c, i)                                                       \
    for (int i = first_impl(c); i < IMPL_COUNT; i++)                         \
        if (impl_on(c, i))

/* ---- one request of any implementation --------------------------------- */

/* With --persistent, nbcx and native point at the buffers' persistent
 * requests (b->npers, b->native_pers or b->shim_pers), which op_start
 * starts and op_wait completes, leaving them inactive for the next run;
 * else at the request's own, made afresh by every start. */
struct request {
    enum bench_impl impl;
    const struct bench_op *op;
    const struct bench_calls *calls; /* NULL: nbcx's API */
    nbcx_request own_nbcx, *nbcx;
    _Alignas(max_align_t) unsigned char own_native[BENCH_NATIVE_REQ];
    void *native;
};

static void *persistent_of(const struct bench_buf *b, int impl)
{
    return impl == IMPL_SHIM ? b->shim_pers : b->native_pers;
}

/* The MPI libraries' errors are fatal there (MPI_ERRORS_ARE_FATAL), so
 * only nbcx's codes are checked. */
static void op_start(const struct bench *c, struct request *r,
                     const struct bench_buf *b)
{
    r->nbcx = &r->own_nbcx;
    r->native = r->own_native;
    r->calls = impl_calls(c, r->impl);
    if (r->calls && persistent_of(b, r->impl)) {
        r->native = persistent_of(b, r->impl);
        r->calls->pstart(r->native);
    } else if (r->calls) {
        r->calls->start(c, r->op, b, r->native);
    } else if (b->npers) {
        r->nbcx = b->npers;
        check(c, nbcx_start(r->nbcx), r->op, "nbcx_start");
    } else {
        check(c, r->op->nbcx(b, r->nbcx), r->op, "start");
    }
}

static void op_test(const struct bench *c, struct request *r)
{
    int flag;
    if (r->calls)
        r->calls->test(r->native);
    else
        check(c, nbcx_test(r->nbcx, &flag), r->op, "nbcx_test");
}

static void op_wait(const struct bench *c, struct request *r)
{
    if (r->calls)
        r->calls->wait(r->native);
    else
        check(c, nbcx_wait(r->nbcx), r->op, "nbcx_wait");
}

/* --persistent: the persistent requests of op on the buffers b, made
 * once (collectively: MPI's and nbcx's init calls are) and started by
 * every run at this size. */
struct persistent {
    nbcx_request nbcx;
    _Alignas(max_align_t) unsigned char native[BENCH_NATIVE_REQ];
    _Alignas(max_align_t) unsigned char shim[BENCH_NATIVE_REQ];
};

static void persistent_init(const struct bench *c, const struct bench_op *op,
                            struct bench_buf *b, struct persistent *p)
{
    p->nbcx = NBCX_REQUEST_NULL;
    check(c, op->nbcx_init(b, &p->nbcx), op, "nbcx persistent init");
    b->npers = &p->nbcx;
    const struct bench_calls *n = c->d->native;
    if (n && n->pinit && n->pinit(c, op, b, p->native))
        b->native_pers = p->native;
    if (c->shim && c->shim->pinit && c->shim->pinit(c, op, b, p->shim))
        b->shim_pers = p->shim;
}

static void persistent_free(const struct bench *c, const struct bench_op *op,
                            struct bench_buf *b)
{
    if (b->native_pers)
        c->d->native->pfree(b->native_pers);
    if (b->shim_pers)
        c->shim->pfree(b->shim_pers);
    if (b->npers)
        check(c, nbcx_request_free(b->npers), op, "nbcx_request_free");
    b->npers = NULL;
    b->native_pers = NULL;
    b->shim_pers = NULL;
}

/* ---- the measurements, one function each ------------------------------- */

/* t_block: the blocking reference. */
static double measure_block(const struct bench *c, const struct bench_op *op,
                            const struct bench_buf *b)
{
    const struct bench_driver *d = c->d;
    if (d->block_begin)
        d->block_begin(c);
    d->barrier(c);
    double t0 = d->wtime();
    int err = d->block(c, op, b);
    double t = d->wtime() - t0;
    check(c, err, op, "the blocking variant");
    if (d->block_end)
        d->block_end(c, op, b);
    return t;
}

/* t_pure: start, then wait at once. */
static double measure_pure(const struct bench *c, const struct bench_op *op,
                           const struct bench_buf *b, enum bench_impl impl)
{
    struct request r = { .impl = impl, .op = op };
    c->d->barrier(c);
    double t0 = c->d->wtime();
    op_start(c, &r, b);
    op_wait(c, &r);
    return c->d->wtime() - t0;
}

/* t_cpu: the computation alone. */
static double measure_cpu(const struct bench *c, long units)
{
    c->d->barrier(c);
    double t0 = c->d->wtime();
    cpu_work(units);
    return c->d->wtime() - t0;
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
    double (*now)(void) = c->d->wtime;
    struct request r = { .impl = impl, .op = op };
    struct cpu_snapshot before, after;
    /* Read /proc before the barrier: it is slow, and the barrier then
     * starts all ranks together again. */
    cpu_snapshot_take(&before, c->skip, c->nskip);
    c->d->barrier(c);

    double t0 = now();
    op_start(c, &r, b);
    double overhead = now() - t0;
    for (long k = 0; k <= tests; k++) {
        cpu_work(units * (k + 1) / (tests + 1) - units * k / (tests + 1));
        if (k < tests) {
            double t = now();
            op_test(c, &r);
            overhead += now() - t;
        }
    }
    double tw = now();
    op_wait(c, &r);
    double t1 = now();
    overhead += t1 - tw;

    cpu_snapshot_take(&after, c->skip, c->nskip);
    struct ovrl o = { t1 - t0, overhead, 0 };
    o.cpu = cpu_snapshot_delta(&before, &after) / o.t;
    return o;
}

/* ---- series: repetitions and their maximum over ranks ------------------ */

static void max_over_ranks(const struct bench *c, double *v, int n)
{
    c->d->max_doubles(c, v, n);
}

/* An untimed start + wait of one implementation, right before each of its
 * timed runs, so that every timed run follows a run of its own
 * implementation on the same buffers, never another's. What ran before
 * leaves the buffers' cache lines where it moved them: after native Open
 * MPI's iallgather (libnbc sends the rank's own block from rbuf, and the
 * peer reads it there with CMA) the next 64 KiB copy into that block took
 * 6-8 us instead of 2.5-3 on 2 ranks, whichever library made it (the
 * lines sit in the peer's cache). In a fixed order native -> nbcx, nbcx
 * paid that for native's choice in every repetition: iallgather 64 KiB
 * 1.3-1.5x native, session 27. A program that calls one library pays
 * only for that library's own history, which this reproduces. */
static void settle_pure(const struct bench *c, const struct bench_op *op,
                        const struct bench_buf *b, enum bench_impl impl)
{
    struct request r = { .impl = impl, .op = op };
    op_start(c, &r, b);
    op_wait(c, &r);
}

/* Step 3: t_block and every t_pure, alternating within each repetition,
 * each after an untimed run of its own (settle_pure). */
static void series_pure(const struct bench *c, const struct bench_op *op,
                        const struct bench_buf *b, struct bench_result *r)
{
    for (int k = 0; k < r->reps; k++) {
        (void)measure_block(c, op, b);
        r->t_block[k] = measure_block(c, op, b);
        FOR_IMPL(c, i) {
            settle_pure(c, op, b, (enum bench_impl)i);
            r->impl[i].t_pure[k] = measure_pure(c, op, b, (enum bench_impl)i);
        }
    }
    max_over_ranks(c, r->t_block, r->reps);
    FOR_IMPL(c, i)
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
        off = c->d->max_int(c, off);
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

/* Step 5: t_ovrl of every implementation, alternating within each
 * repetition, each after an untimed run of its own (settle_pure); units[i]
 * is this rank's computation for implementation i.
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
        FOR_IMPL(c, i) {
            struct bench_impl_result *x = &r->impl[i];
            settle_pure(c, op, b, (enum bench_impl)i);
            x->t_cpu[k] = measure_cpu(c, units[i]);
            struct ovrl o = measure_ovrl(c, op, b, (enum bench_impl)i,
                                         units[i], c->o->tests);
            x->t_ovrl[k] = o.t;
            x->overhead[k] = o.overhead;
            x->cpu_progress[k] = o.cpu;
        }
    }
    FOR_IMPL(c, i) {
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

/* Checks nbcx's result before anything is timed. With a native library
 * (MPI): runs native MPI, then nbcx, once each on the same inputs and
 * compares. Without (inproc): runs the blocking variant, then nbcx's
 * nonblocking path, and compares both with the sequential reference.
 * Returns the slowest run's time (max over ranks), or -1 when a result
 * differs on some rank (rank 0 reports it). */
/* On a ring of 1 or 2 ranks both neighbours are one rank, and which of
 * the blocks it sends lands in which of the other's is MPI-4.1's rule
 * (Example 8.10: the block sent towards -1 arrives in the block for +1),
 * which libraries older than it do not all follow (Open MPI 4.1.4 pairs
 * them the other way). There nbcx, and the shim, are checked against the
 * sequential reference of the rule, not against the native result. */
static bool native_may_differ(const struct bench *c,
                              const struct bench_op *op)
{
    return op->send == BLOCKS_PER_NEIGHBOR && c->ranks <= 2;
}

static double verify(const struct bench *c, const struct bench_op *op,
                     struct bench_buf *b)
{
    const void *res;
    size_t n;
    bench_result(op, b, &res, &n);
    void *ref = n ? malloc(n) : NULL;
    if (n && !ref)
        bench_die(c, "%s: out of memory (%zu bytes)", op->name, n);

    double t;
    /* 1: the blocking variant's result, 2: nbcx's, 4: the shim's */
    int bad = 0;
    bool sequential = !c->d->native || native_may_differ(c, op);
    if (c->d->native) {
        t = measure_pure(c, op, b, IMPL_NATIVE);
        if (n && sequential)
            bench_reference(op, b, ref);
        else if (n)
            memcpy(ref, res, n);
    } else {
        bench_reference(op, b, ref);
        t = measure_block(c, op, b);
        bad |= n && memcmp(ref, res, n) != 0;
    }
    bench_poison(op, b);
    t = fmax(t, measure_pure(c, op, b, IMPL_NBCX));
    if (n && memcmp(ref, res, n) != 0)
        bad |= 2;
    if (c->shim) {
        bench_poison(op, b);
        t = fmax(t, measure_pure(c, op, b, IMPL_SHIM));
        if (n && memcmp(ref, res, n) != 0)
            bad |= 4;
    }
    free(ref);

    /* The first rank with a wrong result, and what was wrong anywhere. */
    int first_bad = c->ranks - c->d->max_int(c, bad ? c->ranks - c->rank : 0);
    bad = c->d->max_int(c, bad);
    max_over_ranks(c, &t, 1);
    if (first_bad < c->ranks) {
        if (c->rank == 0)
            fprintf(stderr,
                    "nbcx-bench: %s of %zu bytes on %d ranks: %s result "
                    "differs from %s (first on rank %d)\n",
                    op->name, (size_t)b->count * b->elem, c->ranks,
                    bad & 1   ? "the blocking variant's"
                    : bad & 2 ? "nbcx's"
                              : "the shim's (--pmpi)",
                    sequential ? "the sequential reference" : c->d->reference,
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
        FOR_IMPL(c, i)
            t = fmax(t, measure_pure(c, op, b, (enum bench_impl)i));
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
 * when a result is wrong. */
static int run_one(const struct bench *c, const struct bench_op *op,
                   int count, struct bench_result *r)
{
    struct bench_buf b;
    int nomem = bench_buf_init(&b, op, count, c->rank, c->ranks,
                               c->ncomm) != 0;
    if (c->d->max_int(c, nomem))
        bench_die(c, "%s: out of memory for %d elements per block",
                  op->name, count);

    struct persistent preq;
    if (c->o->persistent)
        persistent_init(c, op, &b, &preq);
    double t = verify(c, op, &b);
    if (t < 0) {
        persistent_free(c, op, &b);
        bench_buf_free(&b);
        return -1;
    }
    t = warm_up(c, op, &b, t);

    r->op = op;
    r->count = count;
    r->bytes = (size_t)count * b.elem;
    if (result_alloc(r, choose_reps(c->o, t)) != 0)
        bench_die(c, "out of memory");
    series_pure(c, op, &b, r);
    if (c->o->pure_only) { /* t_cpu, t_ovrl and the rest stay 0 */
        persistent_free(c, op, &b);
        bench_buf_free(&b);
        return 0;
    }
    long units[IMPL_COUNT] = { 0 };
    double block = bench_stat_of(r->t_block, r->reps).median;
    FOR_IMPL(c, i) {
        double target = c->o->compute == COMPUTE_BLOCK
                            ? block
                            : bench_stat_of(r->impl[i].t_pure, r->reps).median;
        units[i] = series_cpu(c, target, r->reps, r->impl[i].t_cpu);
    }
    series_ovrl(c, op, &b, units, r);
    persistent_free(c, op, &b);
    bench_buf_free(&b);
    return 0;
}

/* ---- checks before the run --------------------------------------------- */

int bench_check_counts(const struct bench_options *o, int ranks, char *err,
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

/* The file is written beside itself, then renamed: try that. */
int bench_json_writable(const char *path)
{
    size_t len = strlen(path) + 5;
    char *tmp = malloc(len);
    FILE *f = NULL;
    if (tmp) {
        snprintf(tmp, len, "%s.tmp", path);
        f = fopen(tmp, "w");
    }
    int ok = f != NULL;
    if (f) {
        fclose(f);
        remove(tmp);
    }
    free(tmp);
    return ok;
}

/* ---- the whole run ------------------------------------------------------ */

int bench_run(struct bench *c, struct bench_meta *meta)
{
    const struct bench_options *o = c->o;
    c->rate = cpu_calibrate(c->d->wtime);
    if (o->verbose)
        fprintf(stderr, "nbcx-bench: rank %d: %.4g units of computation per "
                        "second; CPU accounting by %s\n",
                c->rank, c->rate, cpu_snapshot_method());

    struct bench_result *results =
        calloc((size_t)o->nops * (size_t)o->nsizes, sizeof *results);
    if (!results)
        bench_die(c, "out of memory");
    int nresults = 0, status = 0;
    for (int i = 0; i < o->nops && status == 0; i++) {
        const struct bench_op *op = &bench_ops[o->ops[i]];
        if (c->rank == 0) {
            table_header(stdout, meta, o, op);
            fflush(stdout);
        }
        size_t last_bytes = (size_t)-1;
        for (int j = 0; j < o->nsizes; j++) {
            int count = (int)bench_op_count(op, o->sizes[j], c->ranks);
            size_t bytes = (size_t)count * bench_op_elem(op);
            if (bytes == last_bytes) /* same after rounding: done already */
                continue;
            last_bytes = bytes;
            struct bench_result *r = &results[nresults];
            if (run_one(c, op, count, r) != 0) {
                status = 1;
                break;
            }
            nresults++;
            if (c->rank == 0) {
                table_row(stdout, meta, r);
                fflush(stdout);
            }
        }
        if (c->shim_counts)
            c->shim_counts(c, meta); /* collective: every rank */
        if (c->rank == 0) {
            /* The info line again: it carries what nbcx has measured
             * so far (its bandwidth estimate), rank 0's. */
            if (meta->nbcx_info[0])
                nbcx_info(meta->nbcx_info, sizeof meta->nbcx_info);
            const char *bw = strstr(meta->nbcx_info, "bandwidth=");
            if (bw)
                printf("# nbcx on rank 0 so far: %.*s\n",
                       (int)strcspn(bw, " "), bw);
            if (meta->has_shim)
                printf("# shim: %lld calls served by nbcx, %lld sent to the "
                       "native library (all ranks, so far)\n",
                       meta->shim_served, meta->shim_native);
            putchar('\n');
            fflush(stdout);
            /* After every operation, so a long run that is cut short
             * still leaves its results. */
            if (o->json && json_write(o->json, meta, o, results,
                                      nresults) != 0)
                bench_die(c, "cannot write %s", o->json);
        }
    }

    for (int i = 0; i < nresults; i++)
        result_free(&results[i]);
    free(results);
    return status;
}
