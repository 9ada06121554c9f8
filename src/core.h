/*
 * core.h - internal definitions shared by the layers of libnbcx.
 *
 * Layers: api/ (argument checking, requests), coll/ (pure schedule
 * builders), sched/ (the DAG and its executor), progress/ (who runs the
 * executor), transport/ (point-to-point backends), mpi/ (the MPI face).
 * Nothing here includes mpi.h.
 */
#ifndef NBCX_CORE_H
#define NBCX_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nbcx.h"

#if defined(__GNUC__)
#define NBCX_HIDDEN __attribute__((visibility("hidden")))
#else
#define NBCX_HIDDEN
#endif

/* ------------------------------------------------------------------ */
/* Datatypes                                                           */
/* ------------------------------------------------------------------ */

enum { NBCXI_TYPE_MAGIC = 0x6e627479u, NBCXI_OP_MAGIC = 0x6e626f70u,
       NBCXI_COMM_MAGIC = 0x6e62636du, NBCXI_REQUEST_MAGIC = 0x6e627271u,
       /* an object released through its handle (api/pool.c) */
       NBCXI_DEAD_MAGIC = 0x64656164u };

/* Memory of objects reached through handles, kept for reuse by the same
 * kind instead of being freed, so that stale handles can be detected
 * (api/pool.c). Every such object starts with its uint32_t magic. */
struct nbcxi_pool {
    pthread_mutex_t lock;
    void *free;
    size_t size;
};
#define NBCXI_POOL_INIT(type) { PTHREAD_MUTEX_INITIALIZER, NULL, sizeof(type) }
/* A zeroed object (NULL: out of memory). */
NBCX_HIDDEN void *nbcxi_pool_alloc(struct nbcxi_pool *p);
/* Zeroes obj, marks it dead_magic and keeps it for reuse. */
NBCX_HIDDEN void nbcxi_pool_free(struct nbcxi_pool *p, void *obj,
                                 uint32_t dead_magic);
extern NBCX_HIDDEN struct nbcxi_pool nbcxi_comm_pool, nbcxi_op_pool,
    nbcxi_type_pool, nbcxi_request_pool;

/* Returns code after recording, for this thread, a message that says
 * more than nbcx_error_string(code) (which handle, which misuse);
 * nbcx_error_detail(code) returns it (api/errors.c). */
NBCX_HIDDEN int nbcxi_error(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Records why handle h of a pooled kind (a "communicator", freed by
 * `freed_by`) is not live, from its magic: freed (0 or NBCXI_DEAD_MAGIC)
 * or never one of ours; returns code. */
NBCX_HIDDEN int nbcxi_bad_handle(int code, const char *kind,
                                 const char *freed_by, uint32_t magic,
                                 const void *h);

/* Built-in datatype ids are the small constants of nbcx.h (1..17). */
enum { NBCXI_TYPE_FIRST = 1, NBCXI_TYPE_LAST = 17 };
/* Built-in operation ids are the small constants of nbcx.h (1..12). */
enum { NBCXI_OP_FIRST = 1, NBCXI_OP_LAST = 12 };

struct nbcx_datatype_s;

/* How a face (e.g. MPI) moves and combines elements of a derived type. */
struct nbcxi_type_face {
    /* typed layout -> count*size contiguous bytes */
    int (*pack)(const void *src, int count, struct nbcx_datatype_s *t,
                void *dst);
    /* count*size contiguous bytes -> typed layout */
    int (*unpack)(const void *src, int count, struct nbcx_datatype_s *t,
                  void *dst);
    /* inout = in op inout for a built-in operation id */
    int (*reduce)(const void *in, void *inout, int count,
                  struct nbcx_datatype_s *t, int op_id);
    void (*release)(struct nbcx_datatype_s *t);
};

struct nbcx_datatype_s {
    uint32_t magic;
    int id;               /* built-in id, or 0 for a face's derived type */
    const char *name;
    size_t size;          /* bytes of data per element                 */
    ptrdiff_t extent;     /* stride between consecutive elements       */
    ptrdiff_t true_lb;    /* first byte touched, relative to buffer    */
    ptrdiff_t true_extent;/* bytes spanned by one element              */
    bool contiguous;      /* elements are size bytes, back to back     */
    const struct nbcxi_type_face *face; /* NULL for built-ins           */
    void *handle;         /* the face's own handle (e.g. MPI_Datatype) */
    atomic_int refs;      /* user reference + operations in flight     */
};

/* Resolves a handle; NULL if it is not a valid, live datatype. */
NBCX_HIDDEN struct nbcx_datatype_s *nbcxi_type(nbcx_datatype h);
NBCX_HIDDEN void nbcxi_type_retain(struct nbcx_datatype_s *t);
NBCX_HIDDEN void nbcxi_type_release(struct nbcx_datatype_s *t);
/* Bytes to allocate for count elements laid out as the type, and the
 * offset to add to the allocation to get the buffer pointer. */
NBCX_HIDDEN size_t nbcxi_type_span(const struct nbcx_datatype_s *t,
                                   int count, ptrdiff_t *shift);
/* Copies count elements between two buffers of the same type. */
NBCX_HIDDEN int nbcxi_type_copy(const void *src, void *dst, int count,
                                struct nbcx_datatype_s *t);
NBCX_HIDDEN int nbcxi_type_pack(const void *src, int count,
                                struct nbcx_datatype_s *t, void *dst);
NBCX_HIDDEN int nbcxi_type_unpack(const void *src, int count,
                                  struct nbcx_datatype_s *t, void *dst);
/* Moves scount elements of stype into dcount elements of dtype, which
 * hold the same bytes of data (matching type signatures). */
NBCX_HIDDEN int nbcxi_type_move(const void *src, int scount,
                                struct nbcx_datatype_s *stype, void *dst,
                                int dcount, struct nbcx_datatype_s *dtype);

/* ------------------------------------------------------------------ */
/* Operations                                                          */
/* ------------------------------------------------------------------ */

struct nbcx_op_s {
    uint32_t magic;
    int id;                /* built-in id, or 0 for a user operation */
    bool commutative;
    nbcx_user_fn *fn;      /* user operations only */
    void *ctx;
    void (*release)(struct nbcx_op_s *op); /* frees ctx, if any */
    atomic_int refs;
};

NBCX_HIDDEN struct nbcx_op_s *nbcxi_op(nbcx_op h);
NBCX_HIDDEN void nbcxi_op_retain(struct nbcx_op_s *op);
NBCX_HIDDEN void nbcxi_op_release(struct nbcx_op_s *op);
/* NBCX_SUCCESS if op is defined on type (always for user operations). */
NBCX_HIDDEN int nbcxi_op_check(const struct nbcx_op_s *op,
                               const struct nbcx_datatype_s *t);
/* inout[i] = in[i] op inout[i] */
NBCX_HIDDEN int nbcxi_reduce(const void *in, void *inout, int count,
                             struct nbcx_datatype_s *t, struct nbcx_op_s *op);

/* ------------------------------------------------------------------ */
/* Transports                                                          */
/* ------------------------------------------------------------------ */

typedef struct nbcxi_transport nbcxi_transport;

/* A transport is a table of a few functions. Requests live in slots of
 * req_size bytes owned by the executor, kept in one contiguous array so a
 * transport can test many at once (MPI_Testsome). */
struct nbcxi_transport_ops {
    const char *name;
    size_t req_size;
    int (*isend)(nbcxi_transport *t, const void *buf, int count,
                 struct nbcx_datatype_s *type, int peer, int tag, void *req);
    int (*irecv)(nbcxi_transport *t, void *buf, int count,
                 struct nbcx_datatype_s *type, int peer, int tag, void *req);
    /* Tests the n requests in reqs; writes the indices of completed ones
     * to idx and their number to *ndone. Completed slots are released. */
    int (*testsome)(nbcxi_transport *t, int n, void *reqs, int *ndone,
                    int *idx);
    /* Cancels one request and releases its slot (used on errors). */
    void (*cancel)(nbcxi_transport *t, void *req);
    void (*destroy)(nbcxi_transport *t);
    /* Optional, for persistent operations (NULL: they post with isend and
     * irecv at every start). send_init/recv_init prepare a request once,
     * without starting it (MPI_Send_init); start starts n prepared
     * requests, copied into consecutive slots (MPI_Startall); after
     * testsome completes such a copy, the prepared request remains and
     * can be started again. free_prepared releases one (MPI_Request_free).
     * A transport has all five or none. */
    int (*send_init)(nbcxi_transport *t, const void *buf, int count,
                     struct nbcx_datatype_s *type, int peer, int tag,
                     void *req);
    int (*recv_init)(nbcxi_transport *t, void *buf, int count,
                     struct nbcx_datatype_s *type, int peer, int tag,
                     void *req);
    int (*start)(nbcxi_transport *t, int n, void *reqs);
    /* Cancels a started copy without releasing the prepared request
     * (free_prepared may then be called even before it completes). */
    void (*cancel_prepared)(nbcxi_transport *t, void *req);
    void (*free_prepared)(nbcxi_transport *t, void *req);
    /* The peers are threads of this process (inproc): a start can
     * complete other ranks' operations, which the engine then progresses
     * at once (nbcxi_start) instead of at the progress thread's next
     * poll. */
    bool in_process;
};

struct nbcxi_transport {
    const struct nbcxi_transport_ops *ops;
    int tag_ub;  /* largest usable tag */
    void *state; /* the transport's own data */
};

/* ------------------------------------------------------------------ */
/* Communicators                                                       */
/* ------------------------------------------------------------------ */

/* A neighbourhood topology (api/topo.c): this rank's neighbours in
 * buffer-block order (NBCX_PROC_NULL: none), and the schedule tag of each
 * edge, which makes the i-th receive meet the right send when a pair of
 * ranks shares several edges. Immutable once attached; a replaced one
 * stays allocated (linked by `older`) until the communicator dies, so a
 * collective being built on another thread never sees it freed. */
struct nbcxi_topo {
    int indegree, outdegree;
    int *sources, *destinations;
    int *rtags, *stags;
    int ndims;                 /* Cartesian: dimensions; -1: a graph */
    int *dims, *periods;
    struct nbcxi_topo *older;
};

struct nbcx_comm_s {
    uint32_t magic;
    int rank, size;
    nbcxi_transport *tp;
    /* Tag space (api/comm.c): slot k owns the transport tags
     * [k << 12, (k + 1) << 12). Persistent requests take slots
     * [0, npers) in the order they are planned, from pseq; nonblocking
     * operations take [npers, nslots) in the order they start, from seq.
     * A slot is held (bit set in `held`) from start to completion, or
     * from plan to free; a start whose slot is still held fails with
     * NBCX_ERR_EXHAUSTED, so no tag is ever given to two operations that
     * can be in flight at once. */
    atomic_uint seq;       /* sequence number of the next nonblocking op */
    atomic_uint pseq;      /* sequence number of the next persistent one */
    unsigned nslots, npers;
    _Atomic uint64_t *held; /* nslots bits */
    /* 0, or the error that broke the communicator: a start whose tag
     * slot was held (NBCX_ERR_EXHAUSTED) may have succeeded on other
     * ranks, whose messages this rank would then meet in a later
     * operation of the same slot; every later start and plan on it fails
     * with this error instead. A timeout (progress/watchdog.c) breaks it
     * with NBCX_ERR_TIMEOUT, which also ends its operations in flight. */
    atomic_int broken;
    atomic_int refs;       /* user reference + operations in flight */
    struct nbcxi_cache *cache; /* schedules kept for reuse (api/cache.c) */
    _Atomic(struct nbcxi_topo *) topo; /* neighbours, or NULL */
    /* Watchdog (progress/watchdog.c): the no-progress timeout in ns (0:
     * NBCX_TIMEOUT's, < 0: off; nbcx_comm_set_timeout), and whether the
     * diagnosis of a timeout was printed. */
    _Atomic int64_t timeout_ns;
    atomic_bool diagnosed;
};

/* Takes ownership of tp; on failure tp is destroyed. */
NBCX_HIDDEN int nbcxi_comm_create(int rank, int size, nbcxi_transport *tp,
                                  nbcx_comm *out);
NBCX_HIDDEN struct nbcx_comm_s *nbcxi_comm(nbcx_comm h);
NBCX_HIDDEN void nbcxi_comm_retain(struct nbcx_comm_s *c);
NBCX_HIDDEN void nbcxi_comm_release(struct nbcx_comm_s *c);
/* Frees a topology and every older one it links to (api/topo.c). */
NBCX_HIDDEN void nbcxi_topo_free(struct nbcxi_topo *t);

/* 0, or the error that broke c (NBCX_ERR_EXHAUSTED, NBCX_ERR_TIMEOUT). */
static inline int nbcxi_comm_broken(struct nbcx_comm_s *c)
{
    return atomic_load_explicit(&c->broken, memory_order_acquire);
}

/* Transport tag of schedule tag `tag` of the operation in tag slot
 * `slot`. */
static inline int nbcxi_tag(unsigned slot, int tag)
{
    return (int)((slot << 12) | (unsigned)tag);
}

/* Takes the tag slot of the next operation of comm, persistent or not;
 * *seq gets its sequence number (of its kind). NBCX_ERR_EXHAUSTED when
 * the slot is still held by an operation that has not completed (or a
 * persistent request not freed): the sequence number is used up all the
 * same, as it is on the other ranks. */
NBCX_HIDDEN int nbcxi_slot_take(struct nbcx_comm_s *c, bool persistent,
                                unsigned *seq, unsigned *slot);
NBCX_HIDDEN void nbcxi_slot_release(struct nbcx_comm_s *c, unsigned slot);

/* ------------------------------------------------------------------ */
/* Schedules (see sched/schedule.c and sched/executor.c)               */
/* ------------------------------------------------------------------ */

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
    /* Split-tree progress (progress/split.c): the node's level in a
     * binomial tree, counted from the leaves (1 = the leaf level), with
     * its direction: > 0 for data flowing towards the root (reduce,
     * gather: leaf levels come first), < 0 for data flowing from it
     * (bcast, scatter: leaf levels come last), 0 for no level. */
    int8_t level;
    bool app;      /* run only by the application thread (split mode) */
    int npred;     /* predecessors */
    int pending;   /* predecessors not yet done (run time) */
    int succ;      /* first successor in sched->succ (CSR) */
    int nsucc;
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

struct nbcx_sched_s {
    struct nbcx_comm_s *comm; /* retained */
    int rank, size;
    struct nbcxi_node *nodes;
    int nnodes, nodes_cap;
    struct nbcxi_edge *edges;
    int nedges, edges_cap;
    void **tmps;              /* scratch buffers owned by the schedule */
    int ntmps, tmps_cap;
    int err;                  /* first error met while building */

    /* execution state, set up by nbcxi_sched_begin */
    int *succ;                /* CSR successor lists */
    int *ready;               /* FIFO of nodes ready to run */
    int ready_head, ready_tail;
    unsigned char *reqs;      /* active transport requests (slots) */
    int *req_node;            /* node of each active slot */
    int *done_idx;            /* scratch for testsome */
    int nactive;
    int *polls;               /* POLL nodes started and not yet done */
    int npolls;
    int ndone;
    unsigned seq;             /* sequence number of this operation */
    unsigned slot;            /* its tag slot (struct nbcx_comm_s) */
    bool holds_slot;          /* slot taken and not yet released */
    bool persistent;          /* planned by an nbcx_<op>_init */

    /* progress pacing: when each active slot was posted, and the
     * earliest predicted completion of the active requests (ns, 0 if
     * none can be predicted), see progress/pace.c */
    int64_t *req_t0;
    int64_t next_due;

    /* persistent operations: the transport's prepared request of every
     * send and receive node (NULL: post with isend/irecv), and how many
     * of the last slots are copies of prepared requests not yet started
     * (they are started together, MPI_Startall) */
    unsigned char *prepared;
    int unstarted;
    int failed;   /* a persistent run failed: the error every start gives */

    /* schedule cache (api/cache.c): the call this schedule serves, when
     * it may be reused by an identical one */
    struct nbcxi_cache_key *cache_key;

    /* split-tree progress (progress/split.c) */
    int tree_height;          /* levels of the binomial tree, 0: none   */
    int *deferred;            /* ready application nodes not yet run    */
    int ndeferred;
    int app_up_left;          /* application nodes not done, by side    */
    int app_down_left;

    /* diagnoses (progress/watchdog.c): the collective and algorithm
     * (coll/select.c; NULL: a user schedule), and the watchdog's view:
     * ndone when it last looked, and since when it has not changed (ns,
     * 0: not looked at since the start) */
    const char *op_name, *alg_name;
    int wd_ndone;
    int64_t wd_since;
};

/* Builder-side helpers used by coll/ (all set sched->err on failure and
 * return it; later calls then do nothing, so a builder may check once). */
NBCX_HIDDEN int nbcxi_sched_new(struct nbcx_comm_s *comm,
                                struct nbcx_sched_s **out);
NBCX_HIDDEN void nbcxi_sched_destroy(struct nbcx_sched_s *s);
/* Scratch buffer able to hold count elements of type (typed layout). */
NBCX_HIDDEN void *nbcxi_sched_tmp_typed(struct nbcx_sched_s *s, int count,
                                        struct nbcx_datatype_s *type);
NBCX_HIDDEN void *nbcxi_sched_tmp(struct nbcx_sched_s *s, size_t bytes);
NBCX_HIDDEN nbcx_node nbcxi_send(struct nbcx_sched_s *s, const void *buf,
                                 int count, struct nbcx_datatype_s *type,
                                 int peer, int tag);
NBCX_HIDDEN nbcx_node nbcxi_recv(struct nbcx_sched_s *s, void *buf,
                                 int count, struct nbcx_datatype_s *type,
                                 int peer, int tag);
NBCX_HIDDEN nbcx_node nbcxi_reduce_node(struct nbcx_sched_s *s,
                                        const void *in, void *inout,
                                        int count,
                                        struct nbcx_datatype_s *type,
                                        struct nbcx_op_s *op);
NBCX_HIDDEN nbcx_node nbcxi_copy(struct nbcx_sched_s *s, const void *src,
                                 int scount, struct nbcx_datatype_s *stype,
                                 void *dst, int dcount,
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
 * are otherwise kept in s->deferred until it does. */
/* Builds successor lists and checks the graph is acyclic (NBCX_ERR_NODE
 * otherwise); posts nothing. Idempotent. */
NBCX_HIDDEN int nbcxi_sched_prepare(struct nbcx_sched_s *s);
NBCX_HIDDEN int nbcxi_sched_begin(struct nbcx_sched_s *s, bool *done);
NBCX_HIDDEN int nbcxi_sched_progress(struct nbcx_sched_s *s, bool app,
                                     bool *done);
/* Ends a running schedule with err (the watchdog's timeout): cancels
 * what it posted, as on a transport error. */
NBCX_HIDDEN void nbcxi_sched_abort(struct nbcx_sched_s *s, int err);
/* Persistent operations: after prepare() and once s->seq is set, creates
 * the transport's prepared request of every send and receive (when the
 * transport has them), so that begin() allocates nothing and only starts
 * them. On failure everything prepared is released. */
NBCX_HIDDEN int nbcxi_sched_prepare_requests(struct nbcx_sched_s *s);
/* Releases what nbcxi_sched_prepare_requests made (destroy does too). */
NBCX_HIDDEN void nbcxi_sched_release_requests(struct nbcx_sched_s *s);

/* ------------------------------------------------------------------ */
/* Requests and the progress engine (progress/engine.c)                */
/* ------------------------------------------------------------------ */

struct nbcx_request_s {
    uint32_t magic;          /* NBCXI_REQUEST_MAGIC while the handle lives */
    struct nbcx_sched_s *sched;
    atomic_bool complete;
    int err;
    /* Persistent (nbcx_<op>_init): kept after completion; started is
     * whether it has been started since it last completed and was
     * reported (owner thread only). */
    bool persistent, started;
    struct nbcx_request_s *prev, *next; /* in the engine's active list */
};

/* Starts a built schedule; on success *req owns it, on failure it is
 * destroyed. */
NBCX_HIDDEN int nbcxi_start(struct nbcx_sched_s *s, nbcx_request *req);
/* Plans a built schedule as an inactive persistent request (reserves its
 * sequence number, prepares transport requests); on failure the schedule
 * is destroyed. */
NBCX_HIDDEN int nbcxi_plan(struct nbcx_sched_s *s, nbcx_request *req);

/* Schedule cache (api/cache.c). A communicator's cache is made with it
 * and freed with it; nbcx_comm_free closes it (its schedules are freed,
 * and schedules finishing later are not kept). A completed nonblocking
 * operation's schedule is handed to nbcxi_cache_put with its result: kept
 * if it was labelled for reuse and succeeded, else destroyed. */
struct nbcxi_cache;
NBCX_HIDDEN struct nbcxi_cache *nbcxi_cache_new(void);
NBCX_HIDDEN void nbcxi_cache_free(struct nbcxi_cache *c);
NBCX_HIDDEN void nbcxi_cache_close(struct nbcx_comm_s *comm);
NBCX_HIDDEN void nbcxi_cache_put(struct nbcx_sched_s *s, int err);
/* Drops s's label (schedule destruction). */
NBCX_HIDDEN void nbcxi_cache_forget(struct nbcx_sched_s *s);
NBCX_HIDDEN void nbcxi_cache_stats(unsigned long *hits,
                                   unsigned long *misses);

/* Monotonic clock in nanoseconds. */
NBCX_HIDDEN int64_t nbcxi_now_ns(void);
/* Pacing of the progress thread (progress/pace.c), called by the
 * executor under the engine lock: a p2p request of `bytes` posted at t0
 * completed (seen) at now; the predicted completion time of a request of
 * `bytes` posted at t0 (0: no prediction yet). */
NBCX_HIDDEN void nbcxi_pace_sample(size_t bytes, int64_t t0, int64_t now);
NBCX_HIDDEN int64_t nbcxi_pace_due(size_t bytes, int64_t t0);

/* Whether the rank threads of nbcx_inproc_run calls now running are too
 * many for the cores of the process to poll for each other (more than 4
 * per core, transport/inproc.c): their waiting threads should then sleep
 * and leave the work to the progress thread. */
NBCX_HIDDEN bool nbcxi_inproc_crowded(void);

/* Faces tell the engine whether the communication library may be called
 * from a progress thread (MPI: MPI_THREAD_MULTIPLE); `why` explains a
 * refusal in the one-time warning. */
NBCX_HIDDEN void nbcxi_progress_threads_allowed(bool allowed,
                                                const char *why);
/* Stops the progress thread, if any (a face calls it before its library
 * shuts down, e.g. at MPI_Finalize). */
NBCX_HIDDEN void nbcxi_progress_shutdown(void);
/* The progress description for nbcx_info ("progress=thread cpus=..."). */
NBCX_HIDDEN int nbcxi_progress_describe(char *buf, size_t len);

/* ------------------------------------------------------------------ */
/* Small utilities                                                     */
/* ------------------------------------------------------------------ */

#define NBCXI_MIN(a, b) ((a) < (b) ? (a) : (b))
#define NBCXI_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Address of element block i (each block of count elements of t). */
static inline void *nbcxi_at(const void *buf, ptrdiff_t i, int count,
                             const struct nbcx_datatype_s *t)
{
    return (char *)(uintptr_t)buf + i * (ptrdiff_t)count * t->extent;
}

/* Reads an environment variable once per call site; NULL if unset/empty */
NBCX_HIDDEN const char *nbcxi_getenv(const char *name);
NBCX_HIDDEN size_t nbcxi_env_size(const char *name, size_t dflt);

#endif /* NBCX_CORE_H */
