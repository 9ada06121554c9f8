/*
 * reduce_scatter.c - reduce_scatter and reduce_scatter_block: the
 * element-wise reduction of every rank's vector, of which rank i keeps
 * block i (counts[i] elements; the blocks follow each other in the
 * vector, block i at offset off[i] = counts[0] + ... + counts[i-1]).
 * _block is the same with every count equal (a->rv.counts NULL).
 *
 * pairwise (any operation): rank r sends block i of its vector straight
 *   from sbuf to every rank i, one send after the other (step k goes to
 *   r + k, after the send of step k - 1, as alltoall's pairwise), and
 *   receives the p - 1 contributions to its own block into scratch
 *   buffers of their own, all posted at start. It combines them as they
 *   are expected to arrive:
 *     commutative    acc = own block; then acc = c(j) op acc for j =
 *                    r - 1, r - 2, ... (a chain of reductions into acc,
 *                    which is rbuf, or scratch when in place);
 *     otherwise      in rank order: B(0), B(1), ... where B(r) is a
 *                    scratch copy of the own block and B(j) the block
 *                    received from j; B(j) = B(j-1) op B(j) folds the
 *                    lower ranks into the next buffer, B(p-1) ends as the
 *                    result and is copied to rbuf.
 *   In place the vector is in rbuf: the result is written to rbuf only
 *   after every send (which read rbuf) and the copy of the own block.
 *   Tag 0 (one message per pair of ranks).
 *
 * reduce_scatterv (any operation): the binomial reduction of the whole
 *   vector to rank 0 (reduce.c) into a scratch buffer, then a linear
 *   scatter of the blocks from it (tag 2; the reduction uses 0 and 1).
 *   ceil(log2 p) + 1 message steps instead of p - 1: for many ranks and
 *   small vectors. The scatter waits for the reduction's last nodes at
 *   rank 0; elsewhere the receive of the own block into rbuf waits for
 *   them only in place (the reduction reads rbuf there).
 *
 * Empty blocks are no message. A rank with an empty block receives
 * nothing; with every block empty the schedule is empty.
 */
#include <limits.h>
#include <stdlib.h>

#include "coll.h"

enum { TAG_SCATTER = 2 }; /* reduce.c uses 0 and 1 */

/* 64-bit: a block may hold more than INT_MAX elements (the _c calls);
 * the schedule's nodes cut what is larger than a message (sched.h). */
static ptrdiff_t count_of(const struct nbcxi_coll_args *a, int i)
{
    return nbcxi_vcount(&a->rv, a->rcount, i);
}

/* Offsets of the blocks (p + 1 entries: the last is the total), or NULL
 * when out of memory. 64-bit: the total may exceed INT_MAX. */
static ptrdiff_t *block_offsets(const struct nbcx_sched_s *s,
                                const struct nbcxi_coll_args *a)
{
    ptrdiff_t *off = malloc(sizeof(ptrdiff_t) * ((size_t)s->build.size + 1));
    if (!off)
        return NULL;
    off[0] = 0;
    for (int i = 0; i < s->build.size; i++)
        off[i + 1] = off[i] + count_of(a, i);
    return off;
}

static int mod(long x, int p)
{
    long r = x % p;
    return (int)(r < 0 ? r + p : r);
}

/* ------------------------------------------------------------------ */
/* Pairwise                                                            */
/* ------------------------------------------------------------------ */

int nbcxi_build_reduce_scatter_pairwise(struct nbcx_sched_s *s,
                                       const struct nbcxi_coll_args *a)
{
    const int p = s->build.size, me = s->build.rank;
    struct nbcx_datatype_s *t = a->rtype;
    const bool in_place = a->sbuf == a->rbuf;
    const ptrdiff_t n = count_of(a, me);
    ptrdiff_t *off = block_offsets(s, a);
    if (!off)
        return NBCX_ERR_NOMEM;
    const void *own = nbcxi_at(a->sbuf, off[me], 1, t);

    if (p == 1 || off[p] == 0) {
        if (!in_place && n > 0)
            nbcxi_copy(s, own, n, t, a->rbuf, n, t);
        free(off);
        return s->build.err;
    }

    /* Sends, in pairwise order; in place they read rbuf, so the result
     * waits for the last of them (they are chained). */
    nbcx_node last_send = -1;
    for (int k = 1; k < p; k++) {
        int to = mod((long)me + k, p);
        ptrdiff_t m = count_of(a, to);
        if (m == 0)
            continue;
        nbcx_node sn = nbcxi_send(s, nbcxi_at(a->sbuf, off[to], 1, t), m, t,
                                  to, 0);
        nbcxi_dep(s, last_send, sn);
        last_send = sn;
    }
    if (n == 0) {
        free(off);
        return s->build.err;
    }

    /* The contributions to the own block: buf[j], received by recv[j]. */
    void **buf = malloc(sizeof(void *) * (size_t)p);
    nbcx_node *ready = malloc(sizeof(nbcx_node) * (size_t)p);
    if (!buf || !ready) {
        free(buf);
        free(ready);
        free(off);
        return NBCX_ERR_NOMEM;
    }
    for (int k = 1; k < p; k++) {
        int j = mod((long)me - k, p);
        buf[j] = nbcxi_sched_tmp_typed(s, n, t);
        ready[j] = nbcxi_recv(s, buf[j], n, t, j, 0);
    }

    nbcx_node result; /* the node that leaves the result in rbuf */
    if (a->op->commutative) {
        void *acc = in_place ? nbcxi_sched_tmp_typed(s, n, t) : a->rbuf;
        nbcx_node prev = nbcxi_copy(s, own, n, t, acc, n, t);
        for (int k = 1; k < p; k++) {
            int j = mod((long)me - k, p);
            nbcx_node red = nbcxi_reduce_node(s, buf[j], acc, n, t, a->op);
            nbcxi_dep(s, ready[j], red);
            nbcxi_dep(s, prev, red);
            prev = red;
        }
        result = prev;
        if (in_place) {
            result = nbcxi_copy(s, acc, n, t, a->rbuf, n, t);
            nbcxi_dep(s, prev, result);
        }
    } else {
        buf[me] = nbcxi_sched_tmp_typed(s, n, t);
        ready[me] = nbcxi_copy(s, own, n, t, buf[me], n, t);
        nbcx_node prev = ready[0];
        for (int j = 1; j < p; j++) {
            nbcx_node red = nbcxi_reduce_node(s, buf[j - 1], buf[j], n, t,
                                              a->op);
            nbcxi_dep(s, prev, red);
            nbcxi_dep(s, ready[j], red);
            prev = red;
        }
        result = nbcxi_copy(s, buf[p - 1], n, t, a->rbuf, n, t);
        nbcxi_dep(s, prev, result);
        if (in_place) /* the copy of the own block read rbuf */
            nbcxi_dep(s, ready[me], result);
    }
    if (in_place)
        nbcxi_dep(s, last_send, result);
    free(buf);
    free(ready);
    free(off);
    return s->build.err;
}

/* ------------------------------------------------------------------ */
/* Binomial reduce to rank 0, then a linear scatter                    */
/* ------------------------------------------------------------------ */

int nbcxi_build_reduce_scatter_reduce_scatterv(struct nbcx_sched_s *s,
                                              const struct nbcxi_coll_args *a)
{
    const int p = s->build.size, me = s->build.rank;
    struct nbcx_datatype_s *t = a->rtype;
    const bool in_place = a->sbuf == a->rbuf;
    ptrdiff_t *off = block_offsets(s, a);
    if (!off)
        return NBCX_ERR_NOMEM;
    const ptrdiff_t total = off[p];
    if (total == 0 || p == 1) {
        free(off);
        return nbcxi_build_reduce_scatter_pairwise(s, a);
    }
    if (total > INT_MAX) {
        /* the binomial reduction takes the whole vector as one int count
         * (reduce.c): the other algorithms serve such vectors */
        free(off);
        return NBCX_ERR_COUNT;
    }

    /* The reduction: every rank's vector (sbuf, or rbuf in place) to a
     * scratch vector at rank 0. */
    struct nbcxi_coll_args r = *a;
    r.root = 0;
    r.rcount = (int)total;
    r.rv = (struct nbcxi_vside){ 0 };
    r.rbuf = me == 0 ? nbcxi_sched_tmp_typed(s, total, t) : NULL;
    if (s->build.err) {
        free(off);
        return s->build.err;
    }
    nbcxi_build_reduce_binomial(s, &r);
    const int mid = s->build.nnodes;
    /* Sinks of the reduction part: nodes with no successor. */
    bool *has_succ = calloc((size_t)(mid > 0 ? mid : 1), sizeof(bool));
    if (!has_succ) {
        free(off);
        return NBCX_ERR_NOMEM;
    }
    for (int e = 0; e < s->build.nedges; e++)
        has_succ[s->build.edges[e].from] = true;

    /* scatter nodes that wait for the sinks */
    nbcx_node first = s->build.nnodes;
    if (me == 0) {
        for (int j = 1; j < p; j++)
            if (count_of(a, j) > 0)
                nbcxi_send(s, nbcxi_at(r.rbuf, off[j], 1, t), count_of(a, j),
                           t, j, TAG_SCATTER);
        if (count_of(a, 0) > 0)
            nbcxi_copy(s, r.rbuf, count_of(a, 0), t, a->rbuf, count_of(a, 0),
                       t);
    } else if (count_of(a, me) > 0) {
        nbcx_node rv = nbcxi_recv(s, a->rbuf, count_of(a, me), t, 0,
                                  TAG_SCATTER);
        if (!in_place && rv >= 0) /* posted at start: nothing waits */
            first = rv + NBCXI_MAX(s->build.nodes[rv].span, 1); /* chunks */
    }
    for (nbcx_node b = first; b < s->build.nnodes && !s->build.err; b++)
        for (nbcx_node n = 0; n < mid; n++)
            if (!has_succ[n])
                nbcxi_dep(s, n, b);
    free(has_succ);
    free(off);
    return s->build.err;
}

/* ------------------------------------------------------------------ */
/* Recursive halving                                                   */
/* ------------------------------------------------------------------ */

/* recursive_halving (commutative operations; as MPICH names it,
 * src/mpi/coll/reduce_scatter/reduce_scatter_intra_recursive_halving.c;
 * not read for this): log2(pof2) rounds instead of p - 1. The non-power-of-two
 * fold first: even ranks below 2 rem send their whole vector to the odd
 * neighbour, which reduces it into a scratch copy, takes part for both,
 * and at the end sends the even rank its block. The participants
 * nr (r / 2 below 2 rem, else r - rem) own "virtual blocks": nr's is the
 * blocks of its real ranks (2 nr and 2 nr + 1, or nr + rem), contiguous
 * in the vector. In round k (distance d = pof2 / 2^(k+1)) a participant
 * keeps the half of its range of virtual blocks on its side of nr ^ d,
 * sends the other half of its running partial result to nr ^ d, and
 * receives nr ^ d's partial result of the half it keeps into a round
 * buffer of its own (posted at start), where it reduces its own partial
 * result into it: that buffer holds the running result from then on
 * (no copy). The final block is copied to rbuf. About L alpha + n beta
 * (p - 1) / p with L = log2(pof2) (+ the fold), against pairwise's
 * (p - 1)(alpha + n beta / p).
 * Dependencies: a send waits for the node that produced the partial
 * result it reads; a reduction for its receive and the previous one. In
 * place the vector is in rbuf: the final copy waits for every node that
 * read it (the first round's send and reduction, the fold's). Tags:
 * round k uses k, the fold TAG_RH_FOLD and TAG_RH_UNFOLD. */
enum { TAG_RH_FOLD = 64, TAG_RH_UNFOLD = 65 };

/* First real rank of virtual block v (v = pof2: p). */
static int rh_first(int v, int rem)
{
    return v < rem ? 2 * v : v + rem;
}

int nbcxi_build_reduce_scatter_recursive_halving(
    struct nbcx_sched_s *s, const struct nbcxi_coll_args *a)
{
    const int p = s->build.size, me = s->build.rank;
    struct nbcx_datatype_s *t = a->rtype;
    const bool in_place = a->sbuf == a->rbuf;
    if (!a->op->commutative)
        return NBCX_ERR_INTERN; /* select.c never picks it then */
    const ptrdiff_t n = count_of(a, me);
    ptrdiff_t *off = block_offsets(s, a);
    if (!off)
        return NBCX_ERR_NOMEM;
    if (p == 1 || off[p] == 0) {
        if (!in_place && n > 0)
            nbcxi_copy(s, nbcxi_at(a->sbuf, off[me], 1, t), n, t, a->rbuf, n,
                       t);
        free(off);
        return s->build.err;
    }
    const ptrdiff_t total = off[p];
    int rounds;
    const int pof2 = nbcxi_pof2_floor(p, &rounds);
    const int rem = p - pof2;

    /* readers of the input vector (in place: rbuf) */
    nbcx_node readers[3] = { -1, -1, -1 };
    struct { char *base; ptrdiff_t first; nbcx_node ready; } acc = {
        (char *)(uintptr_t)a->sbuf, 0, -1 };
    int nr;
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            nbcx_node sn = nbcxi_send(s, a->sbuf, total, t, me + 1,
                                      TAG_RH_FOLD);
            if (n > 0) {
                nbcx_node rv = nbcxi_recv(s, a->rbuf, n, t, me + 1,
                                          TAG_RH_UNFOLD);
                if (in_place)
                    nbcxi_dep(s, sn, rv);
            }
            free(off);
            return s->build.err;
        }
        char *fold = nbcxi_sched_tmp_typed(s, total, t);
        if (!fold) {
            free(off);
            return s->build.err;
        }
        nbcx_node rv = nbcxi_recv(s, fold, total, t, me - 1, TAG_RH_FOLD);
        nbcx_node red = nbcxi_reduce_node(s, a->sbuf, fold, total, t, a->op);
        nbcxi_dep(s, rv, red);
        readers[0] = red;
        acc.base = fold;
        acc.ready = red;
        nr = me / 2;
    } else {
        nr = me - rem;
    }
#define RH_OFF(v) off[rh_first((v), rem)]

    /* Round buffers: one scratch, each round its own part. */
    ptrdiff_t need = 0;
    for (int k = 0, lo = 0, hi = pof2; k < rounds; k++) {
        int d = pof2 >> (k + 1), mid = lo + d;
        if (nr & d)
            lo = mid;
        else
            hi = mid;
        need += RH_OFF(hi) - RH_OFF(lo);
    }
    char *tmp = nbcxi_sched_tmp_typed(s, NBCXI_MAX(need, (ptrdiff_t)1), t);
    if (!tmp) {
        free(off);
        return s->build.err;
    }
    ptrdiff_t toff = 0;
    int lo = 0, hi = pof2;
    for (int k = 0; k < rounds; k++) {
        int d = pof2 >> (k + 1), mid = lo + d;
        int q = nr ^ d, peer = q < rem ? 2 * q + 1 : q + rem;
        bool low = !(nr & d);
        int klo = low ? lo : mid, khi = low ? mid : hi;
        int slo = low ? mid : lo, shi = low ? hi : mid;
        ptrdiff_t es = RH_OFF(slo), ns = RH_OFF(shi) - es;
        ptrdiff_t ek = RH_OFF(klo), nk = RH_OFF(khi) - ek;
        const bool reads_input = acc.base == (const char *)a->sbuf;
        if (ns > 0) {
            nbcx_node sn = nbcxi_send(s, nbcxi_at(acc.base, es - acc.first, 1,
                                                  t),
                                      ns, t, peer, k);
            nbcxi_dep(s, acc.ready, sn);
            if (reads_input)
                readers[1] = sn;
        }
        if (nk > 0) {
            char *buf = nbcxi_at(tmp, toff, 1, t);
            toff += nk;
            nbcx_node rv = nbcxi_recv(s, buf, nk, t, peer, k);
            nbcx_node red = nbcxi_reduce_node(
                s, nbcxi_at(acc.base, ek - acc.first, 1, t), buf, nk, t, a->op);
            nbcxi_dep(s, rv, red);
            nbcxi_dep(s, acc.ready, red);
            if (reads_input)
                readers[2] = red;
            acc.base = buf;
            acc.first = ek;
            acc.ready = red;
        }
        lo = klo;
        hi = khi;
    }

    /* The own block to rbuf; the even neighbour's to it. */
    if (n > 0) {
        nbcx_node cp = nbcxi_copy(s, nbcxi_at(acc.base, off[me] - acc.first,
                                              1, t),
                                  n, t, a->rbuf, n, t);
        nbcxi_dep(s, acc.ready, cp);
        if (in_place)
            for (int i = 0; i < 3; i++)
                nbcxi_dep(s, readers[i], cp);
    }
    if (me < 2 * rem && count_of(a, me - 1) > 0) {
        nbcx_node sn = nbcxi_send(s, nbcxi_at(acc.base, off[me - 1] -
                                                            acc.first,
                                              1, t),
                                  count_of(a, me - 1), t, me - 1,
                                  TAG_RH_UNFOLD);
        nbcxi_dep(s, acc.ready, sn);
    }
#undef RH_OFF
    free(off);
    return s->build.err;
}
