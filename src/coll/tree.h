/*
 * tree.h - rank and buffer arithmetic shared by the rooted builders.
 *
 * Relative ranks. A rooted collective renumbers the ranks so that the root
 * is 0: vr = (rank - root) mod size. Trees are built on relative ranks and
 * mapped back with nbcxi_abs_rank().
 *
 * Binomial tree on ranks 0..size-1, rooted at 0. The parent of vr > 0 is
 * vr with its lowest set bit cleared; the children of vr are vr + m for
 * every power of two m below the lowest set bit of vr (every m for vr 0)
 * with vr + m < size. The subtree of vr is the contiguous range
 *
 *     [vr, vr + nbcxi_binomial_subtree(vr, size))
 *
 * and the subtree of child vr + m is the range [vr + m, vr + 2m), clipped
 * at size: the children's subtrees tile the rest of vr's range in
 * increasing m. Example, size 6:  0 -> {1, 2, 4}, 2 -> {3}, 4 -> {5}.
 *
 * The helpers work on any int size (masks never overflow).
 *
 * Also here: the scratch of Bruck's algorithms (allgather.c, alltoall.c).
 */
#ifndef NBCX_COLL_TREE_H
#define NBCX_COLL_TREE_H

#include <limits.h>

#include "coll.h"

/* Relative rank of `rank` when `root` is renumbered 0. */
static inline int nbcxi_rel_rank(int rank, int root, int size)
{
    int d = rank - root;
    return d < 0 ? d + size : d;
}

/* Absolute rank of relative rank vr. */
static inline int nbcxi_abs_rank(int vr, int root, int size)
{
    int r = vr - (size - root);
    return r < 0 ? r + size : r;
}

/* Parent of vr > 0 in the binomial tree. */
static inline int nbcxi_binomial_parent(int vr)
{
    return vr & (vr - 1);
}

/* Number of ranks in the subtree of vr (vr itself included). */
static inline int nbcxi_binomial_subtree(int vr, int size)
{
    if (vr == 0)
        return size;
    int low = vr & -vr;
    return low < size - vr ? low : size - vr;
}

/* The masks m of vr's children are the powers of two below
 * nbcxi_binomial_subtree(vr, size). This gives the largest of them (the
 * child with the largest subtree), or 0 if vr is a leaf. Iterate with
 * m >>= 1 for largest-subtree-first order. */
static inline int nbcxi_binomial_top_mask(int vr, int size)
{
    int sub = nbcxi_binomial_subtree(vr, size);
    if (sub <= 1)
        return 0;
    int m = 1;
    while (m <= (sub - 1) / 2) /* the largest power of two < sub */
        m <<= 1;
    return m;
}

/* Split-tree level of the tree edge between vr and vr + m (m a power of
 * two below vr's lowest set bit): log2(m) + 1, so the edges to odd ranks
 * are level 1, the leaves. A rank's edge to its parent is on the level of
 * its own lowest set bit (vr & -vr), and the tree has the level of the
 * root's largest child mask: ceil(log2(size)) levels. */
static inline int nbcxi_edge_level(int m)
{
    int level = 1;
    while (m > 1) {
        m >>= 1;
        level++;
    }
    return level;
}

/* K-nomial tree of radix k (2 <= k <= 8; k = 2 is the binomial tree
 * above) on ranks 0..size-1, rooted at 0. Write vr in base k: its parent
 * is vr with its lowest non-zero digit cleared, and the children of vr
 * are vr + d m for every power m = k^j of k below vr's lowest non-zero
 * digit's (every m for vr 0) and d = 1 .. k-1, with vr + d m < size. The
 * subtree of vr is the contiguous range [vr, vr + sub), sub =
 * nbcxi_knomial_subtree(vr, size, k), and that of child c = vr + d m is
 * [c, c + m), clipped at size: in increasing (m, d) the children's
 * subtrees tile the rest of vr's range, so a reduction that folds them in
 * that order keeps the rank order. Example, size 10, k = 3:
 * 0 -> {1, 2, 3, 6, 9}, 3 -> {4, 5}, 6 -> {7, 8}.
 * The edge between vr and vr + d m is on split-tree level j + 1
 * (nbcxi_knomial_level(m, k)); the tree has nbcxi_knomial_height levels,
 * ceil(log_k(size)). Masks are long: no overflow for any int size. */

/* k^j for vr's lowest non-zero base-k digit j (vr > 0). */
static inline long nbcxi_knomial_low(int vr, int k)
{
    long m = 1;
    while ((vr / m) % k == 0)
        m *= k;
    return m;
}

static inline int nbcxi_knomial_parent(int vr, int k)
{
    long m = nbcxi_knomial_low(vr, k);
    return (int)(vr - ((vr / m) % k) * m);
}

static inline int nbcxi_knomial_subtree(int vr, int size, int k)
{
    if (vr == 0)
        return size;
    long low = nbcxi_knomial_low(vr, k);
    return low < (long)size - vr ? (int)low : size - vr;
}

/* The largest child mask of vr (the power of k of its largest
 * children), or 0 if vr is a leaf. */
static inline long nbcxi_knomial_top_mask(int vr, int size, int k)
{
    int sub = nbcxi_knomial_subtree(vr, size, k);
    if (sub <= 1)
        return 0;
    long m = 1;
    while (m * k < sub)
        m *= k;
    return m;
}

static inline int nbcxi_knomial_level(long m, int k)
{
    int level = 1;
    while (m > 1) {
        m /= k;
        level++;
    }
    return level;
}

static inline int nbcxi_knomial_height(int size, int k)
{
    return nbcxi_knomial_level(nbcxi_knomial_top_mask(0, size, k), k);
}

/* The radix a k-nomial builder uses: the call's (a->radix), else the
 * default, within [NBCXI_KNOMIAL_MIN, NBCXI_KNOMIAL_MAX]. */
static inline int nbcxi_knomial_k(int radix)
{
    if (radix == 0)
        return NBCXI_KNOMIAL_DEFAULT;
    return radix < NBCXI_KNOMIAL_MIN   ? NBCXI_KNOMIAL_MIN
           : radix > NBCXI_KNOMIAL_MAX ? NBCXI_KNOMIAL_MAX
                                       : radix;
}

/* Pipelines cut a buffer into at most this many fragments: a tiny segsize
 * on a huge buffer gets longer fragments rather than millions of nodes and
 * posted receives. */
#define NBCXI_MAX_FRAGS ((size_t)1 << 16)

/* The data of `type` in a buffer as plain bytes: the address of the first
 * byte if the type is contiguous (count elements are then count * size
 * bytes from there), or NULL if the data must be packed first. */
static inline char *nbcxi_contig_bytes(const void *buf,
                                       const struct nbcx_datatype_s *type)
{
    return type->contiguous ? (char *)(uintptr_t)buf + type->true_lb : NULL;
}

/* Bruck's algorithms (allgather.c, alltoall.c) move blocks of B bytes
 * through a byte scratch of s->build.size blocks, up to all of them in one
 * message (more than INT_MAX bytes are cut into chunks, sched.h). The
 * scratch, or NULL with the error in *err (no memory). */
static inline unsigned char *nbcxi_bruck_scratch(struct nbcx_sched_s *s,
                                                 size_t B, int *err)
{
    unsigned char *tmp = nbcxi_sched_tmp(s, (size_t)s->build.size * B);
    *err = tmp ? NBCX_SUCCESS : s->build.err;
    return tmp;
}

#endif /* NBCX_COLL_TREE_H */
