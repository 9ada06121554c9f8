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

int nbcxi_build_bcast_binomial(struct nbcx_sched_s *s,
                              const struct nbcxi_coll_args *a)
{
    struct nbcx_datatype_s *t = a->rtype;
    if (s->size == 1 || a->rcount == 0 || t->size == 0)
        return s->err;

    nbcxi_sched_tree(s, nbcxi_edge_level(nbcxi_binomial_top_mask(0, s->size)));
    int vr = nbcxi_rel_rank(s->rank, a->root, s->size);
    nbcx_node recv = -1; /* none at the root */
    if (vr > 0) {
        recv = nbcxi_recv(s, a->rbuf, a->rcount, t,
                          nbcxi_abs_rank(nbcxi_binomial_parent(vr), a->root,
                                         s->size),
                          0);
        nbcxi_level(s, recv, nbcxi_edge_level(vr & -vr), NBCXI_TREE_DOWN);
    }
    for (int m = nbcxi_binomial_top_mask(vr, s->size); m > 0; m >>= 1) {
        nbcx_node send = nbcxi_send(s, a->rbuf, a->rcount, t,
                                    nbcxi_abs_rank(vr + m, a->root, s->size),
                                    0);
        nbcxi_level(s, send, nbcxi_edge_level(m), NBCXI_TREE_DOWN);
        nbcxi_dep(s, recv, send);
    }
    return s->err;
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
                        const struct nbcxi_coll_args *a, struct frags *f)
{
    struct nbcx_datatype_s *t = a->rtype;
    size_t nbytes = (size_t)a->rcount * t->size;
    /* The fragment size depends only on values every rank shares, so
     * all ranks cut the stream at the same offsets. */
    size_t fbytes = NBCXI_MIN(a->segsize, nbytes);
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
    if (s->size == 1 || a->rcount == 0 || a->rtype->size == 0)
        return s->err;

    int vr = nbcxi_rel_rank(s->rank, a->root, s->size);
    int pred = vr > 0 ? nbcxi_abs_rank(vr - 1, a->root, s->size) : -1;
    int succ = vr < s->size - 1 ? nbcxi_abs_rank(vr + 1, a->root, s->size)
                                : -1;
    struct frags f;
    chain_frags(s, a, &f);
    if (s->err)
        return s->err;

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
    return s->err;
}

/* ------------------------------------------------------------------ */
/* Scatter + allgather (van de Geijn)                                  */
/* ------------------------------------------------------------------ */

/* scatter_allgather: the packed byte stream of the buffer is cut into p
 * blocks of near-equal byte counts, block v belonging to relative rank
 * v. A binomial scatter from the root gives each relative rank vr the
 * blocks of its subtree, [vr, vr + sub(vr)), straight into its buffer;
 * then an allgather in ceil(log2 p) rounds completes every rank: in
 * round k (d = 2^k) rank vr receives from vr + d the blocks at offsets
 * [max(d, sub(vr)), min(2d, p)) from itself (taken mod p: at most two
 * messages, split where the blocks wrap past p - 1), which vr + d holds
 * at offsets below d. A rank so receives only what its scatter did not
 * bring, every allgather receive goes to its final place and has no
 * predecessor (posted at start), and a send waits for the receives that
 * brought its data. About 2 log2(p) alpha + 2 n beta (n bytes), against
 * the binomial tree's log2(p) (alpha + n beta): the large-message
 * broadcast of MPICH (bcast_intra_scatter_*_allgather.c). The bytes are
 * the buffer's own when its type is contiguous, else packed at the root
 * and unpacked at the others (as the chain). Buffers over INT_MAX bytes
 * take the binomial tree. */
static size_t sag_off(size_t nbytes, int p, long b)
{
    size_t q = nbytes / (size_t)p, r = nbytes % (size_t)p;
    return (size_t)b * q + NBCXI_MIN((size_t)b, r);
}

/* The blocks at offsets [lo, hi) from relative rank v, taken mod p, as at
 * most two byte ranges of the stream: piece i is [*b0[i], *b1[i]). */
static void sag_pieces(size_t nbytes, int p, int v, long lo, long hi,
                       size_t b0[2], size_t b1[2])
{
    long x = v + lo, y = v + hi;
    b0[0] = b1[0] = b0[1] = b1[1] = 0;
    if (lo >= hi)
        return;
    if (x < p) {
        b0[0] = sag_off(nbytes, p, x);
        b1[0] = sag_off(nbytes, p, y < p ? y : p);
    }
    if (y > p) {
        b0[1] = sag_off(nbytes, p, x > p ? x - p : 0);
        b1[1] = sag_off(nbytes, p, y - p);
    }
}

int nbcxi_build_bcast_scatter_allgather(struct nbcx_sched_s *s,
                                       const struct nbcxi_coll_args *a)
{
    struct nbcx_datatype_s *t = a->rtype;
    const int p = s->size;
    if (p == 1 || a->rcount == 0 || t->size == 0)
        return s->err;
    size_t nbytes = (size_t)a->rcount * t->size;
    if (nbytes > INT_MAX)
        return nbcxi_build_bcast_binomial(s, a);

    struct nbcx_datatype_s *byte = nbcxi_type(NBCX_BYTE);
    const int vr = nbcxi_rel_rank(s->rank, a->root, p);
    char *base = nbcxi_contig_bytes(a->rbuf, t);
    nbcx_node pack_first = -1, pack_last = -1;
    if (!base) {
        base = nbcxi_sched_tmp(s, nbytes);
        if (s->err)
            return s->err;
        pack_nodes(s, vr == 0, a->rbuf, a->rcount, t, base, &pack_first,
                   &pack_last);
    }

    /* Scatter down the binomial tree. */
    const int sub = nbcxi_binomial_subtree(vr, p);
    nbcx_node have = vr == 0 ? pack_last : -1;
    if (vr > 0) {
        size_t b0 = sag_off(nbytes, p, vr), b1 = sag_off(nbytes, p,
                                                         (long)vr + sub);
        if (b1 > b0) {
            have = nbcxi_recv(s, base + b0, (int)(b1 - b0), byte,
                              nbcxi_abs_rank(nbcxi_binomial_parent(vr),
                                             a->root, p),
                              0);
            nbcxi_dep(s, have, pack_first);
        }
    }
    for (int m = nbcxi_binomial_top_mask(vr, p); m > 0; m >>= 1) {
        int c = vr + m, csub = nbcxi_binomial_subtree(c, p);
        size_t b0 = sag_off(nbytes, p, c), b1 = sag_off(nbytes, p,
                                                        (long)c + csub);
        if (b1 > b0) {
            nbcx_node sn = nbcxi_send(s, base + b0, (int)(b1 - b0), byte,
                                      nbcxi_abs_rank(c, a->root, p), 0);
            nbcxi_dep(s, have, sn);
        }
    }

    /* Allgather. got: the receives so far (at most 2 per round). */
    nbcx_node got[64];
    int ngot = 0;
    for (int k = 0; ((long)1 << k) < p; k++) {
        long d = (long)1 << k, c = NBCXI_MIN(d, (long)p - d);
        /* send to y = vr - d what y lacks among offsets [d, d + c) */
        int y = (int)(((long)vr - d + p) % p);
        size_t b0[2], b1[2];
        sag_pieces(nbytes, p, y,
                   NBCXI_MAX(d, (long)nbcxi_binomial_subtree(y, p)), d + c,
                   b0, b1);
        const int ngot_before = ngot;
        for (int i = 0; i < 2; i++) {
            if (b1[i] <= b0[i])
                continue;
            nbcx_node sn = nbcxi_send(s, base + b0[i], (int)(b1[i] - b0[i]),
                                      byte, nbcxi_abs_rank(y, a->root, p),
                                      1 + 2 * k + i);
            nbcxi_dep(s, have, sn);
            for (int j = 0; j < ngot_before; j++)
                nbcxi_dep(s, got[j], sn);
        }
        /* receive from x = vr + d what this rank lacks */
        int x = (int)(((long)vr + d) % p);
        sag_pieces(nbytes, p, vr, NBCXI_MAX(d, (long)sub), d + c, b0, b1);
        for (int i = 0; i < 2; i++) {
            if (b1[i] <= b0[i])
                continue;
            nbcx_node rv = nbcxi_recv(s, base + b0[i], (int)(b1[i] - b0[i]),
                                      byte, nbcxi_abs_rank(x, a->root, p),
                                      1 + 2 * k + i);
            nbcxi_dep(s, rv, pack_first);
            got[ngot++] = rv;
        }
    }
    return s->err;
}
