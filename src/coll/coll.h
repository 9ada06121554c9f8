/*
 * coll.h - collective algorithms as pure schedule builders.
 *
 * A builder turns (rank, size, arguments) into one rank's DAG: it never
 * sends, never blocks, keeps no global state. It emits nodes with
 * nbcxi_send/recv/reduce_node/copy/call and edges with nbcxi_dep (sched/sched.h),
 * and returns s->build.err (the builder helpers record the first failure and
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

#include "../sched/sched.h"

enum nbcxi_coll {
    NBCXI_BARRIER, NBCXI_BCAST, NBCXI_REDUCE, NBCXI_ALLREDUCE, NBCXI_GATHER,
    NBCXI_SCATTER, NBCXI_ALLGATHER, NBCXI_ALLTOALL,
    NBCXI_GATHERV, NBCXI_SCATTERV, NBCXI_ALLGATHERV, NBCXI_ALLTOALLV,
    NBCXI_ALLTOALLW, NBCXI_REDUCE_SCATTER, NBCXI_REDUCE_SCATTER_BLOCK,
    NBCXI_SCAN, NBCXI_EXSCAN, NBCXI_NEIGHBOR_ALLGATHER,
    NBCXI_NEIGHBOR_ALLGATHERV, NBCXI_NEIGHBOR_ALLTOALL,
    NBCXI_NEIGHBOR_ALLTOALLV, NBCXI_NEIGHBOR_ALLTOALLW, NBCXI_NCOLL
};

/* One side (send or receive) of a vector, w or neighbourhood collective:
 * the blocks of the peers in the buffer. Block i holds counts[i] elements
 * (every block the side's count when counts is NULL) of types[i] (the
 * side's type when types is NULL), starting at
 *     displs[i] elements        (v variants),
 *     displs[i] bytes           (byte_displs: alltoallw),
 *     adispls[i] bytes          (neighbor_alltoallw),
 *     i * count elements        (none of them: the regular layout).
 * types holds user handles, checked by api/: resolve with nbcxi_type().
 * counts and displs are arrays of int, or of nbcx_count when wide (the
 * large-count calls): read them with nbcxi_vcount()/nbcxi_vdispl(), never
 * by indexing. The int calls pass their arrays as they are (no copy). */
struct nbcxi_vside {
    const void *counts;
    const void *displs;
    const ptrdiff_t *adispls;
    bool byte_displs;
    const nbcx_datatype *types;
    bool wide; /* counts and displs hold nbcx_count, not int */
};

/* Entry i of an int or (wide) nbcx_count array. */
static inline nbcx_count nbcxi_varr(const void *arr, bool wide, int i)
{
    return wide ? ((const nbcx_count *)arr)[i] : ((const int *)arr)[i];
}

/* Block i's count (count when the side has no counts array). */
static inline nbcx_count nbcxi_vcount(const struct nbcxi_vside *v,
                                      nbcx_count count, int i)
{
    return v->counts ? nbcxi_varr(v->counts, v->wide, i) : count;
}

/* Block i's entry of displs (the side must have one). */
static inline nbcx_count nbcxi_vdispl(const struct nbcxi_vside *v, int i)
{
    return nbcxi_varr(v->displs, v->wide, i);
}

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
 *   gatherv    as gather, with rbuf's blocks described by rv (root only);
 *              in_place: the root's block is in rbuf already.
 *   scatterv   as scatter, with sbuf's blocks described by sv (root only);
 *              in_place: the root's block stays in sbuf.
 *   allgatherv as allgather with rv; in place, sbuf/scount/stype are the
 *              rank's own block of rbuf and in_place is set.
 *   alltoallv/w  sv and rv; in_place: the data to send is in rbuf (sbuf
 *              NULL) and sv is ignored.
 *   reduce_scatter(_block)  sbuf: the vector of all blocks (in place:
 *              sbuf == rbuf), rbuf: this rank's block; rtype, op, and the
 *              block sizes rv.counts (NULL: every block rcount elements).
 *   scan, exscan  sbuf -> rbuf, rcount, rtype, op; sbuf == rbuf: in
 *              place. Exscan leaves rank 0's rbuf alone.
 *   neighbor_* topo: the topology; neighbor_allgather(v) sends sbuf/
 *              scount/stype to every destination, neighbor_alltoall(v,w)
 *              block j of sv; receive blocks are rv's.
 * Type signatures match as MPI requires: scount * stype->size ==
 * rcount * rtype->size for every pair of ranks, but the two types (and
 * the types on different ranks) may differ. A builder that forwards data
 * of other ranks therefore packs it (nbcxi_copy into NBCX_BYTE scratch)
 * and sends bytes; data sent straight from/to user buffers uses the
 * user's types. */
struct nbcxi_coll_args {
    const void *sbuf;
    void *rbuf;
    /* 64-bit (the large-count calls), and so are the builders' counts
     * and offsets, but for bcast, reduce, allreduce, scan and exscan,
     * which nbcxi_coll_build builds in pieces of at most 2^30 elements
     * (nbcxi_sched_chunking's piece) above INT_MAX. */
    nbcx_count scount, rcount;
    struct nbcx_datatype_s *stype, *rtype;
    struct nbcx_op_s *op;
    int root;
    bool in_place;
    size_t segsize; /* fragment size of pipelined algorithms, bytes > 0 */
    /* No one chose segsize (NBCX_SEGSIZE, nbcx_segsize_set, a NBCX_TUNING
     * rule): it is the transport's default, and an algorithm whose
     * fragments need another floor may take it (the ring allreduce). */
    bool segsize_auto;
    /* The radix of the k-nomial trees ("knomialK" names it; 0: the
     * default, NBCXI_KNOMIAL_DEFAULT). */
    int radix;
    struct nbcxi_vside sv, rv;      /* v, w and neighbourhood variants */
    const struct nbcxi_topo *topo;  /* neighbourhood collectives */
};

/* The k-nomial trees (bcast, reduce, gather, scatter, barrier) have one
 * table line each, "knomial", and take their radix from the call's
 * arguments (radix). Wherever an algorithm is named (NBCX_<COLL>_ALG,
 * nbcx_algorithm_set, NBCX_TUNING, nbcx-check, nbcx-sim), "knomialK" with
 * K from 2 to 8 names that line with radix K, and "knomial" radix 4. */
enum { NBCXI_KNOMIAL_MIN = 2, NBCXI_KNOMIAL_MAX = 8,
       NBCXI_KNOMIAL_DEFAULT = 4 };

/* The largest power of two <= p (p >= 1), and its log2 in *rounds: the
 * ranks a recursive doubling or halving runs on, after the fold of the
 * p - pof2 others. */
static inline int nbcxi_pof2_floor(int p, int *rounds)
{
    int pof2 = 1;
    *rounds = 0;
    while (pof2 <= p / 2) {
        pof2 <<= 1;
        (*rounds)++;
    }
    return pof2;
}

/* Block i of a side: where it is, how many elements, which type. */
struct nbcxi_block {
    void *buf;
    ptrdiff_t count; /* 64-bit: packed runs of blocks may exceed INT_MAX */
    struct nbcx_datatype_s *type;
};

static inline struct nbcxi_block nbcxi_vblock(const void *buf,
                                              nbcx_count count,
                                              struct nbcx_datatype_s *type,
                                              const struct nbcxi_vside *v,
                                              int i)
{
    struct nbcxi_block b;
    b.type = v->types ? nbcxi_type(v->types[i]) : type;
    b.count = nbcxi_vcount(v, count, i);
    ptrdiff_t off;
    if (v->adispls)
        off = v->adispls[i];
    else if (v->displs && v->byte_displs)
        off = nbcxi_vdispl(v, i);
    else
        off = (v->displs ? nbcxi_vdispl(v, i) : (ptrdiff_t)i * count) *
              b.type->extent;
    /* As integers: buf may be NULL (MPI_BOTTOM in the w variants, off an
     * absolute address), where pointer arithmetic is undefined. */
    b.buf = (void *)((uintptr_t)buf + (uintptr_t)off);
    return b;
}

static inline struct nbcxi_block nbcxi_sblock(const struct nbcxi_coll_args *a,
                                              int i)
{
    return nbcxi_vblock(a->sbuf, a->scount, a->stype, &a->sv, i);
}

static inline struct nbcxi_block nbcxi_rblock(const struct nbcxi_coll_args *a,
                                              int i)
{
    return nbcxi_vblock(a->rbuf, a->rcount, a->rtype, &a->rv, i);
}

static inline size_t nbcxi_block_bytes(struct nbcxi_block b)
{
    return (size_t)b.count * b.type->size;
}

/* A rank's block to itself: a local copy. The two sides must hold the
 * same bytes (MPI requires matching type signatures); when they do not,
 * NBCX_ERR_TRUNCATE, before anything is posted, rather than a copy past
 * the end of the smaller block. Returns the copy node (or -1: nothing to
 * copy, or an error recorded in s->build.err). */
static inline nbcx_node nbcxi_copy_block(struct nbcx_sched_s *s,
                                         struct nbcxi_block from,
                                         struct nbcxi_block to)
{
    if (nbcxi_block_bytes(from) != nbcxi_block_bytes(to)) {
        if (!s->build.err)
            s->build.err = NBCX_ERR_TRUNCATE;
        return -1;
    }
    if (nbcxi_block_bytes(to) == 0)
        return -1;
    return nbcxi_copy(s, from.buf, from.count, from.type, to.buf, to.count,
                      to.type);
}

typedef int nbcxi_builder(struct nbcx_sched_s *s,
                          const struct nbcxi_coll_args *a);

/* One entry per algorithm: the collective (enum nbcxi_coll) it serves,
 * its name, its builder, and whether it can serve a call (NULL: always).
 * The core table is in select.c; a backend may add its own (struct
 * nbcxi_transport_ops, algorithms). */
struct nbcxi_algorithm {
    int coll;
    const char *name;
    nbcxi_builder *build;
    bool (*usable)(const struct nbcx_sched_s *s,
                   const struct nbcxi_coll_args *a);
};

/* The entry of collective c that `name` names (case ignored): a table
 * line's own name, or "knomialK" (K = 2..8) for the "knomial" line, in
 * which case *radix (if not NULL) gets K; else *radix gets 0. NULL: no
 * such algorithm. Core algorithms first, then the backends'. */
NBCX_HIDDEN const struct nbcxi_algorithm *nbcxi_coll_find(int c,
                                                          const char *name,
                                                          int *radix);
/* The automatic choice's model (select.c, chain.c): up to NBCXI_ON_NODE
 * ranks count as one node; a gap between two messages of one rank is
 * worth NBCXI_GAP_BYTES bytes of link time. */
enum { NBCXI_ON_NODE = 7, NBCXI_GAP_BYTES = 512 };
/* The fragment bytes of the pipelined chains (bcast, reduce) of s for a
 * buffer of nbytes: a->segsize, or where no one chose it and the ranks
 * are beyond a node, the alpha-beta model's best (chain.c). */
NBCX_HIDDEN size_t nbcxi_chain_segsize(const struct nbcx_sched_s *s,
                                       const struct nbcxi_coll_args *a,
                                       size_t nbytes);
/* K of a name "knomialK" (K = 2..8), else 0 (also for "knomial"). */
NBCX_HIDDEN int nbcxi_knomial_radix(const char *name);
/* "knomialK" as a string that lives forever (K = 2..8), else NULL. */
NBCX_HIDDEN const char *nbcxi_knomial_name(int k);

/* tuning.c: the selection table of NBCX_TUNING and the built-in one
 * (each read once, by select.c) */
NBCX_HIDDEN int nbcxi_tuning_load(const char *path);
NBCX_HIDDEN int nbcxi_tuning_load_builtin(void);
/* select.c: the error every call returns because of the environment (a
 * bad NBCX_<COLL>_ALG or NBCX_TUNING file, its message already printed
 * on stderr when it was read), 0: none. Reads the environment first if
 * no call has yet. For tools that build schedules (nbcx-sim): they stop
 * at once instead of failing at every point. */
NBCX_HIDDEN int nbcxi_select_env_error(void);
/* The algorithm the tables (NBCX_TUNING's, then the built-in one) name
 * for coll on p ranks, rpn ranks per node (0: not known) and `bytes`
 * (the size the automatic choice looks at), or NULL; sets *segsize when
 * the rule gives one. */
NBCX_HIDDEN const char *nbcxi_tuning_choose(int coll, int p, int rpn,
                                            size_t bytes, size_t *segsize);
NBCX_HIDDEN int nbcxi_tuning_describe(char *buf, size_t len);
/* The S of the first split rule for coll on p ranks and `bytes`, or -1. */
NBCX_HIDDEN int nbcxi_tuning_split(int coll, int p, size_t bytes);

/* barrier.c */
NBCX_HIDDEN nbcxi_builder nbcxi_build_barrier_dissemination;
NBCX_HIDDEN nbcxi_builder nbcxi_build_barrier_knomial; /* fan-in, fan-out */
/* bcast.c */
NBCX_HIDDEN nbcxi_builder nbcxi_build_bcast_binomial;
NBCX_HIDDEN nbcxi_builder nbcxi_build_bcast_knomial;   /* radix a->radix */
NBCX_HIDDEN nbcxi_builder nbcxi_build_bcast_chain;     /* pipelined, segsize fragments */
NBCX_HIDDEN nbcxi_builder nbcxi_build_bcast_scatter_allgather; /* van de Geijn */
NBCX_HIDDEN nbcxi_builder nbcxi_build_bcast_double_tree; /* pipelined, two binary trees */
/* reduce.c */
NBCX_HIDDEN nbcxi_builder nbcxi_build_reduce_binomial; /* any op, MPI order kept */
NBCX_HIDDEN nbcxi_builder nbcxi_build_reduce_knomial;  /* any op, rank order */
NBCX_HIDDEN nbcxi_builder nbcxi_build_reduce_chain;    /* pipelined; commutative ops */
/* allreduce.c */
NBCX_HIDDEN nbcxi_builder nbcxi_build_allreduce_recursive_doubling; /* any op */
NBCX_HIDDEN nbcxi_builder nbcxi_build_allreduce_ring;  /* reduce-scatter + allgather
                                             ring; commutative ops */
NBCX_HIDDEN nbcxi_builder nbcxi_build_allreduce_reduce_bcast; /* binomial reduce to 0,
                                                    then bcast; any op */
NBCX_HIDDEN nbcxi_builder nbcxi_build_allreduce_rabenseifner; /* reduce-scatter by
                      recursive halving + allgather by recursive doubling; any op */
NBCX_HIDDEN nbcxi_builder nbcxi_build_reduce_rabenseifner; /* the same reduce-scatter
                      + binomial gather to the root; any op (reduce) */
/* hier.c: node-aware, on the nodes the transport knows (node_of), else
 * flat (the automatic choice on all ranks) */
NBCX_HIDDEN nbcxi_builder nbcxi_build_bcast_hier;     /* leaders, then each node */
NBCX_HIDDEN nbcxi_builder nbcxi_build_allreduce_hier; /* node reduce, leaders'
                allreduce, node bcast; any op when nodes are rank blocks */
NBCX_HIDDEN nbcxi_builder nbcxi_build_reduce_hier;    /* node reduce, leaders'
                reduce; any op when nodes are rank blocks */
NBCX_HIDDEN nbcxi_builder nbcxi_build_barrier_hier;   /* node, leaders', node */
NBCX_HIDDEN nbcxi_builder nbcxi_build_allgather_hier; /* node allgather,
                leaders' allgatherv, node bcasts; consecutive nodes */
/* gather.c */
NBCX_HIDDEN nbcxi_builder nbcxi_build_gather_binomial;
NBCX_HIDDEN nbcxi_builder nbcxi_build_gather_knomial;
NBCX_HIDDEN nbcxi_builder nbcxi_build_gather_linear;
/* scatter.c */
NBCX_HIDDEN nbcxi_builder nbcxi_build_scatter_binomial;
NBCX_HIDDEN nbcxi_builder nbcxi_build_scatter_knomial;
NBCX_HIDDEN nbcxi_builder nbcxi_build_scatter_linear;
/* allgather.c */
NBCX_HIDDEN nbcxi_builder nbcxi_build_allgather_bruck;
NBCX_HIDDEN nbcxi_builder nbcxi_build_allgather_ring;
NBCX_HIDDEN nbcxi_builder nbcxi_build_allgather_linear; /* all at start */
/* alltoall.c */
NBCX_HIDDEN nbcxi_builder nbcxi_build_alltoall_linear;   /* everything posted at once */
NBCX_HIDDEN nbcxi_builder nbcxi_build_alltoall_pairwise; /* sends in pairwise order */
NBCX_HIDDEN nbcxi_builder nbcxi_build_alltoall_bruck;    /* log p rounds, small blocks */

/* gatherv.c */
NBCX_HIDDEN nbcxi_builder nbcxi_build_gatherv_linear;
/* scatterv.c */
NBCX_HIDDEN nbcxi_builder nbcxi_build_scatterv_linear;
/* allgatherv.c */
NBCX_HIDDEN nbcxi_builder nbcxi_build_allgatherv_linear; /* everything posted at once */
NBCX_HIDDEN nbcxi_builder nbcxi_build_allgatherv_ring;
/* alltoallv.c: alltoallv and alltoallw (sv/rv describe both) */
NBCX_HIDDEN nbcxi_builder nbcxi_build_alltoallv_linear;
NBCX_HIDDEN nbcxi_builder nbcxi_build_alltoallv_pairwise;
/* reduce_scatter.c: reduce_scatter and reduce_scatter_block */
NBCX_HIDDEN nbcxi_builder nbcxi_build_reduce_scatter_pairwise; /* any op */
NBCX_HIDDEN nbcxi_builder nbcxi_build_reduce_scatter_reduce_scatterv; /* any op */
NBCX_HIDDEN nbcxi_builder nbcxi_build_reduce_scatter_recursive_halving; /* commutative */
/* scan.c: scan and exscan; any op, rank order kept */
NBCX_HIDDEN nbcxi_builder nbcxi_build_scan_linear;
NBCX_HIDDEN nbcxi_builder nbcxi_build_scan_recursive_doubling;
NBCX_HIDDEN nbcxi_builder nbcxi_build_exscan_linear;
NBCX_HIDDEN nbcxi_builder nbcxi_build_exscan_recursive_doubling;
/* neighbor.c */
NBCX_HIDDEN nbcxi_builder nbcxi_build_neighbor_allgather_linear;  /* and allgatherv */
NBCX_HIDDEN nbcxi_builder nbcxi_build_neighbor_alltoall_linear;   /* and v, w */

/* What, besides its arguments, decides the schedule of a call: the
 * forced algorithm's name (NULL: automatic), the fragment size, the
 * progress mode (split mode picks tree algorithms; set by the caller). */
struct nbcxi_selection {
    const char *forced;
    size_t segsize; /* 0: the transport's (a cache is per communicator) */
    int mode;
};
NBCX_HIDDEN void nbcxi_coll_selection(enum nbcxi_coll coll,
                                      struct nbcxi_selection *sel);

/* Where the ranks of a schedule are, for the automatic choice: guessed
 * from their number (up to NBCXI_ON_NODE: one node), all on one node, or
 * each on a node of its own (a node-aware algorithm's leaders). */
enum nbcxi_place { NBCXI_PLACE_GUESS, NBCXI_PLACE_ONE_NODE,
                   NBCXI_PLACE_NODES };
/* select.c: the automatic choice's flat (never node-aware) algorithm for
 * coll on s's ranks (s->rank, s->size: a node-aware builder sets them to
 * one group's while it builds that group's phase) placed as `place`
 * says; sets a->radix for a k-nomial tree. Never NULL. */
NBCX_HIDDEN const struct nbcxi_algorithm *
nbcxi_coll_flat(enum nbcxi_coll coll, const struct nbcx_sched_s *s,
                struct nbcxi_coll_args *a, enum nbcxi_place place);

/* select.c: builds the schedule of collective `coll` with the forced
 * algorithm, else the one the progress mode prefers (`prefer`, NULL for
 * none), else the automatic choice. */
NBCX_HIDDEN int nbcxi_coll_build(enum nbcxi_coll coll,
                                 struct nbcx_sched_s *s,
                                 struct nbcxi_coll_args *a,
                                 const char *prefer);
/* The name of collective c ("bcast"; NULL out of range), and its i-th
 * algorithm (core ones first, then the backends'; NULL past the last):
 * the schedule checker (check/) walks them. */
NBCX_HIDDEN const char *nbcxi_coll_name(int c);
/* The collective named `name` (any case), -1 for none or NULL. */
NBCX_HIDDEN int nbcxi_coll_by_name(const char *name);
NBCX_HIDDEN const struct nbcxi_algorithm *nbcxi_coll_algorithm(int c, int i);
/* "name name ..." of the collectives (c < 0) or of c's algorithms into
 * buf (cut at a whole name when longer than len); returns buf. */
NBCX_HIDDEN const char *nbcxi_coll_names(int c, char *buf, size_t len);
/* " segsize=auto barrier=auto ..." for nbcx_info (segsize=N when the
 * user chose one). */
NBCX_HIDDEN int nbcxi_coll_describe(char *buf, size_t len);

#endif /* NBCX_COLL_H */
