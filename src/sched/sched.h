/*
 * sched.h - schedules: a DAG of point-to-point, local and poll nodes that
 * one rank runs for one operation (schedule.c builds it, executor.c runs
 * it over a transport, pace.c predicts when its requests complete).
 *
 * Builders (coll/) create nodes and edges with the helpers below; the
 * progress layer (progress/) calls the executor under its lock. A
 * schedule knows nothing of requests, progress modes or the cache: the
 * cache labels schedules it keeps through struct nbcxi_sched_keeper.
 */
#ifndef NBCX_SCHED_H
#define NBCX_SCHED_H

#include "../base/base.h"

enum nbcxi_node_kind { NBCXI_NODE_SEND, NBCXI_NODE_RECV, NBCXI_NODE_REDUCE,
                       NBCXI_NODE_COPY, NBCXI_NODE_CALL, NBCXI_NODE_POLL };

/* A POLL node waits for a condition that no transport request stands for
 * (a shared-memory slot to free up, another rank to publish a buffer) and
 * does the work that goes with it. Its function returns 1 when the node is
 * done, 0 for "not yet" (the executor calls it again at every progress
 * pass, as it tests transport requests), or a negative nbcx error code
 * (-NBCX_ERR_...). It must never block: whatever it waits for may need
 * this very thread to progress another operation first. */
typedef int nbcxi_poll_fn(void *arg);

struct nbcxi_node {
    uint8_t kind;
    /* Split-tree progress (progress/mode_split.c): the node's level in a
     * binomial tree, counted from the leaves (1 = the leaf level), with
     * its direction: > 0 for data flowing towards the root (reduce,
     * gather: leaf levels come first), < 0 for data flowing from it
     * (bcast, scatter: leaf levels come last), 0 for no level. */
    int8_t level;
    bool app;      /* run only by the application thread (split mode) */
    int npred;     /* predecessors */
    int pending;   /* predecessors not yet done (run time) */
    int succ;      /* first successor in sched->exec.succ (CSR) */
    int nsucc;
    /* Nodes this node stands for, itself first (0 or 1: itself only): a
     * builder's send, receive, reduction or copy of more than INT_MAX
     * bytes is made of several consecutive nodes (the chunks, and a
     * packed message's copy), to which nbcxi_dep adds every edge. */
    int span;
    union {
        struct { void *buf; int count; struct nbcx_datatype_s *type;
                 int peer, tag; } p2p;
        struct { const void *in; void *inout; int count;
                 struct nbcx_datatype_s *type; struct nbcx_op_s *op; } red;
        struct { const void *src; void *dst; int scount, dcount;
                 struct nbcx_datatype_s *stype, *dtype; } copy;
        struct { nbcx_sched_fn *fn; void *arg; } call;
        /* type/type2/op (each may be NULL) are kept alive for fn */
        struct { nbcxi_poll_fn *fn; void *arg;
                 struct nbcx_datatype_s *type, *type2;
                 struct nbcx_op_s *op; } poll;
    } u;
};

struct nbcxi_edge { int from, to; };

struct nbcx_sched_s;
/* An upper layer that keeps completed schedules for reuse (the schedule
 * cache) labels one with itself (s->keep.by, s->keep.key). done() is
 * handed the schedule when its operation is over (nbcxi_sched_retire);
 * forget() drops the label when the schedule is destroyed. */
struct nbcxi_sched_keeper {
    void (*done)(struct nbcx_sched_s *s, int err);
    void (*forget)(struct nbcx_sched_s *s);
};

/* A schedule's state, in groups: each part of the library writes its own
 * group and reads the others at most.
 *
 *   build    the builder's view: the graph and what the builders say about
 *            it. The only group coll/ touches (through the helpers below,
 *            or reading back what it built); api/builder.c and model/ build
 *            through it too. Read by the executor, progress/ and model/.
 *   exec     the executor's run state (sched/executor.c), set up by
 *            nbcxi_sched_prepare and nbcxi_sched_begin.
 *   tag      the operation's tags, taken and released by progress/
 *            (request.c, engine.c); the executor reads them.
 *   pace     progress pacing (sched/pace.c, written by the executor; the
 *            progress engine and auto mode read it).
 *   persist  persistent operations' prepared requests (the executor).
 *   keep     who keeps the schedule for reuse (api/cache.c).
 *   split    split-tree progress's run state (the executor,
 *            progress/mode_split.c).
 *   watch    the watchdog's view (progress/watchdog.c).
 */
struct nbcx_sched_s {
    struct {
        struct nbcx_comm_s *comm; /* retained */
        int rank, size;
        struct nbcxi_node *nodes;
        int nnodes, nodes_cap;
        struct nbcxi_edge *edges;
        int nedges, edges_cap;
        void **tmps;          /* scratch buffers owned by the schedule */
        int ntmps, tmps_cap;
        int err;              /* first error met while building */
        bool persistent;      /* planned by an nbcx_<op>_init (builders
                                 read it; the request has its own copy,
                                 progress/request.h) */
        /* split-tree progress (progress/mode_split.c): levels of the
         * binomial tree (nbcxi_sched_tree), 0: none */
        int tree_height;
        /* labels coll/select.c gives the schedule: the collective and
         * algorithm (NULL: a user schedule), for diagnoses
         * (progress/watchdog.c); the call's message size, for the trace
         * (base/trace.h); S + 1 from a split rule of NBCX_TUNING, 0: none */
        const char *op_name, *alg_name;
        size_t msg_bytes;
        int split_tuned;
    } build;

    struct {
        size_t send_bytes;    /* bytes of all send nodes (prepare) */
        size_t recv_bytes;    /* bytes of all receive nodes (prepare) */
        int *succ;            /* CSR successor lists */
        int *ready;           /* FIFO of nodes ready to run */
        int ready_head, ready_tail;
        unsigned char *reqs;  /* active transport requests (slots) */
        int *req_node;        /* node of each active slot */
        int *done_idx;        /* scratch for testsome */
        int nactive;
        int *polls;           /* POLL nodes started and not yet done */
        int npolls;
        int ndone;
    } exec;

    struct {
        unsigned seq;         /* sequence number of this operation */
        unsigned slot;        /* its tag slot (struct nbcx_comm_s) */
        bool held;            /* slot taken and not yet released */
    } tag;

    /* when each active slot was posted, and the earliest predicted
     * completion of the active requests (ns, 0 if none can be
     * predicted), see sched/pace.c */
    struct {
        int64_t *req_t0;
        int64_t next_due;
        int64_t t_begin;      /* when the operation began (ns); 0 if
                                 not timed (nbcxi_pace_timed) */
        int64_t t_pass;       /* a timed operation's last test of its
                                 requests (ns) */
        int64_t t_pending;    /* and the last pass of a progress call
                                 that left it pending (sched/pace.c) */
    } pace;

    /* persistent operations: the transport's prepared request of every
     * send and receive node (NULL: post with isend/irecv), and how many
     * of the last slots are copies of prepared requests not yet started
     * (they are started together, MPI_Startall) */
    struct {
        unsigned char *prepared;
        int unstarted;
        int failed;   /* a persistent run failed: the error every start gives */
    } persist;

    /* who keeps the schedule for reuse once it completes (the schedule
     * cache, api/cache.c), and the key it keeps it under; NULL: nobody,
     * it is destroyed */
    struct {
        const struct nbcxi_sched_keeper *by;
        void *key;
    } keep;

    /* split-tree progress (progress/mode_split.c) */
    struct {
        int *deferred;        /* ready application nodes not yet run    */
        int ndeferred;
        int app_up_left;      /* application nodes not done, by side    */
        int app_down_left;
    } split;

    /* the watchdog's view (progress/watchdog.c): exec.ndone when it last
     * looked, and since when it has not changed (ns, 0: not looked at
     * since the start) */
    struct {
        int ndone;
        int64_t since;
    } watch;
};

/* Builder-side helpers used by coll/ (all set sched->build.err on failure and
 * return it; later calls then do nothing, so a builder may check once). */
NBCX_HIDDEN int nbcxi_sched_new(struct nbcx_comm_s *comm,
                                struct nbcx_sched_s **out);
NBCX_HIDDEN void nbcxi_sched_destroy(struct nbcx_sched_s *s);
/* Schedules alive, cached ones included (nbcx_info's live_schedules). */
NBCX_HIDDEN long nbcxi_sched_live(void);
/* A completed nonblocking operation's schedule: to its keeper if it has
 * one, else destroyed. */
NBCX_HIDDEN void nbcxi_sched_retire(struct nbcx_sched_s *s, int err);
/* Scratch buffer able to hold count elements of type (typed layout). */
NBCX_HIDDEN void *nbcxi_sched_tmp_typed(struct nbcx_sched_s *s,
                                        ptrdiff_t count,
                                        struct nbcx_datatype_s *type);
NBCX_HIDDEN void *nbcxi_sched_tmp(struct nbcx_sched_s *s, size_t bytes);
/* Counts are 64-bit (ptrdiff_t). A send or receive of more than
 * `limit` bytes (INT_MAX) makes one node of several chunks (struct
 * nbcxi_node's span), each of NBCXI_CHUNK_BYTES bytes of data (the last
 * one less), so that no node counts more than INT_MAX elements. The cut
 * is by bytes, which both sides of a message share whatever their types:
 * the two sides cut at the same byte offsets, and their chunks match in
 * order (same peer, same tag, posted in order: MPI's non-overtaking
 * rule). A side whose type's size does not divide NBCXI_CHUNK_BYTES
 * (every built-in type's does) cannot cut there: it packs the message
 * into bytes first (a scratch copy of it) and moves those. Reductions
 * and copies, which are local, are cut above `limit` bytes too. */
#define NBCXI_CHUNK_BYTES ((ptrdiff_t)3 << 28) /* 768 MiB, a multiple of 48 */
/* limit and bytes as above; the element-wise collectives (bcast, reduce,
 * allreduce, scan, exscan) of more than `piece_above` elements (INT_MAX)
 * are built in pieces of `piece` elements (2^30; coll/select.c). All four
 * are lowered by NBCX_CHUNK_TEST (tests: the same paths at small sizes)
 * and by the unit tests (test_algorithms' "chunked" case). */
struct nbcxi_sched_chunking { ptrdiff_t limit, bytes, piece_above, piece; };
NBCX_HIDDEN extern struct nbcxi_sched_chunking nbcxi_sched_chunking;
NBCX_HIDDEN nbcx_node nbcxi_send(struct nbcx_sched_s *s, const void *buf,
                                 ptrdiff_t count,
                                 struct nbcx_datatype_s *type, int peer,
                                 int tag);
NBCX_HIDDEN nbcx_node nbcxi_recv(struct nbcx_sched_s *s, void *buf,
                                 ptrdiff_t count,
                                 struct nbcx_datatype_s *type, int peer,
                                 int tag);
NBCX_HIDDEN nbcx_node nbcxi_reduce_node(struct nbcx_sched_s *s,
                                        const void *in, void *inout,
                                        ptrdiff_t count,
                                        struct nbcx_datatype_s *type,
                                        struct nbcx_op_s *op);
/* A copy's two sides are cut where both are at a whole element: at
 * multiples of the least common multiple of the two type sizes (its
 * packed data then match, whatever the types). NBCX_ERR_COUNT when a
 * chunk still holds more than INT_MAX elements of one side. */
NBCX_HIDDEN nbcx_node nbcxi_copy(struct nbcx_sched_s *s, const void *src,
                                 ptrdiff_t scount,
                                 struct nbcx_datatype_s *stype, void *dst,
                                 ptrdiff_t dcount,
                                 struct nbcx_datatype_s *dtype);
NBCX_HIDDEN nbcx_node nbcxi_call(struct nbcx_sched_s *s, nbcx_sched_fn *fn,
                                 void *arg);
/* A POLL node (see nbcxi_poll_fn); the schedule retains type, type2 and
 * op (any may be NULL) until it is destroyed. */
NBCX_HIDDEN nbcx_node nbcxi_poll(struct nbcx_sched_s *s, nbcxi_poll_fn *fn,
                                 void *arg, struct nbcx_datatype_s *type,
                                 struct nbcx_datatype_s *type2,
                                 struct nbcx_op_s *op);
/* Edge before -> after; a negative node (none) is ignored. */
NBCX_HIDDEN void nbcxi_dep(struct nbcx_sched_s *s, nbcx_node before,
                           nbcx_node after);
/* Split-tree annotations for binomial-tree builders: the schedule's tree
 * has `height` levels; node n is on `level` (1 = leaves, see struct
 * nbcxi_node), going up (towards the root) or down. A negative node is
 * ignored. Without annotations a schedule runs wholly on the progress
 * thread in split mode. */
enum nbcxi_tree_dir { NBCXI_TREE_UP = 1, NBCXI_TREE_DOWN = -1 };
NBCX_HIDDEN void nbcxi_sched_tree(struct nbcx_sched_s *s, int height);
NBCX_HIDDEN void nbcxi_level(struct nbcx_sched_s *s, nbcx_node n, int level,
                             enum nbcxi_tree_dir dir);

/* Executor (sched/executor.c). begin() prepares and posts the first
 * nodes; progress() advances; both set *done when every node is done.
 * They return the first error met (the schedule is then finished, with
 * everything cancelled). Not thread-safe: the progress engine serialises
 * calls. begin() runs on the application thread; progress() says with
 * `app` whether it does: nodes marked app are only run when it does, and
 * are otherwise kept in s->split.deferred until it does. */
/* Builds successor lists and checks the graph is acyclic (NBCX_ERR_NODE
 * otherwise); posts nothing. Idempotent. */
NBCX_HIDDEN int nbcxi_sched_prepare(struct nbcx_sched_s *s);
NBCX_HIDDEN int nbcxi_sched_begin(struct nbcx_sched_s *s, bool *done);
/* Whether every send of a begun s has been posted: none waits for a
 * predecessor (a receive, say) or for its turn. After begin(), whether
 * the start sent all that s will send. */
NBCX_HIDDEN bool nbcxi_sched_sends_posted(const struct nbcx_sched_s *s);
NBCX_HIDDEN int nbcxi_sched_progress(struct nbcx_sched_s *s, bool app,
                                     bool *done);
/* Ends a running schedule with err (the watchdog's timeout): cancels
 * what it posted, as on a transport error. */
NBCX_HIDDEN void nbcxi_sched_abort(struct nbcx_sched_s *s, int err);
/* Persistent operations: after prepare() and once s->tag.seq is set, creates
 * the transport's prepared request of every send and receive (when the
 * transport has them), so that begin() allocates nothing and only starts
 * them. On failure everything prepared is released. */
NBCX_HIDDEN int nbcxi_sched_prepare_requests(struct nbcx_sched_s *s);
/* Releases what nbcxi_sched_prepare_requests made (destroy does too). */
NBCX_HIDDEN void nbcxi_sched_release_requests(struct nbcx_sched_s *s);


/* Pacing (pace.c), called by the executor under the engine lock: an
 * operation that received `bytes`, begun at t0, found pending by a progress pass at
 * `pending` (0: none since t0) and done by the one at now; the predicted
 * completion time of a request or operation of `bytes` posted at t0 (0:
 * no prediction yet). The progress thread sleeps until the earliest
 * (s->pace.next_due). */
NBCX_HIDDEN void nbcxi_pace_sample(size_t bytes, int64_t t0, int64_t pending,
                                   int64_t now);
/* Forgets every sample (tests). */
NBCX_HIDDEN void nbcxi_pace_reset(void);
/* What an operation's duration scales with: the larger of the bytes it
 * sends and receives (a broadcast's leaf only receives). */
static inline size_t nbcxi_sched_bytes(const struct nbcx_sched_s *s)
{
    return s->exec.send_bytes > s->exec.recv_bytes ? s->exec.send_bytes
                                                   : s->exec.recv_bytes;
}
/* Whether a request or operation of `bytes` is timed at all: smaller
 * ones are latency-bound, neither samples nor predicted, and the
 * executor reads no clock for them (a read costs 20-60 ns on a VM, a
 * few percent of a small operation). */
enum { NBCXI_PACE_MIN_BYTES = 32768 };
static inline bool nbcxi_pace_timed(size_t bytes)
{
    return bytes >= NBCXI_PACE_MIN_BYTES;
}
NBCX_HIDDEN int64_t nbcxi_pace_due(size_t bytes, int64_t t0);
/* The bandwidth measured so far, in bytes per nanosecond (GB/s); 0 until
 * a request large enough to be a sample has completed. */
NBCX_HIDDEN double nbcxi_pace_bandwidth(void);

#endif /* NBCX_SCHED_H */
