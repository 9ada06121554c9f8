/* op.c - reduction operations: built-in kernels and user operations. */
#include <stdlib.h>

#include "base.h"

/* ---- built-in operations, indexed by the constants of nbcx.h ---- */

enum { SUM = 1, PROD, MIN, MAX, LAND, LOR, LXOR, BAND, BOR, BXOR, MINLOC,
       MAXLOC };

#define BUILTIN(ID) [ID] = { .magic = NBCXI_OP_MAGIC, .id = ID, .commutative = true }
/* Indexed by the constants of nbcx.h; never freed (refs unused). */
static struct nbcx_op_s builtins[NBCXI_OP_LAST + 1] = {
    BUILTIN(1), BUILTIN(2), BUILTIN(3), BUILTIN(4),  BUILTIN(5),  BUILTIN(6),
    BUILTIN(7), BUILTIN(8), BUILTIN(9), BUILTIN(10), BUILTIN(11), BUILTIN(12),
};

struct nbcx_op_s *nbcxi_op(nbcx_op h)
{
    uintptr_t v = (uintptr_t)h;
    if (v >= NBCXI_OP_FIRST && v <= NBCXI_OP_LAST)
        return &builtins[v];
    if (v <= 4096) /* NULL and other small values are never valid */
        return NULL;
    struct nbcx_op_s *op = h;
    if (op->magic == NBCXI_OP_MAGIC)
        return op;
    nbcxi_bad_handle(NBCX_ERR_OP, "operation", "nbcx_op_free", op->magic, op);
    return NULL;
}

/* User operations live in this pool (base/pool.c): a stale handle reads
 * valid memory marked dead. */
struct nbcxi_pool nbcxi_op_pool = NBCXI_POOL_INIT(struct nbcx_op_s);

void nbcxi_op_retain(struct nbcx_op_s *op)
{
    nbcxi_ref_retain(op->id, &op->refs);
}

void nbcxi_op_release(struct nbcx_op_s *op)
{
    if (nbcxi_ref_release(op->id, &op->refs)) {
        op->magic = 0;
        if (op->release)
            op->release(op);
        nbcxi_pool_free(&nbcxi_op_pool, op, NBCXI_DEAD_MAGIC);
    }
}

/* ---- which built-in operation is defined on which built-in type ---- */

enum tclass { T_INT, T_FLOAT, T_BYTE, T_CHAR, T_PAIR };

static enum tclass type_class(int id)
{
    switch (id) {
    case 9: case 10: return T_FLOAT;
    case 11: return T_BYTE;
    case 12: return T_CHAR;
    case 13: case 14: case 15: case 16: case 17: return T_PAIR;
    default: return T_INT;
    }
}

int nbcxi_op_check(const struct nbcx_op_s *op, const struct nbcx_datatype_s *t)
{
    if (op->id == 0)
        return NBCX_SUCCESS; /* a user operation takes any type */
    if (t->id == 0) /* a face's type: its face knows */
        return t->face && t->face->check ? t->face->check(t, op->id)
                                         : NBCX_SUCCESS;
    enum tclass c = type_class(t->id);
    switch (op->id) {
    case SUM: case PROD: case MIN: case MAX:
        return (c == T_INT || c == T_FLOAT) ? NBCX_SUCCESS : NBCX_ERR_OP;
    case LAND: case LOR: case LXOR:
        return c == T_INT ? NBCX_SUCCESS : NBCX_ERR_OP;
    case BAND: case BOR: case BXOR:
        return (c == T_INT || c == T_BYTE) ? NBCX_SUCCESS : NBCX_ERR_OP;
    case MINLOC: case MAXLOC:
        return c == T_PAIR ? NBCX_SUCCESS : NBCX_ERR_OP;
    default:
        return NBCX_ERR_OP;
    }
}

/* ---- kernels: inout[i] = in[i] op inout[i] ---- */

#define LOOP(T, EXPR)                                                         \
    do {                                                                      \
        const T *a = in;                                                      \
        T *b = inout;                                                         \
        for (int i = 0; i < n; i++)                                           \
            b[i] = (T)(EXPR);                                                 \
    } while (0)

#define ARITH(T)                                                              \
    static void arith_##T(int op, const void *in, void *inout, int n)         \
    {                                                                         \
        switch (op) {                                                         \
        case SUM: LOOP(T, a[i] + b[i]); break;                                \
        case PROD: LOOP(T, a[i] * b[i]); break;                               \
        case MIN: LOOP(T, a[i] < b[i] ? a[i] : b[i]); break;                  \
        case MAX: LOOP(T, a[i] > b[i] ? a[i] : b[i]); break;                  \
        }                                                                     \
    }

#define LOGIC(T)                                                              \
    static void logic_##T(int op, const void *in, void *inout, int n)         \
    {                                                                         \
        switch (op) {                                                         \
        case LAND: LOOP(T, (a[i] != 0) && (b[i] != 0)); break;                \
        case LOR: LOOP(T, (a[i] != 0) || (b[i] != 0)); break;                 \
        case LXOR: LOOP(T, (a[i] != 0) != (b[i] != 0)); break;                \
        case BAND: LOOP(T, a[i] & b[i]); break;                               \
        case BOR: LOOP(T, a[i] | b[i]); break;                                \
        case BXOR: LOOP(T, a[i] ^ b[i]); break;                               \
        }                                                                     \
    }

/* Unsigned arithmetic for the signed types keeps overflow defined (it
 * wraps, as MPI libraries do in practice); results are identical. */
#define ARITH_WRAP(T, U)                                                      \
    static void arith_##T(int op, const void *in, void *inout, int n)         \
    {                                                                         \
        switch (op) {                                                         \
        case SUM: LOOP(T, (U)a[i] + (U)b[i]); break;                          \
        case PROD: LOOP(T, (U)a[i] * (U)b[i]); break;                         \
        case MIN: LOOP(T, a[i] < b[i] ? a[i] : b[i]); break;                  \
        case MAX: LOOP(T, a[i] > b[i] ? a[i] : b[i]); break;                  \
        }                                                                     \
    }

/* Small unsigned types promote to int: multiply in unsigned to avoid
 * signed overflow. */
ARITH_WRAP(int8_t, uint32_t)
ARITH_WRAP(int16_t, uint32_t)
ARITH_WRAP(int32_t, uint32_t)
ARITH_WRAP(int64_t, uint64_t)
ARITH_WRAP(uint8_t, uint32_t)
ARITH_WRAP(uint16_t, uint32_t)
ARITH(uint32_t)
ARITH(uint64_t)
ARITH(float)
ARITH(double)
LOGIC(int8_t)
LOGIC(int16_t)
LOGIC(int32_t)
LOGIC(int64_t)
LOGIC(uint8_t)
LOGIC(uint16_t)
LOGIC(uint32_t)
LOGIC(uint64_t)

#define PAIR(P)                                                               \
    static void loc_##P(int op, const void *in, void *inout, int n)           \
    {                                                                         \
        const P *a = in;                                                      \
        P *b = inout;                                                         \
        for (int i = 0; i < n; i++) {                                         \
            bool take = op == MINLOC ? a[i].val < b[i].val                    \
                                     : a[i].val > b[i].val;                   \
            if (take) { /* field by field: padding is not data */         \
                b[i].val = a[i].val;                                          \
                b[i].idx = a[i].idx;                                          \
            }                                                                 \
            else if (a[i].val == b[i].val && a[i].idx < b[i].idx)             \
                b[i].idx = a[i].idx;                                          \
        }                                                                     \
    }

PAIR(nbcx_float_int)
PAIR(nbcx_double_int)
PAIR(nbcx_long_int)
PAIR(nbcx_2int)
PAIR(nbcx_short_int)

typedef void kernel(int op, const void *in, void *inout, int n);

static kernel *const arith_kernels[NBCXI_TYPE_LAST + 1] = {
    [1] = arith_int8_t,   [2] = arith_uint8_t,  [3] = arith_int16_t,
    [4] = arith_uint16_t, [5] = arith_int32_t,  [6] = arith_uint32_t,
    [7] = arith_int64_t,  [8] = arith_uint64_t, [9] = arith_float,
    [10] = arith_double,
};
static kernel *const logic_kernels[NBCXI_TYPE_LAST + 1] = {
    [1] = logic_int8_t,   [2] = logic_uint8_t,  [3] = logic_int16_t,
    [4] = logic_uint16_t, [5] = logic_int32_t,  [6] = logic_uint32_t,
    [7] = logic_int64_t,  [8] = logic_uint64_t, [11] = logic_uint8_t,
};
static kernel *const pair_kernels[NBCXI_TYPE_LAST + 1] = {
    [13] = loc_nbcx_float_int, [14] = loc_nbcx_double_int,
    [15] = loc_nbcx_long_int,  [16] = loc_nbcx_2int,
    [17] = loc_nbcx_short_int,
};

int nbcxi_reduce(const void *in, void *inout, int count,
                 struct nbcx_datatype_s *t, struct nbcx_op_s *op)
{
    if (count == 0)
        return NBCX_SUCCESS;
    if (op->id == 0) { /* user operation */
        op->fn(in, inout, count, t->id ? (nbcx_datatype)(uintptr_t)t->id : t,
               op->ctx);
        return NBCX_SUCCESS;
    }
    if (t->id == 0) /* built-in operation on a face's derived type */
        return t->face->reduce(in, inout, count, t, op->id);
    int err = nbcxi_op_check(op, t);
    if (err != NBCX_SUCCESS)
        return err;
    kernel *k = op->id <= MAX     ? arith_kernels[t->id]
                : op->id <= BXOR  ? logic_kernels[t->id]
                                  : pair_kernels[t->id];
    if (!k)
        return NBCX_ERR_OP;
    k(op->id, in, inout, count);
    return NBCX_SUCCESS;
}

/* ---- public ---- */

int nbcx_op_create(nbcx_user_fn *fn, int commutative, void *ctx, nbcx_op *out)
{
    if (!out)
        return NBCX_ERR_ARG;
    *out = NBCX_OP_NULL;
    if (!fn)
        return NBCX_ERR_ARG;
    struct nbcx_op_s *op = nbcxi_pool_alloc(&nbcxi_op_pool);
    if (!op)
        return NBCX_ERR_NOMEM;
    op->magic = NBCXI_OP_MAGIC;
    op->commutative = commutative != 0;
    op->fn = fn;
    op->ctx = ctx;
    atomic_init(&op->refs, 1);
    *out = op;
    return NBCX_SUCCESS;
}

int nbcx_op_free(nbcx_op *h)
{
    if (!h)
        return NBCX_ERR_ARG;
    struct nbcx_op_s *op = nbcxi_op(*h);
    if (!op)
        return NBCX_ERR_OP;
    *h = NBCX_OP_NULL;
    nbcxi_op_release(op); /* no-op for built-ins */
    return NBCX_SUCCESS;
}

int nbcx_op_commutative(nbcx_op h, int *commutative)
{
    struct nbcx_op_s *op = nbcxi_op(h);
    if (!op)
        return NBCX_ERR_OP;
    if (!commutative)
        return NBCX_ERR_ARG;
    *commutative = op->commutative;
    return NBCX_SUCCESS;
}

int nbcx_reduce_local(const void *in, void *inout, int count,
                      nbcx_datatype type, nbcx_op h)
{
    struct nbcx_datatype_s *t = nbcxi_type(type);
    struct nbcx_op_s *op = nbcxi_op(h);
    if (!t)
        return NBCX_ERR_TYPE;
    if (!op)
        return NBCX_ERR_OP;
    if (count < 0)
        return NBCX_ERR_COUNT;
    if (count > 0 && (!in || !inout))
        return NBCX_ERR_BUFFER;
    int err = nbcxi_op_check(op, t);
    return err ? err : nbcxi_reduce(in, inout, count, t, op);
}
