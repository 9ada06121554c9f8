/*
 * transport.h - what a point-to-point backend offers the layers above:
 * one table of functions (struct nbcxi_transport_ops) and a handle.
 *
 * The interface sits at the bottom floor, with the objects of base/ that
 * hold it (a communicator holds its transport), so that no floor reaches
 * up to transport/ for it. A backend lives in a folder of its own under
 * transport/ (inproc/, mpi/, ucx/) and is reached only through this table: the executor
 * (sched/executor.c) posts and tests requests, the progress engine asks
 * whether peers are threads of this process, the algorithm selection
 * (coll/select.c) takes the collectives it serves natively. Nothing above
 * names a backend. This header depends on nothing else of libnbcx (the
 * types it mentions are opaque here), so every floor may include it.
 */
#ifndef NBCX_TRANSPORT_H
#define NBCX_TRANSPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct nbcx_datatype_s;
struct nbcxi_algorithm;

typedef struct nbcxi_transport nbcxi_transport;

/* What a backend that can be created by name (ops->create) gets from
 * whoever starts it (the MPI face, nbcx_comm_from_mpi): its rank and the
 * group's size, and two collectives over the group:
 *   - allgather of equal-sized blocks (rank i's `bytes` bytes land at
 *     out + i * bytes);
 *   - first_failed: every member learns the lowest rank whose ok is
 *     false (*rank = -1: none). It needs no memory per rank, so that a
 *     member that could not allocate (say, allgather's out) or set up
 *     says so and all stop together, instead of returning alone and
 *     leaving the others waiting in the next collective.
 * Used only while the transport is created; nothing of it is kept. Both
 * return an nbcx error code. */
struct nbcxi_bootstrap {
    int rank, size;
    int (*allgather)(void *ctx, const void *in, size_t bytes, void *out);
    int (*first_failed)(void *ctx, bool ok, int *rank);
    void *ctx;
};

/* A transport is a table of a few functions. Requests live in slots of
 * req_size bytes owned by the executor, kept in one contiguous array so a
 * transport can test many at once (MPI_Testsome). */
struct nbcx_comm_s;

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
    /* What the transport can do (enum nbcxi_cap, below): the engine and
     * the progress modes decide from these, never from a backend's name
     * or a setting. */
    unsigned caps;
    /* Optional, for NBCXI_CAP_IN_PROCESS transports: whether the peers' threads
     * now have cores enough to poll for each other (then their own
     * start/test/wait calls move their operations and the progress thread
     * need not be woken for them); NULL: never. */
    bool (*peers_poll)(void);
    /* Optional: collective algorithms the backend serves natively (e.g.
     * inproc's shared-memory "slots"), an array ended by an entry whose
     * name is NULL (struct nbcxi_algorithm, coll/coll.h); they join the
     * algorithm table of their collective for communicators of this
     * transport. native_max gives the largest message (bytes) for which
     * the automatic choice prefers them (0: only when forced). */
    const struct nbcxi_algorithm *algorithms;
    size_t (*native_max)(const nbcxi_transport *t);
    /* Optional: the fragment size (bytes) of pipelined algorithms on this
     * transport when the user chose none (NBCX_SEGSIZE,
     * nbcx_segsize_set, a NBCX_TUNING rule); 0: nbcx's default, 64 KiB.
     * For a transport whose cost per message is high (coll/select.c). */
    size_t segsize;
    /* Optional, the capability "carries without progress calls up to N
     * bytes": the largest operation (the larger of the bytes it sends and
     * receives) whose messages this transport carries with no progress
     * call on either side once the start has posted them: each leaves
     * whole at its post and is buffered on arrival (eager, no
     * handshake). Auto mode leaves such an operation to the application
     * when its start posted every send (progress/mode_auto.c). NULL or 0:
     * none beyond NBCX_AUTO_THREAD_BYTES. Read through
     * nbcxi_transport_carries. */
    size_t (*carries_max)(const nbcxi_transport *t);
    /* Optional: makes a transport for the group that b describes
     * (collective over it: every member calls it, and all succeed or all
     * fail); the backend can then be chosen by name (NBCX_TRANSPORT).
     * Errors are nbcx codes, with a message (nbcxi_error). */
    int (*create)(const struct nbcxi_bootstrap *b, nbcxi_transport **out);
    /* Optional, for progress that sleeps: event_fd gives a file
     * descriptor that becomes readable when the transport has something
     * to do (a message arrived, a send completed), -1 if none; arm, with
     * the engine lock held, asks for the next event to be signalled
     * there: it returns 0 when armed (the caller may sleep in poll() on
     * the fd), 1 when events are already pending (progress again first),
     * -1 when the transport cannot sleep now (poll as usual). A
     * transport has both or neither, and NBCXI_CAP_WAKES with them. */
    int (*event_fd)(nbcxi_transport *t);
    int (*arm)(nbcxi_transport *t);
    /* Optional: a short description of the backend as it runs in this
     * process, e.g. "ucx(tls=tcp)", for nbcx_info; writes "" when the
     * backend is not in use. */
    void (*describe)(char *buf, size_t len);
    /* Optional: nbcx_comm_split (api/comm.c) of the communicator c that
     * t serves (c->tp, or the transport c keeps): collective over c, with
     * MPI_Comm_split's semantics (color NBCX_UNDEFINED: *out is
     * NBCX_COMM_NULL); runs its exchanges on c's own collectives. NULL:
     * this transport's communicators cannot be split. */
    int (*split)(nbcxi_transport *t, struct nbcx_comm_s *c, int color,
                 int key, struct nbcx_comm_s **out);
    /* Optional, the capability "knows the nodes": the node of rank r of
     * t's group (0 <= r < size), named by the lowest rank on it (so
     * node_of(r) <= r, and node_of(r) == r for the lowest rank of each
     * node); the same answer on every rank, fixed at creation. -1: this
     * transport does not know where its ranks are (NULL: never knows).
     * The node-aware algorithms (coll/hier.c) read it through
     * nbcxi_transport_node; where it is not known they run flat. */
    int (*node_of)(const nbcxi_transport *t, int r);
};

/* The capabilities a backend declares (struct nbcxi_transport_ops.caps,
 * a set of these), with the fourth, "carries without progress calls up
 * to N bytes", in carries_max:
 *   IN_PROCESS      the peers are threads of this process (inproc): a
 *                   start can complete other ranks' operations, which the
 *                   engine then progresses at once (nbcxi_start) instead
 *                   of at the progress thread's next poll; and a start is
 *                   never handed to the progress thread (it progresses
 *                   the peers' operations itself);
 *   WAKES           it can wake a sleeping thread when something arrives
 *                   (event_fd and arm): the progress thread sleeps on it
 *                   instead of polling on the paced timer;
 *   PROGRESS_THREAD it is safe to call from a progress thread (under the
 *                   engine lock, from another thread than the one that
 *                   made the communicator). Without it, the progress mode
 *                   is caller unless the program chose one (NBCX_PROGRESS,
 *                   nbcx_progress_set): the unit tests' loopback transport,
 *                   one thread's queues, declares it not;
 *   COMM_PARALLEL   calls on different communicators may run at once
 *                   from different threads (each under its communicator's
 *                   progress lock, base.h: plock): the backend shares no
 *                   unguarded state between communicators. Without it
 *                   every communicator of the backend shares one lock
 *                   (UCX: one worker per process, which UCX may give
 *                   only UCS_THREAD_MODE_SERIALIZED). */
enum nbcxi_cap {
    NBCXI_CAP_IN_PROCESS = 1u << 0,
    NBCXI_CAP_WAKES = 1u << 1,
    NBCXI_CAP_PROGRESS_THREAD = 1u << 2,
    NBCXI_CAP_COMM_PARALLEL = 1u << 3,
};

/* Where a transport's data moves between the ranks of its group, as far
 * as the backend knows when it is made: through this node's memory
 * (shared memory, threads of one process: moving data is copying, done
 * by whichever thread polls), over a network (the wire moves it, the
 * CPU only starts it), or not known (0). Auto mode's rule for copies
 * reads it from the first operation on (progress/mode_auto.c); the measured
 * bandwidth decides only where it is not known. */
enum nbcxi_medium {
    NBCXI_MEDIUM_UNKNOWN = 0,
    NBCXI_MEDIUM_MEMORY,
    NBCXI_MEDIUM_NETWORK,
};

struct nbcxi_transport {
    const struct nbcxi_transport_ops *ops;
    int tag_ub;  /* largest usable tag */
    void *state; /* the transport's own data */
    enum nbcxi_medium medium; /* set by the backend at creation */
    /* Every rank of the group runs on this node, and every rank's
     * transport says the same (it follows from where the ranks are, not
     * from settings): the schedules may depend on it. Set by the
     * backend at creation; false where it does not know. */
    bool one_node;
    /* How many nodes node_of names (ops node_of), set by the backend at
     * creation with it; 0: not known. The automatic choice reads it
     * (the ranks per node, on average), as a count costs no scan. */
    int nnodes;
};

/* The node of rank r (the lowest rank on it), or -1: t does not know
 * (transport ops node_of). */
static inline int nbcxi_transport_node(const nbcxi_transport *t, int r)
{
    return t->ops->node_of ? t->ops->node_of(t, r) : -1;
}

/* Whether t has capability cap (enum nbcxi_cap). */
static inline bool nbcxi_transport_can(const nbcxi_transport *t,
                                       enum nbcxi_cap cap)
{
    return (t->ops->caps & (unsigned)cap) != 0;
}

/* The largest operation t carries with no progress call (carries_max;
 * 0: none). */
static inline size_t nbcxi_transport_carries(const nbcxi_transport *t)
{
    return t->ops->carries_max ? t->ops->carries_max(t) : 0;
}

/* The backends built into libnbcx that serve algorithms natively or can
 * be created by name, ended by NULL: generated by the build
 * (cmake/backends.c.in, from each backend's nbcx_backend() line), so
 * that algorithm names (nbcx_algorithm_names, NBCX_<COLL>_ALG) are known
 * before any communicator exists, and a face can create a backend by
 * name (NBCX_TRANSPORT) without naming it in its code. */
extern const struct nbcxi_transport_ops *const nbcxi_backends[];
/* The names of backends that can be created by name but were not built
 * (their library was not found at configure time), ended by NULL: also
 * generated (cmake/backends.c.in). */
extern const char *const nbcxi_backends_off[];
/* The built-in backend called name that can be created by name, or NULL;
 * the names of the others are appended to known (len bytes, a string:
 * what it holds stays first), ", "-separated, for the error message.
 * Also generated (cmake/backends.c.in). */
const struct nbcxi_transport_ops *nbcxi_backend_named(const char *name,
                                                      char *known,
                                                      size_t len);

/* ---- backends built as loadable modules ----
 *
 * A backend whose nbcx_backend() line says MODULE (e.g. ucx, so that
 * libnbcx does not link UCX and no program loads UCX's memory hooks
 * unless it asks for that transport) is built as libnbcx-<name>.so, a
 * plugin that links its own libraries but not libnbcx, whose internals
 * are hidden. The registry holds a stand-in for it (base/module.c) with
 * its name, create and describe: the first create loads the module
 * (dlopen; NBCX_MODULE_PATH, then the build tree, then
 * <libdir>/nbcx/), all ranks agree on whether it loaded, and its own
 * table then serves every transport it creates. The module exports one
 * function, nbcx_module_<name> (nbcxi_module_init_fn), which gets the few
 * functions of base/ its backend calls (struct nbcxi_module_host: they
 * are forwarded to libnbcx by base/module_base.c, compiled into the
 * module) and returns the backend's table, or NULL with a reason in why
 * when the module was built for another libnbcx. A module backend cannot
 * serve algorithms natively (their names must be known before it is
 * loaded). */

/* Bumped whenever this header, struct nbcx_datatype_s or the host table
 * change in a way a module built elsewhere would not notice. */
#define NBCXI_MODULE_ABI 2u

struct nbcxi_module_host {
    unsigned abi;             /* NBCXI_MODULE_ABI of libnbcx */
    unsigned version;         /* nbcx's, major * 10000 + minor * 100 + patch */
    size_t ops_size;          /* sizeof(struct nbcxi_transport_ops) */
    size_t type_size;         /* sizeof(struct nbcx_datatype_s) */
    int (*verror)(int code, const char *fmt, va_list ap);
    const char *(*getenv)(const char *name);
    int (*type_pack)(const void *src, int count, struct nbcx_datatype_s *t,
                     void *dst);
    int (*type_unpack)(const void *src, int count, struct nbcx_datatype_s *t,
                       void *dst);
};

typedef const struct nbcxi_transport_ops *
nbcxi_module_init_fn(const struct nbcxi_module_host *host, char *why,
                     size_t len);

#endif /* NBCX_TRANSPORT_H */
