/*
 * mpivec.h - datatypes, operations and typed buffers shared by the MPI
 * tests (tests/mpi) of the vector, reduce-scatter, scan and neighbourhood
 * collectives (test_vcollectives.c, test_neighbor.c) and of the basic
 * ones (test_collectives.c: the type descriptors, user operations and
 * value generation, with tables of its own).
 *
 *   Datatypes, each seen by MPI (for the reference collective) and by
 *   nbcx (through nbcx_datatype_from_mpi): int, double, double_int (a
 *   padded pair), contiguous(2 and 4 ints), and vector(4,1,2,int) resized
 *   to 40 bytes (gaps inside and after every element). A mask tells the
 *   data bytes of an element from its gaps.
 *   Operations: sum, max, bxor, minloc, a NON-commutative user operation
 *   (2x2 matrix product mod a prime over 4 ints, made with MPI_Op_create)
 *   and a commutative one (sum mod a prime: MPI_Op_create for MPI,
 *   nbcx_op_create for nbcx, so both kinds of user operation are used).
 *   Typed buffers: an nbcx copy and an MPI copy of the same initial
 *   contents; receive buffers start with a sentinel in every byte, so
 *   bytes nobody may write (gaps, empty blocks, untouched blocks) are
 *   checked too.
 *
 * Values are small integers, so every operation is exact and the results
 * must match MPI's bit for bit.
 */
#ifndef NBCX_MPIVEC_H
#define NBCX_MPIVEC_H

#include <stdbool.h>
#include <stddef.h>

#include "mpitest.h"

_Static_assert(sizeof(int) == 4, "the test layouts assume 4-byte ints");

#define MV_VEC_EXTENT 40
#define MV_MAX_EXTENT 40
#define MV_SENTINEL 0xA5
#define MV_PRIME 1009

enum mv_kind { MV_K_INT, MV_K_DOUBLE };
struct mv_slot { int off; enum mv_kind kind; };

struct mv_type {
    const char *name;
    int nslots;
    struct mv_slot slot[4];
    MPI_Aint extent;
    MPI_Datatype mpi;
    nbcx_datatype nb;
    unsigned char mask[MV_MAX_EXTENT];
};

/* The types (their MPI handles are made by mv_types_mpi). */
#define MV_TYPE_INT {"int", 1, {{0, MV_K_INT}}, 4, 0, 0, {0}}
#define MV_TYPE_DOUBLE {"double", 1, {{0, MV_K_DOUBLE}}, 8, 0, 0, {0}}
#define MV_TYPE_DINT                                                       \
    {"double_int", 2,                                                      \
     {{0, MV_K_DOUBLE}, {offsetof(nbcx_double_int, idx), MV_K_INT}},       \
     sizeof(nbcx_double_int), 0, 0, {0}}
#define MV_TYPE_PAIR                                                       \
    {"contig(2,int)", 2, {{0, MV_K_INT}, {4, MV_K_INT}}, 8, 0, 0, {0}}
#define MV_TYPE_MAT                                                        \
    {"contig(4,int)", 4,                                                   \
     {{0, MV_K_INT}, {4, MV_K_INT}, {8, MV_K_INT}, {12, MV_K_INT}}, 16, 0, \
     0, {0}}
#define MV_TYPE_VEC                                                        \
    {"vector(4,1,2,int)", 4,                                               \
     {{0, MV_K_INT}, {8, MV_K_INT}, {16, MV_K_INT}, {24, MV_K_INT}},       \
     MV_VEC_EXTENT, 0, 0, {0}}

enum { MV_INT, MV_DOUBLE, MV_DINT, MV_PAIR, MV_MAT, MV_VEC, MV_NTYPES };
static struct mv_type mv_types[MV_NTYPES] = {
    [MV_INT] = MV_TYPE_INT,   [MV_DOUBLE] = MV_TYPE_DOUBLE,
    [MV_DINT] = MV_TYPE_DINT, [MV_PAIR] = MV_TYPE_PAIR,
    [MV_MAT] = MV_TYPE_MAT,   [MV_VEC] = MV_TYPE_VEC,
};

static inline size_t mv_slot_bytes(enum mv_kind k)
{
    return k == MV_K_INT ? sizeof(int) : sizeof(double);
}

/* Bytes of data in one element. */
static inline int mv_data_bytes(const struct mv_type *t)
{
    int n = 0;
    for (int s = 0; s < t->nslots; s++)
        n += (int)mv_slot_bytes(t->slot[s].kind);
    return n;
}

/* Completes t once t->mpi is made: commits it if it is derived, makes
 * the nbcx handle, fills the mask, and checks that the MPI type has the
 * size and extent the table says. */
static inline void mv_type_make(struct mv_type *t, bool derived)
{
    int size;
    MPI_Aint lb, extent;
    if (derived)
        MT_MPI(MPI_Type_commit(&t->mpi));
    MT_OK(nbcx_datatype_from_mpi(t->mpi, &t->nb));
    for (int s = 0; s < t->nslots; s++)
        memset(t->mask + t->slot[s].off, 1, mv_slot_bytes(t->slot[s].kind));
    MPI_Type_size(t->mpi, &size);
    MPI_Type_get_extent(t->mpi, &lb, &extent);
    if (size != mv_data_bytes(t) || extent != t->extent || lb != 0)
        mt_fail("type %s: MPI size %d extent %ld, expected %d, %ld",
                t->name, size, (long)extent, mv_data_bytes(t),
                (long)t->extent);
}

/* The MPI handles of the MV_TYPE_* types (the derived ones not yet
 * committed: mv_type_make). */
static inline void mv_types_mpi(struct mv_type *i, struct mv_type *d,
                                struct mv_type *dint, struct mv_type *pair,
                                struct mv_type *mat, struct mv_type *vec)
{
    MPI_Datatype v;
    i->mpi = MPI_INT;
    d->mpi = MPI_DOUBLE;
    dint->mpi = MPI_DOUBLE_INT;
    MPI_Type_contiguous(2, MPI_INT, &pair->mpi);
    MPI_Type_contiguous(4, MPI_INT, &mat->mpi);
    MPI_Type_vector(4, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, MV_VEC_EXTENT, &vec->mpi);
    MPI_Type_free(&v);
}

static inline void mv_types_init(void)
{
    struct mv_type *t = mv_types;
    mv_types_mpi(&t[MV_INT], &t[MV_DOUBLE], &t[MV_DINT], &t[MV_PAIR],
                 &t[MV_MAT], &t[MV_VEC]);
    for (int i = 0; i < MV_NTYPES; i++)
        mv_type_make(&mv_types[i], i >= MV_PAIR);
}

static inline void mv_types_free(void)
{
    for (int i = 0; i < MV_NTYPES; i++) {
        MT_OK(nbcx_datatype_free(&mv_types[i].nb));
        if (i >= MV_PAIR)
            MPI_Type_free(&mv_types[i].mpi);
    }
}

/* ---- operations ----------------------------------------------------- */

/* The offsets of the ints of an element from its size and extent (user
 * operations may receive a duplicate handle): contiguous ints or the
 * vector type. */
static inline int mv_int_layout(long size, long extent, int off[4])
{
    if (size == extent && size % 4 == 0 && size >= 4 && size <= 16) {
        for (int i = 0; i < size / 4; i++)
            off[i] = 4 * i;
        return (int)(size / 4);
    }
    if (size == 16 && extent == MV_VEC_EXTENT) {
        for (int i = 0; i < 4; i++)
            off[i] = 8 * i;
        return 4;
    }
    return 0;
}

static atomic_int mv_userop_errors;

#define MV_INT_AT(buf, i, extent, off)                                     \
    ((int *)(void *)((char *)(buf) + (i) * (extent) + (off)))

static inline void mv_addmod(const void *in, void *inout, int count, long size,
                      long extent)
{
    int off[4], n = mv_int_layout(size, extent, off);
    if (n == 0) {
        mv_userop_errors++;
        return;
    }
    for (long i = 0; i < count; i++)
        for (int j = 0; j < n; j++) {
            int *b = MV_INT_AT(inout, i, extent, off[j]);
            *b = (*MV_INT_AT(in, i, extent, off[j]) + *b) % MV_PRIME;
        }
}

/* inout = in x inout, 2x2 matrices mod MV_PRIME: NOT commutative. */
static inline void mv_matmul(const void *in, void *inout, int count, long size,
                      long extent)
{
    int off[4];
    if (mv_int_layout(size, extent, off) != 4) {
        mv_userop_errors++;
        return;
    }
    for (long i = 0; i < count; i++) {
        int a[4], b[4];
        for (int j = 0; j < 4; j++) {
            a[j] = *MV_INT_AT(in, i, extent, off[j]);
            b[j] = *MV_INT_AT(inout, i, extent, off[j]);
        }
        int r[4] = {(a[0] * b[0] + a[1] * b[2]) % MV_PRIME,
                    (a[0] * b[1] + a[1] * b[3]) % MV_PRIME,
                    (a[2] * b[0] + a[3] * b[2]) % MV_PRIME,
                    (a[2] * b[1] + a[3] * b[3]) % MV_PRIME};
        for (int j = 0; j < 4; j++)
            *MV_INT_AT(inout, i, extent, off[j]) = r[j];
    }
}

static inline void mv_geometry(MPI_Datatype t, long *size, long *extent)
{
    int s;
    MPI_Aint lb, e;
    MPI_Type_size(t, &s);
    MPI_Type_get_extent(t, &lb, &e);
    *size = s;
    *extent = (long)e;
}

static inline void mv_mpi_addmod(void *in, void *inout, int *len,
                                 MPI_Datatype *dt)
{
    long size, extent;
    mv_geometry(*dt, &size, &extent);
    mv_addmod(in, inout, *len, size, extent);
}

static inline void mv_mpi_matmul(void *in, void *inout, int *len,
                                 MPI_Datatype *dt)
{
    long size, extent;
    mv_geometry(*dt, &size, &extent);
    mv_matmul(in, inout, *len, size, extent);
}

static inline void mv_nb_addmod(const void *in, void *inout, int count,
                         nbcx_datatype type, void *ctx)
{
    size_t size = 0;
    ptrdiff_t extent = 0;
    (void)ctx;
    nbcx_datatype_size(type, &size);
    nbcx_datatype_extent(type, &extent);
    mv_addmod(in, inout, count, (long)size, (long)extent);
}

struct mv_op { const char *name; MPI_Op mpi; nbcx_op nb; };

enum { MV_SUM, MV_MAX, MV_BXOR, MV_MINLOC, MV_MATMUL, MV_ADDMOD, MV_NOPS };
static struct mv_op mv_ops[MV_NOPS] = {
    [MV_SUM] = {"sum", MPI_OP_NULL, NBCX_OP_NULL},
    [MV_MAX] = {"max", MPI_OP_NULL, NBCX_OP_NULL},
    [MV_BXOR] = {"bxor", MPI_OP_NULL, NBCX_OP_NULL},
    [MV_MINLOC] = {"minloc", MPI_OP_NULL, NBCX_OP_NULL},
    [MV_MATMUL] = {"user-matmul(noncommutative)", MPI_OP_NULL, NBCX_OP_NULL},
    [MV_ADDMOD] = {"user-addmod(commutative,nbcx_op_create)", MPI_OP_NULL,
                   NBCX_OP_NULL},
};

static inline void mv_ops_init(void)
{
    mv_ops[MV_SUM].mpi = MPI_SUM;
    mv_ops[MV_MAX].mpi = MPI_MAX;
    mv_ops[MV_BXOR].mpi = MPI_BXOR;
    mv_ops[MV_MINLOC].mpi = MPI_MINLOC;
    MPI_Op_create(mv_mpi_matmul, 0, &mv_ops[MV_MATMUL].mpi);
    MPI_Op_create(mv_mpi_addmod, 1, &mv_ops[MV_ADDMOD].mpi);
    for (int i = MV_SUM; i <= MV_MATMUL; i++)
        MT_OK(nbcx_op_from_mpi(mv_ops[i].mpi, &mv_ops[i].nb));
    MT_OK(nbcx_op_create(mv_nb_addmod, 1, NULL, &mv_ops[MV_ADDMOD].nb));
}

static inline void mv_ops_free(void)
{
    for (int i = MV_SUM; i < MV_NOPS; i++)
        MT_OK(nbcx_op_free(&mv_ops[i].nb));
    MPI_Op_free(&mv_ops[MV_MATMUL].mpi);
    MPI_Op_free(&mv_ops[MV_ADDMOD].mpi);
}

/* ---- typed buffers -------------------------------------------------- */

/* How values are drawn: any bits (data movement, bxor), small integers
 * (sums and max stay exact), residues mod MV_PRIME (user operations),
 * few values with random indices (minloc meets ties). */
enum mv_gen { MV_G_BITS, MV_G_SMALL, MV_G_MOD, MV_G_LOC };

struct mv_buf {
    int t;                /* type index */
    size_t bytes;
    unsigned char *init, *nb, *ref;
};

static inline void *mv_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* The same, but NULL for 0 bytes. */
static inline void *mv_xmalloc_or_null(size_t n)
{
    return n ? mv_xmalloc(n) : NULL;
}

static inline void mv_value(unsigned char *at, enum mv_kind k, enum mv_gen g,
                     bool is_index, uint64_t *rng)
{
    if (k == MV_K_DOUBLE) {
        double d;
        uint64_t bits;
        switch (g) {
        case MV_G_BITS:
            bits = mt_next(rng);
            memcpy(at, &bits, 8);
            return;
        case MV_G_LOC: d = mt_range(rng, 0, 3); break;
        default: d = mt_range(rng, -64, 63) * 0.5; break;
        }
        memcpy(at, &d, sizeof d);
        return;
    }
    int i;
    switch (g) {
    case MV_G_BITS: i = (int)(uint32_t)mt_next(rng); break;
    case MV_G_SMALL: i = mt_range(rng, -64, 63); break;
    case MV_G_MOD: i = mt_range(rng, 0, MV_PRIME - 1); break;
    default: i = is_index ? mt_range(rng, 0, 999) : mt_range(rng, 0, 3);
    }
    memcpy(at, &i, sizeof i);
}

/* A buffer of `bytes` bytes: all MV_SENTINEL (or, for `fill`, random
 * gap bytes and the data of every whole element drawn by g). */
static inline void mv_buf_init(struct mv_buf *b, int t, size_t bytes,
                               bool fill, enum mv_gen g, uint64_t seed)
{
    const struct mv_type *ty = &mv_types[t];
    uint64_t rng = seed;
    b->t = t;
    b->bytes = bytes;
    b->init = mv_xmalloc(bytes);
    b->nb = mv_xmalloc(bytes);
    b->ref = mv_xmalloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        b->init[i] = fill ? (unsigned char)mt_next(&rng) : MV_SENTINEL;
    if (fill)
        for (size_t e = 0; e + (size_t)ty->extent <= bytes;
             e += (size_t)ty->extent)
            for (int s = 0; s < ty->nslots; s++)
                mv_value(b->init + e + ty->slot[s].off, ty->slot[s].kind, g,
                         s == 1, &rng);
    memcpy(b->nb, b->init, bytes);
    memcpy(b->ref, b->init, bytes);
}

/* Writes the data of n elements of type t (not necessarily the buffer's)
 * drawn by g at byte offset `at`, into both copies. */
static inline void mv_buf_fill(struct mv_buf *b, size_t at, int t, int n,
                        enum mv_gen g, uint64_t seed)
{
    const struct mv_type *ty = &mv_types[t];
    uint64_t rng = seed;
    for (int e = 0; e < n; e++)
        for (int s = 0; s < ty->nslots; s++)
            mv_value(b->init + at + (size_t)e * (size_t)ty->extent +
                         ty->slot[s].off,
                     ty->slot[s].kind, g, s == 1, &rng);
    memcpy(b->nb, b->init, b->bytes);
    memcpy(b->ref, b->init, b->bytes);
}

static inline void mv_buf_free(struct mv_buf *b)
{
    free(b->init);
    free(b->nb);
    free(b->ref);
}

/* nbcx's copy against MPI's: every byte must agree (data and gaps alike,
 * so a byte written by nbcx but not by MPI shows too). `what` names the
 * case. Returns true if equal. */
static inline bool mv_compare_n(const char *what, const char *name,
                         const struct mv_buf *b, size_t bytes)
{
    const struct mv_type *ty = &mv_types[b->t];
    for (size_t i = 0; i < bytes; i++) {
        if (b->nb[i] == b->ref[i])
            continue;
        size_t k = i % (size_t)ty->extent;
        mt_fail("%s: %s byte %zu of %zu (element %zu, %s byte) is 0x%02x, "
                "MPI says 0x%02x (initially 0x%02x)", what, name, i,
                b->bytes, i / (size_t)ty->extent,
                ty->mask[k] ? "data" : "gap", b->nb[i], b->ref[i],
                b->init[i]);
        return false;
    }
    return true;
}

static inline bool mv_compare(const char *what, const char *name,
                       const struct mv_buf *b)
{
    return mv_compare_n(what, name, b, b->bytes);
}

/* Displacements (in elements) for blocks of counts[i] elements: in
 * reverse order, with a gap of one element before each. Returns the
 * elements the buffer needs. */
static inline long mv_layout(int n, const int *counts, int *displs)
{
    long pos = 1;
    for (int i = n - 1; i >= 0; i--) {
        displs[i] = (int)pos;
        pos += counts[i] + 1;
    }
    return pos;
}

#endif /* NBCX_MPIVEC_H */
