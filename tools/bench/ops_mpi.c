/*
 * ops_mpi.c - the MPI library's own collectives of every operation
 * nbcx-bench measures, on the same buffers as nbcx's (ops.c): the blocking
 * reference, the native nonblocking implementation of --transport mpi and
 * its persistent form (--persistent).
 */
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

static MPI_Datatype mtype(const struct bench_buf *b)
{
    return b->elem == sizeof(double) ? MPI_DOUBLE : MPI_BYTE;
}

/* FACES(Op, op, args...) defines the faces of MPI_<Op> with the same
 * arguments before the communicator (each followed by a comma; none for
 * barrier): block_<op> (MPI_<Op>), native_<op> (MPI_I<op>) and, where
 * the library has persistent collectives, pinit_<op> (PINIT(<Op>)). The
 * vector variants run with every block of `count` elements (displs
 * i * count). */
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
    }
#ifdef PINIT
#define FACES(Op, op, ...)                                                   \
    BLOCK_AND_NATIVE(Op, op, __VA_ARGS__)                                    \
    static int pinit_##op(const struct bench_buf *b, MPI_Comm comm,         \
                          MPI_Request *r)                                    \
    {                                                                        \
        (void)b;                                                             \
        return PINIT(Op)(__VA_ARGS__ comm, MPI_INFO_NULL, r);                \
    }
#define P(op) pinit_##op
#else
#define FACES(Op, op, ...) BLOCK_AND_NATIVE(Op, op, __VA_ARGS__)
#define P(op) NULL
#endif

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

/* In the order of bench_ops (ops.c). */
#define OP(op) { block_##op, native_##op, P(op) }
const struct bench_mpi_op bench_mpi_ops[] = {
    OP(barrier),   OP(bcast),      OP(reduce),     OP(allreduce),
    OP(gather),    OP(scatter),    OP(allgather),  OP(alltoall),
    OP(gatherv),   OP(scatterv),   OP(allgatherv), OP(alltoallv),
    OP(reduce_scatter_block),      OP(scan),       OP(exscan),
};
