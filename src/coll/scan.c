/*
 * scan.c - inclusive (scan) and exclusive (exscan) prefix reductions:
 * rank r gets x(0) op x(1) op ... op x(r) (scan) or the same up to
 * x(r - 1) (exscan; rank 0's rbuf is not touched, as MPI leaves it
 * undefined). Every algorithm keeps rank order, so any operation works.
 * With the reduce node's convention (inout = in op inout, "in" from lower
 * ranks) the lower ranks' prefix is always the "in" operand.
 *
 * linear: a chain 0 -> 1 -> ... -> p-1, pipelined in fragments of
 *   segsize bytes (whole elements; at most NBCX_SCHED_TAG_MAX + 1 of them,
 *   longer ones above that, so fragment k has tag k and tags never wrap).
 *   Per fragment, rank r > 0 receives the prefix P(r-1) of the ranks
 *   before it and computes P(r) = P(r-1) op x(r):
 *     scan      P(r-1) goes to scratch (posted at start), x(r) is copied
 *               into rbuf, P(r) is reduced in rbuf and forwarded from
 *               there to r + 1. For a commutative operation (not in
 *               place) P(r-1) is received straight into rbuf and x(r)
 *               reduced into it: no copy, no scratch.
 *     exscan    P(r-1) is received straight into rbuf (its result); the
 *               last rank stops there; the others copy x(r) into scratch,
 *               reduce P(r) there and forward it. In place x(r) is in
 *               rbuf, so the copy comes first and the receive waits for it.
 *   Rank 0 sends x(0) straight from sbuf (or rbuf, in place).
 *
 * recursive_doubling (MPICH's algorithm, any p): a running "partial"
 *   reduction of a range of ranks ending at r, first x(r). In round k
 *   (mask 2^k) rank r exchanges its partial with r ^ mask, if that rank
 *   exists. A partner below r sent the reduction of the ranks just
 *   before r's range: it is folded into the partial and into the result
 *   (the result is x(r) for scan and starts empty for exscan, where the
 *   first such contribution is copied). A partner above r extends the
 *   partial on the right: partial op received, computed in the receive
 *   buffer, which becomes the partial. The partial is not updated after
 *   the last round in which it is sent.
 *   Dependencies: every round receives into its own scratch, posted at
 *   start; the send of a round waits for the node that last wrote the
 *   partial; a node overwriting the partial waits for the send that
 *   reads it; reductions into rbuf form a chain. In place x(r) is in
 *   rbuf: the partial is copied from it before anything writes rbuf.
 *   Round k uses tag k.
 */
#include "coll.h"

enum { NTAGS = NBCX_SCHED_TAG_MAX + 1 };

/* ------------------------------------------------------------------ */
/* Linear chain                                                        */
/* ------------------------------------------------------------------ */

static int build_linear(struct nbcx_sched_s *s,
                        const struct nbcxi_coll_args *a, bool exclusive)
{
    const int p = s->build.size, r = s->build.rank, count = a->rcount;
    struct nbcx_datatype_s *t = a->rtype;
    const bool in_place = a->sbuf == a->rbuf;
    if (count == 0)
        return s->build.err;

    /* Fragments of `per` elements: at most NTAGS of them. */
    size_t per = NBCXI_MAX((size_t)1, a->segsize / t->size);
    if (((size_t)count + per - 1) / per > NTAGS)
        per = ((size_t)count + NTAGS - 1) / NTAGS;
    const int nfrag = (int)(((size_t)count + per - 1) / per);

    for (int k = 0; k < nfrag; k++) {
        const int off = (int)((size_t)k * per);
        const int n = (int)NBCXI_MIN(per, (size_t)(count - off));
        const void *x = nbcxi_at(a->sbuf, off, 1, t); /* own fragment */
        void *res = nbcxi_at(a->rbuf, off, 1, t);
        if (r == 0) {
            if (!exclusive && !in_place)
                nbcxi_copy(s, x, n, t, res, n, t);
            if (p > 1)
                nbcxi_send(s, x, n, t, 1, k);
            continue;
        }
        if (!exclusive && !in_place && a->op->commutative) {
            /* P(r-1) straight into rbuf and x(r) reduced into it: x(r) op
             * P(r-1) is P(r-1) op x(r) for a commutative operation, and
             * the copy of x(r) into rbuf (a pass over the vector before
             * the reduction can start, 1.1-1.2x native's time at 256 KiB-
             * 4 MiB on 2 Open MPI ranks) and the scratch are not needed. */
            nbcx_node rv = nbcxi_recv(s, res, n, t, r - 1, k);
            nbcx_node red = nbcxi_reduce_node(s, x, res, n, t, a->op);
            nbcxi_dep(s, rv, red);
            if (r < p - 1)
                nbcxi_dep(s, red, nbcxi_send(s, res, n, t, r + 1, k));
            continue;
        }
        if (!exclusive) {
            void *prev = nbcxi_sched_tmp_typed(s, n, t);
            nbcx_node rv = nbcxi_recv(s, prev, n, t, r - 1, k);
            nbcx_node cp = in_place ? -1 : nbcxi_copy(s, x, n, t, res, n, t);
            nbcx_node red = nbcxi_reduce_node(s, prev, res, n, t, a->op);
            nbcxi_dep(s, rv, red);
            nbcxi_dep(s, cp, red);
            if (r < p - 1)
                nbcxi_dep(s, red, nbcxi_send(s, res, n, t, r + 1, k));
            continue;
        }
        if (r == p - 1) { /* the last rank only receives its result */
            nbcxi_recv(s, res, n, t, r - 1, k);
            continue;
        }
        void *next = nbcxi_sched_tmp_typed(s, n, t);
        nbcx_node cp = nbcxi_copy(s, x, n, t, next, n, t);
        nbcx_node rv = nbcxi_recv(s, res, n, t, r - 1, k);
        if (in_place) /* x(r) is read out of rbuf first */
            nbcxi_dep(s, cp, rv);
        nbcx_node red = nbcxi_reduce_node(s, res, next, n, t, a->op);
        nbcxi_dep(s, rv, red);
        nbcxi_dep(s, cp, red);
        nbcxi_dep(s, red, nbcxi_send(s, next, n, t, r + 1, k));
    }
    return s->build.err;
}

int nbcxi_build_scan_linear(struct nbcx_sched_s *s,
                           const struct nbcxi_coll_args *a)
{
    return build_linear(s, a, false);
}

int nbcxi_build_exscan_linear(struct nbcx_sched_s *s,
                             const struct nbcxi_coll_args *a)
{
    return build_linear(s, a, true);
}

/* ------------------------------------------------------------------ */
/* Recursive doubling                                                  */
/* ------------------------------------------------------------------ */

static int build_rd(struct nbcx_sched_s *s, const struct nbcxi_coll_args *a,
                    bool exclusive)
{
    const int p = s->build.size, r = s->build.rank, count = a->rcount;
    struct nbcx_datatype_s *t = a->rtype;
    const bool in_place = a->sbuf == a->rbuf;
    if (count == 0)
        return s->build.err;
    if (p == 1) {
        if (!exclusive && !in_place)
            nbcxi_copy(s, a->sbuf, count, t, a->rbuf, count, t);
        return s->build.err;
    }

    /* The last round with a partner: the partial is not needed after. */
    int last = -1;
    for (int k = 0; (1L << k) < p; k++)
        if ((r ^ (1 << k)) < p)
            last = k;

    /* The partial starts as x(r): read from sbuf until a reduction has
     * to write it (own: it is this schedule's scratch); in place x(r) is
     * in rbuf, which the result overwrites, so it is copied at once. */
    void *partial = (void *)a->sbuf;
    nbcx_node pw = -1;
    bool own = false;
    if (in_place) {
        partial = nbcxi_sched_tmp_typed(s, count, t);
        pw = nbcxi_copy(s, a->rbuf, count, t, partial, count, t);
        own = true;
    }
    /* rw: the last node that wrote rbuf, or that read it and must come
     * before the next write (in place: the copy of x(r)). */
    nbcx_node rw = in_place ? pw : -1;
    bool have_result = !exclusive;
    if (!exclusive && !in_place)
        rw = nbcxi_copy(s, a->sbuf, count, t, a->rbuf, count, t);

    for (int k = 0; k <= last; k++) {
        int peer = r ^ (1 << k);
        if (peer >= p)
            continue;
        void *in = nbcxi_sched_tmp_typed(s, count, t);
        nbcx_node rv = nbcxi_recv(s, in, count, t, peer, k);
        nbcx_node sn = nbcxi_send(s, partial, count, t, peer, k);
        nbcxi_dep(s, pw, sn);
        if (peer < r) {
            /* in: the ranks just below this rank's range */
            nbcx_node w = have_result
                              ? nbcxi_reduce_node(s, in, a->rbuf, count, t,
                                                  a->op)
                              : nbcxi_copy(s, in, count, t, a->rbuf, count,
                                           t);
            nbcxi_dep(s, rv, w);
            nbcxi_dep(s, rw, w);
            rw = w;
            have_result = true;
            if (k < last) {
                bool copied = !own; /* (the send reads sbuf, not the copy) */
                if (copied) {
                    void *mine = nbcxi_sched_tmp_typed(s, count, t);
                    pw = nbcxi_copy(s, partial, count, t, mine, count, t);
                    partial = mine;
                    own = true;
                }
                nbcx_node red = nbcxi_reduce_node(s, in, partial, count, t,
                                                  a->op);
                nbcxi_dep(s, rv, red);
                nbcxi_dep(s, pw, red);
                if (!copied)
                    nbcxi_dep(s, sn, red); /* the send reads the partial */
                pw = red;
            }
        } else if (k < last) {
            /* in: the ranks just above: partial op in, computed in `in` */
            nbcx_node red = nbcxi_reduce_node(s, partial, in, count, t,
                                              a->op);
            nbcxi_dep(s, rv, red);
            nbcxi_dep(s, pw, red);
            partial = in;
            pw = red;
            own = true;
        }
    }
    return s->build.err;
}

int nbcxi_build_scan_recursive_doubling(struct nbcx_sched_s *s,
                                       const struct nbcxi_coll_args *a)
{
    return build_rd(s, a, false);
}

int nbcxi_build_exscan_recursive_doubling(struct nbcx_sched_s *s,
                                         const struct nbcxi_coll_args *a)
{
    return build_rd(s, a, true);
}
