/*
 * simint.h - what build.c and simulate.c share: the compact graphs.
 *
 * The simulated ranks ("representatives": all P ranks, or, folded, the
 * first `period` ones, see build.c) are stored one after the other in
 * global arrays: rep r owns nodes rep_off[r] .. rep_off[r + 1] - 1. A
 * node's successors are succ[node[i].succ .. node[i + 1].succ - 1] (a
 * sentinel node ends the array). partner[i] of a send is the receive it
 * meets (a global node id).
 */
#ifndef NBCX_SIMINT_H
#define NBCX_SIMINT_H

#include "../../coll/coll.h"
#include "sim.h"
#include "../model.h"

struct sim_node {
    uint64_t bytes;  /* p2p: message; copy, reduce: bytes moved     */
    int32_t peer;    /* p2p: global rank; else -1                   */
    uint32_t succ;   /* first successor in job->succ                */
    uint32_t npred;
    uint16_t tag;
    uint8_t kind;    /* enum nbcxi_node_kind                        */
    int8_t level;    /* split-tree level (sched.h), 0: none        */
};

struct nbcxi_sim_job {
    int P, C;            /* ranks, ranks per node                    */
    int F;               /* simulated ranks: P, or the fold period   */
    int coll;
    char alg[64];
    bool approx;
    struct sim_node *node; /* nnodes + 1 (sentinel)                  */
    uint32_t nnodes, ncap;
    uint32_t *succ;
    uint32_t nsucc, scap;
    uint32_t *rep_off;   /* F + 1                                     */
    uint32_t *partner;   /* nnodes                                    */
    long long messages, messages_total;
    double build_seconds;
    /* run time (simulate.c), allocated on first use */
    uint32_t *pend;
    uint8_t *flags;
};

/* build.c: the arguments every rank passes (one call's setup) */
struct setup {
    const struct nbcxi_sim_config *cfg;
    int coll, P, count;
    struct nbcx_datatype_s *type;
    struct nbcx_op_s *op;
    char *mem, *sbuf, *rbuf; /* fake buffers (or a rank's real ones) */
    size_t memlen, one;      /* one: bytes of each buffer */
    int *counts, *displs; /* P (or 4: neighbours) */
    nbcx_datatype *types;
    ptrdiff_t *adispls;
    int dims[2];
    const struct nbcxi_algorithm *alg; /* NULL: automatic */
};
NBCX_HIDDEN int sim_setup_job(struct setup *S, char *err, size_t errlen);
NBCX_HIDDEN void sim_setup_rank(const struct setup *S, int r,
                                const struct nbcxi_topo *topo,
                                struct nbcxi_coll_args *a);
NBCX_HIDDEN void sim_free_setup(struct setup *S);
NBCX_HIDDEN const struct nbcxi_algorithm *sim_find_alg(int coll,
                                                       const char *name);
/* A communicator of the sim transport (it never sends). */
NBCX_HIDDEN int sim_comm(int rank, int size, bool one_node, int ranks_per_node,
                         struct nbcx_comm_s **out);

#endif /* NBCX_SIMINT_H */
