/*
 * allgather.c - allgather by Bruck's algorithm and by a ring.
 *
 * Bruck (any p, ceil(log2 p) steps; for small blocks).
 *   Each rank packs the blocks it holds into a byte scratch in rotated
 *   order: scratch block i is the block of rank (rank + i) mod p, so its
 *   own block is block 0. At step k (dist = 2^k) it sends its first
 *   n = min(dist, p - dist) scratch blocks to rank - dist and receives n
 *   blocks from rank + dist into scratch blocks dist .. dist + n - 1.
 *   Received blocks are unpacked into rbuf (with rtype) at their true
 *   places, which undoes the rotation.
 *   Dependencies: every receive has its own part of the scratch, so all
 *   are posted at start. The send of step k reads scratch blocks
 *   0 .. dist - 1, so it waits for the packing of the own block and for
 *   the receives of steps 0 .. k - 1. Each step's unpacking waits for its
 *   receive only. Step k uses tag k.
 *
 * Ring (p - 1 steps; for large blocks).
 *   At step i a rank sends block rank - i to the right and receives block
 *   rank - i - 1 from the left, straight into its place in rbuf (rtype).
 *   The block sent at step 0 is the rank's own, sent from sbuf; every
 *   later one is the block received at the step before.
 *   Dependencies: receives are posted at start; the send of step i > 0
 *   waits for the receive of step i - 1. The own block is copied from
 *   sbuf into rbuf unless sbuf already is that block (in place). Step i
 *   uses tag i mod (NBCX_SCHED_TAG_MAX + 1); when tags wrap, a send also
 *   waits for the send with the same tag before it (the receives are
 *   posted in step order already).
 *
 * Linear (one step; for few ranks and small blocks, libnbc's allgather).
 *   Every rank sends its own block to every other rank and receives
 *   each other rank's straight into its place in rbuf: p - 1 messages
 *   each way, all posted at start, no dependencies (the own block is
 *   sent from sbuf, or from rbuf in place). Rank r sends to r + i
 *   and receives from r - i in the order i = 1 .. p - 1, so the
 *   messages of the first steps meet first. Tag 0.
 *
 * Types: messages from user buffers use the user's types; Bruck forwards
 * the data of other ranks as packed bytes. The ring forwards them from
 * rbuf with rtype, which matches the sender's type signature.
 */
#include <stdlib.h>

#include "coll.h"
#include "tree.h"

enum { NTAGS = NBCX_SCHED_TAG_MAX + 1 };

static int mod(long x, int p)
{
    long r = x % p;
    return (int)(r < 0 ? r + p : r);
}

/* Unpacks scratch blocks i0 .. i0 + n - 1 (bytes B each; scratch block i
 * is the block of rank + i) into rbuf, after node `after`. At most two
 * copies: the run may wrap around the end of rbuf. */
static void bruck_unrotate(struct nbcx_sched_s *s,
                           const struct nbcxi_coll_args *a,
                           const unsigned char *tmp, size_t B, int i0, int n,
                           nbcx_node after)
{
    struct nbcx_datatype_s *byte = nbcxi_type(NBCX_BYTE);
    while (n > 0) {
        /* rbuf block of i0 */
        int j = mod((long)s->build.rank + i0, s->build.size);
        int m = NBCXI_MIN(n, s->build.size - j);        /* up to rbuf's end */
        nbcx_node cp = nbcxi_copy(s, tmp + (size_t)i0 * B,
                                  (ptrdiff_t)m * (ptrdiff_t)B, byte,
                                  nbcxi_at(a->rbuf, j, a->rcount, a->rtype),
                                  (ptrdiff_t)m * a->rcount, a->rtype);
        nbcxi_dep(s, after, cp);
        i0 += m;
        n -= m;
    }
}

/* What every allgather does first: nothing for empty blocks; the rank's
 * own block copied into rbuf unless it is there already (in place); on one
 * rank that is all. Returns true when the schedule is complete. */
static bool own_block_only(struct nbcx_sched_s *s,
                           const struct nbcxi_coll_args *a)
{
    void *own = nbcxi_at(a->rbuf, s->build.rank, a->rcount, a->rtype);
    if ((size_t)a->rcount * a->rtype->size == 0)
        return true;
    if (a->sbuf != own)
        nbcxi_copy(s, a->sbuf, a->scount, a->stype, own, a->rcount,
                   a->rtype);
    return s->build.size == 1;
}

int nbcxi_build_allgather_bruck(struct nbcx_sched_s *s,
                               const struct nbcxi_coll_args *a)
{
    const int p = s->build.size, rank = s->build.rank;
    void *own = nbcxi_at(a->rbuf, rank, a->rcount, a->rtype);
    const bool in_place = a->sbuf == own;
    const size_t B = (size_t)a->rcount * a->rtype->size; /* block bytes */
    struct nbcx_datatype_s *byte = nbcxi_type(NBCX_BYTE);

    if (own_block_only(s, a))
        return s->build.err;
    int err;
    unsigned char *tmp = nbcxi_bruck_scratch(s, B, &err);
    if (!tmp)
        return err;
    nbcx_node packed = in_place
                           ? nbcxi_copy(s, own, a->rcount, a->rtype, tmp,
                                        (ptrdiff_t)B, byte)
                           : nbcxi_copy(s, a->sbuf, a->scount, a->stype, tmp,
                                        (ptrdiff_t)B, byte);

    nbcx_node got[32]; /* receive of each step */
    int k = 0;
    for (long dist = 1; dist < p; dist <<= 1, k++) {
        int n = (int)NBCXI_MIN(dist, p - dist);
        ptrdiff_t bytes = (ptrdiff_t)n * (ptrdiff_t)B; /* may pass INT_MAX */
        got[k] = nbcxi_recv(s, tmp + (size_t)dist * B, bytes, byte,
                            mod(rank + dist, p), k);
        nbcx_node sn = nbcxi_send(s, tmp, bytes, byte, mod(rank - dist, p), k);
        nbcxi_dep(s, packed, sn);
        for (int j = 0; j < k; j++)
            nbcxi_dep(s, got[j], sn);
        bruck_unrotate(s, a, tmp, B, (int)dist, n, got[k]);
    }
    return s->build.err;
}

int nbcxi_build_allgather_ring(struct nbcx_sched_s *s,
                              const struct nbcxi_coll_args *a)
{
    const int p = s->build.size, rank = s->build.rank;
    void *own = nbcxi_at(a->rbuf, rank, a->rcount, a->rtype);
    const bool in_place = a->sbuf == own;

    if (own_block_only(s, a))
        return s->build.err;

    /* Sends of the last NTAGS steps, needed only when tags wrap. */
    nbcx_node *sent = NULL;
    if (p - 1 > NTAGS && !(sent = malloc(NTAGS * sizeof *sent)))
        return NBCX_ERR_NOMEM;

    const int right = mod(rank + 1L, p), left = mod(rank - 1L, p);
    nbcx_node prev = -1; /* receive of the step before */
    for (int i = 0; i < p - 1; i++) {
        int sb = mod((long)rank - i, p), rb = mod((long)rank - i - 1, p);
        int tag = i % NTAGS;
        nbcx_node rv = nbcxi_recv(s, nbcxi_at(a->rbuf, rb, a->rcount,
                                              a->rtype),
                                  a->rcount, a->rtype, left, tag);
        nbcx_node sn;
        if (i == 0 && !in_place)
            sn = nbcxi_send(s, a->sbuf, a->scount, a->stype, right, tag);
        else
            sn = nbcxi_send(s, nbcxi_at(a->rbuf, sb, a->rcount, a->rtype),
                            a->rcount, a->rtype, right, tag);
        nbcxi_dep(s, prev, sn);
        if (sent) {
            if (i >= NTAGS)
                nbcxi_dep(s, sent[tag], sn);
            sent[tag] = sn;
        }
        prev = rv;
    }
    free(sent);
    return s->build.err;
}

int nbcxi_build_allgather_linear(struct nbcx_sched_s *s,
                                 const struct nbcxi_coll_args *a)
{
    const int p = s->build.size, rank = s->build.rank;
    if (own_block_only(s, a))
        return s->build.err;
    /* in place, sbuf is the own block of rbuf, described by rtype */
    const bool in_place =
        a->sbuf == nbcxi_at(a->rbuf, rank, a->rcount, a->rtype);
    for (int i = 1; i < p; i++) {
        int from = mod((long)rank - i, p);
        nbcxi_recv(s, nbcxi_at(a->rbuf, from, a->rcount, a->rtype),
                   a->rcount, a->rtype, from, 0);
    }
    for (int i = 1; i < p; i++) {
        int to = mod((long)rank + i, p);
        if (in_place)
            nbcxi_send(s, a->sbuf, a->rcount, a->rtype, to, 0);
        else
            nbcxi_send(s, a->sbuf, a->scount, a->stype, to, 0);
    }
    return s->build.err;
}
