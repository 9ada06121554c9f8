/*
 * redops.h - the (type, operation) pairs of the reduction tests and their
 * sequential reference, element by element: how to make an element from
 * a hash, inout = in op inout on one element, equality and printing.
 * Each test keeps its own table of struct redop (which pairs it runs);
 * user operations are created and freed with redops_create_user and
 * redops_free_user.
 *
 * The elements: int32 (small values for SUM, all bits for MAX and BXOR),
 * double (exact small integers), NBCX_DOUBLE_INT (many ties, so MINLOC's
 * index rule matters), 2x2 matrices mod 251 in a uint32 (a
 * non-commutative user operation, matrix_op.h), int64 sum mod a prime (a
 * commutative user operation) and gap_mid elements (gaptype.h: int32 data
 * at bytes 0 and 8, a gap at 4..7 that must never be written).
 */
#ifndef NBCX_TEST_REDOPS_H
#define NBCX_TEST_REDOPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "nbcx.h"
#include "matrix_op.h"

/* One (type, op) case. */
struct redop {
    const char *name;
    nbcx_datatype type;
    size_t ext;                 /* bytes between elements in memory */
    nbcx_op op;                 /* user ops: redops_create_user */
    nbcx_user_fn *user_fn;      /* NULL for built-in ops */
    int commutative;
    void (*gen)(void *e, uint32_t h);
    void (*ref)(const void *in, void *inout);
    bool (*eq)(const void *a, const void *b);
    void (*show)(char *out, size_t len, const void *e);
    size_t gap_lo, gap_hi;      /* bytes of each element that are not
                                   data and must never be written */
};

/* Creates the user operations of the table (entries with a user_fn). */
static inline void redops_create_user(struct redop *t, int n)
{
    for (int k = 0; k < n; k++)
        if (t[k].user_fn)
            nbcx_op_create(t[k].user_fn, t[k].commutative, NULL, &t[k].op);
}

static inline void redops_free_user(struct redop *t, int n)
{
    for (int k = 0; k < n; k++)
        if (t[k].user_fn)
            nbcx_op_free(&t[k].op);
}

/* 2x2 matrices modulo 251, one byte per entry, in a uint32. */
static inline void mat_op(const void *in, void *inout, int n,
                          nbcx_datatype t, void *ctx)
{
    (void)t;
    (void)ctx;
    mat_mul_into(in, inout, n);
}

enum { MODP = 1000003 };

static inline void summod_op(const void *in, void *inout, int n,
                             nbcx_datatype t, void *ctx)
{
    (void)t;
    (void)ctx;
    const int64_t *a = in;
    int64_t *b = inout;
    for (int i = 0; i < n; i++)
        b[i] = (a[i] + b[i]) % MODP;
}

#define REDOPS_GEN(NAME, T, EXPR)                                             \
    static inline void NAME(void *e, uint32_t h)                              \
    {                                                                         \
        T v = (EXPR);                                                         \
        memcpy(e, &v, sizeof v);                                              \
    }
REDOPS_GEN(gen_i32_small, int32_t, (int32_t)(h % 2001) - 1000)
REDOPS_GEN(gen_i32_bits, int32_t, (int32_t)h)
REDOPS_GEN(gen_dbl_small, double, (double)((int)(h % 41) - 20))
REDOPS_GEN(gen_mat, uint32_t, (h % 251) | (h >> 8) % 251 << 8 |
                                  (h >> 16) % 251 << 16 |
                                  (uint32_t)((h >> 24) * 7 % 251) << 24)
REDOPS_GEN(gen_modp, int64_t, (int64_t)(h % MODP))
#undef REDOPS_GEN

static inline void gen_dblint(void *e, uint32_t h)
{
    nbcx_double_int v;
    memset(&v, 0, sizeof v);
    v.val = (double)(h % 5); /* many ties, so the index rule matters */
    v.idx = (int)((h >> 8) % 97);
    memcpy(e, &v, sizeof v);
}

#define REDOPS_REF(NAME, T, EXPR)                                             \
    static inline void NAME(const void *in_, void *inout_)                    \
    {                                                                         \
        T a, b;                                                               \
        memcpy(&a, in_, sizeof a);                                            \
        memcpy(&b, inout_, sizeof b);                                         \
        T r = (EXPR);                                                         \
        memcpy(inout_, &r, sizeof r);                                         \
    }
REDOPS_REF(ref_i32_sum, int32_t, (int32_t)((uint32_t)a + (uint32_t)b))
REDOPS_REF(ref_i32_max, int32_t, a > b ? a : b)
REDOPS_REF(ref_i32_bxor, int32_t, a ^ b)
REDOPS_REF(ref_dbl_sum, double, a + b)
REDOPS_REF(ref_dbl_max, double, a > b ? a : b)
REDOPS_REF(ref_mat, uint32_t, mat_mul(a, b))
REDOPS_REF(ref_modp, int64_t, (a + b) % MODP)
#undef REDOPS_REF

static inline void ref_minloc(const void *in, void *inout)
{
    nbcx_double_int a, b;
    memcpy(&a, in, sizeof a);
    memcpy(&b, inout, sizeof b);
    if (a.val < b.val || (a.val == b.val && a.idx < b.idx))
        b = a;
    memcpy(inout, &b, sizeof b);
}

static inline bool eq_4(const void *a, const void *b)
{
    return !memcmp(a, b, 4);
}

static inline bool eq_8(const void *a, const void *b)
{
    return !memcmp(a, b, 8);
}

static inline bool eq_dblint(const void *a, const void *b)
{
    nbcx_double_int x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return x.val == y.val && x.idx == y.idx;
}

static inline void show_i32(char *o, size_t n, const void *e)
{
    int32_t v;
    memcpy(&v, e, sizeof v);
    snprintf(o, n, "%d (0x%08x)", (int)v, (unsigned)v);
}

static inline void show_dbl(char *o, size_t n, const void *e)
{
    double v;
    memcpy(&v, e, sizeof v);
    snprintf(o, n, "%g", v);
}

static inline void show_i64(char *o, size_t n, const void *e)
{
    int64_t v;
    memcpy(&v, e, sizeof v);
    snprintf(o, n, "%lld", (long long)v);
}

static inline void show_dblint(char *o, size_t n, const void *e)
{
    nbcx_double_int v;
    memcpy(&v, e, sizeof v);
    snprintf(o, n, "(%g, %d)", v.val, v.idx);
}

/* gap_mid elements: int32 data at bytes 0 and 8, a gap at 4..7. */
static inline void gen_gap(void *e, uint32_t h)
{
    int32_t d[2] = { (int32_t)(h % 2001) - 1000,
                     (int32_t)((h >> 11) % 2001) - 1000 };
    memcpy(e, &d[0], 4);
    memcpy((char *)e + 8, &d[1], 4);
}

static inline void ref_gap_sum(const void *in, void *inout)
{
    for (int k = 0; k < 2; k++)
        ref_i32_sum((const char *)in + 8 * k, (char *)inout + 8 * k);
}

static inline bool eq_gap(const void *a, const void *b)
{
    return !memcmp(a, b, 4) && !memcmp((const char *)a + 8,
                                       (const char *)b + 8, 4);
}

static inline void show_gap(char *o, size_t n, const void *e)
{
    int32_t d[2];
    memcpy(&d[0], e, 4);
    memcpy(&d[1], (const char *)e + 8, 4);
    snprintf(o, n, "(%d, gap, %d)", (int)d[0], (int)d[1]);
}

/* The entries of the tables (each test lists the ones it runs). */
#define REDOP_INT32_SUM                                                       \
    { "int32/SUM", NBCX_INT32, 4, NBCX_SUM, NULL, 1, gen_i32_small,          \
      ref_i32_sum, eq_4, show_i32, 0, 0 }
#define REDOP_INT32_MAX                                                       \
    { "int32/MAX", NBCX_INT32, 4, NBCX_MAX, NULL, 1, gen_i32_bits,           \
      ref_i32_max, eq_4, show_i32, 0, 0 }
#define REDOP_INT32_BXOR                                                      \
    { "int32/BXOR", NBCX_INT32, 4, NBCX_BXOR, NULL, 1, gen_i32_bits,         \
      ref_i32_bxor, eq_4, show_i32, 0, 0 }
#define REDOP_DOUBLE_SUM                                                      \
    { "double/SUM", NBCX_DOUBLE, 8, NBCX_SUM, NULL, 1, gen_dbl_small,        \
      ref_dbl_sum, eq_8, show_dbl, 0, 0 }
#define REDOP_DOUBLE_MAX                                                      \
    { "double/MAX", NBCX_DOUBLE, 8, NBCX_MAX, NULL, 1, gen_dbl_small,        \
      ref_dbl_max, eq_8, show_dbl, 0, 0 }
#define REDOP_DOUBLE_INT_MINLOC                                               \
    { "double_int/MINLOC", NBCX_DOUBLE_INT, sizeof(nbcx_double_int),         \
      NBCX_MINLOC, NULL, 1, gen_dblint, ref_minloc, eq_dblint, show_dblint,   \
      0, 0 }
#define REDOP_MATRIX                                                          \
    { "uint32/user matrix product (non-commutative)", NBCX_UINT32, 4,        \
      NBCX_OP_NULL, mat_op, 0, gen_mat, ref_mat, eq_4, show_i32, 0, 0 }
#define REDOP_SUMMOD                                                          \
    { "int64/user sum mod p (commutative)", NBCX_INT64, 8, NBCX_OP_NULL,     \
      summod_op, 1, gen_modp, ref_modp, eq_8, show_i64, 0, 0 }
/* (needs gaptype.h) */
#define REDOP_GAP_SUM                                                         \
    { "gap_mid (derived, non-contiguous)/SUM", GAP_MID, 12, NBCX_SUM, NULL,  \
      1, gen_gap, ref_gap_sum, eq_gap, show_gap, 4, 8 }

#endif /* NBCX_TEST_REDOPS_H */
