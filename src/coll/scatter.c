/*
 * scatter.c - scatter builders.
 *
 * binomial: the mirror of the binomial gather (gather.c). The root packs,
 *   for each child c, the blocks of c's subtree (relative ranks
 *   [c, c + n), at most two absolute ranges since they may wrap past
 *   size - 1) into byte scratch and sends them to c, largest subtree
 *   first; each send depends only on its own packing. With a contiguous
 *   stype and no wrap it sends straight from sbuf. A non-root rank
 *   receives its subtree's blocks into one byte scratch buffer (posted at
 *   start), then sends each child its part, largest subtree first, and
 *   unpacks its own block (the first one) into rbuf with rtype:
 *
 *       recv(parent) --+--> send(v + largest m)
 *                      +--> send(v + next m) ...
 *                      +--> unpack(own block)
 *
 *   A leaf with a contiguous rtype receives straight into rbuf.
 *   Blocks travel as bytes because a rank forwards blocks of other ranks,
 *   whose datatypes it does not know (only the type signatures match).
 *   For split-tree progress (sched/sched.h) the messages between v and v + m
 *   are on tree level log2(m) + 1, data flowing down; packing and
 *   unpacking belong to no level.
 *
 * knomial: the same with the k-nomial tree of radix k = 2..8 (tree.h,
 *   a->radix; "knomial" is radix 4): the subtree of every rank is still a
 *   contiguous range of relative ranks, child c's blocks at c - v in the
 *   scratch; up to k - 1 children per level, ceil(log_k p) levels.
 *
 * linear: the root sends each rank its block of sbuf (with stype); every
 *   other rank receives into rbuf (with rtype).
 *
 * At the root rbuf may be its own block of sbuf (in place): no copy then.
 * Every rank's block has the same number of bytes (scount * stype size at
 * the root, rcount * rtype size elsewhere); when it is 0 the schedule is
 * empty.
 */
#include "rooted.h" /* the builders, shared with gather.c */

int nbcxi_build_scatter_binomial(struct nbcx_sched_s *s,
                                 const struct nbcxi_coll_args *a)
{
    return nbcxi_rooted_binomial(s, a, false);
}

int nbcxi_build_scatter_linear(struct nbcx_sched_s *s,
                               const struct nbcxi_coll_args *a)
{
    return nbcxi_rooted_linear(s, a, false);
}

int nbcxi_build_scatter_knomial(struct nbcx_sched_s *s,
                                const struct nbcxi_coll_args *a)
{
    return nbcxi_rooted_tree(s, a, false, nbcxi_knomial_k(a->radix));
}
