/* select.c - the algorithm table and the automatic choice.
 *
 * One table lists every algorithm of every collective by name; the names
 * nbcx_algorithm_names gives are made from it, followed by the
 * algorithms of the backends built in (nbcxi_backends), which serve only
 * their own communicators. The automatic choice looks at the message size
 * in bytes, the communicator size and, for reductions, commutativity,
 * and names the algorithm it wants; the progress mode may name one too
 * (split mode: the binomial trees it splits). A backend's native
 * algorithm (inproc: "slots", transport/inproc/slots.c) is preferred on
 * its communicators up to the size the backend gives (native_max: the
 * whole buffer, or one block for gather, scatter, allgather and
 * alltoall), in every progress mode. nbcx_algorithm_set() or
 * NBCX_<COLL>_ALG forces an algorithm; one that cannot serve a call falls
 * back to the automatic choice, so forcing never changes a result. A
 * selection table (NBCX_TUNING, tuning.c: written by nbcx-tune from
 * simulations) replaces the built-in thresholds for the calls its rules
 * cover. Pipelined algorithms cut messages into fragments of the size the
 * user chose (NBCX_SEGSIZE, nbcx_segsize_set), else of the size the
 * communicator's transport asks for (ops->segsize: UCX's cost per message
 * is higher than MPI's), else 64 KiB.
 *
 * Adding an algorithm: its builder (coll.h) and one line in the table.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <limits.h>

#include "coll.h"

static bool commutative(const struct nbcx_sched_s *s,
                        const struct nbcxi_coll_args *a)
{
    (void)s;
    return a->op->commutative;
}

/* reduce_scatterv reduces the whole vector with one int count (reduce.c's
 * binomial tree): not for vectors of more than INT_MAX elements. */
static bool vector_fits_int(const struct nbcx_sched_s *s,
                            const struct nbcxi_coll_args *a)
{
    long long n = 0;
    for (int i = 0; i < s->build.size; i++)
        n += nbcxi_vcount(&a->rv, a->rcount, i);
    return n <= INT_MAX;
}

/* Every algorithm of every collective: one line each, in the order
 * nbcx_algorithm_names lists them (a builder that serves several
 * collectives, alltoallv's for alltoallw say, has a line for each). The
 * algorithms a backend serves natively follow, from its own table
 * (struct nbcxi_transport_ops, algorithms). */
static const struct nbcxi_algorithm algorithms[] = {
    { NBCXI_BARRIER, "dissemination", nbcxi_build_barrier_dissemination, NULL },
    { NBCXI_BARRIER, "knomial", nbcxi_build_barrier_knomial, NULL },
    { NBCXI_BARRIER, "hier", nbcxi_build_barrier_hier, NULL },
    { NBCXI_BCAST, "binomial", nbcxi_build_bcast_binomial, NULL },
    { NBCXI_BCAST, "chain", nbcxi_build_bcast_chain, NULL },
    { NBCXI_BCAST, "scatter_allgather", nbcxi_build_bcast_scatter_allgather,
      NULL },
    { NBCXI_BCAST, "knomial", nbcxi_build_bcast_knomial, NULL },
    { NBCXI_BCAST, "double_tree", nbcxi_build_bcast_double_tree, NULL },
    { NBCXI_BCAST, "hier", nbcxi_build_bcast_hier, NULL },
    { NBCXI_REDUCE, "binomial", nbcxi_build_reduce_binomial, NULL },
    { NBCXI_REDUCE, "chain", nbcxi_build_reduce_chain, commutative },
    { NBCXI_REDUCE, "knomial", nbcxi_build_reduce_knomial, NULL },
    { NBCXI_REDUCE, "rabenseifner", nbcxi_build_reduce_rabenseifner, NULL },
    { NBCXI_REDUCE, "hier", nbcxi_build_reduce_hier, NULL },
    { NBCXI_ALLREDUCE, "recursive_doubling",
      nbcxi_build_allreduce_recursive_doubling, NULL },
    { NBCXI_ALLREDUCE, "ring", nbcxi_build_allreduce_ring, commutative },
    { NBCXI_ALLREDUCE, "reduce_bcast", nbcxi_build_allreduce_reduce_bcast,
      NULL },
    { NBCXI_ALLREDUCE, "rabenseifner", nbcxi_build_allreduce_rabenseifner,
      NULL },
    { NBCXI_ALLREDUCE, "hier", nbcxi_build_allreduce_hier, NULL },
    { NBCXI_GATHER, "binomial", nbcxi_build_gather_binomial, NULL },
    { NBCXI_GATHER, "linear", nbcxi_build_gather_linear, NULL },
    { NBCXI_GATHER, "knomial", nbcxi_build_gather_knomial, NULL },
    { NBCXI_SCATTER, "binomial", nbcxi_build_scatter_binomial, NULL },
    { NBCXI_SCATTER, "linear", nbcxi_build_scatter_linear, NULL },
    { NBCXI_SCATTER, "knomial", nbcxi_build_scatter_knomial, NULL },
    { NBCXI_ALLGATHER, "bruck", nbcxi_build_allgather_bruck, NULL },
    { NBCXI_ALLGATHER, "ring", nbcxi_build_allgather_ring, NULL },
    { NBCXI_ALLGATHER, "hier", nbcxi_build_allgather_hier, NULL },
    { NBCXI_ALLGATHER, "linear", nbcxi_build_allgather_linear, NULL },
    { NBCXI_ALLTOALL, "linear", nbcxi_build_alltoall_linear, NULL },
    { NBCXI_ALLTOALL, "pairwise", nbcxi_build_alltoall_pairwise, NULL },
    { NBCXI_ALLTOALL, "bruck", nbcxi_build_alltoall_bruck, NULL },
    { NBCXI_GATHERV, "linear", nbcxi_build_gatherv_linear, NULL },
    { NBCXI_SCATTERV, "linear", nbcxi_build_scatterv_linear, NULL },
    { NBCXI_ALLGATHERV, "linear", nbcxi_build_allgatherv_linear, NULL },
    { NBCXI_ALLGATHERV, "ring", nbcxi_build_allgatherv_ring, NULL },
    { NBCXI_ALLTOALLV, "linear", nbcxi_build_alltoallv_linear, NULL },
    { NBCXI_ALLTOALLV, "pairwise", nbcxi_build_alltoallv_pairwise, NULL },
    { NBCXI_ALLTOALLW, "linear", nbcxi_build_alltoallv_linear, NULL },
    { NBCXI_ALLTOALLW, "pairwise", nbcxi_build_alltoallv_pairwise, NULL },
    { NBCXI_REDUCE_SCATTER, "pairwise", nbcxi_build_reduce_scatter_pairwise,
      NULL },
    { NBCXI_REDUCE_SCATTER, "reduce_scatterv",
      nbcxi_build_reduce_scatter_reduce_scatterv, vector_fits_int },
    { NBCXI_REDUCE_SCATTER, "recursive_halving",
      nbcxi_build_reduce_scatter_recursive_halving, commutative },
    { NBCXI_REDUCE_SCATTER_BLOCK, "pairwise",
      nbcxi_build_reduce_scatter_pairwise, NULL },
    { NBCXI_REDUCE_SCATTER_BLOCK, "reduce_scatterv",
      nbcxi_build_reduce_scatter_reduce_scatterv, vector_fits_int },
    { NBCXI_REDUCE_SCATTER_BLOCK, "recursive_halving",
      nbcxi_build_reduce_scatter_recursive_halving, commutative },
    { NBCXI_SCAN, "recursive_doubling", nbcxi_build_scan_recursive_doubling,
      NULL },
    { NBCXI_SCAN, "linear", nbcxi_build_scan_linear, NULL },
    { NBCXI_EXSCAN, "recursive_doubling",
      nbcxi_build_exscan_recursive_doubling, NULL },
    { NBCXI_EXSCAN, "linear", nbcxi_build_exscan_linear, NULL },
    { NBCXI_NEIGHBOR_ALLGATHER, "linear",
      nbcxi_build_neighbor_allgather_linear, NULL },
    { NBCXI_NEIGHBOR_ALLGATHERV, "linear",
      nbcxi_build_neighbor_allgather_linear, NULL },
    { NBCXI_NEIGHBOR_ALLTOALL, "linear", nbcxi_build_neighbor_alltoall_linear,
      NULL },
    { NBCXI_NEIGHBOR_ALLTOALLV, "linear",
      nbcxi_build_neighbor_alltoall_linear, NULL },
    { NBCXI_NEIGHBOR_ALLTOALLW, "linear",
      nbcxi_build_neighbor_alltoall_linear, NULL },
    { 0, NULL, NULL, NULL }
};

static const char *const coll_names[NBCXI_NCOLL] = {
    [NBCXI_BARRIER] = "barrier", [NBCXI_BCAST] = "bcast",
    [NBCXI_REDUCE] = "reduce", [NBCXI_ALLREDUCE] = "allreduce",
    [NBCXI_GATHER] = "gather", [NBCXI_SCATTER] = "scatter",
    [NBCXI_ALLGATHER] = "allgather", [NBCXI_ALLTOALL] = "alltoall",
    [NBCXI_GATHERV] = "gatherv", [NBCXI_SCATTERV] = "scatterv",
    [NBCXI_ALLGATHERV] = "allgatherv", [NBCXI_ALLTOALLV] = "alltoallv",
    [NBCXI_ALLTOALLW] = "alltoallw", [NBCXI_REDUCE_SCATTER] = "reduce_scatter",
    [NBCXI_REDUCE_SCATTER_BLOCK] = "reduce_scatter_block",
    [NBCXI_SCAN] = "scan", [NBCXI_EXSCAN] = "exscan",
    [NBCXI_NEIGHBOR_ALLGATHER] = "neighbor_allgather",
    [NBCXI_NEIGHBOR_ALLGATHERV] = "neighbor_allgatherv",
    [NBCXI_NEIGHBOR_ALLTOALL] = "neighbor_alltoall",
    [NBCXI_NEIGHBOR_ALLTOALLV] = "neighbor_alltoallv",
    [NBCXI_NEIGHBOR_ALLTOALLW] = "neighbor_alltoallw",
};

const char *nbcxi_coll_name(int c)
{
    return c >= 0 && c < NBCXI_NCOLL ? coll_names[c] : NULL;
}

int nbcxi_knomial_radix(const char *name)
{
    if (!name || strncasecmp(name, "knomial", 7) != 0)
        return 0;
    /* (name[8] is read only after a digit at name[7]: plain "knomial"
     * ends at name[7]) */
    if (name[7] < '0' || name[7] > '9' || name[8] != '\0')
        return 0;
    int k = name[7] - '0';
    return k >= NBCXI_KNOMIAL_MIN && k <= NBCXI_KNOMIAL_MAX ? k : 0;
}

const char *nbcxi_knomial_name(int k)
{
    static const char *const names[] = { "knomial2", "knomial3", "knomial4",
                                         "knomial5", "knomial6", "knomial7",
                                         "knomial8" };
    return k >= NBCXI_KNOMIAL_MIN && k <= NBCXI_KNOMIAL_MAX
               ? names[k - NBCXI_KNOMIAL_MIN]
               : NULL;
}

/* Whether `name` names entry a: its own name, or "knomialK" for the
 * "knomial" line. */
static bool names_entry(const struct nbcxi_algorithm *a, const char *name)
{
    return strcasecmp(a->name, name) == 0 ||
           (nbcxi_knomial_radix(name) && strcasecmp(a->name, "knomial") == 0);
}

/* The entry of `table` (ended by a NULL name) for coll and name (NULL
 * name: its first for coll), or NULL. */
static const struct nbcxi_algorithm *
lookup(const struct nbcxi_algorithm *table, enum nbcxi_coll coll,
       const char *name)
{
    for (const struct nbcxi_algorithm *a = table; a && a->name; a++)
        if (a->coll == (int)coll && (!name || names_entry(a, name)))
            return a;
    return NULL;
}

const struct nbcxi_algorithm *nbcxi_coll_algorithm(int c, int i)
{
    for (const struct nbcxi_algorithm *a = algorithms; a->name; a++)
        if ((int)a->coll == c && i-- == 0)
            return a;
    for (int b = 0; nbcxi_backends[b]; b++)
        for (const struct nbcxi_algorithm *a = nbcxi_backends[b]->algorithms;
             a && a->name; a++)
            if ((int)a->coll == c && i-- == 0)
                return a;
    return NULL;
}

/* "name name ..." of the collectives (c < 0) or of c's algorithms, into
 * buf: what an unknown name could have been. A list longer than len is
 * cut at a whole name (never past buf, always terminated). */
const char *nbcxi_coll_names(int c, char *buf, size_t len)
{
    size_t n = 0;
    if (!len)
        return buf;
    buf[0] = '\0';
    for (int i = 0;; i++) {
        const struct nbcxi_algorithm *a = NULL;
        const char *name = c < 0 ? (i < NBCXI_NCOLL ? coll_names[i] : NULL)
                           : (a = nbcxi_coll_algorithm(c, i)) ? a->name
                                                              : NULL;
        if (!name)
            break;
        size_t need = strlen(name) + (i ? 1 : 0);
        if (n + need >= len)
            break;
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "", name);
    }
    return buf;
}

/* Algorithm `name` of coll, among the core ones and those of any backend
 * built in (whether a communicator can use it is decided per call);
 * "knomialK" names the "knomial" line with radix K. */
const struct nbcxi_algorithm *nbcxi_coll_find(int c, const char *name,
                                              int *radix)
{
    const struct nbcxi_algorithm *a;
    if (radix)
        *radix = 0;
    for (int i = 0; name && (a = nbcxi_coll_algorithm(c, i)); i++)
        if (names_entry(a, name)) {
            if (radix && strcasecmp(a->name, name) != 0)
                *radix = nbcxi_knomial_radix(name);
            return a;
        }
    return NULL;
}

/* ---- tunables: forced algorithms and the fragment size ---- */

/* The forced algorithm's name (a registered entry's), NULL: automatic */
static _Atomic(const char *) forced[NBCXI_NCOLL];
/* The fragment size the user chose (NBCX_SEGSIZE, nbcx_segsize_set);
 * 0: the transport's (ops->segsize), else DEFAULT_SEGSIZE. */
static _Atomic size_t segsize;
static size_t env_segsize; /* NBCX_SEGSIZE; 0: unset */
enum { DEFAULT_SEGSIZE = 65536 };
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static int env_error; /* first bad NBCX_<COLL>_ALG or NBCX_TUNING file,
                         returned by every call */
/* What was wrong (nbcx_error_detail of the thread that read it), given to
 * every later call on any thread as its detail. */
static char env_detail[256];

static void keep_env_error(int err)
{
    if (err && !env_error) {
        env_error = err;
        snprintf(env_detail, sizeof env_detail, "%s",
                 nbcx_error_detail(err));
    }
}
/* nbcx_algorithm_names: the names of each collective's algorithms */
static char names[NBCXI_NCOLL][128];

int nbcxi_coll_by_name(const char *name)
{
    for (int c = 0; c < NBCXI_NCOLL; c++)
        if (name && strcasecmp(name, coll_names[c]) == 0)
            return c;
    return -1;
}

static int set_alg(int c, const char *alg)
{
    if (!alg || strcasecmp(alg, "auto") == 0) {
        forced[c] = NULL;
        return NBCX_SUCCESS;
    }
    int radix;
    const struct nbcxi_algorithm *a = nbcxi_coll_find(c, alg, &radix);
    if (!a)
        return NBCX_ERR_ALGORITHM;
    forced[c] = radix ? nbcxi_knomial_name(radix) : a->name;
    return NBCX_SUCCESS;
}

static void read_env(void)
{
    for (int c = 0; c < NBCXI_NCOLL; c++)
        nbcxi_coll_names(c, names[c], sizeof names[c]);
    segsize = env_segsize = nbcxi_env_size("NBCX_SEGSIZE", 0);
    for (int c = 0; c < NBCXI_NCOLL; c++) {
        char var[64];
        snprintf(var, sizeof var, "NBCX_%s_ALG", coll_names[c]);
        for (char *p = var; *p; p++)
            if (*p >= 'a' && *p <= 'z')
                *p = (char)(*p - 'a' + 'A');
        const char *v = nbcxi_getenv(var);
        if (v && set_alg(c, v) != NBCX_SUCCESS && !env_error) {
            keep_env_error(nbcxi_error(NBCX_ERR_ALGORITHM,
                                       "%s=%s names no %s algorithm "
                                       "(have: %s)", var, v, coll_names[c],
                                       names[c]));
            fprintf(stderr, "nbcx: %s\n", env_detail);
        }
    }
    const char *tuning = nbcxi_getenv("NBCX_TUNING");
    if (tuning && *tuning)
        keep_env_error(nbcxi_tuning_load(tuning));
    const char *builtin = nbcxi_getenv("NBCX_TUNING_BUILTIN");
    if (!builtin || strcmp(builtin, "0") != 0)
        keep_env_error(nbcxi_tuning_load_builtin());
}

int nbcxi_select_env_error(void)
{
    pthread_once(&env_once, read_env);
    return env_error;
}

int nbcx_algorithm_set(const char *coll, const char *alg)
{
    pthread_once(&env_once, read_env);
    int c = nbcxi_coll_by_name(coll);
    return c < 0 ? NBCX_ERR_ALGORITHM : set_alg(c, alg);
}

int nbcx_algorithm_names(const char *coll, const char **list)
{
    pthread_once(&env_once, read_env);
    int c = nbcxi_coll_by_name(coll);
    if (c < 0)
        return NBCX_ERR_ALGORITHM;
    if (!list)
        return NBCX_ERR_ARG;
    *list = names[c];
    return NBCX_SUCCESS;
}

int nbcx_segsize_set(size_t bytes)
{
    pthread_once(&env_once, read_env);
    segsize = bytes ? bytes : env_segsize; /* 0: the default again */
    return NBCX_SUCCESS;
}

/* ---- the automatic choice ---- */

enum { SMALL = 128 * 1024 }; /* below: latency-bound algorithms */

/* Bytes of reduce_scatter's whole vector. */
static size_t vector_bytes(const struct nbcx_sched_s *s,
                           const struct nbcxi_coll_args *a)
{
    size_t n = 0;
    for (int i = 0; i < s->build.size; i++)
        n += (size_t)nbcxi_vcount(&a->rv, a->rcount, i);
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

/* The bytes a tuning rule's range is matched against (coll/tuning.c):
 * message_bytes, but for reduce_scatter, whose blocks are in a vector of
 * counts (rcount is 0 there), the average block, the whole vector over
 * the ranks: the same on every rank (the counts are), and one block of
 * nbcx-sim's reduce_scatter (equal blocks), the point nbcx-tune tunes. */
static size_t rule_bytes(enum nbcxi_coll coll, const struct nbcx_sched_s *s,
                         const struct nbcxi_coll_args *a)
{
    if (coll == NBCXI_REDUCE_SCATTER && s->build.size > 0)
        return vector_bytes(s, a) / (size_t)s->build.size;
    return message_bytes(a);
}

/* ---- the automatic choice at scale ----
 *
 * On up to ON_NODE ranks (a node's worth: shared memory, where nbcx was
 * tuned and measured, docs/results/sim) the choice is the one nbcx has
 * always made. Beyond, it follows the alpha-beta model of docs/results/
 * scale/README.md, in units of bytes: a message of m bytes costs A + m,
 * A = alpha / beta (the bytes a message's latency is worth: 45 us + 2 x
 * 3 us over 0.008 us/B between nodes in tools/sim/params/default.json,
 * 0.85 us over 0.00012 us/B inside one: 6-7 KiB either way), and L =
 * ceil(log2 p) rounds. The constants below were checked against nbcx-sim
 * (default parameters, 2 ranks per node) at 8 .. 16,384 ranks, 8 B ..
 * 16 MiB, docs/results/scale: auto within 5 % of the best algorithm
 * except where that page says. */
enum { ON_NODE = NBCXI_ON_NODE, ALPHA_BYTES = 8192 };

static int log2_ceil(int p)
{
    int l = 0;
    while (l < 31 && (1L << l) < p)
        l++;
    return l;
}

static int pof2_floor(int p)
{
    int q = 1;
    while (q <= p / 2)
        q <<= 1;
    return q;
}

/* Predicted time (bytes) of a broadcast or reduction of n bytes on p
 * ranks by the k-nomial tree of radix k (k = 2: binomial), level by
 * level: a rank sends to its children one after the other, largest
 * subtree first, each send taking the link for n bytes or at least a
 * gap's worth (g / G: 4 us over 0.008 us/B in default.json, 500 B), and
 * a child starts its own subtree when its message has arrived (A + n
 * later; a child at distance 1 is on the same node, ranks placed in
 * blocks of 2: nearly free). The subtree of s ranks takes T(s): the
 * latest of its children's arrival + T(child's subtree). A reduction is
 * the same tree with the messages the other way. */
enum { GAP_BYTES = NBCXI_GAP_BYTES, MAX_LEVELS = 32 };

struct tree_model {
    int k;
    double n, send;               /* bytes, bytes a send holds the link */
    bool apart;                   /* no two ranks on a node (a node-aware
                                     algorithm's leaders): distance 1
                                     costs as much as any hop           */
    double full[MAX_LEVELS];      /* T of the full tree of k^j ranks    */
};

static double tree_time(const struct tree_model *t, long size);

/* The children of a subtree of `size` ranks (top mask m), in send
 * order; the time of the last to finish. */
static double children_time(const struct tree_model *t, long size)
{
    long top = 1;
    int j = 0;
    while (top * t->k < size) {
        top *= t->k;
        j++;
    }
    double worst = 0, leave = 0;
    for (long m = top; m > 0; m /= t->k, j--)
        for (int d = 1; d < t->k && d * m < size; d++) {
            long c = size - d * m < m ? size - d * m : m;
            double hop = d * m == 1 && !t->apart ? t->n / 64
                                                 : ALPHA_BYTES + t->n;
            double done = leave + hop +
                          (c == m ? t->full[j] : tree_time(t, c));
            worst = done > worst ? done : worst;
            leave += t->send; /* the next send leaves after this one */
        }
    return worst;
}

static double tree_time(const struct tree_model *t, long size)
{
    return size <= 1 ? 0 : children_time(t, size);
}

static double cost_knomial(int p, double n, int k, bool apart)
{
    struct tree_model t = { .k = k, .n = n, .apart = apart,
                            .send = n > GAP_BYTES ? n : GAP_BYTES };
    long m = 1;
    for (int j = 0; j < MAX_LEVELS; j++, m *= k) {
        t.full[j] = tree_time(&t, m);
        if (m >= p)
            break;
    }
    return tree_time(&t, p);
}

/* The radix of the fastest k-nomial tree by that model (2: binomial),
 * and in *cost its time on the scale the chain and scatter + allgather
 * are weighed on (below): the binomial tree's L (A + n), times the
 * tree's predicted time over the binomial tree's. */
static int best_radix(int p, double n, bool apart, double *cost,
                      double *raw)
{
    int best = 2;
    double t2 = cost_knomial(p, n, 2, apart), tb = t2;
    for (int k = 3; k <= NBCXI_KNOMIAL_MAX; k++) {
        double c = cost_knomial(p, n, k, apart);
        if (c < tb) {
            tb = c;
            best = k;
        }
    }
    *cost = log2_ceil(p) * (ALPHA_BYTES + n) * (t2 > 0 ? tb / t2 : 1);
    *raw = tb;
    return best;
}

/* "binomial" for radix 2, else "knomialK". */
static const char *tree_name(int k)
{
    return k == 2 ? "binomial" : nbcxi_knomial_name(k);
}

/* ... by the pipelined chain of fragments of seg bytes: the first
 * fragment crosses the p - 1 hops, each A + f (with ranks placed in
 * blocks, every other hop is between two ranks of one node, 2 per node:
 * half of them, nearly free), and behind it the n / f fragments leave the
 * root one a gap and a fragment's link time apart (G + f: the latency of
 * the later ones overlaps, as the pipeline runs). nbcx-sim, default
 * parameters, 8 to 64 ranks, 256 KiB to 4 MiB: within 10 % of the
 * simulated chain for fragments of 4 to 64 KiB. */
static double cost_chain(int p, double n, size_t seg)
{
    double f = seg < n ? (double)seg : n;
    double frags = f > 0 ? n / f : 1;
    return (p - 1) / 2.0 * (ALPHA_BYTES + f) + frags * (GAP_BYTES + f);
}

/* ... by scatter + allgather (van de Geijn, bcast.c): 2 L rounds, each
 * rank receiving the buffer once in all, in each phase. Across nodes,
 * with ranks placed in blocks of 2, the round between ranks 2i and
 * 2i + 1 of each phase stays on one node (nearly free, as the trees'
 * distance-1 hops) and a rank's own block does not move: 2 (L - 1) A +
 * 2 n (1 - 1 / p), which puts 32 KiB on 16 ranks right (scatter +
 * allgather 737 us, the chain 854 us in nbcx-sim). On one node that
 * placement does not hold, and the estimate stays the plain one. */
static double cost_scatter_allgather(int p, double n, bool one_node)
{
    if (one_node)
        return 2.0 * log2_ceil(p) * ALPHA_BYTES + 2.0 * n;
    return 2.0 * (log2_ceil(p) - 1) * ALPHA_BYTES + 2.0 * n * (1.0 - 1.0 / p);
}

/* ... by Rabenseifner's reduce (reduce-scatter by recursive halving,
 * binomial gather, allreduce.c): 2 log2 pof2 rounds, the busiest rank
 * moving n (1 - 1 / pof2) in each phase (n / 2 + n / 4 + ...); the fold
 * of the p - pof2 others is one more hop between ranks 2i and 2i + 1, on
 * one node with ranks placed in blocks (nearly free, as the trees'
 * distance-1 hops). */
static double cost_rabenseifner(int p, double n)
{
    int q = pof2_floor(p);
    return 2.0 * log2_ceil(q) * ALPHA_BYTES + 2.0 * n * (1.0 - 1.0 / q) +
           (q != p ? n / 64 : 0);
}

/* The ranks per node of the call's communicator, ceil(ranks / nodes),
 * where its transport knows the nodes, else 0 (the tuning tables' rpn). */
static int ranks_per_node(const struct nbcx_sched_s *s)
{
    const nbcxi_transport *tp = s->build.comm->tp;
    int nodes = tp->ops->node_of ? tp->nnodes : 0;
    return nodes > 0 ? (s->build.size + nodes - 1) / nodes : 0;
}

/* The automatic choice's algorithm for a call (NULL: the collective's
 * first). */
static const char *automatic(enum nbcxi_coll coll,
                             const struct nbcx_sched_s *s,
                             const struct nbcxi_coll_args *a,
                             enum nbcxi_place place, bool node_aware)
{
    int p = s->build.size;
    size_t rbytes = a->rtype ? (size_t)a->rcount * a->rtype->size : 0;
    size_t block = message_bytes(a);
    const bool node = place == NBCXI_PLACE_ONE_NODE ||
                      (place == NBCXI_PLACE_GUESS && p <= ON_NODE);
    const bool one_node = place == NBCXI_PLACE_ONE_NODE ||
                          s->build.comm->tp->one_node;
    const bool apart = place == NBCXI_PLACE_NODES;
    /* The node-aware algorithms (hier.c) where the model puts them
     * clearly ahead of the flat ones (docs/results/scale/hier.md): with
     * nodes the transport knows, 4 ranks per node or more on average. */
    const int nn = node_aware && s->build.comm->tp->ops->node_of
                       ? s->build.comm->tp->nnodes : 0;
    const bool crowded = nn > 1 && p >= 4 * nn;
    /* Ranks per node, where the transport knows several nodes (1: each
     * rank of this phase on a node of its own), else 2 (the model's
     * default placement, which the flat rules were fitted to). */
    const int known = s->build.comm->tp->ops->node_of
                          ? s->build.comm->tp->nnodes : 0;
    const int rpn = apart ? 1 : known > 1 ? p / known : 2;
    const double n = (double)rbytes;
    switch (coll) {
    case NBCXI_BARRIER:
        /* node-aware with 4 ranks per node or more: 0.75-0.96 of the best
         * flat barrier in the simulation (docs/results/scale/hier.md) */
        if (crowded)
            return "hier";
        /* Dissemination's ceil(log2 p) rounds, but on 8 to 11 ranks the
         * k-nomial fan-in and fan-out of radix 6 (2 levels: 134 against
         * 153 us on 8 ranks in the simulation, docs/results/scale) */
        return !node && p < 12 ? "knomial6" : "dissemination";
    case NBCXI_BCAST: {
        if (node)
            return (rbytes < SMALL || p <= 2) ? "binomial" : "chain";
        /* up to 4 KiB (1.06-2.45x the flat choice from 32 ranks in the
         * simulation), 256 KiB from 1,024 ranks, and with more ranks per
         * node further: 32 KiB with 16, 256 KiB with 32 (the flat trees
         * then cross the nodes' links with every rank), every size on 256
         * to 1,024 ranks with 16 or more (1.20-1.52x at 1 MiB) */
        if (crowded && (rbytes <= 4096 || (p >= 1024 && rbytes <= 262144) ||
                        (rpn >= 16 && rbytes <= 32768) ||
                        (rpn >= 32 && rbytes <= 262144) ||
                        (rpn >= 16 && p >= 256 && p <= 1024)))
            return "hier";
        /* the cheapest by the model: a k-nomial tree (binomial for
         * k = 2), the chain, scatter + allgather */
        double b, raw, c = cost_chain(p, n, nbcxi_chain_segsize(s, a, rbytes)),
                       g = cost_scatter_allgather(p, n, one_node);
        int k = best_radix(p, n, apart, &b, &raw);
        return (b <= c && b <= g) ? tree_name(k) : c <= g ? "chain"
                                                          : "scatter_allgather";
    }
    case NBCXI_REDUCE:
        if (node)
            return (rbytes < SMALL || p <= 2 || !a->op->commutative)
                       ? "binomial"
                       : "chain";
        /* below 8 KiB, as allreduce's first two phases: 0.67-1.0 of the
         * automatic flat choice in the simulation (at 8 KiB within 10 %
         * of it either way); from 256 ranks with 16 ranks per node up to
         * 32 KiB (0.83-0.91 of the best flat), with 32 up to 128 KiB
         * (0.56-0.89, but for 16 KiB on 256 ranks: 1.24) */
        if (crowded && (rbytes < 8192 ||
                        (p >= 256 && rpn >= 16 && rbytes <= 32768) ||
                        (p >= 256 && rpn >= 32 && rbytes <= 131072)))
            return "hier";
    {
        /* the cheapest by the model: a k-nomial tree, the chain
         * (commutative), Rabenseifner (any operation) */
        double b, raw, r = cost_rabenseifner(p, n);
        int k = best_radix(p, n, apart, &b, &raw);
        if (a->op->commutative) {
            double c = cost_chain(p, n, nbcxi_chain_segsize(s, a, rbytes));
            if (c < b && c <= r)
                return "chain";
        }
        return r < b ? "rabenseifner" : tree_name(k);
    }
    case NBCXI_ALLREDUCE:
        if (node)
            return (rbytes < SMALL || !a->op->commutative || a->rcount < p)
                       ? "recursive_doubling"
                       : "ring";
        /* Rabenseifner: 2 L A + 2 n against recursive doubling's L (A + n)
         * (and L n of reductions against n): ahead from n of a few A on
         * (8 KiB when p is a power of two, 16 KiB with the fold's two
         * extra transfers of the whole vector). When p is not a power of
         * two, those two transfers (2 n) cost more than the ring's
         * 2 (p - 1) A once n > (p - 1) A: the ring then (commutative). */
        /* below 8 KiB (the leaders run recursive doubling: one vector
         * per node crosses the network in each round, not one per rank;
         * from 8 KiB Rabenseifner's pieces are small already, and the
         * node's reduction and bcast cost more than they save), except
         * on crowded nodes, where Rabenseifner's many ranks share a
         * node's link: with 16 ranks per node up to 32 KiB (0.84-0.95 of
         * the best flat algorithm in the simulation), with 32 up to
         * 64 KiB (0.67-0.94) */
        if (crowded && (rbytes < 8192 || (rpn >= 16 && rbytes <= 32768) ||
                        (rpn >= 32 && rbytes <= 65536)))
            return "hier";
        if (rbytes < (pof2_floor(p) == p ? 8192u : 16384u))
            return "recursive_doubling";
        if (pof2_floor(p) != p && a->op->commutative && a->rcount >= p &&
            n > (double)(p - 1) * ALPHA_BYTES)
            return "ring";
        return "rabenseifner";
    case NBCXI_GATHER:
    case NBCXI_SCATTER: {
        if (node)
            return block <= 2048 ? "binomial" : "linear";
        /* Beyond a node: linear for blocks over 8 KiB (the root's link
         * carries (p - 1) blocks whatever the tree: the simulations put
         * every algorithm within 2 % there); else the k-nomial tree
         * whose broadcast of one block the model finds fastest, unless
         * the root's p - 1 messages, A + (p - 1) max(block, gap), are
         * cheaper still (8 B to 512 B on 12 and 16 ranks). */
        if (block > 8192)
            return "linear";
        double b, raw, nb = (double)block;
        /* the radix for a latency-bound message (at most a gap's worth):
         * the messages near the root grow with their subtrees, which
         * favours few levels */
        double lat = nb < GAP_BYTES ? nb : GAP_BYTES;
        int k = best_radix(p, lat, apart, &b, &raw);
        if (k < 5) { /* and at least 5 (4 KiB on 12 to 32 ranks) */
            k = 5;
            raw = cost_knomial(p, lat, k, apart);
        }
        double lin = ALPHA_BYTES + (p - 1) * (nb > GAP_BYTES ? nb : GAP_BYTES);
        return raw <= lin ? tree_name(k) : "linear";
    }
    case NBCXI_ALLGATHER:
        if (node)
            return block * (size_t)p < 65536 ? "bruck" : "ring";
        /* node-aware where the leaders' exchange of a node's run of
         * blocks stays within Bruck's range (1 KiB), and from 16 ranks per
         * node at every size: 0.12-0.98 of the best flat algorithm in the
         * simulation, 4 to 32 ranks per node */
        if (crowded && (block * (size_t)rpn <= 1024 || rpn >= 16))
            return "hier";
        /* linear (all p - 1 messages at once, one latency) on few ranks
         * and small blocks: 0.63-0.99 of Bruck's time up to 2 KiB on 4
         * ranks, 1 KiB on 8 to 12, 256 B on 16, 64 B on 24 (2 ranks per
         * node in the simulation; not measured on one node, where the
         * thresholds below were) */
        if (!one_node && block <= (p <= 4    ? 2048u
                                   : p <= 12 ? 1024u
                                   : p <= 16 ? 256u
                                   : p <= 24 ? 64u
                                             : 0u))
            return "linear";
        /* Bruck: L A + about 2 (p - 1) m (every block crosses the network
         * from every rank of a node, and is rotated twice); the ring:
         * (p - 1)(A + m), all but one hop in nn inside a node. The
         * simulations put the crossing between 1 and 2 KiB blocks at every
         * p with 2 ranks per node, and about at 6 KiB / rpn^2 with more
         * (400 B with 4, 100 B with 8, 30 B with 16). */
        return block <= (rpn <= 2 ? 1024u : 6144u / (unsigned)(rpn * rpn))
                   ? "bruck"
                   : "ring";
    case NBCXI_ALLTOALL:
        if (node)
            return (block <= 256 && p >= 4) ? "bruck" : "linear";
        /* Bruck's L rounds of p / 2 blocks beat p - 1 messages for tiny
         * blocks on many ranks only (crossing at 64-256 B from 32 ranks) */
        return (block <= 128 && p >= 32) ? "bruck" : "pairwise";
    case NBCXI_ALLGATHERV:
        /* everything at once on few ranks, else ring / pairwise */
        return p <= 8 ? "linear" : "ring";
    case NBCXI_ALLTOALLV:
    case NBCXI_ALLTOALLW:
        return p <= 8 ? "linear" : "pairwise";
    case NBCXI_REDUCE_SCATTER:
    case NBCXI_REDUCE_SCATTER_BLOCK:
    {
        /* Pairwise posts its p - 1 sends at once: they leave one per
         * gap (g, about A / 8), not one per latency. Recursive halving
         * (commutative): L rounds, the same bytes; ahead from 16 ranks
         * (8 with blocks of 4 KiB and more), and when p is not a power
         * of two (the fold moves the whole vector twice more) from 32
         * ranks for blocks under 4 KiB. Otherwise a reduction to rank 0
         * and a scatter (2 L rounds, the whole vector) only for blocks of
         * a few words on many ranks. */
        size_t avg = vector_bytes(s, a) / (size_t)p;
        if (!node && a->op->commutative &&
            (pof2_floor(p) == p ? (p >= 16 || avg >= 4096)
                                : (p >= 32 && avg < 4096)))
            return "recursive_halving";
        return (p >= 128 && avg < 32) ? "reduce_scatterv" : "pairwise";
    }
    case NBCXI_SCAN:
    case NBCXI_EXSCAN:
        /* The pipelined chain for long vectors on few ranks, and always
         * on 2, where it is one message and recursive doubling two (on 2
         * Open MPI shared-memory ranks, 8 B to 64 KiB: 1.3-1.5x native
         * with recursive doubling, 0.95-1.16x with the chain; on 3 ranks
         * at 64 KiB the chain took half the time). */
        return (p == 2 || (rbytes >= SMALL / 2 && p <= 16))
                   ? "linear"
                   : "recursive_doubling";
    default:
        return NULL;
    }
}

const struct nbcxi_algorithm *nbcxi_coll_flat(enum nbcxi_coll coll,
                                              const struct nbcx_sched_s *s,
                                              struct nbcxi_coll_args *a,
                                              enum nbcxi_place place)
{
    const char *name = automatic(coll, s, a, place, false);
    a->radix = nbcxi_knomial_radix(name);
    return lookup(algorithms, coll, name);
}

void nbcxi_coll_selection(enum nbcxi_coll coll, struct nbcxi_selection *sel)
{
    pthread_once(&env_once, read_env);
    sel->forced = forced[coll];
    sel->segsize = segsize;
}

static bool can_serve(const struct nbcxi_algorithm *alg,
                      const struct nbcx_sched_s *s,
                      const struct nbcxi_coll_args *a)
{
    return alg && (!alg->usable || alg->usable(s, a));
}

static int build_one(enum nbcxi_coll coll, struct nbcx_sched_s *s,
                     struct nbcxi_coll_args *a, const char *prefer)
{
    pthread_once(&env_once, read_env);
    if (env_error)
        return nbcxi_error(env_error, "%s", env_detail);
    const struct nbcxi_transport_ops *tp = s->build.comm->tp->ops;
    size_t chosen = segsize; /* (read once: nbcx_segsize_set may run) */
    a->segsize = chosen ? chosen
                 : tp->segsize ? tp->segsize : (size_t)DEFAULT_SEGSIZE;
    a->segsize_auto = !chosen;
    const char *force = forced[coll];
    const char *chosen_name = force; /* "knomialK" carries the radix */
    const struct nbcxi_algorithm *alg = NULL;
    a->radix = nbcxi_knomial_radix(force);
    if (force) { /* a backend's algorithm serves only its communicators */
        alg = lookup(algorithms, coll, force);
        if (!alg)
            alg = lookup(tp->algorithms, coll, force);
    }
    if (!can_serve(alg, s, a)) {
        /* The progress mode's preference (split mode: the binomial trees
         * it splits) unless an algorithm is forced, else by size. */
        const char *name = !force && prefer ? prefer : NULL;
        if (!name) { /* a rule of NBCX_TUNING, else the built-in choice */
            size_t seg = 0; /* the rule's, if it gives one */
            name = nbcxi_tuning_choose((int)coll, s->build.size,
                                       ranks_per_node(s),
                                       rule_bytes(coll, s, a), &seg);
            const struct nbcxi_algorithm *tuned = name ? lookup(algorithms,
                                                                coll, name)
                                                       : NULL;
            if (!can_serve(tuned, s, a))
                name = automatic(coll, s, a, NBCXI_PLACE_GUESS, true);
            else if (seg) {
                a->segsize = seg;
                a->segsize_auto = false;
            }
        }
        alg = lookup(algorithms, coll, name);
        chosen_name = name;
        a->radix = nbcxi_knomial_radix(name);
        /* What the backend serves natively (inproc: shared-memory
         * slots), up to the size it says (NBCX_INPROC_SLOT_MAX). */
        const struct nbcxi_algorithm *native = lookup(tp->algorithms, coll,
                                                      NULL);
        size_t max = native && tp->native_max
                         ? tp->native_max(s->build.comm->tp)
                         : 0;
        if (max > 0 && message_bytes(a) <= max && can_serve(native, s, a)) {
            alg = native;
            chosen_name = NULL;
        }
    }
    /* for diagnoses (progress/watchdog.c) */
    s->build.op_name = coll_names[coll];
    s->build.alg_name = a->radix && chosen_name ? chosen_name : alg->name;
    s->build.msg_bytes = message_bytes(a); /* (the trace's) */
    /* split progress's S for this call, if NBCX_TUNING has a rule */
    s->build.split_tuned = nbcxi_tuning_split((int)coll, s->build.size,
                                              rule_bytes(coll, s, a)) + 1;
    int err = alg->build(s, a);
    return err ? err : s->build.err;
}

/* The element-wise collectives, whose element k depends on element k of
 * the other ranks only: bcast, reduce, allreduce, scan, exscan. */
static bool elementwise(enum nbcxi_coll coll)
{
    return coll == NBCXI_BCAST || coll == NBCXI_REDUCE ||
           coll == NBCXI_ALLREDUCE || coll == NBCXI_SCAN ||
           coll == NBCXI_EXSCAN;
}

static int join(void *arg)
{
    (void)arg;
    return NBCX_SUCCESS;
}

/* buf + off elements of extent ext; NULL stays NULL (not significant). */
static void *piece_at(const void *buf, nbcx_count off, ptrdiff_t ext)
{
    return buf ? (void *)((uintptr_t)buf + (uintptr_t)(off * ext)) : NULL;
}

/* An element-wise collective of more than INT_MAX elements, which the
 * builders do not take (their counts are int; api/ lets these through):
 * pieces of 2^30 elements (nbcxi_sched_chunking, lowered in tests),
 * each the chosen algorithm's schedule on its stretch of the buffers,
 * one after the other: every node of piece k + 1 waits for a join of
 * every node of piece k, since the pieces use the same tags between the
 * same peers. Every node of the first piece waits for `first` (-1: none);
 * *last (when not NULL) gets a join of every node of the last piece. */
static int build_pieces(enum nbcxi_coll coll, struct nbcx_sched_s *s,
                        const struct nbcxi_coll_args *a, const char *prefer,
                        nbcx_node first_dep, nbcx_node *last)
{
    const nbcx_count total = a->rcount;
    const ptrdiff_t ext = a->rtype->extent;
    const nbcx_count piece = nbcxi_sched_chunking.piece;
    nbcx_node joined = first_dep;
    for (nbcx_count off = 0; off < total; off += piece) {
        struct nbcxi_coll_args p = *a;
        p.rcount = NBCXI_MIN(total - off, piece);
        p.sbuf = piece_at(a->sbuf, off, ext);
        p.rbuf = piece_at(a->rbuf, off, ext);
        int first = s->build.nnodes;
        int err = build_one(coll, s, &p, prefer);
        if (err)
            return err;
        int end = s->build.nnodes;
        bool more = off + piece < total;
        nbcx_node next = more || last ? nbcxi_call(s, join, NULL) : -1;
        for (int n = first; n < end;) {
            nbcxi_dep(s, joined, n);
            nbcxi_dep(s, n, next);
            int span = s->build.nodes[n].span;
            n += span > 1 ? span : 1;
        }
        joined = next;
    }
    if (last)
        *last = joined;
    return s->build.err;
}

/* A bcast of more bytes than the pieces' limit. Its ranks may describe
 * the buffer with different types (the same bytes): pieces of elements
 * would end at different bytes on them, so it moves bytes, in pieces of
 * NBCX_BYTE: the buffer itself when its type is contiguous, else a
 * packed scratch copy (packed at the root first, unpacked elsewhere at
 * the end). */
static int build_bcast_bytes(struct nbcx_sched_s *s,
                             const struct nbcxi_coll_args *a,
                             const char *prefer, nbcx_count bytes)
{
    struct nbcx_datatype_s *t = a->rtype, *byte = nbcxi_type(NBCX_BYTE);
    const bool direct = t->contiguous, root = s->build.rank == a->root;
    char *buf = direct ? (char *)a->rbuf + t->true_lb
                       : nbcxi_sched_tmp(s, (size_t)bytes);
    if (!buf)
        return s->build.err;
    nbcx_node pack = -1, done = -1;
    if (!direct && root)
        pack = nbcxi_copy(s, a->rbuf, a->rcount, t, buf, bytes, byte);
    struct nbcxi_coll_args b = *a;
    b.rbuf = buf;
    b.rcount = bytes;
    b.rtype = byte;
    int err = build_pieces(NBCXI_BCAST, s, &b, prefer, pack,
                           !direct && !root ? &done : NULL);
    if (err)
        return err;
    if (!direct && !root)
        nbcxi_dep(s, done,
                  nbcxi_copy(s, buf, bytes, byte, a->rbuf, a->rcount, t));
    return s->build.err;
}

int nbcxi_coll_build(enum nbcxi_coll coll, struct nbcx_sched_s *s,
                     struct nbcxi_coll_args *a, const char *prefer)
{
    const nbcx_count above = nbcxi_sched_chunking.piece_above;
    if (coll == NBCXI_BCAST) {
        const nbcx_count sz = (nbcx_count)a->rtype->size;
        if (sz && a->rcount > PTRDIFF_MAX / sz)
            return NBCX_ERR_COUNT;
        if (a->rcount * sz > above)
            return build_bcast_bytes(s, a, prefer, a->rcount * sz);
    } else if (elementwise(coll) && a->rcount > above) {
        return build_pieces(coll, s, a, prefer, -1, NULL);
    }
    return build_one(coll, s, a, prefer);
}

/* The selection for nbcx_info: " segsize=... barrier=auto ...". */
int nbcxi_coll_describe(char *buf, size_t len)
{
    pthread_once(&env_once, read_env);
    size_t seg = segsize;
    size_t n = seg ? (size_t)snprintf(buf, len, " segsize=%zu", seg)
                   : (size_t)snprintf(buf, len, " segsize=auto");
    if (n < len)
        n += (size_t)nbcxi_tuning_describe(buf + n, len - n);
    for (int c = 0; c < NBCXI_NCOLL && n < len; c++) {
        const char *f = forced[c];
        n += (size_t)snprintf(buf + n, len - n, " %s=%s", coll_names[c],
                              f ? f : "auto");
    }
    return (int)n;
}
