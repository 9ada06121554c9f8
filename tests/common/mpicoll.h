/*
 * mpicoll.h - one core collective as a value: its shape, its buffers, its
 * start in nbcx (nonblocking, or persistent: mc_call) and its reference
 * run with the blocking MPI collective. Shared by the MPI tests
 * (tests/mpi) test_many and test_threads, which start many of them at
 * once and compare each result with MPI afterwards, and test_persistent
 * (its persistent requests).
 *
 * Values are small integers (ints, or doubles holding small integers) and
 * the operations are exact on them (no floating-point sums, whose value
 * depends on the order of the additions), so results must match MPI's to
 * the bit. Thread-safe: no shared state besides mt_fail().
 */
#ifndef NBCX_MPICOLL_H
#define NBCX_MPICOLL_H

#include <stdbool.h>

#include "mpitest.h"

enum mc_kind { MC_BARRIER, MC_BCAST, MC_REDUCE, MC_ALLREDUCE, MC_GATHER,
               MC_SCATTER, MC_ALLGATHER, MC_ALLTOALL, MC_NKINDS };
static const char *const mc_kind_name[MC_NKINDS] = {
    "barrier", "bcast", "reduce", "allreduce", "gather", "scatter",
    "allgather", "alltoall"};

/* An element type and the operations used with it (none: data movement
 * only, as for derived types, which MPI's predefined operations do not
 * take). */
struct mc_type {
    const char *name;
    size_t size;          /* bytes of one element                       */
    bool dbl;             /* values are doubles (else ints)             */
    MPI_Datatype mpi;
    nbcx_datatype nb;
    int nops;
    const char *op_name[4];
    MPI_Op mpi_op[4];
    nbcx_op nb_op[4];
};

/* Predefined MPI_INT and MPI_DOUBLE; free nothing. */
static inline void mc_type_int(struct mc_type *t)
{
    *t = (struct mc_type){"int", sizeof(int), false, MPI_INT, NBCX_INT32, 4,
                          {"sum", "max", "min", "bxor"},
                          {MPI_SUM, MPI_MAX, MPI_MIN, MPI_BXOR},
                          {NBCX_SUM, NBCX_MAX, NBCX_MIN, NBCX_BXOR}};
}

static inline void mc_type_double(struct mc_type *t)
{
    *t = (struct mc_type){"double", sizeof(double), true, MPI_DOUBLE,
                          NBCX_DOUBLE, 2, {"max", "min"},
                          {MPI_MAX, MPI_MIN}, {NBCX_MAX, NBCX_MIN}};
}

/* A derived type, contiguous(n, int), seen by nbcx through
 * nbcx_datatype_from_mpi (moved with MPI's pack/unpack). Free with
 * mc_type_free(). */
static inline void mc_type_contig(struct mc_type *t, int n)
{
    memset(t, 0, sizeof *t);
    t->name = "contig(n,int)";
    t->size = (size_t)n * sizeof(int);
    MT_MPI(MPI_Type_contiguous(n, MPI_INT, &t->mpi));
    MT_MPI(MPI_Type_commit(&t->mpi));
    MT_OK(nbcx_datatype_from_mpi(t->mpi, &t->nb));
}

static inline void mc_type_free(struct mc_type *t)
{
    MT_OK(nbcx_datatype_free(&t->nb));
    MPI_Type_free(&t->mpi);
}

struct mc_coll {
    enum mc_kind kind;
    int count, root, op;
    bool in_place;             /* allreduce only */
    const struct mc_type *t;
    size_t sbytes, rbytes;
    unsigned char *s, *r, *r_ref; /* input; nbcx's and MPI's output */
    nbcx_request req;
};

static inline unsigned char *mc_alloc(size_t n)
{
    unsigned char *p = malloc(n > 0 ? n : 1);
    if (!p)
        MPI_Abort(MPI_COMM_WORLD, 2);
    return p;
}

/* Small integers, as ints or doubles: sums over 7 ranks cannot overflow
 * and every operation is exact. */
static inline void mc_fill(unsigned char *buf, size_t bytes, bool dbl,
                           uint64_t *rng)
{
    size_t width = dbl ? sizeof(double) : sizeof(int);
    for (size_t k = 0; k < bytes / width; k++) {
        int v = mt_range(rng, -1000, 1000);
        double d = v;
        memcpy(buf + k * width, dbl ? (void *)&d : (void *)&v, width);
    }
}

/* Sets up a collective on `size` ranks, with the data of this rank drawn
 * from *data. The shape must be the same on every rank. A reduction is
 * only asked for with a type that has operations. */
static inline void mc_setup(struct mc_coll *c, enum mc_kind kind,
                            int count, int root, const struct mc_type *t,
                            int op, bool in_place, int size, uint64_t *data)
{
    const size_t p = (size_t)size, n = (size_t)count * t->size;

    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->count = count;
    c->root = root;
    c->t = t;
    c->op = op;
    c->in_place = in_place && kind == MC_ALLREDUCE;
    switch (kind) {
    case MC_BARRIER: break;
    case MC_BCAST: c->rbytes = n; break;
    case MC_REDUCE:
    case MC_ALLREDUCE: c->sbytes = n; c->rbytes = n; break;
    case MC_GATHER: c->sbytes = n; c->rbytes = p * n; break;
    case MC_SCATTER: c->sbytes = p * n; c->rbytes = n; break;
    case MC_ALLGATHER: c->sbytes = n; c->rbytes = p * n; break;
    case MC_ALLTOALL: c->sbytes = p * n; c->rbytes = p * n; break;
    default: break;
    }
    c->s = mc_alloc(c->sbytes);
    c->r = mc_alloc(c->rbytes);
    c->r_ref = mc_alloc(c->rbytes);
    mc_fill(c->s, c->sbytes, t->dbl, data);
    mc_fill(c->r, c->rbytes, t->dbl, data); /* bcast and in-place input */
    memcpy(c->r_ref, c->r, c->rbytes);
    c->req = NBCX_REQUEST_NULL;
}

static inline void mc_free(struct mc_coll *c)
{
    free(c->s);
    free(c->r);
    free(c->r_ref);
}

/* Starts c (nbcx_i<coll>), or with persistent makes its persistent
 * request (nbcx_<coll>_init, not started yet). */
static inline int mc_call(struct mc_coll *c, nbcx_comm comm, bool persistent)
{
    const void *s = c->in_place ? NBCX_IN_PLACE : c->s;
    nbcx_datatype t = c->t->nb;
    nbcx_op op = c->t->nops ? c->t->nb_op[c->op] : NBCX_OP_NULL;
    nbcx_request *req = &c->req;
    int n = c->count;
    const bool p = persistent;
    switch (c->kind) {
    case MC_BARRIER:
        return p ? nbcx_barrier_init(comm, req) : nbcx_ibarrier(comm, req);
    case MC_BCAST:
        return p ? nbcx_bcast_init(c->r, n, t, c->root, comm, req)
                 : nbcx_ibcast(c->r, n, t, c->root, comm, req);
    case MC_REDUCE:
        return p ? nbcx_reduce_init(s, c->r, n, t, op, c->root, comm, req)
                 : nbcx_ireduce(s, c->r, n, t, op, c->root, comm, req);
    case MC_ALLREDUCE:
        return p ? nbcx_allreduce_init(s, c->r, n, t, op, comm, req)
                 : nbcx_iallreduce(s, c->r, n, t, op, comm, req);
    case MC_GATHER:
        return p ? nbcx_gather_init(s, n, t, c->r, n, t, c->root, comm, req)
                 : nbcx_igather(s, n, t, c->r, n, t, c->root, comm, req);
    case MC_SCATTER:
        return p ? nbcx_scatter_init(s, n, t, c->r, n, t, c->root, comm, req)
                 : nbcx_iscatter(s, n, t, c->r, n, t, c->root, comm, req);
    case MC_ALLGATHER:
        return p ? nbcx_allgather_init(s, n, t, c->r, n, t, comm, req)
                 : nbcx_iallgather(s, n, t, c->r, n, t, comm, req);
    case MC_ALLTOALL:
        return p ? nbcx_alltoall_init(s, n, t, c->r, n, t, comm, req)
                 : nbcx_ialltoall(s, n, t, c->r, n, t, comm, req);
    default: return NBCX_ERR_INTERN;
    }
}

static inline int mc_start(struct mc_coll *c, nbcx_comm comm)
{
    return mc_call(c, comm, false);
}

static inline int mc_reference(struct mc_coll *c, MPI_Comm w)
{
    void *s = c->in_place ? MPI_IN_PLACE : (void *)c->s;
    MPI_Datatype t = c->t->mpi;
    MPI_Op op = c->t->nops ? c->t->mpi_op[c->op] : MPI_OP_NULL;
    int n = c->count;
    switch (c->kind) {
    case MC_BARRIER: return MPI_Barrier(w);
    case MC_BCAST: return MPI_Bcast(c->r_ref, n, t, c->root, w);
    case MC_REDUCE: return MPI_Reduce(s, c->r_ref, n, t, op, c->root, w);
    case MC_ALLREDUCE: return MPI_Allreduce(s, c->r_ref, n, t, op, w);
    case MC_GATHER: return MPI_Gather(s, n, t, c->r_ref, n, t, c->root, w);
    case MC_SCATTER:
        return MPI_Scatter(s, n, t, c->r_ref, n, t, c->root, w);
    case MC_ALLGATHER: return MPI_Allgather(s, n, t, c->r_ref, n, t, w);
    case MC_ALLTOALL: return MPI_Alltoall(s, n, t, c->r_ref, n, t, w);
    default: return MPI_ERR_OTHER;
    }
}

/* Runs the blocking MPI collective on w (after nbcx's has completed) and
 * compares; the receive buffer matters everywhere except on the non-roots
 * of reduce and gather. `what` and i name the collective in a failure.
 * A barrier has nothing to compare (its meaning is test_collectives'
 * business): no reference, which takes time with a busy-polling MPI. */
static inline void mc_check(struct mc_coll *c, MPI_Comm w, int me,
                            const char *what, int i)
{
    bool significant = !((c->kind == MC_REDUCE || c->kind == MC_GATHER) &&
                         me != c->root);
    if (c->kind == MC_BARRIER) /* no result; all ranks skip it alike */
        return;
    if (mc_reference(c, w) != MPI_SUCCESS)
        mt_fail("%s: reference MPI_%s failed", what, mc_kind_name[c->kind]);
    if (!significant || memcmp(c->r, c->r_ref, c->rbytes) == 0)
        return;
    for (size_t k = 0; k < c->rbytes; k++)
        if (c->r[k] != c->r_ref[k]) {
            mt_fail("%s: collective #%d (%s count=%d %s %s root=%d "
                    "in_place=%d): byte %zu of %zu is 0x%02x, MPI says "
                    "0x%02x", what, i, mc_kind_name[c->kind], c->count,
                    c->t->name, c->t->nops ? c->t->op_name[c->op] : "-",
                    c->root, (int)c->in_place, k, c->rbytes, c->r[k],
                    c->r_ref[k]);
            return;
        }
}

#endif /* NBCX_MPICOLL_H */
