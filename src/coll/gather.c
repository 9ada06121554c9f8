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
 * linear: the root posts one receive per rank straight into that rank's
 *   block of rbuf (with rtype); every other rank sends sbuf (with stype).
 *
 * At the root sbuf may be its own block of rbuf (in place): no copy then.
 * Every rank's block has the same number of bytes (scount * stype size
 * off the root, rcount * rtype size at the root); when it is 0 the
 * schedule is empty.
 */
#include <limits.h>

#include "coll.h"
#include "tree.h"

/* Bytes of one rank's block, the same on every rank. */
static size_t block_bytes(const struct nbcx_sched_s *s,
                          const struct nbcxi_coll_args *a)
{
    return s->rank == a->root ? (size_t)a->rcount * a->rtype->size
                              : (size_t)a->scount * a->stype->size;
}

/* The root's own block: sbuf into its block of rbuf, unless in place. */
static void gather_own(struct nbcx_sched_s *s,
                       const struct nbcxi_coll_args *a)
{
    void *own = nbcxi_at(a->rbuf, a->root, a->rcount, a->rtype);
    if (a->sbuf != own)
        nbcxi_copy(s, a->sbuf, a->scount, a->stype, own, a->rcount,
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

/* At the root: receive the n packed blocks of relative ranks [c, c + n)
 * from child c and place them in rbuf. Returns the receive. */
static nbcx_node root_recv_range(struct nbcx_sched_s *s,
                                 const struct nbcxi_coll_args *a, size_t nb,
                                 int c, int n)
{
    struct nbcx_datatype_s *byte = nbcxi_type(NBCX_BYTE);
    int size = s->size;
    int child = nbcxi_abs_rank(c, a->root, size);
    int n1 = NBCXI_MIN(n, size - child); /* blocks before the wrap */
    char *direct = nbcxi_contig_bytes(a->rbuf, a->rtype);
    if (direct && n1 == n)
        return nbcxi_recv(s, direct + (size_t)child * nb, bytes_of(n, nb),
                          byte, child, 0);
    char *tmp = nbcxi_sched_tmp(s, (size_t)n * nb);
    nbcx_node recv = nbcxi_recv(s, tmp, bytes_of(n, nb), byte, child, 0);
    nbcx_node c1 = nbcxi_copy(s, tmp, bytes_of(n1, nb), byte,
                              nbcxi_at(a->rbuf, child, a->rcount, a->rtype),
                              n1 * a->rcount, a->rtype);
    nbcxi_dep(s, recv, c1);
    if (n1 < n) { /* the rest wrapped around to rank 0 */
        nbcx_node c2 = nbcxi_copy(s, tmp + (size_t)n1 * nb,
                                  bytes_of(n - n1, nb), byte, a->rbuf,
                                  (n - n1) * a->rcount, a->rtype);
        nbcxi_dep(s, recv, c2);
    }
    return recv;
}

int nbcxi_build_gather_binomial(struct nbcx_sched_s *s,
                               const struct nbcxi_coll_args *a)
{
    int size = s->size;
    size_t nb = block_bytes(s, a);
    if (nb == 0)
        return s->err;
    /* Packed subtrees are sent with an int byte count. */
    if (nb > (size_t)INT_MAX / (size_t)size)
        return nbcxi_build_gather_linear(s, a);

    nbcxi_sched_tree(s, nbcxi_edge_level(nbcxi_binomial_top_mask(0, size)));
    int vr = nbcxi_rel_rank(s->rank, a->root, size);
    int top = nbcxi_binomial_top_mask(vr, size);
    if (vr == 0) {
        for (int m = top; m > 0; m >>= 1)
            nbcxi_level(s,
                        root_recv_range(s, a, nb, m,
                                        nbcxi_binomial_subtree(m, size)),
                        nbcxi_edge_level(m), NBCXI_TREE_UP);
        gather_own(s, a);
        return s->err;
    }

    struct nbcx_datatype_s *byte = nbcxi_type(NBCX_BYTE);
    int parent = nbcxi_abs_rank(nbcxi_binomial_parent(vr), a->root, size);
    int sub = nbcxi_binomial_subtree(vr, size);
    char *direct = nbcxi_contig_bytes(a->sbuf, a->stype);
    int up_level = nbcxi_edge_level(vr & -vr);
    if (sub == 1 && direct) { /* a leaf with a contiguous type */
        nbcxi_level(s, nbcxi_send(s, direct, (int)nb, byte, parent, 0),
                    up_level, NBCXI_TREE_UP);
        return s->err;
    }

    char *tmp = nbcxi_sched_tmp(s, (size_t)sub * nb);
    nbcx_node pack = nbcxi_copy(s, a->sbuf, a->scount, a->stype, tmp,
                                (int)nb, byte);
    nbcx_node send = nbcxi_send(s, tmp, bytes_of(sub, nb), byte, parent, 0);
    nbcxi_dep(s, pack, send);
    nbcxi_level(s, send, up_level, NBCXI_TREE_UP);
    for (int m = top; m > 0; m >>= 1) {
        int n = nbcxi_binomial_subtree(vr + m, size);
        nbcx_node recv = nbcxi_recv(s, tmp + (size_t)m * nb, bytes_of(n, nb),
                                    byte,
                                    nbcxi_abs_rank(vr + m, a->root, size), 0);
        nbcxi_dep(s, recv, send);
        nbcxi_level(s, recv, nbcxi_edge_level(m), NBCXI_TREE_UP);
    }
    return s->err;
}

/* ------------------------------------------------------------------ */
/* Linear                                                              */
/* ------------------------------------------------------------------ */

int nbcxi_build_gather_linear(struct nbcx_sched_s *s,
                             const struct nbcxi_coll_args *a)
{
    if (block_bytes(s, a) == 0)
        return s->err;
    if (s->rank != a->root) {
        nbcxi_send(s, a->sbuf, a->scount, a->stype, a->root, 0);
        return s->err;
    }
    for (int r = 0; r < s->size; r++)
        if (r != a->root)
            nbcxi_recv(s, nbcxi_at(a->rbuf, r, a->rcount, a->rtype),
                       a->rcount, a->rtype, r, 0);
    gather_own(s, a);
    return s->err;
}
