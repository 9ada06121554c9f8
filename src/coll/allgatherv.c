/*
 * allgatherv.c - allgatherv: every rank gets every rank's block, each
 * block of its own size (rcounts[r] elements of rtype at displs[r]).
 *
 * linear: every rank posts a receive for each other rank's non-empty
 *   block straight into its place in rbuf, and sends its own block (sbuf)
 *   to every other rank, all at start: p - 1 messages in each direction,
 *   no dependencies. Tag 0.
 *
 * ring: p - 1 steps. At step i a rank sends block rank - i to the right
 *   and receives block rank - i - 1 from the left, straight into its
 *   place in rbuf. Step 0 sends the own block from sbuf; every later step
 *   forwards the block received at the step before, from rbuf with rtype
 *   (which matches the original sender's type signature).
 *   Dependencies: receives are posted at start; the send of block b waits
 *   for the receive of b. Empty blocks are no message on any rank, so the
 *   ring then simply skips a hop. Step i uses tag i mod
 *   (NBCX_SCHED_TAG_MAX + 1); when tags wrap, a send also waits for the
 *   previous send with the same tag (receives are posted in step order).
 *
 * Both copy the own block from sbuf into rbuf unless in place (then sbuf
 * is that block already, see coll.h).
 */
#include <stdlib.h>

#include "coll.h"

enum { NTAGS = NBCX_SCHED_TAG_MAX + 1 };

static int mod(long x, int p)
{
    long r = x % p;
    return (int)(r < 0 ? r + p : r);
}

static void copy_own(struct nbcx_sched_s *s, const struct nbcxi_coll_args *a)
{
    struct nbcxi_block own = { (void *)(uintptr_t)a->sbuf, a->scount,
                               a->stype };
    if (!a->in_place)
        nbcxi_copy_block(s, own, nbcxi_rblock(a, s->build.rank));
}

int nbcxi_build_allgatherv_linear(struct nbcx_sched_s *s,
                                 const struct nbcxi_coll_args *a)
{
    const int p = s->build.size, rank = s->build.rank;
    copy_own(s, a);
    for (int i = 1; i < p; i++) {
        int from = mod((long)rank - i, p);
        struct nbcxi_block b = nbcxi_rblock(a, from);
        if (nbcxi_block_bytes(b) > 0)
            nbcxi_recv(s, b.buf, b.count, b.type, from, 0);
    }
    if ((size_t)a->scount * a->stype->size > 0)
        for (int i = 1; i < p; i++)
            nbcxi_send(s, a->sbuf, a->scount, a->stype, mod((long)rank + i, p),
                       0);
    return s->build.err;
}

int nbcxi_build_allgatherv_ring(struct nbcx_sched_s *s,
                               const struct nbcxi_coll_args *a)
{
    const int p = s->build.size, rank = s->build.rank;
    const int left = mod((long)rank - 1, p), right = mod((long)rank + 1, p);
    copy_own(s, a);
    if (p == 1)
        return s->build.err;
    /* last[t]: the last send with tag t (only needed once tags wrap). */
    nbcx_node *last = NULL;
    if (p - 1 > NTAGS) {
        last = malloc(sizeof(nbcx_node) * NTAGS);
        if (!last)
            return NBCX_ERR_NOMEM;
        for (int t = 0; t < NTAGS; t++)
            last[t] = -1;
    }
    nbcx_node recv_prev = -1; /* receive of the block sent next */
    for (int i = 0; i < p - 1; i++) {
        int tag = i % NTAGS;
        int sb = mod((long)rank - i, p), rb = mod((long)sb - 1, p);
        struct nbcxi_block out = nbcxi_rblock(a, sb);
        struct nbcxi_block in = nbcxi_rblock(a, rb);
        nbcx_node rv = -1;
        if (nbcxi_block_bytes(in) > 0)
            rv = nbcxi_recv(s, in.buf, in.count, in.type, left, tag);
        if (nbcxi_block_bytes(out) > 0) {
            nbcx_node sn = i == 0 ? nbcxi_send(s, a->sbuf, a->scount,
                                               a->stype, right, tag)
                                  : nbcxi_send(s, out.buf, out.count,
                                               out.type, right, tag);
            nbcxi_dep(s, recv_prev, sn);
            if (last) {
                nbcxi_dep(s, last[tag], sn);
                last[tag] = sn;
            }
        }
        recv_prev = rv;
    }
    free(last);
    return s->build.err;
}
