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
 * a block per rank), of the same type on every rank.
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

/* How many blocks of `count` elements the larger buffer holds. */
static int blocks_of(enum nbcxi_coll coll, int size)
{
    switch (coll) {
    case NBCXI_BARRIER:
        return 0;
    case NBCXI_BCAST:
    case NBCXI_REDUCE:
    case NBCXI_ALLREDUCE:
        return 1;
    default:
        return size;
    }
}

int ck_setup_job(struct ck_job *J)
{
    const struct nbcx_datatype_s *t = J->type;
    long long n = (long long)blocks_of(J->coll, J->size) * J->count;
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

int ck_setup_rank(struct ck_job *J, int r, struct nbcxi_coll_args *a,
                  struct ck_regions *reg)
{
    struct nbcx_datatype_s *t = J->type;
    const int p = J->size, c = J->count;
    const bool at_root = r == J->root;
    const ptrdiff_t blk = (ptrdiff_t)c * t->extent;
    const size_t one = span(c, t), all = span((long long)p * c, t);
    memset(a, 0, sizeof *a);
    a->segsize = J->segsize;
    a->root = J->root;
    a->op = J->op;
    ck_regions_reset(reg);

    switch (J->coll) {
    case NBCXI_BARRIER:
        break;
    case NBCXI_BCAST:
        *a = (struct nbcxi_coll_args){ .rbuf = J->rbuf, .rcount = c,
                                       .rtype = t, .root = J->root,
                                       .segsize = J->segsize };
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
            role(reg, J->rbuf, one,
                 CK_IN | CK_OUT | (p > 1 ? CK_MUST : 0));
            break;
        }
        a->sbuf = J->sbuf;
        bound(reg, J->sbuf, one, "sendbuf");
        role(reg, J->sbuf, one, CK_IN);
        if (here) {
            a->rbuf = J->rbuf;
            bound(reg, J->rbuf, one, "recvbuf");
            role(reg, J->rbuf, one, CK_OUT | CK_MUST);
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
        return NBCX_ERR_ALGORITHM; /* a collective the checker cannot call */
    }
    return reg->err;
}
