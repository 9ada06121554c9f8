/*
 * check.c - the schedule checker's public functions (nbcx_check.h).
 *
 * A check builds the schedule of one rank at a time on a communicator
 * whose transport cannot send (model/silent.c), analyses it
 * (rank.c), keeps its compact form and destroys it; then checks across
 * ranks (global.c). Reports that name nodes build the ranks involved
 * again. Builders are deterministic, so the second build is the first.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

/* A communicator whose transport cannot communicate (model/silent.c). */
int ck_null_comm(int rank, int size, int ranks_per_node,
                 struct nbcx_comm_s **out)
{
    return nbcxi_silent_comm(NBCXI_SILENT_CHECK, rank, size, (1 << 20) - 1,
                             false, ranks_per_node, out);
}

/* ------------------------------------------------------------------ */
/* Reports, sizes                                                      */
/* ------------------------------------------------------------------ */

void ck_error(struct ck_job *J, const char *fmt, ...)
{
    J->res.errors++;
    if (J->res.errors > J->max_reports) {
        if (J->res.errors == (long long)J->max_reports + 1) {
            const char *more = "(further errors are counted, not shown)";
            if (J->report)
                J->report(more, J->ctx);
            else
                fprintf(stderr, "nbcx check: %s\n", more);
        }
        return;
    }
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (J->report)
        J->report(msg, J->ctx);
    else
        fprintf(stderr, "nbcx check: %s\n", msg);
}

int ck_size_index(struct ck_job *J, uint64_t bytes, uint32_t *idx)
{
    if (2 * (J->nsizes + 1) > J->size_tab_cap) { /* rehash */
        uint32_t cap = J->size_tab_cap ? 2 * J->size_tab_cap : 64;
        uint32_t *tab = calloc(cap, sizeof *tab);
        uint64_t *sizes = realloc(J->sizes, sizeof *sizes * (cap / 2));
        if (!tab || !sizes) {
            free(tab);
            if (sizes)
                J->sizes = sizes;
            return NBCX_ERR_NOMEM;
        }
        J->sizes = sizes;
        for (uint32_t i = 0; i < J->nsizes; i++) {
            uint32_t h = (uint32_t)(J->sizes[i] * 0x9e3779b97f4a7c15ull >> 32);
            while (tab[h & (cap - 1)])
                h++;
            tab[h & (cap - 1)] = i + 1;
        }
        free(J->size_tab);
        J->size_tab = tab;
        J->size_tab_cap = cap;
    }
    uint32_t h = (uint32_t)(bytes * 0x9e3779b97f4a7c15ull >> 32);
    for (;; h++) {
        uint32_t slot = J->size_tab[h & (J->size_tab_cap - 1)];
        if (slot == 0)
            break;
        if (J->sizes[slot - 1] == bytes) {
            *idx = slot - 1;
            return NBCX_SUCCESS;
        }
    }
    if (J->nsizes == CK_MAX_SIZES) {
        ck_error(J, "more than %d distinct message sizes: the checker "
                    "cannot tell them apart",
                 CK_MAX_SIZES);
        J->fatal = true;
        *idx = 0;
        return NBCX_SUCCESS;
    }
    J->sizes[J->nsizes] = bytes;
    J->size_tab[h & (J->size_tab_cap - 1)] = ++J->nsizes;
    *idx = J->nsizes - 1;
    return NBCX_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Schedules                                                           */
/* ------------------------------------------------------------------ */

struct nbcx_sched_s *ck_get(struct ck_job *J, int r, struct ck_regions *reg)
{
    if (!J->alg) { /* hand-built */
        ck_regions_reset(reg);
        return J->scheds[r];
    }
    struct nbcx_comm_s *comm;
    struct nbcx_sched_s *s = NULL;
    int err = ck_null_comm(r, J->size, J->ranks_per_node, &comm);
    if (err == NBCX_SUCCESS)
        err = ck_setup_topology(J, r, comm);
    const struct nbcxi_topo *topo = NULL;
    if (err == NBCX_SUCCESS) {
        topo = atomic_load(&comm->topo);
        err = nbcxi_sched_new(comm, &s); /* the schedule holds comm */
    }
    if (comm)
        nbcxi_comm_release(comm);
    struct nbcxi_coll_args a;
    if (err == NBCX_SUCCESS)
        err = ck_setup_rank(J, r, topo, &a, reg);
    if (err == NBCX_SUCCESS)
        a.radix = J->radix;
    if (err == NBCX_SUCCESS && J->alg->usable && !J->alg->usable(s, &a)) {
        J->unusable = true;
        nbcxi_sched_destroy(s);
        return NULL;
    }
    if (err == NBCX_SUCCESS) {
        int64_t t0 = nbcxi_now_ns();
        err = J->alg->build(s, &a);
        if (!J->silent)
            J->res.build_seconds += (double)(nbcxi_now_ns() - t0) * 1e-9;
        if (err == NBCX_SUCCESS)
            err = s->build.err;
        if (err != NBCX_SUCCESS && !J->silent) {
            ck_error(J, "rank %d: the builder failed: %s", r,
                     nbcx_error_string(err));
            J->fatal = true;
            err = NBCX_SUCCESS; /* reported: the check goes on */
            nbcxi_sched_destroy(s);
            return NULL;
        }
    }
    if (err != NBCX_SUCCESS) {
        J->stop = err;
        nbcxi_sched_destroy(s);
        return NULL;
    }
    return s;
}

void ck_put(struct ck_job *J, struct nbcx_sched_s *s)
{
    if (J->alg)
        nbcxi_sched_destroy(s);
}

/* ------------------------------------------------------------------ */
/* The driver                                                          */
/* ------------------------------------------------------------------ */

static void job_init(struct ck_job *J, int size, const nbcx_check_options *o)
{
    memset(J, 0, sizeof *J);
    J->size = size;
    J->max_reports = o && o->max_reports > 0 ? o->max_reports : 20;
    J->report = o ? o->report : NULL;
    J->ctx = o ? o->ctx : NULL;
}

static int run(struct ck_job *J, nbcx_check_result *res)
{
    int64_t t0 = nbcxi_now_ns();
    struct ck_regions reg = { 0 };
    int err = ck_ws_new(&J->ws);
    if (err == NBCX_SUCCESS &&
        !(J->ranks = calloc((size_t)J->size, sizeof *J->ranks)))
        err = NBCX_ERR_NOMEM;
    for (int r = 0; r < J->size && err == NBCX_SUCCESS; r++) {
        struct nbcx_sched_s *s = ck_get(J, r, &reg);
        if (!s) {
            if (J->unusable)
                err = NBCX_ERR_ALGORITHM;
            else if (J->stop)
                err = J->stop;
            continue;
        }
        err = ck_rank_analyse(J, r, s, &reg, NULL, NULL);
        ck_put(J, s);
    }
    if (err == NBCX_SUCCESS && !J->fatal) {
        ck_match(J);
        if (!J->cyclic)
            ck_deadlock(J);
    }
    ck_regions_free(&reg);
    ck_free_ranks(J);
    ck_ws_free(J->ws);
    free(J->sizes);
    free(J->size_tab);
    J->res.seconds = (double)(nbcxi_now_ns() - t0) * 1e-9;
    if (res)
        *res = J->res;
    if (err != NBCX_SUCCESS)
        return err;
    return J->res.errors ? NBCX_ERR_NODE : NBCX_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Public functions                                                    */
/* ------------------------------------------------------------------ */

const char *nbcx_check_collective_name(int i)
{
    return nbcxi_coll_name(i);
}

/* A non-commutative operation for the reductions; it never runs. */
static void noncommutative_fn(const void *in, void *inout, int count,
                              nbcx_datatype type, void *ctx)
{
    (void)in, (void)inout, (void)count, (void)type, (void)ctx;
}

static bool is_reduction(enum nbcxi_coll c)
{
    return c == NBCXI_REDUCE || c == NBCXI_ALLREDUCE ||
           c == NBCXI_REDUCE_SCATTER || c == NBCXI_REDUCE_SCATTER_BLOCK ||
           c == NBCXI_SCAN || c == NBCXI_EXSCAN;
}

/* The job of nbcx_check_collective: the arguments checked, the fake
 * user memory reserved. The caller runs or estimates it, then calls
 * finish_job. */
static int prepare_job(struct ck_job *J, const char *coll, const char *alg,
                       int size, int count, const nbcx_check_options *opt)
{
    job_init(J, size, opt);
    if (!coll || !alg)
        return NBCX_ERR_ARG;
    int c;
    for (c = 0; c < NBCXI_NCOLL; c++)
        if (strcmp(nbcxi_coll_name(c), coll) == 0)
            break;
    if (c == NBCXI_NCOLL)
        return NBCX_ERR_ALGORITHM;
    J->alg = nbcxi_coll_find(c, alg, &J->radix); /* knomialK: a radix */
    if (!J->alg)
        return NBCX_ERR_ALGORITHM;
    if (size < 1)
        return NBCX_ERR_ARG;
    if (count < 0)
        return NBCX_ERR_COUNT;
    J->coll = (enum nbcxi_coll)c;
    J->coll_name = coll;
    J->count = count;
    J->root = opt ? opt->root : 0;
    if (J->root < 0 || J->root >= size)
        return NBCX_ERR_ROOT;
    J->in_place = opt && opt->in_place;
    J->segsize = opt && opt->segsize ? opt->segsize : 65536;
    J->segsize_auto = !(opt && opt->segsize); /* as coll/select.c */
    J->ranks_per_node = opt && opt->ranks_per_node > 0 ? opt->ranks_per_node
                                                       : 0;
    J->type_handle = opt && opt->type ? opt->type : NBCX_INT32;
    J->type = nbcxi_type(J->type_handle);
    if (!J->type)
        return NBCX_ERR_TYPE;
    J->topology = opt ? opt->topology : NBCX_CHECK_TORUS;
    if (J->topology < NBCX_CHECK_TORUS || J->topology > NBCX_CHECK_GRAPH)
        return NBCX_ERR_ARG;

    int err = NBCX_SUCCESS;
    if (is_reduction(J->coll)) {
        nbcx_op op = J->type->id >= 13 ? NBCX_MAXLOC
                     : J->type->id == 11 ? NBCX_BOR
                                         : NBCX_SUM;
        if (opt && opt->noncommutative) {
            err = nbcx_op_create(noncommutative_fn, 0, NULL, &J->user_op);
            op = J->user_op;
        }
        if (err == NBCX_SUCCESS)
            J->op = nbcxi_op(op);
        if (err == NBCX_SUCCESS)
            err = nbcxi_op_check(J->op, J->type);
    }
    if (err == NBCX_SUCCESS)
        err = ck_setup_job(J);
    return err;
}

static void finish_job(struct ck_job *J)
{
    ck_free_job_memory(J);
    if (J->user_op)
        nbcx_op_free(&J->user_op);
}

int nbcx_check_collective(const char *coll, const char *alg, int size,
                          int count, const nbcx_check_options *opt,
                          nbcx_check_result *res)
{
    struct ck_job J;
    if (res)
        memset(res, 0, sizeof *res);
    int err = prepare_job(&J, coll, alg, size, count, opt);
    if (err == NBCX_SUCCESS)
        err = run(&J, res);
    finish_job(&J);
    return err;
}

/* ------------------------------------------------------------------ */
/* The cost of a check, estimated from a few ranks                     */
/* ------------------------------------------------------------------ */

/* Calibration of the estimate (see nbcx_check_estimate_cost): bytes the
 * process holds besides the compact graph, bytes per allocation of it
 * (malloc's header and rounding), and the wall time of the global phase
 * (matching and deadlock check) per kept node and per kept edge. Measured
 * on the development machine (docs/results/check-scale.md), rounded up. */
enum { EST_BASE_BYTES = 8 << 20, EST_ALLOC_BYTES = 32 };
static const double est_global_node_s = 60e-9, est_global_edge_s = 20e-9;

/* CPU time of the process, or -1. */
static double cpu_seconds(void)
{
#ifdef CLOCK_PROCESS_CPUTIME_ID
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
#endif
    return -1;
}

static void silent_report(const char *msg, void *ctx)
{
    (void)msg, (void)ctx;
}

/* The i-th rank to sample: first the ranks that are often special (the
 * root, rank 0, the last rank), each of which is counted once; then
 * others spread over the communicator by a fixed pseudo-random walk,
 * whose mean stands for all the remaining ranks. Up to 16 ranks: all. */
enum { EST_SAMPLES = 16 };

static int sample_rank(int i, int size, int root)
{
    if (size <= EST_SAMPLES) /* all of them */
        return i < size ? i : 0;
    if (i == 0)
        return root;
    if (i == 1)
        return 0;
    if (i == 2)
        return size - 1;
    uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 32;
    return (int)(x % (uint64_t)size);
}

int nbcx_check_estimate_cost(const char *coll, const char *alg, int size,
                             int count, const nbcx_check_options *opt,
                             nbcx_check_estimate *est)
{
    if (!est)
        return NBCX_ERR_ARG;
    memset(est, 0, sizeof *est);
    nbcx_check_options o = opt ? *opt : (nbcx_check_options){ 0 };
    o.report = silent_report; /* a sample may fail: the check will say */
    struct ck_job J;
    int err = prepare_job(&J, coll, alg, size, count, &o);
    struct ck_regions reg = { 0 };
    if (err == NBCX_SUCCESS)
        err = ck_ws_new(&J.ws);
    if (err == NBCX_SUCCESS &&
        !(J.ranks = calloc((size_t)size, sizeof *J.ranks)))
        err = NBCX_ERR_NOMEM;
    int nsamples = size < EST_SAMPLES ? size : EST_SAMPLES;
    /* per sample: nodes, edges, messages, kept, kept edges, bytes, s */
    double single[7] = { 0 }, others[7] = { 0 }, maxnodes = 0;
    int nsingle = 0, nothers = 0;
    unsigned char *seen = err ? NULL : calloc((size_t)size, 1);
    if (!err && !seen)
        err = NBCX_ERR_NOMEM;
    int i = 0;
    double wall0 = (double)nbcxi_now_ns() * 1e-9, cpu0 = cpu_seconds();
    for (int tries = 0; err == NBCX_SUCCESS && i < nsamples &&
                        tries < 8 * EST_SAMPLES;
         tries++) {
        int r = sample_rank(tries, size, J.root);
        if (seen[r])
            continue;
        seen[r] = 1;
        i++;
        bool is_single = r == J.root || r == 0 || r == size - 1;
        nsingle += is_single;
        nothers += !is_single;
        int64_t t0 = nbcxi_now_ns();
        long long m0 = J.res.messages;
        struct nbcx_sched_s *s = ck_get(&J, r, &reg);
        if (!s) {
            if (J.unusable)
                err = NBCX_ERR_ALGORITHM;
            else if (J.stop)
                err = J.stop;
            continue; /* a failed builder: the check will report it */
        }
        double nodes = s->build.nnodes, edges = s->build.nedges;
        err = ck_rank_analyse(&J, r, s, &reg, NULL, NULL);
        ck_put(&J, s);
        double secs = (double)(nbcxi_now_ns() - t0) * 1e-9;
        const struct ck_rank *R = &J.ranks[r];
        double ksucc = R->soff ? R->soff[R->n] : 0;
        double bytes = sizeof *R + 8.0 * R->np + 4.0 * R->n +
                       (R->soff ? 4.0 * (R->n + 1) + 4.0 * ksucc : 0) +
                       EST_ALLOC_BYTES * (R->soff ? 4 : 2);
        double v[7] = { nodes, edges, (double)(J.res.messages - m0), R->n,
                        ksucc, bytes, secs };
        for (int k = 0; k < 7; k++)
            (is_single ? single : others)[k] += v[k];
        if (nodes > maxnodes)
            maxnodes = nodes;
        /* free it at once: the samples' memory is not the estimate's */
        free(J.ranks[r].key);
        free(J.ranks[r].pend);
        free(J.ranks[r].soff);
        free(J.ranks[r].succ);
        memset(&J.ranks[r], 0, sizeof J.ranks[r]);
    }
    free(seen);
    if (err == NBCX_SUCCESS) {
        double rest = (double)size - nsingle;
        double tot[7];
        for (int k = 0; k < 7; k++)
            tot[k] = single[k] + (nothers ? others[k] / nothers * rest : 0);
        est->nodes = (long long)tot[0];
        est->edges = (long long)tot[1];
        est->messages = (long long)tot[2];
        est->kept = (long long)tot[3];
        /* the compact graph, the ranks' table, the matching's cursors,
         * one schedule being built (about 64 bytes a node) */
        est->bytes = tot[5] + 48.0 * size + EST_BASE_BYTES + 64.0 * maxnodes;
        /* The samples' wall time includes the machine's load; the
         * global phase's calibration does not: scale it by how much
         * slower than its CPU time the sampling ran (1 when idle). */
        double wall = (double)nbcxi_now_ns() * 1e-9 - wall0,
               cpu = cpu_seconds() - cpu0, slow = 1;
        if (cpu0 >= 0 && cpu > 0.01 && wall > cpu)
            slow = wall / cpu < 8 ? wall / cpu : 8;
        est->seconds = tot[6] + slow * (est_global_node_s * tot[3] +
                                        est_global_edge_s * tot[4]);
        est->sampled = i;
    }
    ck_regions_free(&reg);
    ck_free_ranks(&J);
    ck_ws_free(J.ws);
    free(J.sizes);
    free(J.size_tab);
    finish_job(&J);
    return err;
}

int nbcx_check_comm_create(int rank, int size, nbcx_comm *comm)
{
    if (!comm)
        return NBCX_ERR_ARG;
    *comm = NBCX_COMM_NULL;
    if (size < 1)
        return NBCX_ERR_ARG;
    if (rank < 0 || rank >= size)
        return NBCX_ERR_RANK;
    return ck_null_comm(rank, size, 0, comm);
}

int nbcx_check_schedules(int size, const nbcx_sched scheds[],
                         const nbcx_check_options *opt,
                         nbcx_check_result *res)
{
    struct ck_job J;
    job_init(&J, size, opt);
    if (res)
        memset(res, 0, sizeof *res);
    if (size < 1 || !scheds)
        return NBCX_ERR_ARG;
    for (int r = 0; r < size; r++)
        if (!scheds[r] || scheds[r]->build.rank != r ||
            scheds[r]->build.size != size)
            return NBCX_ERR_ARG;
    J.scheds = scheds;
    return run(&J, res);
}
