/*
 * ops_mpi.c - the MPI library's blocking and nonblocking collectives of
 * every operation nbcx-bench measures, on the same buffers as nbcx's
 * (ops.c): the blocking reference and the native implementation of
 * --transport mpi.
 */
#include "bench_mpi.h"

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

/* In the order of bench_ops (ops.c). */
const struct bench_mpi_op bench_mpi_ops[] = {
    { block_barrier, native_ibarrier },
    { block_bcast, native_ibcast },
    { block_reduce, native_ireduce },
    { block_allreduce, native_iallreduce },
    { block_gather, native_igather },
    { block_scatter, native_iscatter },
    { block_allgather, native_iallgather },
    { block_alltoall, native_ialltoall },
    { block_gatherv, native_igatherv },
    { block_scatterv, native_iscatterv },
    { block_allgatherv, native_iallgatherv },
    { block_alltoallv, native_ialltoallv },
    { block_reduce_scatter_block, native_ireduce_scatter_block },
    { block_scan, native_iscan },
    { block_exscan, native_iexscan },
};
