/*
 * ops.c - the operations nbcx-bench measures: nbcx's start function of
 * each (the MPI library's own are in ops_mpi.c), buffer allocation, input
 * patterns, the result and its sequential reference.
 *
 * Reductions use doubles with SUM, every other operation bytes. The
 * inputs are small integers, so every sum is exact whatever the order
 * of the additions: nbcx's result must equal MPI's, and the sequential
 * reference, bit for bit.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* ---- nbcx's start functions ------------------------------------------ */

/* FACES(op, args...) defines both of op's start functions with the same
 * arguments (then the request): nbcx_i<op>_, the nonblocking call, and
 * pnbcx_<op>, nbcx_<op>_init (--persistent). The vector variants run with
 * every block of `count` elements (displs i * count). */
#define FACES(op, ...)                                                       \
    static int nbcx_i##op##_(const struct bench_buf *b, nbcx_request *r)    \
    {                                                                        \
        return nbcx_i##op(__VA_ARGS__, r);                                   \
    }                                                                        \
    static int pnbcx_##op(const struct bench_buf *b, nbcx_request *r)       \
    {                                                                        \
        return nbcx_##op##_init(__VA_ARGS__, r);                             \
    }

FACES(barrier, b->ncomm)
FACES(bcast, b->rbuf, b->count, b->ntype, BENCH_ROOT, b->ncomm)
FACES(reduce, b->sbuf, b->rbuf, b->count, b->ntype, NBCX_SUM, BENCH_ROOT,
      b->ncomm)
FACES(allreduce, b->sbuf, b->rbuf, b->count, b->ntype, NBCX_SUM, b->ncomm)
FACES(gather, b->sbuf, b->count, b->ntype, b->rbuf, b->count, b->ntype,
      BENCH_ROOT, b->ncomm)
FACES(scatter, b->sbuf, b->count, b->ntype, b->rbuf, b->count, b->ntype,
      BENCH_ROOT, b->ncomm)
FACES(allgather, b->sbuf, b->count, b->ntype, b->rbuf, b->count, b->ntype,
      b->ncomm)
FACES(alltoall, b->sbuf, b->count, b->ntype, b->rbuf, b->count, b->ntype,
      b->ncomm)
FACES(gatherv, b->sbuf, b->count, b->ntype, b->rbuf, b->counts, b->displs,
      b->ntype, BENCH_ROOT, b->ncomm)
FACES(scatterv, b->sbuf, b->counts, b->displs, b->ntype, b->rbuf, b->count,
      b->ntype, BENCH_ROOT, b->ncomm)
FACES(allgatherv, b->sbuf, b->count, b->ntype, b->rbuf, b->counts,
      b->displs, b->ntype, b->ncomm)
FACES(alltoallv, b->sbuf, b->counts, b->displs, b->ntype, b->rbuf,
      b->counts, b->displs, b->ntype, b->ncomm)
FACES(reduce_scatter_block, b->sbuf, b->rbuf, b->count, b->ntype, NBCX_SUM,
      b->ncomm)
FACES(reduce_scatter, b->sbuf, b->rbuf, b->counts, b->ntype, NBCX_SUM,
      b->ncomm)
FACES(alltoallw, b->sbuf, b->counts, b->bdispls, b->ntypes, b->rbuf,
      b->counts, b->bdispls, b->ntypes, b->ncomm)
FACES(neighbor_allgather, b->sbuf, b->count, b->ntype, b->rbuf, b->count,
      b->ntype, b->ncomm)
FACES(neighbor_allgatherv, b->sbuf, b->count, b->ntype, b->rbuf, b->counts,
      b->displs, b->ntype, b->ncomm)
FACES(neighbor_alltoall, b->sbuf, b->count, b->ntype, b->rbuf, b->count,
      b->ntype, b->ncomm)
FACES(neighbor_alltoallv, b->sbuf, b->counts, b->displs, b->ntype, b->rbuf,
      b->counts, b->displs, b->ntype, b->ncomm)
FACES(neighbor_alltoallw, b->sbuf, b->counts, b->adispls, b->ntypes,
      b->rbuf, b->counts, b->adispls, b->ntypes, b->ncomm)
FACES(scan, b->sbuf, b->rbuf, b->count, b->ntype, NBCX_SUM, b->ncomm)
FACES(exscan, b->sbuf, b->rbuf, b->count, b->ntype, NBCX_SUM, b->ncomm)

/* ---- the table ------------------------------------------------------ */

/* Buffers are allocated at full size on every rank (the root's shape),
 * which keeps the code free of root special cases. The order is that of
 * ops_mpi.c's table of MPI functions. */
const struct bench_op bench_ops[] = {
    { "ibarrier", 0, BLOCKS_NONE, BLOCKS_NONE, RESULT_NONE, 0,
      nbcx_ibarrier_, SUM_ALL, pnbcx_barrier },
    { "ibcast", 0, BLOCKS_NONE, BLOCKS_ONE, RESULT_ALL, 1, nbcx_ibcast_,
      SUM_ALL, pnbcx_bcast },
    { "ireduce", 1, BLOCKS_ONE, BLOCKS_ONE, RESULT_ROOT, 0, nbcx_ireduce_,
      SUM_ALL, pnbcx_reduce },
    { "iallreduce", 1, BLOCKS_ONE, BLOCKS_ONE, RESULT_ALL, 0,
      nbcx_iallreduce_, SUM_ALL, pnbcx_allreduce },
    { "igather", 0, BLOCKS_ONE, BLOCKS_PER_RANK, RESULT_ROOT, 0,
      nbcx_igather_, SUM_ALL, pnbcx_gather },
    { "iscatter", 0, BLOCKS_PER_RANK, BLOCKS_ONE, RESULT_ALL, 0,
      nbcx_iscatter_, SUM_ALL, pnbcx_scatter },
    { "iallgather", 0, BLOCKS_ONE, BLOCKS_PER_RANK, RESULT_ALL, 0,
      nbcx_iallgather_, SUM_ALL, pnbcx_allgather },
    { "ialltoall", 0, BLOCKS_PER_RANK, BLOCKS_PER_RANK, RESULT_ALL, 0,
      nbcx_ialltoall_, SUM_ALL, pnbcx_alltoall },
    { "igatherv", 0, BLOCKS_ONE, BLOCKS_PER_RANK, RESULT_ROOT, 0,
      nbcx_igatherv_, SUM_ALL, pnbcx_gatherv },
    { "iscatterv", 0, BLOCKS_PER_RANK, BLOCKS_ONE, RESULT_ALL, 0,
      nbcx_iscatterv_, SUM_ALL, pnbcx_scatterv },
    { "iallgatherv", 0, BLOCKS_ONE, BLOCKS_PER_RANK, RESULT_ALL, 0,
      nbcx_iallgatherv_, SUM_ALL, pnbcx_allgatherv },
    { "ialltoallv", 0, BLOCKS_PER_RANK, BLOCKS_PER_RANK, RESULT_ALL, 0,
      nbcx_ialltoallv_, SUM_ALL, pnbcx_alltoallv },
    { "ireduce_scatter_block", 1, BLOCKS_PER_RANK, BLOCKS_ONE, RESULT_ALL, 0,
      nbcx_ireduce_scatter_block_, SUM_ALL, pnbcx_reduce_scatter_block },
    { "iscan", 1, BLOCKS_ONE, BLOCKS_ONE, RESULT_ALL, 0, nbcx_iscan_,
      SUM_INCLUSIVE, pnbcx_scan },
    { "iexscan", 1, BLOCKS_ONE, BLOCKS_ONE, RESULT_NOT_ROOT, 0,
      nbcx_iexscan_, SUM_EXCLUSIVE, pnbcx_exscan },
    /* every rank's block of `count` elements (recvcounts all count) */
    { "ireduce_scatter", 1, BLOCKS_PER_RANK, BLOCKS_ONE, RESULT_ALL, 0,
      nbcx_ireduce_scatter_, SUM_ALL, pnbcx_reduce_scatter },
    /* ialltoallv's blocks, with byte displacements and a type per peer */
    { "ialltoallw", 0, BLOCKS_PER_RANK, BLOCKS_PER_RANK, RESULT_ALL, 0,
      nbcx_ialltoallw_, SUM_ALL, pnbcx_alltoallw },
    /* on the ring (BENCH_NEIGHBORS): a block from, or for, each neighbour */
    { "ineighbor_allgather", 0, BLOCKS_ONE, BLOCKS_PER_NEIGHBOR, RESULT_ALL,
      0, nbcx_ineighbor_allgather_, SUM_ALL, pnbcx_neighbor_allgather },
    { "ineighbor_allgatherv", 0, BLOCKS_ONE, BLOCKS_PER_NEIGHBOR, RESULT_ALL,
      0, nbcx_ineighbor_allgatherv_, SUM_ALL, pnbcx_neighbor_allgatherv },
    { "ineighbor_alltoall", 0, BLOCKS_PER_NEIGHBOR, BLOCKS_PER_NEIGHBOR,
      RESULT_ALL, 0, nbcx_ineighbor_alltoall_, SUM_ALL,
      pnbcx_neighbor_alltoall },
    { "ineighbor_alltoallv", 0, BLOCKS_PER_NEIGHBOR, BLOCKS_PER_NEIGHBOR,
      RESULT_ALL, 0, nbcx_ineighbor_alltoallv_, SUM_ALL,
      pnbcx_neighbor_alltoallv },
    { "ineighbor_alltoallw", 0, BLOCKS_PER_NEIGHBOR, BLOCKS_PER_NEIGHBOR,
      RESULT_ALL, 0, nbcx_ineighbor_alltoallw_, SUM_ALL,
      pnbcx_neighbor_alltoallw },
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
                    : (op->send == BLOCKS_PER_NEIGHBOR ||
                       op->recv == BLOCKS_PER_NEIGHBOR)
                        ? BENCH_NEIGHBORS
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
    case BLOCKS_PER_NEIGHBOR: return block * BENCH_NEIGHBORS;
    default: return 0;
    }
}

int bench_buf_init(struct bench_buf *b, const struct bench_op *op, int count,
                   int rank, int ranks, nbcx_comm ncomm)
{
    memset(b, 0, sizeof *b);
    b->count = count;
    b->elem = bench_op_elem(op);
    b->ntype = op->reduction ? NBCX_DOUBLE : NBCX_BYTE;
    b->rank = rank;
    b->ranks = ranks;
    b->ncomm = ncomm;
    b->sbytes = buf_bytes(op->send, b);
    b->rbytes = buf_bytes(op->recv, b);
    /* one entry per rank, or per neighbour (the neighbourhood
     * collectives: BENCH_NEIGHBORS, more than ranks on 1 rank) */
    int n = ranks > BENCH_NEIGHBORS ? ranks : BENCH_NEIGHBORS;
    b->counts = malloc(sizeof(int) * (size_t)n);
    b->displs = malloc(sizeof(int) * (size_t)n);
    b->bdispls = malloc(sizeof(int) * (size_t)n);
    b->adispls = malloc(sizeof(ptrdiff_t) * (size_t)n);
    b->ntypes = malloc(sizeof(nbcx_datatype) * (size_t)n);
    /* Doubles need alignment; malloc's is enough. */
    if (!b->counts || !b->displs || !b->bdispls || !b->adispls ||
        !b->ntypes ||
        (b->sbytes && !(b->sbuf = malloc(b->sbytes))) ||
        (b->rbytes && !(b->rbuf = malloc(b->rbytes)))) {
        bench_buf_free(b);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        b->counts[i] = count;
        /* only the v variants use them; bench_op_count checked that
         * their buffers' counts fit an int */
        b->displs[i] = (int)((long long)i * count);
        b->ntypes[i] = b->ntype;
        /* ialltoallw's byte displacements: a run whose buffers exceed
         * INT_MAX bytes is refused (bench_op_count, elem 1 for it) */
        long long bytes = (long long)i * count * (long long)b->elem;
        b->bdispls[i] = bytes > INT_MAX ? INT_MAX : (int)bytes;
        b->adispls[i] = (ptrdiff_t)bytes;
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
    free(b->bdispls);
    free(b->adispls);
    free(b->ntypes);
    b->adispls = NULL;
    b->sbuf = b->rbuf = NULL;
    b->counts = b->displs = b->bdispls = NULL;
    b->ntypes = NULL;
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

/* Element i of rank r's input, written at dst: doubles get integers
 * below 2^16, so sums over up to 2^37 ranks are exact; bytes get the low
 * byte of the pattern. */
static void input_elem(const struct bench_buf *b, int r, size_t i, void *dst)
{
    if (b->elem == sizeof(double))
        *(double *)dst = (double)(pattern(r, i) & 0xFFFFu);
    else
        *(unsigned char *)dst = (unsigned char)pattern(r, i);
}

/* Fills bytes of a buffer with this rank's input. */
static void fill_input(const struct bench_buf *b, void *buf, size_t bytes)
{
    for (size_t i = 0; i < bytes / b->elem; i++)
        input_elem(b, b->rank, i, (char *)buf + i * b->elem);
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

/* ---- the sequential reference ---------------------------------------- */

/* One block per rank: block j holds elements src_off .. src_off + count - 1
 * of rank j's input. */
static void ref_blocks(const struct bench_buf *b, void *ref, size_t src_off)
{
    size_t count = (size_t)b->count;
    for (int j = 0; j < b->ranks; j++)
        for (size_t i = 0; i < count; i++)
            input_elem(b, j, src_off + i,
                       (char *)ref + ((size_t)j * count + i) * b->elem);
}

void bench_reference(const struct bench_op *op, const struct bench_buf *b,
                     void *ref)
{
    const void *res;
    size_t n;
    bench_result(op, b, &res, &n);
    if (n == 0)
        return;
    size_t count = (size_t)b->count;
    if (op->reduction) {
        /* the sum over ranks (all of them, or those below this one for
         * the scans); reduce_scatter_block: of this rank's block */
        int nsum = op->sum == SUM_ALL         ? b->ranks
                   : op->sum == SUM_INCLUSIVE ? b->rank + 1
                                              : b->rank;
        size_t off = op->send == BLOCKS_PER_RANK ? (size_t)b->rank * count
                                                 : 0;
        double *d = ref;
        for (size_t i = 0; i < count; i++) {
            double sum = 0;
            for (int r = 0; r < nsum; r++)
                sum += (double)(pattern(r, off + i) & 0xFFFFu);
            d[i] = sum;
        }
    } else if (op->recv == BLOCKS_ONE && op->send == BLOCKS_NONE) {
        /* bcast: the root's buffer */
        for (size_t i = 0; i < count; i++)
            input_elem(b, BENCH_ROOT, i, (char *)ref + i * b->elem);
    } else if (op->recv == BLOCKS_ONE) {
        /* scatter: block `rank` of the root's send buffer */
        for (size_t i = 0; i < count; i++)
            input_elem(b, BENCH_ROOT, (size_t)b->rank * count + i,
                       (char *)ref + i * b->elem);
    } else if (op->recv == BLOCKS_PER_NEIGHBOR) {
        /* on the ring, block 0 comes from the neighbour at -1 and block 1
         * from the one at +1: their buffer (allgather), or the block each
         * sent towards this rank (alltoall: the -1 neighbour's block for
         * +1, the +1 neighbour's block for -1) */
        int from[BENCH_NEIGHBORS] = { (b->rank - 1 + b->ranks) % b->ranks,
                                      (b->rank + 1) % b->ranks };
        for (int k = 0; k < BENCH_NEIGHBORS; k++) {
            size_t off = op->send == BLOCKS_PER_NEIGHBOR
                             ? (size_t)(BENCH_NEIGHBORS - 1 - k) * count
                             : 0;
            for (size_t i = 0; i < count; i++)
                input_elem(b, from[k], off + i,
                           (char *)ref + ((size_t)k * count + i) * b->elem);
        }
    } else if (op->send == BLOCKS_ONE) {
        /* gather, allgather: block j is rank j's buffer */
        ref_blocks(b, ref, 0);
    } else {
        /* alltoall: block j is block `rank` of rank j's send buffer */
        ref_blocks(b, ref, (size_t)b->rank * count);
    }
}
