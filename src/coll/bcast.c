/*
 * bcast.c - broadcast builders.
 *
 * binomial: the binomial tree of tree.h on ranks relative to the root. A
 *   rank receives the whole buffer from its parent, then sends it to its
 *   children, largest subtree first (the child with the most ranks below
 *   it gets the data first). Every send depends on the receive only; the
 *   root's sends have no predecessor at all. Every send and receive is
 *   annotated with its tree level for split-tree progress (sched/sched.h): the
 *   edge to child vr + m is level log2(m) + 1, data flowing down.
 *
 *       recv(parent) --+--> send(child with the largest subtree)
 *                      +--> send(next child)
 *                      +--> ...
 *
 * knomial: the same with the k-nomial tree of radix k = 2..8 (tree.h,
 *   a->radix; "knomial" is radix 4): a rank sends to up to (k - 1)
 *   children per level, ceil(log_k p) levels, largest subtrees first.
 *   Fewer rounds than the binomial tree for small buffers when a
 *   message's latency is worth more than k - 1 back-to-back sends.
 *
 * scatter_allgather: van de Geijn's scatter + allgather for large
 *   buffers on many ranks (below, before its builder).
 *
 * chain: a pipeline through the relative ranks 0 -> 1 -> ... -> size-1
 *   (paper 001, Fig. 2 and 3). The buffer is cut into fragments of
 *   segsize bytes. Fragment k is received from the predecessor into its
 *   own part of the buffer, so every receive is posted at start; it is
 *   sent on to the successor after its receive AND after the send of
 *   fragment k-1. Fragments thus leave in order (which tag reuse
 *   requires: fragment k has tag k % (NBCX_SCHED_TAG_MAX + 1)) and each is
 *   forwarded the moment it has arrived.
 *
 *       recv_0    recv_1    recv_2    ...
 *         |         |         |
 *       send_0 -> send_1 -> send_2 -> ...
 *
 * MPI lets ranks broadcast with different datatypes as long as the type
 * signatures match. The binomial tree moves the whole buffer with the
 * user's type; the chain cuts the packed byte stream at the same offsets
 * on every rank (see struct frags), so both are correct in that case.
 */
#include <limits.h>

#include "coll.h"
#include "tree.h"

/* ------------------------------------------------------------------ */
/* Binomial tree                                                       */
/* ------------------------------------------------------------------ */

/* The k-nomial tree of radix k (tree.h; k = 2: the binomial tree). */
static int bcast_tree(struct nbcx_sched_s *s, const struct nbcxi_coll_args *a,
                      int k)
{
    struct nbcx_datatype_s *t = a->rtype;
    if (s->build.size == 1 || a->rcount == 0 || t->size == 0)
        return s->build.err;

    nbcxi_sched_tree(s, nbcxi_knomial_height(s->build.size, k));
    int vr = nbcxi_rel_rank(s->build.rank, a->root, s->build.size);
    nbcx_node recv = -1; /* none at the root */
    if (vr > 0) {
        recv = nbcxi_recv(s, a->rbuf, a->rcount, t,
                          nbcxi_abs_rank(nbcxi_knomial_parent(vr, k), a->root,
                                         s->build.size),
                          0);
        nbcxi_level(s, recv,
                    nbcxi_knomial_level(nbcxi_knomial_low(vr, k), k),
                    NBCXI_TREE_DOWN);
    }
    /* Largest subtrees first: masks down, digits up. */
    for (long m = nbcxi_knomial_top_mask(vr, s->build.size, k); m > 0; m /= k)
        for (int d = 1; d < k && vr + d * m < s->build.size; d++) {
            nbcx_node send = nbcxi_send(
                s, a->rbuf, a->rcount, t,
                nbcxi_abs_rank((int)(vr + d * m), a->root, s->build.size), 0);
            nbcxi_level(s, send, nbcxi_knomial_level(m, k), NBCXI_TREE_DOWN);
            nbcxi_dep(s, recv, send);
        }
    return s->build.err;
}

int nbcxi_build_bcast_binomial(struct nbcx_sched_s *s,
                              const struct nbcxi_coll_args *a)
{
    return bcast_tree(s, a, 2);
}

int nbcxi_build_bcast_knomial(struct nbcx_sched_s *s,
                              const struct nbcxi_coll_args *a)
{
    return bcast_tree(s, a, nbcxi_knomial_k(a->radix));
}

/* ------------------------------------------------------------------ */
/* Pipelined chain                                                     */
/* ------------------------------------------------------------------ */

/* Fragments are at most this long, so element counts fit an int. */
#define CHAIN_MAX_FRAG_BYTES ((size_t)1 << 30)

/* How this rank addresses the fragments of the chain. Every rank cuts the
 * same packed byte stream of nbytes bytes at the same multiples of the
 * fragment size, then moves its fragments in the cheapest local form:
 *   typed   the fragment size is a multiple of the type size, so each
 *           fragment is whole elements: moved in place with the user's
 *           type (the common case; no copies);
 *   bytes   the type is contiguous: fragments are its bytes in place;
 *   packed  otherwise the root packs the buffer into byte scratch first
 *           and the other ranks unpack it from there at the end.
 * Fragment k is `n` elements of `type` at nbcxi_at(base, k, per, type),
 * with n = per except for a shorter last fragment. */
struct frags {
    char *base;
    struct nbcx_datatype_s *type;
    int per;       /* elements per fragment (fits an int by the cap)   */
    size_t total;  /* elements in the whole buffer                    */
    size_t nfrag;  /* number of fragments                             */
    bool packed;   /* base is byte scratch to pack into / unpack from */
};

static void chain_frags(struct nbcx_sched_s *s,
                        const struct nbcxi_coll_args *a, size_t segsize,
                        struct frags *f)
{
    struct nbcx_datatype_s *t = a->rtype;
    size_t nbytes = (size_t)a->rcount * t->size;
    /* The fragment size depends only on values every rank shares, so
     * all ranks cut the stream at the same offsets. */
    size_t fbytes = NBCXI_MIN(segsize, nbytes);
    fbytes = NBCXI_MIN(fbytes, CHAIN_MAX_FRAG_BYTES);
    fbytes = NBCXI_MAX(fbytes, (nbytes + NBCXI_MAX_FRAGS - 1) /
                                   NBCXI_MAX_FRAGS);

    f->nfrag = (nbytes + fbytes - 1) / fbytes;
    f->packed = false;
    if (fbytes % t->size == 0) {
        f->base = a->rbuf;
        f->type = t;
        f->per = (int)(fbytes / t->size);
        f->total = (size_t)a->rcount;
        return;
    }
    f->type = nbcxi_type(NBCX_BYTE);
    f->per = (int)fbytes;
    f->total = nbytes;
    f->base = nbcxi_contig_bytes(a->rbuf, t);
    if (!f->base) {
        f->base = nbcxi_sched_tmp(s, nbytes);
        f->packed = true;
    }
}

/* Copy nodes packing (typed -> bytes) or unpacking (bytes -> typed) count
 * elements of t between buf and the contiguous bytes at bytes. One node
 * normally; a chain of pieces when the byte count does not fit an int.
 * *first and *last get the first and last node of the chain. */
static void pack_nodes(struct nbcx_sched_s *s, bool pack, void *buf,
                       int count, struct nbcx_datatype_s *t, char *bytes,
                       nbcx_node *first, nbcx_node *last)
{
    struct nbcx_datatype_s *byte = nbcxi_type(NBCX_BYTE);
    int piece = (int)NBCXI_MAX((size_t)1, (size_t)INT_MAX / t->size);
    *first = *last = -1;
    for (int done = 0, n; done < count; done += n) {
        n = NBCXI_MIN(piece, count - done);
        void *typed = nbcxi_at(buf, done, 1, t);
        char *packed = bytes + (size_t)done * t->size;
        int nb = (int)((size_t)n * t->size);
        nbcx_node c = pack ? nbcxi_copy(s, typed, n, t, packed, nb, byte)
                           : nbcxi_copy(s, packed, nb, byte, typed, n, t);
        nbcxi_dep(s, *last, c);
        if (*first < 0)
            *first = c;
        *last = c;
    }
}

int nbcxi_build_bcast_chain(struct nbcx_sched_s *s,
                           const struct nbcxi_coll_args *a)
{
    if (s->build.size == 1 || a->rcount == 0 || a->rtype->size == 0)
        return s->build.err;

    int vr = nbcxi_rel_rank(s->build.rank, a->root, s->build.size);
    int pred = vr > 0 ? nbcxi_abs_rank(vr - 1, a->root, s->build.size) : -1;
    int succ = vr < s->build.size - 1
                   ? nbcxi_abs_rank(vr + 1, a->root, s->build.size)
                   : -1;
    struct frags f;
    chain_frags(s, a,
                nbcxi_chain_segsize(s, a, (size_t)a->rcount * a->rtype->size),
                &f);
    if (s->build.err)
        return s->build.err;

    /* Packed layout: the root packs before the first send; the others
     * unpack once every fragment has arrived. */
    nbcx_node pack_first = -1, pack_last = -1;
    if (f.packed)
        pack_nodes(s, pred < 0, a->rbuf, a->rcount, a->rtype, f.base,
                   &pack_first, &pack_last);

    nbcx_node prev_send = pred < 0 ? pack_last : -1;
    for (size_t k = 0; k < f.nfrag; k++) {
        char *frag = nbcxi_at(f.base, (ptrdiff_t)k, f.per, f.type);
        int n = (int)NBCXI_MIN((size_t)f.per, f.total - k * (size_t)f.per);
        int tag = (int)(k % (NBCX_SCHED_TAG_MAX + 1));
        nbcx_node recv = -1;
        if (pred >= 0) {
            recv = nbcxi_recv(s, frag, n, f.type, pred, tag);
            nbcxi_dep(s, recv, pack_first); /* unpack: after every recv */
        }
        if (succ >= 0) {
            nbcx_node send = nbcxi_send(s, frag, n, f.type, succ, tag);
            nbcxi_dep(s, recv, send);
            nbcxi_dep(s, prev_send, send);
            prev_send = send;
        }
    }
    return s->build.err;
}

/* ------------------------------------------------------------------ */
/* Scatter + allgather (van de Geijn)                                  */
/* ------------------------------------------------------------------ */

/* scatter_allgather (van de Geijn): the packed byte stream of the
 * buffer is cut into pof2 blocks (pof2 the largest power of two <= p) of
 * near-equal byte counts, scattered so that each participant holds one,
 * then gathered back everywhere; each rank receives the n bytes once in
 * all, in 2 log2(pof2) rounds: about 2 log2(p) alpha + 2 n beta, against
 * the binomial tree's log2(p) (alpha + n beta).
 *   Participants (the fold of recursive doubling, on relative ranks):
 *   odd relative ranks below 2 rem (rem = p - pof2) take no part and get
 *   the whole buffer from their even neighbour at the end; the others
 *   are participants nr = vr / 2 (below 2 rem) or vr - rem.
 *   The halving: in round k a range is cut in two halves; participants
 *   whose bit k is 0 keep the lower, the others the upper (the ranges of
 *   Rabenseifner's reduce-scatter, allreduce.c). The scatter runs the
 *   rounds k = 0, 1, ...: a participant below 2^k sends the upper half of
 *   its range to nr + 2^k, which receives it straight into its buffer.
 *   So the first round is between neighbours (on one node when ranks are
 *   placed in blocks) and carries half the data; each later one half as
 *   much as the one before.
 *   The allgather runs the rounds in reverse (recursive doubling,
 *   distance pof2 / 2 first): in round k participant nr holds the range it
 *   keeps after halving round k and exchanges it with nr ^ 2^k, except
 *   that a participant below 2^k already has its partner's half (it sent
 *   it in the scatter), and its partner then receives without sending.
 *   The last round, between neighbours again, carries half the data: per
 *   node, blocks of 2 ranks move about n bytes through the network in
 *   each phase, not 2n.
 *   Dependencies: every receive goes to its final place, disjoint from
 *   every other, so it has no predecessor (posted at start); a send
 *   waits for the receives that brought its data (the scatter's, the
 *   allgather's earlier rounds). Bytes are the buffer's own when its type
 *   is contiguous, else packed at the root and unpacked at the others
 *   (as the chain). Messages of more than INT_MAX bytes are cut into
 *   chunks (sched.h).
 *   The large-message broadcast of MPICH (src/mpi/coll/bcast/
 *   bcast_intra_scatter_recursive_doubling_allgather.c, pmodels/mpich
 *   050b668, read only) is the same idea with the rounds the other way
 *   (binomial scatter from the farthest rank, allgather from distance 1),
 *   which moves 2n per node of 2 ranks through the network; the 16,384-
 *   rank, 1 MiB simulation (docs/results/scale) took 43 ms that way, 20
 *   ms this way. */
enum { HV_SCATTER = 0, HV_AG = 1, HV_UNFOLD = 40 };

/* First byte of block b of the stream of nbytes cut into n blocks. */
static size_t sag_off(size_t nbytes, int n, long b)
{
    size_t q = nbytes / (size_t)n, r = nbytes % (size_t)n;
    return (size_t)b * q + NBCXI_MIN((size_t)b, r);
}

/* The range [*lo, *hi) of blocks that participant nr keeps after the
 * halving rounds 0..k (bit j of nr: 0 the lower half, 1 the upper). */
static void hv_range(int nr, int k, int pof2, int *lo, int *hi)
{
    *lo = 0;
    *hi = pof2;
    for (int j = 0; j <= k; j++) {
        int mid = *lo + (*hi - *lo) / 2;
        if (nr & (1 << j))
            *lo = mid;
        else
            *hi = mid;
    }
}

int nbcxi_build_bcast_scatter_allgather(struct nbcx_sched_s *s,
                                        const struct nbcxi_coll_args *a)
{
    struct nbcx_datatype_s *t = a->rtype;
    const int p = s->build.size;
    if (p == 1 || a->rcount == 0 || t->size == 0)
        return s->build.err;
    size_t nbytes = (size_t)a->rcount * t->size;

    struct nbcx_datatype_s *byte = nbcxi_type(NBCX_BYTE);
    const int vr = nbcxi_rel_rank(s->build.rank, a->root, p);
    char *base = nbcxi_contig_bytes(a->rbuf, t);
    nbcx_node pack_first = -1, pack_last = -1;
    if (!base) {
        base = nbcxi_sched_tmp(s, nbytes);
        if (s->build.err)
            return s->build.err;
        pack_nodes(s, vr == 0, a->rbuf, a->rcount, t, base, &pack_first,
                   &pack_last);
    }

    int rounds;
    const int pof2 = nbcxi_pof2_floor(p, &rounds);
    const int rem = p - pof2;
    /* The fold: odd relative ranks below 2 rem take no part and get the
     * whole buffer from their even neighbour at the end. */
    if (vr < 2 * rem && vr % 2 == 1) {
        nbcx_node rv = nbcxi_recv(s, base, (ptrdiff_t)nbytes, byte,
                                  nbcxi_abs_rank(vr - 1, a->root, p),
                                  HV_UNFOLD);
        nbcxi_dep(s, rv, pack_first);
        return s->build.err;
    }
    const int nr = vr < 2 * rem ? vr / 2 : vr - rem;
#define HV_VR(q) ((q) < rem ? 2 * (q) : (q) + rem)
#define HV_PEER(q) nbcxi_abs_rank(HV_VR(q), a->root, p)
#define HV_OFF(b) sag_off(nbytes, pof2, (b))

    /* Scatter: in round k every participant below 2^k sends the upper
     * half of its range to participant nr + 2^k. */
    int top = -1; /* the highest set bit of nr: its receiving round */
    for (int j = 0; j < rounds; j++)
        if (nr & (1 << j))
            top = j;
    nbcx_node have = nr == 0 ? pack_last : -1;
    int lo, hi;
    if (top >= 0) {
        hv_range(nr, top, pof2, &lo, &hi);
        size_t b0 = HV_OFF(lo), b1 = HV_OFF(hi);
        if (b1 > b0) {
            have = nbcxi_recv(s, base + b0, (ptrdiff_t)(b1 - b0), byte,
                              HV_PEER(nr - (1 << top)), HV_SCATTER);
            nbcxi_dep(s, have, pack_first);
        }
    }
    for (int k = top + 1; k < rounds; k++) {
        hv_range(nr | (1 << k), k, pof2, &lo, &hi);
        size_t b0 = HV_OFF(lo), b1 = HV_OFF(hi);
        if (b1 > b0) {
            nbcx_node sn = nbcxi_send(s, base + b0, (ptrdiff_t)(b1 - b0), byte,
                                      HV_PEER(nr | (1 << k)), HV_SCATTER);
            nbcxi_dep(s, have, sn);
        }
    }

    /* Allgather, rounds in reverse: in round k participant nr holds the
     * range it keeps after halving round k and exchanges it with
     * nr ^ 2^k; a participant below 2^k already has its partner's half
     * (it sent it in the scatter), the others receive it. */
    nbcx_node got[32];
    int ngot = 0;
    for (int k = rounds - 1; k >= 0; k--) {
        int q = nr ^ (1 << k);
        if (q >= (1 << k)) { /* the partner lacks my half */
            hv_range(nr, k, pof2, &lo, &hi);
            size_t b0 = HV_OFF(lo), b1 = HV_OFF(hi);
            if (b1 > b0) {
                nbcx_node sn = nbcxi_send(s, base + b0, (ptrdiff_t)(b1 - b0), byte,
                                          HV_PEER(q), HV_AG + k);
                nbcxi_dep(s, have, sn);
                for (int j = 0; j < ngot; j++)
                    nbcxi_dep(s, got[j], sn);
            }
        }
        if (nr >= (1 << k)) { /* I lack the partner's half */
            hv_range(q, k, pof2, &lo, &hi);
            size_t b0 = HV_OFF(lo), b1 = HV_OFF(hi);
            if (b1 > b0) {
                nbcx_node rv = nbcxi_recv(s, base + b0, (ptrdiff_t)(b1 - b0), byte,
                                          HV_PEER(q), HV_AG + k);
                nbcxi_dep(s, rv, pack_first);
                got[ngot++] = rv;
            }
        }
    }
    if (vr < 2 * rem) { /* the whole buffer to the odd neighbour */
        nbcx_node sn = nbcxi_send(s, base, (ptrdiff_t)nbytes, byte,
                                  nbcxi_abs_rank(vr + 1, a->root, p),
                                  HV_UNFOLD);
        nbcxi_dep(s, have, sn);
        for (int j = 0; j < ngot; j++)
            nbcxi_dep(s, got[j], sn);
    }
#undef HV_VR
#undef HV_PEER
#undef HV_OFF
    return s->build.err;
}

/* ------------------------------------------------------------------ */
/* Double binary tree (pipelined)                                      */
/* ------------------------------------------------------------------ */

/* double_tree: the non-root ranks (relative ranks 1..n, n = p - 1) form
 * two binary trees, each carrying every other fragment of the buffer
 * (fragments as the chain's: segsize bytes of the packed stream), so
 * that each rank receives the buffer once and sends it at most once in
 * all (Sanders, Speck and Traeff's two-tree broadcast; NCCL's double
 * binary tree).
 *   Tree 1 is the in-order binary tree on positions 1..n: position i
 *   with lowest set bit L has the children i - L/2 and i + h (h the
 *   largest power of two below L with i + h <= n), its top is the
 *   largest power of two <= n, and every odd position is a leaf. Rank x
 *   sits at position x. Tree 2 is the same tree with the ranks rotated
 *   by one (rank x at position x - 1, rank 1 at position n), so every
 *   even rank, interior in tree 1, is a leaf there: a rank forwards the
 *   fragments of one tree only.
 *   The root sends fragment k to the top of tree k % 2. A rank receives
 *   fragment k from its parent in that tree straight into its place
 *   (every receive posted at start) and sends it to its children there
 *   after the receive AND after its previous send to the same rank, so
 *   the fragments to each peer leave in order (tags wrap as the
 *   chain's). Depth about 2 log2 p fragments; each rank's link carries
 *   about n bytes each way: about n beta + 2 log2(p) (alpha + seg beta).
 */

/* The largest power of two <= n (n >= 1). */
static int dt_top(int n)
{
    int t = 1;
    while (t <= n / 2)
        t <<= 1;
    return t;
}

/* Parent position of position i (1..n) in the in-order tree; 0 for the
 * top. Each step goes to the node of twice the lowest set bit covering
 * i; positions beyond n are skipped (their would-be children belong to
 * the next ancestor within 1..n). */
static int dt_parent(int i, int n)
{
    if (i == dt_top(n))
        return 0;
    int up = i;
    do {
        int l = up & -up;
        up = (up ^ l) | (l << 1);
    } while (up > n);
    return up;
}

/* The children positions of i (0: none). */
static void dt_children(int i, int n, int *left, int *right)
{
    int l = i & -i;
    *left = l > 1 ? i - l / 2 : 0;
    *right = 0;
    for (int h = l / 2; h >= 1; h /= 2)
        if (i + h <= n) {
            *right = i + h;
            break;
        }
}

/* Position of relative rank x (1..n) in tree t, and back. */
static int dt_pos(int t, int x, int n)
{
    return t == 0 ? x : x >= 2 ? x - 1 : n;
}

static int dt_rank(int t, int pos, int n)
{
    return t == 0 ? pos : pos < n ? pos + 1 : 1;
}

int nbcxi_build_bcast_double_tree(struct nbcx_sched_s *s,
                                  const struct nbcxi_coll_args *a)
{
    if (s->build.size == 1 || a->rcount == 0 || a->rtype->size == 0)
        return s->build.err;

    const int p = s->build.size, n = p - 1;
    const int vr = nbcxi_rel_rank(s->build.rank, a->root, p);
    struct frags f;
    chain_frags(s, a, a->segsize, &f);
    if (s->build.err)
        return s->build.err;
    nbcx_node pack_first = -1, pack_last = -1;
    if (f.packed)
        pack_nodes(s, vr == 0, a->rbuf, a->rcount, a->rtype, f.base,
                   &pack_first, &pack_last);

    /* Per tree: the parent (relative; -1 at the root) and the children
     * (relative; 0: none). */
    int parent[2] = { -1, -1 }, child[2][2] = { { 0, 0 }, { 0, 0 } };
    for (int t = 0; t < 2; t++) {
        if (vr == 0) {
            child[t][0] = dt_rank(t, dt_top(n), n);
            continue;
        }
        int pos = dt_pos(t, vr, n), pp = dt_parent(pos, n), l, r;
        parent[t] = pp ? dt_rank(t, pp, n) : 0;
        dt_children(pos, n, &l, &r);
        child[t][0] = l ? dt_rank(t, l, n) : 0;
        child[t][1] = r ? dt_rank(t, r, n) : 0;
    }
    /* the last send to each peer (at most 4), to keep them in order */
    int peer[4];
    nbcx_node last[4];
    int npeer = 0;

    for (size_t k = 0; k < f.nfrag; k++) {
        const int t = (int)(k % 2);
        char *frag = nbcxi_at(f.base, (ptrdiff_t)k, f.per, f.type);
        int cnt = (int)NBCXI_MIN((size_t)f.per, f.total - k * (size_t)f.per);
        int tag = (int)(k % (NBCX_SCHED_TAG_MAX + 1));
        nbcx_node have = vr == 0 ? pack_last : -1;
        if (vr > 0) {
            have = nbcxi_recv(s, frag, cnt, f.type,
                              nbcxi_abs_rank(parent[t], a->root, p), tag);
            nbcxi_dep(s, have, pack_first); /* unpack: after every recv */
        }
        for (int j = 0; j < 2; j++) {
            int c = child[t][j];
            if (c <= 0)
                continue;
            nbcx_node sn = nbcxi_send(s, frag, cnt, f.type,
                                      nbcxi_abs_rank(c, a->root, p), tag);
            nbcxi_dep(s, have, sn);
            int q = 0;
            while (q < npeer && peer[q] != c)
                q++;
            if (q == npeer) {
                peer[npeer] = c;
                last[npeer++] = -1;
            }
            nbcxi_dep(s, last[q], sn);
            last[q] = sn;
        }
    }
    return s->build.err;
}
