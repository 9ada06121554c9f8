/*
 * test_reduce_local.c - every built-in operation on every built-in
 * datatype through nbcx_reduce_local, against a straightforward reference
 * written here element by element.
 *
 * The table of datatypes says how to read and write one element; the
 * reference computes inout[i] = in[i] op inout[i] with plain C on those
 * values: integers wrap modulo 2^bits (as MPI libraries do in practice),
 * floating-point values are chosen so that every result is exact, and
 * MINLOC/MAXLOC follow MPI's definition (ties take the smaller index).
 * Combinations MPI does not define must return NBCX_ERR_OP and leave the
 * buffer untouched.
 */
#include <stddef.h>
#include <stdint.h>

#include "harness.h"
#include "matrix_op.h"

/* ------------------------------------------------------------------ */
/* The datatypes                                                       */
/* ------------------------------------------------------------------ */

enum kind { K_INT, K_FLOAT, K_BYTE, K_CHAR, K_PAIR };

struct tdesc {
    nbcx_datatype h;
    const char *name;
    enum kind kind;
    size_t size;       /* bytes of data per element (MPI_Type_size) */
    size_t extent;     /* bytes between elements in memory        */
    int bits;          /* integers: width; pairs: width of val    */
    bool is_signed;    /* integers                                */
    bool fval;         /* floats; pairs whose val is floating     */
    size_t idx_off;    /* pairs: offset of idx                    */
};

#define INT_T(H, C, S)                                                        \
    { H, #H, K_INT, sizeof(C), sizeof(C), 8 * (int)sizeof(C), S, false, 0 }
/* A pair holds sizeof(val) + sizeof(int) bytes of data, as MPI_DOUBLE_INT
 * and friends do; the C struct may add padding to the extent. */
#define PAIR_T(H, C, F)                                                       \
    { H, #H, K_PAIR, sizeof(((C *)0)->val) + sizeof(int), sizeof(C),          \
      8 * (int)sizeof(((C *)0)->val), true, F, offsetof(C, idx) }

static const struct tdesc types[] = {
    INT_T(NBCX_INT8, int8_t, true),     INT_T(NBCX_UINT8, uint8_t, false),
    INT_T(NBCX_INT16, int16_t, true),   INT_T(NBCX_UINT16, uint16_t, false),
    INT_T(NBCX_INT32, int32_t, true),   INT_T(NBCX_UINT32, uint32_t, false),
    INT_T(NBCX_INT64, int64_t, true),   INT_T(NBCX_UINT64, uint64_t, false),
    { NBCX_FLOAT, "NBCX_FLOAT", K_FLOAT, 4, 4, 32, true, true, 0 },
    { NBCX_DOUBLE, "NBCX_DOUBLE", K_FLOAT, 8, 8, 64, true, true, 0 },
    { NBCX_BYTE, "NBCX_BYTE", K_BYTE, 1, 1, 8, false, false, 0 },
    { NBCX_CHAR, "NBCX_CHAR", K_CHAR, 1, 1, 8, true, false, 0 },
    PAIR_T(NBCX_FLOAT_INT, nbcx_float_int, true),
    PAIR_T(NBCX_DOUBLE_INT, nbcx_double_int, true),
    PAIR_T(NBCX_LONG_INT, nbcx_long_int, false),
    PAIR_T(NBCX_2INT, nbcx_2int, false),
    PAIR_T(NBCX_SHORT_INT, nbcx_short_int, false),
};

static const struct {
    nbcx_op h;
    const char *name;
} ops[] = {
    { NBCX_SUM, "SUM" },   { NBCX_PROD, "PROD" },     { NBCX_MIN, "MIN" },
    { NBCX_MAX, "MAX" },   { NBCX_LAND, "LAND" },     { NBCX_LOR, "LOR" },
    { NBCX_LXOR, "LXOR" }, { NBCX_BAND, "BAND" },     { NBCX_BOR, "BOR" },
    { NBCX_BXOR, "BXOR" }, { NBCX_MINLOC, "MINLOC" }, { NBCX_MAXLOC, "MAXLOC" },
};

/* MPI's table of which operation applies to which kind of datatype. */
static bool defined_on(nbcx_op op, const struct tdesc *t)
{
    if (op == NBCX_SUM || op == NBCX_PROD || op == NBCX_MIN || op == NBCX_MAX)
        return t->kind == K_INT || t->kind == K_FLOAT;
    if (op == NBCX_LAND || op == NBCX_LOR || op == NBCX_LXOR)
        return t->kind == K_INT;
    if (op == NBCX_BAND || op == NBCX_BOR || op == NBCX_BXOR)
        return t->kind == K_INT || t->kind == K_BYTE;
    return t->kind == K_PAIR; /* MINLOC, MAXLOC */
}

/* ------------------------------------------------------------------ */
/* Reading and writing one element as plain values                     */
/* ------------------------------------------------------------------ */

/* An integer of `bits` bits at p, sign- or zero-extended to 64 bits. */
static uint64_t load_int(const void *p, int bits, bool is_signed)
{
    uint64_t u = 0;
    memcpy(&u, p, (size_t)bits / 8); /* little endian: low bytes first */
    if (bits < 64 && is_signed && (u >> (bits - 1)) & 1)
        u |= ~(uint64_t)0 << bits;
    return u;
}

static void store_int(void *p, int bits, uint64_t u)
{
    memcpy(p, &u, (size_t)bits / 8);
}

static int64_t as_signed(uint64_t u)
{
    int64_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* Integer comparison in the type's own signedness: -1, 0 or 1. */
static int cmp_int(uint64_t a, uint64_t b, bool is_signed)
{
    if (is_signed)
        return as_signed(a) < as_signed(b) ? -1 : as_signed(a) > as_signed(b);
    return a < b ? -1 : a > b;
}

static double load_float(const void *p, int bits)
{
    if (bits == 32) {
        float f;
        memcpy(&f, p, sizeof f);
        return f;
    }
    double d;
    memcpy(&d, p, sizeof d);
    return d;
}

static void store_float(void *p, int bits, double v)
{
    if (bits == 32) {
        float f = (float)v;
        memcpy(p, &f, sizeof f);
    } else {
        memcpy(p, &v, sizeof v);
    }
}

/* ------------------------------------------------------------------ */
/* The reference: inout = in op inout for one element                  */
/* ------------------------------------------------------------------ */

static void ref_int(nbcx_op op, const struct tdesc *t, const void *in,
                    void *inout)
{
    uint64_t a = load_int(in, t->bits, t->is_signed);
    uint64_t b = load_int(inout, t->bits, t->is_signed);
    uint64_t r = 0;
    if (op == NBCX_SUM)
        r = a + b; /* wraps modulo 2^64, hence modulo 2^bits */
    else if (op == NBCX_PROD)
        r = a * b;
    else if (op == NBCX_MIN)
        r = cmp_int(a, b, t->is_signed) < 0 ? a : b;
    else if (op == NBCX_MAX)
        r = cmp_int(a, b, t->is_signed) > 0 ? a : b;
    else if (op == NBCX_LAND)
        r = a != 0 && b != 0;
    else if (op == NBCX_LOR)
        r = a != 0 || b != 0;
    else if (op == NBCX_LXOR)
        r = (a != 0) != (b != 0);
    else if (op == NBCX_BAND)
        r = a & b;
    else if (op == NBCX_BOR)
        r = a | b;
    else if (op == NBCX_BXOR)
        r = a ^ b;
    store_int(inout, t->bits, r);
}

/* The values are small dyadic numbers: every sum and product below is
 * exact in float, so the order of evaluation cannot matter. */
static void ref_float(nbcx_op op, const struct tdesc *t, const void *in,
                      void *inout)
{
    double a = load_float(in, t->bits), b = load_float(inout, t->bits);
    double r = op == NBCX_SUM    ? a + b
               : op == NBCX_PROD ? a * b
               : op == NBCX_MIN  ? (a < b ? a : b)
                                 : (a > b ? a : b);
    store_float(inout, t->bits, r);
}

static void ref_pair(nbcx_op op, const struct tdesc *t, const void *in,
                     void *inout)
{
    int c; /* compares in.val with inout.val */
    if (t->fval) {
        double a = load_float(in, t->bits), b = load_float(inout, t->bits);
        c = a < b ? -1 : a > b;
    } else {
        c = cmp_int(load_int(in, t->bits, true),
                    load_int(inout, t->bits, true), true);
    }
    int ia, ib;
    memcpy(&ia, (const char *)in + t->idx_off, sizeof ia);
    memcpy(&ib, (char *)inout + t->idx_off, sizeof ib);
    bool take = op == NBCX_MINLOC ? c < 0 : c > 0;
    if (take) {
        memcpy(inout, in, t->idx_off); /* the value */
        memcpy((char *)inout + t->idx_off, &ia, sizeof ia);
    } else if (c == 0 && ia < ib) {
        memcpy((char *)inout + t->idx_off, &ia, sizeof ia);
    }
}

static void ref_apply(nbcx_op op, const struct tdesc *t, const void *in,
                      void *inout)
{
    if (t->kind == K_INT || t->kind == K_BYTE)
        ref_int(op, t, in, inout);
    else if (t->kind == K_FLOAT)
        ref_float(op, t, in, inout);
    else
        ref_pair(op, t, in, inout);
}

/* Two elements are equal: integer and float bytes, or a pair's fields
 * (the padding of a pair is not data). */
static bool elem_equal(const struct tdesc *t, const void *a, const void *b)
{
    if (t->kind != K_PAIR)
        return memcmp(a, b, t->size) == 0;
    return memcmp(a, b, (size_t)t->bits / 8) == 0 &&
           memcmp((const char *)a + t->idx_off, (const char *)b + t->idx_off,
                  sizeof(int)) == 0;
}

static void elem_print(char *out, size_t len, const struct tdesc *t,
                       const void *p)
{
    if (t->kind == K_FLOAT) {
        snprintf(out, len, "%g", load_float(p, t->bits));
    } else if (t->kind == K_PAIR) {
        int idx;
        memcpy(&idx, (const char *)p + t->idx_off, sizeof idx);
        if (t->fval)
            snprintf(out, len, "(%g, %d)", load_float(p, t->bits), idx);
        else
            snprintf(out, len, "(%lld, %d)",
                     (long long)as_signed(load_int(p, t->bits, true)), idx);
    } else {
        uint64_t u = load_int(p, t->bits, t->is_signed);
        if (t->is_signed)
            snprintf(out, len, "%lld", (long long)as_signed(u));
        else
            snprintf(out, len, "%llu", (unsigned long long)u);
    }
}

/* ------------------------------------------------------------------ */
/* Inputs                                                              */
/* ------------------------------------------------------------------ */

static uint64_t rng_state = 12345;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Element i of an input: the interesting integers first (0, 1, -1, the
 * extremes), then random bits; floats from a set of small dyadic values
 * (exact sums and products, zero and negatives included); pair values
 * from a tiny set, so ties (and the index rule) are frequent. */
static void fill_elem(const struct tdesc *t, void *p, int i)
{
    static const double fvals[] = { 0, 1, -1, 0.5, -2.25, 3, 7.75, -0.125,
                                    16, -5.5 };
    memset(p, 0, t->extent);
    if (t->kind == K_FLOAT) {
        store_float(p, t->bits, fvals[rnd() % 10]);
    } else if (t->kind == K_PAIR) {
        int v = (int)(rnd() % 4) - 1, idx = (int)(rnd() % 8);
        if (t->fval)
            store_float(p, t->bits, v * 0.5);
        else
            store_int(p, t->bits, (uint64_t)(int64_t)v);
        memcpy((char *)p + t->idx_off, &idx, sizeof idx);
    } else {
        uint64_t top = (uint64_t)1 << (t->bits - 1);
        uint64_t special[] = { 0, 1, ~(uint64_t)0, top - 1, top, 2, 3 };
        store_int(p, t->bits, i < 7 ? special[(i + (int)(rnd() % 7)) % 7]
                                    : (i % 3 == 0 ? rnd() % 5 : rnd()));
    }
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

enum { N = 61 }; /* elements per call: the specials, then random ones */

/* One (op, type): valid ones match the reference, invalid ones fail with
 * NBCX_ERR_OP and write nothing. */
static void one_kernel(nbcx_op op, const char *opname, const struct tdesc *t)
{
    unsigned char in[N * 16], inout[N * 16], want[N * 16], in0[N * 16];
    for (int i = 0; i < N; i++) {
        fill_elem(t, in + (size_t)i * t->extent, i);
        fill_elem(t, inout + (size_t)i * t->extent, i);
    }
    memcpy(want, inout, sizeof want);
    memcpy(in0, in, sizeof in0);
    th_cases++;

    if (!defined_on(op, t)) {
        CHECK_RC(nbcx_reduce_local(in, inout, N, t->h, op), NBCX_ERR_OP);
        CHECK(memcmp(inout, want, sizeof want) == 0,
              "%s on %s failed but wrote into inout", opname, t->name);
        return;
    }
    for (int i = 0; i < N; i++)
        ref_apply(op, t, in + (size_t)i * t->extent, want + (size_t)i * t->extent);
    CHECK_RC(nbcx_reduce_local(in, inout, N, t->h, op), NBCX_SUCCESS);
    for (int i = 0; i < N; i++) {
        const void *got = inout + (size_t)i * t->extent;
        const void *exp = want + (size_t)i * t->extent;
        if (!CHECK(elem_equal(t, got, exp), "%s on %s", opname, t->name)) {
            char a[64], x[64], y[64];
            elem_print(a, sizeof a, t, in + (size_t)i * t->extent);
            elem_print(x, sizeof x, t, got);
            elem_print(y, sizeof y, t, exp);
            fprintf(stderr, "    element %d: in %s, got %s, expected %s\n",
                    i, a, x, y);
            break;
        }
    }
    CHECK(memcmp(in, in0, sizeof in) == 0, "%s on %s modified in", opname,
          t->name);
}

static void test_kernels(void)
{
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
            one_kernel(ops[o].h, ops[o].name, &types[k]);
}

/* The combinations the brief singles out, spelled out. */
static void test_invalid_combinations(void)
{
    double d[2] = { 1, 2 }, e[2] = { 3, 4 };
    char c[2] = { 'a', 'b' }, f[2] = { 'c', 'd' };
    int32_t i[2] = { 1, 2 }, j[2] = { 3, 4 };
    CHECK_RC(nbcx_reduce_local(d, e, 2, NBCX_DOUBLE, NBCX_BAND), NBCX_ERR_OP);
    CHECK_RC(nbcx_reduce_local(d, e, 2, NBCX_DOUBLE, NBCX_LXOR), NBCX_ERR_OP);
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        CHECK_RC(nbcx_reduce_local(c, f, 2, NBCX_CHAR, ops[o].h), NBCX_ERR_OP);
    CHECK_RC(nbcx_reduce_local(i, j, 2, NBCX_INT32, NBCX_MINLOC), NBCX_ERR_OP);
    CHECK_RC(nbcx_reduce_local(i, j, 2, NBCX_INT32, NBCX_MAXLOC), NBCX_ERR_OP);
    CHECK(e[0] == 3 && e[1] == 4 && f[0] == 'c' && j[0] == 3,
          "a rejected call wrote into inout");
}

static void test_bad_arguments(void)
{
    int32_t a[3] = { 1, 2, 3 }, b[3] = { 4, 5, 6 };
    CHECK_RC(nbcx_reduce_local(a, b, 3, NBCX_DATATYPE_NULL, NBCX_SUM),
             NBCX_ERR_TYPE);
    CHECK_RC(nbcx_reduce_local(a, b, 3, (nbcx_datatype)(uintptr_t)99,
                               NBCX_SUM), NBCX_ERR_TYPE);
    CHECK_RC(nbcx_reduce_local(a, b, 3, NBCX_INT32, NBCX_OP_NULL),
             NBCX_ERR_OP);
    CHECK_RC(nbcx_reduce_local(a, b, 3, NBCX_INT32, (nbcx_op)(uintptr_t)13),
             NBCX_ERR_OP);
    CHECK_RC(nbcx_reduce_local(a, b, -1, NBCX_INT32, NBCX_SUM),
             NBCX_ERR_COUNT);
    CHECK_RC(nbcx_reduce_local(NULL, b, 3, NBCX_INT32, NBCX_SUM),
             NBCX_ERR_BUFFER);
    CHECK_RC(nbcx_reduce_local(a, NULL, 3, NBCX_INT32, NBCX_SUM),
             NBCX_ERR_BUFFER);
    /* count 0: nothing to do, NULL buffers are fine */
    CHECK_RC(nbcx_reduce_local(NULL, NULL, 0, NBCX_INT32, NBCX_SUM),
             NBCX_SUCCESS);
    CHECK_RC(nbcx_reduce_local(a, b, 0, NBCX_INT32, NBCX_SUM), NBCX_SUCCESS);
    CHECK(b[0] == 4 && b[1] == 5 && b[2] == 6, "count 0 wrote into inout");
}

/* A user operation: 2x2 matrices modulo 251 packed in a uint32 (one byte
 * per entry), multiplied in the order in * inout (not commutative). */
struct call_log {
    int calls;
    int last_count;
    nbcx_datatype last_type;
};

static void mat_op(const void *in, void *inout, int count, nbcx_datatype type,
                   void *ctx)
{
    struct call_log *log = ctx;
    log->calls++;
    log->last_count = count;
    log->last_type = type;
    mat_mul_into(in, inout, count);
}

static void test_user_op(void)
{
    struct call_log log = { 0 };
    nbcx_op op;
    int comm = -1;
    REQUIRE_OK(nbcx_op_create(mat_op, 0, &log, &op));
    CHECK_OK(nbcx_op_commutative(op, &comm));
    CHECK_INT(comm, 0);

    uint32_t in[9], inout[9], want[9];
    bool differs = false; /* the test matrices do not all commute */
    for (int i = 0; i < 9; i++) {
        in[i] = (uint32_t)(rnd() % 251) | (uint32_t)(rnd() % 251) << 8 |
                (uint32_t)(rnd() % 251) << 16 | (uint32_t)(rnd() % 251) << 24;
        inout[i] = (uint32_t)(rnd() % 251) | (uint32_t)(rnd() % 251) << 8 |
                   (uint32_t)(rnd() % 251) << 16 |
                   (uint32_t)(rnd() % 251) << 24;
        want[i] = mat_mul(in[i], inout[i]);
        differs = differs || want[i] != mat_mul(inout[i], in[i]);
    }
    CHECK(differs, "the test matrices happen to commute");
    CHECK_OK(nbcx_reduce_local(in, inout, 9, NBCX_UINT32, op));
    CHECK(memcmp(inout, want, sizeof want) == 0, "inout != in * inout");
    CHECK_INT(log.calls, 1);
    CHECK_INT(log.last_count, 9);
    CHECK(log.last_type == NBCX_UINT32, "the user function got type %p",
          (void *)log.last_type);

    /* A user operation is defined on any type, even NBCX_CHAR. */
    char c[4] = "abc", d[4] = "xyz";
    CHECK_OK(nbcx_reduce_local(c, d, 0, NBCX_CHAR, op));
    CHECK_INT(log.calls, 1); /* count 0: not called */

    CHECK_OK(nbcx_op_free(&op));
    CHECK(op == NBCX_OP_NULL, "nbcx_op_free did not reset the handle");
    CHECK_RC(nbcx_op_free(&op), NBCX_ERR_OP);
    CHECK_RC(nbcx_op_create(NULL, 1, NULL, &op), NBCX_ERR_ARG);
    CHECK_RC(nbcx_op_create(mat_op, 1, NULL, NULL), NBCX_ERR_ARG);

    /* Built-in operations are commutative and cannot be freed away. */
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        comm = 0;
        CHECK_OK(nbcx_op_commutative(ops[o].h, &comm));
        CHECK_INT(comm, 1);
    }
}

/* Built-in datatype sizes and extents: the C types', and for the pairs
 * MPI's (data bytes; the struct's size as the extent). */
static void test_datatype_sizes(void)
{
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        size_t size = 0;
        ptrdiff_t extent = 0;
        CHECK_OK(nbcx_datatype_size(types[k].h, &size));
        CHECK_OK(nbcx_datatype_extent(types[k].h, &extent));
        CHECK(size == types[k].size, "%s: size %zu, expected %zu",
              types[k].name, size, types[k].size);
        CHECK(extent == (ptrdiff_t)types[k].extent, "%s: extent %td, "
              "expected %zu", types[k].name, extent, types[k].extent);
    }
    size_t size;
    CHECK_RC(nbcx_datatype_size(NBCX_DATATYPE_NULL, &size), NBCX_ERR_TYPE);
    CHECK_RC(nbcx_datatype_size(NBCX_INT32, NULL), NBCX_ERR_ARG);
}

static const struct th_test tests[] = {
    { "kernels", test_kernels },
    { "invalid_combinations", test_invalid_combinations },
    { "bad_arguments", test_bad_arguments },
    { "user_op", test_user_op },
    { "datatype_sizes", test_datatype_sizes },
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests, TH_COUNT(tests));
}
