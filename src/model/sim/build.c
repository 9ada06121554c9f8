/*
 * build.c - the schedules the simulator runs: every simulated rank's
 * schedule, built by the real builder of the algorithm (the core table of
 * coll/select.c, or nbcxi_coll_build's automatic choice) on a
 * communicator of the sim transport, then kept in a compact form
 * (simint.h) and destroyed: scratch buffers live only while one rank is
 * built, and a node costs 24 bytes (+ 4 per edge, + 4 for its partner,
 * + 5 at run time).
 *
 * User buffers are fake: one reservation of address space without access
 * rights (PROT_NONE, nothing committed) holds the send and the receive
 * buffer; builders never touch user data at build time.
 *
 * Folding. Many algorithms treat every rank alike: rank r's schedule is
 * rank 0's with every peer shifted by r (dissemination, rings, linear and
 * pairwise exchanges). With ranks placed on nodes of C consecutive ranks
 * and P a multiple of C, ranks r and r + C then also see the same
 * placement, so they run at exactly the same simulated times: it is
 * enough to simulate ranks 0 .. C - 1, a message to rank q going to the
 * representative q mod C (receives matched by their source's offset, see
 * match()). Whether an algorithm folds is found, not assumed: the
 * schedules of ranks r + kC for a few k (1, 2, the middle, the last) must
 * equal those of r with peers shifted by kC (same nodes, kinds, tags,
 * edges); message sizes may differ by a few bytes (a ring's blocks when
 * C does not divide the count), which is then reported as approximate.
 * An algorithm that passes on those samples but differs elsewhere would
 * be simulated wrongly: the unit tests compare folded and full
 * simulations of every folding algorithm at small P.
 *
 * Matching (as MPI, and as nbcx-check): the k-th send from rank r to q
 * with tag t meets the k-th receive posted by q for (r, t), in node
 * creation order (coll.h: same-tag messages between a pair start in that
 * order).
 */
#define _GNU_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

#include "simint.h"

/* A communicator of the sim transport: it never sends (the simulation
 * walks the schedules itself; model/silent.c). one_node: all size ranks
 * fit on one node of the simulated machine, whose nodes are blocks of
 * ranks_per_node ranks (the transport's node_of). */
int sim_comm(int rank, int size, bool one_node, int ranks_per_node,
             struct nbcx_comm_s **out)
{
    return nbcxi_silent_comm(NBCXI_SILENT_SIM, rank, size, (1 << 24) - 1,
                             one_node, ranks_per_node, out);
}

/* ------------------------------------------------------------------ */
/* Names                                                               */
/* ------------------------------------------------------------------ */

int nbcxi_sim_coll(const char *name)
{
    for (int c = 0; name && c < NBCXI_NCOLL; c++)
        if (strcasecmp(name, nbcxi_coll_name(c)) == 0)
            return c;
    return -1;
}

static bool native(const struct nbcxi_algorithm *a)
{
    for (int b = 0; nbcxi_backends[b]; b++)
        for (const struct nbcxi_algorithm *n = nbcxi_backends[b]->algorithms;
             n && n->name; n++)
            if (n == a)
                return true;
    return false;
}

static const struct nbcxi_algorithm *core_alg(int coll, int i)
{
    const struct nbcxi_algorithm *a;
    for (int k = 0; (a = nbcxi_coll_algorithm(coll, k)); k++)
        if (!native(a) && i-- == 0)
            return a;
    return NULL;
}

const char *nbcxi_sim_alg(int coll, int i)
{
    const struct nbcxi_algorithm *a = core_alg(coll, i);
    return a ? a->name : NULL;
}

const struct nbcxi_algorithm *sim_find_alg(int coll, const char *name)
{
    /* "knomialK" names the knomial line (its radix: sim_setup_rank) */
    const struct nbcxi_algorithm *a = nbcxi_coll_find(coll, name, NULL);
    return a && !native(a) ? a : NULL;
}

bool nbcxi_sim_has_alg(int coll, const char *name)
{
    return name && (strcasecmp(name, "auto") == 0 || sim_find_alg(coll, name));
}

/* ------------------------------------------------------------------ */
/* Arguments                                                           */
/* ------------------------------------------------------------------ */



static bool reduction(int c)
{
    return c == NBCXI_REDUCE || c == NBCXI_ALLREDUCE ||
           c == NBCXI_REDUCE_SCATTER || c == NBCXI_REDUCE_SCATTER_BLOCK ||
           c == NBCXI_SCAN || c == NBCXI_EXSCAN;
}

static bool neighbor(int c)
{
    return c >= NBCXI_NEIGHBOR_ALLGATHER && c <= NBCXI_NEIGHBOR_ALLTOALLW;
}

/* Elements of one buffer at most (the larger side). */
static long long span_elems(const struct setup *S)
{
    long long p = S->P, c = S->count;
    switch (S->coll) {
    case NBCXI_BARRIER:
        return 1;
    case NBCXI_BCAST: case NBCXI_REDUCE: case NBCXI_ALLREDUCE:
    case NBCXI_SCAN: case NBCXI_EXSCAN:
        return c;
    default:
        return (neighbor(S->coll) ? 4 : p) * c;
    }
}

/* The largest displacement a v or w collective's int displacements must
 * hold (elements; bytes for the w ones), 0 for the other collectives. */
static long long displaced_max(const struct setup *S)
{
    long long last = (neighbor(S->coll) ? 4 : S->P) - 1;
    long long esz = (long long)S->type->size;
    switch (S->coll) {
    case NBCXI_GATHERV: case NBCXI_SCATTERV: case NBCXI_ALLGATHERV:
    case NBCXI_ALLTOALLV: case NBCXI_NEIGHBOR_ALLGATHERV:
    case NBCXI_NEIGHBOR_ALLTOALLV:
        return last * S->count;
    case NBCXI_ALLTOALLW: case NBCXI_NEIGHBOR_ALLTOALLW:
        return last * S->count * esz;
    default:
        return 0;
    }
}

int sim_setup_job(struct setup *S, char *err, size_t errlen)
{
    const struct nbcxi_sim_config *cfg = S->cfg;
    S->P = cfg->ranks;
    S->coll = cfg->coll;
    bool red = reduction(S->coll);
    S->type = nbcxi_type(red ? NBCX_INT32 : NBCX_BYTE);
    S->op = red ? nbcxi_op(NBCX_SUM) : NULL;
    size_t esz = S->type->size;
    size_t count = S->coll == NBCXI_BARRIER ? 0 : (cfg->bytes + esz - 1) / esz;
    if (count > INT_MAX) {
        snprintf(err, errlen, "--size %zu bytes is more than nbcx's int "
                 "counts hold", cfg->bytes);
        return NBCXI_SIM_EARG;
    }
    S->count = (int)count;
    long long elems = span_elems(S);
    /* Buffers above INT_MAX elements are served (the schedules count and
     * displace in 64 bits); only the v and w collectives' displacements
     * are the caller's ints, which cannot address a block beyond them. */
    long long far = displaced_max(S);
    if (far > INT_MAX) {
        snprintf(err, errlen, "%d ranks x %zu bytes: the last block's "
                 "displacement (%lld) exceeds the int displacements of "
                 "%s's interface", S->P, cfg->bytes, far,
                 nbcxi_coll_name(S->coll));
        return NBCXI_SIM_EARG;
    }
    size_t one = (size_t)(elems > 0 ? elems : 1) * esz + 4096;
    S->memlen = 2 * one + 4096;
    S->mem = mmap(NULL, S->memlen, PROT_NONE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (S->mem == MAP_FAILED) {
        S->mem = NULL;
        snprintf(err, errlen, "cannot reserve %zu bytes of address space "
                 "for the fake buffers", S->memlen);
        return NBCXI_SIM_ENOMEM;
    }
    S->sbuf = S->mem + 4096;
    S->rbuf = S->sbuf + one;
    S->one = one;
    int n = neighbor(S->coll) ? 4 : S->P;
    S->counts = malloc(sizeof(int) * (size_t)n);
    S->displs = malloc(sizeof(int) * (size_t)n);
    S->types = malloc(sizeof(nbcx_datatype) * (size_t)n);
    S->adispls = malloc(sizeof(ptrdiff_t) * (size_t)n);
    if (!S->counts || !S->displs || !S->types || !S->adispls) {
        snprintf(err, errlen, "out of memory");
        return NBCXI_SIM_ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        S->counts[i] = S->count;
        /* (only the v and w collectives read them, whose displacements
         * were checked to fit an int above) */
        long long d = (long long)i * S->count;
        S->displs[i] = d <= INT_MAX ? (int)d : 0;
        S->types[i] = red ? NBCX_INT32 : NBCX_BYTE;
        S->adispls[i] = (ptrdiff_t)i * S->count * (ptrdiff_t)esz;
    }
    /* neighbourhoods: a periodic 2-D grid, as square as P allows */
    int rows = 1;
    for (int d = 1; (long long)d * d <= S->P; d++)
        if (S->P % d == 0)
            rows = d;
    S->dims[0] = rows;
    S->dims[1] = S->P / rows;
    return NBCXI_SIM_OK;
}

void sim_free_setup(struct setup *S)
{
    if (S->mem)
        munmap(S->mem, S->memlen);
    free(S->counts);
    free(S->displs);
    free(S->types);
    free(S->adispls);
}

/* The builder's arguments of rank r (as api/collectives.c passes them,
 * not in place, every block `count` elements). */
void sim_setup_rank(const struct setup *S, int r,
                       const struct nbcxi_topo *topo,
                       struct nbcxi_coll_args *a)
{
    struct nbcx_datatype_s *t = S->type;
    const int c = S->count;
    const bool root = r == S->cfg->root;
    struct nbcxi_vside v = { S->counts, S->displs, NULL, false, NULL,
                             false };
    struct nbcxi_vside w = { S->counts, S->displs, NULL, true, S->types,
                             false };
    memset(a, 0, sizeof *a);
    a->segsize = S->cfg->segsize ? S->cfg->segsize : 65536;
    a->segsize_auto = !S->cfg->segsize; /* as the engine's default */
    a->radix = nbcxi_knomial_radix(S->cfg->alg); /* "knomialK" */
    a->root = S->cfg->root;
    a->op = S->op;
    switch (S->coll) {
    case NBCXI_BARRIER:
        break;
    case NBCXI_BCAST:
        a->rbuf = S->rbuf, a->rcount = c, a->rtype = t;
        break;
    case NBCXI_REDUCE:
        a->sbuf = S->sbuf, a->rcount = c, a->rtype = t;
        if (root)
            a->rbuf = S->rbuf;
        break;
    case NBCXI_ALLREDUCE: case NBCXI_SCAN: case NBCXI_EXSCAN:
        a->root = 0;
        a->sbuf = S->sbuf, a->rbuf = S->rbuf, a->rcount = c, a->rtype = t;
        break;
    case NBCXI_GATHER:
        a->sbuf = S->sbuf, a->scount = c, a->stype = t;
        if (root)
            a->rbuf = S->rbuf, a->rcount = c, a->rtype = t;
        break;
    case NBCXI_SCATTER:
        a->rbuf = S->rbuf, a->rcount = c, a->rtype = t;
        if (root)
            a->sbuf = S->sbuf, a->scount = c, a->stype = t;
        break;
    case NBCXI_ALLGATHER: case NBCXI_ALLTOALL:
        a->sbuf = S->sbuf, a->scount = c, a->stype = t;
        a->rbuf = S->rbuf, a->rcount = c, a->rtype = t;
        break;
    case NBCXI_GATHERV:
        a->sbuf = S->sbuf, a->scount = c, a->stype = t;
        if (root)
            a->rbuf = S->rbuf, a->rtype = t, a->rv = v;
        break;
    case NBCXI_SCATTERV:
        a->rbuf = S->rbuf, a->rcount = c, a->rtype = t;
        if (root)
            a->sbuf = S->sbuf, a->stype = t, a->sv = v;
        break;
    case NBCXI_ALLGATHERV:
        a->sbuf = S->sbuf, a->scount = c, a->stype = t;
        a->rbuf = S->rbuf, a->rtype = t, a->rv = v;
        break;
    case NBCXI_ALLTOALLV:
        a->sbuf = S->sbuf, a->stype = t, a->sv = v;
        a->rbuf = S->rbuf, a->rtype = t, a->rv = v;
        break;
    case NBCXI_ALLTOALLW:
        a->sbuf = S->sbuf, a->sv = w;
        a->rbuf = S->rbuf, a->rv = w;
        break;
    case NBCXI_REDUCE_SCATTER:
        a->sbuf = S->sbuf, a->rbuf = S->rbuf, a->rtype = t;
        a->rv.counts = S->counts;
        break;
    case NBCXI_REDUCE_SCATTER_BLOCK:
        a->sbuf = S->sbuf, a->rbuf = S->rbuf, a->rtype = t, a->rcount = c;
        break;
    default: { /* neighbourhood collectives */
        a->topo = topo;
        a->sbuf = S->sbuf, a->scount = c, a->stype = t;
        a->rbuf = S->rbuf, a->rcount = c, a->rtype = t;
        if (S->coll == NBCXI_NEIGHBOR_ALLGATHERV ||
            S->coll == NBCXI_NEIGHBOR_ALLTOALLV) {
            a->rv = v;
            if (S->coll == NBCXI_NEIGHBOR_ALLTOALLV)
                a->sv = v;
        } else if (S->coll == NBCXI_NEIGHBOR_ALLTOALLW) {
            struct nbcxi_vside nw = { S->counts, S->displs, S->adispls,
                                      false, S->types, false };
            a->sv = a->rv = nw;
            a->stype = a->rtype = NULL;
        }
        break;
    }
    }
}

/* ------------------------------------------------------------------ */
/* Compact graphs                                                      */
/* ------------------------------------------------------------------ */

struct graph {
    struct sim_node *node;
    uint32_t n, ncap;
    uint32_t *succ;
    uint32_t ns, scap;
};

static int grow(void **arr, uint32_t *cap, uint64_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    if (need >= UINT32_MAX - 1)
        return -1;
    uint64_t ncap = *cap ? *cap : 1024;
    while (ncap < need)
        ncap *= 2;
    if (ncap > UINT32_MAX - 1)
        ncap = UINT32_MAX - 1;
    void *p = realloc(*arr, ncap * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = (uint32_t)ncap;
    return 0;
}

static uint64_t node_bytes(const struct nbcxi_node *nd)
{
    switch (nd->kind) {
    case NBCXI_NODE_SEND:
    case NBCXI_NODE_RECV:
        return (uint64_t)nd->u.p2p.count * nd->u.p2p.type->size;
    case NBCXI_NODE_REDUCE:
        return (uint64_t)nd->u.red.count * nd->u.red.type->size;
    case NBCXI_NODE_COPY:
        return (uint64_t)nd->u.copy.scount * nd->u.copy.stype->size;
    default:
        return 0;
    }
}

/* Appends schedule s to g (its nodes from g->n on). */
static int append(struct graph *g, const struct nbcx_sched_s *s, int P,
                  char *err, size_t errlen)
{
    uint32_t base = g->n;
    if (grow((void **)&g->node, &g->ncap, (uint64_t)base + s->build.nnodes + 1,
             sizeof *g->node) ||
        grow((void **)&g->succ, &g->scap, (uint64_t)g->ns + s->build.nedges + 1,
             sizeof *g->succ)) {
        snprintf(err, errlen, "out of memory (or more than 2^32 nodes) "
                 "keeping the schedules");
        return NBCXI_SIM_ENOMEM;
    }
    for (int i = 0; i < s->build.nnodes; i++) {
        const struct nbcxi_node *nd = &s->build.nodes[i];
        struct sim_node *m = &g->node[base + (uint32_t)i];
        memset(m, 0, sizeof *m);
        m->kind = nd->kind;
        m->bytes = node_bytes(nd);
        m->npred = (uint32_t)nd->npred;
        m->level = nd->level;
        m->peer = -1;
        if (nd->kind == NBCXI_NODE_SEND || nd->kind == NBCXI_NODE_RECV) {
            if (nd->u.p2p.peer < 0 || nd->u.p2p.peer >= P ||
                nd->u.p2p.tag < 0 || nd->u.p2p.tag > 0xffff) {
                snprintf(err, errlen, "rank %d node %d: peer %d or tag %d "
                         "out of range", s->build.rank, i, nd->u.p2p.peer,
                         nd->u.p2p.tag);
                return NBCXI_SIM_EBUILD;
            }
            m->peer = nd->u.p2p.peer;
            m->tag = (uint16_t)nd->u.p2p.tag;
        } else if (nd->kind == NBCXI_NODE_POLL) {
            snprintf(err, errlen, "rank %d: a POLL node (a backend's "
                     "native algorithm) cannot be simulated", s->build.rank);
            return NBCXI_SIM_EBUILD;
        }
    }
    /* successors, CSR, in edge order (as the executor's) */
    /* node.succ holds the counts first, then the offsets */
    for (int e = 0; e < s->build.nedges; e++)
        g->node[base + (uint32_t)s->build.edges[e].from].succ++;
    uint32_t pos = g->ns;
    for (int i = 0; i < s->build.nnodes; i++) {
        uint32_t k = g->node[base + (uint32_t)i].succ;
        g->node[base + (uint32_t)i].succ = pos;
        pos += k;
    }
    /* fill: a second pass with running cursors (the sentinel's succ is
     * set by the caller) */
    uint32_t *cur = malloc(sizeof(uint32_t) * (size_t)(s->build.nnodes + 1));
    if (!cur) {
        snprintf(err, errlen, "out of memory");
        return NBCXI_SIM_ENOMEM;
    }
    for (int i = 0; i < s->build.nnodes; i++)
        cur[i] = g->node[base + (uint32_t)i].succ;
    for (int e = 0; e < s->build.nedges; e++)
        g->succ[cur[s->build.edges[e].from]++] =
            base + (uint32_t)s->build.edges[e].to;
    free(cur);
    g->n = base + (uint32_t)s->build.nnodes;
    g->ns = pos;
    g->node[g->n].succ = g->ns; /* sentinel (overwritten by the next) */
    return NBCXI_SIM_OK;
}

/* Builds rank r's schedule and appends it to g. */
static int build_rank(struct setup *S, int r, struct graph *g,
                      const char **alg_name, char *err, size_t errlen)
{
    struct nbcx_comm_s *comm;
    struct nbcx_sched_s *s = NULL;
    int e = sim_comm(r, S->P, S->cfg->ranks_per_node >= S->P,
                     S->cfg->ranks_per_node, &comm);
    if (e == NBCX_SUCCESS && neighbor(S->coll)) {
        int periods[2] = { 1, 1 };
        e = nbcx_comm_set_cart(comm, 2, S->dims, periods);
    }
    if (e == NBCX_SUCCESS)
        e = nbcxi_sched_new(comm, &s);
    if (comm)
        nbcxi_comm_release(comm); /* the schedule holds it */
    if (e != NBCX_SUCCESS) {
        snprintf(err, errlen, "rank %d: cannot make its communicator: %s", r,
                 nbcx_error_string(e));
        return e == NBCX_ERR_NOMEM ? NBCXI_SIM_ENOMEM : NBCXI_SIM_EBUILD;
    }
    struct nbcxi_coll_args a;
    sim_setup_rank(S, r, atomic_load(&s->build.comm->topo), &a);
    if (S->alg) {
        if (S->alg->usable && !S->alg->usable(s, &a)) {
            snprintf(err, errlen, "%s %s cannot serve this call",
                     nbcxi_coll_name(S->coll), S->alg->name);
            nbcxi_sched_destroy(s);
            return NBCXI_SIM_EARG;
        }
        s->build.alg_name = a.radix ? nbcxi_knomial_name(a.radix)
                                    : S->alg->name;
        e = S->alg->build(s, &a);
    } else {
        e = nbcxi_coll_build((enum nbcxi_coll)S->coll, s, &a, NULL);
    }
    if (e == NBCX_SUCCESS)
        e = s->build.err;
    if (e != NBCX_SUCCESS) {
        snprintf(err, errlen, "rank %d: the %s builder failed: %s", r,
                 s->build.alg_name ? s->build.alg_name : "?",
                 nbcx_error_string(e));
        nbcxi_sched_destroy(s);
        return e == NBCX_ERR_NOMEM ? NBCXI_SIM_ENOMEM : NBCXI_SIM_EBUILD;
    }
    if (alg_name)
        *alg_name = s->build.alg_name;
    int rc = append(g, s, S->P, err, errlen);
    nbcxi_sched_destroy(s);
    return rc;
}

/* Whether ranks' graphs a (rank ra) and b (rank rb = ra + shift) are the
 * same up to the shift of peers; *approx set when only sizes differ. */
static bool same_shifted(const struct graph *g, uint32_t a0, uint32_t a1,
                         const struct graph *h, uint32_t b0, uint32_t b1,
                         long shift, int P, bool *approx)
{
    if (a1 - a0 != b1 - b0)
        return false;
    for (uint32_t i = 0; i < a1 - a0; i++) {
        const struct sim_node *x = &g->node[a0 + i], *y = &h->node[b0 + i];
        if (x->kind != y->kind || x->npred != y->npred ||
            x->tag != y->tag || x->level != y->level)
            return false;
        if (x->peer >= 0 && (long)y->peer != ((long)x->peer + shift) % P)
            return false;
        uint32_t nx = g->node[a0 + i + 1].succ - x->succ;
        uint32_t ny = (i + 1 < b1 - b0 ? h->node[b0 + i + 1].succ : h->ns) -
                      y->succ;
        if (nx != ny)
            return false;
        for (uint32_t k = 0; k < nx; k++)
            if (g->succ[x->succ + k] - a0 != h->succ[y->succ + k] - b0)
                return false;
        if (x->bytes != y->bytes) {
            uint64_t d = x->bytes > y->bytes ? x->bytes - y->bytes
                                             : y->bytes - x->bytes;
            uint64_t big = x->bytes > y->bytes ? x->bytes : y->bytes;
            if (d * 16 > big && d > 16)
                return false; /* more than a rounding difference */
            *approx = true;
        }
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Matching                                                            */
/* ------------------------------------------------------------------ */

struct pkey {
    int32_t peer;
    uint32_t tag;
    uint32_t id;
};

static int cmp_pkey(const void *x, const void *y)
{
    const struct pkey *a = x, *b = y;
    if (a->peer != b->peer)
        return a->peer < b->peer ? -1 : 1;
    if (a->tag != b->tag)
        return a->tag < b->tag ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* First index of (peer, tag) in sorted k[0..n), or n. */
static uint32_t lower(const struct pkey *k, uint32_t n, int32_t peer,
                      uint32_t tag)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (k[mid].peer < peer || (k[mid].peer == peer && k[mid].tag < tag))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The k-th send of rep r to global q with tag t meets the k-th receive
 * of rep d = q mod F from source (d + r - q) mod P, in creation order
 * (full: F = P, d = q and the source is r). */
static int match(struct nbcxi_sim_job *J, char *err, size_t errlen)
{
    const int F = J->F, P = J->P;
    uint32_t *roff = malloc(sizeof(uint32_t) * ((size_t)F + 1));
    uint64_t nrecv = 0;
    for (uint32_t i = 0; i < J->nnodes; i++)
        nrecv += J->node[i].kind == NBCXI_NODE_RECV;
    struct pkey *rk = malloc(sizeof *rk * (nrecv ? nrecv : 1));
    J->partner = malloc(sizeof(uint32_t) * ((size_t)J->nnodes + 1));
    if (!roff || !rk || !J->partner) {
        free(roff);
        free(rk);
        snprintf(err, errlen, "out of memory matching messages");
        return NBCXI_SIM_ENOMEM;
    }
    uint32_t pos = 0;
    for (int r = 0; r < F; r++) {
        roff[r] = pos;
        for (uint32_t i = J->rep_off[r]; i < J->rep_off[r + 1]; i++) {
            J->partner[i] = UINT32_MAX;
            if (J->node[i].kind == NBCXI_NODE_RECV)
                rk[pos++] = (struct pkey){ J->node[i].peer, J->node[i].tag,
                                           i };
        }
        if (pos - roff[r] > 1)
            qsort(rk + roff[r], pos - roff[r], sizeof *rk, cmp_pkey);
    }
    roff[F] = pos;
    uint8_t *used = calloc(nrecv ? nrecv : 1, 1);
    struct pkey *sk = NULL;
    size_t skcap = 0;
    int rc = used ? NBCXI_SIM_OK : NBCXI_SIM_ENOMEM;
    uint64_t matched = 0;
    for (int r = 0; r < F && rc == NBCXI_SIM_OK; r++) {
        size_t ns = 0;
        for (uint32_t i = J->rep_off[r]; i < J->rep_off[r + 1]; i++)
            if (J->node[i].kind == NBCXI_NODE_SEND) {
                if (ns == skcap) {
                    size_t nc = skcap ? 2 * skcap : 1024;
                    struct pkey *p = realloc(sk, nc * sizeof *p);
                    if (!p) {
                        rc = NBCXI_SIM_ENOMEM;
                        break;
                    }
                    sk = p;
                    skcap = nc;
                }
                sk[ns++] = (struct pkey){ J->node[i].peer, J->node[i].tag,
                                          i };
            }
        if (rc)
            break;
        if (ns > 1)
            qsort(sk, ns, sizeof *sk, cmp_pkey);
        for (size_t j = 0; j < ns;) {
            size_t g = j;
            while (g < ns && sk[g].peer == sk[j].peer && sk[g].tag == sk[j].tag)
                g++;
            int q = sk[j].peer;
            int d = q % F;
            int32_t src = (int32_t)(((long)d + r - q) % P + P) % P;
            const struct pkey *base = rk + roff[d];
            uint32_t nd = roff[d + 1] - roff[d];
            uint32_t lo = lower(base, nd, src, sk[j].tag);
            uint32_t have = 0;
            while (lo + have < nd && base[lo + have].peer == src &&
                   base[lo + have].tag == sk[j].tag)
                have++;
            if (have != g - j) {
                snprintf(err, errlen, "unmatched messages: rank %d sends %zu "
                         "message(s) with tag %u to rank %d, which posts %u "
                         "receive(s) for them", r, g - j, sk[j].tag, q, have);
                rc = NBCXI_SIM_EMATCH;
                break;
            }
            for (size_t k = j; k < g; k++) {
                uint32_t rid = base[lo + (k - j)].id;
                /* a folded run with rounded sizes compares a rank's send
                 * with its representative's receive: sizes may differ */
                if (J->node[sk[k].id].bytes != J->node[rid].bytes &&
                    !J->approx) {
                    snprintf(err, errlen, "size mismatch: rank %d sends "
                             "%llu bytes with tag %u to rank %d, which "
                             "receives %llu", r,
                             (unsigned long long)J->node[sk[k].id].bytes,
                             sk[j].tag, q,
                             (unsigned long long)J->node[rid].bytes);
                    rc = NBCXI_SIM_EMATCH;
                    break;
                }
                J->partner[sk[k].id] = rid;
                used[roff[d] + lo + (k - j)] = 1;
                matched++;
            }
            if (rc)
                break;
            j = g;
        }
    }
    if (rc == NBCXI_SIM_OK && matched != nrecv) {
        for (int d = 0; d < F; d++)
            for (uint32_t k = roff[d]; k < roff[d + 1]; k++)
                if (!used[k]) {
                    const struct sim_node *n = &J->node[rk[k].id];
                    snprintf(err, errlen, "unmatched receive: rank %d posts "
                             "a receive from rank %d with tag %u that no "
                             "send meets", d, n->peer, n->tag);
                    d = F;
                    break;
                }
        rc = NBCXI_SIM_EMATCH;
    }
    if (rc == NBCXI_SIM_ENOMEM)
        snprintf(err, errlen, "out of memory matching messages");
    free(sk);
    free(used);
    free(rk);
    free(roff);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The job                                                             */
/* ------------------------------------------------------------------ */

void nbcxi_sim_free(struct nbcxi_sim_job *J)
{
    if (!J)
        return;
    free(J->node);
    free(J->succ);
    free(J->rep_off);
    free(J->partner);
    free(J->pend);
    free(J->flags);
    free(J);
}

bool nbcxi_sim_job_same(const struct nbcxi_sim_job *a,
                        const struct nbcxi_sim_job *b)
{
    if (a->P != b->P || a->C != b->C || a->F != b->F ||
        a->nnodes != b->nnodes || a->nsucc != b->nsucc)
        return false;
    if (a->node[a->nnodes].succ != b->node[b->nnodes].succ) /* sentinel */
        return false;
    for (uint32_t i = 0; i < a->nnodes; i++) {
        const struct sim_node *x = &a->node[i], *y = &b->node[i];
        if (x->bytes != y->bytes || x->peer != y->peer ||
            x->succ != y->succ || x->npred != y->npred ||
            x->tag != y->tag || x->kind != y->kind || x->level != y->level)
            return false;
    }
    return (a->nsucc == 0 ||
            memcmp(a->succ, b->succ, a->nsucc * sizeof *a->succ) == 0) &&
           memcmp(a->rep_off, b->rep_off,
                  ((size_t)a->F + 1) * sizeof *a->rep_off) == 0 &&
           (a->nnodes == 0 ||
            memcmp(a->partner, b->partner,
                   a->nnodes * sizeof *a->partner) == 0);
}

void nbcxi_sim_job_info(const struct nbcxi_sim_job *J,
                        struct nbcxi_sim_info *info)
{
    snprintf(info->alg, sizeof info->alg, "%s", J->alg);
    info->period = J->F == J->P ? 0 : J->F;
    info->approx = J->approx;
    info->nodes = J->nnodes;
    info->messages = J->messages;
    info->messages_total = J->messages_total;
    info->build_seconds = J->build_seconds;
}

/* Whether the F = C first ranks stand for all (see the top). */
static int try_fold(struct setup *S, struct nbcxi_sim_job *J,
                    struct graph *g, bool *ok, char *err, size_t errlen)
{
    const int P = J->P, F = J->F;
    const int m = P / F;
    int ks[4] = { 1, 2, m / 2, m - 1 };
    struct graph h = { 0 };
    *ok = true;
    bool approx = false;
    for (int j = 0; j < 4 && *ok; j++) {
        int k = ks[j];
        if (k < 1 || k >= m || (j > 0 && (k == ks[j - 1] ||
                                          (j > 1 && k == ks[j - 2]))))
            continue;
        for (int r = 0; r < F && *ok; r++) {
            h.n = h.ns = 0;
            int rc = build_rank(S, r + k * F, &h, NULL, err, errlen);
            if (rc != NBCXI_SIM_OK) {
                free(h.node);
                free(h.succ);
                return rc;
            }
            *ok = same_shifted(g, J->rep_off[r], J->rep_off[r + 1], &h, 0,
                               h.n, (long)k * F, P, &approx);
        }
    }
    free(h.node);
    free(h.succ);
    J->approx = *ok && approx;
    return NBCXI_SIM_OK;
}

static int build_reps(struct setup *S, struct nbcxi_sim_job *J,
                      struct graph *g, size_t max_nodes, char *err,
                      size_t errlen)
{
    free(J->rep_off);
    J->rep_off = malloc(sizeof(uint32_t) * ((size_t)J->F + 1));
    if (!J->rep_off) {
        snprintf(err, errlen, "out of memory");
        return NBCXI_SIM_ENOMEM;
    }
    g->n = g->ns = 0;
    for (int r = 0; r < J->F; r++) {
        J->rep_off[r] = g->n;
        const char *name = NULL;
        int rc = build_rank(S, r, g, &name, err, errlen);
        if (rc != NBCXI_SIM_OK)
            return rc;
        if (r == 0 && name)
            snprintf(J->alg, sizeof J->alg, "%s", name);
        /* after 17 ranks and after 1% of them (at least 64), refuse at once a
         * projection far above the limit instead of building on */
        int probe = J->F / 100 > 64 ? J->F / 100 : 64;
        bool doomed = (r == 16 || r == probe) &&
                      (double)g->n * J->F / (r + 1) > 2.0 * max_nodes;
        if (g->n > max_nodes || doomed) {
            snprintf(err, errlen, "too large: the schedules of ranks 0..%d "
                     "of %d have %u nodes, about %.0f for all (limit %zu, "
                     "%zu bytes each; --max-nodes); try fewer ranks, or an "
                     "algorithm that folds (docs/sim.md)", r, J->P, g->n,
                     (double)g->n * J->F / (r + 1), max_nodes,
                     sizeof(struct sim_node) + 13);
            return NBCXI_SIM_ETOOBIG;
        }
    }
    J->rep_off[J->F] = g->n;
    return NBCXI_SIM_OK;
}

int nbcxi_sim_build(const struct nbcxi_sim_config *cfg,
                    struct nbcxi_sim_job **out, char *err, size_t errlen)
{
    *out = NULL;
    err[0] = '\0';
    if (cfg->coll < 0 || cfg->coll >= NBCXI_NCOLL) {
        snprintf(err, errlen, "no such collective");
        return NBCXI_SIM_EARG;
    }
    if (cfg->ranks < 1 || cfg->ranks_per_node < 1 ||
        cfg->ranks >= 1 << 30) {
        snprintf(err, errlen, "ranks must be from 1 to 2^30 - 1, ranks per "
                 "node >= 1");
        return NBCXI_SIM_EARG;
    }
    if (cfg->root < 0 || cfg->root >= cfg->ranks) {
        snprintf(err, errlen, "root %d is not a rank of %d", cfg->root,
                 cfg->ranks);
        return NBCXI_SIM_EARG;
    }
    struct setup S = { 0 };
    S.cfg = cfg;
    const char *coll_name = nbcxi_coll_name(cfg->coll);
    if (cfg->alg && strcasecmp(cfg->alg, "auto") != 0) {
        S.alg = sim_find_alg(cfg->coll, cfg->alg);
        if (!S.alg) {
            size_t n = (size_t)snprintf(err, errlen, "%s has no algorithm "
                                        "'%s' (have: auto", coll_name,
                                        cfg->alg);
            const char *a;
            for (int i = 0; (a = nbcxi_sim_alg(cfg->coll, i)) && n < errlen;
                 i++)
                n += (size_t)snprintf(err + n, errlen - n, " %s", a);
            if (n < errlen)
                snprintf(err + n, errlen - n, ")");
            return NBCXI_SIM_EARG;
        }
    }
    int64_t t0 = nbcxi_now_ns();
    struct nbcxi_sim_job *J = calloc(1, sizeof *J);
    struct graph g = { 0 };
    if (!J) {
        snprintf(err, errlen, "out of memory");
        return NBCXI_SIM_ENOMEM;
    }
    J->P = cfg->ranks;
    J->C = cfg->ranks_per_node;
    J->coll = cfg->coll;
    size_t max_nodes = cfg->max_nodes ? cfg->max_nodes : 60000000;
    int rc = sim_setup_job(&S, err, errlen);
    /* folded first when it may be: P a multiple of C, more than one node */
    bool fold = cfg->fold != NBCXI_SIM_FOLD_OFF && J->P % J->C == 0 &&
                J->P / J->C >= 2;
    if (cfg->fold == NBCXI_SIM_FOLD_ON && !fold && rc == NBCXI_SIM_OK) {
        snprintf(err, errlen, "--fold on needs ranks a multiple of the "
                 "ranks per node, on at least 2 nodes");
        rc = NBCXI_SIM_EARG;
    }
    if (rc == NBCXI_SIM_OK && fold) {
        J->F = J->C;
        rc = build_reps(&S, J, &g, max_nodes, err, errlen);
        bool ok = false;
        if (rc == NBCXI_SIM_OK)
            rc = try_fold(&S, J, &g, &ok, err, errlen);
        if (rc == NBCXI_SIM_OK && !ok) {
            if (cfg->fold == NBCXI_SIM_FOLD_ON) {
                snprintf(err, errlen, "%s %s does not fold: its ranks' "
                         "schedules are not shifts of each other (use "
                         "--fold auto or off)", coll_name, J->alg);
                rc = NBCXI_SIM_EARG;
            }
            fold = false;
        }
    }
    if (rc == NBCXI_SIM_OK && !fold) {
        J->F = J->P;
        rc = build_reps(&S, J, &g, max_nodes, err, errlen);
    }
    sim_free_setup(&S);
    if (rc == NBCXI_SIM_OK) {
        J->node = g.node;
        J->nnodes = g.n;
        J->succ = g.succ;
        J->nsucc = g.ns;
        g.node = NULL;
        g.succ = NULL;
        J->node[J->nnodes].succ = J->nsucc;
        for (uint32_t i = 0; i < J->nnodes; i++)
            J->messages += J->node[i].kind == NBCXI_NODE_SEND;
        J->messages_total = J->messages * (J->P / J->F);
        rc = match(J, err, errlen);
    }
    free(g.node);
    free(g.succ);
    if (rc != NBCXI_SIM_OK) {
        nbcxi_sim_free(J);
        return rc;
    }
    J->build_seconds = (double)(nbcxi_now_ns() - t0) * 1e-9;
    *out = J;
    return NBCXI_SIM_OK;
}
