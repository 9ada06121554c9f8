/**
 * @file
 * nbcx_check.h - the schedule checker: proves, without a transport and
 * without moving a byte, that the schedules of ALL ranks of a collective
 * fit together.
 *
 * For a collective, an algorithm, a communicator size and a count, the
 * checker runs the library's own schedule builder (src/coll/) once per
 * rank on a communicator that has no transport, and proves:
 *
 *   (a) matching: every send meets exactly one receive on its peer with
 *       the same tag and the same size in bytes, and every receive one
 *       send (no orphans). Messages between the same two ranks with the
 *       same tag match in posting order, as in MPI; when two of them may
 *       be posted in either order (no dependency path between them, and
 *       not both posted at start) the checker reports the ambiguity.
 *   (b) no deadlock: the union of all ranks' graphs, where a send and its
 *       receive complete together (rendezvous: the strictest semantics,
 *       so buffered sends are safe too), has no cycle. A topological sort
 *       of the global graph, linear in its size.
 *   (c) buffers: within each rank, every pair of nodes that touch the
 *       same byte (of the user's buffers or of scratch) where at least one
 *       writes is ordered by a path (no write-write race, no read of a
 *       region while a receive or another node writes it, no overwrite of
 *       a region an in-flight send still reads); a byte that is written is
 *       read only after a write unless it holds input (the send buffer,
 *       an in-place buffer, the root's buffer of a bcast); no node writes
 *       the user's input-only buffers; every byte of the user's result is
 *       written; no access leaves the user's buffers or the schedule's
 *       scratch.
 *
 * User buffers are fake: address ranges reserved without access rights,
 * so a builder that touched user data while building would crash here
 * (builders must not). Scratch (nbcx_sched_tmp) is real memory. Callback
 * nodes (nbcx_sched_call) are part of the graph, but what they read or
 * write is unknown to the checker.
 *
 * Memory: the schedule of one rank at a time, plus a compact global
 * graph of its messages (about 16 bytes per message end and 4 per
 * dependency between them); local copies and reductions that no message
 * waits for, or that wait for none, are dropped from it.
 */
#ifndef NBCX_CHECK_H
#define NBCX_CHECK_H

#include "nbcx.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Topologies of the neighbourhood collectives: a periodic 2-D grid
 * (rows x cols = size, as square as possible), the same without wrap-
 * around, or an irregular graph with repeated edges, edges from a rank to
 * itself and NBCX_PROC_NULL neighbours. */
enum nbcx_check_topology {
    NBCX_CHECK_TORUS = 0,
    NBCX_CHECK_GRID = 1,
    NBCX_CHECK_GRAPH = 2
};

/** Options; all-zero (or a NULL pointer) means the defaults. */
typedef struct nbcx_check_options {
    int root;              /**< rooted collectives: the root (default 0)   */
    int in_place;          /**< NBCX_IN_PLACE wherever MPI allows it       */
    nbcx_datatype type;    /**< element type (NULL: NBCX_INT32)            */
    int noncommutative;    /**< reductions: a non-commutative user op
                              (default: NBCX_SUM, NBCX_MAXLOC for pair
                              types, NBCX_BOR for NBCX_BYTE)             */
    size_t segsize;        /**< fragment size (0: 65536, the default)     */
    int topology;          /**< neighbourhood collectives: see above      */
    int max_reports;       /**< error messages passed on (0: 20); further
                              errors are only counted                    */
    /** Receives each error message (one line, no newline); NULL: stderr */
    void (*report)(const char *msg, void *ctx);
    void *ctx;             /**< passed to report                          */
    int ranks_per_node;    /**< the nodes the transport says (node-aware
                              algorithms): blocks of this many
                              consecutive ranks; 0: not known            */
} nbcx_check_options;

/** What a check found and what it cost. */
typedef struct nbcx_check_result {
    long long errors;      /**< 0: every property is proven               */
    long long nodes;       /**< nodes of all ranks' schedules              */
    long long edges;       /**< their dependencies                        */
    long long messages;    /**< sends (= receives when matched)           */
    long long kept;        /**< nodes kept in the global graph            */
    double seconds;        /**< wall time of the check                    */
    double build_seconds;  /**< of which in the builders (src/coll/)      */
} nbcx_check_result;

/**
 * Checks algorithm `alg` of collective `coll` (names as in
 * nbcx_algorithm_set / nbcx_algorithm_names) on `size` ranks, with
 * `count` elements per rank (per block for gather, scatter, allgather,
 * alltoall and the like; the vector variants vary it around `count`,
 * with some empty blocks). Returns NBCX_SUCCESS when everything is
 * proven; NBCX_ERR_NODE when errors were found (res->errors > 0, each
 * reported through opt->report with its rank, node, peer and tag);
 * NBCX_ERR_ALGORITHM for an unknown collective or algorithm, or one that
 * cannot serve this call (a ring allreduce with a non-commutative
 * operation; "slots", which needs in-process ranks and sends no
 * messages): then nothing is checked; NBCX_ERR_ARG, NBCX_ERR_ROOT,
 * NBCX_ERR_COUNT, NBCX_ERR_TYPE or NBCX_ERR_OP for bad options;
 * NBCX_ERR_NOMEM. opt->in_place is ignored by collectives without an
 * in-place form (barrier, bcast). res may be NULL.
 */
NBCX_API int nbcx_check_collective(const char *coll, const char *alg,
                                   int size, int count,
                                   const nbcx_check_options *opt,
                                   nbcx_check_result *res);

/** What a check would cost, estimated (nbcx_check_estimate_cost). */
typedef struct nbcx_check_estimate {
    long long nodes;       /**< nodes of all ranks' schedules              */
    long long edges;       /**< their dependencies                        */
    long long messages;    /**< sends                                      */
    long long kept;        /**< nodes of the compact global graph          */
    double bytes;          /**< peak memory of the check                   */
    double seconds;        /**< wall time of the check on this machine     */
    int sampled;           /**< ranks whose schedules were built for it    */
} nbcx_check_estimate;

/**
 * Estimates what nbcx_check_collective with the same arguments would
 * cost, without running it: builds and analyses the schedules of 16
 * ranks, one at a time: the root, rank 0 and the last rank, each counted
 * once, and 13 others spread over the communicator, whose mean stands
 * for all the remaining ranks; adds the memory of the compact global
 * graph (check.h) and the time of the global phase from a calibration on
 * the development machine. Costs about 16 ranks' schedules. A guide for
 * budgets (nbcx-check --budget-s, --max-mem), not a bound: a few ranks
 * that cost much more than the others and are none of the three above
 * make it low (or high, when sampled); the time is this machine's, at
 * its load. Returns as nbcx_check_collective, but
 * never NBCX_ERR_NODE: a sampled rank's errors are not reported here.
 */
NBCX_API int nbcx_check_estimate_cost(const char *coll, const char *alg,
                                      int size, int count,
                                      const nbcx_check_options *opt,
                                      nbcx_check_estimate *est);

/** The collectives the checker can call, in turn: the i-th name (as in
 * nbcx_algorithm_names), or NULL past the last. */
NBCX_API const char *nbcx_check_collective_name(int i);

/**@{*/
/**
 * Hand-built schedules. nbcx_check_comm_create gives rank `rank` of a
 * communicator of `size` ranks without any transport: schedules are built
 * on it with nbcx_sched_* as usual; one started on it completes at once
 * with NBCX_ERR_TRANSPORT (free it with nbcx_comm_free). nbcx_check_schedules then checks the schedules of
 * all ranks, scheds[r] being rank r's (not consumed). Every byte outside
 * the schedules' scratch counts as user memory with defined contents (the
 * checker does not know which buffers are the results). Returns as
 * nbcx_check_collective; NBCX_ERR_ARG when a schedule's rank or size
 * does not fit.
 */
NBCX_API int nbcx_check_comm_create(int rank, int size, nbcx_comm *comm);
NBCX_API int nbcx_check_schedules(int size, const nbcx_sched scheds[],
                                  const nbcx_check_options *opt,
                                  nbcx_check_result *res);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /**< NBCX_CHECK_H */
