/*
 * ops_mpi.c - the MPI library's own collectives of every operation
 * nbcx-bench measures, on the same buffers as nbcx's (ops.c): the blocking
 * reference, the native nonblocking implementation of --transport mpi and
 * its persistent form (--persistent).
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bench_mpi.h"

/* Native persistent collectives (--persistent): the MPI-4 names, Open MPI
 * 4's MPIX_<op>_init from mpi-ext.h, or none. MPICH before 4.3 has the
 * MPI-4 names, but some of them return stale data when restarted
 * (MPI_Allgather_init, MPI_Gather_init, MPI_Scatter_init in 4.0.2, see
 * tests/mpi/test_persistent.c), so there the native side keeps the
 * nonblocking call, as without MPI-4 (nbcx-transform's NBCX_PERSISTENT
 * makes the same choice). */
#if MPI_VERSION >= 4 &&                                                      \
    !(defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40300000)
#define PINIT(name) MPI_##name##_init
const char *const bench_native_persistent = "MPI-4";
#elif defined(OPEN_MPI)
#include <mpi-ext.h>
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
#define PINIT(name) MPIX_##name##_init
const char *const bench_native_persistent = "MPIX";
#endif
#endif
#ifndef PINIT
const char *const bench_native_persistent = "none";
#endif

/* --pmpi: the shim's persistent collectives, which it defines whatever
 * the library's own are worth (MPICH 4.0's restart bug is not the shim's:
 * the shim serves them on nbcx). */
#if MPI_VERSION >= 4
#define SHIM_PINIT(name) MPI_##name##_init
#define SHIM_PINIT_NAME(name) "MPI_" #name "_init"
const char *const bench_shim_persistent = "MPI-4";
#elif defined(OPEN_MPI) && defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) &&           \
    OMPI_HAVE_MPI_EXT_PCOLLREQ
#define SHIM_PINIT(name) MPIX_##name##_init
#define SHIM_PINIT_NAME(name) "MPIX_" #name "_init"
const char *const bench_shim_persistent = "MPIX";
#else
const char *const bench_shim_persistent = "none";
#endif

/* Every operation: X(Op, op). */
#define OPS(X)                                                               \
    X(Barrier, barrier) X(Bcast, bcast) X(Reduce, reduce)                    \
    X(Allreduce, allreduce) X(Gather, gather) X(Scatter, scatter)            \
    X(Allgather, allgather) X(Alltoall, alltoall) X(Gatherv, gatherv)        \
    X(Scatterv, scatterv) X(Allgatherv, allgatherv) X(Alltoallv, alltoallv)  \
    X(Reduce_scatter_block, reduce_scatter_block) X(Scan, scan)              \
    X(Exscan, exscan) X(Reduce_scatter, reduce_scatter)                      \
    X(Alltoallw, alltoallw) X(Neighbor_allgather, neighbor_allgather)        \
    X(Neighbor_allgatherv, neighbor_allgatherv)                              \
    X(Neighbor_alltoall, neighbor_alltoall)                                  \
    X(Neighbor_alltoallv, neighbor_alltoallv)                                \
    X(Neighbor_alltoallw, neighbor_alltoallw)

/* The shim's entry points, found with dlsym in the library loaded by
 * bench_shim_load: its own definitions of the MPI names, with the MPI
 * prototypes. Nothing else in the process sees them (RTLD_LOCAL): the
 * native column and nbcx keep calling the MPI library. */
static struct {
#define NB_FIELD(Op, op) __typeof__(MPI_I##op) *I##op;
    OPS(NB_FIELD)
#ifdef SHIM_PINIT
#define P_FIELD(Op, op) __typeof__(SHIM_PINIT(Op)) *Op##_init;
    OPS(P_FIELD)
#endif
    __typeof__(MPI_Wait) *Wait;
    __typeof__(MPI_Test) *Test;
    __typeof__(MPI_Start) *Start;
    __typeof__(MPI_Request_free) *Request_free;
    __typeof__(MPI_Finalize) *Finalize;
    int (*counts)(long long *served, long long *native);
} shim;

static MPI_Datatype mtype(const struct bench_buf *b)
{
    return b->elem == sizeof(double) ? MPI_DOUBLE : MPI_BYTE;
}

/* ialltoallw's type per peer, all mtype(b): refilled only when the
 * shape changes (a comparison per call, as nbcx's ntypes are filled once
 * per buffer). NULL when out of memory (MPI then reports the error). */
static const MPI_Datatype *mtypes(const struct bench_buf *b)
{
    static MPI_Datatype *types;
    static int filled;
    static size_t filled_elem;
    int n = b->ranks > BENCH_NEIGHBORS ? b->ranks : BENCH_NEIGHBORS;
    if (filled < n || filled_elem != b->elem) {
        MPI_Datatype *t = realloc(types, sizeof *t * (size_t)n);
        if (!t)
            return NULL;
        types = t;
        for (int i = 0; i < n; i++)
            types[i] = mtype(b);
        filled = n;
        filled_elem = b->elem;
    }
    return types;
}

/* FACES(Op, op, args...) defines the faces of MPI_<Op> with the same
 * arguments before the communicator (each followed by a comma; none for
 * barrier): block_<op> (MPI_<Op>), native_<op> (MPI_I<op>), shim_<op>
 * (the shim's MPI_I<op>) and, where the library has persistent
 * collectives, pinit_<op> (PINIT(<Op>)), and where the shim has them,
 * shim_pinit_<op>. The vector variants run with every block of `count`
 * elements (displs i * count). */
#define BLOCK_AND_NATIVE(Op, op, ...)                                        \
    static int block_##op(const struct bench_buf *b, MPI_Comm comm)         \
    {                                                                        \
        (void)b;                                                             \
        return MPI_##Op(__VA_ARGS__ comm);                                   \
    }                                                                        \
    static int native_##op(const struct bench_buf *b, MPI_Comm comm,        \
                           MPI_Request *r)                                   \
    {                                                                        \
        (void)b;                                                             \
        return MPI_I##op(__VA_ARGS__ comm, r);                               \
    }                                                                        \
    static int shim_##op(const struct bench_buf *b, MPI_Comm comm,          \
                         MPI_Request *r)                                     \
    {                                                                        \
        (void)b;                                                             \
        return shim.I##op(__VA_ARGS__ comm, r);                              \
    }
#ifdef PINIT
#define NATIVE_PINIT(Op, op, ...)                                            \
    static int pinit_##op(const struct bench_buf *b, MPI_Comm comm,         \
                          MPI_Request *r)                                    \
    {                                                                        \
        (void)b;                                                             \
        return PINIT(Op)(__VA_ARGS__ comm, MPI_INFO_NULL, r);                \
    }
#define P(op) pinit_##op
#else
#define NATIVE_PINIT(Op, op, ...)
#define P(op) NULL
#endif
#ifdef SHIM_PINIT
#define SHIM_PINIT_FACE(Op, op, ...)                                         \
    static int shim_pinit_##op(const struct bench_buf *b, MPI_Comm comm,    \
                               MPI_Request *r)                               \
    {                                                                        \
        (void)b;                                                             \
        return shim.Op##_init(__VA_ARGS__ comm, MPI_INFO_NULL, r);           \
    }
#define SP(op) shim_pinit_##op
#else
#define SHIM_PINIT_FACE(Op, op, ...)
#define SP(op) NULL
#endif
#define FACES(Op, op, ...)                                                   \
    BLOCK_AND_NATIVE(Op, op, __VA_ARGS__)                                    \
    NATIVE_PINIT(Op, op, __VA_ARGS__)                                        \
    SHIM_PINIT_FACE(Op, op, __VA_ARGS__)

FACES(Barrier, barrier, )
FACES(Bcast, bcast, b->rbuf, b->count, mtype(b), BENCH_ROOT, )
FACES(Reduce, reduce, b->sbuf, b->rbuf, b->count, mtype(b), MPI_SUM,
      BENCH_ROOT, )
FACES(Allreduce, allreduce, b->sbuf, b->rbuf, b->count, mtype(b), MPI_SUM, )
FACES(Gather, gather, b->sbuf, b->count, mtype(b), b->rbuf, b->count,
      mtype(b), BENCH_ROOT, )
FACES(Scatter, scatter, b->sbuf, b->count, mtype(b), b->rbuf, b->count,
      mtype(b), BENCH_ROOT, )
FACES(Allgather, allgather, b->sbuf, b->count, mtype(b), b->rbuf, b->count,
      mtype(b), )
FACES(Alltoall, alltoall, b->sbuf, b->count, mtype(b), b->rbuf, b->count,
      mtype(b), )
FACES(Gatherv, gatherv, b->sbuf, b->count, mtype(b), b->rbuf, b->counts,
      b->displs, mtype(b), BENCH_ROOT, )
FACES(Scatterv, scatterv, b->sbuf, b->counts, b->displs, mtype(b), b->rbuf,
      b->count, mtype(b), BENCH_ROOT, )
FACES(Allgatherv, allgatherv, b->sbuf, b->count, mtype(b), b->rbuf,
      b->counts, b->displs, mtype(b), )
FACES(Alltoallv, alltoallv, b->sbuf, b->counts, b->displs, mtype(b),
      b->rbuf, b->counts, b->displs, mtype(b), )
FACES(Reduce_scatter_block, reduce_scatter_block, b->sbuf, b->rbuf,
      b->count, mtype(b), MPI_SUM, )
FACES(Scan, scan, b->sbuf, b->rbuf, b->count, mtype(b), MPI_SUM, )
FACES(Exscan, exscan, b->sbuf, b->rbuf, b->count, mtype(b), MPI_SUM, )
FACES(Reduce_scatter, reduce_scatter, b->sbuf, b->rbuf, b->counts, mtype(b),
      MPI_SUM, )
FACES(Alltoallw, alltoallw, b->sbuf, b->counts, b->bdispls, mtypes(b),
      b->rbuf, b->counts, b->bdispls, mtypes(b), )
/* (on the ring: the driver's communicator, bench_mpi.h) */
_Static_assert(sizeof(MPI_Aint) == sizeof(ptrdiff_t), "MPI_Aint displs");
#define ADISPLS(b) ((const MPI_Aint *)(const void *)(b)->adispls)
FACES(Neighbor_allgather, neighbor_allgather, b->sbuf, b->count, mtype(b),
      b->rbuf, b->count, mtype(b), )
FACES(Neighbor_allgatherv, neighbor_allgatherv, b->sbuf, b->count, mtype(b),
      b->rbuf, b->counts, b->displs, mtype(b), )
FACES(Neighbor_alltoall, neighbor_alltoall, b->sbuf, b->count, mtype(b),
      b->rbuf, b->count, mtype(b), )
FACES(Neighbor_alltoallv, neighbor_alltoallv, b->sbuf, b->counts, b->displs,
      mtype(b), b->rbuf, b->counts, b->displs, mtype(b), )
FACES(Neighbor_alltoallw, neighbor_alltoallw, b->sbuf, b->counts,
      ADISPLS(b), mtypes(b), b->rbuf, b->counts, ADISPLS(b), mtypes(b), )

/* In the order of bench_ops (ops.c). */
#define OP(Op, op) { block_##op, native_##op, P(op), shim_##op, SP(op) },
const struct bench_mpi_op bench_mpi_ops[] = { OPS(OP) };

/* ---- loading the shim (--pmpi) ------------------------------------------ */

/* Where the shim is: NBCX_BENCH_PMPI_LIB; else next to the libnbcx this
 * process runs with (the install tree), else where this build made it
 * (NBCX_BENCH_PMPI_BUILT, the build tree). */
static int shim_candidates(char paths[2][PATH_MAX])
{
    const char *env = getenv("NBCX_BENCH_PMPI_LIB");
    if (env && *env) {
        snprintf(paths[0], PATH_MAX, "%s", env);
        return 1;
    }
    int n = 0;
    Dl_info info;
    if (dladdr((void *)nbcx_comm_from_mpi, &info) && info.dli_fname) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", info.dli_fname);
        char *slash = strrchr(dir, '/');
        if (slash) {
            *slash = '\0';
            snprintf(paths[n++], PATH_MAX, "%.*s/libnbcx-pmpi.so",
                     PATH_MAX - 20, dir);
        }
    }
#ifdef NBCX_BENCH_PMPI_BUILT
    snprintf(paths[n++], PATH_MAX, "%s", NBCX_BENCH_PMPI_BUILT);
#endif
    return n;
}

int bench_shim_load(char *path, size_t pathlen, char *err, size_t errlen)
{
    /* Preloaded (LD_PRELOAD, or linked in): the native column would run
     * on it too, and the comparison would mean nothing. */
    if (dlsym(RTLD_DEFAULT, "nbcx_pmpi_counts")) {
        snprintf(err, errlen, "--pmpi: libnbcx-pmpi is already loaded "
                              "(LD_PRELOAD?): the native calls would run "
                              "on it too");
        return -1;
    }
    static char paths[2][PATH_MAX];
    int n = shim_candidates(paths);
    void *h = NULL;
    const char *why = "libnbcx not found (dladdr)";
    for (int i = 0; i < n && !h; i++) {
        h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            snprintf(path, pathlen, "%s", paths[i]);
        else
            why = dlerror();
    }
    if (!h) {
        snprintf(err, errlen, "--pmpi: cannot load libnbcx-pmpi: %s "
                              "(set NBCX_BENCH_PMPI_LIB)", why);
        return -1;
    }
    const char *missing = NULL;
#define LOAD(field, name)                                                    \
    if (!missing && !(*(void **)&shim.field = dlsym(h, name)))              \
        missing = name;
#define LOAD_NB(Op, op) LOAD(I##op, "MPI_I" #op)
    OPS(LOAD_NB)
#ifdef SHIM_PINIT
#define LOAD_P(Op, op) LOAD(Op##_init, SHIM_PINIT_NAME(Op))
    OPS(LOAD_P)
#endif
    LOAD(Wait, "MPI_Wait")
    LOAD(Test, "MPI_Test")
    LOAD(Start, "MPI_Start")
    LOAD(Request_free, "MPI_Request_free")
    LOAD(Finalize, "MPI_Finalize")
    LOAD(counts, "nbcx_pmpi_counts")
    if (missing) {
        snprintf(err, errlen, "--pmpi: %s has no %s", path, missing);
        dlclose(h);
        return -1;
    }
    return 0;
}

static int shim_test(MPI_Request *r)
{
    int flag;
    return shim.Test(r, &flag, MPI_STATUS_IGNORE);
}

int bench_shim_wait(MPI_Request *r) { return shim.Wait(r, MPI_STATUS_IGNORE); }
int bench_shim_test(MPI_Request *r) { return shim_test(r); }
int bench_shim_start(MPI_Request *r) { return shim.Start(r); }
int bench_shim_request_free(MPI_Request *r) { return shim.Request_free(r); }
int bench_shim_finalize(void) { return shim.Finalize(); }

void bench_shim_counts(long long *served, long long *native)
{
    shim.counts(served, native);
}
