/*
 * silent.c - the never-sending transport of the models (model.h): the
 * simulator and the checker build schedules on its communicators.
 */
#include <stdint.h>
#include <stdlib.h>

#include "model.h"

static int silent_p2p(nbcxi_transport *t, const void *buf, int count,
                      struct nbcx_datatype_s *type, int peer, int tag,
                      void *req)
{
    (void)t, (void)buf, (void)count, (void)type, (void)peer, (void)tag;
    (void)req;
    return NBCX_ERR_TRANSPORT;
}

static int silent_recv(nbcxi_transport *t, void *buf, int count,
                       struct nbcx_datatype_s *type, int peer, int tag,
                       void *req)
{
    return silent_p2p(t, buf, count, type, peer, tag, req);
}

static int silent_testsome(nbcxi_transport *t, int n, void *reqs,
                           int *ndone, int *idx)
{
    (void)t, (void)n, (void)reqs, (void)idx;
    *ndone = 0;
    return NBCX_SUCCESS;
}

static void silent_cancel(nbcxi_transport *t, void *req)
{
    (void)t, (void)req;
}

static void silent_destroy(nbcxi_transport *t)
{
    free(t);
}

/* Blocks of ranks_per_node consecutive ranks (kept in state), if known. */
static int silent_node_of(const nbcxi_transport *t, int r)
{
    int per = (int)(intptr_t)t->state;
    return per > 0 ? r - r % per : -1;
}

#define SILENT_OPS(NAME)                                                   \
    {                                                                      \
        .name = NAME, .req_size = sizeof(int), .isend = silent_p2p,        \
        .irecv = silent_recv, .testsome = silent_testsome,                 \
        .cancel = silent_cancel, .destroy = silent_destroy,                \
        .caps = NBCXI_CAP_PROGRESS_THREAD, .node_of = silent_node_of,      \
    }

static const struct nbcxi_transport_ops silent_ops[] = {
    [NBCXI_SILENT_SIM] = SILENT_OPS("sim"),
    [NBCXI_SILENT_CHECK] = SILENT_OPS("none"),
};

int nbcxi_silent_comm(enum nbcxi_silent_kind kind, int rank, int size,
                      int tag_ub, bool one_node, int ranks_per_node,
                      struct nbcx_comm_s **out)
{
    *out = NULL;
    nbcxi_transport *tp = calloc(1, sizeof *tp);
    if (!tp)
        return NBCX_ERR_NOMEM;
    tp->ops = &silent_ops[kind];
    tp->tag_ub = tag_ub;
    tp->state = (void *)(intptr_t)(ranks_per_node > 0 ? ranks_per_node : 0);
    tp->one_node = one_node;
    tp->nnodes = ranks_per_node > 0 ? (size - 1) / ranks_per_node + 1 : 0;
    return nbcxi_comm_create(rank, size, tp, out);
}
