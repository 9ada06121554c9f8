/*
 * alltoallv.c - alltoallv and alltoallw: every rank sends a block of its
 * own size (and, for w, its own datatype) to every rank. The sides sv and
 * rv (coll.h) describe the blocks, so one builder serves both.
 *
 * linear: every receive (from each peer straight into its block of rbuf)
 *   and every send (from the peer's block of sbuf) is posted at start;
 *   the own block is copied locally. No dependencies.
 *
 * pairwise: all receives are posted at start, but the send of step i (to
 *   rank + i) waits for the send of step i - 1, so each rank has one
 *   outgoing message in flight and the ranks pair up step by step.
 *
 * In place (sbuf NULL, the data to send is in rbuf): each block to send
 *   is first copied into a scratch buffer of its own (same type and
 *   count, so the message keeps the user's type signature); the send
 *   reads the scratch, and the receive into that block of rbuf waits for
 *   the copy. The own block stays where it is.
 *
 * Blocks of zero bytes are no message (both sides know: the type
 * signatures match). One message per pair of ranks: tag 0. Receives are
 * created in the order the pairwise sends arrive, rank - 1 first.
 */
#include <stdlib.h>

#include "coll.h"

static int mod(long x, int p)
{
    long r = x % p;
    return (int)(r < 0 ? r + p : r);
}

/* In place: scratch copies of the blocks to send (copy[peer] made them);
 * none for empty blocks or the own one. */
struct saved {
    void **buf;
    nbcx_node *copy;
};

static int save_blocks(struct nbcx_sched_s *s, const struct nbcxi_coll_args *a,
                       struct saved *sv)
{
    const int p = s->build.size;
    sv->buf = malloc(sizeof(void *) * (size_t)p);
    sv->copy = malloc(sizeof(nbcx_node) * (size_t)p);
    if (!sv->buf || !sv->copy)
        return NBCX_ERR_NOMEM;
    for (int peer = 0; peer < p; peer++) {
        struct nbcxi_block b = nbcxi_rblock(a, peer);
        sv->buf[peer] = NULL;
        sv->copy[peer] = -1;
        if (peer == s->build.rank || nbcxi_block_bytes(b) == 0)
            continue;
        sv->buf[peer] = nbcxi_sched_tmp_typed(s, b.count, b.type);
        sv->copy[peer] = nbcxi_copy(s, b.buf, b.count, b.type, sv->buf[peer],
                                    b.count, b.type);
    }
    return s->build.err;
}

static int build(struct nbcx_sched_s *s, const struct nbcxi_coll_args *a,
                 bool chain_sends)
{
    const int p = s->build.size, rank = s->build.rank;
    struct saved sv = { NULL, NULL };

    if (!a->in_place)
        nbcxi_copy_block(s, nbcxi_sblock(a, rank), nbcxi_rblock(a, rank));
    if (p == 1)
        return s->build.err;
    int err = a->in_place ? save_blocks(s, a, &sv) : NBCX_SUCCESS;

    for (int i = 1; i < p && err == NBCX_SUCCESS; i++) {
        int peer = mod((long)rank - i, p);
        struct nbcxi_block b = nbcxi_rblock(a, peer);
        if (nbcxi_block_bytes(b) == 0)
            continue;
        nbcx_node rv = nbcxi_recv(s, b.buf, b.count, b.type, peer, 0);
        if (a->in_place) /* the block to send is read out first */
            nbcxi_dep(s, sv.copy[peer], rv);
    }
    nbcx_node prev = -1;
    for (int i = 1; i < p && err == NBCX_SUCCESS; i++) {
        int peer = mod((long)rank + i, p);
        struct nbcxi_block b = a->in_place ? nbcxi_rblock(a, peer)
                                           : nbcxi_sblock(a, peer);
        if (nbcxi_block_bytes(b) == 0)
            continue;
        nbcx_node sn = nbcxi_send(s, a->in_place ? sv.buf[peer] : b.buf,
                                  b.count, b.type, peer, 0);
        if (a->in_place)
            nbcxi_dep(s, sv.copy[peer], sn);
        if (chain_sends)
            nbcxi_dep(s, prev, sn);
        prev = sn;
    }
    free(sv.buf);
    free(sv.copy);
    return err ? err : s->build.err;
}

int nbcxi_build_alltoallv_linear(struct nbcx_sched_s *s,
                                const struct nbcxi_coll_args *a)
{
    return build(s, a, false);
}

int nbcxi_build_alltoallv_pairwise(struct nbcx_sched_s *s,
                                  const struct nbcxi_coll_args *a)
{
    return build(s, a, true);
}
