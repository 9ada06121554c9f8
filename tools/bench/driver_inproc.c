/*
 * driver_inproc.c - nbcx-bench with --transport inproc: the ranks are
 * threads of this process (nbcx_inproc_run), so it needs no MPI library
 * and no mpiexec.
 *
 *   nbcx-bench --transport inproc --ranks 4 --op ibcast,iscatter
 *
 * The variants are those of paper 000, Fig. 6:
 *   blocking     nbcx's blocking-style call path: start + wait at once
 *                in the progress mode of --block-progress (default
 *                caller: the calling thread runs the collective itself
 *                inside nbcx_wait, as a blocking collective does, with
 *                no hand-off to a progress thread);
 *   nbc          the nonblocking path: start + wait at once in the mode
 *                of the run (NBCX_PROGRESS; default auto), which pays
 *                for handing the operation to the progress thread and
 *                waking the waiter;
 *   nbc+overlap  the nonblocking path: start, the computation (with
 *                --tests K test calls), wait. Its communication time
 *                (time inside start, test and wait: "comm") is paper
 *                000's latency of nbc+overlap, set against the blocking
 *                time (comm/block); nbc/block is the overhead of the
 *                nonblocking path.
 * Without a separate blocking path (--block-progress equal to the run's
 * mode) blocking and nbc are the same calls measured twice.
 *
 * The progress mode is process-wide and may change only while no
 * operation is outstanding: around each blocking run the ranks meet at a
 * barrier, rank 0 switches the mode, and after switching back one
 * discarded nbc run brings the progress thread up again, so no variant
 * is timed with the switch in it.
 *
 * Barriers and maxima over ranks are shared memory and a pthread
 * barrier; the CPU time of progress counts every thread of the process
 * except the rank threads.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/* Shared by the rank threads. */
struct shared {
    const struct bench_options *o;
    int ranks;
    pthread_barrier_t bar;
    double **dptr;          /* max_doubles: each rank's array        */
    int *ival;              /* max_int: each rank's value            */
    pid_t *tids;            /* the rank threads                      */
    nbcx_progress_mode nbc_mode, block_mode;
    struct bench_meta meta; /* rank 0's                              */
    atomic_int status;      /* 1 when a result was wrong             */
};

static struct shared *shared_of(const struct bench *c)
{
    return c->dstate;
}

/* ---- synchronisation and maxima ---------------------------------------- */

static void inproc_barrier(const struct bench *c)
{
    pthread_barrier_wait(&shared_of(c)->bar);
}

static void inproc_max_doubles(const struct bench *c, double *v, int n)
{
    struct shared *sh = shared_of(c);
    double *max = malloc((size_t)(n > 0 ? n : 1) * sizeof *max);
    if (!max)
        bench_die(c, "out of memory");
    sh->dptr[c->rank] = v;
    inproc_barrier(c);
    for (int i = 0; i < n; i++) {
        max[i] = sh->dptr[0][i];
        for (int r = 1; r < sh->ranks; r++)
            if (sh->dptr[r][i] > max[i])
                max[i] = sh->dptr[r][i];
    }
    inproc_barrier(c); /* everyone has read every v */
    memcpy(v, max, (size_t)n * sizeof *v);
    free(max);
}

static int inproc_max_int(const struct bench *c, int v)
{
    struct shared *sh = shared_of(c);
    sh->ival[c->rank] = v;
    inproc_barrier(c);
    int max = sh->ival[0];
    for (int r = 1; r < sh->ranks; r++)
        if (sh->ival[r] > max)
            max = sh->ival[r];
    inproc_barrier(c);
    return max;
}

static double inproc_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Other rank threads may be anywhere: end the process at once. */
static void inproc_die(void)
{
    fflush(stdout);
    fflush(stderr);
    _exit(1);
}

/* ---- the variants ------------------------------------------------------ */

/* Rank 0 sets the progress mode between two barriers: no operation is
 * outstanding on any rank then. An operation that has just completed
 * may leave the engine's list a moment later: retry for up to 10 s. */
static void set_mode(const struct bench *c, nbcx_progress_mode m)
{
    inproc_barrier(c);
    if (c->rank == 0) {
        int err = NBCX_ERR_REQUEST;
        for (int tries = 0; tries < 100000; tries++) {
            err = nbcx_progress_set(m);
            if (err != NBCX_ERR_REQUEST)
                break;
            nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
        }
        if (err != NBCX_SUCCESS)
            bench_die(c, "nbcx_progress_set(%s): %s", bench_progress_name(m),
                      nbcx_error_detail(err));
    }
    inproc_barrier(c);
}

static int switching(const struct bench *c)
{
    const struct shared *sh = shared_of(c);
    return sh->block_mode != sh->nbc_mode;
}

static void inproc_block_begin(const struct bench *c)
{
    if (switching(c))
        set_mode(c, shared_of(c)->block_mode);
}

/* nbcx's blocking-style use: start, then wait at once. */
static int inproc_block(const struct bench *c, const struct bench_op *op,
                        const struct bench_buf *b)
{
    (void)c;
    nbcx_request req;
    int err = op->nbcx(b, &req);
    return err != NBCX_SUCCESS ? err : nbcx_wait(&req);
}

static void inproc_block_end(const struct bench *c, const struct bench_op *op,
                             const struct bench_buf *b)
{
    if (!switching(c))
        return;
    set_mode(c, shared_of(c)->nbc_mode);
    /* Discarded: starts the progress thread again, outside any timing. */
    int err = inproc_block(c, op, b);
    if (err != NBCX_SUCCESS)
        bench_die(c, "%s: %s", op->name, nbcx_error_detail(err));
}

static const struct bench_driver inproc_driver = {
    .barrier = inproc_barrier,
    .max_doubles = inproc_max_doubles,
    .max_int = inproc_max_int,
    .wtime = inproc_wtime,
    .die = inproc_die,
    .block_begin = inproc_block_begin,
    .block = inproc_block,
    .block_end = inproc_block_end,
    .reference = "the sequential reference",
};

/* ---- one rank ------------------------------------------------------------ */

static int rank_main(nbcx_comm comm, void *arg)
{
    struct shared *sh = arg;
    struct bench c = { .o = sh->o, .d = &inproc_driver, .dstate = sh,
                       .ncomm = comm, .skip = sh->tids, .nskip = sh->ranks };
    int err = nbcx_comm_rank(comm, &c.rank);
    if (err == NBCX_SUCCESS)
        err = nbcx_comm_size(comm, &c.ranks);
    int periodic = 1; /* the ring of the neighbourhood collectives */
    if (err == NBCX_SUCCESS)
        err = nbcx_comm_set_cart(comm, 1, &c.ranks, &periodic);
    if (err != NBCX_SUCCESS)
        return err; /* before any barrier: nbcx_inproc_run reports it */
    sh->tids[c.rank] = cpu_thread_id();
    inproc_barrier(&c);
    if (c.rank == 0) {
        nbcx_progress_get(&sh->nbc_mode);
        sh->block_mode = sh->o->block_progress
                             ? (nbcx_progress_mode)sh->o->block_progress
                             : sh->nbc_mode;
        meta_collect(&sh->meta, comm, c.ranks);
        sh->meta.has_native = 0;
        sh->meta.block_progress = (int)sh->block_mode;
    }
    inproc_barrier(&c);
    if (bench_run(&c, &sh->meta) != 0)
        atomic_store(&sh->status, 1);
    return NBCX_SUCCESS;
}

/* ---- main --------------------------------------------------------------- */

int bench_inproc_main(int argc, char **argv)
{
    /* Bad arguments: one line, exit code 2. */
    struct bench_options o;
    char err[512];
    if (options_parse(argc, argv, &o, err, sizeof err) != 0) {
        fprintf(stderr, "nbcx-bench: %s\n", err);
        return 2;
    }
    if (o.help) {
        options_usage(stdout);
        options_free(&o);
        return 0;
    }
    int bad = bench_check_counts(&o, o.ranks, err, sizeof err) != 0;
    if (!bad && o.json && !bench_json_writable(o.json)) {
        snprintf(err, sizeof err, "cannot write --json file '%s'", o.json);
        bad = 1;
    }
    if (bad) {
        fprintf(stderr, "nbcx-bench: %s\n", err);
        options_free(&o);
        return 2;
    }

    struct shared sh = { .o = &o, .ranks = o.ranks };
    atomic_init(&sh.status, 0);
    sh.dptr = calloc((size_t)o.ranks, sizeof *sh.dptr);
    sh.ival = calloc((size_t)o.ranks, sizeof *sh.ival);
    sh.tids = calloc((size_t)o.ranks, sizeof *sh.tids);
    int status = 1;
    if (!sh.dptr || !sh.ival || !sh.tids) {
        fprintf(stderr, "nbcx-bench: out of memory\n");
    } else if ((errno = pthread_barrier_init(&sh.bar, NULL,
                                             (unsigned)o.ranks)) != 0) {
        perror("nbcx-bench: pthread_barrier_init");
    } else {
        int e = nbcx_inproc_run(o.ranks, rank_main, &sh);
        if (e != NBCX_SUCCESS)
            fprintf(stderr, "nbcx-bench: nbcx_inproc_run: %s\n",
                    nbcx_error_detail(e));
        status = e != NBCX_SUCCESS ? 1 : atomic_load(&sh.status);
        pthread_barrier_destroy(&sh.bar);
    }
    free(sh.dptr);
    free(sh.ival);
    free(sh.tids);
    options_free(&o);
    return status;
}
