/*
 * gather.c - gather builders.
 *
 * binomial: the binomial tree of tree.h on ranks relative to the root.
 *   The subtree of relative rank v is the contiguous range [v, v + sub),
 *   and child v + m owns [v + m, v + m + its sub). A non-root rank packs
 *   its own block at the start of one byte scratch buffer and receives
 *   each child's packed subtree right behind it, at offset m blocks; when
 *   all of that is there it sends the whole scratch (its subtree's blocks
 *   in relative-rank order) to its parent as bytes. Receives have no
 *   predecessor (disjoint regions), so all are posted at start:
 *
 *       pack(own)  recv(v+1)  recv(v+2)  recv(v+4)
 *            \         |          |         /
 *             +------ send(parent) --------+
 *
 *   The root copies its own block into rbuf and unpacks each child's
 *   range into rbuf, in absolute rank order with rtype, as soon as that
 *   child's data is in. Relative range [c, c + n) is at most two absolute
 *   ranges (it may wrap past size - 1). With a contiguous rtype and no
 *   wrap the root receives straight into rbuf; a leaf with a contiguous
 *   stype sends straight from sbuf.
 *   Blocks travel as bytes because a rank forwards blocks of other ranks,
 *   whose datatypes it does not know (only the type signatures match).
 *   For split-tree progress (sched/sched.h) the messages between v and v + m
 *   are on tree level log2(m) + 1, data flowing up; packing and
 *   unpacking belong to no level.
 *
 * knomial: the same with the k-nomial tree of radix k = 2..8 (tree.h,
 *   a->radix; "knomial" is radix 4): the subtree of every rank is still a
 *   contiguous range of relative ranks, child c's blocks at c - v in the
 *   scratch; up to k - 1 children per level, ceil(log_k p) levels.
 *
 * linear: the root posts one receive per rank straight into that rank's
 *   block of rbuf (with rtype); every other rank sends sbuf (with stype).
 *
 * At the root sbuf may be its own block of rbuf (in place): no copy then.
 * Every rank's block has the same number of bytes (scount * stype size
 * off the root, rcount * rtype size at the root); when it is 0 the
 * schedule is empty.
 */
#include "rooted.h" /* the builders, shared with scatter.c */

int nbcxi_build_gather_binomial(struct nbcx_sched_s *s,
                                const struct nbcxi_coll_args *a)
{
    return nbcxi_rooted_binomial(s, a, true);
}

int nbcxi_build_gather_linear(struct nbcx_sched_s *s,
                              const struct nbcxi_coll_args *a)
{
    return nbcxi_rooted_linear(s, a, true);
}

int nbcxi_build_gather_knomial(struct nbcx_sched_s *s,
                               const struct nbcxi_coll_args *a)
{
    return nbcxi_rooted_tree(s, a, true, nbcxi_knomial_k(a->radix));
}
