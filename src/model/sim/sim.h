/*
 * sim.h - the LogGP simulator (model/sim/, docs/sim.md): the real
 * builders' schedules of P virtual ranks, run in simulated time.
 *
 *   params.c  the parameter file (JSON, format "nbcx-loggp/1")
 *   build.c   every rank's schedule, built by the real builders on a
 *             communicator of the sim transport, kept in a compact form,
 *             and the matching of sends to receives (MPI order)
 *   simulate.c  the discrete-event simulation of the compact graphs
 *   exec.c    the data mode: the real executor, real data, no time
 *
 * Two steps, so that one build serves many simulations (nbcx-tune: the
 * same schedules under several parameter files, or with and without a
 * computation):
 *
 *     struct nbcxi_sim_job *job;
 *     nbcxi_sim_build(&cfg, &job, err, sizeof err);      // schedules
 *     nbcxi_sim_simulate(job, &params, &run, &res);       // times
 *     nbcxi_sim_free(job);
 *
 * nbcxi_sim_run does both for one configuration. Times are microseconds.
 */
#ifndef NBCX_SIM_H
#define NBCX_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- parameters (params.c) ---- */

struct nbcxi_loggp {
    double L; /* latency, µs                                  */
    double o; /* CPU overhead per message, at send and receive */
    double g; /* gap between consecutive messages of a NIC     */
    double G; /* µs per byte                                   */
};

struct nbcxi_sim_params {
    char source[256];
    int cores_per_node;
    struct nbcxi_loggp intra, inter;
    /* which blocks the file has (nbcx-loggp measures one per run): a
     * simulation that needs a missing one is refused (NBCXI_SIM_EARG) */
    bool has_intra, has_inter;
    /* "inter_link": "shared": one link carries every inter-node message,
     * both directions (tools/emunet: one rate-limited loopback); default
     * "duplex": each node has its own send and receive interfaces. A
     * shared link cannot be simulated folded (NBCXI_SIM_EARG). */
    bool inter_shared;
    /* intra_cpu_share f in [0, 1] ("intra_cpu_share": f, or
     * "intra_link": "cpu" for 1; default 0, "nic"): inside a node the
     * CPUs move the bytes (shared memory with copy-in/copy-out, as Open
     * MPI's vader without a single-copy mechanism): f (m-1)G of a
     * message is also CPU time of its sender (from injection) and of its
     * receiver (from when its NIC takes it). */
    double intra_cpu_share;
    double copy_per_byte;   /* µs per byte of a local copy  */
    double reduce_per_byte; /* µs per byte of a reduction   */
    /* Copies and reductions of at most cache_bytes bytes (optional, 0:
     * none) run at the cached rates instead, measured on buffers that
     * stay in the core's cache (optional; default the rates above). */
    double cache_bytes, copy_per_byte_cached, reduce_per_byte_cached;
    /* nbcx's own engine, outside LogGP (optional keys, default 0):
     * start_cost  µs of every operation's start (the request, the
     *             schedule's reset, the first executor pass), on the
     *             rank's CPU before its first node runs;
     * node_cost   µs of the executor per schedule node it runs (ready
     *             queue, dispatch, completion bookkeeping), on the CPU
     *             with the node: a send's o, a receive's posting, a copy
     *             or reduction, a call;
     * message_cost  µs more than LogGP's o at each end of a message:
     *             what nbcx's nonblocking requests and their polling
     *             cost beyond MPI's blocking send and receive, which
     *             the o of nbcx-loggp measures. */
    double start_cost, node_cost, message_cost;
    /* Oversubscription ("sched_latency": s, optional; its presence sets
     * time_share): when a node has more ranks than cores_per_node, rank
     * r of a node runs on core (r mod C) mod cores_per_node, the CPU
     * work of the ranks of one core is serialised, and a rank that was
     * waiting for a message pays s (k - 1) before its CPU handles it, k
     * being the ranks on its core (the scheduler switching it in past
     * its k - 1 core-mates, which poll and yield: Open MPI with
     * --oversubscribe). Off (as before) without the key, and on nodes
     * with no more ranks than cores. simulate.c has the details. */
    bool time_share;
    double sched_latency;
    /* "eager_limit" (bytes, optional, 0: none; only with time_share):
     * on a time-shared node an intra-node message above it goes by
     * rendezvous (Open MPI's ob1 over vader without single copy, above
     * btl_vader_eager_limit, 4 KiB): the header, the receiver's answer,
     * then the body, a hand-over that needs each rank switched in:
     * the header's receiver pays the wake-up above if it was waiting;
     * the sender taking the answer and the receiver taking the body pay
     * "rndv_latency" (µs per core-mate, default 0) if they were waiting:
     * a switch inside an exchange under way, not a rank's first. */
    double eager_limit, rndv_latency;
};

/* Parses a parameter file's text; 0, or -1 with a message in err. */
int nbcxi_sim_params_parse(const char *text, size_t len,
                           struct nbcxi_sim_params *p, char *err,
                           size_t errlen);
/* Reads and parses the file at path (message names the path). */
int nbcxi_sim_params_load(const char *path, struct nbcxi_sim_params *p,
                          char *err, size_t errlen);

/* ---- building (build.c) ---- */

enum nbcxi_sim_fold { NBCXI_SIM_FOLD_AUTO, NBCXI_SIM_FOLD_ON,
                      NBCXI_SIM_FOLD_OFF };

struct nbcxi_sim_config {
    int coll;               /* enum nbcxi_coll                        */
    const char *alg;        /* an algorithm's name; NULL or "auto":
                               the automatic choice (coll/select.c)   */
    int ranks;
    int ranks_per_node;     /* > 0                                    */
    size_t bytes;           /* the buffer (bcast, reductions, scans)
                               or one block (gather, alltoall, ...)   */
    size_t segsize;         /* pipelined algorithms' fragment; 0: 64 KiB */
    int root;
    int fold;               /* enum nbcxi_sim_fold                    */
    size_t max_nodes;       /* refuse schedules above this (0: 60 M)  */
};

struct nbcxi_sim_job; /* the compact schedules and their matching */

/* Error codes of nbcxi_sim_build / nbcxi_sim_run (err says more). */
enum { NBCXI_SIM_OK = 0, NBCXI_SIM_EARG = 2, NBCXI_SIM_ETOOBIG = 3,
       NBCXI_SIM_EBUILD = 4, NBCXI_SIM_EMATCH = 5, NBCXI_SIM_ENOMEM = 6 };

int nbcxi_sim_build(const struct nbcxi_sim_config *cfg,
                    struct nbcxi_sim_job **out, char *err, size_t errlen);
void nbcxi_sim_free(struct nbcxi_sim_job *job);

/* What the build found. */
struct nbcxi_sim_info {
    char alg[64];         /* the algorithm built (auto: the one chosen) */
    int period;           /* folded: ranks simulated (P / period
                             classes of equivalent ranks); 0: all ranks */
    bool approx;          /* folded with message sizes that differ by a
                             few bytes between equivalent ranks        */
    long long nodes;      /* nodes kept (of the simulated ranks)       */
    long long messages;   /* sends of the simulated ranks              */
    long long messages_total; /* sends of all P ranks                  */
    double build_seconds;
};
void nbcxi_sim_job_info(const struct nbcxi_sim_job *job,
                        struct nbcxi_sim_info *info);
/* Whether a and b are the same schedules of the same ranks (every node,
 * dependency and matching): nbcxi_sim_simulate gives them the same
 * result under the same parameters and run. nbcx-tune simulates one
 * schedule once (a fragment size or the automatic choice that builds
 * what another candidate built). */
bool nbcxi_sim_job_same(const struct nbcxi_sim_job *a,
                        const struct nbcxi_sim_job *b);

/* ---- simulating (simulate.c) ---- */

enum nbcxi_sim_progress { NBCXI_SIM_THREAD, NBCXI_SIM_CALLER,
                          NBCXI_SIM_SPLIT };

struct nbcxi_sim_run {
    int progress;       /* enum nbcxi_sim_progress                   */
    double compute_us;  /* computation between start and wait, >= 0  */
    int split_levels;   /* split: the S tree levels nearest the leaves
                           run on the application core (simulate.c)    */
    int progress_cores_per_node; /* thread, split: 0, a progress core
                           per rank; k > 0, a pool of k progress cores
                           per node serves all its ranks' progress
                           work (earliest free first, simulate.c)      */
};

struct nbcxi_sim_result {
    /* completion of the operation, µs from the start, over the ranks */
    double t_max, t_min, t_median;
    /* with the computation: when wait returns (max over ranks), and
     * when start returned (max over ranks) */
    double t_total_max, t_start_max;
    long long events;
    double sim_seconds;
};

/* 0, or NBCXI_SIM_ENOMEM / NBCXI_SIM_EMATCH (a deadlock: some node never
 * ran; cannot happen for schedules nbcx-check accepts). */
int nbcxi_sim_simulate(struct nbcxi_sim_job *job,
                       const struct nbcxi_sim_params *p,
                       const struct nbcxi_sim_run *run,
                       struct nbcxi_sim_result *res);

/* The overlap of a computation of length c with an operation that takes
 * t_pure alone and t_total with it (IMB-NBC, as nbcx-bench): (t_pure + c
 * - t_total) / min(t_pure, c), clamped to [0, 1]. */
double nbcxi_sim_overlap(double t_pure, double c, double t_total);

/* NULL when p has the blocks a run of `ranks` at ranks_per_node needs,
 * else why not. */
const char *nbcxi_sim_params_fit(const struct nbcxi_sim_params *p, int ranks,
                                 int ranks_per_node);

/* nbcxi_sim_run's halves: the parameters' fit and the build (err says
 * why not), and the simulation with its error in err. */
int nbcxi_sim_prepare(const struct nbcxi_sim_config *cfg,
                      const struct nbcxi_sim_params *p,
                      struct nbcxi_sim_job **job, char *err, size_t errlen);
int nbcxi_sim_simulate_err(struct nbcxi_sim_job *job,
                           const struct nbcxi_sim_params *p,
                           const struct nbcxi_sim_run *run,
                           struct nbcxi_sim_result *res, char *err,
                           size_t errlen);

/* Build and simulate one configuration. */
int nbcxi_sim_run(const struct nbcxi_sim_config *cfg,
                  const struct nbcxi_sim_params *p,
                  const struct nbcxi_sim_run *run,
                  struct nbcxi_sim_info *info, struct nbcxi_sim_result *res,
                  char *err, size_t errlen);

/* The data mode (exec.c): runs the schedules of cfg (1 to 1024 ranks)
 * with real data through the real executor over an in-process transport
 * (no time), from fixed input patterns; *out (malloc'd, *outlen bytes)
 * receives every rank's receive buffer, rank after rank. Every algorithm
 * of a collective must give the same bytes. 0, or an NBCXI_SIM_E... code
 * with err: a deadlock, a message nobody receives, a size mismatch. */
int nbcxi_sim_execute(const struct nbcxi_sim_config *cfg, unsigned char **out,
                      size_t *outlen, char *err, size_t errlen);

/* Collective by name (enum nbcxi_coll, -1: none), and whether algorithm
 * `name` is one of the core table's for it (the backends' native ones,
 * inproc's "slots", need their own transport and are not simulated). */
int nbcxi_sim_coll(const char *name);
bool nbcxi_sim_has_alg(int coll, const char *name);
/* The i-th simulable algorithm of coll (NULL past the last). */
const char *nbcxi_sim_alg(int coll, int i);

/* ---- the peers' choices (reference.c) ---- */

/* How close the nbcx algorithm is to the peer's. */
enum { NBCXI_SIM_REF_SAME,    /* the same schedule                     */
       NBCXI_SIM_REF_VARIANT, /* the same algorithm and alpha-beta cost,
                                 rounds or fragments in another order */
       NBCXI_SIM_REF_NONE };  /* nbcx has no such algorithm: alg NULL */

struct nbcxi_sim_ref {
    int coll;             /* the collective to simulate (it may differ:
                             libnbc's allgather is nbcx's allgatherv)  */
    const char *alg;      /* the nbcx algorithm; NULL: none            */
    size_t segsize;       /* the peer's fragment size; 0: nbcx's       */
    int match;            /* NBCXI_SIM_REF_...                          */
    const char *peer_alg; /* the peer's own name for its algorithm     */
};

/* The algorithm that peer ("mpich", "openmpi-libnbc") chooses by default
 * for the nonblocking collective coll on `ranks` ranks with `bytes` (as
 * nbcxi_sim_config's), in *out. 0; 1 when the peer's rule for coll is
 * not modelled; -1 for an unknown peer. */
int nbcxi_sim_reference(const char *peer, int coll, int ranks, size_t bytes,
                        struct nbcxi_sim_ref *out);
/* The i-th peer's name (NULL past the last). */
const char *nbcxi_sim_reference_name(int i);

#endif /* NBCX_SIM_H */
