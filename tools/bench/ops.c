/*
 * ops.c - the operations nbcx-bench measures: for each, the blocking MPI
 * collective, the native nonblocking one and nbcx's, called on the same
 * buffers; plus buffer allocation, input patterns and the result check.
 *
 * The vector variants run with every block of the same size (displs
 * i * count), as their regular twins; iexscan's result is compared on
 * every rank but 0 (MPI leaves rank 0's undefined). Neighbourhood
 * collectives are not measured here.
 *
 * With --persistent every operation also has its persistent forms:
 * nbcx_<op>_init and, where MPI has reliable ones, the native
 * MPI_<op>_init (MPIX_<op>_init on Open MPI 4); see below.
 *
 * Reductions use doubles with SUM, every other operation bytes. The
 * inputs are small integers, so every sum is exact whatever the order
 * of the additions: nbcx's result must equal MPI's bit for bit.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Native persistent collectives (--persistent): the MPI-4 names, Open MPI
 * 4's MPIX_<op>_init from mpi-ext.h, or none. MPICH before 4.3 has the
 * MPI-4 names, but some of them return stale data when restarted (e.g.
 * MPI_Allgather_init, MPI_Gather_init in 4.0.2, see test_vcollectives.c),
 * so there the native side keeps the nonblocking call, as without MPI-4
 * (the same choice as nbcx-transform's NBCX_PERSISTENT). */
#if MPI_VERSION >= 4 &&                                                      \
    !(defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40300000)
#define BENCH_PINIT(name) MPI_##name##_init
const char *const bench_native_persistent = "MPI-4";
#elif defined(OPEN_MPI)
#include <mpi-ext.h>
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
#define BENCH_PINIT(name) MPIX_##name##_init
const char *const bench_native_persistent = "MPIX";
#endif
#endif
#ifndef BENCH_PINIT
const char *const bench_native_persistent = "none";
#endif

/* ---- the three faces of every operation ---------------------------- */

static int block_barrier(const struct bench_buf *b)
{
    return MPI_Barrier(b->mcomm);
}
static int native_ibarrier(const struct bench_buf *b, MPI_Request *r)
{
    return MPI_Ibarrier(b->mcomm, r);
}
static int nbcx_ibarrier_(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_ibarrier(b->ncomm, r);
}

static int block_bcast(const struct bench_buf *b)
{
    return MPI_Bcast(b->rbuf, b->count, b->mtype, BENCH_ROOT, b->mcomm);
}
static int native_ibcast(const struct bench_buf *b, MPI_Request *r)
{
    return MPI_Ibcast(b->rbuf, b->count, b->mtype, BENCH_ROOT, b->mcomm, r);
}
static int nbcx_ibcast_(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_ibcast(b->rbuf, b->count, b->ntype, BENCH_ROOT, b->ncomm, r);
}

static int block_reduce(const struct bench_buf *b)
{
    return MPI_Reduce(b->sbuf, b->rbuf, b->count, b->mtype, MPI_SUM,
                      BENCH_ROOT, b->mcomm);
}
static int native_ireduce(const struct bench_buf *b, MPI_Request *r)
{
    return MPI_Ireduce(b->sbuf, b->rbuf, b->count, b->mtype, MPI_SUM,
                       BENCH_ROOT, b->mcomm, r);
}
static int nbcx_ireduce_(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_ireduce(b->sbuf, b->rbuf, b->count, b->ntype, NBCX_SUM,
                        BENCH_ROOT, b->ncomm, r);
}

static int block_allreduce(const struct bench_buf *b)
{
    return MPI_Allreduce(b->sbuf, b->rbuf, b->count, b->mtype, MPI_SUM,
                         b->mcomm);
}
static int native_iallreduce(const struct bench_buf *b, MPI_Request *r)
{
    return MPI_Iallreduce(b->sbuf, b->rbuf, b->count, b->mtype, MPI_SUM,
                          b->mcomm, r);
}
static int nbcx_iallreduce_(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_iallreduce(b->sbuf, b->rbuf, b->count, b->ntype, NBCX_SUM,
                           b->ncomm, r);
}

static int block_gather(const struct bench_buf *b)
{
    return MPI_Gather(b->sbuf, b->count, b->mtype, b->rbuf, b->count,
                      b->mtype, BENCH_ROOT, b->mcomm);
}
static int native_igather(const struct bench_buf *b, MPI_Request *r)
{
    return MPI_Igather(b->sbuf, b->count, b->mtype, b->rbuf, b->count,
                       b->mtype, BENCH_ROOT, b->mcomm, r);
}
static int nbcx_igather_(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_igather(b->sbuf, b->count, b->ntype, b->rbuf, b->count,
                        b->ntype, BENCH_ROOT, b->ncomm, r);
}

static int block_scatter(const struct bench_buf *b)
{
    return MPI_Scatter(b->sbuf, b->count, b->mtype, b->rbuf, b->count,
                       b->mtype, BENCH_ROOT, b->mcomm);
}
static int native_iscatter(const struct bench_buf *b, MPI_Request *r)
{
    return MPI_Iscatter(b->sbuf, b->count, b->mtype, b->rbuf, b->count,
                        b->mtype, BENCH_ROOT, b->mcomm, r);
}
static int nbcx_iscatter_(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_iscatter(b->sbuf, b->count, b->ntype, b->rbuf, b->count,
                         b->ntype, BENCH_ROOT, b->ncomm, r);
}

static int block_allgather(const struct bench_buf *b)
{
    return MPI_Allgather(b->sbuf, b->count, b->mtype, b->rbuf, b->count,
                         b->mtype, b->mcomm);
}
static int native_iallgather(const struct bench_buf *b, MPI_Request *r)
{
    return MPI_Iallgather(b->sbuf, b->count, b->mtype, b->rbuf, b->count,
                          b->mtype, b->mcomm, r);
}
static int nbcx_iallgather_(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_iallgather(b->sbuf, b->count, b->ntype, b->rbuf, b->count,
                           b->ntype, b->ncomm, r);
}

static int block_alltoall(const struct bench_buf *b)
{
    return MPI_Alltoall(b->sbuf, b->count, b->mtype, b->rbuf, b->count,
                        b->mtype, b->mcomm);
}
static int native_ialltoall(const struct bench_buf *b, MPI_Request *r)
{
    return MPI_Ialltoall(b->sbuf, b->count, b->mtype, b->rbuf, b->count,
                         b->mtype, b->mcomm, r);
}
static int nbcx_ialltoall_(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_ialltoall(b->sbuf, b->count, b->ntype, b->rbuf, b->count,
                          b->ntype, b->ncomm, r);
}

/* The vector variants with every block of `count` elements (displs
 * i * count), reduce_scatter_block, scan and exscan. */
static int block_gatherv(const struct bench_buf *b)
{
    return MPI_Gatherv(b->sbuf, b->count, b->mtype, b->rbuf, b->counts,
                       b->displs, b->mtype, BENCH_ROOT, b->mcomm);
}
static int native_igatherv(const struct bench_buf *b, MPI_Request *r)
{
    return MPI_Igatherv(b->sbuf, b->count, b->mtype, b->rbuf, b->counts,
                        b->displs, b->mtype, BENCH_ROOT, b->mcomm, r);
}
static int nbcx_igatherv_(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_igatherv(b->sbuf, b->count, b->ntype, b->rbuf, b->counts,
                         b->displs, b->ntype, BENCH_ROOT, b->ncomm, r);
}

static int block_scatterv(const struct bench_buf *b)
{
    return MPI_Scatterv(b->sbuf, b->counts, b->displs, b->mtype, b->rbuf,
                        b->count, b->mtype, BENCH_ROOT, b->mcomm);
}
static int native_iscatterv(const struct bench_buf *b, MPI_Request *r)
{
    return MPI_Iscatterv(b->sbuf, b->counts, b->displs, b->mtype, b->rbuf,
                         b->count, b->mtype, BENCH_ROOT, b->mcomm, r);
}
static int nbcx_iscatterv_(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_iscatterv(b->sbuf, b->counts, b->displs, b->ntype, b->rbuf,
                          b->count, b->ntype, BENCH_ROOT, b->ncomm, r);
}

static int block_allgatherv(const struct bench_buf *b)
{
    return MPI_Allgatherv(b->sbuf, b->count, b->mtype, b->rbuf, b->counts,
                          b->displs, b->mtype, b->mcomm);
}
static int native_iallgatherv(const struct bench_buf *b, MPI_Request *r)
{
    return MPI_Iallgatherv(b->sbuf, b->count, b->mtype, b->rbuf, b->counts,
                           b->displs, b->mtype, b->mcomm, r);
}
static int nbcx_iallgatherv_(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_iallgatherv(b->sbuf, b->count, b->ntype, b->rbuf, b->counts,
                            b->displs, b->ntype, b->ncomm, r);
}

static int block_alltoallv(const struct bench_buf *b)
{
    return MPI_Alltoallv(b->sbuf, b->counts, b->displs, b->mtype, b->rbuf,
                         b->counts, b->displs, b->mtype, b->mcomm);
}
static int native_ialltoallv(const struct bench_buf *b, MPI_Request *r)
{
    return MPI_Ialltoallv(b->sbuf, b->counts, b->displs, b->mtype, b->rbuf,
                          b->counts, b->displs, b->mtype, b->mcomm, r);
}
static int nbcx_ialltoallv_(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_ialltoallv(b->sbuf, b->counts, b->displs, b->ntype, b->rbuf,
                           b->counts, b->displs, b->ntype, b->ncomm, r);
}

static int block_reduce_scatter_block(const struct bench_buf *b)
{
    return MPI_Reduce_scatter_block(b->sbuf, b->rbuf, b->count, b->mtype,
                                    MPI_SUM, b->mcomm);
}
static int native_ireduce_scatter_block(const struct bench_buf *b,
                                        MPI_Request *r)
{
    return MPI_Ireduce_scatter_block(b->sbuf, b->rbuf, b->count, b->mtype,
                                     MPI_SUM, b->mcomm, r);
}
static int nbcx_ireduce_scatter_block_(const struct bench_buf *b,
                                       nbcx_request *r)
{
    return nbcx_ireduce_scatter_block(b->sbuf, b->rbuf, b->count, b->ntype,
                                      NBCX_SUM, b->ncomm, r);
}

static int block_scan(const struct bench_buf *b)
{
    return MPI_Scan(b->sbuf, b->rbuf, b->count, b->mtype, MPI_SUM,
                    b->mcomm);
}
static int native_iscan(const struct bench_buf *b, MPI_Request *r)
{
    return MPI_Iscan(b->sbuf, b->rbuf, b->count, b->mtype, MPI_SUM,
                     b->mcomm, r);
}
static int nbcx_iscan_(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_iscan(b->sbuf, b->rbuf, b->count, b->ntype, NBCX_SUM,
                      b->ncomm, r);
}

static int block_exscan(const struct bench_buf *b)
{
    return MPI_Exscan(b->sbuf, b->rbuf, b->count, b->mtype, MPI_SUM,
                      b->mcomm);
}
static int native_iexscan(const struct bench_buf *b, MPI_Request *r)
{
    return MPI_Iexscan(b->sbuf, b->rbuf, b->count, b->mtype, MPI_SUM,
                       b->mcomm, r);
}
static int nbcx_iexscan_(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_iexscan(b->sbuf, b->rbuf, b->count, b->ntype, NBCX_SUM,
                        b->ncomm, r);
}

/* ---- persistent forms (--persistent) --------------------------------- */

/* nbcx_<op>_init with the arguments of the nonblocking call; the native
 * persistent collectives where MPI has reliable ones (see
 * bench_native_persistent in bench.h), else NULL. */

static int pnbcx_barrier(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_barrier_init(b->ncomm, r);
}

static int pnbcx_bcast(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_bcast_init(b->rbuf, b->count, b->ntype, BENCH_ROOT, b->ncomm,
                           r);
}

static int pnbcx_reduce(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_reduce_init(b->sbuf, b->rbuf, b->count, b->ntype, NBCX_SUM,
                            BENCH_ROOT, b->ncomm, r);
}

static int pnbcx_allreduce(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_allreduce_init(b->sbuf, b->rbuf, b->count, b->ntype, NBCX_SUM,
                               b->ncomm, r);
}

static int pnbcx_gather(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_gather_init(b->sbuf, b->count, b->ntype, b->rbuf, b->count,
                            b->ntype, BENCH_ROOT, b->ncomm, r);
}

static int pnbcx_scatter(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_scatter_init(b->sbuf, b->count, b->ntype, b->rbuf, b->count,
                             b->ntype, BENCH_ROOT, b->ncomm, r);
}

static int pnbcx_allgather(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_allgather_init(b->sbuf, b->count, b->ntype, b->rbuf, b->count,
                               b->ntype, b->ncomm, r);
}

static int pnbcx_alltoall(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_alltoall_init(b->sbuf, b->count, b->ntype, b->rbuf, b->count,
                              b->ntype, b->ncomm, r);
}

static int pnbcx_gatherv(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_gatherv_init(b->sbuf, b->count, b->ntype, b->rbuf, b->counts,
                             b->displs, b->ntype, BENCH_ROOT, b->ncomm, r);
}

static int pnbcx_scatterv(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_scatterv_init(b->sbuf, b->counts, b->displs, b->ntype, b->rbuf,
                              b->count, b->ntype, BENCH_ROOT, b->ncomm, r);
}

static int pnbcx_allgatherv(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_allgatherv_init(b->sbuf, b->count, b->ntype, b->rbuf,
                                b->counts, b->displs, b->ntype, b->ncomm, r);
}

static int pnbcx_alltoallv(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_alltoallv_init(b->sbuf, b->counts, b->displs, b->ntype,
                               b->rbuf, b->counts, b->displs, b->ntype,
                               b->ncomm, r);
}

static int pnbcx_reduce_scatter_block(const struct bench_buf *b,
                                      nbcx_request *r)
{
    return nbcx_reduce_scatter_block_init(b->sbuf, b->rbuf, b->count, b->ntype,
                                          NBCX_SUM, b->ncomm, r);
}

static int pnbcx_scan(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_scan_init(b->sbuf, b->rbuf, b->count, b->ntype, NBCX_SUM,
                          b->ncomm, r);
}

static int pnbcx_exscan(const struct bench_buf *b, nbcx_request *r)
{
    return nbcx_exscan_init(b->sbuf, b->rbuf, b->count, b->ntype, NBCX_SUM,
                            b->ncomm, r);
}

#ifdef BENCH_PINIT

static int pnative_barrier(const struct bench_buf *b, MPI_Request *r)
{
    return BENCH_PINIT(Barrier)(b->mcomm, MPI_INFO_NULL, r);
}

static int pnative_bcast(const struct bench_buf *b, MPI_Request *r)
{
    return BENCH_PINIT(Bcast)(b->rbuf, b->count, b->mtype, BENCH_ROOT,
                       b->mcomm, MPI_INFO_NULL, r);
}

static int pnative_reduce(const struct bench_buf *b, MPI_Request *r)
{
    return BENCH_PINIT(Reduce)(b->sbuf, b->rbuf, b->count, b->mtype, MPI_SUM,
                       BENCH_ROOT, b->mcomm, MPI_INFO_NULL, r);
}

static int pnative_allreduce(const struct bench_buf *b, MPI_Request *r)
{
    return BENCH_PINIT(Allreduce)(b->sbuf, b->rbuf, b->count, b->mtype,
                       MPI_SUM, b->mcomm, MPI_INFO_NULL, r);
}

static int pnative_gather(const struct bench_buf *b, MPI_Request *r)
{
    return BENCH_PINIT(Gather)(b->sbuf, b->count, b->mtype, b->rbuf, b->count,
                       b->mtype, BENCH_ROOT, b->mcomm, MPI_INFO_NULL, r);
}

static int pnative_scatter(const struct bench_buf *b, MPI_Request *r)
{
    return BENCH_PINIT(Scatter)(b->sbuf, b->count, b->mtype, b->rbuf, b->count,
                       b->mtype, BENCH_ROOT, b->mcomm, MPI_INFO_NULL, r);
}

static int pnative_allgather(const struct bench_buf *b, MPI_Request *r)
{
    return BENCH_PINIT(Allgather)(b->sbuf, b->count, b->mtype, b->rbuf,
                       b->count, b->mtype, b->mcomm, MPI_INFO_NULL, r);
}

static int pnative_alltoall(const struct bench_buf *b, MPI_Request *r)
{
    return BENCH_PINIT(Alltoall)(b->sbuf, b->count, b->mtype, b->rbuf,
                       b->count, b->mtype, b->mcomm, MPI_INFO_NULL, r);
}

static int pnative_gatherv(const struct bench_buf *b, MPI_Request *r)
{
    return BENCH_PINIT(Gatherv)(b->sbuf, b->count, b->mtype, b->rbuf,
                       b->counts, b->displs, b->mtype, BENCH_ROOT, b->mcomm,
                       MPI_INFO_NULL, r);
}

static int pnative_scatterv(const struct bench_buf *b, MPI_Request *r)
{
    return BENCH_PINIT(Scatterv)(b->sbuf, b->counts, b->displs, b->mtype,
                       b->rbuf, b->count, b->mtype, BENCH_ROOT, b->mcomm,
                       MPI_INFO_NULL, r);
}

static int pnative_allgatherv(const struct bench_buf *b, MPI_Request *r)
{
    return BENCH_PINIT(Allgatherv)(b->sbuf, b->count, b->mtype, b->rbuf,
                       b->counts, b->displs, b->mtype, b->mcomm, MPI_INFO_NULL,
                       r);
}

static int pnative_alltoallv(const struct bench_buf *b, MPI_Request *r)
{
    return BENCH_PINIT(Alltoallv)(b->sbuf, b->counts, b->displs, b->mtype,
                       b->rbuf, b->counts, b->displs, b->mtype, b->mcomm,
                       MPI_INFO_NULL, r);
}

static int pnative_scan(const struct bench_buf *b, MPI_Request *r)
{
    return BENCH_PINIT(Scan)(b->sbuf, b->rbuf, b->count, b->mtype, MPI_SUM,
                       b->mcomm, MPI_INFO_NULL, r);
}

static int pnative_exscan(const struct bench_buf *b, MPI_Request *r)
{
    return BENCH_PINIT(Exscan)(b->sbuf, b->rbuf, b->count, b->mtype, MPI_SUM,
                       b->mcomm, MPI_INFO_NULL, r);
}

static int pnative_reduce_scatter_block(const struct bench_buf *b,
                                        MPI_Request *r)
{
    return BENCH_PINIT(Reduce_scatter_block)(b->sbuf, b->rbuf, b->count,
                                             b->mtype, MPI_SUM, b->mcomm,
                                             MPI_INFO_NULL, r);
}
#define PNATIVE(name) pnative_##name
#else
#define PNATIVE(name) NULL
#endif

/* ---- the table ------------------------------------------------------ */

/* Buffers are allocated at full size on every rank (the root's shape),
 * which keeps the code free of root special cases. */
const struct bench_op bench_ops[] = {
    { "ibarrier", 0, BLOCKS_NONE, BLOCKS_NONE, RESULT_NONE, 0,
      block_barrier, native_ibarrier, nbcx_ibarrier_, PNATIVE(barrier),
      pnbcx_barrier },
    { "ibcast", 0, BLOCKS_NONE, BLOCKS_ONE, RESULT_ALL, 1,
      block_bcast, native_ibcast, nbcx_ibcast_, PNATIVE(bcast),
      pnbcx_bcast },
    { "ireduce", 1, BLOCKS_ONE, BLOCKS_ONE, RESULT_ROOT, 0,
      block_reduce, native_ireduce, nbcx_ireduce_, PNATIVE(reduce),
      pnbcx_reduce },
    { "iallreduce", 1, BLOCKS_ONE, BLOCKS_ONE, RESULT_ALL, 0,
      block_allreduce, native_iallreduce, nbcx_iallreduce_,
      PNATIVE(allreduce), pnbcx_allreduce },
    { "igather", 0, BLOCKS_ONE, BLOCKS_PER_RANK, RESULT_ROOT, 0,
      block_gather, native_igather, nbcx_igather_, PNATIVE(gather),
      pnbcx_gather },
    { "iscatter", 0, BLOCKS_PER_RANK, BLOCKS_ONE, RESULT_ALL, 0,
      block_scatter, native_iscatter, nbcx_iscatter_, PNATIVE(scatter),
      pnbcx_scatter },
    { "iallgather", 0, BLOCKS_ONE, BLOCKS_PER_RANK, RESULT_ALL, 0,
      block_allgather, native_iallgather, nbcx_iallgather_,
      PNATIVE(allgather), pnbcx_allgather },
    { "ialltoall", 0, BLOCKS_PER_RANK, BLOCKS_PER_RANK, RESULT_ALL, 0,
      block_alltoall, native_ialltoall, nbcx_ialltoall_, PNATIVE(alltoall),
      pnbcx_alltoall },
    { "igatherv", 0, BLOCKS_ONE, BLOCKS_PER_RANK, RESULT_ROOT, 0,
      block_gatherv, native_igatherv, nbcx_igatherv_, PNATIVE(gatherv),
      pnbcx_gatherv },
    { "iscatterv", 0, BLOCKS_PER_RANK, BLOCKS_ONE, RESULT_ALL, 0,
      block_scatterv, native_iscatterv, nbcx_iscatterv_, PNATIVE(scatterv),
      pnbcx_scatterv },
    { "iallgatherv", 0, BLOCKS_ONE, BLOCKS_PER_RANK, RESULT_ALL, 0,
      block_allgatherv, native_iallgatherv, nbcx_iallgatherv_,
      PNATIVE(allgatherv), pnbcx_allgatherv },
    { "ialltoallv", 0, BLOCKS_PER_RANK, BLOCKS_PER_RANK, RESULT_ALL, 0,
      block_alltoallv, native_ialltoallv, nbcx_ialltoallv_,
      PNATIVE(alltoallv), pnbcx_alltoallv },
    { "ireduce_scatter_block", 1, BLOCKS_PER_RANK, BLOCKS_ONE, RESULT_ALL, 0,
      block_reduce_scatter_block, native_ireduce_scatter_block,
      nbcx_ireduce_scatter_block_, PNATIVE(reduce_scatter_block),
      pnbcx_reduce_scatter_block },
    { "iscan", 1, BLOCKS_ONE, BLOCKS_ONE, RESULT_ALL, 0,
      block_scan, native_iscan, nbcx_iscan_, PNATIVE(scan),
      pnbcx_scan },
    { "iexscan", 1, BLOCKS_ONE, BLOCKS_ONE, RESULT_NOT_ROOT, 0,
      block_exscan, native_iexscan, nbcx_iexscan_, PNATIVE(exscan),
      pnbcx_exscan },
};
const int bench_nops = (int)(sizeof bench_ops / sizeof bench_ops[0]);

int bench_op_find(const char *name)
{
    for (int i = 0; i < bench_nops; i++)
        if (strcmp(bench_ops[i].name, name) == 0)
            return i;
    return -1;
}

static int is_barrier(const struct bench_op *op)
{
    return op->send == BLOCKS_NONE && op->recv == BLOCKS_NONE;
}

size_t bench_op_elem(const struct bench_op *op)
{
    return op->reduction ? sizeof(double) : 1;
}

const char *bench_op_datatype(const struct bench_op *op)
{
    return is_barrier(op) ? "none" : op->reduction ? "double" : "byte";
}

long long bench_op_count(const struct bench_op *op, size_t bytes, int ranks)
{
    if (is_barrier(op))
        return 0;
    size_t count = bytes / bench_op_elem(op);
    if (count == 0)
        count = 1;
    size_t blocks = (op->send == BLOCKS_PER_RANK || op->recv == BLOCKS_PER_RANK)
                        ? (size_t)ranks
                        : 1;
    if (count > (size_t)INT_MAX || count * blocks > (size_t)INT_MAX)
        return -1;
    return (long long)count;
}

/* ---- buffers --------------------------------------------------------- */

static size_t buf_bytes(enum bench_blocks shape, const struct bench_buf *b)
{
    size_t block = (size_t)b->count * b->elem;
    switch (shape) {
    case BLOCKS_ONE: return block;
    case BLOCKS_PER_RANK: return block * (size_t)b->ranks;
    default: return 0;
    }
}

int bench_buf_init(struct bench_buf *b, const struct bench_op *op, int count,
                   int rank, int ranks, MPI_Comm mcomm, nbcx_comm ncomm)
{
    memset(b, 0, sizeof *b);
    b->count = count;
    b->elem = bench_op_elem(op);
    b->mtype = op->reduction ? MPI_DOUBLE : MPI_BYTE;
    b->ntype = op->reduction ? NBCX_DOUBLE : NBCX_BYTE;
    b->rank = rank;
    b->ranks = ranks;
    b->mcomm = mcomm;
    b->ncomm = ncomm;
    b->sbytes = buf_bytes(op->send, b);
    b->rbytes = buf_bytes(op->recv, b);
    b->counts = malloc(sizeof(int) * (size_t)ranks);
    b->displs = malloc(sizeof(int) * (size_t)ranks);
    if (!b->counts || !b->displs) {
        free(b->counts);
        free(b->displs);
        b->counts = b->displs = NULL;
        return -1;
    }
    for (int i = 0; i < ranks; i++) {
        b->counts[i] = count;
        /* only the v variants use them; bench_op_count checked that
         * their buffers' counts fit an int */
        b->displs[i] = (int)((long long)i * count);
    }
    /* Doubles need alignment; malloc's is enough. */
    if ((b->sbytes && !(b->sbuf = malloc(b->sbytes))) ||
        (b->rbytes && !(b->rbuf = malloc(b->rbytes)))) {
        bench_buf_free(b);
        return -1;
    }
    bench_fill(op, b);
    return 0;
}

void bench_buf_free(struct bench_buf *b)
{
    free(b->sbuf);
    free(b->rbuf);
    free(b->counts);
    free(b->displs);
    b->sbuf = b->rbuf = NULL;
    b->counts = b->displs = NULL;
}

/* A well-mixed 32-bit value of (rank, index): misplaced blocks differ. */
static uint32_t pattern(int rank, size_t i)
{
    uint32_t x = (uint32_t)rank * 0x9E3779B1u + (uint32_t)i * 0x85EBCA77u;
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12;
    return x;
}

/* Fills bytes of a buffer: doubles get integers below 2^16, so sums over
 * up to 2^37 ranks are exact; bytes get the low byte of the pattern. */
static void fill_input(const struct bench_buf *b, void *buf, size_t bytes)
{
    if (b->elem == sizeof(double)) {
        double *d = buf;
        for (size_t i = 0; i < bytes / sizeof(double); i++)
            d[i] = (double)(pattern(b->rank, i) & 0xFFFFu);
    } else {
        unsigned char *c = buf;
        for (size_t i = 0; i < bytes; i++)
            c[i] = (unsigned char)pattern(b->rank, i);
    }
}

#define POISON 0xA5

void bench_poison(const struct bench_op *op, struct bench_buf *b)
{
    if (!b->rbuf || (op->root_input_in_rbuf && b->rank == BENCH_ROOT))
        return;
    memset(b->rbuf, POISON, b->rbytes);
}

void bench_fill(const struct bench_op *op, struct bench_buf *b)
{
    if (b->sbuf)
        fill_input(b, b->sbuf, b->sbytes);
    if (op->root_input_in_rbuf && b->rank == BENCH_ROOT)
        fill_input(b, b->rbuf, b->rbytes);
    bench_poison(op, b);
}

void bench_result(const struct bench_op *op, const struct bench_buf *b,
                  const void **p, size_t *n)
{
    int defined = op->result == RESULT_ALL ||
                  (op->result == RESULT_ROOT && b->rank == BENCH_ROOT) ||
                  (op->result == RESULT_NOT_ROOT && b->rank != BENCH_ROOT);
    *p = defined ? b->rbuf : NULL;
    *n = defined ? b->rbytes : 0;
}
