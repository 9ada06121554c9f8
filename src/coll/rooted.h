/*
 * rooted.h - the binomial, k-nomial and linear builders of gather
 * (gather.c) and
 * scatter (scatter.c), written once: the two are mirrors, the same tree
 * with the data flowing up to the root (gather, `up` true) or down from
 * it (scatter). gather.c and scatter.c describe the algorithms.
 *
 * The root holds size blocks (`all`: rbuf of a gather, sbuf of a
 * scatter), every rank one block of its own (`one`: sbuf of a gather,
 * rbuf of a scatter). Of two nodes on the data's path, the one nearer
 * the root is "above": a rank's message to its parent is above its own
 * block and its messages with its children; at the root, the copy of a
 * child's blocks into `all` is above the message with that child. When
 * gathering, what is below comes first (nbcxi_dep(below, above)); when
 * scattering, what is above.
 */
#ifndef NBCX_COLL_ROOTED_H
#define NBCX_COLL_ROOTED_H

#include <limits.h>

#include "coll.h"
#include "tree.h"

/* The root's size blocks and a rank's own block. */
static inline struct nbcxi_block nbcxi_rooted_all(
    const struct nbcxi_coll_args *a, bool up)
{
    return up ? (struct nbcxi_block){ a->rbuf, a->rcount, a->rtype }
              : (struct nbcxi_block){ (void *)(uintptr_t)a->sbuf, a->scount,
                                      a->stype };
}

static inline struct nbcxi_block nbcxi_rooted_one(
    const struct nbcxi_coll_args *a, bool up)
{
    return up ? (struct nbcxi_block){ (void *)(uintptr_t)a->sbuf, a->scount,
                                      a->stype }
              : (struct nbcxi_block){ a->rbuf, a->rcount, a->rtype };
}

/* Bytes of one rank's block, the same on every rank. */
static inline size_t nbcxi_rooted_block_bytes(const struct nbcx_sched_s *s,
                                              const struct nbcxi_coll_args *a,
                                              bool up)
{
    return nbcxi_block_bytes(s->build.rank == a->root ? nbcxi_rooted_all(a, up)
                                                : nbcxi_rooted_one(a, up));
}

/* Bytes of n blocks of nb bytes as a count (64-bit: more than INT_MAX
 * is cut into chunks, sched.h). */
static inline ptrdiff_t nbcxi_rooted_bytes(int n, size_t nb)
{
    return (ptrdiff_t)((size_t)n * nb);
}

/* n blocks of nb bytes at buf, as bytes. */
static inline struct nbcxi_block nbcxi_rooted_packed(char *buf, int n,
                                                     size_t nb)
{
    return (struct nbcxi_block){ buf, nbcxi_rooted_bytes(n, nb),
                                 nbcxi_type(NBCX_BYTE) };
}

/* A copy in the direction of the data: below to above when gathering. */
static inline nbcx_node nbcxi_rooted_copy(struct nbcx_sched_s *s, bool up,
                                          struct nbcxi_block below,
                                          struct nbcxi_block above)
{
    struct nbcxi_block from = up ? below : above, to = up ? above : below;
    return nbcxi_copy(s, from.buf, from.count, from.type, to.buf, to.count,
                      to.type);
}

/* An edge in the direction of the data. */
static inline void nbcxi_rooted_dep(struct nbcx_sched_s *s, bool up,
                                    nbcx_node below, nbcx_node above)
{
    if (up)
        nbcxi_dep(s, below, above);
    else
        nbcxi_dep(s, above, below);
}

/* A message of b with peer: a send if `send`, else a receive. */
static inline nbcx_node nbcxi_rooted_msg(struct nbcx_sched_s *s, bool send,
                                         struct nbcxi_block b, int peer)
{
    return send ? nbcxi_send(s, b.buf, b.count, b.type, peer, 0)
                : nbcxi_recv(s, b.buf, b.count, b.type, peer, 0);
}

/* The root's own block: between `one` and its block of `all`, unless in
 * place. */
static inline void nbcxi_rooted_own(struct nbcx_sched_s *s,
                                    const struct nbcxi_coll_args *a, bool up)
{
    struct nbcxi_block all = nbcxi_rooted_all(a, up);
    struct nbcxi_block one = nbcxi_rooted_one(a, up);
    struct nbcxi_block own = { nbcxi_at(all.buf, a->root, all.count,
                                        all.type), all.count, all.type };
    if (one.buf != own.buf)
        nbcxi_rooted_copy(s, up, one, own);
}

static inline int nbcxi_rooted_linear(struct nbcx_sched_s *s,
                                      const struct nbcxi_coll_args *a,
                                      bool up)
{
    if (nbcxi_rooted_block_bytes(s, a, up) == 0)
        return s->build.err;
    if (s->build.rank != a->root) {
        nbcxi_rooted_msg(s, up, nbcxi_rooted_one(a, up), a->root);
        return s->build.err;
    }
    struct nbcxi_block all = nbcxi_rooted_all(a, up);
    for (int r = 0; r < s->build.size; r++)
        if (r != a->root)
            nbcxi_rooted_msg(s, !up,
                             (struct nbcxi_block){ nbcxi_at(all.buf, r,
                                                            all.count,
                                                            all.type),
                                                   all.count, all.type },
                             r);
    nbcxi_rooted_own(s, a, up);
    return s->build.err;
}

/* At the root: the message with child c of the n packed blocks of
 * relative ranks [c, c + n), and their copies between the packed bytes
 * and `all` (at most two ranges: they may wrap past size - 1). With a
 * contiguous type and no wrap the message uses `all` directly. Returns
 * the message. */
static inline nbcx_node nbcxi_rooted_range(struct nbcx_sched_s *s,
                                           const struct nbcxi_coll_args *a,
                                           bool up, size_t nb, int c, int n)
{
    struct nbcxi_block all = nbcxi_rooted_all(a, up);
    int size = s->build.size;
    int child = nbcxi_abs_rank(c, a->root, size);
    int n1 = NBCXI_MIN(n, size - child); /* blocks before the wrap */
    char *direct = nbcxi_contig_bytes(all.buf, all.type);
    if (direct && n1 == n)
        return nbcxi_rooted_msg(
            s, !up, nbcxi_rooted_packed(direct + (size_t)child * nb, n, nb),
            child);
    char *tmp = nbcxi_sched_tmp(s, (size_t)n * nb);
    nbcx_node msg = nbcxi_rooted_msg(s, !up, nbcxi_rooted_packed(tmp, n, nb),
                                     child);
    struct nbcxi_block head = { nbcxi_at(all.buf, child, all.count,
                                         all.type),
                                n1 * all.count, all.type };
    nbcx_node c1 = nbcxi_rooted_copy(s, up, nbcxi_rooted_packed(tmp, n1, nb),
                                     head);
    nbcxi_rooted_dep(s, up, msg, c1);
    if (n1 < n) { /* the rest wrapped around to rank 0 */
        struct nbcxi_block rest = { all.buf, (n - n1) * all.count,
                                    all.type };
        nbcx_node c2 = nbcxi_rooted_copy(
            s, up, nbcxi_rooted_packed(tmp + (size_t)n1 * nb, n - n1, nb),
            rest);
        nbcxi_rooted_dep(s, up, msg, c2);
    }
    return msg;
}

/* The k-nomial tree of radix k (tree.h; k = 2: the binomial tree). */
static inline int nbcxi_rooted_tree(struct nbcx_sched_s *s,
                                    const struct nbcxi_coll_args *a, bool up,
                                    int k)
{
    enum nbcxi_tree_dir dir = up ? NBCXI_TREE_UP : NBCXI_TREE_DOWN;
    int size = s->build.size;
    size_t nb = nbcxi_rooted_block_bytes(s, a, up);
    if (nb == 0)
        return s->build.err;
    /* (packed subtrees of more than INT_MAX bytes are cut, sched.h) */

    nbcxi_sched_tree(s, nbcxi_knomial_height(size, k));
    int vr = nbcxi_rel_rank(s->build.rank, a->root, size);
    long top = nbcxi_knomial_top_mask(vr, size, k);
    if (vr == 0) { /* children with the largest subtrees first */
        for (long m = top; m > 0; m /= k)
            for (int d = 1; d < k && d * m < size; d++) {
                int c = (int)(d * m);
                nbcxi_level(s,
                            nbcxi_rooted_range(s, a, up, nb, c,
                                               nbcxi_knomial_subtree(c, size,
                                                                     k)),
                            nbcxi_knomial_level(m, k), dir);
            }
        nbcxi_rooted_own(s, a, up);
        return s->build.err;
    }

    struct nbcxi_block one = nbcxi_rooted_one(a, up);
    int parent = nbcxi_abs_rank(nbcxi_knomial_parent(vr, k), a->root, size);
    int sub = nbcxi_knomial_subtree(vr, size, k);
    char *direct = nbcxi_contig_bytes(one.buf, one.type);
    int parent_level = nbcxi_knomial_level(nbcxi_knomial_low(vr, k), k);
    if (sub == 1 && direct) { /* a leaf with a contiguous type */
        nbcxi_level(s,
                    nbcxi_rooted_msg(s, up,
                                     (struct nbcxi_block){
                                         direct, (ptrdiff_t)nb,
                                         nbcxi_type(NBCX_BYTE) },
                                     parent),
                    parent_level, dir);
        return s->build.err;
    }

    /* The own block is the first of the subtree's packed blocks: packed
     * before the message to the parent when gathering, unpacked after it
     * (and after the children's messages) when scattering; nbcxi_dep
     * ignores the -1 of "no node". Child c's blocks are at c - vr. */
    char *tmp = nbcxi_sched_tmp(s, (size_t)sub * nb);
    struct nbcxi_block own = { tmp, (ptrdiff_t)nb, nbcxi_type(NBCX_BYTE) };
    nbcx_node pack = up ? nbcxi_rooted_copy(s, up, one, own) : -1;
    nbcx_node to_parent = nbcxi_rooted_msg(
        s, up, nbcxi_rooted_packed(tmp, sub, nb), parent);
    nbcxi_rooted_dep(s, up, pack, to_parent);
    nbcxi_level(s, to_parent, parent_level, dir);
    for (long m = top; m > 0; m /= k)
        for (int d = 1; d < k && vr + d * m < size; d++) {
            int c = (int)(vr + d * m);
            int n = nbcxi_knomial_subtree(c, size, k);
            nbcx_node child = nbcxi_rooted_msg(
                s, !up,
                nbcxi_rooted_packed(tmp + (size_t)(c - vr) * nb, n, nb),
                nbcxi_abs_rank(c, a->root, size));
            nbcxi_rooted_dep(s, up, child, to_parent);
            nbcxi_level(s, child, nbcxi_knomial_level(m, k), dir);
        }
    if (!up)
        nbcxi_rooted_dep(s, up, nbcxi_rooted_copy(s, up, one, own),
                         to_parent);
    return s->build.err;
}

static inline int nbcxi_rooted_binomial(struct nbcx_sched_s *s,
                                        const struct nbcxi_coll_args *a,
                                        bool up)
{
    return nbcxi_rooted_tree(s, a, up, 2);
}

#endif /* NBCX_COLL_ROOTED_H */
