/*
 * base.h - the objects every layer of libnbcx uses, at the bottom floor:
 * datatypes (datatype.c), operations (op.c), communicators and their tag
 * slots (comm.c), neighbourhood topologies (topo.c), the handle pools
 * (pool.c), error details (errors.c), environment variables (env.c) and
 * the clock (clock.c), the trace recorder (trace.c, trace.h). Nothing here includes mpi.h or calls a layer
 * above; a communicator holds its transport through the table of
 * base/transport.h only.
 */
#ifndef NBCX_BASE_H
#define NBCX_BASE_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nbcx.h"
#include "transport.h"
#include "trace.h"

#if defined(__GNUC__)
#define NBCX_HIDDEN __attribute__((visibility("hidden")))
#else
#define NBCX_HIDDEN
#endif

/* ------------------------------------------------------------------ */
/* Handles, pools, errors, datatypes, operations                       */
/* ------------------------------------------------------------------ */

enum { NBCXI_TYPE_MAGIC = 0x6e627479u, NBCXI_OP_MAGIC = 0x6e626f70u,
       NBCXI_COMM_MAGIC = 0x6e62636du, NBCXI_REQUEST_MAGIC = 0x6e627271u,
       /* an object released through its handle (base/pool.c) */
       NBCXI_DEAD_MAGIC = 0x64656164u };

/* Memory of objects reached through handles, kept for reuse by the same
 * kind instead of being freed, so that stale handles can be detected
 * (base/pool.c). Every such object starts with its uint32_t magic. */
struct nbcxi_pool {
    pthread_mutex_t lock;
    void *free;
    size_t size;
    atomic_long live; /* objects allocated and not freed */
};
#define NBCXI_POOL_INIT(type) { PTHREAD_MUTEX_INITIALIZER, NULL, sizeof(type), 0 }
/* A zeroed object (NULL: out of memory). */
NBCX_HIDDEN void *nbcxi_pool_alloc(struct nbcxi_pool *p);
/* Zeroes obj, marks it dead_magic and keeps it for reuse. */
NBCX_HIDDEN void nbcxi_pool_free(struct nbcxi_pool *p, void *obj,
                                 uint32_t dead_magic);
/* How many of p's objects are alive (nbcx_info's live_* counts). */
NBCX_HIDDEN long nbcxi_pool_live(struct nbcxi_pool *p);
extern NBCX_HIDDEN struct nbcxi_pool nbcxi_comm_pool, nbcxi_op_pool,
    nbcxi_type_pool, nbcxi_request_pool;

/* The reference count of a pooled object that may be a built-in
 * (datatypes, operations): a built-in (id != 0) is never counted nor
 * freed. nbcxi_ref_release returns true when it dropped the last
 * reference of a counted one: the caller then frees it. */
static inline void nbcxi_ref_retain(int id, atomic_int *refs)
{
    if (id == 0)
        atomic_fetch_add_explicit(refs, 1, memory_order_relaxed);
}
static inline bool nbcxi_ref_release(int id, atomic_int *refs)
{
    return id == 0 &&
           atomic_fetch_sub_explicit(refs, 1, memory_order_acq_rel) == 1;
}

/* Returns code after recording, for this thread, a message that says
 * more than nbcx_error_string(code) (which handle, which misuse);
 * nbcx_error_detail(code) returns it (base/errors.c). */
NBCX_HIDDEN int nbcxi_error(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
NBCX_HIDDEN int nbcxi_verror(int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
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
    /* NBCX_SUCCESS when reduce() combines this type with op_id, else the
     * error reduce() would give (asked when an operation starts, so that
     * every rank refuses it there, not one rank in the middle); NULL:
     * every built-in operation is defined */
    int (*check)(const struct nbcx_datatype_s *t, int op_id);
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
/* A face's derived type may address memory absolutely (MPI_BOTTOM, which
 * is NULL, with the addresses in the type map): a NULL buffer is valid
 * with it. Built-in types never are. */
static inline bool nbcxi_type_absolute(const struct nbcx_datatype_s *t)
{
    return t->id == 0;
}
/* Bytes to allocate for count elements laid out as the type, and the
 * offset to add to the allocation to get the buffer pointer. */
NBCX_HIDDEN size_t nbcxi_type_span(const struct nbcx_datatype_s *t,
                                   ptrdiff_t count, ptrdiff_t *shift);
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
/* Communicators and topologies                                        */
/* ------------------------------------------------------------------ */

/* A neighbourhood topology (base/topo.c): this rank's neighbours in
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

/* Embedded first in an object an upper layer attaches to a communicator
 * (struct nbcx_comm_s's cache): the communicator calls free when it dies,
 * without knowing the object. */
struct nbcxi_comm_ext {
    void (*free)(struct nbcxi_comm_ext *self);
};

struct nbcx_comm_s {
    uint32_t magic;
    int rank, size;
    nbcxi_transport *tp;
    /* The transport the communicator was made on, kept while
     * nbcx_comm_set_transport has it on another one, where that first
     * transport cannot be created by name (ops->create NULL: "mpi", which
     * only nbcx_comm_from_mpi makes): naming it again goes back to it.
     * NULL otherwise. Destroyed with the communicator. */
    nbcxi_transport *kept;
    /* Tag space (base/comm.c): slot k owns the transport tags
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
    /* What an upper layer keeps on the communicator and frees with it:
     * the schedule cache (api/cache.c), made on first use. */
    _Atomic(struct nbcxi_comm_ext *) cache;
    _Atomic(struct nbcxi_topo *) topo; /* neighbours, or NULL */
    /* Watchdog (progress/watchdog.c): the no-progress timeout in ns (0:
     * NBCX_TIMEOUT's, < 0: off; nbcx_comm_set_timeout), and whether the
     * diagnosis of a timeout was printed. */
    _Atomic int64_t timeout_ns;
    atomic_bool diagnosed;
    /* The progress lock (progress/engine.c): guards the executor state of
     * the communicator's operations and the calls into its transport, so
     * that threads on different communicators progress their own
     * operations at once. It is `own` where the transport declares
     * NBCXI_CAP_COMM_PARALLEL, else nbcxi_serial_plock, one for every
     * such communicator (their backend may share state between them: a
     * UCX worker). Set with the transport (comm.c: take). */
    pthread_mutex_t *plock;
    pthread_mutex_t plock_own;
};

/* The progress lock of every communicator whose transport does not
 * declare NBCXI_CAP_COMM_PARALLEL. */
extern pthread_mutex_t nbcxi_serial_plock;

/* Set once a communicator was made on a transport not safe for a
 * progress thread (no NBCXI_CAP_PROGRESS_THREAD, transport.h): the
 * progress mode then defaults to caller (progress/modes.c). And set once
 * any communicator was made (after nbcxi_comm_no_thread): the default
 * mode, which depends on the transports, is not decided before. */
extern NBCX_HIDDEN atomic_bool nbcxi_comm_no_thread;
extern NBCX_HIDDEN atomic_bool nbcxi_comm_made;
/* Takes ownership of tp; on failure tp is destroyed. */
NBCX_HIDDEN int nbcxi_comm_create(int rank, int size, nbcxi_transport *tp,
                                  nbcx_comm *out);
NBCX_HIDDEN struct nbcx_comm_s *nbcxi_comm(nbcx_comm h);
/* A switch of c's transport (nbcx_comm_set_transport, api/comm.c) in
 * two steps, so that it cannot fail on one member alone: every member
 * prepares (the new transport's tag bitmap), the members agree that all
 * prepared, then each commits, which cannot fail; or each drops.
 * tp is c->kept (going back to it) or a new transport, which the switch
 * takes: drop destroys it. */
struct nbcxi_comm_switch {
    nbcxi_transport *tp;
    _Atomic uint64_t *held; /* its tag bitmap */
    unsigned nslots;
};
/* Changes nothing of c. NBCX_ERR_TRANSPORT (tp has too few tags) or
 * NBCX_ERR_NOMEM, with a message; then drop, not commit. */
NBCX_HIDDEN int nbcxi_comm_switch_prepare(nbcxi_transport *tp,
                                          struct nbcxi_comm_switch *sw);
/* Puts c on sw->tp. The old transport is kept in c->kept if it cannot
 * be created by name and nothing is kept yet, destroyed otherwise. Only
 * while nothing uses c: no schedule holds it (refs 1), no tag slot is
 * held. */
NBCX_HIDDEN void nbcxi_comm_switch_commit(struct nbcx_comm_s *c,
                                          struct nbcxi_comm_switch *sw);
/* Undoes a prepare: frees the bitmap, destroys a new transport. */
NBCX_HIDDEN void nbcxi_comm_switch_drop(struct nbcx_comm_s *c,
                                        struct nbcxi_comm_switch *sw);
/* Gives c a transport to keep for nbcx_comm_set_transport's way back
 * (above; taken): nbcx_comm_from_mpi's MPI transport where the
 * communicator is made on another one (NBCX_TRANSPORT). */
NBCX_HIDDEN void nbcxi_comm_keep_transport(struct nbcx_comm_s *c,
                                           nbcxi_transport *tp);
NBCX_HIDDEN void nbcxi_comm_retain(struct nbcx_comm_s *c);
NBCX_HIDDEN void nbcxi_comm_release(struct nbcx_comm_s *c);
/* Frees a topology and every older one it links to (base/topo.c). */
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
/* Clock, environment, small utilities                                 */
/* ------------------------------------------------------------------ */

/* Monotonic clock in nanoseconds (base/clock.c); the coarse one reads
 * the same clock at the tick's resolution, cheaply, for long spans. */
NBCX_HIDDEN int64_t nbcxi_now_ns(void);
NBCX_HIDDEN int64_t nbcxi_now_coarse_ns(void);

#define NBCXI_MIN(a, b) ((a) < (b) ? (a) : (b))
#define NBCXI_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Address of element block i (each block of count elements of t). */
static inline void *nbcxi_at(const void *buf, ptrdiff_t i, ptrdiff_t count,
                             const struct nbcx_datatype_s *t)
{
    return (char *)(uintptr_t)buf + i * (ptrdiff_t)count * t->extent;
}

/* Reads an environment variable once per call site; NULL if unset/empty */
NBCX_HIDDEN const char *nbcxi_getenv(const char *name);
/* Whether name is declared in settings.def (settings.c); "NBCX_<COLL>_ALG"
 * there covers NBCX_ALLREDUCE_ALG and the others. */
NBCX_HIDDEN bool nbcxi_setting_known(const char *name);
NBCX_HIDDEN size_t nbcxi_env_size(const char *name, size_t dflt);
/* The same for a setting that "0" turns off: 0 for "0". */
NBCX_HIDDEN size_t nbcxi_env_size_or_off(const char *name, size_t dflt);

#endif /* NBCX_BASE_H */
