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
 * linear: the root sends each rank its block of sbuf (with stype); every
 *   other rank receives into rbuf (with rtype).
 *
 * At the root rbuf may be its own block of sbuf (in place): no copy then.
 * Every rank's block has the same number of bytes (scount * stype size at
 * the root, rcount * rtype size elsewhere); when it is 0 the schedule is
 * empty.
 */
#include <limits.h>

#include "coll.h"
#include "tree.h"

/* Bytes of one rank's block, the same on every rank. */
static size_t block_bytes(const struct nbcx_sched_s *s,
                          const struct nbcxi_coll_args *a)
{
    return s->rank == a->root ? (size_t)a->scount * a->stype->size
                              : (size_t)a->rcount * a->rtype->size;
}

/* The root's own block: its block of sbuf into rbuf, unless in place. */
static void scatter_own(struct nbcx_sched_s *s,
                        const struct nbcxi_coll_args *a)
{
    void *own = nbcxi_at(a->sbuf, a->root, a->scount, a->stype);
    if (a->rbuf != own)
        nbcxi_copy(s, own, a->scount, a->stype, a->rbuf, a->rcount,
                   a->rtype);
}

/* Bytes of n blocks of nb bytes as an int count (the binomial builders
 * check first that size blocks fit). */
static int bytes_of(int n, size_t nb)
{
    return (int)((size_t)n * nb);
}

/* ------------------------------------------------------------------ */
/* Binomial tree                                                       */
/* ------------------------------------------------------------------ */

/* At the root: send the n blocks of relative ranks [c, c + n) of sbuf to
 * child c, packed as bytes. Returns the send. */
static nbcx_node root_send_range(struct nbcx_sched_s *s,
                                 const struct nbcxi_coll_args *a, size_t nb,
                                 int c, int n)
{
    struct nbcx_datatype_s *byte = nbcxi_type(NBCX_BYTE);
    int size = s->size;
    int child = nbcxi_abs_rank(c, a->root, size);
    int n1 = NBCXI_MIN(n, size - child); /* blocks before the wrap */
    char *direct = nbcxi_contig_bytes(a->sbuf, a->stype);
    if (direct && n1 == n)
        return nbcxi_send(s, direct + (size_t)child * nb, bytes_of(n, nb),
                          byte, child, 0);
    char *tmp = nbcxi_sched_tmp(s, (size_t)n * nb);
    nbcx_node send = nbcxi_send(s, tmp, bytes_of(n, nb), byte, child, 0);
    nbcx_node p1 = nbcxi_copy(s, nbcxi_at(a->sbuf, child, a->scount, a->stype),
                              n1 * a->scount, a->stype, tmp, bytes_of(n1, nb),
                              byte);
    nbcxi_dep(s, p1, send);
    if (n1 < n) { /* the rest wrapped around to rank 0 */
        nbcx_node p2 = nbcxi_copy(s, a->sbuf, (n - n1) * a->scount, a->stype,
                                  tmp + (size_t)n1 * nb, bytes_of(n - n1, nb),
                                  byte);
        nbcxi_dep(s, p2, send);
    }
    return send;
}

int nbcxi_build_scatter_binomial(struct nbcx_sched_s *s,
                                const struct nbcxi_coll_args *a)
{
    int size = s->size;
    size_t nb = block_bytes(s, a);
    if (nb == 0)
        return s->err;
    /* Packed subtrees are sent with an int byte count. */
    if (nb > (size_t)INT_MAX / (size_t)size)
        return nbcxi_build_scatter_linear(s, a);

    nbcxi_sched_tree(s, nbcxi_edge_level(nbcxi_binomial_top_mask(0, size)));
    int vr = nbcxi_rel_rank(s->rank, a->root, size);
    int top = nbcxi_binomial_top_mask(vr, size);
    if (vr == 0) {
        for (int m = top; m > 0; m >>= 1)
            nbcxi_level(s,
                        root_send_range(s, a, nb, m,
                                        nbcxi_binomial_subtree(m, size)),
                        nbcxi_edge_level(m), NBCXI_TREE_DOWN);
        scatter_own(s, a);
        return s->err;
    }

    struct nbcx_datatype_s *byte = nbcxi_type(NBCX_BYTE);
    int parent = nbcxi_abs_rank(nbcxi_binomial_parent(vr), a->root, size);
    int sub = nbcxi_binomial_subtree(vr, size);
    char *direct = nbcxi_contig_bytes(a->rbuf, a->rtype);
    int down_level = nbcxi_edge_level(vr & -vr);
    if (sub == 1 && direct) { /* a leaf with a contiguous type */
        nbcxi_level(s, nbcxi_recv(s, direct, (int)nb, byte, parent, 0),
                    down_level, NBCXI_TREE_DOWN);
        return s->err;
    }

    char *tmp = nbcxi_sched_tmp(s, (size_t)sub * nb);
    nbcx_node recv = nbcxi_recv(s, tmp, bytes_of(sub, nb), byte, parent, 0);
    nbcxi_level(s, recv, down_level, NBCXI_TREE_DOWN);
    for (int m = top; m > 0; m >>= 1) {
        int n = nbcxi_binomial_subtree(vr + m, size);
        nbcx_node send = nbcxi_send(s, tmp + (size_t)m * nb, bytes_of(n, nb),
                                    byte,
                                    nbcxi_abs_rank(vr + m, a->root, size), 0);
        nbcxi_dep(s, recv, send);
        nbcxi_level(s, send, nbcxi_edge_level(m), NBCXI_TREE_DOWN);
    }
    nbcx_node unpack = nbcxi_copy(s, tmp, (int)nb, byte, a->rbuf, a->rcount,
                                  a->rtype);
    nbcxi_dep(s, recv, unpack);
    return s->err;
}

/* ------------------------------------------------------------------ */
/* Linear                                                              */
/* ------------------------------------------------------------------ */

int nbcxi_build_scatter_linear(struct nbcx_sched_s *s,
                              const struct nbcxi_coll_args *a)
{
    if (block_bytes(s, a) == 0)
        return s->err;
    if (s->rank != a->root) {
        nbcxi_recv(s, a->rbuf, a->rcount, a->rtype, a->root, 0);
        return s->err;
    }
    for (int r = 0; r < s->size; r++)
        if (r != a->root)
            nbcxi_send(s, nbcxi_at(a->sbuf, r, a->scount, a->stype),
                       a->scount, a->stype, r, 0);
    scatter_own(s, a);
    return s->err;
}
