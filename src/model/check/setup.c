/*
 * setup.c - what each rank hands its builder, as api/collectives.c would
 * after checking the arguments of a call, and what its bytes are.
 *
 * User buffers are fake: one reservation of address space without access
 * rights (PROT_NONE, nothing committed), laid out as
 *
 *     [gap][sendbuf][gap][recvbuf][gap]
 *
 * with gaps at least as long as a buffer, so a builder's access past a
 * buffer lands in no buffer and is reported, and a builder touching user
 * data at build time faults. Every rank uses the same two buffers: ranks
 * are checked one at a time.
 *
 * Roles (check.h): the send buffer and in-place data are input (CK_IN);
 * the receive buffer may be written (CK_OUT) and each of its blocks must
 * be (CK_MUST), except a block that is in place already. Roles cover the
 * bytes a block's elements span; for types with gaps (the pair types)
 * the bytes after a block's last element belong to none, and must not be
 * touched.
 *
 * Counts: `count` elements per rank (per block for the collectives with
 * a block per rank), of the same type on every rank. The vector variants
 * vary them: rank i's block has vcount(i) elements (some zero), the block
 * between ranks s and d pcount(s, d) (symmetric, so in-place alltoallv
 * works; some zero); blocks lie in reverse rank order with a one-element
 * gap between them, which no node may touch. alltoallw and
 * neighbor_alltoallw send the blocks of odd peers as bytes (contiguous
 * types), with byte displacements.
 *
 * Neighbourhood collectives run on the topology of opt->topology: a
 * periodic or non-periodic 2-D grid of rows x cols = size (as square as
 * the size allows), or a graph with repeated edges, edges from a rank to
 * itself and NBCX_PROC_NULL neighbours; NBCX_PROC_NULL blocks get counts
 * too, and must not be touched.
 */
#define _GNU_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"

void ck_regions_reset(struct ck_regions *reg)
{
    reg->nbounds = 0;
    reg->nroles = 0;
    reg->err = 0;
}

void ck_regions_free(struct ck_regions *reg)
{
    free(reg->roles);
    memset(reg, 0, sizeof *reg);
}

static void bound(struct ck_regions *reg, const char *buf, size_t len,
                  const char *name)
{
    if (len == 0 || reg->nbounds == 4)
        return;
    reg->bounds[reg->nbounds++] =
        (struct ck_range){ (uintptr_t)buf, (uintptr_t)buf + len, 0, name };
}

static void role(struct ck_regions *reg, const char *lo, size_t len,
                 int flags)
{
    if (len == 0 || flags == 0)
        return;
    uintptr_t a = (uintptr_t)lo, b = a + len;
    if (reg->nroles > 0) { /* merge with a touching one of the same kind */
        struct ck_range *last = &reg->roles[reg->nroles - 1];
        if (last->hi == a && last->flags == flags) {
            last->hi = b;
            return;
        }
    }
    if (reg->nroles == reg->cap) {
        int cap = reg->cap ? 2 * reg->cap : 16;
        struct ck_range *p = realloc(reg->roles, sizeof *p * (size_t)cap);
        if (!p) {
            reg->err = NBCX_ERR_NOMEM;
            return;
        }
        reg->roles = p;
        reg->cap = cap;
    }
    reg->roles[reg->nroles++] = (struct ck_range){ a, b, flags, NULL };
}

/* Bytes spanned by n elements of t from the buffer's start (true_lb
 * included). */
static size_t span(long long n, const struct nbcx_datatype_s *t)
{
    if (n <= 0 || t->size == 0)
        return 0;
    return (size_t)(t->true_lb + (ptrdiff_t)(n - 1) * t->extent +
                    t->true_extent);
}

static bool is_neighbor(enum nbcxi_coll c)
{
    return c == NBCXI_NEIGHBOR_ALLGATHER || c == NBCXI_NEIGHBOR_ALLGATHERV ||
           c == NBCXI_NEIGHBOR_ALLTOALL || c == NBCXI_NEIGHBOR_ALLTOALLV ||
           c == NBCXI_NEIGHBOR_ALLTOALLW;
}

/* Elements the larger buffer spans, at most. */
static long long elements_of(const struct ck_job *J)
{
    long long p = J->size, c = J->count;
    switch (J->coll) {
    case NBCXI_BARRIER:
        return 0;
    case NBCXI_BCAST:
    case NBCXI_REDUCE:
    case NBCXI_ALLREDUCE:
    case NBCXI_SCAN:
    case NBCXI_EXSCAN:
        return c;
    case NBCXI_GATHER:
    case NBCXI_SCATTER:
    case NBCXI_ALLGATHER:
    case NBCXI_ALLTOALL:
        return p * c;
    default: /* v variants: counts up to c + 2, a gap after each block */
        return (is_neighbor(J->coll) ? J->maxdeg : p) * (c + 3);
    }
}

/* Per-rank and per-pair counts of the vector variants. */
static int vcount(const struct ck_job *J, int i)
{
    return J->count == 0 ? 0 : i % 4 == 1 ? 0 : J->count + i % 3;
}

static int pcount(const struct ck_job *J, int s, int d)
{
    return J->count == 0 ? 0 : (s + d) % 5 == 3 ? 0 : J->count + (s ^ d) % 3;
}

/* The graph topology: rank r's destinations, by rule; sources are the
 * inverse, in rank order (so the k-th edge from s to r meets the k-th
 * from r's point of view, as MPI's graphs require). */
static int graph_dests(int r, int p, int *out)
{
    int n = 0;
    out[n++] = (r + 1) % p;
    out[n++] = (int)((3LL * r + 1) % p);
    if (r % 3 == 0)
        out[n++] = (r + 1) % p; /* a second edge to the same rank */
    if (r % 5 == 0)
        out[n++] = r; /* an edge to itself */
    if (r % 4 == 1)
        out[n++] = NBCX_PROC_NULL;
    return n;
}

enum { GRAPH_MAXDEG = 5 };

static int graph_setup(struct ck_job *J)
{
    int p = J->size, d[GRAPH_MAXDEG];
    J->gsoff = calloc((size_t)p + 1, sizeof(int));
    if (!J->gsoff)
        return NBCX_ERR_NOMEM;
    long long edges = 0;
    for (int r = 0; r < p; r++) {
        int n = graph_dests(r, p, d);
        for (int k = 0; k < n; k++)
            if (d[k] != NBCX_PROC_NULL) {
                J->gsoff[d[k] + 1]++;
                edges++;
            }
    }
    J->gsrc = malloc(sizeof(int) * (size_t)(edges ? edges : 1));
    int *fill = malloc(sizeof(int) * (size_t)p);
    if (!J->gsrc || !fill) {
        free(fill);
        return NBCX_ERR_NOMEM;
    }
    for (int r = 0; r < p; r++)
        J->gsoff[r + 1] += J->gsoff[r];
    memcpy(fill, J->gsoff, sizeof(int) * (size_t)p);
    J->maxdeg = GRAPH_MAXDEG + 1; /* the NBCX_PROC_NULL source below */
    for (int r = 0; r < p; r++) {
        int n = graph_dests(r, p, d);
        for (int k = 0; k < n; k++)
            if (d[k] != NBCX_PROC_NULL)
                J->gsrc[fill[d[k]]++] = r;
        int indeg = J->gsoff[r + 1] - J->gsoff[r] + (r % 4 == 2);
        J->maxdeg = indeg > J->maxdeg ? indeg : J->maxdeg;
    }
    free(fill);
    return NBCX_SUCCESS;
}

/* Attaches the topology to rank r's communicator. */
int ck_setup_topology(struct ck_job *J, int r, nbcx_comm comm)
{
    if (!is_neighbor(J->coll))
        return NBCX_SUCCESS;
    if (J->topology == NBCX_CHECK_GRAPH) {
        int dst[GRAPH_MAXDEG], *src = J->tmp_src;
        int nd = graph_dests(r, J->size, dst);
        int ns = J->gsoff[r + 1] - J->gsoff[r];
        memcpy(src, J->gsrc + J->gsoff[r], sizeof(int) * (size_t)ns);
        if (r % 4 == 2)
            src[ns++] = NBCX_PROC_NULL;
        return nbcx_comm_set_neighbors(comm, ns, src, nd, dst);
    }
    int periods[2] = { J->topology != NBCX_CHECK_GRID,
                       J->topology != NBCX_CHECK_GRID };
    return nbcx_comm_set_cart(comm, 2, J->dims, periods);
}

int ck_setup_job(struct ck_job *J)
{
    const struct nbcx_datatype_s *t = J->type;
    int p = J->size;
    J->maxdeg = 4; /* a 2-D grid */
    if (is_neighbor(J->coll) && J->topology == NBCX_CHECK_GRAPH) {
        int err = graph_setup(J);
        if (err)
            return err;
    }
    if (is_neighbor(J->coll)) {
        int rows = 1;
        for (int a = 1; (long long)a * a <= p; a++)
            if (p % a == 0)
                rows = a;
        J->dims[0] = rows;
        J->dims[1] = p / rows;
    }
    int per_rank = is_neighbor(J->coll) ? J->maxdeg : p;
    J->ints = malloc(sizeof(int) * 4 * (size_t)per_rank);
    J->types = malloc(sizeof(nbcx_datatype) * 2 * (size_t)per_rank);
    J->adispls = malloc(sizeof(ptrdiff_t) * 2 * (size_t)per_rank);
    J->tmp_src = malloc(sizeof(int) * (size_t)per_rank);
    if (!J->ints || !J->types || !J->adispls || !J->tmp_src)
        return NBCX_ERR_NOMEM;
    long long n = elements_of(J);
    if (n > INT_MAX)
        return NBCX_ERR_COUNT; /* builders count whole buffers in ints */
    size_t len = span(n, t);
    size_t page = 1 << 16;
    size_t rlen = (len + page - 1) / page * page;
    size_t gap = rlen > (size_t)1 << 20 ? rlen : (size_t)1 << 20;
    if (rlen > SIZE_MAX / 8)
        return NBCX_ERR_COUNT;
    J->memlen = 3 * gap + 2 * rlen;
    void *mem = mmap(NULL, J->memlen, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) {
        J->mem = NULL;
        return NBCX_ERR_NOMEM;
    }
    J->mem = mem;
    J->buflen = len;
    J->sbuf = J->mem + gap - t->true_lb;
    J->rbuf = J->mem + 2 * gap + rlen - t->true_lb;
    return NBCX_SUCCESS;
}

void ck_free_job_memory(struct ck_job *J)
{
    if (J->mem)
        munmap(J->mem, J->memlen);
    J->mem = NULL;
    free(J->gsoff);
    free(J->gsrc);
    free(J->ints);
    free(J->types);
    free(J->adispls);
    free(J->tmp_src);
    J->gsoff = J->gsrc = J->ints = J->tmp_src = NULL;
    J->types = NULL;
    J->adispls = NULL;
}

/* ---- the vector sides ---- */

/* n blocks of counts[i] elements of t laid out in reverse order with a
 * one-element gap after each: displs[i] in elements (or in bytes, then
 * for block i of type types[i]). */
static void layout(int n, const int *counts, int *displs,
                   const struct nbcx_datatype_s *t, const nbcx_datatype *types,
                   ptrdiff_t *adispls)
{
    ptrdiff_t at = 0;
    for (int i = n - 1; i >= 0; i--) {
        if (types) {
            const struct nbcx_datatype_s *ti = nbcxi_type(types[i]);
            if (displs)
                displs[i] = (int)at;
            if (adispls)
                adispls[i] = at;
            at += (ptrdiff_t)counts[i] * ti->extent + t->extent;
        } else {
            displs[i] = (int)at;
            at += counts[i] + 1;
        }
    }
}

/* Where block i of a side is, and its span, in the checker's own
 * arithmetic (not the builders'). */
static void block_at(const char *buf, const struct nbcxi_vside *v,
                     const struct nbcx_datatype_s *t, int i, const char **b,
                     size_t *len)
{
    const struct nbcx_datatype_s *ti = v->types ? nbcxi_type(v->types[i]) : t;
    ptrdiff_t d = v->displs ? (ptrdiff_t)nbcxi_vdispl(v, i) : 0;
    ptrdiff_t off = v->adispls       ? v->adispls[i]
                    : v->byte_displs ? d
                                     : d * t->extent;
    *b = buf + off;
    *len = span(nbcxi_vcount(v, 0, i), ti);
}

/* Roles of the n blocks of a side: `each`, or `own_flags` for block own
 * (-1: none); blocks of NBCX_PROC_NULL peers (peers given) get none. */
static void vside_roles(struct ck_regions *reg, const char *buf,
                        const struct nbcxi_vside *v,
                        const struct nbcx_datatype_s *t, int n, int own,
                        int own_flags, int each, const int *peers)
{
    for (int i = 0; i < n; i++) {
        if (peers && peers[i] == NBCX_PROC_NULL)
            continue;
        const char *b;
        size_t len;
        block_at(buf, v, t, i, &b, &len);
        role(reg, b, len, i == own ? own_flags : each);
    }
}

/* The bytes a side spans: to its last block's end. */
static size_t vside_len(const char *buf, const struct nbcxi_vside *v,
                        const struct nbcx_datatype_s *t, int n)
{
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        const char *b;
        size_t l;
        block_at(buf, v, t, i, &b, &l);
        size_t end = (size_t)(b - buf) + l;
        len = end > len ? end : len;
    }
    return len;
}

/* The type of the block for peer `peer` of a w variant, and its count for
 * elems elements of the job's type. */
static nbcx_datatype wtype(const struct ck_job *J, int peer, int elems,
                           int *count)
{
    if (peer >= 0 && peer % 2 == 1 && J->type->contiguous &&
        J->type->size > 1) {
        *count = elems * (int)J->type->size;
        return NBCX_BYTE;
    }
    *count = elems;
    return J->type_handle;
}

/* The blocks of a buffer of `p` blocks of `count` elements: the whole
 * span gets `whole` (minus block `own`, which gets `own_flags`), each
 * other block `each` on the bytes its elements span. */
static void block_roles(struct ck_regions *reg, char *buf, int p, int count,
                        const struct nbcx_datatype_s *t, int whole, int own,
                        int own_flags, int each)
{
    ptrdiff_t blk = (ptrdiff_t)count * t->extent;
    char *lo = buf + t->true_lb;
    size_t all = span((long long)p * count, t) - (size_t)t->true_lb;
    if (own < 0) {
        role(reg, lo, all, whole);
    } else {
        size_t own_at = (size_t)(own * blk);
        size_t own_end = own_at + (size_t)blk;
        role(reg, lo, own_at, whole);
        if (own_end < all)
            role(reg, lo + own_end, all - own_end, whole);
    }
    size_t bspan = span(count, t) - (size_t)t->true_lb;
    for (int j = 0; j < p; j++)
        role(reg, lo + j * blk, bspan, j == own ? own_flags : each);
}

static int setup_vector(struct ck_job *J, int r, struct nbcxi_coll_args *a,
                        struct ck_regions *reg, const struct nbcxi_topo *topo);

/* role() on the `count` elements of t at buf whose result must be
 * written (CK_MUST), for the reductions: a type with padding between its
 * elements (the pair types: DOUBLE_INT is 12 bytes every 16) has in the
 * span of several elements bytes that belong to no element. An algorithm
 * that writes the result in pieces (Rabenseifner's blocks, the ring's)
 * never writes the padding between two pieces, and reading a piece never
 * reads it either; so the padding between elements is CK_IN | CK_OUT
 * (defined, may be written, need not be) and only the elements' own
 * bytes are CK_MUST. At most ROLE_ELEMS elements get a role each; beyond,
 * the whole span (as before: stricter). */
enum { ROLE_ELEMS = 1 << 16 };

static void result_roles(struct ck_regions *reg, const char *buf, int count,
                         const struct nbcx_datatype_s *t, int flags)
{
    size_t whole = span(count, t);
    if (!(flags & CK_MUST) || count < 2 || count > ROLE_ELEMS ||
        t->extent <= t->true_extent) {
        role(reg, buf, whole, flags);
        return;
    }
    const size_t pad = (size_t)(t->extent - t->true_extent);
    const int gap_flags = (flags & ~CK_MUST) | CK_IN | CK_OUT;
    /* element 0 from the buffer's start, as span() counts */
    role(reg, buf, (size_t)(t->true_lb + t->true_extent), flags);
    for (int i = 1; i < count; i++) {
        const char *e = buf + t->true_lb + (ptrdiff_t)i * t->extent;
        role(reg, e - pad, pad, gap_flags);
        role(reg, e, (size_t)t->true_extent, flags);
    }
}

int ck_setup_rank(struct ck_job *J, int r, const struct nbcxi_topo *topo,
                  struct nbcxi_coll_args *a, struct ck_regions *reg)
{
    struct nbcx_datatype_s *t = J->type;
    const int p = J->size, c = J->count;
    const bool at_root = r == J->root;
    const ptrdiff_t blk = (ptrdiff_t)c * t->extent;
    const size_t one = span(c, t), all = span((long long)p * c, t);
    memset(a, 0, sizeof *a);
    a->segsize = J->segsize;
    a->segsize_auto = J->segsize_auto;
    a->root = J->root;
    a->op = J->op;
    ck_regions_reset(reg);

    switch (J->coll) {
    case NBCXI_BARRIER:
        break;
    case NBCXI_BCAST:
        *a = (struct nbcxi_coll_args){ .rbuf = J->rbuf, .rcount = c,
                                       .rtype = t, .root = J->root,
                                       .segsize = J->segsize,
                                       .segsize_auto = J->segsize_auto };
        bound(reg, J->rbuf, one, "buffer");
        role(reg, J->rbuf, one, at_root ? CK_IN : CK_OUT | CK_MUST);
        break;
    case NBCXI_REDUCE:
    case NBCXI_ALLREDUCE: {
        bool all_ranks = J->coll == NBCXI_ALLREDUCE;
        bool here = all_ranks || at_root; /* rbuf significant */
        a->rcount = c;
        a->rtype = t;
        a->root = all_ranks ? 0 : J->root;
        if (J->in_place && here) {
            a->sbuf = a->rbuf = J->rbuf;
            bound(reg, J->rbuf, one, "recvbuf");
            result_roles(reg, J->rbuf, c, t,
                         CK_IN | CK_OUT | (p > 1 ? CK_MUST : 0));
            break;
        }
        a->sbuf = J->sbuf;
        bound(reg, J->sbuf, one, "sendbuf");
        role(reg, J->sbuf, one, CK_IN);
        if (here) {
            a->rbuf = J->rbuf;
            bound(reg, J->rbuf, one, "recvbuf");
            result_roles(reg, J->rbuf, c, t, CK_OUT | CK_MUST);
        }
        break;
    }
    case NBCXI_GATHER:
    case NBCXI_ALLGATHER: {
        bool gather = J->coll == NBCXI_GATHER;
        bool here = !gather || at_root;
        bool in_place = J->in_place && here;
        if (here) {
            a->rbuf = J->rbuf;
            a->rcount = c;
            a->rtype = t;
            bound(reg, J->rbuf, all, "recvbuf");
            block_roles(reg, J->rbuf, p, c, t, CK_OUT, in_place ? r : -1,
                        CK_IN, CK_OUT | CK_MUST);
        }
        if (in_place) {
            a->sbuf = J->rbuf + r * blk;
        } else {
            a->sbuf = J->sbuf;
            bound(reg, J->sbuf, one, "sendbuf");
            role(reg, J->sbuf, one, CK_IN);
        }
        a->scount = c;
        a->stype = t;
        break;
    }
    case NBCXI_SCATTER:
        if (at_root) {
            a->sbuf = J->sbuf;
            a->scount = c;
            a->stype = t;
            bound(reg, J->sbuf, all, "sendbuf");
            role(reg, J->sbuf, all, CK_IN);
        }
        a->rcount = c;
        a->rtype = t;
        if (at_root && J->in_place) {
            a->rbuf = J->sbuf + r * blk;
        } else {
            a->rbuf = J->rbuf;
            bound(reg, J->rbuf, one, "recvbuf");
            role(reg, J->rbuf, one, CK_OUT | CK_MUST);
        }
        break;
    case NBCXI_ALLTOALL:
        a->rbuf = J->rbuf;
        a->rcount = c;
        a->rtype = t;
        a->scount = c;
        a->stype = t;
        bound(reg, J->rbuf, all, "recvbuf");
        if (J->in_place) {
            a->in_place = true;
            role(reg, J->rbuf, all, CK_IN);
            block_roles(reg, J->rbuf, p, c, t, CK_OUT, r, 0,
                        CK_OUT | CK_MUST);
        } else {
            a->sbuf = J->sbuf;
            bound(reg, J->sbuf, all, "sendbuf");
            role(reg, J->sbuf, all, CK_IN);
            block_roles(reg, J->rbuf, p, c, t, CK_OUT, -1, 0,
                        CK_OUT | CK_MUST);
        }
        break;
    default:
        return setup_vector(J, r, a, reg, topo);
    }
    return reg->err;
}

/* gatherv, scatterv, allgatherv, alltoallv, alltoallw, reduce_scatter
 * (_block), scan, exscan and the neighbourhood collectives. */
static int setup_vector(struct ck_job *J, int r, struct nbcxi_coll_args *a,
                        struct ck_regions *reg, const struct nbcxi_topo *topo)
{
    struct nbcx_datatype_s *t = J->type;
    const int p = J->size, c = J->count;
    const bool at_root = r == J->root;
    int *scounts = J->ints, *sdispls = J->ints + p, *rcounts = J->ints + 2 * p,
        *rdispls = J->ints + 3 * p;
    nbcx_datatype *stypes = J->types, *rtypes = J->types + p;
    ptrdiff_t *sadispls = J->adispls, *radispls = J->adispls + p;
    if (is_neighbor(J->coll)) { /* arrays of the degree, not p */
        int m = J->maxdeg;
        scounts = J->ints, sdispls = J->ints + m, rcounts = J->ints + 2 * m;
        rdispls = J->ints + 3 * m;
        stypes = J->types, rtypes = J->types + m;
        sadispls = J->adispls, radispls = J->adispls + m;
    }

    switch (J->coll) {
    case NBCXI_GATHERV:
    case NBCXI_ALLGATHERV: {
        bool gather = J->coll == NBCXI_GATHERV;
        bool here = !gather || at_root;
        bool in_place = J->in_place && here;
        if (here) {
            for (int i = 0; i < p; i++)
                rcounts[i] = vcount(J, i);
            layout(p, rcounts, rdispls, t, NULL, NULL);
            a->rbuf = J->rbuf;
            a->rtype = t;
            a->rv.counts = rcounts;
            a->rv.displs = rdispls;
            bound(reg, J->rbuf, vside_len(J->rbuf, &a->rv, t, p), "recvbuf");
            vside_roles(reg, J->rbuf, &a->rv, t, p, in_place ? r : -1, CK_IN,
                        CK_OUT | CK_MUST, NULL);
        }
        if (in_place) {
            a->in_place = true;
            if (!gather) { /* allgatherv: the own block of rbuf */
                const char *b;
                size_t len;
                block_at(J->rbuf, &a->rv, t, r, &b, &len);
                a->sbuf = b;
                a->scount = rcounts[r];
                a->stype = t;
            }
        } else {
            a->sbuf = J->sbuf;
            a->scount = vcount(J, r);
            a->stype = t;
            bound(reg, J->sbuf, span(a->scount, t), "sendbuf");
            role(reg, J->sbuf, span(a->scount, t), CK_IN);
        }
        break;
    }
    case NBCXI_SCATTERV:
        if (at_root) {
            for (int i = 0; i < p; i++)
                scounts[i] = vcount(J, i);
            layout(p, scounts, sdispls, t, NULL, NULL);
            a->sbuf = J->sbuf;
            a->stype = t;
            a->sv.counts = scounts;
            a->sv.displs = sdispls;
            bound(reg, J->sbuf, vside_len(J->sbuf, &a->sv, t, p), "sendbuf");
            vside_roles(reg, J->sbuf, &a->sv, t, p, -1, 0, CK_IN, NULL);
        }
        if (at_root && J->in_place) {
            a->in_place = true;
        } else {
            a->rbuf = J->rbuf;
            a->rcount = vcount(J, r);
            a->rtype = t;
            bound(reg, J->rbuf, span(a->rcount, t), "recvbuf");
            role(reg, J->rbuf, span(a->rcount, t), CK_OUT | CK_MUST);
        }
        break;
    case NBCXI_ALLTOALLV:
    case NBCXI_ALLTOALLW: {
        bool w = J->coll == NBCXI_ALLTOALLW;
        for (int i = 0; i < p; i++) {
            scounts[i] = pcount(J, r, i);
            rcounts[i] = pcount(J, i, r);
            if (w) {
                stypes[i] = wtype(J, i, scounts[i], &scounts[i]);
                rtypes[i] = wtype(J, i, rcounts[i], &rcounts[i]);
            }
        }
        layout(p, rcounts, rdispls, t, w ? rtypes : NULL, NULL);
        a->rbuf = J->rbuf;
        a->rtype = w ? NULL : t;
        a->rv = (struct nbcxi_vside){ rcounts, rdispls, NULL, w,
                                      w ? rtypes : NULL, false };
        bound(reg, J->rbuf, vside_len(J->rbuf, &a->rv, t, p), "recvbuf");
        if (J->in_place) {
            a->in_place = true;
            vside_roles(reg, J->rbuf, &a->rv, t, p, r, CK_IN,
                        CK_IN | CK_OUT | CK_MUST, NULL);
            break;
        }
        vside_roles(reg, J->rbuf, &a->rv, t, p, -1, 0, CK_OUT | CK_MUST,
                    NULL);
        layout(p, scounts, sdispls, t, w ? stypes : NULL, NULL);
        a->sbuf = J->sbuf;
        a->stype = w ? NULL : t;
        a->sv = (struct nbcxi_vside){ scounts, sdispls, NULL, w,
                                      w ? stypes : NULL, false };
        bound(reg, J->sbuf, vside_len(J->sbuf, &a->sv, t, p), "sendbuf");
        vside_roles(reg, J->sbuf, &a->sv, t, p, -1, 0, CK_IN, NULL);
        break;
    }
    case NBCXI_REDUCE_SCATTER:
    case NBCXI_REDUCE_SCATTER_BLOCK: {
        bool block = J->coll == NBCXI_REDUCE_SCATTER_BLOCK;
        long long total = 0;
        for (int i = 0; i < p; i++)
            total += rcounts[i] = block ? c : vcount(J, i);
        if (total > INT_MAX)
            return NBCX_ERR_COUNT;
        a->rtype = t;
        a->rcount = block ? c : 0;
        a->rv.counts = block ? NULL : rcounts;
        size_t all = span(total, t), mine = span(rcounts[r], t);
        if (J->in_place) {
            a->sbuf = a->rbuf = J->rbuf;
            bound(reg, J->rbuf, all, "recvbuf");
            role(reg, J->rbuf, all, CK_IN | CK_OUT);
            if (p > 1)
                role(reg, J->rbuf, mine, CK_MUST);
            break;
        }
        a->sbuf = J->sbuf;
        a->rbuf = J->rbuf;
        bound(reg, J->sbuf, all, "sendbuf");
        role(reg, J->sbuf, all, CK_IN);
        bound(reg, J->rbuf, mine, "recvbuf");
        role(reg, J->rbuf, mine, CK_OUT | CK_MUST);
        break;
    }
    case NBCXI_SCAN:
    case NBCXI_EXSCAN: {
        bool ex = J->coll == NBCXI_EXSCAN;
        size_t one = span(c, t);
        /* What rbuf gets: nothing at rank 0 of an exscan; no write is
         * needed where the result is already in place (scan, rank 0). */
        int result = ex && r == 0 ? 0 : CK_OUT | CK_MUST;
        a->rcount = c;
        a->rtype = t;
        a->rbuf = J->rbuf;
        bound(reg, J->rbuf, one, "recvbuf");
        if (J->in_place) {
            a->sbuf = J->rbuf;
            role(reg, J->rbuf, one,
                 CK_IN | (!ex && r == 0 ? 0 : result));
            break;
        }
        a->sbuf = J->sbuf;
        bound(reg, J->sbuf, one, "sendbuf");
        role(reg, J->sbuf, one, CK_IN);
        role(reg, J->rbuf, one, result);
        break;
    }
    case NBCXI_NEIGHBOR_ALLGATHER:
    case NBCXI_NEIGHBOR_ALLGATHERV:
    case NBCXI_NEIGHBOR_ALLTOALL:
    case NBCXI_NEIGHBOR_ALLTOALLV:
    case NBCXI_NEIGHBOR_ALLTOALLW: {
        if (!topo)
            return NBCX_ERR_TOPOLOGY;
        a->topo = topo;
        const int in = topo->indegree, out = topo->outdegree;
        const int *src = topo->sources, *dst = topo->destinations;
        bool gather = J->coll == NBCXI_NEIGHBOR_ALLGATHER ||
                      J->coll == NBCXI_NEIGHBOR_ALLGATHERV;
        bool w = J->coll == NBCXI_NEIGHBOR_ALLTOALLW;
        bool regular = J->coll == NBCXI_NEIGHBOR_ALLGATHER ||
                       J->coll == NBCXI_NEIGHBOR_ALLTOALL;
        /* counts: regular c; v and w per pair (allgatherv: the source's
         * own count); a PROC_NULL block gets a count too */
        for (int i = 0; i < in; i++) {
            int s = src[i] == NBCX_PROC_NULL ? r : src[i];
            rcounts[i] = regular ? c
                         : J->coll == NBCXI_NEIGHBOR_ALLGATHERV ? vcount(J, s)
                                                                : pcount(J, s, r);
            rdispls[i] = i * c;
            if (w)
                rtypes[i] = wtype(J, src[i], rcounts[i], &rcounts[i]);
        }
        for (int j = 0; j < out; j++) {
            int d = dst[j] == NBCX_PROC_NULL ? r : dst[j];
            scounts[j] = regular ? c : pcount(J, r, d);
            sdispls[j] = j * c;
            if (w)
                stypes[j] = wtype(J, dst[j], scounts[j], &scounts[j]);
        }
        if (!regular) {
            layout(in, rcounts, rdispls, t, w ? rtypes : NULL,
                   w ? radispls : NULL);
            if (!gather)
                layout(out, scounts, sdispls, t, w ? stypes : NULL,
                       w ? sadispls : NULL);
        }
        a->rbuf = J->rbuf;
        a->rtype = w ? NULL : t;
        a->rcount = c;
        if (!regular)
            a->rv = (struct nbcxi_vside){ rcounts, rdispls,
                                          w ? radispls : NULL, false,
                                          w ? rtypes : NULL, false };
        struct nbcxi_vside rv = { rcounts, rdispls, w ? radispls : NULL,
                                  false, w ? rtypes : NULL, false };
        bound(reg, J->rbuf, vside_len(J->rbuf, &rv, t, in), "recvbuf");
        vside_roles(reg, J->rbuf, &rv, t, in, -1, 0, CK_OUT | CK_MUST, src);
        a->sbuf = J->sbuf;
        a->stype = w ? NULL : t;
        if (gather) {
            a->scount = J->coll == NBCXI_NEIGHBOR_ALLGATHERV ? vcount(J, r)
                                                             : c;
            bound(reg, J->sbuf, span(a->scount, t), "sendbuf");
            role(reg, J->sbuf, span(a->scount, t), CK_IN);
            break;
        }
        a->scount = c;
        if (!regular)
            a->sv = (struct nbcxi_vside){ scounts, sdispls,
                                          w ? sadispls : NULL, false,
                                          w ? stypes : NULL, false };
        struct nbcxi_vside sv = { scounts, sdispls, w ? sadispls : NULL,
                                  false, w ? stypes : NULL, false };
        bound(reg, J->sbuf, vside_len(J->sbuf, &sv, t, out), "sendbuf");
        vside_roles(reg, J->sbuf, &sv, t, out, -1, 0, CK_IN, dst);
        break;
    }
    default:
        return NBCX_ERR_ALGORITHM; /* a collective the checker cannot call */
    }
    return reg->err;
}
