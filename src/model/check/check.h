/*
 * check.h - internals of the schedule checker (include/nbcx_check.h).
 *
 *   setup.c   the arguments each rank passes to a builder, on fake user
 *             buffers, and the roles of their bytes (input, result)
 *   rank.c    one rank's schedule: validity, local order, buffer races,
 *             posting order of same-tag messages; then its compact form
 *   global.c  matching of all ranks' messages and the deadlock check on
 *             the global graph; error reports
 *   check.c   the public functions, the null transport, the driver
 *
 * The global graph keeps, per rank, only the nodes that can take part in
 * a cross-rank dependency: every send and receive, and the local nodes
 * that both follow and precede a message. Its p2p nodes are numbered
 * first, sorted by (kind, peer, tag, posting order), so the k-th send of
 * a (peer, tag) group meets the k-th receive of the matching group on the
 * peer, found by binary search; nothing else is stored per message.
 */
#ifndef NBCX_CHECK_INTERNAL_H
#define NBCX_CHECK_INTERNAL_H

#include <stdarg.h>

#include "../../coll/coll.h"
#include "nbcx_check.h"
#include "../model.h"

/* ---- roles of user bytes ---- */

enum {
    CK_IN = 1,   /* holds input: defined before the operation starts  */
    CK_OUT = 2,  /* may be written (a result, or scratch)              */
    CK_MUST = 4, /* must be written: part of the rank's result         */
    CK_ASSUMED = 8, /* hand-built schedules: roles assumed, not known   */
};

struct ck_range {
    uintptr_t lo, hi;
    int flags;
    const char *name; /* bounds only: "sendbuf", "recvbuf", "buffer" */
};

/* One rank's user memory: where accesses may go (bounds) and what the
 * bytes are (roles; a byte's flags are the union of the roles covering
 * it, 0 inside bounds but outside every role: must not be touched). */
struct ck_regions {
    struct ck_range bounds[4];
    int nbounds;
    struct ck_range *roles;
    int nroles, cap;
    int err; /* NBCX_ERR_NOMEM while adding roles */
};

/* ---- the compact global graph ---- */

/* key of a p2p node: kind (0 send, 1 recv) | peer | tag | size index */
#define CK_KEY(kind, peer, tag, sz)                                          \
    (((uint64_t)(kind) << 63) | ((uint64_t)(peer) << 32) |                   \
     ((uint64_t)(tag) << 20) | (uint64_t)(sz))
#define CK_GROUP(key) ((key) >> 20)
#define CK_KIND(key) ((int)((key) >> 63))
#define CK_PEER(key) ((int)(((key) >> 32) & 0x7fffffffu))
#define CK_TAG(key) ((int)(((key) >> 20) & 0xfffu))
#define CK_SIZE(key) ((uint32_t)((key) & 0xfffffu))
enum { CK_MAX_SIZES = 1 << 20 };

/* pend: flags | predecessors not yet complete */
#define CK_READY 0x80000000u /* p2p: local predecessors done          */
#define CK_DONE 0x40000000u
#define CK_GRAY 0x20000000u  /* cycle search                          */
#define CK_BLACK 0x10000000u
#define CK_COUNT 0x0fffffffu

struct ck_rank {
    uint32_t n;      /* kept nodes                                      */
    uint32_t np;     /* p2p nodes: ids 0 .. np-1, sorted by key         */
    uint64_t *key;   /* np; after matching: peer << 32 | partner id     */
    uint32_t *pend;  /* n; during matching: partners                    */
    uint32_t *soff;  /* n + 1, NULL when there are no kept edges        */
    uint32_t *succ;  /* local ids                                       */
};

/* ---- the job ---- */

struct ck_ws; /* rank.c's workspace */

struct ck_job {
    int size;
    /* builder mode (nbcx_check_collective) */
    const struct nbcxi_algorithm *alg; /* NULL: hand-built schedules */
    enum nbcxi_coll coll;
    const char *coll_name;
    int count, root;
    bool in_place;
    int topology;    /* NBCX_CHECK_TORUS, _GRID or _GRAPH */
    int dims[2];     /* the grids' rows and columns */
    int maxdeg;      /* neighbours of a rank, at most */
    int *gsoff, *gsrc; /* the graph's sources of each rank (CSR) */
    int *tmp_src;    /* one rank's sources                          */
    int *ints;       /* counts and displacements of one rank        */
    nbcx_datatype *types;
    ptrdiff_t *adispls;
    nbcx_datatype type_handle;
    struct nbcx_datatype_s *type;
    struct nbcx_op_s *op;
    nbcx_op user_op; /* to free, or NBCX_OP_NULL */
    size_t segsize;
    int ranks_per_node; /* nodes of that many consecutive ranks, 0: none */
    int radix;       /* of the k-nomial trees ("knomialK"), 0: default */
    bool segsize_auto; /* no --segsize: the engine's own floors apply */
    char *mem;       /* fake user memory (PROT_NONE), NULL: none */
    size_t memlen;
    char *sbuf, *rbuf;
    size_t buflen;   /* bytes reserved for each of them */
    /* hand-built mode */
    const nbcx_sched *scheds;

    /* reporting */
    int max_reports;
    void (*report)(const char *msg, void *ctx);
    void *ctx;
    nbcx_check_result res;
    bool fatal;      /* an error that makes later phases meaningless   */
    bool cyclic;     /* some rank's own graph has a cycle              */
    bool unusable;   /* the algorithm cannot serve this call           */
    int stop;        /* an error that ends the check (no memory)       */

    /* message sizes: index -> bytes, and an open-addressing table */
    uint64_t *sizes;
    uint32_t nsizes, sizes_cap;
    uint32_t *size_tab;      /* slots hold index + 1, 0 = empty */
    uint32_t size_tab_cap;

    struct ck_rank *ranks;
    struct ck_ws *ws;
    int silent;      /* > 0: rank analysis for a report: no errors */
};

/* check.c */
NBCX_HIDDEN void ck_error(struct ck_job *J, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The schedule of rank r (built, or the user's), and its regions; the
 * caller hands it back with ck_put. NULL on failure (reported). */
NBCX_HIDDEN struct nbcx_sched_s *ck_get(struct ck_job *J, int r,
                                        struct ck_regions *reg);
NBCX_HIDDEN void ck_put(struct ck_job *J, struct nbcx_sched_s *s);
NBCX_HIDDEN int ck_null_comm(int rank, int size, int ranks_per_node,
                             struct nbcx_comm_s **out);

/* setup.c */
NBCX_HIDDEN int ck_setup_job(struct ck_job *J);
NBCX_HIDDEN void ck_free_job_memory(struct ck_job *J);
/* Attaches the job's topology to rank r's communicator (neighbourhood
 * collectives only). */
NBCX_HIDDEN int ck_setup_topology(struct ck_job *J, int r, nbcx_comm comm);
/* Fills the builder arguments of rank r (topo: its communicator's
 * topology, or NULL) and its regions. */
NBCX_HIDDEN int ck_setup_rank(struct ck_job *J, int r,
                              const struct nbcxi_topo *topo,
                              struct nbcxi_coll_args *a,
                              struct ck_regions *reg);
NBCX_HIDDEN void ck_regions_reset(struct ck_regions *reg);
NBCX_HIDDEN void ck_regions_free(struct ck_regions *reg);

/* rank.c */
NBCX_HIDDEN int ck_ws_new(struct ck_ws **ws);
NBCX_HIDDEN void ck_ws_free(struct ck_ws *ws);
/* Analyses rank r's schedule s and stores its compact form in
 * J->ranks[r]; with map != NULL only computes the compact numbering
 * (map[new id] = node, *nmap = kept nodes; malloc'd) for reports. */
NBCX_HIDDEN int ck_rank_analyse(struct ck_job *J, int r,
                                struct nbcx_sched_s *s,
                                const struct ck_regions *reg, int **map,
                                uint32_t *nmap);
/* "node 7 (send 40 B to rank 4, tag 0)" */
NBCX_HIDDEN void ck_describe(const struct nbcx_sched_s *s, int node,
                             char *buf, size_t len);
NBCX_HIDDEN int ck_size_index(struct ck_job *J, uint64_t bytes,
                              uint32_t *idx);

/* global.c */
NBCX_HIDDEN void ck_match(struct ck_job *J);
NBCX_HIDDEN void ck_deadlock(struct ck_job *J);
NBCX_HIDDEN void ck_free_ranks(struct ck_job *J);

#endif /* NBCX_CHECK_INTERNAL_H */
