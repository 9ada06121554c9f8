/*
 * scatterv.c - scatterv: the root sends each rank a block of its own size.
 *
 * linear: every non-root rank with a non-empty block posts its receive
 *   into rbuf (rcount elements of rtype) at start; the root sends block r
 *   (scounts[r] elements of stype at displs[r] of sbuf) to every rank r,
 *   all at start, and copies its own block into rbuf unless it stays in
 *   sbuf (in place). Blocks of zero bytes are no message. Tag 0.
 */
#include "coll.h"

int nbcxi_build_scatterv_linear(struct nbcx_sched_s *s,
                               const struct nbcxi_coll_args *a)
{
    if (s->build.rank != a->root) {
        if ((size_t)a->rcount * a->rtype->size > 0)
            nbcxi_recv(s, a->rbuf, a->rcount, a->rtype, a->root, 0);
        return s->build.err;
    }
    for (int r = 0; r < s->build.size; r++) {
        struct nbcxi_block b = nbcxi_sblock(a, r);
        if (r == a->root && !a->in_place)
            nbcxi_copy_block(s, b,
                             (struct nbcxi_block){ a->rbuf, a->rcount,
                                                   a->rtype });
        else if (r != a->root && nbcxi_block_bytes(b) > 0)
            nbcxi_send(s, b.buf, b.count, b.type, r, 0);
    }
    return s->build.err;
}
