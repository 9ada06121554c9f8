/* select.c - the algorithm tables and the automatic choice.
 *
 * Each collective has a table of algorithms. The automatic choice looks
 * at the message size in bytes, the communicator size and, for
 * reductions, commutativity. nbcx_algorithm_set() or NBCX_<COLL>_ALG
 * forces an algorithm; one that cannot serve a call falls back to the
 * automatic choice, so forcing never changes a result.
 *
 * Every table ends with "slots" (coll/shm.c), which only communicators of
 * the inproc transport can use: on them the automatic choice takes it for
 * messages up to NBCX_INPROC_SLOT_MAX bytes (the whole buffer; one block
 * for gather, scatter, allgather and alltoall; 0: never; default: no
 * limit), in every progress mode (split included: slot operations have
 * no tree to split), and the point-to-point algorithms above that.
 * Elsewhere forcing "slots" falls back to the automatic choice.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../transport/inproc.h"
#include "coll.h"

static bool commutative(const struct nbcx_sched_s *s,
                        const struct nbcxi_coll_args *a)
{
    (void)s;
    return a->op->commutative;
}

static const struct nbcxi_algorithm barrier_algs[] = {
    { "dissemination", nbcx_build_barrier_dissemination, NULL },
    { "slots", nbcx_build_barrier_slots, nbcxi_shm_usable },
};
static const struct nbcxi_algorithm bcast_algs[] = {
    { "binomial", nbcx_build_bcast_binomial, NULL },
    { "chain", nbcx_build_bcast_chain, NULL },
    { "slots", nbcx_build_bcast_slots, nbcxi_shm_usable },
};
static const struct nbcxi_algorithm reduce_algs[] = {
    { "binomial", nbcx_build_reduce_binomial, NULL },
    { "chain", nbcx_build_reduce_chain, commutative },
    { "slots", nbcx_build_reduce_slots, nbcxi_shm_usable },
};
static const struct nbcxi_algorithm allreduce_algs[] = {
    { "recursive_doubling", nbcx_build_allreduce_recursive_doubling, NULL },
    { "ring", nbcx_build_allreduce_ring, commutative },
    { "reduce_bcast", nbcx_build_allreduce_reduce_bcast, NULL },
    { "slots", nbcx_build_allreduce_slots, nbcxi_shm_usable },
};
static const struct nbcxi_algorithm gather_algs[] = {
    { "binomial", nbcx_build_gather_binomial, NULL },
    { "linear", nbcx_build_gather_linear, NULL },
    { "slots", nbcx_build_gather_slots, nbcxi_shm_usable },
};
static const struct nbcxi_algorithm scatter_algs[] = {
    { "binomial", nbcx_build_scatter_binomial, NULL },
    { "linear", nbcx_build_scatter_linear, NULL },
    { "slots", nbcx_build_scatter_slots, nbcxi_shm_usable },
};
static const struct nbcxi_algorithm allgather_algs[] = {
    { "bruck", nbcx_build_allgather_bruck, NULL },
    { "ring", nbcx_build_allgather_ring, NULL },
    { "slots", nbcx_build_allgather_slots, nbcxi_shm_usable },
};
static const struct nbcxi_algorithm alltoall_algs[] = {
    { "linear", nbcx_build_alltoall_linear, NULL },
    { "pairwise", nbcx_build_alltoall_pairwise, NULL },
    { "bruck", nbcx_build_alltoall_bruck, NULL },
    { "slots", nbcx_build_alltoall_slots, nbcxi_shm_usable },
};

static const struct nbcxi_algorithm gatherv_algs[] = {
    { "linear", nbcx_build_gatherv_linear, NULL },
};
static const struct nbcxi_algorithm scatterv_algs[] = {
    { "linear", nbcx_build_scatterv_linear, NULL },
};
static const struct nbcxi_algorithm allgatherv_algs[] = {
    { "linear", nbcx_build_allgatherv_linear, NULL },
    { "ring", nbcx_build_allgatherv_ring, NULL },
};
static const struct nbcxi_algorithm alltoallv_algs[] = {
    { "linear", nbcx_build_alltoallv_linear, NULL },
    { "pairwise", nbcx_build_alltoallv_pairwise, NULL },
};
static const struct nbcxi_algorithm reduce_scatter_algs[] = {
    { "pairwise", nbcx_build_reduce_scatter_pairwise, NULL },
    { "reduce_scatterv", nbcx_build_reduce_scatter_reduce_scatterv, NULL },
};
static const struct nbcxi_algorithm scan_algs[] = {
    { "recursive_doubling", nbcx_build_scan_recursive_doubling, NULL },
    { "linear", nbcx_build_scan_linear, NULL },
};
static const struct nbcxi_algorithm exscan_algs[] = {
    { "recursive_doubling", nbcx_build_exscan_recursive_doubling, NULL },
    { "linear", nbcx_build_exscan_linear, NULL },
};
static const struct nbcxi_algorithm neighbor_allgather_algs[] = {
    { "linear", nbcx_build_neighbor_allgather_linear, NULL },
};
static const struct nbcxi_algorithm neighbor_alltoall_algs[] = {
    { "linear", nbcx_build_neighbor_alltoall_linear, NULL },
};

#define TABLE(name, algs, list)                                               \
    { name, algs, sizeof(algs) / sizeof(algs[0]), list }

static const struct coll_table {
    const char *name;
    const struct nbcxi_algorithm *algs;
    int nalgs;
    const char *names; /* for nbcx_algorithm_names */
} tables[NBCXI_NCOLL] = {
    [NBCXI_BARRIER] = TABLE("barrier", barrier_algs, "dissemination slots"),
    [NBCXI_BCAST] = TABLE("bcast", bcast_algs, "binomial chain slots"),
    [NBCXI_REDUCE] = TABLE("reduce", reduce_algs, "binomial chain slots"),
    [NBCXI_ALLREDUCE] = TABLE("allreduce", allreduce_algs,
                              "recursive_doubling ring reduce_bcast slots"),
    [NBCXI_GATHER] = TABLE("gather", gather_algs, "binomial linear slots"),
    [NBCXI_SCATTER] = TABLE("scatter", scatter_algs,
                            "binomial linear slots"),
    [NBCXI_ALLGATHER] = TABLE("allgather", allgather_algs,
                              "bruck ring slots"),
    [NBCXI_ALLTOALL] = TABLE("alltoall", alltoall_algs,
                             "linear pairwise bruck slots"),
    [NBCXI_GATHERV] = TABLE("gatherv", gatherv_algs, "linear"),
    [NBCXI_SCATTERV] = TABLE("scatterv", scatterv_algs, "linear"),
    [NBCXI_ALLGATHERV] = TABLE("allgatherv", allgatherv_algs,
                               "linear ring"),
    [NBCXI_ALLTOALLV] = TABLE("alltoallv", alltoallv_algs,
                              "linear pairwise"),
    [NBCXI_ALLTOALLW] = TABLE("alltoallw", alltoallv_algs,
                              "linear pairwise"),
    [NBCXI_REDUCE_SCATTER] = TABLE("reduce_scatter", reduce_scatter_algs,
                                   "pairwise reduce_scatterv"),
    [NBCXI_REDUCE_SCATTER_BLOCK] = TABLE("reduce_scatter_block",
                                         reduce_scatter_algs,
                                         "pairwise reduce_scatterv"),
    [NBCXI_SCAN] = TABLE("scan", scan_algs, "recursive_doubling linear"),
    [NBCXI_EXSCAN] = TABLE("exscan", exscan_algs,
                           "recursive_doubling linear"),
    [NBCXI_NEIGHBOR_ALLGATHER] = TABLE("neighbor_allgather",
                                       neighbor_allgather_algs, "linear"),
    [NBCXI_NEIGHBOR_ALLGATHERV] = TABLE("neighbor_allgatherv",
                                        neighbor_allgather_algs, "linear"),
    [NBCXI_NEIGHBOR_ALLTOALL] = TABLE("neighbor_alltoall",
                                      neighbor_alltoall_algs, "linear"),
    [NBCXI_NEIGHBOR_ALLTOALLV] = TABLE("neighbor_alltoallv",
                                       neighbor_alltoall_algs, "linear"),
    [NBCXI_NEIGHBOR_ALLTOALLW] = TABLE("neighbor_alltoallw",
                                       neighbor_alltoall_algs, "linear"),
};

/* ---- tunables: forced algorithms and the fragment size ---- */

static _Atomic int forced[NBCXI_NCOLL]; /* index + 1; 0 = automatic */
static _Atomic size_t segsize;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static int env_error; /* first bad NBCX_<COLL>_ALG, reported at each call */

static int find_coll(const char *name)
{
    for (int c = 0; c < NBCXI_NCOLL; c++)
        if (name && strcasecmp(name, tables[c].name) == 0)
            return c;
    return -1;
}

static int set_alg(int c, const char *alg)
{
    if (!alg || strcasecmp(alg, "auto") == 0) {
        forced[c] = 0;
        return NBCX_SUCCESS;
    }
    for (int i = 0; i < tables[c].nalgs; i++) {
        if (strcasecmp(alg, tables[c].algs[i].name) == 0) {
            forced[c] = i + 1;
            return NBCX_SUCCESS;
        }
    }
    return NBCX_ERR_ALGORITHM;
}

static void read_env(void)
{
    segsize = nbcxi_env_size("NBCX_SEGSIZE", 65536);
    for (int c = 0; c < NBCXI_NCOLL; c++) {
        char var[64];
        snprintf(var, sizeof var, "NBCX_%s_ALG", tables[c].name);
        for (char *p = var; *p; p++)
            if (*p >= 'a' && *p <= 'z')
                *p = (char)(*p - 'a' + 'A');
        const char *v = nbcxi_getenv(var);
        if (v && set_alg(c, v) != NBCX_SUCCESS && !env_error) {
            fprintf(stderr, "nbcx: %s=%s names no %s algorithm (have: %s)\n",
                    var, v, tables[c].name, tables[c].names);
            env_error = NBCX_ERR_ALGORITHM;
        }
    }
}

int nbcx_algorithm_set(const char *coll, const char *alg)
{
    pthread_once(&env_once, read_env);
    int c = find_coll(coll);
    return c < 0 ? NBCX_ERR_ALGORITHM : set_alg(c, alg);
}

int nbcx_algorithm_names(const char *coll, const char **names)
{
    int c = find_coll(coll);
    if (c < 0)
        return NBCX_ERR_ALGORITHM;
    if (!names)
        return NBCX_ERR_ARG;
    *names = tables[c].names;
    return NBCX_SUCCESS;
}

int nbcx_segsize_set(size_t bytes)
{
    pthread_once(&env_once, read_env);
    if (bytes == 0)
        return NBCX_ERR_ARG;
    segsize = bytes;
    return NBCX_SUCCESS;
}

/* ---- the automatic choice ---- */

enum { SMALL = 128 * 1024 }; /* below: latency-bound algorithms */

/* Bytes of reduce_scatter's whole vector. */
static size_t vector_bytes(const struct nbcx_sched_s *s,
                           const struct nbcxi_coll_args *a)
{
    size_t n = 0;
    for (int i = 0; i < s->size; i++)
        n += (size_t)(a->rv.counts ? a->rv.counts[i] : a->rcount);
    return n * a->rtype->size;
}

/* The bytes of the buffer (bcast, reductions) or of one block, the same
 * on every rank (type signatures match). */
static size_t message_bytes(const struct nbcxi_coll_args *a)
{
    size_t rbytes = a->rtype ? (size_t)a->rcount * a->rtype->size : 0;
    size_t sbytes = a->stype ? (size_t)a->scount * a->stype->size : 0;
    return rbytes > sbytes ? rbytes : sbytes;
}

static int automatic(enum nbcxi_coll coll, const struct nbcx_sched_s *s,
                     const struct nbcxi_coll_args *a)
{
    int p = s->size;
    size_t rbytes = a->rtype ? (size_t)a->rcount * a->rtype->size : 0;
    size_t block = message_bytes(a);
    switch (coll) {
    case NBCXI_BCAST:
        return (rbytes < SMALL || p <= 2) ? 0 : 1;
    case NBCXI_REDUCE:
        return (rbytes < SMALL || p <= 2 || !a->op->commutative) ? 0 : 1;
    case NBCXI_ALLREDUCE:
        return (rbytes < SMALL || !a->op->commutative || a->rcount < p) ? 0
                                                                       : 1;
    case NBCXI_GATHER:
    case NBCXI_SCATTER:
        return block <= 2048 ? 0 : 1;
    case NBCXI_ALLGATHER:
        return block * (size_t)p < 65536 ? 0 : 1;
    case NBCXI_ALLTOALL:
        return (block <= 256 && p >= 4) ? 2 : p <= 8 ? 0 : 1;
    case NBCXI_ALLGATHERV:
    case NBCXI_ALLTOALLV:
    case NBCXI_ALLTOALLW:
        /* everything at once on few ranks, else ring / pairwise */
        return p <= 8 ? 0 : 1;
    case NBCXI_REDUCE_SCATTER:
    case NBCXI_REDUCE_SCATTER_BLOCK:
        /* few hops through rank 0 for small vectors on many ranks */
        return (p > 8 && vector_bytes(s, a) < 16384) ? 1 : 0;
    case NBCXI_SCAN:
    case NBCXI_EXSCAN:
        /* the pipelined chain for long vectors on few ranks */
        return (rbytes >= SMALL && p <= 16) ? 1 : 0;
    default:
        return 0;
    }
}

/* The binomial-tree algorithm of a collective in split mode (allreduce:
 * reduce + bcast), or `dflt` for those without one. */
static int split_tree(enum nbcxi_coll coll, int dflt)
{
    switch (coll) {
    case NBCXI_BCAST:
    case NBCXI_REDUCE:
    case NBCXI_GATHER:
    case NBCXI_SCATTER:
        return 0; /* binomial */
    case NBCXI_ALLREDUCE:
        return 2; /* reduce_bcast */
    default:
        return dflt;
    }
}

/* The "slots" builder of a collective, NULL for those without one. */
static nbcxi_builder *slots_builder(enum nbcxi_coll coll)
{
    switch (coll) {
    case NBCXI_BARRIER: return nbcx_build_barrier_slots;
    case NBCXI_BCAST: return nbcx_build_bcast_slots;
    case NBCXI_REDUCE: return nbcx_build_reduce_slots;
    case NBCXI_ALLREDUCE: return nbcx_build_allreduce_slots;
    case NBCXI_GATHER: return nbcx_build_gather_slots;
    case NBCXI_SCATTER: return nbcx_build_scatter_slots;
    case NBCXI_ALLGATHER: return nbcx_build_allgather_slots;
    case NBCXI_ALLTOALL: return nbcx_build_alltoall_slots;
    default: return NULL;
    }
}

void nbcxi_coll_selection(enum nbcxi_coll coll, struct nbcxi_selection *sel)
{
    pthread_once(&env_once, read_env);
    nbcx_progress_mode mode = NBCX_PROGRESS_CALLER;
    nbcx_progress_get(&mode);
    sel->forced = forced[coll];
    sel->segsize = segsize;
    sel->mode = (int)mode;
}

int nbcxi_coll_build(enum nbcxi_coll coll, struct nbcx_sched_s *s,
                     struct nbcxi_coll_args *a)
{
    pthread_once(&env_once, read_env);
    if (env_error)
        return env_error;
    a->segsize = segsize;
    const struct coll_table *t = &tables[coll];
    int i = forced[coll] - 1;
    if (i < 0 || (t->algs[i].usable && !t->algs[i].usable(s, a))) {
        i = automatic(coll, s, a);
        /* Split progress splits binomial trees: unless an algorithm is
         * forced, tree-shaped operations use theirs. */
        nbcx_progress_mode mode;
        if (forced[coll] == 0 && nbcx_progress_get(&mode) == NBCX_SUCCESS &&
            mode == NBCX_PROGRESS_SPLIT)
            i = split_tree(coll, i);
        /* Ranks that share memory: slots, up to NBCX_INPROC_SLOT_MAX, for
         * the collectives that have them (the last algorithm of their
         * table). */
        const struct nbcxi_shm *shm = nbcxi_inproc_shm(s->comm);
        int slots = t->nalgs - 1;
        if (shm && shm->slot_max > 0 && message_bytes(a) <= shm->slot_max &&
            t->algs[slots].build == slots_builder(coll) &&
            t->algs[slots].usable(s, a))
            i = slots;
    }
    s->op_name = t->name; /* for diagnoses (progress/watchdog.c) */
    s->alg_name = t->algs[i].name;
    int err = t->algs[i].build(s, a);
    return err ? err : s->err;
}

int nbcx_info(char *buf, size_t len)
{
    if (!buf || len == 0)
        return NBCX_ERR_ARG;
    pthread_once(&env_once, read_env);
    char progress[192];
    nbcxi_progress_describe(progress, sizeof progress);
    size_t n = (size_t)snprintf(buf, len, "nbcx %d.%d.%d: %s segsize=%zu",
                                NBCX_VERSION_MAJOR, NBCX_VERSION_MINOR,
                                NBCX_VERSION_PATCH, progress,
                                (size_t)segsize);
    for (int c = 0; c < NBCXI_NCOLL && n < len; c++)
        n += (size_t)snprintf(buf + n, len - n, " %s=%s", tables[c].name,
                              forced[c] ? tables[c].algs[forced[c] - 1].name
                                        : "auto");
    unsigned long hits, misses;
    nbcxi_cache_stats(&hits, &misses);
    if (n < len)
        snprintf(buf + n, len - n, " cache_hits=%lu cache_misses=%lu", hits,
                 misses);
    return NBCX_SUCCESS;
}

/* The schedule checker (check/) walks these tables: collective c's name
 * (NULL when c is out of range), its algorithms and their number. */
const char *nbcxi_coll_table(int c, const struct nbcxi_algorithm **algs,
                             int *nalgs)
{
    if (c < 0 || c >= NBCXI_NCOLL)
        return NULL;
    *algs = tables[c].algs;
    *nalgs = tables[c].nalgs;
    return tables[c].name;
}
