/*
 * coll.h - collective algorithms as pure schedule builders.
 *
 * A builder turns (rank, size, arguments) into one rank's DAG: it never
 * sends, never blocks, keeps no global state. It emits nodes with
 * nbcxi_send/recv/reduce_node/copy/call and edges with nbcxi_dep (core.h),
 * and returns s->err (the builder helpers record the first failure and
 * ignore later calls, so checking once at the end is enough).
 *
 * Rules every builder follows
 *   - Edges for real dependencies only: a receive into a buffer nobody
 *     reads or writes before has no predecessor, so it is posted the
 *     moment the schedule starts.
 *   - Tags are in [0, NBCX_SCHED_TAG_MAX]; fragment k of a pipeline uses
 *     tag k % (NBCX_SCHED_TAG_MAX + 1). Two messages between the same pair
 *     with the same tag must be sent in the order their receives are
 *     posted (node creation order for receives without predecessors).
 *   - Reductions: nbcxi_reduce_node(in, inout) computes inout = in op
 *     inout, where "in" must hold the contribution of LOWER ranks whenever
 *     the operation is not commutative (a->op->commutative == false).
 *   - Scratch memory comes from nbcxi_sched_tmp_typed/nbcxi_sched_tmp and
 *     belongs to the schedule. Builders run once per operation and, for
 *     persistent operations, once for many starts: never read or write
 *     user data at build time, only through nodes.
 *   - Zero counts and size 1 must work (often: an empty schedule, or a
 *     single local copy).
 */
#ifndef NBCX_COLL_H
#define NBCX_COLL_H

#include "../core.h"

enum nbcxi_coll {
    NBCXI_BARRIER, NBCXI_BCAST, NBCXI_REDUCE, NBCXI_ALLREDUCE, NBCXI_GATHER,
    NBCXI_SCATTER, NBCXI_ALLGATHER, NBCXI_ALLTOALL, NBCXI_NCOLL
};

/* Arguments after checking, with NBCX_IN_PLACE resolved by api/:
 *   bcast      rbuf/rcount/rtype is the buffer, root
 *   reduce     sbuf -> rbuf (rbuf significant at root), rcount, rtype, op,
 *              root. At the root sbuf == rbuf means "in place".
 *   allreduce  sbuf -> rbuf, rcount, rtype, op. sbuf == rbuf: in place.
 *   gather     sbuf/scount/stype on every rank, rbuf/rcount/rtype at root.
 *              At the root sbuf may equal its own block of rbuf (in place).
 *   scatter    sbuf/scount/stype at root, rbuf/rcount/rtype everywhere.
 *              At the root rbuf may equal its own block of sbuf.
 *   allgather  sbuf/scount/stype, rbuf/rcount/rtype. sbuf may equal the
 *              rank's own block of rbuf (in place).
 *   alltoall   sbuf/scount/stype, rbuf/rcount/rtype; in_place: the data
 *              to send is in rbuf (sbuf is NULL), and is read before it
 *              is overwritten.
 * Type signatures match as MPI requires: scount * stype->size ==
 * rcount * rtype->size for every pair of ranks, but the two types (and
 * the types on different ranks) may differ. A builder that forwards data
 * of other ranks therefore packs it (nbcxi_copy into NBCX_BYTE scratch)
 * and sends bytes; data sent straight from/to user buffers uses the
 * user's types. */
struct nbcxi_coll_args {
    const void *sbuf;
    void *rbuf;
    int scount, rcount;
    struct nbcx_datatype_s *stype, *rtype;
    struct nbcx_op_s *op;
    int root;
    bool in_place;
    size_t segsize; /* fragment size of pipelined algorithms, bytes > 0 */
};

typedef int nbcxi_builder(struct nbcx_sched_s *s,
                          const struct nbcxi_coll_args *a);

/* One entry per algorithm: name, builder, and whether it can serve a call
 * (NULL: always). */
struct nbcxi_algorithm {
    const char *name;
    nbcxi_builder *build;
    bool (*usable)(const struct nbcx_sched_s *s,
                   const struct nbcxi_coll_args *a);
};

/* barrier.c */
nbcxi_builder nbcx_build_barrier_dissemination;
/* bcast.c */
nbcxi_builder nbcx_build_bcast_binomial;
nbcxi_builder nbcx_build_bcast_chain;     /* pipelined, segsize fragments */
/* reduce.c */
nbcxi_builder nbcx_build_reduce_binomial; /* any op, MPI order kept */
nbcxi_builder nbcx_build_reduce_chain;    /* pipelined; commutative ops */
/* allreduce.c */
nbcxi_builder nbcx_build_allreduce_recursive_doubling; /* any op */
nbcxi_builder nbcx_build_allreduce_ring;  /* reduce-scatter + allgather
                                             ring; commutative ops */
nbcxi_builder nbcx_build_allreduce_reduce_bcast; /* binomial reduce to 0,
                                                    then bcast; any op */
/* gather.c */
nbcxi_builder nbcx_build_gather_binomial;
nbcxi_builder nbcx_build_gather_linear;
/* scatter.c */
nbcxi_builder nbcx_build_scatter_binomial;
nbcxi_builder nbcx_build_scatter_linear;
/* allgather.c */
nbcxi_builder nbcx_build_allgather_bruck;
nbcxi_builder nbcx_build_allgather_ring;
/* alltoall.c */
nbcxi_builder nbcx_build_alltoall_linear;   /* everything posted at once */
nbcxi_builder nbcx_build_alltoall_pairwise; /* sends in pairwise order */
nbcxi_builder nbcx_build_alltoall_bruck;    /* log p rounds, small blocks */

/* shm.c: the "slots" algorithms, on inproc communicators only (alltoall
 * not in place) */
nbcxi_builder nbcx_build_barrier_slots;
nbcxi_builder nbcx_build_bcast_slots;
nbcxi_builder nbcx_build_reduce_slots;
nbcxi_builder nbcx_build_allreduce_slots;
nbcxi_builder nbcx_build_gather_slots;
nbcxi_builder nbcx_build_scatter_slots;
nbcxi_builder nbcx_build_allgather_slots;
nbcxi_builder nbcx_build_alltoall_slots;
NBCX_HIDDEN bool nbcxi_shm_usable(const struct nbcx_sched_s *s,
                                  const struct nbcxi_coll_args *a);

/* select.c: builds the schedule of collective `coll` with the forced or
 * automatic algorithm. */
NBCX_HIDDEN int nbcxi_coll_build(enum nbcxi_coll coll,
                                 struct nbcx_sched_s *s,
                                 struct nbcxi_coll_args *a);

#endif /* NBCX_COLL_H */
