/*
 * reduce.c - reduction-to-root builders.
 *
 * binomial: the binomial tree of tree.h. The subtree of every rank v is a
 *   contiguous range of tree ranks, and v's children, taken in increasing
 *   mask order (v+1, v+2, v+4, ...), cover the consecutive ranges right
 *   after v. Combining
 *
 *       acc = x(v);  acc = acc op x(v+1);  acc = acc op x(v+2);  ...
 *
 *   (x(c) the partial result of c's subtree) therefore keeps the operands
 *   in rank order: the tree root ends with v0 op v1 op ... op v(p-1),
 *   exactly MPI's result even for non-commutative operations. For those
 *   the tree is on absolute ranks, rooted at rank 0, and rank 0 sends the
 *   result to the real root; commutative operations use ranks relative
 *   to the root and need no extra hop.
 *   Every child's partial result is received into its own buffer, so all
 *   receives are posted at start. Step j folds the accumulator into child
 *   j's buffer (inout = in op inout, "in" = the accumulator = the lower
 *   ranks) and that buffer becomes the accumulator; no data is copied:
 *
 *       recv(v+1)   recv(v+2)   recv(v+4)
 *           |           |           |
 *        red(v+1) -> red(v+2) -> red(v+4) -> send(parent)
 *
 *   For split-tree progress (sched/sched.h) the receive and the reduction of
 *   child v + m are on tree level log2(m) + 1 and the send to the parent
 *   on the level of v's lowest set bit, data flowing up; the result hop
 *   to a non-zero root and the final copy belong to no level.
 *   The root receives its last child straight into rbuf, so the result
 *   lands there. In place (sbuf == rbuf at the root) the root instead
 *   accumulates in rbuf for a commutative operation, and copies the final
 *   accumulator into rbuf for a non-commutative one.
 *
 * knomial: the same with the k-nomial tree of radix k = 2..8 (tree.h,
 *   a->radix; "knomial" is radix 4): the children of v, taken in
 *   increasing (mask, digit) order, still cover the consecutive ranges
 *   right after v, so the fold keeps the rank order (any operation).
 *   Up to (k - 1) receives per level, all posted at start; ceil(log_k p)
 *   levels.
 *
 * chain: a pipeline for commutative operations through the relative ranks
 *   size-1 -> size-2 -> ... -> 0 (the root), in fragments of segsize
 *   bytes (whole elements). The last rank sends its own fragments; every
 *   other rank receives fragment k into its own scratch (no predecessor:
 *   posted at start), folds its own fragment into it and sends it on
 *   after that reduction and after the send of fragment k-1, so fragments
 *   leave in order (tags wrap every NBCX_SCHED_TAG_MAX + 1 fragments):
 *
 *       recv_0    recv_1    recv_2    ...
 *         |         |         |
 *       red_0     red_1     red_2     ...
 *         |         |         |
 *       send_0 -> send_1 -> send_2 -> ...
 *
 *   The root receives straight into rbuf. A rank's own fragment is the
 *   "in" operand and the fragment from higher ranks the "inout", so with
 *   root 0 the order is MPI's even for non-commutative operations; for
 *   other roots such operations are handed to the binomial tree.
 *
 * rabenseifner (reduce-scatter by recursive halving + binomial gather to
 *   the root, any operation) is built in allreduce.c, whose Rabenseifner
 *   allreduce shares its reduce-scatter.
 *
 * Non-root ranks never touch rbuf (it may be NULL there), and sbuf is
 * only ever read.
 */
#include "coll.h"
#include "tree.h"

/* The whole reduction on a single rank: sbuf to rbuf unless in place. */
static int reduce_self(struct nbcx_sched_s *s,
                       const struct nbcxi_coll_args *a)
{
    if (a->sbuf != a->rbuf)
        nbcxi_copy(s, a->sbuf, a->rcount, a->rtype, a->rbuf, a->rcount,
                   a->rtype);
    return s->build.err;
}

/* ------------------------------------------------------------------ */
/* Binomial tree                                                       */
/* ------------------------------------------------------------------ */

/* Tags: the partial results travel up the tree with TAG_TREE; the result
 * hop from rank 0 to a non-zero root (non-commutative ops) uses
 * TAG_RESULT. */
enum { TAG_TREE = 0, TAG_RESULT = 1 };

/* The k-nomial tree of radix k (tree.h; k = 2: the binomial tree). */
static int reduce_tree(struct nbcx_sched_s *s, const struct nbcxi_coll_args *a,
                       int k)
{
    int size = s->build.size, count = a->rcount;
    struct nbcx_datatype_s *t = a->rtype;
    struct nbcx_op_s *op = a->op;
    if (count == 0 || t->size == 0)
        return s->build.err;
    if (size == 1)
        return reduce_self(s, a);

    bool at_root = s->build.rank == a->root;
    bool in_place = at_root && a->sbuf == a->rbuf;
    /* The tree's root computes the result: the real root, or rank 0 for
     * a non-commutative operation. */
    int troot = op->commutative ? a->root : 0;
    int vr = nbcxi_rel_rank(s->build.rank, troot, size);
    bool result_here = vr == 0 && at_root; /* the tree ends in rbuf */
    /* Commutative in place: fold every child into rbuf directly. */
    bool fold_into_rbuf = in_place && op->commutative;

    nbcxi_sched_tree(s, nbcxi_knomial_height(size, k));
    const void *acc = a->sbuf; /* the reduction of the ranks so far */
    nbcx_node last = -1;       /* the reduction that produced acc   */
    /* Children in rank order (masks up, digits up); the last one is
     * received into rbuf when the result ends there. */
    long top = nbcxi_knomial_top_mask(vr, size, k);
    int last_child = -1;
    for (long m = 1; top > 0 && m <= top; m *= k)
        for (int d = 1; d < k && vr + d * m < size; d++)
            last_child = (int)(vr + d * m);
    for (long m = 1; top > 0 && m <= top; m *= k) {
        for (int d = 1; d < k && vr + d * m < size; d++) {
            int c = (int)(vr + d * m);
            int child = nbcxi_abs_rank(c, troot, size);
            void *buf = result_here && c == last_child && !in_place
                            ? a->rbuf
                            : nbcxi_sched_tmp_typed(s, count, t);
            nbcx_node recv = nbcxi_recv(s, buf, count, t, child, TAG_TREE);
            nbcx_node red;
            if (fold_into_rbuf) {
                red = nbcxi_reduce_node(s, buf, a->rbuf, count, t, op);
            } else {
                red = nbcxi_reduce_node(s, acc, buf, count, t, op);
                acc = buf;
            }
            nbcxi_dep(s, recv, red);
            nbcxi_dep(s, last, red);
            int level = nbcxi_knomial_level(m, k);
            nbcxi_level(s, recv, level, NBCXI_TREE_UP);
            nbcxi_level(s, red, level, NBCXI_TREE_UP);
            last = red;
        }
    }

    if (vr > 0) {
        /* Pass the subtree's result up; at a non-zero root of a
         * non-commutative reduction, then take the result from rank 0
         * (after the send, which may read rbuf when in place). */
        int parent = nbcxi_abs_rank(nbcxi_knomial_parent(vr, k), troot,
                                    size);
        nbcx_node send = nbcxi_send(s, acc, count, t, parent, TAG_TREE);
        nbcxi_dep(s, last, send);
        nbcxi_level(s, send,
                    nbcxi_knomial_level(nbcxi_knomial_low(vr, k), k),
                    NBCXI_TREE_UP);
        if (at_root) {
            nbcx_node recv = nbcxi_recv(s, a->rbuf, count, t, 0, TAG_RESULT);
            if (in_place)
                nbcxi_dep(s, send, recv);
        }
    } else if (at_root) {
        if (acc != a->rbuf && !fold_into_rbuf) {
            /* Non-commutative in place: the result is in scratch. */
            nbcx_node copy = nbcxi_copy(s, acc, count, t, a->rbuf, count, t);
            nbcxi_dep(s, last, copy);
        }
    } else {
        /* Rank 0 of a non-commutative reduction with another root. */
        nbcx_node send = nbcxi_send(s, acc, count, t, a->root, TAG_RESULT);
        nbcxi_dep(s, last, send);
    }
    return s->build.err;
}

int nbcxi_build_reduce_binomial(struct nbcx_sched_s *s,
                               const struct nbcxi_coll_args *a)
{
    return reduce_tree(s, a, 2);
}

int nbcxi_build_reduce_knomial(struct nbcx_sched_s *s,
                              const struct nbcxi_coll_args *a)
{
    return reduce_tree(s, a, nbcxi_knomial_k(a->radix));
}

/* ------------------------------------------------------------------ */
/* Pipelined chain                                                     */
/* ------------------------------------------------------------------ */

int nbcxi_build_reduce_chain(struct nbcx_sched_s *s,
                            const struct nbcxi_coll_args *a)
{
    int size = s->build.size, count = a->rcount;
    struct nbcx_datatype_s *t = a->rtype;
    struct nbcx_op_s *op = a->op;
    if (!op->commutative && a->root != 0)
        return nbcxi_build_reduce_binomial(s, a);
    if (count == 0 || t->size == 0)
        return s->build.err;
    if (size == 1)
        return reduce_self(s, a);

    int vr = nbcxi_rel_rank(s->build.rank, a->root, size);
    int to = vr > 0 ? nbcxi_abs_rank(vr - 1, a->root, size) : -1;
    int from = vr < size - 1 ? nbcxi_abs_rank(vr + 1, a->root, size) : -1;
    bool in_place = vr == 0 && a->sbuf == a->rbuf;

    /* Fragments of whole elements (the type is the same on every rank),
     * at most NBCXI_MAX_FRAGS of them. */
    size_t per_seg = NBCXI_MAX(
        (size_t)1,
        nbcxi_chain_segsize(s, a, (size_t)count * t->size) / t->size);
    per_seg = NBCXI_MAX(per_seg, ((size_t)count + NBCXI_MAX_FRAGS - 1) /
                                     NBCXI_MAX_FRAGS);
    int per = (int)NBCXI_MIN(per_seg, (size_t)count);
    int nfrag = count / per + (count % per != 0);

    /* Where the fragments from higher ranks arrive. */
    void *in_base = NULL;
    if (from >= 0)
        in_base = vr == 0 && !in_place ? a->rbuf
                                       : nbcxi_sched_tmp_typed(s, count, t);

    nbcx_node prev_send = -1;
    for (int k = 0; k < nfrag; k++) {
        int n = NBCXI_MIN(per, count - k * per);
        int tag = k % (NBCX_SCHED_TAG_MAX + 1);
        const void *own = nbcxi_at(a->sbuf, k, per, t);
        const void *out = own; /* what goes to the next rank */
        nbcx_node ready = -1;  /* the node that produced out */

        if (from >= 0) {
            void *in = nbcxi_at(in_base, k, per, t);
            nbcx_node recv = nbcxi_recv(s, in, n, t, from, tag);
            if (in_place && op->commutative) { /* fold into rbuf */
                ready = nbcxi_reduce_node(s, in, nbcxi_at(a->rbuf, k, per, t),
                                          n, t, op);
                nbcxi_dep(s, recv, ready);
            } else {
                ready = nbcxi_reduce_node(s, own, in, n, t, op);
                nbcxi_dep(s, recv, ready);
                out = in;
                if (in_place) { /* non-commutative: result to rbuf */
                    nbcx_node copy = nbcxi_copy(s, in, n, t,
                                                nbcxi_at(a->rbuf, k, per, t),
                                                n, t);
                    nbcxi_dep(s, ready, copy);
                }
            }
        }
        if (to >= 0) {
            nbcx_node send = nbcxi_send(s, out, n, t, to, tag);
            nbcxi_dep(s, ready, send);
            nbcxi_dep(s, prev_send, send);
            prev_send = send;
        }
    }
    return s->build.err;
}
