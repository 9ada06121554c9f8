/*
 * model.h - what the models of libnbcx-model share (src/model): the
 * simulator (model/sim) and the checker (model/check) build every rank's
 * schedule with the real builders, on communicators whose transport never
 * sends (they walk the schedules themselves).
 */
#ifndef NBCX_MODEL_H
#define NBCX_MODEL_H

#include "../base/base.h"

/* Which never-sending transport: its name is what nbcx_comm_get_transport
 * says of the communicator ("sim", "none"). */
enum nbcxi_silent_kind { NBCXI_SILENT_SIM, NBCXI_SILENT_CHECK };

/* A communicator of rank `rank` of `size` whose transport never sends: a
 * send or receive fails with NBCX_ERR_TRANSPORT, a test finds nothing
 * done. `tag_ub` is the transport's largest tag (it sets the tag slots).
 * ranks_per_node > 0: the nodes are blocks of that many consecutive ranks
 * (the transport's node_of); 0: it does not know. */
NBCX_HIDDEN int nbcxi_silent_comm(enum nbcxi_silent_kind kind, int rank,
                                  int size, int tag_ub, bool one_node,
                                  int ranks_per_node,
                                  struct nbcx_comm_s **out);

#endif /* NBCX_MODEL_H */
