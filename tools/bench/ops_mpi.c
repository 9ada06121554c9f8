/*
 * ops_mpi.c - the MPI library's blocking and nonblocking collectives of
 * every operation nbcx-bench measures, on the same buffers as nbcx's
 * (ops.c): the blocking reference and the native implementation of
 * --transport mpi.
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

static int block_barrier(const struct bench_buf *b, MPI_Comm comm)
{
    (void)b;
    return MPI_Barrier(comm);
}

static int native_ibarrier(const struct bench_buf *b, MPI_Comm comm,
                           MPI_Request *r)
{
    (void)b;
    return MPI_Ibarrier(comm, r);
}

static int block_bcast(const struct bench_buf *b, MPI_Comm comm)
{
    return MPI_Bcast(b->rbuf, b->count, mtype(b), BENCH_ROOT, comm);
}

static int native_ibcast(const struct bench_buf *b, MPI_Comm comm,
                         MPI_Request *r)
{
    return MPI_Ibcast(b->rbuf, b->count, mtype(b), BENCH_ROOT, comm, r);
}

static int block_reduce(const struct bench_buf *b, MPI_Comm comm)
{
    return MPI_Reduce(b->sbuf, b->rbuf, b->count, mtype(b), MPI_SUM,
                      BENCH_ROOT, comm);
}

static int native_ireduce(const struct bench_buf *b, MPI_Comm comm,
                          MPI_Request *r)
{
    return MPI_Ireduce(b->sbuf, b->rbuf, b->count, mtype(b), MPI_SUM,
                       BENCH_ROOT, comm, r);
}

static int block_allreduce(const struct bench_buf *b, MPI_Comm comm)
{
    return MPI_Allreduce(b->sbuf, b->rbuf, b->count, mtype(b), MPI_SUM,
                         comm);
}

static int native_iallreduce(const struct bench_buf *b, MPI_Comm comm,
                             MPI_Request *r)
{
    return MPI_Iallreduce(b->sbuf, b->rbuf, b->count, mtype(b), MPI_SUM,
                          comm, r);
}

static int block_gather(const struct bench_buf *b, MPI_Comm comm)
{
    return MPI_Gather(b->sbuf, b->count, mtype(b), b->rbuf, b->count,
                      mtype(b), BENCH_ROOT, comm);
}

static int native_igather(const struct bench_buf *b, MPI_Comm comm,
                          MPI_Request *r)
{
    return MPI_Igather(b->sbuf, b->count, mtype(b), b->rbuf, b->count,
                       mtype(b), BENCH_ROOT, comm, r);
}

static int block_scatter(const struct bench_buf *b, MPI_Comm comm)
{
    return MPI_Scatter(b->sbuf, b->count, mtype(b), b->rbuf, b->count,
                       mtype(b), BENCH_ROOT, comm);
}

static int native_iscatter(const struct bench_buf *b, MPI_Comm comm,
                           MPI_Request *r)
{
    return MPI_Iscatter(b->sbuf, b->count, mtype(b), b->rbuf, b->count,
                        mtype(b), BENCH_ROOT, comm, r);
}

static int block_allgather(const struct bench_buf *b, MPI_Comm comm)
{
    return MPI_Allgather(b->sbuf, b->count, mtype(b), b->rbuf, b->count,
                         mtype(b), comm);
}

static int native_iallgather(const struct bench_buf *b, MPI_Comm comm,
                             MPI_Request *r)
{
    return MPI_Iallgather(b->sbuf, b->count, mtype(b), b->rbuf, b->count,
                          mtype(b), comm, r);
}

static int block_alltoall(const struct bench_buf *b, MPI_Comm comm)
{
    return MPI_Alltoall(b->sbuf, b->count, mtype(b), b->rbuf, b->count,
                        mtype(b), comm);
}

static int native_ialltoall(const struct bench_buf *b, MPI_Comm comm,
                            MPI_Request *r)
{
    return MPI_Ialltoall(b->sbuf, b->count, mtype(b), b->rbuf, b->count,
                         mtype(b), comm, r);
}

/* The vector variants with every block of `count` elements (displs
 * i * count), reduce_scatter_block, scan and exscan. */
static int block_gatherv(const struct bench_buf *b, MPI_Comm comm)
{
    return MPI_Gatherv(b->sbuf, b->count, mtype(b), b->rbuf, b->counts,
                       b->displs, mtype(b), BENCH_ROOT, comm);
}

static int native_igatherv(const struct bench_buf *b, MPI_Comm comm,
                           MPI_Request *r)
{
    return MPI_Igatherv(b->sbuf, b->count, mtype(b), b->rbuf, b->counts,
                        b->displs, mtype(b), BENCH_ROOT, comm, r);
}

static int block_scatterv(const struct bench_buf *b, MPI_Comm comm)
{
    return MPI_Scatterv(b->sbuf, b->counts, b->displs, mtype(b), b->rbuf,
                        b->count, mtype(b), BENCH_ROOT, comm);
}

static int native_iscatterv(const struct bench_buf *b, MPI_Comm comm,
                            MPI_Request *r)
{
    return MPI_Iscatterv(b->sbuf, b->counts, b->displs, mtype(b), b->rbuf,
                         b->count, mtype(b), BENCH_ROOT, comm, r);
}

static int block_allgatherv(const struct bench_buf *b, MPI_Comm comm)
{
    return MPI_Allgatherv(b->sbuf, b->count, mtype(b), b->rbuf, b->counts,
                          b->displs, mtype(b), comm);
}

static int native_iallgatherv(const struct bench_buf *b, MPI_Comm comm,
                              MPI_Request *r)
{
    return MPI_Iallgatherv(b->sbuf, b->count, mtype(b), b->rbuf, b->counts,
                           b->displs, mtype(b), comm, r);
}

static int block_alltoallv(const struct bench_buf *b, MPI_Comm comm)
{
    return MPI_Alltoallv(b->sbuf, b->counts, b->displs, mtype(b), b->rbuf,
                         b->counts, b->displs, mtype(b), comm);
}

static int native_ialltoallv(const struct bench_buf *b, MPI_Comm comm,
                             MPI_Request *r)
{
    return MPI_Ialltoallv(b->sbuf, b->counts, b->displs, mtype(b), b->rbuf,
                          b->counts, b->displs, mtype(b), comm, r);
}

static int block_reduce_scatter_block(const struct bench_buf *b,
                                      MPI_Comm comm)
{
    return MPI_Reduce_scatter_block(b->sbuf, b->rbuf, b->count, mtype(b),
                                    MPI_SUM, comm);
}

static int native_ireduce_scatter_block(const struct bench_buf *b,
                                        MPI_Comm comm, MPI_Request *r)
{
    return MPI_Ireduce_scatter_block(b->sbuf, b->rbuf, b->count, mtype(b),
                                     MPI_SUM, comm, r);
}

static int block_scan(const struct bench_buf *b, MPI_Comm comm)
{
    return MPI_Scan(b->sbuf, b->rbuf, b->count, mtype(b), MPI_SUM, comm);
}

static int native_iscan(const struct bench_buf *b, MPI_Comm comm,
                        MPI_Request *r)
{
    return MPI_Iscan(b->sbuf, b->rbuf, b->count, mtype(b), MPI_SUM, comm, r);
}

static int block_exscan(const struct bench_buf *b, MPI_Comm comm)
{
    return MPI_Exscan(b->sbuf, b->rbuf, b->count, mtype(b), MPI_SUM, comm);
}

static int native_iexscan(const struct bench_buf *b, MPI_Comm comm,
                          MPI_Request *r)
{
    return MPI_Iexscan(b->sbuf, b->rbuf, b->count, mtype(b), MPI_SUM, comm,
                       r);
}

#ifdef PINIT
/* The persistent forms, with the arguments of the nonblocking calls. */
static int pinit_barrier(const struct bench_buf *b, MPI_Comm comm,
                         MPI_Request *r)
{
    (void)b;
    return PINIT(Barrier)(comm, MPI_INFO_NULL, r);
}

static int pinit_bcast(const struct bench_buf *b, MPI_Comm comm,
                       MPI_Request *r)
{
    return PINIT(Bcast)(b->rbuf, b->count, mtype(b), BENCH_ROOT, comm,
                        MPI_INFO_NULL, r);
}

static int pinit_reduce(const struct bench_buf *b, MPI_Comm comm,
                        MPI_Request *r)
{
    return PINIT(Reduce)(b->sbuf, b->rbuf, b->count, mtype(b), MPI_SUM,
                         BENCH_ROOT, comm, MPI_INFO_NULL, r);
}

static int pinit_allreduce(const struct bench_buf *b, MPI_Comm comm,
                           MPI_Request *r)
{
    return PINIT(Allreduce)(b->sbuf, b->rbuf, b->count, mtype(b), MPI_SUM,
                            comm, MPI_INFO_NULL, r);
}

static int pinit_gather(const struct bench_buf *b, MPI_Comm comm,
                        MPI_Request *r)
{
    return PINIT(Gather)(b->sbuf, b->count, mtype(b), b->rbuf, b->count,
                         mtype(b), BENCH_ROOT, comm, MPI_INFO_NULL, r);
}

static int pinit_scatter(const struct bench_buf *b, MPI_Comm comm,
                         MPI_Request *r)
{
    return PINIT(Scatter)(b->sbuf, b->count, mtype(b), b->rbuf, b->count,
                          mtype(b), BENCH_ROOT, comm, MPI_INFO_NULL, r);
}

static int pinit_allgather(const struct bench_buf *b, MPI_Comm comm,
                           MPI_Request *r)
{
    return PINIT(Allgather)(b->sbuf, b->count, mtype(b), b->rbuf, b->count,
                            mtype(b), comm, MPI_INFO_NULL, r);
}

static int pinit_alltoall(const struct bench_buf *b, MPI_Comm comm,
                          MPI_Request *r)
{
    return PINIT(Alltoall)(b->sbuf, b->count, mtype(b), b->rbuf, b->count,
                           mtype(b), comm, MPI_INFO_NULL, r);
}

static int pinit_gatherv(const struct bench_buf *b, MPI_Comm comm,
                         MPI_Request *r)
{
    return PINIT(Gatherv)(b->sbuf, b->count, mtype(b), b->rbuf, b->counts,
                          b->displs, mtype(b), BENCH_ROOT, comm,
                          MPI_INFO_NULL, r);
}

static int pinit_scatterv(const struct bench_buf *b, MPI_Comm comm,
                          MPI_Request *r)
{
    return PINIT(Scatterv)(b->sbuf, b->counts, b->displs, mtype(b), b->rbuf,
                           b->count, mtype(b), BENCH_ROOT, comm,
                           MPI_INFO_NULL, r);
}

static int pinit_allgatherv(const struct bench_buf *b, MPI_Comm comm,
                            MPI_Request *r)
{
    return PINIT(Allgatherv)(b->sbuf, b->count, mtype(b), b->rbuf, b->counts,
                             b->displs, mtype(b), comm, MPI_INFO_NULL, r);
}

static int pinit_alltoallv(const struct bench_buf *b, MPI_Comm comm,
                           MPI_Request *r)
{
    return PINIT(Alltoallv)(b->sbuf, b->counts, b->displs, mtype(b), b->rbuf,
                            b->counts, b->displs, mtype(b), comm,
                            MPI_INFO_NULL, r);
}

static int pinit_reduce_scatter_block(const struct bench_buf *b,
                                      MPI_Comm comm, MPI_Request *r)
{
    return PINIT(Reduce_scatter_block)(b->sbuf, b->rbuf, b->count, mtype(b),
                                       MPI_SUM, comm, MPI_INFO_NULL, r);
}

static int pinit_scan(const struct bench_buf *b, MPI_Comm comm,
                      MPI_Request *r)
{
    return PINIT(Scan)(b->sbuf, b->rbuf, b->count, mtype(b), MPI_SUM, comm,
                       MPI_INFO_NULL, r);
}

static int pinit_exscan(const struct bench_buf *b, MPI_Comm comm,
                        MPI_Request *r)
{
    return PINIT(Exscan)(b->sbuf, b->rbuf, b->count, mtype(b), MPI_SUM, comm,
                         MPI_INFO_NULL, r);
}
#define P(name) pinit_##name
#else
#define P(name) NULL
#endif

/* In the order of bench_ops (ops.c). */
const struct bench_mpi_op bench_mpi_ops[] = {
    { block_barrier, native_ibarrier, P(barrier) },
    { block_bcast, native_ibcast, P(bcast) },
    { block_reduce, native_ireduce, P(reduce) },
    { block_allreduce, native_iallreduce, P(allreduce) },
    { block_gather, native_igather, P(gather) },
    { block_scatter, native_iscatter, P(scatter) },
    { block_allgather, native_iallgather, P(allgather) },
    { block_alltoall, native_ialltoall, P(alltoall) },
    { block_gatherv, native_igatherv, P(gatherv) },
    { block_scatterv, native_iscatterv, P(scatterv) },
    { block_allgatherv, native_iallgatherv, P(allgatherv) },
    { block_alltoallv, native_ialltoallv, P(alltoallv) },
    { block_reduce_scatter_block, native_ireduce_scatter_block,
      P(reduce_scatter_block) },
    { block_scan, native_iscan, P(scan) },
    { block_exscan, native_iexscan, P(exscan) },
};
