/*
 * test_collectives.c - every collective of nbcx, with every algorithm,
 * against the MPI library's own blocking collective.
 *
 * For each collective, each algorithm that nbcx_algorithm_names() lists
 * (plus "auto") is forced with nbcx_algorithm_set(), and a matrix of cases
 * is run:
 *   counts     0, 1, 7 (odd, with tiny fragments), 333 (odd, many 256-byte
 *              fragments), 20000 ints (several default 64 KiB fragments);
 *              0 and 1 run with a few basic combinations of types and
 *              operations, 20000 with ints only, 7 and 333 with all;
 *   datatypes  int, double, double_int (padded), contiguous(2 and 4 ints),
 *              and a derived non-contiguous vector(4,1,2,int) resized to 40
 *              bytes, i.e. with gaps inside and after each element;
 *   type pairs for the data-movement collectives, different send and
 *              receive types with matching signatures (2n ints <-> n
 *              contig(2,int), n vectors -> 4n ints, MPI_DOUBLE_INT -> the
 *              same typemap built with MPI_Type_create_struct); bcast uses
 *              the send type at the root and the receive type elsewhere;
 *   operations sum, max, bxor, minloc, maxloc, a NON-commutative user
 *              operation (2x2 matrix product mod a prime, made with
 *              MPI_Op_create) and a commutative user operation (sum mod a
 *              prime, made with nbcx_op_create);
 *   roots      0, size-1, size/2;
 *   in place   wherever MPI allows MPI_IN_PLACE.
 *
 * Every rank generates its inputs from (case number, rank), runs the nbcx
 * collective on one copy and the blocking MPI collective on another, and
 * compares the results byte for byte over the bytes the datatype covers.
 * The gaps of the receive buffers are filled with a sentinel and must come
 * back untouched (from nbcx and from MPI), and send buffers must not
 * change. Buffers that MPI declares insignificant (the receive buffer of
 * reduce and gather on non-roots, the send buffer of scatter on non-roots)
 * are passed as NULL, and so are the buffers of zero-count cases.
 *
 * Barrier is checked for its meaning: every rank publishes a flag in a
 * shared-memory window before entering, and after leaving must see the
 * flags of all ranks.
 *
 * Usage: test_collectives [collective-name|all [algorithm]]   (default:
 * every collective, every algorithm; with an algorithm, e.g. knomial3,
 * only that one, on the collectives that have it)
 */
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "mpivec.h"

/* ------------------------------------------------------------------ */
/* Collectives                                                         */
/* ------------------------------------------------------------------ */

enum coll { C_BARRIER, C_BCAST, C_REDUCE, C_ALLREDUCE, C_GATHER, C_SCATTER,
            C_ALLGATHER, C_ALLTOALL, NCOLL };
static const char *const coll_name[NCOLL] = {
    "barrier", "bcast", "reduce", "allreduce", "gather", "scatter",
    "allgather", "alltoall"};

static bool rooted(enum coll c)
{
    return c == C_BCAST || c == C_REDUCE || c == C_GATHER || c == C_SCATTER;
}

static bool reduces(enum coll c) { return c == C_REDUCE || c == C_ALLREDUCE; }

/* ------------------------------------------------------------------ */
/* Datatypes under test                                                */
/* ------------------------------------------------------------------ */

/* Kinds, slots, struct mv_type, MV_SENTINEL (the gaps of receive
 * buffers) and MV_VEC_EXTENT (vector(4,1,2,int) spans 28 bytes; resized
 * to 40): mpivec.h. */

enum { T_INT, T_DOUBLE, T_DINT, T_DSTRUCT, T_PAIR, T_MAT, T_VEC, NTYPES };
static struct mv_type types[NTYPES] = {
    [T_INT] = MV_TYPE_INT,
    [T_DOUBLE] = MV_TYPE_DOUBLE,
    [T_DINT] = MV_TYPE_DINT,
    /* the typemap of MPI_DOUBLE_INT, built by hand (a derived type) */
    [T_DSTRUCT] = {"struct{double,int}", 2,
                   {{0, MV_K_DOUBLE},
                    {offsetof(nbcx_double_int, idx), MV_K_INT}},
                   sizeof(nbcx_double_int), 0, 0, {0}},
    [T_PAIR] = MV_TYPE_PAIR,
    [T_MAT] = MV_TYPE_MAT,
    [T_VEC] = MV_TYPE_VEC,
};

static void types_init(void)
{
    MPI_Datatype dstruct;
    const int blocks[2] = {1, 1};
    const MPI_Aint displs[2] = {0, offsetof(nbcx_double_int, idx)};
    const MPI_Datatype members[2] = {MPI_DOUBLE, MPI_INT};

    mv_types_mpi(&types[T_INT], &types[T_DOUBLE], &types[T_DINT],
                 &types[T_PAIR], &types[T_MAT], &types[T_VEC]);
    MPI_Type_create_struct(2, blocks, displs, members, &dstruct);
    MPI_Type_create_resized(dstruct, 0, sizeof(nbcx_double_int),
                            &types[T_DSTRUCT].mpi);
    MPI_Type_free(&dstruct);

    for (int i = 0; i < NTYPES; i++) {
        struct mv_type *t = &types[i];
        int mpi_size;
        MPI_Aint lb, extent;
        size_t nb_size;
        ptrdiff_t nb_extent;

        /* The layout tables above must describe the MPI types
         * (mv_type_make checks), and nbcx must see the same size and
         * extent. */
        mv_type_make(t, i >= T_DSTRUCT);
        MPI_Type_size(t->mpi, &mpi_size);
        MPI_Type_get_extent(t->mpi, &lb, &extent);
        MT_OK(nbcx_datatype_size(t->nb, &nb_size));
        MT_OK(nbcx_datatype_extent(t->nb, &nb_extent));
        if (nb_size != (size_t)mpi_size || nb_extent != (ptrdiff_t)extent)
            mt_fail("type %s: nbcx size %zu extent %td, MPI %d, %ld",
                    t->name, nb_size, nb_extent, mpi_size, (long)extent);
    }
}

static void types_free(void)
{
    for (int i = 0; i < NTYPES; i++) {
        MT_OK(nbcx_datatype_free(&types[i].nb));
        if (types[i].nb != NBCX_DATATYPE_NULL)
            mt_fail("nbcx_datatype_free did not reset the %s handle",
                    types[i].name);
        if (i >= T_DSTRUCT)
            MPI_Type_free(&types[i].mpi);
    }
}

/* ------------------------------------------------------------------ */
/* Operations under test                                               */
/* ------------------------------------------------------------------ */

/* The user operations (addmod, commutative; matmul, NOT commutative:
 * the product of the ranks' 2x2 matrices mod MV_PRIME depends on their
 * order), made with MPI_Op_create or nbcx_op_create: mpivec.h. */

enum { O_NONE, O_SUM, O_MAX, O_BXOR, O_MINLOC, O_MAXLOC, O_MATMUL,
       O_ADDMOD, NOPS };
static struct mv_op ops[NOPS] = {
    [O_NONE] = {"-", MPI_OP_NULL, NBCX_OP_NULL},
    [O_SUM] = {"sum", MPI_OP_NULL, NBCX_OP_NULL},
    [O_MAX] = {"max", MPI_OP_NULL, NBCX_OP_NULL},
    [O_BXOR] = {"bxor", MPI_OP_NULL, NBCX_OP_NULL},
    [O_MINLOC] = {"minloc", MPI_OP_NULL, NBCX_OP_NULL},
    [O_MAXLOC] = {"maxloc", MPI_OP_NULL, NBCX_OP_NULL},
    [O_MATMUL] = {"user-matmul(noncommutative,MPI_Op_create)", MPI_OP_NULL,
                  NBCX_OP_NULL},
    [O_ADDMOD] = {"user-addmod(commutative,nbcx_op_create)", MPI_OP_NULL,
                  NBCX_OP_NULL},
};

static void ops_init(void)
{
    ops[O_SUM].mpi = MPI_SUM;
    ops[O_MAX].mpi = MPI_MAX;
    ops[O_BXOR].mpi = MPI_BXOR;
    ops[O_MINLOC].mpi = MPI_MINLOC;
    ops[O_MAXLOC].mpi = MPI_MAXLOC;
    MPI_Op_create(mv_mpi_matmul, 0, &ops[O_MATMUL].mpi);
    MPI_Op_create(mv_mpi_addmod, 1, &ops[O_ADDMOD].mpi);
    for (int i = O_SUM; i <= O_MATMUL; i++)
        MT_OK(nbcx_op_from_mpi(ops[i].mpi, &ops[i].nb));
    MT_OK(nbcx_op_create(mv_nb_addmod, 1, NULL, &ops[O_ADDMOD].nb));
}

static void ops_free(void)
{
    for (int i = O_SUM; i < NOPS; i++)
        MT_OK(nbcx_op_free(&ops[i].nb));
    MPI_Op_free(&ops[O_MATMUL].mpi);
    MPI_Op_free(&ops[O_ADDMOD].mpi);
}

/* ------------------------------------------------------------------ */
/* The case matrix                                                     */
/* ------------------------------------------------------------------ */

/* Input values are drawn by enum mv_gen (mpivec.h): any bits (data
 * movement, max, bxor), small integers (sums stay exact, in doubles
 * too), residues mod MV_PRIME (user operations), or few distinct values
 * with random indices (minloc/maxloc then meet ties, which MPI resolves
 * by the smaller index). */

/* Send type/count multiplier, receive type/count multiplier, operation;
 * "basic" combinations also run with the tiny counts (0 and 1). The first
 * of each list is the plain int case. */
struct combo {
    int stype, smul, rtype, rmul, op;
    enum mv_gen gen;
    bool basic;
};

static const struct combo reduce_combos[] = {
    {T_INT, 1, T_INT, 1, O_SUM, MV_G_SMALL, true},
    {T_INT, 1, T_INT, 1, O_MAX, MV_G_BITS, false},
    {T_INT, 1, T_INT, 1, O_BXOR, MV_G_BITS, false},
    {T_INT, 1, T_INT, 1, O_ADDMOD, MV_G_MOD, false},
    {T_DOUBLE, 1, T_DOUBLE, 1, O_SUM, MV_G_SMALL, false},
    {T_DOUBLE, 1, T_DOUBLE, 1, O_MAX, MV_G_SMALL, false},
    {T_DINT, 1, T_DINT, 1, O_MINLOC, MV_G_LOC, true},
    {T_DINT, 1, T_DINT, 1, O_MAXLOC, MV_G_LOC, false},
    {T_MAT, 1, T_MAT, 1, O_MATMUL, MV_G_MOD, false},
    {T_VEC, 1, T_VEC, 1, O_MATMUL, MV_G_MOD, true},
    {T_VEC, 1, T_VEC, 1, O_ADDMOD, MV_G_MOD, false},
};

static const struct combo move_combos[] = {
    {T_INT, 1, T_INT, 1, O_NONE, MV_G_BITS, true},
    {T_DINT, 1, T_DINT, 1, O_NONE, MV_G_BITS, false},
    {T_VEC, 1, T_VEC, 1, O_NONE, MV_G_BITS, true},
    {T_INT, 2, T_PAIR, 1, O_NONE, MV_G_BITS, true},  /* 2n ints -> n pairs   */
    {T_PAIR, 1, T_INT, 2, O_NONE, MV_G_BITS, false}, /* n pairs -> 2n ints   */
    {T_VEC, 1, T_INT, 4, O_NONE, MV_G_BITS, false},  /* n vectors -> 4n ints */
    {T_DINT, 1, T_DSTRUCT, 1, O_NONE, MV_G_BITS, false}, /* same typemap */
};

#define NELEMS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Counts, with the fragment size in force and the combinations they run
 * with (to keep the matrix small enough for 7 ranks on 2 cores). */
enum which { ALL_COMBOS, BASIC_COMBOS, FIRST_COMBO };
struct count_case { int count; size_t segsize; enum which which; };
static const struct count_case count_cases[] = {
    {0, 65536, BASIC_COMBOS},
    {1, 65536, BASIC_COMBOS},
    {7, 16, ALL_COMBOS},     /* odd; 16-byte fragments: several per message */
    {333, 256, ALL_COMBOS},  /* odd; many 256-byte fragments, a short last */
    {20000, 65536, FIRST_COMBO}, /* 80 KB of ints: default-size fragments */
};

struct tcase {
    enum coll coll;
    const char *alg;
    int count;
    size_t segsize;
    const struct combo *cb;
    int root;
    bool in_place;
    long id; /* case number: seeds the inputs */
};

static void describe(const struct tcase *c, char *buf, size_t len)
{
    const struct combo *cb = c->cb;
    snprintf(buf, len,
             "%s alg=%s count=%d segsize=%zu send=%s*%d recv=%s*%d op=%s "
             "root=%d in_place=%d (case %ld, %d ranks)",
             coll_name[c->coll], c->alg, c->count, c->segsize,
             types[cb->stype].name, cb->smul, types[cb->rtype].name,
             cb->rmul, ops[cb->op].name, c->root, (int)c->in_place, c->id,
             mt_size);
}

/* ------------------------------------------------------------------ */
/* Buffers                                                             */
/* ------------------------------------------------------------------ */

/* A typed buffer of n elements (n * extent bytes; NULL when empty). */
struct tbuf {
    const struct mv_type *t;
    int n;
    size_t bytes;
    unsigned char *init; /* the initial contents */
    unsigned char *nb;   /* nbcx's copy  */
    unsigned char *ref;  /* MPI's copy   */
};

/* Fills the data bytes with values drawn by g and the gaps with `gap`
 * (or random bytes if gap < 0), then makes the two working copies. */
static void tbuf_init(struct tbuf *b, const struct mv_type *t, int n,
                      enum mv_gen g, int gap, uint64_t seed)
{
    uint64_t rng = seed;
    b->t = t;
    b->n = n;
    b->bytes = (size_t)n * (size_t)t->extent;
    b->init = mv_xmalloc_or_null(b->bytes);
    b->nb = mv_xmalloc_or_null(b->bytes);
    b->ref = mv_xmalloc_or_null(b->bytes);
    for (size_t i = 0; i < b->bytes; i++)
        b->init[i] = gap < 0 ? (unsigned char)mt_next(&rng)
                             : (unsigned char)gap;
    for (int e = 0; e < n; e++)
        for (int s = 0; s < t->nslots; s++)
            mv_value(b->init + (size_t)e * t->extent + t->slot[s].off,
                      t->slot[s].kind, g, s == 1, &rng);
    if (b->bytes) {
        memcpy(b->nb, b->init, b->bytes);
        memcpy(b->ref, b->init, b->bytes);
    }
}

static void tbuf_free(struct tbuf *b)
{
    free(b->init);
    free(b->nb);
    free(b->ref);
}

static void format_elem(char *out, size_t len, const struct mv_type *t,
                        const unsigned char *e)
{
    size_t n = 0;
    out[0] = '\0';
    for (int s = 0; s < t->nslots && n < len; s++) {
        if (t->slot[s].kind == MV_K_INT) {
            int v;
            memcpy(&v, e + t->slot[s].off, sizeof v);
            n += (size_t)snprintf(out + n, len - n, "%s%d", s ? "," : "", v);
        } else {
            double v;
            memcpy(&v, e + t->slot[s].off, sizeof v);
            n += (size_t)snprintf(out + n, len - n, "%s%g", s ? "," : "", v);
        }
    }
}

/* Compares nbcx's result with MPI's over the data bytes, and checks that
 * both left the gaps (the sentinel) alone. Returns true if all is well. */
static bool check_result(const struct tcase *c, const struct tbuf *b)
{
    const struct mv_type *t = b->t;
    long bad_elems = 0, first = -1, gap_nb = -1, gap_ref = -1;
    char what[300];

    for (int e = 0; e < b->n; e++) {
        size_t base = (size_t)e * (size_t)t->extent;
        bool bad = false;
        for (long k = 0; k < t->extent; k++) {
            size_t i = base + (size_t)k;
            if (t->mask[k]) {
                bad |= b->nb[i] != b->ref[i];
            } else {
                if (b->nb[i] != MV_SENTINEL && gap_nb < 0)
                    gap_nb = (long)i;
                if (b->ref[i] != MV_SENTINEL && gap_ref < 0)
                    gap_ref = (long)i;
            }
        }
        if (bad && bad_elems++ == 0)
            first = e;
    }
    if (!bad_elems && gap_nb < 0 && gap_ref < 0)
        return true;

    describe(c, what, sizeof what);
    if (bad_elems) {
        char got[100], want[100];
        size_t off = (size_t)first * (size_t)t->extent;
        format_elem(got, sizeof got, t, b->nb + off);
        format_elem(want, sizeof want, t, b->ref + off);
        mt_fail("%s: %ld of %d elements differ from MPI; first is element "
                "%ld: nbcx {%s}, MPI {%s}", what, bad_elems, b->n, first,
                got, want);
    }
    if (gap_nb >= 0)
        mt_fail("%s: nbcx wrote into a gap of the receive buffer (byte %ld "
                "= 0x%02x)", what, gap_nb, b->nb[gap_nb]);
    if (gap_ref >= 0)
        mt_fail("%s: the MPI library wrote into a gap of the receive buffer "
                "(byte %ld = 0x%02x)", what, gap_ref, b->ref[gap_ref]);
    return false;
}

/* ------------------------------------------------------------------ */
/* Running one case                                                    */
/* ------------------------------------------------------------------ */

/* The arguments of one call, in MPI's terms. */
struct call {
    const void *s;
    void *r;
    int scount, rcount;
    const struct mv_type *st, *rt;
    const struct mv_op *op;
    int root;
};

static int start_nbcx(enum coll coll, const struct call *a, nbcx_comm comm,
                      nbcx_request *req)
{
    nbcx_datatype st = a->st->nb, rt = a->rt->nb;
    switch (coll) {
    case C_BARRIER: return nbcx_ibarrier(comm, req);
    case C_BCAST: return nbcx_ibcast(a->r, a->rcount, rt, a->root, comm, req);
    case C_REDUCE:
        return nbcx_ireduce(a->s, a->r, a->rcount, rt, a->op->nb, a->root,
                            comm, req);
    case C_ALLREDUCE:
        return nbcx_iallreduce(a->s, a->r, a->rcount, rt, a->op->nb, comm,
                               req);
    case C_GATHER:
        return nbcx_igather(a->s, a->scount, st, a->r, a->rcount, rt,
                            a->root, comm, req);
    case C_SCATTER:
        return nbcx_iscatter(a->s, a->scount, st, a->r, a->rcount, rt,
                             a->root, comm, req);
    case C_ALLGATHER:
        return nbcx_iallgather(a->s, a->scount, st, a->r, a->rcount, rt,
                               comm, req);
    case C_ALLTOALL:
        return nbcx_ialltoall(a->s, a->scount, st, a->r, a->rcount, rt,
                              comm, req);
    default: return NBCX_ERR_INTERN;
    }
}

/* MPICH 4.0.2's MPI_Gather (binomial algorithm) fails with
 * MPI_ERR_TRUNCATE for struct types with a gap, such as MPI_DOUBLE_INT,
 * from a few KB on 5 or more ranks; its MPI_Gatherv is correct. With
 * MPICH the reference gather is therefore MPI_Gatherv with equal blocks,
 * which MPI defines to be the same operation. */
static bool reference_gatherv;

static int gatherv(const struct call *a, void *s, void *r)
{
    int *counts = mv_xmalloc_or_null(sizeof(int) * (size_t)mt_size);
    int *displs = mv_xmalloc_or_null(sizeof(int) * (size_t)mt_size);
    int rc;
    for (int i = 0; i < mt_size; i++) {
        counts[i] = a->rcount;
        displs[i] = i * a->rcount;
    }
    rc = MPI_Gatherv(s, a->scount, a->st->mpi, r, counts, displs,
                     a->rt->mpi, a->root, MPI_COMM_WORLD);
    free(counts);
    free(displs);
    return rc;
}

static int run_mpi(enum coll coll, const struct call *a)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Datatype st = a->st->mpi, rt = a->rt->mpi;
    void *s = a->s == NBCX_IN_PLACE ? MPI_IN_PLACE : (void *)(uintptr_t)a->s;
    void *r = a->r == NBCX_IN_PLACE ? MPI_IN_PLACE : a->r;
    switch (coll) {
    case C_BARRIER: return MPI_Barrier(w);
    case C_BCAST: return MPI_Bcast(r, a->rcount, rt, a->root, w);
    case C_REDUCE:
        return MPI_Reduce(s, r, a->rcount, rt, a->op->mpi, a->root, w);
    case C_ALLREDUCE:
        return MPI_Allreduce(s, r, a->rcount, rt, a->op->mpi, w);
    case C_GATHER:
        if (reference_gatherv)
            return gatherv(a, s, r);
        return MPI_Gather(s, a->scount, st, r, a->rcount, rt, a->root, w);
    case C_SCATTER:
        return MPI_Scatter(s, a->scount, st, r, a->rcount, rt, a->root, w);
    case C_ALLGATHER:
        return MPI_Allgather(s, a->scount, st, r, a->rcount, rt, w);
    case C_ALLTOALL:
        return MPI_Alltoall(s, a->scount, st, r, a->rcount, rt, w);
    default: return MPI_ERR_OTHER;
    }
}

/* Time spent in nbcx and in the reference collectives (rank 0 reports). */
static double time_nbcx, time_mpi;

static void run_case(const struct tcase *c, nbcx_comm comm)
{
    const struct combo *cb = c->cb;
    const struct mv_type *st = &types[cb->stype], *rt = &types[cb->rtype];
    const int p = mt_size, root = c->root;
    const bool at_root = mt_rank == root, ip = c->in_place;
    const int sc = c->count * cb->smul, rc = c->count * cb->rmul;
    int sn = 0, rn = 0;              /* elements in the send/recv buffers */
    bool s_in_place = false, r_in_place = false;
    struct call a = {NULL, NULL, sc, rc, st, rt, &ops[cb->op], root};
    struct tbuf S, R;
    nbcx_request req = NBCX_REQUEST_NULL;
    char what[300];
    int rc_nb, rc_mpi;
    double t;

    /* Which buffers this rank has, following MPI's rules. */
    switch (c->coll) {
    case C_BCAST: /* root sends with the send type, the others receive */
        rn = at_root ? sc : rc;
        a.rt = rt = at_root ? st : rt;
        a.rcount = rn;
        break;
    case C_REDUCE:
        if (at_root && ip) s_in_place = true; else sn = c->count;
        if (at_root) rn = c->count;
        break;
    case C_ALLREDUCE:
        if (ip) s_in_place = true; else sn = c->count;
        rn = c->count;
        break;
    case C_GATHER:
        if (at_root && ip) s_in_place = true; else sn = sc;
        if (at_root) rn = p * rc;
        break;
    case C_SCATTER:
        if (at_root) sn = p * sc;
        if (at_root && ip) r_in_place = true; else rn = rc;
        break;
    case C_ALLGATHER:
        if (ip) s_in_place = true; else sn = sc;
        rn = p * rc;
        break;
    case C_ALLTOALL:
        if (ip) s_in_place = true; else sn = p * sc;
        rn = p * rc;
        break;
    default: break;
    }

    /* Inputs from (case, rank); receive-buffer gaps hold the sentinel. */
    tbuf_init(&S, st, sn, cb->gen, -1, mt_seed((uint64_t)c->id, mt_rank, 1));
    tbuf_init(&R, rt, rn, cb->gen, MV_SENTINEL,
              mt_seed((uint64_t)c->id, mt_rank, 2));

    describe(c, what, sizeof what);
    mt_watch("%s", what);

    a.s = s_in_place ? NBCX_IN_PLACE : S.nb;
    a.r = r_in_place ? NBCX_IN_PLACE : R.nb;
    t = MPI_Wtime();
    rc_nb = start_nbcx(c->coll, &a, comm, &req);
    /* A failure stops the job: the other ranks may wait forever. */
    mt_nbcx_wait(what, rc_nb, &req);
    time_nbcx += MPI_Wtime() - t;

    a.s = s_in_place ? NBCX_IN_PLACE : S.ref;
    a.r = r_in_place ? NBCX_IN_PLACE : R.ref;
    /* MPICH 4.0-4.1.1 crashes in MPI_Reduce with MPI_IN_PLACE at a
     * non-zero root (pmodels/mpich#6540): give the reference the same
     * input out of place, which MPI defines to give the same result. */
    if (c->coll == C_REDUCE && s_in_place)
        a.s = R.init;
    t = MPI_Wtime();
    rc_mpi = run_mpi(c->coll, &a);
    time_mpi += MPI_Wtime() - t;
    mt_mpi_check(what, rc_mpi);
    mt_unwatch();

    mt_check_sendbuf(what, S.nb, S.init, S.bytes);
    if (rc_nb == NBCX_SUCCESS && rc_mpi == MPI_SUCCESS)
        check_result(c, &R);
    tbuf_free(&S);
    tbuf_free(&R);
}

/* ------------------------------------------------------------------ */
/* Barrier: no rank may leave before every rank has entered            */
/* ------------------------------------------------------------------ */

static MPI_Win flag_win = MPI_WIN_NULL;
static volatile int **flags; /* flags[i] = rank i's flag, shared memory */

static void barrier_init(void)
{
    MPI_Comm node;
    int node_size;
    volatile int *mine;

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                        MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    if (node_size == mt_size) {
        MT_MPI(MPI_Win_allocate_shared(sizeof(int), sizeof(int),
                                       MPI_INFO_NULL, node, &mine,
                                       &flag_win));
        *mine = 0;
        flags = mv_xmalloc_or_null(sizeof *flags * (size_t)mt_size);
        for (int i = 0; i < mt_size; i++) {
            MPI_Aint sz;
            int du;
            MT_MPI(MPI_Win_shared_query(flag_win, i, &sz, &du,
                                        (void *)&flags[i]));
        }
        MPI_Win_lock_all(MPI_MODE_NOCHECK, flag_win);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (mt_rank == 0) {
        printf("barrier: ranks on several nodes, meaning not checked\n");
    }
    MPI_Comm_free(&node);
}

static void barrier_free(void)
{
    if (flag_win == MPI_WIN_NULL)
        return;
    MPI_Win_unlock_all(flag_win);
    MPI_Win_free(&flag_win);
    free((void *)flags);
}

static void run_barrier(const char *alg, int round, nbcx_comm comm)
{
    static int epoch;
    nbcx_request req = NBCX_REQUEST_NULL;
    int rc;

    epoch++;
    mt_watch("barrier alg=%s round %d (%d ranks)", alg, round, mt_size);
    if (flag_win != MPI_WIN_NULL) {
        /* One rank (a different one each round) comes late. */
        if (epoch % mt_size == mt_rank) {
            struct timespec ts = {0, 3 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        *flags[mt_rank] = epoch;
        MPI_Win_sync(flag_win);
    }
    rc = nbcx_ibarrier(comm, &req);
    if (rc == NBCX_SUCCESS)
        rc = nbcx_wait(&req);
    if (rc != NBCX_SUCCESS)
        mt_fail("barrier alg=%s: nbcx returned %d (%s)", alg, rc,
                nbcx_error_string(rc));
    if (flag_win != MPI_WIN_NULL) {
        MPI_Win_sync(flag_win);
        for (int i = 0; i < mt_size; i++)
            if (*flags[i] < epoch)
                mt_fail("barrier alg=%s round %d: left the barrier before "
                        "rank %d entered it", alg, round, i);
    }
    mt_unwatch();
}

/* ------------------------------------------------------------------ */
/* Driver                                                              */
/* ------------------------------------------------------------------ */

/* The algorithms of coll (mt_algorithms): "slots" needs the inproc
 * transport (tests/inproc); on MPI it falls back to "auto", which runs
 * anyway. "knomial" runs in its own tests (argv[2], below: CI time), and
 * so does "hier" (on one node it is the flat choice, which "auto" runs;
 * its tests fake nodes with NBCX_NODE_RANKS). */
static const char *const skipped_algs[] = {"auto", "slots", "knomial", "hier",
                                           NULL};

/* argv[2]: the one algorithm to run (e.g. knomial3, a radix the table's
 * "knomial" does not run), on the collectives that have it; NULL: all. */
static const char *only_alg;

static long run_collective(enum coll coll, nbcx_comm comm, long *id)
{
    char names[MT_MAX_ALGS][40];
    int nalg = 0;
    if (!only_alg)
        nalg = mt_algorithms(coll_name[coll], names, skipped_algs);
    else if (nbcx_algorithm_set(coll_name[coll], only_alg) == NBCX_SUCCESS)
        snprintf(names[nalg++], sizeof names[0], "%s", only_alg);
    const struct combo *combos = reduces(coll) ? reduce_combos : move_combos;
    const int ncombos = reduces(coll) ? NELEMS(reduce_combos)
                                      : NELEMS(move_combos);
    const int p = mt_size;
    const int roots[3] = {0, p - 1, p / 2};
    const bool has_in_place = coll != C_BARRIER && coll != C_BCAST;
    long ncases = 0;

    for (int ia = 0; ia < nalg; ia++) {
        struct tcase c = {coll, names[ia], 0, 0, NULL, 0, false, 0};
        int rc = nbcx_algorithm_set(coll_name[coll], names[ia]);
        if (rc != NBCX_SUCCESS) {
            mt_fail("nbcx_algorithm_set(%s, %s) returned %d (%s)",
                    coll_name[coll], names[ia], rc, nbcx_error_string(rc));
            continue;
        }
        if (coll == C_BARRIER) {
            for (int round = 0; round < 3; round++, ncases++)
                run_barrier(names[ia], round, comm);
            continue;
        }
        for (int ic = 0; ic < NELEMS(count_cases); ic++) {
            c.count = count_cases[ic].count;
            c.segsize = count_cases[ic].segsize;
            MT_OK(nbcx_segsize_set(c.segsize));
            for (int ib = 0; ib < ncombos; ib++) {
                if ((count_cases[ic].which == FIRST_COMBO && ib > 0) ||
                    (count_cases[ic].which == BASIC_COMBOS &&
                     !combos[ib].basic))
                    continue;
                c.cb = &combos[ib];
                for (int ir = 0; ir < (rooted(coll) ? 3 : 1); ir++) {
                    /* skip roots already done (small sizes) */
                    if ((ir == 1 && roots[1] == roots[0]) ||
                        (ir == 2 && (roots[2] == roots[0] ||
                                     roots[2] == roots[1])))
                        continue;
                    c.root = roots[ir];
                    for (int ip = 0; ip < 2; ip++) {
                        /* in place only where MPI allows it, and with
                         * one type for both sides */
                        if (ip && (!has_in_place || c.cb->stype != c.cb->rtype
                                   || c.cb->smul != c.cb->rmul))
                            continue;
                        c.in_place = ip;
                        c.id = (*id)++;
                        run_case(&c, comm);
                        ncases++;
                    }
                }
            }
        }
    }
    mt_restore_defaults(coll_name[coll]);
    return ncases;
}

int main(int argc, char **argv)
{
    nbcx_comm comm = NBCX_COMM_NULL;
    double t0;
    long id = 0;

    t0 = mt_begin(&argc, &argv);
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
    types_init();
    ops_init();
    barrier_init();
    reference_gatherv = mt_is_mpich();
    only_alg = argc > 2 ? argv[2] : NULL;

    for (int coll = 0; coll < NCOLL; coll++) {
        double t = MPI_Wtime();
        long n;
        if (argc > 1 && strcmp(argv[1], "all") != 0 &&
            strcmp(argv[1], coll_name[coll]) != 0)
            continue;
        time_nbcx = time_mpi = 0;
        n = run_collective((enum coll)coll, comm, &id);
        if (mt_rank == 0)
            printf("  %-10s %5ld cases %7.2f s (in nbcx %.2f s, in MPI "
                   "%.2f s)\n", coll_name[coll], n, MPI_Wtime() - t,
                   time_nbcx, time_mpi);
    }

    if (mv_userop_errors)
        mt_fail("a user operation was called with a datatype of unexpected "
                "size/extent %d time(s)", mv_userop_errors);
    mt_watch("teardown");
    barrier_free();
    ops_free();
    types_free();
    MT_OK(nbcx_comm_free(&comm));
    if (comm != NBCX_COMM_NULL)
        mt_fail("nbcx_comm_free did not reset the handle");
    return mt_finish("test_collectives", t0);
}
