/**
 * @file
 * nbcx.h - public C API of nbcx, a portable engine for nonblocking
 * collective operations run as dependency graphs (DAGs).
 *
 * This header does not include mpi.h: the engine runs on any transport.
 * The MPI face (communicators, datatypes and operations taken from MPI)
 * is in nbcx_mpi.h.
 *
 * Conventions
 *   - Every function returns NBCX_SUCCESS (0) or an NBCX_ERR_* code;
 *     nbcx_error_string() turns a code into a message.
 *   - Collectives take their arguments in MPI's order and follow MPI's
 *     semantics, NBCX_IN_PLACE included.
 *   - Bad arguments are rejected before anything is posted: on error no
 *     request is created and *req is set to NBCX_REQUEST_NULL.
 */
#ifndef NBCX_H
#define NBCX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Marks the functions of the public API (exported from libnbcx). */
#if defined(__GNUC__)
#define NBCX_API __attribute__((visibility("default")))
#else
#define NBCX_API
#endif

/**@{*/
/** The version of this header (nbcx_info() names the library's). */
#define NBCX_VERSION_MAJOR 0
#define NBCX_VERSION_MINOR 1
#define NBCX_VERSION_PATCH 0
/**@}*/

/* ------------------------------------------------------------------ */
/* Error codes                                                         */
/* ------------------------------------------------------------------ */

/** Return codes of every nbcx function. */
enum nbcx_error {
    NBCX_SUCCESS = 0, /**< the call succeeded                             */
    NBCX_ERR_ARG,       /**< invalid argument (null pointer, bad value)   */
    NBCX_ERR_COUNT,     /**< negative count, or one nbcx cannot serve     */
    NBCX_ERR_BUFFER,    /**< null buffer with nonzero count               */
    NBCX_ERR_ROOT,      /**< root outside [0, size)                       */
    NBCX_ERR_RANK,      /**< peer rank outside [0, size)                  */
    NBCX_ERR_TYPE,      /**< invalid or freed datatype                    */
    NBCX_ERR_OP,        /**< invalid operation, or not defined on type    */
    NBCX_ERR_COMM,      /**< null or freed communicator                   */
    NBCX_ERR_REQUEST,   /**< null request pointer or invalid request      */
    NBCX_ERR_TAG,       /**< schedule tag outside [0, NBCX_SCHED_TAG_MAX] */
    NBCX_ERR_NODE,      /**< invalid schedule node (builder API)          */
    NBCX_ERR_IN_PLACE,  /**< NBCX_IN_PLACE where MPI does not allow it    */
    NBCX_ERR_NOMEM,     /**< out of memory                                */
    NBCX_ERR_TRANSPORT, /**< the transport (e.g. MPI) reported an error   */
    NBCX_ERR_TRUNCATE,  /**< message longer than the receive buffer       */
    NBCX_ERR_ALGORITHM, /**< unknown algorithm name in an NBCX_*_ALG var, or
                           an NBCX_TUNING file that does not parse     */
    NBCX_ERR_INTERN,    /**< internal error (a bug: please report it)     */
    NBCX_ERR_TOPOLOGY,  /**< neighbourhood collective on a communicator
                           without neighbours, or a bad topology       */
    NBCX_ERR_EXHAUSTED, /**< the communicator's tag space is used up: the
                           operation that held the same tags earlier is
                           still in flight (or a persistent request
                           planned that many inits ago is not freed)   */
    NBCX_ERR_TIMEOUT,   /**< no progress for the communicator's timeout,
                           or its communicator timed out before
                           (nbcx_comm_set_timeout, NBCX_TIMEOUT)        */
    NBCX_ERR_BUSY,      /**< the communicator is in use where it must not
                           be: operations in flight, persistent requests
                           or schedules on it (nbcx_comm_set_transport) */
    NBCX_ERR_ALIAS,     /**< the send buffer is the receive buffer (or
                           this rank's block of it): MPI forbids the
                           overlap; NBCX_IN_PLACE says "in place"      */
    NBCX_ERR_LASTCODE
};

/** A static, never-NULL message for an error code. */
NBCX_API const char *nbcx_error_string(int err);
/** The same, or more where this thread's last error of that code said
 * more: which handle or argument, which misuse (e.g. for NBCX_ERR_REQUEST:
 * a NULL pointer, a freed request, an active one, one that is not
 * persistent). The string belongs to the thread and stays valid until its
 * next nbcx call. */
NBCX_API const char *nbcx_error_detail(int err);

/* ------------------------------------------------------------------ */
/* Opaque handles                                                      */
/* ------------------------------------------------------------------ */

typedef struct nbcx_comm_s *nbcx_comm;         /**< a communicator */
typedef struct nbcx_datatype_s *nbcx_datatype; /**< a datatype */
typedef struct nbcx_op_s *nbcx_op;             /**< a reduction operation */
typedef struct nbcx_request_s *nbcx_request;   /**< an operation in flight */
typedef struct nbcx_sched_s *nbcx_sched; /**< a schedule being built */

/**@{*/
/** The null handle of each kind. */
#define NBCX_COMM_NULL ((nbcx_comm)0)
#define NBCX_DATATYPE_NULL ((nbcx_datatype)0)
#define NBCX_OP_NULL ((nbcx_op)0)
#define NBCX_REQUEST_NULL ((nbcx_request)0)
/**@}*/

/** Marks a buffer argument as "in place", exactly where MPI allows
 * MPI_IN_PLACE. */
#define NBCX_IN_PLACE ((void *)(intptr_t)-1)

/* ------------------------------------------------------------------ */
/* Built-in datatypes (handles are small constants, never freed)       */
/* ------------------------------------------------------------------ */

/** A built-in datatype's handle from its number (internal). */
#define NBCX_DT_(n) ((nbcx_datatype)(uintptr_t)(n))
/**@{*/
/** The fixed-width integers, float and double of C. */
#define NBCX_INT8 NBCX_DT_(1)
#define NBCX_UINT8 NBCX_DT_(2)
#define NBCX_INT16 NBCX_DT_(3)
#define NBCX_UINT16 NBCX_DT_(4)
#define NBCX_INT32 NBCX_DT_(5)
#define NBCX_UINT32 NBCX_DT_(6)
#define NBCX_INT64 NBCX_DT_(7)
#define NBCX_UINT64 NBCX_DT_(8)
#define NBCX_FLOAT NBCX_DT_(9)
#define NBCX_DOUBLE NBCX_DT_(10)
/**@}*/
#define NBCX_BYTE NBCX_DT_(11) /**< raw bytes: bitwise operations only    */
#define NBCX_CHAR NBCX_DT_(12) /**< characters: no reduction operations   */
/**@{*/
/** Value/index pairs for NBCX_MINLOC and NBCX_MAXLOC; the layouts are the
 * C structs below (the same as MPI_FLOAT_INT, MPI_DOUBLE_INT, ...). */
#define NBCX_FLOAT_INT NBCX_DT_(13)
#define NBCX_DOUBLE_INT NBCX_DT_(14)
#define NBCX_LONG_INT NBCX_DT_(15)
#define NBCX_2INT NBCX_DT_(16)
#define NBCX_SHORT_INT NBCX_DT_(17)
/**@}*/

/** The layout of NBCX_FLOAT_INT. */
typedef struct { float val; /**< value */ int idx; /**< index */ } nbcx_float_int;
/** The layout of NBCX_DOUBLE_INT. */
typedef struct { double val; /**< value */ int idx; /**< index */ } nbcx_double_int;
/** The layout of NBCX_LONG_INT. */
typedef struct { long val; /**< value */ int idx; /**< index */ } nbcx_long_int;
/** The layout of NBCX_2INT. */
typedef struct { int val; /**< value */ int idx; /**< index */ } nbcx_2int;
/** The layout of NBCX_SHORT_INT. */
typedef struct { short val; /**< value */ int idx; /**< index */ } nbcx_short_int;

/**@{*/
/** Bytes of data in one element of the datatype, and the stride between
 * consecutive elements in memory. */
NBCX_API int nbcx_datatype_size(nbcx_datatype type, size_t *size);
NBCX_API int nbcx_datatype_extent(nbcx_datatype type, ptrdiff_t *extent);
/**@}*/
/** Releases a datatype created by a face (e.g. nbcx_datatype_from_mpi);
 * operations in flight keep it alive until they complete. Sets *type to
 * NBCX_DATATYPE_NULL (for a built-in datatype that is all it does). */
NBCX_API int nbcx_datatype_free(nbcx_datatype *type);

/* ------------------------------------------------------------------ */
/* Reduction operations                                                */
/* ------------------------------------------------------------------ */

/** A predefined operation's handle from its number (internal). */
#define NBCX_OP_(n) ((nbcx_op)(uintptr_t)(n))
/**@{*/
/** The predefined reduction operations, as MPI's MPI_SUM ... MPI_MAXLOC. */
#define NBCX_SUM NBCX_OP_(1)
#define NBCX_PROD NBCX_OP_(2)
#define NBCX_MIN NBCX_OP_(3)
#define NBCX_MAX NBCX_OP_(4)
#define NBCX_LAND NBCX_OP_(5)
#define NBCX_LOR NBCX_OP_(6)
#define NBCX_LXOR NBCX_OP_(7)
#define NBCX_BAND NBCX_OP_(8)
#define NBCX_BOR NBCX_OP_(9)
#define NBCX_BXOR NBCX_OP_(10)
#define NBCX_MINLOC NBCX_OP_(11)
#define NBCX_MAXLOC NBCX_OP_(12)
/**@}*/

/** A user operation combines count elements: inout[i] = in[i] op inout[i],
 * exactly like MPI_User_function. "in" always holds the contribution of
 * the lower ranks, so non-commutative operations keep MPI's order. */
typedef void nbcx_user_fn(const void *in, void *inout, int count,
                          nbcx_datatype type, void *ctx);

/** Creates a user operation: fn, called with ctx; commutative 0 keeps
 * the ranks' order. */
NBCX_API int nbcx_op_create(nbcx_user_fn *fn, int commutative, void *ctx,
                            nbcx_op *op);
/**@{*/
/** Operations in flight keep the op alive; sets *op to NBCX_OP_NULL. */
NBCX_API int nbcx_op_free(nbcx_op *op);
NBCX_API int nbcx_op_commutative(nbcx_op op, int *commutative);
/**@}*/
/** Applies op locally: inout[i] = in[i] op inout[i] (like MPI_Reduce_local). */
NBCX_API int nbcx_reduce_local(const void *in, void *inout, int count,
                               nbcx_datatype type, nbcx_op op);

/* ------------------------------------------------------------------ */
/* Communicators                                                       */
/* ------------------------------------------------------------------ */

/**@{*/
/** This process's rank in comm, and the number of ranks. */
NBCX_API int nbcx_comm_rank(nbcx_comm comm, int *rank);
NBCX_API int nbcx_comm_size(nbcx_comm comm, int *size);
/**@}*/
/** Name of the transport under the communicator ("mpi", ...). */
NBCX_API int nbcx_comm_transport(nbcx_comm comm, const char **name);
/** Moves comm onto the transport called `name` (e.g. "ucx": a transport
 * that can be created by name, as NBCX_TRANSPORT chooses one in
 * nbcx_comm_from_mpi; an unknown name's detail lists them). Collective
 * over comm: every member calls it, with the same name, in the same
 * order as its collectives on comm; the
 * new transport is started with allgathers over the old one (UCX: its
 * worker addresses), after which only it is on comm's data path. All
 * members succeed or all fail; on failure comm stays on its transport,
 * usable. Naming comm's own transport does nothing (no communication).
 * A communicator made by nbcx_comm_from_mpi keeps its MPI transport
 * while on another one: "mpi" moves it back (the same agreement that no
 * member uses comm, then no communication).
 * Errors:
 *   NBCX_ERR_COMM       comm is not a valid communicator;
 *   NBCX_ERR_ARG        name is NULL or "", or no transport of that
 *                       name can be chosen ("mpi" only for a
 *                       communicator made by nbcx_comm_from_mpi;
 *                       "inproc" only by nbcx_inproc_run);
 *   NBCX_ERR_TRANSPORT  the transport is not in this build (e.g. "ucx"
 *                       where UCX was not found at configure time), its
 *                       module or library cannot be loaded or started on
 *                       some rank, another member ran out of memory (the
 *                       detail names it), or comm's ranks are threads of
 *                       one process (nbcx_inproc_run);
 *   NBCX_ERR_NOMEM      this member ran out of memory (the others fail
 *                       too, with NBCX_ERR_TRANSPORT);
 *   NBCX_ERR_BUSY       a member has operations in flight on comm, or
 *                       holds persistent requests or schedules
 *                       (nbcx_sched_create) on it: wait for and free them
 *                       first (the detail names the rank);
 *   or the error of comm itself (broken: NBCX_ERR_TIMEOUT, ...).
 * nbcx_error_detail says more. No other thread may use comm meanwhile. */
NBCX_API int nbcx_comm_set_transport(nbcx_comm comm, const char *name);
/** Releases the communicator; operations in flight on it complete
 * normally. Sets *comm to NBCX_COMM_NULL. */
NBCX_API int nbcx_comm_free(nbcx_comm *comm);

/**@{*/
/** New communicators from comm, as MPI_Comm_split and MPI_Comm_dup:
 * collective over comm (every member calls it, in the same order as its
 * collectives on comm). nbcx_comm_split puts the members of one color
 * (>= 0) into a communicator of their own, ranked by key, then by rank
 * in comm; a member whose color is NBCX_UNDEFINED gets NBCX_COMM_NULL.
 * nbcx_comm_dup: the same members and ranks, with comm's topology
 * (nbcx_comm_set_cart / _set_neighbors); split keeps none. The new
 * communicator has its own tag space and sequence of collectives, so
 * it can be used from another thread while comm is in use; free it with
 * nbcx_comm_free. Works on communicators of nbcx_inproc_run (the new
 * ones are on the same in-process transport; a failed rank body fails
 * their operations too) and of nbcx_comm_from_mpi (MPI_Comm_split of
 * nbcx's private duplicate; the new ones are on the MPI transport, also
 * where comm was moved to another, e.g. UCX). Errors:
 * NBCX_ERR_COMM, NBCX_ERR_ARG (out NULL, color negative and not
 * NBCX_UNDEFINED: like a mismatched collective, a member that fails
 * here leaves the others waiting), NBCX_ERR_TRANSPORT (a transport that
 * cannot split, e.g. a communicator moved to UCX whose MPI transport is
 * not kept), NBCX_ERR_NOMEM, or comm's own error (broken). */
#define NBCX_UNDEFINED (-32766)
NBCX_API int nbcx_comm_split(nbcx_comm comm, int color, int key,
                             nbcx_comm *newcomm);
NBCX_API int nbcx_comm_dup(nbcx_comm comm, nbcx_comm *newcomm);
/**@}*/

/** Timeouts: a dead or stuck peer must not hang the other ranks forever.
 * An operation on comm that makes no progress (no node of its schedule
 * finishes) for `seconds` completes with NBCX_ERR_TIMEOUT; its posted
 * messages are cancelled, nbcx prints once to stderr a diagnosis (the
 * collective, its sequence number and algorithm, and its pending nodes:
 * send, receive or poll, peer rank, transport tag, bytes) and marks comm
 * broken: its other operations in flight complete with NBCX_ERR_TIMEOUT,
 * and every later collective, persistent init or start, and schedule
 * start on it fails at once with NBCX_ERR_TIMEOUT. nbcx_comm_free (and
 * rank, size, transport, the timeout calls) still work; make a new
 * communicator to go on. seconds = 0 turns the timeout off; it takes
 * effect for operations in flight too. The default of every
 * communicator is NBCX_TIMEOUT=SECONDS from the environment (unset:
 * off). Time is measured while operations are progressed: in caller
 * mode, inside nbcx test/wait calls. A timeout is local: other ranks
 * decide theirs by their own clocks (typically each rank waiting for the
 * dead one times out). If the transport itself blocks (an MPI call that
 * never returns), nbcx cannot time out. A late (not dead) peer may still
 * read the send buffers of a timed-out operation (sends MPI cannot
 * cancel): keep them while it may. Errors: NBCX_ERR_COMM,
 * NBCX_ERR_ARG (seconds negative or not a number, NULL pointer). */
NBCX_API int nbcx_comm_set_timeout(nbcx_comm comm, double seconds);
/** The timeout in effect for comm (0: off). */
NBCX_API int nbcx_comm_get_timeout(nbcx_comm comm, double *seconds);

/* ------------------------------------------------------------------ */
/* Neighbourhood topologies                                            */
/* ------------------------------------------------------------------ */
/**
 * The neighbourhood collectives (nbcx_ineighbor_*) exchange data along
 * the edges of a topology attached to the communicator. Each rank names
 * its own neighbours, in the order of the blocks in its buffers: block i
 * of the receive buffer comes from sources[i], block j of the send buffer
 * goes to destinations[j]. A NBCX_PROC_NULL neighbour exchanges nothing
 * and its block is neither read nor written. The lists of all ranks must
 * agree (i appears in j's destinations as often as j in i's sources).
 *
 * A graph (nbcx_comm_set_neighbors) follows MPI's distributed graphs:
 * when a pair of ranks is joined by several edges, the k-th edge to a
 * rank in destinations meets the k-th edge from this rank in its sources.
 * A Cartesian grid (nbcx_comm_set_cart) follows MPI_Cart_create without
 * reordering: ranks in row-major order of their coordinates, and for each
 * dimension d the neighbour at -1 then the one at +1 (2 * ndims blocks,
 * NBCX_PROC_NULL across a non-periodic border). The block a rank sends
 * towards -1 arrives in its neighbour's block for +1 and vice versa, also
 * when both are the same rank (a periodic dimension of 1 or 2), as
 * MPI-4.1 (Example 8.10) requires.
 *
 * nbcx_comm_from_mpi (nbcx_mpi.h) attaches the topology of an MPI
 * communicator itself. Setting a topology replaces the previous one for
 * collectives started later; it is a local call, but all ranks must set
 * matching topologies before their next neighbourhood collective.
 */
#define NBCX_PROC_NULL (-1)

/** Sets a graph topology: the ranks comm receives from (sources) and
 * sends to (destinations), in the order of the neighbourhood buffers. */
NBCX_API int nbcx_comm_set_neighbors(nbcx_comm comm, int indegree,
                                     const int sources[], int outdegree,
                                     const int destinations[]);
/** dims[d] > 0 ranks along dimension d, their product the communicator's
 * size; periods[d] nonzero for a periodic dimension (NULL: none is). */
NBCX_API int nbcx_comm_set_cart(nbcx_comm comm, int ndims, const int dims[],
                                const int periods[]);
/**@{*/
/** The topology's degrees (0 and 0 without one) and lists; the lists get
 * at most maxin / maxout entries. */
NBCX_API int nbcx_comm_neighbors_count(nbcx_comm comm, int *indegree,
                                       int *outdegree);
NBCX_API int nbcx_comm_neighbors(nbcx_comm comm, int maxin, int sources[],
                                 int maxout, int destinations[]);
/**@}*/

/* ------------------------------------------------------------------ */
/* Ranks as threads: the in-process transport (no MPI needed)          */
/* ------------------------------------------------------------------ */
/**@{*/
/**
 * nbcx_inproc_run(nranks, body, arg) runs body(comm, arg) on nranks new
 * threads at once, thread i with its own communicator of rank i and size
 * nranks on the "inproc" transport, and returns when every body has
 * returned. Ranks exchange messages through shared memory: small ones
 * are copied once into a buffer by the sender (eager, up to
 * NBCX_INPROC_EAGER bytes, default 16 KiB), larger ones once, directly
 * from the send to the receive buffer, by whichever side comes second
 * (rendezvous). Collectives on these communicators use shared-memory
 * slots (NBCX_INPROC_SLOTS of them, default 16; algorithm "slots", see
 * nbcx_algorithm_set) up to NBCX_INPROC_SLOT_MAX bytes, and the
 * point-to-point algorithms otherwise. Every collective, algorithm and
 * progress mode works; the progress engine (and its thread) serves all
 * the ranks of the process.
 *
 * body returns NBCX_SUCCESS (0) or an error code of its choice. The
 * result of nbcx_inproc_run is NBCX_SUCCESS if every body returned 0,
 * else the nonzero value returned by the lowest such rank. Once a body
 * has returned nonzero, operations of the other ranks still pending (or
 * started later) on these communicators fail with NBCX_ERR_TRANSPORT
 * rather than wait forever for the rank that left.
 *
 * A body must complete (wait for) its operations before it returns. It
 * may free its communicator (nbcx_comm_free); otherwise nbcx_inproc_run
 * frees it once the body has returned. Several nbcx_inproc_run calls may
 * run at once (from different threads): their ranks never meet.
 *
 * Errors, with nothing started: NBCX_ERR_ARG (nranks < 1, body NULL),
 * NBCX_ERR_NOMEM (memory or threads could not be had).
 */
typedef int nbcx_inproc_body(nbcx_comm comm, void *arg);
NBCX_API int nbcx_inproc_run(int nranks, nbcx_inproc_body *body, void *arg);
/**@}*/

/* ------------------------------------------------------------------ */
/* Nonblocking collectives (MPI argument order and semantics)          */
/* ------------------------------------------------------------------ */

/**@{*/
/** The nonblocking collectives of MPI 3 (MPI_Ibarrier ... MPI_Ialltoall),
 * with MPI's arguments, order and semantics; *req completes in
 * nbcx_wait/nbcx_test. */
NBCX_API int nbcx_ibarrier(nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_ibcast(void *buf, int count, nbcx_datatype type, int root,
                         nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_ireduce(const void *sendbuf, void *recvbuf, int count,
                          nbcx_datatype type, nbcx_op op, int root,
                          nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_iallreduce(const void *sendbuf, void *recvbuf, int count,
                             nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                             nbcx_request *req);
NBCX_API int nbcx_igather(const void *sendbuf, int sendcount,
                          nbcx_datatype sendtype, void *recvbuf, int recvcount,
                          nbcx_datatype recvtype, int root, nbcx_comm comm,
                          nbcx_request *req);
NBCX_API int nbcx_iscatter(const void *sendbuf, int sendcount,
                           nbcx_datatype sendtype, void *recvbuf, int recvcount,
                           nbcx_datatype recvtype, int root, nbcx_comm comm,
                           nbcx_request *req);
NBCX_API int nbcx_iallgather(const void *sendbuf, int sendcount,
                             nbcx_datatype sendtype, void *recvbuf,
                             int recvcount, nbcx_datatype recvtype,
                             nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_ialltoall(const void *sendbuf, int sendcount,
                            nbcx_datatype sendtype, void *recvbuf,
                            int recvcount, nbcx_datatype recvtype,
                            nbcx_comm comm, nbcx_request *req);
/**@}*/

/**@{*/
/** The vector variants: per-rank counts and displacements (in elements of
 * the datatype, from the start of the buffer), arrays of the communicator
 * size. Blocks of zero bytes send no message. */
NBCX_API int nbcx_igatherv(const void *sendbuf, int sendcount,
                           nbcx_datatype sendtype, void *recvbuf,
                           const int recvcounts[], const int displs[],
                           nbcx_datatype recvtype, int root, nbcx_comm comm,
                           nbcx_request *req);
NBCX_API int nbcx_iscatterv(const void *sendbuf, const int sendcounts[],
                            const int displs[], nbcx_datatype sendtype,
                            void *recvbuf, int recvcount,
                            nbcx_datatype recvtype, int root, nbcx_comm comm,
                            nbcx_request *req);
NBCX_API int nbcx_iallgatherv(const void *sendbuf, int sendcount,
                              nbcx_datatype sendtype, void *recvbuf,
                              const int recvcounts[], const int displs[],
                              nbcx_datatype recvtype, nbcx_comm comm,
                              nbcx_request *req);
NBCX_API int nbcx_ialltoallv(const void *sendbuf, const int sendcounts[],
                             const int sdispls[], nbcx_datatype sendtype,
                             void *recvbuf, const int recvcounts[],
                             const int rdispls[], nbcx_datatype recvtype,
                             nbcx_comm comm, nbcx_request *req);
/**@}*/
/** One datatype per rank; displacements in BYTES (as MPI_Alltoallw). */
NBCX_API int nbcx_ialltoallw(const void *sendbuf, const int sendcounts[],
                             const int sdispls[],
                             const nbcx_datatype sendtypes[], void *recvbuf,
                             const int recvcounts[], const int rdispls[],
                             const nbcx_datatype recvtypes[], nbcx_comm comm,
                             nbcx_request *req);
/**@{*/
/** Reduces the vectors of all ranks element-wise and scatters the result:
 * rank i gets recvcounts[i] elements (the blocks follow each other in
 * sendbuf); _block: recvcount elements each. */
NBCX_API int nbcx_ireduce_scatter(const void *sendbuf, void *recvbuf,
                                  const int recvcounts[], nbcx_datatype type,
                                  nbcx_op op, nbcx_comm comm,
                                  nbcx_request *req);
NBCX_API int nbcx_ireduce_scatter_block(const void *sendbuf, void *recvbuf,
                                        int recvcount, nbcx_datatype type,
                                        nbcx_op op, nbcx_comm comm,
                                        nbcx_request *req);
/**@}*/
/**@{*/
/** Prefix reductions: rank r gets the reduction of ranks 0..r (scan) or
 * 0..r-1 (exscan; rank 0's recvbuf is not touched). */
NBCX_API int nbcx_iscan(const void *sendbuf, void *recvbuf, int count,
                        nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                        nbcx_request *req);
NBCX_API int nbcx_iexscan(const void *sendbuf, void *recvbuf, int count,
                          nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                          nbcx_request *req);
/**@}*/

/**@{*/
/** Neighbourhood collectives over the communicator's topology (see
 * nbcx_comm_set_neighbors; NBCX_ERR_TOPOLOGY without one). Arrays have
 * one entry per source (receive side) or destination (send side). MPI
 * allows no NBCX_IN_PLACE here. */
NBCX_API int nbcx_ineighbor_allgather(const void *sendbuf, int sendcount,
                                      nbcx_datatype sendtype, void *recvbuf,
                                      int recvcount, nbcx_datatype recvtype,
                                      nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_ineighbor_allgatherv(const void *sendbuf, int sendcount,
                                       nbcx_datatype sendtype, void *recvbuf,
                                       const int recvcounts[],
                                       const int displs[],
                                       nbcx_datatype recvtype, nbcx_comm comm,
                                       nbcx_request *req);
NBCX_API int nbcx_ineighbor_alltoall(const void *sendbuf, int sendcount,
                                     nbcx_datatype sendtype, void *recvbuf,
                                     int recvcount, nbcx_datatype recvtype,
                                     nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_ineighbor_alltoallv(const void *sendbuf,
                                      const int sendcounts[],
                                      const int sdispls[],
                                      nbcx_datatype sendtype, void *recvbuf,
                                      const int recvcounts[],
                                      const int rdispls[],
                                      nbcx_datatype recvtype, nbcx_comm comm,
                                      nbcx_request *req);
/**@}*/
/** Byte displacements of address size, as MPI_Neighbor_alltoallw's
 * MPI_Aint ones. */
NBCX_API int nbcx_ineighbor_alltoallw(const void *sendbuf,
                                      const int sendcounts[],
                                      const ptrdiff_t sdispls[],
                                      const nbcx_datatype sendtypes[],
                                      void *recvbuf, const int recvcounts[],
                                      const ptrdiff_t rdispls[],
                                      const nbcx_datatype recvtypes[],
                                      nbcx_comm comm, nbcx_request *req);

/* ------------------------------------------------------------------ */
/* Persistent collectives (MPI-4)                                      */
/* ------------------------------------------------------------------ */
/**@{*/
/**
 * nbcx_<op>_init takes the arguments of nbcx_i<op> and plans the
 * operation once: arguments checked, algorithm chosen, schedule and
 * scratch buffers built, its tags reserved and, on the MPI transport,
 * persistent point-to-point requests created (MPI_Send_init and
 * MPI_Recv_init). The request starts inactive. nbcx_start (or
 * nbcx_startall) runs it with whatever the buffers hold at that moment,
 * allocating nothing; test and wait complete it and leave it inactive,
 * not NULL, ready for the next start. Test or wait on an inactive
 * request returns at once. nbcx_request_free releases it (it must not be
 * active). As MPI requires, every rank makes the init calls of a
 * communicator in the same order as its other collectives; a request's
 * starts need no particular order relative to other operations, since
 * its tags are its own.
 */
NBCX_API int nbcx_barrier_init(nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_bcast_init(void *buf, int count, nbcx_datatype type,
                             int root, nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_reduce_init(const void *sendbuf, void *recvbuf, int count,
                              nbcx_datatype type, nbcx_op op, int root,
                              nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_allreduce_init(const void *sendbuf, void *recvbuf,
                                 int count, nbcx_datatype type, nbcx_op op,
                                 nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_gather_init(const void *sendbuf, int sendcount,
                              nbcx_datatype sendtype, void *recvbuf,
                              int recvcount, nbcx_datatype recvtype, int root,
                              nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_scatter_init(const void *sendbuf, int sendcount,
                               nbcx_datatype sendtype, void *recvbuf,
                               int recvcount, nbcx_datatype recvtype,
                               int root, nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_allgather_init(const void *sendbuf, int sendcount,
                                 nbcx_datatype sendtype, void *recvbuf,
                                 int recvcount, nbcx_datatype recvtype,
                                 nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_alltoall_init(const void *sendbuf, int sendcount,
                                nbcx_datatype sendtype, void *recvbuf,
                                int recvcount, nbcx_datatype recvtype,
                                nbcx_comm comm, nbcx_request *req);
/**@}*/
/**@{*/
/** The persistent forms of the operations below (same arguments). */
NBCX_API int nbcx_gatherv_init(const void *sendbuf, int sendcount,
                               nbcx_datatype sendtype, void *recvbuf,
                               const int recvcounts[], const int displs[],
                               nbcx_datatype recvtype, int root,
                               nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_scatterv_init(const void *sendbuf, const int sendcounts[],
                                const int displs[], nbcx_datatype sendtype,
                                void *recvbuf, int recvcount,
                                nbcx_datatype recvtype, int root,
                                nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_allgatherv_init(const void *sendbuf, int sendcount,
                                  nbcx_datatype sendtype, void *recvbuf,
                                  const int recvcounts[], const int displs[],
                                  nbcx_datatype recvtype, nbcx_comm comm,
                                  nbcx_request *req);
NBCX_API int nbcx_alltoallv_init(const void *sendbuf, const int sendcounts[],
                                 const int sdispls[], nbcx_datatype sendtype,
                                 void *recvbuf, const int recvcounts[],
                                 const int rdispls[], nbcx_datatype recvtype,
                                 nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                 const int sdispls[],
                                 const nbcx_datatype sendtypes[],
                                 void *recvbuf, const int recvcounts[],
                                 const int rdispls[],
                                 const nbcx_datatype recvtypes[],
                                 nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_reduce_scatter_init(const void *sendbuf, void *recvbuf,
                                      const int recvcounts[],
                                      nbcx_datatype type, nbcx_op op,
                                      nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_reduce_scatter_block_init(const void *sendbuf, void *recvbuf,
                                            int recvcount, nbcx_datatype type,
                                            nbcx_op op, nbcx_comm comm,
                                            nbcx_request *req);
NBCX_API int nbcx_scan_init(const void *sendbuf, void *recvbuf, int count,
                            nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                            nbcx_request *req);
NBCX_API int nbcx_exscan_init(const void *sendbuf, void *recvbuf, int count,
                              nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                              nbcx_request *req);
NBCX_API int nbcx_neighbor_allgather_init(const void *sendbuf, int sendcount,
                                          nbcx_datatype sendtype,
                                          void *recvbuf, int recvcount,
                                          nbcx_datatype recvtype,
                                          nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_neighbor_allgatherv_init(const void *sendbuf, int sendcount,
                                           nbcx_datatype sendtype,
                                           void *recvbuf,
                                           const int recvcounts[],
                                           const int displs[],
                                           nbcx_datatype recvtype,
                                           nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_neighbor_alltoall_init(const void *sendbuf, int sendcount,
                                         nbcx_datatype sendtype, void *recvbuf,
                                         int recvcount, nbcx_datatype recvtype,
                                         nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_neighbor_alltoallv_init(const void *sendbuf,
                                          const int sendcounts[],
                                          const int sdispls[],
                                          nbcx_datatype sendtype,
                                          void *recvbuf,
                                          const int recvcounts[],
                                          const int rdispls[],
                                          nbcx_datatype recvtype,
                                          nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_neighbor_alltoallw_init(const void *sendbuf,
                                          const int sendcounts[],
                                          const ptrdiff_t sdispls[],
                                          const nbcx_datatype sendtypes[],
                                          void *recvbuf,
                                          const int recvcounts[],
                                          const ptrdiff_t rdispls[],
                                          const nbcx_datatype recvtypes[],
                                          nbcx_comm comm, nbcx_request *req);
/**@}*/
/* ------------------------------------------------------------------ */
/* Large counts (MPI-4 _c calls)                                       */
/* ------------------------------------------------------------------ */
/** A count or element displacement of the large-count calls, as MPI 4.0's
 * MPI_Count (64 bits). */
typedef int64_t nbcx_count;
/**@{*/
/**
 * nbcx_i<op>_c and nbcx_<op>_init_c are nbcx_i<op> and nbcx_<op>_init
 * with 64-bit counts: every count, count array and element displacement
 * array is nbcx_count; the byte displacements of the w variants are
 * ptrdiff_t (MPI_Aint). Semantics, checks and error codes are those of
 * the int calls, which are the same operations (the int calls convert
 * to these; a call and its _c form with equal values share the
 * schedule cache). Displacements and buffers beyond 2 GiB are served:
 * blocks are addressed with 64-bit offsets, and messages over INT_MAX
 * bytes are cut into chunks of 768 MiB, at the same bytes on both sides
 * whatever their types. Every collective takes any count, per call and
 * per block of the v, w and neighbourhood variants: reduce, allreduce,
 * scan and exscan above INT_MAX elements run as pieces of 2^30
 * elements, a bcast above INT_MAX bytes as pieces of 2^30 bytes, one
 * after the other, each with the algorithm its size chooses. A negative
 * count is NBCX_ERR_COUNT as in the int calls, and so are counts whose
 * sum passes LLONG_MAX (reduce_scatter).
 */
NBCX_API int nbcx_ibcast_c(void *buf, nbcx_count count, nbcx_datatype type,
                           int root, nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_ireduce_c(const void *sendbuf, void *recvbuf,
                            nbcx_count count, nbcx_datatype type, nbcx_op op,
                            int root, nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_iallreduce_c(const void *sendbuf, void *recvbuf,
                               nbcx_count count, nbcx_datatype type,
                               nbcx_op op, nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_igather_c(const void *sendbuf, nbcx_count sendcount,
                            nbcx_datatype sendtype, void *recvbuf,
                            nbcx_count recvcount, nbcx_datatype recvtype,
                            int root, nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_iscatter_c(const void *sendbuf, nbcx_count sendcount,
                             nbcx_datatype sendtype, void *recvbuf,
                             nbcx_count recvcount, nbcx_datatype recvtype,
                             int root, nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_iallgather_c(const void *sendbuf, nbcx_count sendcount,
                               nbcx_datatype sendtype, void *recvbuf,
                               nbcx_count recvcount, nbcx_datatype recvtype,
                               nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_ialltoall_c(const void *sendbuf, nbcx_count sendcount,
                              nbcx_datatype sendtype, void *recvbuf,
                              nbcx_count recvcount, nbcx_datatype recvtype,
                              nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_igatherv_c(const void *sendbuf, nbcx_count sendcount,
                             nbcx_datatype sendtype, void *recvbuf,
                             const nbcx_count recvcounts[],
                             const nbcx_count displs[], nbcx_datatype recvtype,
                             int root, nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_iscatterv_c(const void *sendbuf,
                              const nbcx_count sendcounts[],
                              const nbcx_count displs[],
                              nbcx_datatype sendtype, void *recvbuf,
                              nbcx_count recvcount, nbcx_datatype recvtype,
                              int root, nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_iallgatherv_c(const void *sendbuf, nbcx_count sendcount,
                                nbcx_datatype sendtype, void *recvbuf,
                                const nbcx_count recvcounts[],
                                const nbcx_count displs[],
                                nbcx_datatype recvtype, nbcx_comm comm,
                                nbcx_request *req);
NBCX_API int nbcx_ialltoallv_c(const void *sendbuf,
                               const nbcx_count sendcounts[],
                               const nbcx_count sdispls[],
                               nbcx_datatype sendtype, void *recvbuf,
                               const nbcx_count recvcounts[],
                               const nbcx_count rdispls[],
                               nbcx_datatype recvtype, nbcx_comm comm,
                               nbcx_request *req);
NBCX_API int nbcx_ialltoallw_c(const void *sendbuf,
                               const nbcx_count sendcounts[],
                               const ptrdiff_t sdispls[],
                               const nbcx_datatype sendtypes[], void *recvbuf,
                               const nbcx_count recvcounts[],
                               const ptrdiff_t rdispls[],
                               const nbcx_datatype recvtypes[], nbcx_comm comm,
                               nbcx_request *req);
NBCX_API int nbcx_ireduce_scatter_c(const void *sendbuf, void *recvbuf,
                                    const nbcx_count recvcounts[],
                                    nbcx_datatype type, nbcx_op op,
                                    nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_ireduce_scatter_block_c(const void *sendbuf, void *recvbuf,
                                          nbcx_count recvcount,
                                          nbcx_datatype type, nbcx_op op,
                                          nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_iscan_c(const void *sendbuf, void *recvbuf, nbcx_count count,
                          nbcx_datatype type, nbcx_op op, nbcx_comm comm,
                          nbcx_request *req);
NBCX_API int nbcx_iexscan_c(const void *sendbuf, void *recvbuf,
                            nbcx_count count, nbcx_datatype type, nbcx_op op,
                            nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_ineighbor_allgather_c(const void *sendbuf,
                                        nbcx_count sendcount,
                                        nbcx_datatype sendtype, void *recvbuf,
                                        nbcx_count recvcount,
                                        nbcx_datatype recvtype, nbcx_comm comm,
                                        nbcx_request *req);
NBCX_API int nbcx_ineighbor_allgatherv_c(const void *sendbuf,
                                         nbcx_count sendcount,
                                         nbcx_datatype sendtype, void *recvbuf,
                                         const nbcx_count recvcounts[],
                                         const nbcx_count displs[],
                                         nbcx_datatype recvtype,
                                         nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_ineighbor_alltoall_c(const void *sendbuf,
                                       nbcx_count sendcount,
                                       nbcx_datatype sendtype, void *recvbuf,
                                       nbcx_count recvcount,
                                       nbcx_datatype recvtype, nbcx_comm comm,
                                       nbcx_request *req);
NBCX_API int nbcx_ineighbor_alltoallv_c(const void *sendbuf,
                                        const nbcx_count sendcounts[],
                                        const nbcx_count sdispls[],
                                        nbcx_datatype sendtype, void *recvbuf,
                                        const nbcx_count recvcounts[],
                                        const nbcx_count rdispls[],
                                        nbcx_datatype recvtype, nbcx_comm comm,
                                        nbcx_request *req);
NBCX_API int nbcx_ineighbor_alltoallw_c(const void *sendbuf,
                                        const nbcx_count sendcounts[],
                                        const ptrdiff_t sdispls[],
                                        const nbcx_datatype sendtypes[],
                                        void *recvbuf,
                                        const nbcx_count recvcounts[],
                                        const ptrdiff_t rdispls[],
                                        const nbcx_datatype recvtypes[],
                                        nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_bcast_init_c(void *buf, nbcx_count count, nbcx_datatype type,
                               int root, nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_reduce_init_c(const void *sendbuf, void *recvbuf,
                                nbcx_count count, nbcx_datatype type,
                                nbcx_op op, int root, nbcx_comm comm,
                                nbcx_request *req);
NBCX_API int nbcx_allreduce_init_c(const void *sendbuf, void *recvbuf,
                                   nbcx_count count, nbcx_datatype type,
                                   nbcx_op op, nbcx_comm comm,
                                   nbcx_request *req);
NBCX_API int nbcx_gather_init_c(const void *sendbuf, nbcx_count sendcount,
                                nbcx_datatype sendtype, void *recvbuf,
                                nbcx_count recvcount, nbcx_datatype recvtype,
                                int root, nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_scatter_init_c(const void *sendbuf, nbcx_count sendcount,
                                 nbcx_datatype sendtype, void *recvbuf,
                                 nbcx_count recvcount, nbcx_datatype recvtype,
                                 int root, nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_allgather_init_c(const void *sendbuf, nbcx_count sendcount,
                                   nbcx_datatype sendtype, void *recvbuf,
                                   nbcx_count recvcount,
                                   nbcx_datatype recvtype, nbcx_comm comm,
                                   nbcx_request *req);
NBCX_API int nbcx_alltoall_init_c(const void *sendbuf, nbcx_count sendcount,
                                  nbcx_datatype sendtype, void *recvbuf,
                                  nbcx_count recvcount, nbcx_datatype recvtype,
                                  nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_gatherv_init_c(const void *sendbuf, nbcx_count sendcount,
                                 nbcx_datatype sendtype, void *recvbuf,
                                 const nbcx_count recvcounts[],
                                 const nbcx_count displs[],
                                 nbcx_datatype recvtype, int root,
                                 nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_scatterv_init_c(const void *sendbuf,
                                  const nbcx_count sendcounts[],
                                  const nbcx_count displs[],
                                  nbcx_datatype sendtype, void *recvbuf,
                                  nbcx_count recvcount, nbcx_datatype recvtype,
                                  int root, nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_allgatherv_init_c(const void *sendbuf, nbcx_count sendcount,
                                    nbcx_datatype sendtype, void *recvbuf,
                                    const nbcx_count recvcounts[],
                                    const nbcx_count displs[],
                                    nbcx_datatype recvtype, nbcx_comm comm,
                                    nbcx_request *req);
NBCX_API int nbcx_alltoallv_init_c(const void *sendbuf,
                                   const nbcx_count sendcounts[],
                                   const nbcx_count sdispls[],
                                   nbcx_datatype sendtype, void *recvbuf,
                                   const nbcx_count recvcounts[],
                                   const nbcx_count rdispls[],
                                   nbcx_datatype recvtype, nbcx_comm comm,
                                   nbcx_request *req);
NBCX_API int nbcx_alltoallw_init_c(const void *sendbuf,
                                   const nbcx_count sendcounts[],
                                   const ptrdiff_t sdispls[],
                                   const nbcx_datatype sendtypes[],
                                   void *recvbuf,
                                   const nbcx_count recvcounts[],
                                   const ptrdiff_t rdispls[],
                                   const nbcx_datatype recvtypes[],
                                   nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_reduce_scatter_init_c(const void *sendbuf, void *recvbuf,
                                        const nbcx_count recvcounts[],
                                        nbcx_datatype type, nbcx_op op,
                                        nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_reduce_scatter_block_init_c(const void *sendbuf,
                                              void *recvbuf,
                                              nbcx_count recvcount,
                                              nbcx_datatype type, nbcx_op op,
                                              nbcx_comm comm,
                                              nbcx_request *req);
NBCX_API int nbcx_scan_init_c(const void *sendbuf, void *recvbuf,
                              nbcx_count count, nbcx_datatype type, nbcx_op op,
                              nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_exscan_init_c(const void *sendbuf, void *recvbuf,
                                nbcx_count count, nbcx_datatype type,
                                nbcx_op op, nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_neighbor_allgather_init_c(const void *sendbuf,
                                            nbcx_count sendcount,
                                            nbcx_datatype sendtype,
                                            void *recvbuf,
                                            nbcx_count recvcount,
                                            nbcx_datatype recvtype,
                                            nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_neighbor_allgatherv_init_c(const void *sendbuf,
                                             nbcx_count sendcount,
                                             nbcx_datatype sendtype,
                                             void *recvbuf,
                                             const nbcx_count recvcounts[],
                                             const nbcx_count displs[],
                                             nbcx_datatype recvtype,
                                             nbcx_comm comm,
                                             nbcx_request *req);
NBCX_API int nbcx_neighbor_alltoall_init_c(const void *sendbuf,
                                           nbcx_count sendcount,
                                           nbcx_datatype sendtype,
                                           void *recvbuf, nbcx_count recvcount,
                                           nbcx_datatype recvtype,
                                           nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_neighbor_alltoallv_init_c(const void *sendbuf,
                                            const nbcx_count sendcounts[],
                                            const nbcx_count sdispls[],
                                            nbcx_datatype sendtype,
                                            void *recvbuf,
                                            const nbcx_count recvcounts[],
                                            const nbcx_count rdispls[],
                                            nbcx_datatype recvtype,
                                            nbcx_comm comm, nbcx_request *req);
NBCX_API int nbcx_neighbor_alltoallw_init_c(const void *sendbuf,
                                            const nbcx_count sendcounts[],
                                            const ptrdiff_t sdispls[],
                                            const nbcx_datatype sendtypes[],
                                            void *recvbuf,
                                            const nbcx_count recvcounts[],
                                            const ptrdiff_t rdispls[],
                                            const nbcx_datatype recvtypes[],
                                            nbcx_comm comm, nbcx_request *req);
/**@}*/

/**@{*/
/** NBCX_ERR_REQUEST if a request is not persistent, already active or
 * freed (nbcx_error_detail says which); NBCX_ERR_EXHAUSTED when its
 * communicator was broken by tag-space exhaustion. startall checks every
 * request before it starts any. */
NBCX_API int nbcx_start(nbcx_request *req);
NBCX_API int nbcx_startall(int count, nbcx_request reqs[]);
/**@}*/
/** Releases an inactive persistent request, or a completed nonblocking
 * one, and sets *req to NBCX_REQUEST_NULL; NBCX_ERR_REQUEST while the
 * operation is in flight (wait for it first). */
NBCX_API int nbcx_request_free(nbcx_request *req);

/* ------------------------------------------------------------------ */
/* Completion                                                          */
/* ------------------------------------------------------------------ */

/**@{*/
/** On completion the request is released and set to NBCX_REQUEST_NULL; the
 * return value is the operation's own result. A NBCX_REQUEST_NULL request
 * counts as complete. In caller progress mode every call also progresses
 * all outstanding operations of the process; in thread and split modes
 * the progress thread does, and a waiting thread sleeps. */
NBCX_API int nbcx_test(nbcx_request *req, int *flag);
NBCX_API int nbcx_wait(nbcx_request *req);
NBCX_API int nbcx_testall(int count, nbcx_request reqs[], int *flag);
NBCX_API int nbcx_waitall(int count, nbcx_request reqs[]);
/**@}*/
/** *index is the completed request, or -1 when all are NBCX_REQUEST_NULL. */
NBCX_API int nbcx_waitany(int count, nbcx_request reqs[], int *index);
/** Progresses every outstanding operation once without waiting. */
NBCX_API int nbcx_progress(void);

/**@{*/
/** Completion callbacks. nbcx_request_on_complete(req, fn, arg) has
 * fn(arg, err) called once when the operation of req completes, err
 * being its result (what the wait will return). It runs on whichever
 * thread completes the operation: the progress thread (thread, split,
 * auto modes) or the application thread inside a test, wait or
 * nbcx_progress (caller mode, or a wait that drives progress), after the
 * result is in the buffers and after the request is marked complete,
 * outside nbcx's locks. A test or wait may therefore report the request
 * complete, and release it, before or while fn runs: fn gets no handle,
 * and what arg points to must outlive the call (free it in fn, or count
 * the calls).
 *
 * Rules for fn: be short and never block; it may start operations
 * (nbcx_i<op>, nbcx_start: a chain of collectives) and test requests
 * (nbcx_test never blocks), but must not wait (nbcx_wait*, nor anything
 * that waits for another nbcx operation), must not free or complete a
 * request another thread owns, and must not call nbcx_progress_set or
 * free a communicator.
 *
 * - Registered while the operation is in flight (or before a persistent
 *   request is started): fn runs at its completion. Registration racing
 *   with completion is safe: fn runs exactly once.
 * - Registered after the operation completed, but before a test or wait
 *   released the request: fn runs at once, in the calling thread, before
 *   nbcx_request_on_complete returns.
 * - Persistent requests: registered once, fn fires at every start's
 *   completion, until the request is freed. A new registration replaces
 *   the old one (for the start in flight if it has not completed yet).
 * - Nonblocking requests take one callback: a second registration fails
 *   with NBCX_ERR_REQUEST.
 * - A request with a callback has no caller to drive it: in thread,
 *   split and auto modes the progress thread drives it (auto mode does
 *   not leave it to the application's calls); in caller mode it completes
 *   only inside the application's nbcx calls, as any operation does;
 *   in split mode, an operation whose last tree levels belong to the
 *   application thread (bcast, scatter) completes in its wait.
 * Errors: NBCX_ERR_REQUEST (req NBCX_REQUEST_NULL, freed or not a
 * request, or a second callback), NBCX_ERR_ARG (fn NULL), NBCX_ERR_NOMEM. */
typedef void (*nbcx_complete_fn)(void *arg, int err);
NBCX_API int nbcx_request_on_complete(nbcx_request req, nbcx_complete_fn fn,
                                      void *arg);
/**@}*/

/* ------------------------------------------------------------------ */
/* Progress modes                                                      */
/* ------------------------------------------------------------------ */
/**
 * Who moves outstanding operations forward:
 *   CALLER  the application, inside nbcx_test/wait/progress; nothing
 *           moves while it computes.
 *   THREAD  one progress thread per process, for every communicator and
 *           operation. It sleeps while nothing is outstanding; otherwise
 *           it polls with an adaptive back-off bounded by the predicted
 *           completion of the next message (size / measured bandwidth),
 *           yielding its core in between. Waiting threads sleep.
 *   SPLIT   THREAD, plus the split tree (Denis et al.) for binomial-tree
 *           operations: the S tree levels nearest the leaves run on the
 *           application thread (inside the start call where they come
 *           first, as in reduce and gather; inside wait where they come
 *           last, as in bcast and scatter) and the others on the progress
 *           thread. S comes from the cost model (nbcx_split_model), a
 *           split rule of the NBCX_TUNING table (nbcx-tune --split), or
 *           NBCX_SPLIT_LEVELS, which wins.
 *   AUTO    per operation: a small one (under NBCX_AUTO_THREAD_BYTES of
 *           sends, default 64 KiB) is left to the application's own
 *           calls, as in CALLER, and never wakes the thread, which only
 *           looks at it once a millisecond (so a program that blocks
 *           elsewhere still sees it finish); a large one wakes the
 *           thread, as in THREAD. A wait drives progress itself rather
 *           than sleeping, and the thread stays out of its way.
 * The initial mode is NBCX_PROGRESS (caller, thread, split or auto);
 * unset, it is AUTO where the communication library allows calls from
 * another thread (MPI_THREAD_MULTIPLE), else CALLER with a one-time
 * warning. This default is decided once the first communicator exists
 * (or at the first nbcx_progress_set): before, nbcx_progress_get and
 * nbcx_info report what the environment asks for and start no thread.
 * NBCX_PROGRESS_CPUS places the progress thread: a list of cores such as
 * "2" or "2-3,6", or "auto" (the default: an idle core when one exists,
 * otherwise the application's own cores). nbcx_info() reports the choice.
 */
typedef enum nbcx_progress_mode {
    NBCX_PROGRESS_CALLER = 1,
    NBCX_PROGRESS_THREAD = 2,
    NBCX_PROGRESS_SPLIT = 3,
    NBCX_PROGRESS_AUTO = 4
} nbcx_progress_mode;

/**@{*/
/** Changes the mode; only while no operation is outstanding (else
 * NBCX_ERR_REQUEST). THREAD and SPLIT fail with NBCX_ERR_TRANSPORT when
 * a communicator's library does not allow calls from another thread. */
NBCX_API int nbcx_progress_set(nbcx_progress_mode mode);
NBCX_API int nbcx_progress_get(nbcx_progress_mode *mode);
/**@}*/

/** The split-tree cost model (Denis et al., equations 1-5), extended to
 * the cores present: `ranks` ranks on `app_cores` cores, progress threads
 * on `progress_cores` cores of their own (0: they share the application
 * cores; their CPU time, 5% of each upper-level transfer, then slows the
 * computation), computation lasting `compute` units. Times are in units
 * of one point-to-point transfer of the operation's buffer. Gives, in
 * the optional t_collective and t_overlapped, the time of the collective
 * alone and overlapped with the computation when the S lowest levels run
 * on the application (S > H counts as H; S = -1: the best S); `levels`
 * (optional) gets the tree height H = ceil(log2 ranks). Returns the S in
 * [0, H] with the least overlapped time, the smaller on ties (the choice
 * made when NBCX_SPLIT_LEVELS is unset), or -1 on bad arguments
 * (ranks < 1, app_cores < 1, progress_cores < 0, compute < 0 or NaN,
 * S < -1). */
NBCX_API int nbcx_split_model(int ranks, int app_cores, int progress_cores,
                              double compute, int S, double *t_collective,
                              double *t_overlapped, int *levels);

/* ------------------------------------------------------------------ */
/* Schedule builder: write your own collective as a DAG                */
/* ------------------------------------------------------------------ */
/**@{*/
/**
 * A schedule is one rank's part of a collective: send, receive, reduce,
 * copy and callback nodes, and edges "before -> after" for the real
 * dependencies. A node starts the moment all its predecessors are done;
 * nodes without predecessors (receives, typically) start with the
 * schedule. The operation completes when every node is done.
 *
 * Send and receive nodes carry a tag in [0, NBCX_SCHED_TAG_MAX]; nbcx
 * maps it into a tag space private to this operation, so messages of
 * different collectives never match each other. Messages between the same
 * two ranks with the same tag match in the order the nodes are started.
 *
 * Buffers named by nodes must stay valid until the operation completes.
 * nbcx_sched_tmp() gives scratch memory owned by the schedule.
 */
typedef int nbcx_node;
#define NBCX_SCHED_TAG_MAX 4095
/**@}*/

typedef int nbcx_sched_fn(void *arg); /**< returns NBCX_SUCCESS or an error */

/** Starts building a schedule on comm. */
NBCX_API int nbcx_sched_create(nbcx_comm comm, nbcx_sched *sched);
/**@{*/
/** A send or receive node of count elements with peer, matched by tag. */
NBCX_API int nbcx_sched_send(nbcx_sched sched, const void *buf, int count,
                             nbcx_datatype type, int peer, int tag,
                             nbcx_node *node);
NBCX_API int nbcx_sched_recv(nbcx_sched sched, void *buf, int count,
                             nbcx_datatype type, int peer, int tag,
                             nbcx_node *node);
/**@}*/
/** inout[i] = in[i] op inout[i] */
NBCX_API int nbcx_sched_reduce(nbcx_sched sched, const void *in, void *inout,
                               int count, nbcx_datatype type, nbcx_op op,
                               nbcx_node *node);
/**@{*/
/** Copies count elements of srctype into dstcount elements of dsttype;
 * the two must hold the same number of bytes (type signatures match). */
NBCX_API int nbcx_sched_copy(nbcx_sched sched, const void *src, int srccount,
                             nbcx_datatype srctype, void *dst, int dstcount,
                             nbcx_datatype dsttype, nbcx_node *node);
NBCX_API int nbcx_sched_call(nbcx_sched sched, nbcx_sched_fn *fn, void *arg,
                             nbcx_node *node);
NBCX_API int nbcx_sched_depend(nbcx_sched sched, nbcx_node before,
                               nbcx_node after);
/**@}*/
/** Scratch memory freed with the schedule (bytes may be 0). */
NBCX_API int nbcx_sched_tmp(nbcx_sched sched, size_t bytes, void **buf);
/** Starts the schedule; the schedule now belongs to *req (on error it is
 * freed: *sched is NULL either way). Like collectives, schedules take the
 * communicator's next sequence number when they start, so every rank must
 * start its schedules on a communicator in the same order as the others.
 * A cycle is rejected (NBCX_ERR_NODE) before anything is posted; errors
 * met while communicating are reported by test/wait. */
NBCX_API int nbcx_sched_start(nbcx_sched *sched, nbcx_request *req);
/** Discards a schedule that was never started; sets *sched to NULL. */
NBCX_API int nbcx_sched_free(nbcx_sched *sched);

/* ------------------------------------------------------------------ */
/* Algorithm selection                                                 */
/* ------------------------------------------------------------------ */
/**
 * Each collective picks an algorithm by message and communicator size.
 * nbcx_algorithm_set("bcast", "chain") forces one (NULL or "auto" returns
 * to automatic choice); the environment variables NBCX_COLL_ALG (e.g.
 * NBCX_BCAST_ALG=chain) set the initial choice. A forced algorithm that
 * cannot serve a call (a ring allreduce for a non-commutative operation,
 * say) falls back to the automatic choice, so results never change.
 * coll is one of: barrier bcast reduce allreduce gather scatter allgather
 * alltoall gatherv scatterv allgatherv alltoallv alltoallw reduce_scatter
 * reduce_scatter_block scan exscan neighbor_allgather neighbor_allgatherv
 * neighbor_alltoall neighbor_alltoallv neighbor_alltoallw. NBCX_SEGSIZE
 * (bytes) sets the fragment size of pipelined algorithms; unset, each
 * communicator's transport chooses it (65536; 262144 on UCX).
 * nbcx_segsize_set() changes it at run time; nbcx_segsize_set(0) returns
 * to the default (NBCX_SEGSIZE if set, else the transport's). Every core
 * collective (barrier to alltoall) also has "slots", shared-memory slots
 * between the ranks of nbcx_inproc_run (the automatic choice there, up
 * to NBCX_INPROC_SLOT_MAX bytes); elsewhere it falls back to the
 * automatic choice.
 */
NBCX_API int nbcx_algorithm_set(const char *coll, const char *alg);
/**@{*/
/** The algorithm names of coll, separated by spaces (static string). */
NBCX_API int nbcx_algorithm_names(const char *coll, const char **names);
NBCX_API int nbcx_segsize_set(size_t bytes);
/**@}*/

/* ------------------------------------------------------------------ */
/* Information                                                         */
/* ------------------------------------------------------------------ */

/** Writes a human-readable description of the build and the algorithm
 * selection (environment variables in effect) into buf, and the
 * transport bandwidth this process has measured so far
 * ("bandwidth=0.118GB/s", "bandwidth=none" before any receive or
 * operation of 32 KiB or more could be timed), by which the auto mode
 * and the progress thread's timer predict how long a transfer takes;
 * then the counts of nbcx's objects alive ("live_comms=N live_ops=N
 * live_types=N live_requests=N live_schedules=N", cached schedules
 * included): a loop that frees what it makes holds them flat. */
NBCX_API int nbcx_info(char *buf, size_t len);

/** One NBCX_* environment variable nbcx reads: its name (where "COLL"
 * stands for a collective's name in capitals: NBCX_COLL_ALG), the layer
 * that reads it ("progress", "coll", "transport", "pmpi", ...), its
 * default and what it does (Markdown, as the manual shows them), and the
 * manual's chapter on it ("progress.md"). The table is docs/settings.md;
 * nbcx-info prints it with the values in force. */
struct nbcx_setting {
    const char *name;    /**< NBCX_PROGRESS, ... */
    const char *layer;   /**< the layer that reads it */
    const char *dflt;    /**< its default (Markdown) */
    const char *what;    /**< what it does (Markdown) */
    const char *chapter; /**< the manual's chapter on it */
};
/** Every setting, in the manual's order (*table is static). */
NBCX_API int nbcx_settings(const struct nbcx_setting **table, int *count);
/** The value of setting name in this process's environment, as nbcx reads
 * it: NULL when unset or empty, and for a name that is not a setting (a
 * misspelt NBCX_ variable changes nothing, and nbcx-info says so). */
NBCX_API const char *nbcx_setting_value(const char *name);

#ifdef __cplusplus
}
#endif

#endif /**< NBCX_H */
