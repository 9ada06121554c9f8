/*
 * request.h - requests and what the progress layer offers the layers
 * around it: the API starts and plans schedules (nbcxi_start,
 * nbcxi_plan), faces (face/mpi.c) say whether threads may call
 * their library and stop the thread before it shuts down.
 */
#ifndef NBCX_REQUEST_H
#define NBCX_REQUEST_H

#include "../sched/sched.h"

struct nbcx_request_s {
    uint32_t magic;          /* NBCXI_REQUEST_MAGIC while the handle lives */
    struct nbcx_sched_s *sched;
    atomic_bool complete;
    int err;
    /* Persistent (nbcx_<op>_init): kept after completion; started is
     * whether it has been started since it last completed and was
     * reported (owner thread only). The request keeps its own copy of
     * sched->build.persistent (set together, in new_request) because a
     * nonblocking request outlives its schedule: the schedule is retired
     * at completion (to the cache, or destroyed), and the handle is still
     * tested and freed after that. */
    bool persistent, started;
    /* Auto mode (mode_auto.c): a small operation left to the application's
     * own calls; the progress thread looks at it only once per watch
     * period (progress_thread.c). Reset at every start. */
    bool lazy;
    /* Auto mode, lazy: the watch leaves the operation alone until
     * look_gap ns (0: no wait) have passed since the application's last
     * progress pass, seen as a change of the engine's count of such
     * passes (passes_seen) at quiet_since (request.c). */
    int64_t look_gap, quiet_since;
    unsigned long passes_seen;
    /* Under the progress lock of the operation's communicator
     * (engine.c): its schedule has begun (a start handed over has not,
     * until the progress thread adopts it); the executor found it done
     * and its completion is under way (no pass touches it again). Both
     * are reset by the owner at every start, before the request is
     * published to other threads. */
    bool begun, ending;
    /* Its start's mode may set work aside for the application thread
     * (split mode: struct nbcxi_progress_mode's defers); set by the owner
     * before the start, read under the engine lock. */
    bool defers;
    struct nbcx_request_s *prev, *next; /* in the engine's active list */
    struct nbcx_request_s *handed;      /* in the hand-over stack */
    /* The mode a handed-over start was made in (engine.c adopts it so) */
    const struct nbcxi_progress_mode *handed_mode;
    /* The completion callback (nbcx_request_on_complete), under the
     * engine lock: fn and arg, and the notice for the next completion,
     * allocated ahead (at registration, and at each start of a
     * persistent request) so that finish() never allocates. */
    nbcx_complete_fn cb_fn;
    void *cb_arg;
    struct nbcxi_notice *cb_notice;
    struct nbcxi_trace_req trace; /* NBCX_TRACE only (base/trace.h) */
};

/* Starts a built schedule; on success *req owns it, on failure it is
 * destroyed. */
NBCX_HIDDEN int nbcxi_start(struct nbcx_sched_s *s, nbcx_request *req);
/* Plans a built schedule as an inactive persistent request (reserves its
 * sequence number, prepares transport requests); on failure the schedule
 * is destroyed. */
NBCX_HIDDEN int nbcxi_plan(struct nbcx_sched_s *s, nbcx_request *req);


/* Faces tell the engine whether the communication library may be called
 * from a progress thread (MPI: MPI_THREAD_MULTIPLE); `why` explains a
 * refusal in the one-time warning. */
NBCX_HIDDEN void nbcxi_progress_threads_allowed(bool allowed,
                                                const char *why);
/* A face has made a communicator and told the placement where the node's
 * processes run (nbcxi_placement_node): where the mode in force runs a
 * progress thread, it is placed now (hwloc's topology, 8-13 ms of CPU
 * here), while the program sets up, rather than beside its first
 * collectives (modes.c). */
NBCX_HIDDEN void nbcxi_progress_prepare(void);
/* Stops the progress thread, if any (a face calls it before its library
 * shuts down, e.g. at MPI_Finalize). */
NBCX_HIDDEN void nbcxi_progress_shutdown(void);
/* The progress description for nbcx_info ("progress=thread cpus=...
 * bandwidth=...", the bandwidth measured so far, sched/pace.c). */
NBCX_HIDDEN int nbcxi_progress_describe(char *buf, size_t len);


/* Where the progress thread runs (placement.c): a face that knows the
 * other processes of this node (MPI: MPI_Comm_split_type SHARED) tells
 * which cores their application threads are bound to, so that an idle
 * core can be found. */
/* The calling process's binding as an hwloc list string ("0", "0-3"). */
NBCX_HIDDEN int nbcxi_placement_self(char *buf, size_t len);
/* The bindings of the node's processes (lists as above, ours included)
 * and our index among them. */
NBCX_HIDDEN void nbcxi_placement_node(const char *const *lists, int n,
                                      int me);
/* The progress mode in force (NBCX_PROGRESS_*), and the algorithm it
 * wants for collective `coll` (enum nbcxi_coll) when none is forced
 * (split mode: the binomial trees it splits), NULL for no preference. */
NBCX_HIDDEN int nbcxi_progress_mode_id(void);
NBCX_HIDDEN const char *nbcxi_progress_algorithm(int coll);

#endif /* NBCX_REQUEST_H */
