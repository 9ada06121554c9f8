/* datatype.c - built-in datatypes, handle resolution, typed copies. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

#define BUILTIN(ID, NAME, CTYPE)                                              \
    [ID] = { .magic = NBCXI_TYPE_MAGIC, .id = ID, .name = NAME,               \
             .size = sizeof(CTYPE), .extent = sizeof(CTYPE), .true_lb = 0,    \
             .true_extent = sizeof(CTYPE), .contiguous = true }

/* A value/index pair holds sizeof(val) + sizeof(int) bytes of data, as
 * MPI_DOUBLE_INT and friends do; where the C struct has padding, between
 * the fields (MPI_SHORT_INT: 2 bytes after the short) or after them
 * (MPI_DOUBLE_INT), the type is not contiguous, and its padding bytes are
 * never read or written. */
#define PADDED(P) (sizeof(P) != sizeof(((P *)0)->val) + sizeof(int))
#define PAIR(ID, NAME, P)                                                     \
    [ID] = { .magic = NBCXI_TYPE_MAGIC, .id = ID, .name = NAME,               \
             .size = sizeof(((P *)0)->val) + sizeof(int),                     \
             .extent = sizeof(P), .true_lb = 0,                               \
             .true_extent = offsetof(P, idx) + sizeof(int),                   \
             .contiguous = !PADDED(P), .face = &pair_face }

/* Field-wise pack and unpack of the pair types (no padding moved). */
static int pair_move(const void *src, int count, struct nbcx_datatype_s *t,
                     void *dst, bool pack)
{
    size_t vsize = t->size - sizeof(int);   /* the value field's size */
    size_t ioff = (size_t)t->true_extent - sizeof(int); /* idx offset */
    const char *in = src;
    char *out = dst;
    for (int i = 0; i < count; i++) {
        const char *elem = pack ? in + (size_t)i * (size_t)t->extent
                                : in + (size_t)i * t->size;
        char *to = pack ? out + (size_t)i * t->size
                        : out + (size_t)i * (size_t)t->extent;
        size_t from_idx = pack ? ioff : vsize, to_idx = pack ? vsize : ioff;
        memcpy(to, elem, vsize);
        memcpy(to + to_idx, elem + from_idx, sizeof(int));
    }
    return NBCX_SUCCESS;
}

static int pair_pack(const void *src, int count, struct nbcx_datatype_s *t,
                     void *dst)
{
    return pair_move(src, count, t, dst, true);
}

static int pair_unpack(const void *src, int count,
                       struct nbcx_datatype_s *t, void *dst)
{
    return pair_move(src, count, t, dst, false);
}

static const struct nbcxi_type_face pair_face = {
    .pack = pair_pack,
    .unpack = pair_unpack,
};

/* Indexed by the small constants of nbcx.h. Never freed (refs unused). */
static struct nbcx_datatype_s builtins[NBCXI_TYPE_LAST + 1] = {
    BUILTIN(1, "int8", int8_t),       BUILTIN(2, "uint8", uint8_t),
    BUILTIN(3, "int16", int16_t),     BUILTIN(4, "uint16", uint16_t),
    BUILTIN(5, "int32", int32_t),     BUILTIN(6, "uint32", uint32_t),
    BUILTIN(7, "int64", int64_t),     BUILTIN(8, "uint64", uint64_t),
    BUILTIN(9, "float", float),       BUILTIN(10, "double", double),
    BUILTIN(11, "byte", unsigned char), BUILTIN(12, "char", char),
    PAIR(13, "float_int", nbcx_float_int),
    PAIR(14, "double_int", nbcx_double_int),
    PAIR(15, "long_int", nbcx_long_int),
    PAIR(16, "2int", nbcx_2int),
    PAIR(17, "short_int", nbcx_short_int),
};

struct nbcx_datatype_s *nbcxi_type(nbcx_datatype h)
{
    uintptr_t v = (uintptr_t)h;
    if (v >= NBCXI_TYPE_FIRST && v <= NBCXI_TYPE_LAST)
        return &builtins[v];
    if (v <= 4096) /* NULL and other small values are never valid */
        return NULL;
    struct nbcx_datatype_s *t = h;
    if (t->magic == NBCXI_TYPE_MAGIC)
        return t;
    nbcxi_bad_handle(NBCX_ERR_TYPE, "datatype", "nbcx_datatype_free",
                     t->magic, t);
    return NULL;
}

/* Face datatypes live in this pool (base/pool.c): a stale handle reads
 * valid memory marked dead. */
struct nbcxi_pool nbcxi_type_pool = NBCXI_POOL_INIT(struct nbcx_datatype_s);

void nbcxi_type_retain(struct nbcx_datatype_s *t)
{
    nbcxi_ref_retain(t->id, &t->refs);
}

void nbcxi_type_release(struct nbcx_datatype_s *t)
{
    if (nbcxi_ref_release(t->id, &t->refs)) {
        t->magic = 0;
        if (t->face && t->face->release)
            t->face->release(t);
        nbcxi_pool_free(&nbcxi_type_pool, t, NBCXI_DEAD_MAGIC);
    }
}

size_t nbcxi_type_span(const struct nbcx_datatype_s *t, ptrdiff_t count,
                       ptrdiff_t *shift)
{
    *shift = -t->true_lb;
    if (count <= 0)
        return 1;
    return (size_t)((ptrdiff_t)(count - 1) * t->extent + t->true_extent);
}

/* memcpy of n bytes from src to dst, which do not overlap; except where
 * the copy would be some 20x slower than it should: glibc copies from
 * 2,112 bytes up to 512 KiB with `rep movsb` where the processor has
 * fast short rep movsb (FSRM: AMD Zen 3 and later, recent Intel), and on
 * this AMD EPYC that runs at a twentieth of its speed when the
 * destination lies 1-32 bytes past the source, counted modulo 4 KiB (64
 * KiB: 31.6 us against 1.7; 33-63 bytes: 3 us). Where buffers land so is
 * the allocator's business: an iscatter root's own block on 2 ranks
 * took 57 us at 64 KiB in nbcx-bench (docs/results/java/s26). In
 * pieces below glibc's rep movsb threshold the copy takes the vector
 * loop instead, as fast as at any other distance (1.6-1.9 us). */
enum { SLOW_GAP = 64, SLOW_MIN = 2048, SLOW_MAX = 512 * 1024, PIECE = 2048 };

static void copy_bytes(void *dst, const void *src, size_t n)
{
    size_t gap = ((uintptr_t)dst - (uintptr_t)src) & 4095;
    if (n <= SLOW_MIN || n >= SLOW_MAX || gap == 0 || gap >= SLOW_GAP) {
        memcpy(dst, src, n);
        return;
    }
    for (size_t off = 0; off < n; off += PIECE)
        memcpy((char *)dst + off, (const char *)src + off,
               n - off < PIECE ? n - off : PIECE);
}

/* Packs (unpack false) or unpacks count elements of t: contiguous data
 * in one copy, other data by the datatype's face. */
static int pack_or_unpack(bool unpack, const void *src, int count,
                          struct nbcx_datatype_s *t, void *dst)
{
    if (count == 0)
        return NBCX_SUCCESS;
    if (t->contiguous) {
        copy_bytes(dst, src, (size_t)count * t->size);
        return NBCX_SUCCESS;
    }
    return unpack ? t->face->unpack(src, count, t, dst)
                  : t->face->pack(src, count, t, dst);
}

int nbcxi_type_pack(const void *src, int count, struct nbcx_datatype_s *t,
                    void *dst)
{
    return pack_or_unpack(false, src, count, t, dst);
}

int nbcxi_type_unpack(const void *src, int count, struct nbcx_datatype_s *t,
                      void *dst)
{
    return pack_or_unpack(true, src, count, t, dst);
}

int nbcxi_type_copy(const void *src, void *dst, int count,
                    struct nbcx_datatype_s *t)
{
    if (count == 0 || src == dst)
        return NBCX_SUCCESS;
    if (t->contiguous) {
        size_t n = (size_t)count * t->size;
        uintptr_t s = (uintptr_t)src, d = (uintptr_t)dst;
        if (d + n <= s || s + n <= d)
            copy_bytes(dst, src, n);
        else
            memmove(dst, src, n); /* (overlapping: memmove's order) */
        return NBCX_SUCCESS;
    }
    /* Non-contiguous: through a packed buffer (MPI's own pack/unpack). */
    size_t bytes = (size_t)count * t->size;
    void *tmp = malloc(bytes ? bytes : 1);
    if (!tmp)
        return NBCX_ERR_NOMEM;
    int err = t->face->pack(src, count, t, tmp);
    if (err == NBCX_SUCCESS)
        err = t->face->unpack(tmp, count, t, dst);
    free(tmp);
    return err;
}

/* Moves scount elements of stype into dcount elements of dtype (the same
 * bytes of data, as MPI's matching type signatures): one pass where either
 * side is contiguous, else through a packed temporary. */
int nbcxi_type_move(const void *src, int scount, struct nbcx_datatype_s *stype,
                    void *dst, int dcount, struct nbcx_datatype_s *dtype)
{
    if (stype == dtype && scount == dcount)
        return nbcxi_type_copy(src, dst, scount, stype);
    if (dtype->contiguous)
        return nbcxi_type_pack(src, scount, stype, dst);
    if (stype->contiguous)
        return nbcxi_type_unpack(src, dcount, dtype, dst);
    size_t bytes = (size_t)scount * stype->size;
    void *tmp = malloc(bytes ? bytes : 1);
    int err = tmp ? nbcxi_type_pack(src, scount, stype, tmp) : NBCX_ERR_NOMEM;
    if (err == NBCX_SUCCESS)
        err = nbcxi_type_unpack(tmp, dcount, dtype, dst);
    free(tmp);
    return err;
}

/* A query's datatype (NBCX_ERR_TYPE), then its result pointer
 * (NBCX_ERR_ARG). */
static int query(nbcx_datatype type, const void *result,
                 struct nbcx_datatype_s **t)
{
    if (!(*t = nbcxi_type(type)))
        return NBCX_ERR_TYPE;
    return result ? NBCX_SUCCESS : NBCX_ERR_ARG;
}

int nbcx_datatype_size(nbcx_datatype type, size_t *size)
{
    struct nbcx_datatype_s *t;
    int err = query(type, size, &t);
    if (err == NBCX_SUCCESS)
        *size = t->size;
    return err;
}

int nbcx_datatype_extent(nbcx_datatype type, ptrdiff_t *extent)
{
    struct nbcx_datatype_s *t;
    int err = query(type, extent, &t);
    if (err == NBCX_SUCCESS)
        *extent = t->extent;
    return err;
}

int nbcx_datatype_free(nbcx_datatype *type)
{
    if (!type)
        return NBCX_ERR_ARG;
    struct nbcx_datatype_s *t = nbcxi_type(*type);
    if (!t)
        return NBCX_ERR_TYPE;
    *type = NBCX_DATATYPE_NULL;
    nbcxi_type_release(t); /* no-op for built-ins */
    return NBCX_SUCCESS;
}
