/*
 * gatherv.c - gatherv: the root collects a block of its own size from
 * every rank.
 *
 * linear: the root posts one receive per rank with a non-empty block,
 *   straight into that rank's block of rbuf (rcounts[r] elements of rtype
 *   at displs[r]); every other rank sends sbuf (scount elements of stype)
 *   unless its block is empty. The root's own block is copied from sbuf,
 *   or is in rbuf already (in place). No dependencies: everything is
 *   posted at start. Blocks of zero bytes are no message on either side
 *   (the type signatures match, so both sides know). Tag 0.
 */
#include "coll.h"

int nbcxi_build_gatherv_linear(struct nbcx_sched_s *s,
                              const struct nbcxi_coll_args *a)
{
    if (s->build.rank != a->root) {
        if ((size_t)a->scount * a->stype->size > 0)
            nbcxi_send(s, a->sbuf, a->scount, a->stype, a->root, 0);
        return s->build.err;
    }
    for (int r = 0; r < s->build.size; r++) {
        struct nbcxi_block b = nbcxi_rblock(a, r);
        struct nbcxi_block own = { (void *)(uintptr_t)a->sbuf, a->scount,
                                   a->stype };
        if (r == a->root && !a->in_place)
            nbcxi_copy_block(s, own, b);
        else if (r != a->root && nbcxi_block_bytes(b) > 0)
            nbcxi_recv(s, b.buf, b.count, b.type, r, 0);
    }
    return s->build.err;
}
