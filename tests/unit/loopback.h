/*
 * loopback.h - a transport for the unit tests: N virtual ranks in one
 * process and one thread.
 *
 * A "world" holds the message queues of all its virtual ranks; each rank
 * gets an ordinary nbcx communicator whose transport points at the shared
 * world. Because every operation of every virtual rank is on nbcx's single
 * process-wide progress list, one thread can start a collective on every
 * rank and then wait for all of them.
 *
 * Semantics, chosen to be the strictest an MPI library may legally be:
 *   - Matching by (source, tag) in posting order (MPI's non-overtaking
 *     rule; there are no wildcards).
 *   - Rendezvous: a send completes only once a receive has matched it and
 *     the data has been copied. Algorithms that rely on eager buffering
 *     deadlock here, and the deadlock is detected and reported.
 *   - Data moves through the datatypes' pack/unpack. The receive must hold
 *     at least the bytes sent (else NBCX_ERR_TRUNCATE on the receive) and
 *     the bytes must be whole receive elements (else NBCX_ERR_TRANSPORT,
 *     "type signatures differ").
 *   - Peers and tags are checked (a bad one is NBCX_ERR_TRANSPORT with a
 *     message on stderr): they can only come from a buggy algorithm.
 *   - Buffers of pending operations are off limits, as MPI says: a
 *     receive may not touch bytes of any live operation of its rank, a
 *     send not those of a live receive (two sends may share bytes). A
 *     violation is NBCX_ERR_TRANSPORT at the post, with a message: it
 *     means a missing dependency edge (a write-after-read or
 *     read-after-write hazard), whatever the timing. "Live" lasts until
 *     testsome reports the operation, i.e. until its node is done.
 *
 * Random mode delivers matched messages at random later times and reports
 * completions in random order and at random later calls, all legal for
 * MPI, to shake out missing dependencies (a node reading a buffer that a
 * message has not reached yet). The generator is seeded, so a failing
 * order can be replayed.
 *
 * Not thread-safe: nbcx calls the transport under its progress lock and
 * the tests are single-threaded.
 */
#ifndef NBCX_TEST_LOOPBACK_H
#define NBCX_TEST_LOOPBACK_H

#include <stddef.h>
#include <stdint.h>

#include "nbcx.h"

enum loopback_mode {
    LOOPBACK_ORDERED = 0, /* deliver at match time, report at once      */
    LOOPBACK_RANDOM = 1   /* deliver and report at random later moments */
};

struct loopback_options {
    int tag_ub;           /* largest transport tag; 0: INT32_MAX        */
    enum loopback_mode mode;
    uint64_t seed;        /* random mode: seed of the generator         */
    int quiet;            /* do not print transport errors on stderr    */
    size_t segsize;       /* the transport's fragment size (its
                             ops->segsize); 0: none                     */
    size_t lazy_max;      /* what it carries with no progress call (its
                             ops->carries_max); 0: none                 */
    int medium;           /* where it says its data moves (its
                             enum nbcxi_medium); 0: not known           */
    bool one_node;        /* it says every rank is on this node         */
    const int *nodes;     /* its node_of: rank r's node is nodes[r] (the
                             lowest rank on it; copied); NULL: it does
                             not know                                   */
};

/* Counters of a world, for tests of the engine's behaviour. */
struct loopback_stats {
    long posted;      /* sends and receives ever posted                 */
    long matched;     /* send/receive pairs matched                     */
    long cross;       /* of them, between two nodes (options' nodes)    */
    long live;        /* operations posted and not yet released         */
    long unmatched;   /* operations posted and not matched yet          */
};

/* Creates a world of nranks ranks and comms[r] for each rank r. Returns
 * NBCX_SUCCESS or an nbcx error code (then no communicator exists). */
int loopback_world_create(int nranks, nbcx_comm comms[]);
int loopback_world_create_ex(int nranks, const struct loopback_options *opt,
                             nbcx_comm comms[]);
/* Frees the communicators (sets them to NBCX_COMM_NULL). The world itself
 * lives on until the last operation that uses it is released. */
void loopback_world_destroy(int nranks, nbcx_comm comms[]);

/* Counters of the world of comm (any rank's communicator). */
int loopback_stats(nbcx_comm comm, struct loopback_stats *st);

/* Waits for n requests of operations on the world of comm, like
 * nbcx_waitall, but detects a deadlock: when a full progress pass changes
 * nothing in the world and nothing is in flight, no request can ever
 * complete. Then it prints the unmatched operations and returns -1,
 * leaving the requests as they are (they can never be completed).
 * Otherwise it returns nbcx_waitall's result (the first error). */
#define LOOPBACK_DEADLOCK (-1)
int loopback_waitall(nbcx_comm comm, int n, nbcx_request reqs[]);

/* Prints the world's unmatched operations to stderr. */
void loopback_dump(nbcx_comm comm);

#endif /* NBCX_TEST_LOOPBACK_H */
