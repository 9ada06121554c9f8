/*
 * neighbor.c - neighbourhood collectives over a topology (base/topo.c):
 * receive block i comes from sources[i], send block j goes to
 * destinations[j]; NBCX_PROC_NULL neighbours exchange nothing and their
 * blocks are left alone.
 *
 * linear (the only algorithm; the degree bounds the work anyway): every
 *   receive and every send is posted at start, with the tags of the
 *   topology's edges, which make the blocks meet as MPI says when two
 *   ranks share several edges (see topo.c). No dependencies.
 *     allgather(v)  the same sbuf goes to every destination; receive
 *                   blocks as rv describes them;
 *     alltoall(v,w) send block j as sv describes it.
 *   An edge from a rank to itself is a local copy: destination j meets
 *   the source i with the same rank and tag (topo.c made sure there is
 *   one, and each is used once); blocks of different sizes there are
 *   NBCX_ERR_TRUNCATE before anything is posted.
 *   Blocks of zero bytes are no message (the type signatures match, so
 *   both ends agree).
 */
#include <stdlib.h>

#include "coll.h"

static int exchange(struct nbcx_sched_s *s, const struct nbcxi_coll_args *a,
                    bool same_send)
{
    const struct nbcxi_topo *topo = a->topo;
    const int me = s->build.rank;
    bool *used = NULL; /* self sources already matched */

    for (int i = 0; i < topo->indegree; i++) {
        int src = topo->sources[i];
        if (src == NBCX_PROC_NULL || src == me)
            continue;
        struct nbcxi_block b = nbcxi_rblock(a, i);
        if (nbcxi_block_bytes(b) > 0)
            nbcxi_recv(s, b.buf, b.count, b.type, src, topo->rtags[i]);
    }
    for (int j = 0; j < topo->outdegree && !s->build.err; j++) {
        int dst = topo->destinations[j];
        if (dst == NBCX_PROC_NULL)
            continue;
        struct nbcxi_block b = { (void *)(uintptr_t)a->sbuf, a->scount,
                                 a->stype };
        if (!same_send)
            b = nbcxi_sblock(a, j);
        if (dst != me) {
            if (nbcxi_block_bytes(b) > 0)
                nbcxi_send(s, b.buf, b.count, b.type, dst, topo->stags[j]);
            continue;
        }
        if (!used && !(used = calloc((size_t)topo->indegree, sizeof(bool))))
            return NBCX_ERR_NOMEM;
        int i = 0;
        while (i < topo->indegree &&
               (used[i] || topo->sources[i] != me ||
                topo->rtags[i] != topo->stags[j]))
            i++;
        if (i == topo->indegree) {
            free(used);
            return NBCX_ERR_TOPOLOGY;
        }
        used[i] = true;
        nbcxi_copy_block(s, b, nbcxi_rblock(a, i));
    }
    free(used);
    return s->build.err;
}

int nbcxi_build_neighbor_allgather_linear(struct nbcx_sched_s *s,
                                         const struct nbcxi_coll_args *a)
{
    return exchange(s, a, true);
}

int nbcxi_build_neighbor_alltoall_linear(struct nbcx_sched_s *s,
                                        const struct nbcxi_coll_args *a)
{
    return exchange(s, a, false);
}
