/* pmpi_types.c - the reduction matrix of the MPI standard, through the
 * shim: every predefined datatype the linked library defines, with every
 * predefined operation that MPI 4.0 section 6.9.2 defines on its group,
 * in every reduction collective (reduce, allreduce, reduce_scatter,
 * reduce_scatter_block, scan, exscan), nonblocking and persistent, with
 * and without MPI_IN_PLACE, at several counts; and every predefined type
 * in the data-moving collectives (bcast, gather, allgather, alltoall).
 * The oracle is the native library's blocking collective on the same
 * input, in the same run (the shim serves only the nonblocking and
 * persistent calls).
 *
 * The table below is the standard's, not a list of what nbcx handles:
 * a type in the table that the native library refuses is counted as a
 * native failure and skipped; one that the library computes must be
 * computed by nbcx (served, not sent native: checked by the shim's
 * counts when NBCX_TEST_EXPECT_SHIM=1), with the same result and
 * MPI_SUCCESS.
 *
 * Arguments: quick (counts 1, 5; the default) or full (counts 1, 5, 1000,
 * 4099: not a multiple of any segment size). Prints the counts:
 * combinations checked, passed, refused by the native library. */
#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmpi_test.h"

/* ---- the standard's groups (MPI 4.0, 6.9.2) ---- */

enum group {
    G_CINT = 1,     /* C integer (and MPI_AINT, MPI_OFFSET, MPI_COUNT) */
    G_FINT = 2,     /* Fortran integer */
    G_FLOAT = 4,    /* floating point */
    G_LOGICAL = 8,  /* logical */
    G_COMPLEX = 16, /* complex */
    G_BYTE = 32,    /* byte */
    G_PAIR = 64,    /* the MINLOC/MAXLOC pair types */
    G_NONE = 128,   /* no reduction operation (characters, MPI_PACKED) */
};

/* How one value is stored, to write inputs and compare results. */
enum fmt { F_INT, F_UINT, F_FLT, F_DBL, F_LDBL, F_F128, F_BOOL, F_FLOG };
/* MPI_REAL16 and MPI_COMPLEX32 have no C type in the standard: Open MPI
 * 4.1 combines them as C's long double (so its results on gfortran's
 * REAL(16), a __float128, are not numbers), MPICH as __float128. The
 * test writes what the library computes on. */
#ifdef OPEN_MPI
#define F_R16 F_LDBL
#else
#define F_R16 F_F128
#endif

struct tdesc {
    const char *name;
    MPI_Datatype t;
    int group;
    enum fmt vf;    /* the value (both halves of a complex number) */
    int vsize;      /* bytes of one value (0: the type's size) */
    int complex_;   /* two values: real, imaginary */
    enum fmt xf;    /* pairs: the index */
    int xoff;       /* pairs: offset of the index */
};

#define T(N, G, F) { #N, N, G, F, 0, 0, F_INT, 0 }
#define TC(N, F, VS) { #N, N, G_COMPLEX, F, VS, 1, F_INT, 0 }
#define PAIRT(N, V, X, VF, XF)                                               \
    { #N, N, G_PAIR, VF, sizeof(V), 0, XF,                                  \
      offsetof(struct { V v; X x; }, x) }

static struct tdesc types[] = {
    /* C integer */
    T(MPI_INT, G_CINT, F_INT), T(MPI_LONG, G_CINT, F_INT),
    T(MPI_SHORT, G_CINT, F_INT), T(MPI_UNSIGNED_SHORT, G_CINT, F_UINT),
    T(MPI_UNSIGNED, G_CINT, F_UINT), T(MPI_UNSIGNED_LONG, G_CINT, F_UINT),
    T(MPI_LONG_LONG_INT, G_CINT, F_INT), T(MPI_LONG_LONG, G_CINT, F_INT),
    T(MPI_UNSIGNED_LONG_LONG, G_CINT, F_UINT),
    T(MPI_SIGNED_CHAR, G_CINT, F_INT), T(MPI_UNSIGNED_CHAR, G_CINT, F_UINT),
    T(MPI_INT8_T, G_CINT, F_INT), T(MPI_INT16_T, G_CINT, F_INT),
    T(MPI_INT32_T, G_CINT, F_INT), T(MPI_INT64_T, G_CINT, F_INT),
    T(MPI_UINT8_T, G_CINT, F_UINT), T(MPI_UINT16_T, G_CINT, F_UINT),
    T(MPI_UINT32_T, G_CINT, F_UINT), T(MPI_UINT64_T, G_CINT, F_UINT),
    T(MPI_AINT, G_CINT | G_FINT, F_INT), T(MPI_OFFSET, G_CINT | G_FINT, F_INT),
    T(MPI_COUNT, G_CINT | G_FINT, F_INT),
    /* Fortran integer */
    T(MPI_INTEGER, G_FINT, F_INT),
#ifdef MPI_INTEGER1
    T(MPI_INTEGER1, G_FINT, F_INT),
#endif
#ifdef MPI_INTEGER2
    T(MPI_INTEGER2, G_FINT, F_INT),
#endif
#ifdef MPI_INTEGER4
    T(MPI_INTEGER4, G_FINT, F_INT),
#endif
#ifdef MPI_INTEGER8
    T(MPI_INTEGER8, G_FINT, F_INT),
#endif
#ifdef MPI_INTEGER16
    T(MPI_INTEGER16, G_FINT, F_INT),
#endif
    /* floating point */
    T(MPI_FLOAT, G_FLOAT, F_FLT), T(MPI_DOUBLE, G_FLOAT, F_DBL),
    T(MPI_LONG_DOUBLE, G_FLOAT, F_LDBL), T(MPI_REAL, G_FLOAT, F_FLT),
    T(MPI_DOUBLE_PRECISION, G_FLOAT, F_DBL),
#ifdef MPI_REAL4
    T(MPI_REAL4, G_FLOAT, F_FLT),
#endif
#ifdef MPI_REAL8
    T(MPI_REAL8, G_FLOAT, F_DBL),
#endif
#ifdef MPI_REAL16
    T(MPI_REAL16, G_FLOAT, F_R16),
#endif
    /* logical */
    T(MPI_LOGICAL, G_LOGICAL, F_FLOG), T(MPI_C_BOOL, G_LOGICAL, F_BOOL),
#ifdef MPI_CXX_BOOL
    T(MPI_CXX_BOOL, G_LOGICAL, F_BOOL),
#endif
    /* complex */
    TC(MPI_C_COMPLEX, F_FLT, 4), TC(MPI_C_FLOAT_COMPLEX, F_FLT, 4),
    TC(MPI_C_DOUBLE_COMPLEX, F_DBL, 8),
    TC(MPI_C_LONG_DOUBLE_COMPLEX, F_LDBL, sizeof(long double)),
    TC(MPI_COMPLEX, F_FLT, 4), TC(MPI_DOUBLE_COMPLEX, F_DBL, 8),
#ifdef MPI_COMPLEX8
    TC(MPI_COMPLEX8, F_FLT, 4),
#endif
#ifdef MPI_COMPLEX16
    TC(MPI_COMPLEX16, F_DBL, 8),
#endif
#ifdef MPI_COMPLEX32
    TC(MPI_COMPLEX32, F_R16, 16),
#endif
#ifdef MPI_CXX_FLOAT_COMPLEX
    TC(MPI_CXX_FLOAT_COMPLEX, F_FLT, 4),
    TC(MPI_CXX_DOUBLE_COMPLEX, F_DBL, 8),
    TC(MPI_CXX_LONG_DOUBLE_COMPLEX, F_LDBL, sizeof(long double)),
#endif
    /* byte */
    T(MPI_BYTE, G_BYTE, F_UINT),
    /* MINLOC and MAXLOC */
    PAIRT(MPI_FLOAT_INT, float, int, F_FLT, F_INT),
    PAIRT(MPI_DOUBLE_INT, double, int, F_DBL, F_INT),
    PAIRT(MPI_LONG_INT, long, int, F_INT, F_INT),
    PAIRT(MPI_2INT, int, int, F_INT, F_INT),
    PAIRT(MPI_SHORT_INT, short, int, F_INT, F_INT),
    PAIRT(MPI_LONG_DOUBLE_INT, long double, int, F_LDBL, F_INT),
    PAIRT(MPI_2REAL, float, float, F_FLT, F_FLT),
    PAIRT(MPI_2DOUBLE_PRECISION, double, double, F_DBL, F_DBL),
    PAIRT(MPI_2INTEGER, int, int, F_INT, F_INT),
    /* no reduction: moved only */
    T(MPI_CHAR, G_NONE, F_UINT), T(MPI_WCHAR, G_NONE, F_UINT),
    T(MPI_CHARACTER, G_NONE, F_UINT), T(MPI_PACKED, G_NONE, F_UINT),
};
enum { NTYPES = sizeof types / sizeof types[0] };

struct odesc {
    const char *name;
    MPI_Op op;
    int groups; /* the groups it is defined on */
};

static const struct odesc ops[] = {
    { "MPI_MAX", MPI_MAX, G_CINT | G_FINT | G_FLOAT },
    { "MPI_MIN", MPI_MIN, G_CINT | G_FINT | G_FLOAT },
    { "MPI_SUM", MPI_SUM, G_CINT | G_FINT | G_FLOAT | G_COMPLEX },
    { "MPI_PROD", MPI_PROD, G_CINT | G_FINT | G_FLOAT | G_COMPLEX },
    { "MPI_LAND", MPI_LAND, G_CINT | G_LOGICAL },
    { "MPI_LOR", MPI_LOR, G_CINT | G_LOGICAL },
    { "MPI_LXOR", MPI_LXOR, G_CINT | G_LOGICAL },
    { "MPI_BAND", MPI_BAND, G_CINT | G_FINT | G_BYTE },
    { "MPI_BOR", MPI_BOR, G_CINT | G_FINT | G_BYTE },
    { "MPI_BXOR", MPI_BXOR, G_CINT | G_FINT | G_BYTE },
    { "MPI_MAXLOC", MPI_MAXLOC, G_PAIR },
    { "MPI_MINLOC", MPI_MINLOC, G_PAIR },
};
enum { NOPS = sizeof ops / sizeof ops[0] };

/* ---- values ---- */

static int vsize(const struct tdesc *d, int tsize)
{
    return d->vsize ? d->vsize : tsize;
}

/* Writes the small integer v in format f, size bytes. */
static void put(enum fmt f, int size, char *p, int v)
{
    switch (f) {
    case F_FLT: { float x = (float)v; memcpy(p, &x, sizeof x); return; }
    case F_DBL: { double x = v; memcpy(p, &x, sizeof x); return; }
    case F_LDBL: { long double x = v; memcpy(p, &x, sizeof x); return; }
    case F_F128: { __float128 x = v; memcpy(p, &x, sizeof x); return; }
    case F_BOOL: { bool x = v != 0; memcpy(p, &x, sizeof x); return; }
    default: /* integers, Fortran logical (.true. is 1 in gfortran) */
        if (f == F_FLOG)
            v = v != 0;
        for (int i = 0; i < size; i++)
            p[i] = (char)(i < 8 ? (char)((int64_t)v >> (8 * i))
                                : (v < 0 ? -1 : 0));
    }
}

/* The value at p as a double (for messages) and whether two agree. */
static int same(enum fmt f, int size, const char *a, const char *b)
{
    switch (f) {
    case F_FLT: { float x, y; memcpy(&x, a, 4); memcpy(&y, b, 4); return x == y; }
    case F_DBL: { double x, y; memcpy(&x, a, 8); memcpy(&y, b, 8); return x == y; }
    case F_LDBL: {
        long double x, y;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        return x == y;
    }
    case F_F128: {
        __float128 x, y;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        return x == y;
    }
    case F_BOOL: return (*a != 0) == (*b != 0);
    case F_FLOG: {
        int64_t x = 0, y = 0;
        memcpy(&x, a, (size_t)size < 8 ? (size_t)size : 8);
        memcpy(&y, b, (size_t)size < 8 ? (size_t)size : 8);
        return (x != 0) == (y != 0);
    }
    default: return memcmp(a, b, (size_t)size) == 0;
    }
}

/* Input element i of this rank: values that keep every operation exact
 * and in range on every type (products of at most 7 factors <= 2). */
static void fill(const struct tdesc *d, int tsize, MPI_Aint ext, char *buf,
                 int count, int salt)
{
    memset(buf, 0, (size_t)ext * (size_t)count);
    int vs = vsize(d, tsize);
    for (int i = 0; i < count; i++) {
        char *e = buf + (size_t)i * (size_t)ext;
        int v = (t_rank + i + salt) % 3; /* 0, 1, 2 */
        if (d->group == G_PAIR) {
            put(d->vf, vs, e, v + 1);
            put(d->xf, vs, e + d->xoff, t_rank);
        } else if (d->complex_) {
            put(d->vf, vs, e, v);
            put(d->vf, vs, e + vs, (v + 1) % 2);
        } else if (d->group & (G_LOGICAL)) {
            put(d->vf, tsize, e, (t_rank + i + salt) % 2);
        } else {
            put(d->vf, tsize, e, v == 0 && d->group != G_BYTE ? 1 : v);
        }
    }
}

static int equal(const struct tdesc *d, int tsize, MPI_Aint ext,
                 const char *a, const char *b, int count)
{
    int vs = vsize(d, tsize);
    for (int i = 0; i < count; i++) {
        const char *x = a + (size_t)i * (size_t)ext;
        const char *y = b + (size_t)i * (size_t)ext;
        int ok;
        if (d->group == G_PAIR)
            ok = same(d->vf, vs, x, y) &&
                 same(d->xf, vs, x + d->xoff, y + d->xoff);
        else if (d->complex_)
            ok = same(d->vf, vs, x, y) && same(d->vf, vs, x + vs, y + vs);
        else
            ok = same(d->vf, tsize, x, y);
        if (!ok)
            return i;
    }
    return -1;
}

/* ---- the collectives ---- */

enum coll { C_REDUCE, C_ALLREDUCE, C_RSCAT, C_RSCAT_BLOCK, C_SCAN, C_EXSCAN,
            NCOLL };
static const char *const coll_names[NCOLL] = {
    "reduce", "allreduce", "reduce_scatter", "reduce_scatter_block", "scan",
    "exscan",
};
enum form { NONBLOCKING, PERSISTENT, NFORMS };

static int *rcounts; /* reduce_scatter: count + (rank % 2) per rank */

/* Elements of the send buffer and of the receive buffer on this rank. */
static void sizes(enum coll c, int count, int *nsend, int *nrecv)
{
    int total = 0;
    for (int r = 0; r < t_size; r++)
        total += count + r % 2;
    switch (c) {
    case C_RSCAT: *nsend = total; *nrecv = count + t_rank % 2; break;
    case C_RSCAT_BLOCK: *nsend = count * t_size; *nrecv = count; break;
    default: *nsend = *nrecv = count;
    }
}

/* The native blocking collective. Reductions to rank 0: MPICH 4.0.2's own
 * MPI_Reduce crashes with MPI_IN_PLACE at a root other than 0 on 3 ranks
 * (1000 ints, MAX). */
static int native(enum coll c, const void *sb, void *rb, int count,
                  MPI_Datatype t, MPI_Op op)
{
    switch (c) {
    case C_REDUCE: return MPI_Reduce(sb, rb, count, t, op, 0, MPI_COMM_WORLD);
    case C_ALLREDUCE: return MPI_Allreduce(sb, rb, count, t, op, MPI_COMM_WORLD);
    case C_RSCAT: return MPI_Reduce_scatter(sb, rb, rcounts, t, op, MPI_COMM_WORLD);
    case C_RSCAT_BLOCK: return MPI_Reduce_scatter_block(sb, rb, count, t, op, MPI_COMM_WORLD);
    case C_SCAN: return MPI_Scan(sb, rb, count, t, op, MPI_COMM_WORLD);
    default: return MPI_Exscan(sb, rb, count, t, op, MPI_COMM_WORLD);
    }
}

/* The nonblocking or persistent one (what the shim serves), waited for. */
static int shimmed(enum coll c, enum form f, const void *sb, void *rb,
                   int count, MPI_Datatype t, MPI_Op op)
{
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Comm w = MPI_COMM_WORLD;
    int rc;
    if (f == NONBLOCKING) {
        switch (c) {
        case C_REDUCE: rc = MPI_Ireduce(sb, rb, count, t, op, 0, w, &r); break;
        case C_ALLREDUCE: rc = MPI_Iallreduce(sb, rb, count, t, op, w, &r); break;
        case C_RSCAT: rc = MPI_Ireduce_scatter(sb, rb, rcounts, t, op, w, &r); break;
        case C_RSCAT_BLOCK: rc = MPI_Ireduce_scatter_block(sb, rb, count, t, op, w, &r); break;
        case C_SCAN: rc = MPI_Iscan(sb, rb, count, t, op, w, &r); break;
        default: rc = MPI_Iexscan(sb, rb, count, t, op, w, &r);
        }
    } else {
#if HAVE_P
        switch (c) {
        case C_REDUCE: rc = P(Reduce)(sb, rb, count, t, op, 0, w, MPI_INFO_NULL, &r); break;
        case C_ALLREDUCE: rc = P(Allreduce)(sb, rb, count, t, op, w, MPI_INFO_NULL, &r); break;
        case C_RSCAT: rc = P(Reduce_scatter)(sb, rb, rcounts, t, op, w, MPI_INFO_NULL, &r); break;
        case C_RSCAT_BLOCK: rc = P(Reduce_scatter_block)(sb, rb, count, t, op, w, MPI_INFO_NULL, &r); break;
        case C_SCAN: rc = P(Scan)(sb, rb, count, t, op, w, MPI_INFO_NULL, &r); break;
        default: rc = P(Exscan)(sb, rb, count, t, op, w, MPI_INFO_NULL, &r);
        }
        if (rc == MPI_SUCCESS)
            rc = MPI_Start(&r);
#else
        (void)sb, (void)rb, (void)count, (void)t, (void)op, (void)w;
        return MPI_ERR_OTHER;
#endif
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (f == PERSISTENT && r != MPI_REQUEST_NULL)
        MPI_Request_free(&r);
    return rc;
}

/* ---- counting what the shim did ---- */

static counts_fn *g_counts;
static int g_expect_shim, g_verbose; /* PMPI_TYPES_VERBOSE=1 */

static long long served_now(long long *native_)
{
    long long s = 0;
    *native_ = 0;
    if (g_counts)
        g_counts(&s, native_);
    return s;
}

/* ---- the matrix ---- */

static long long n_checked, n_passed, n_native_fail, n_other;

/* One combination on every rank; agreed across ranks so that every rank
 * skips the same ones. */
static void one(const struct tdesc *d, const struct odesc *o, enum coll c,
                enum form f, int count, int inplace)
{
    int tsize;
    MPI_Aint lb, ext;
    MPI_Type_size(d->t, &tsize);
    MPI_Type_get_extent(d->t, &lb, &ext);
    int nsend, nrecv;
    sizes(c, count, &nsend, &nrecv);
    if (g_verbose && t_rank == 0)
        fprintf(stderr, "%s %s %s %s count %d%s\n", coll_names[c],
                f ? "persistent" : "i", d->name, o->name, count,
                inplace ? " in place" : "");
    size_t sbytes = (size_t)ext * (size_t)nsend;
    size_t rbytes = (size_t)ext * (size_t)(nsend > nrecv ? nsend : nrecv);
    char *in = malloc(sbytes), *ref = malloc(rbytes), *got = malloc(rbytes);
    fill(d, tsize, ext, in, nsend, 0);
    /* MPI_Reduce: only the root may give MPI_IN_PLACE. */
    const void *sb = inplace && (c != C_REDUCE || t_rank == 0)
                         ? MPI_IN_PLACE
                         : in;
    /* Native, on the same input. */
    memset(ref, 0, rbytes);
    if (inplace)
        memcpy(ref, in, sbytes);
    int nrc = native(c, sb, ref, count, d->t, o->op);
    int native_ok = nrc == MPI_SUCCESS, all_ok;
    MPI_Allreduce(&native_ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (g_verbose && t_rank == 0)
            fprintf(stderr, "refused by the native library: %s %s %s\n",
                    coll_names[c], d->name, o->name);
        n_native_fail++;
        goto out;
    }
    n_checked++;
    memset(got, 0, rbytes);
    if (inplace)
        memcpy(got, in, sbytes);
    long long nat0, nat1;
    long long s0 = served_now(&nat0);
    int rc = shimmed(c, f, sb, got, count, d->t, o->op);
    long long s1 = served_now(&nat1);
    int fails = t_failures;
    t_step = coll_names[c];
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        FAIL("%s %s %s count %d%s: rc %d (%s)", f ? "persistent" : "i",
             d->name, o->name, count, inplace ? " in place" : "", rc, msg);
    } else {
        int check = !(c == C_EXSCAN && t_rank == 0) &&
                    !(c == C_REDUCE && t_rank != 0);
        int bad = check ? equal(d, tsize, ext, ref, got, nrecv) : -1;
        if (bad >= 0)
            FAIL("%s %s %s count %d%s: element %d differs from the "
                 "native result", f ? "persistent" : "i", d->name, o->name,
                 count, inplace ? " in place" : "", bad);
    }
    if (g_expect_shim && (s1 != s0 + 1 || nat1 != nat0))
        FAIL("%s %s %s count %d%s: not served by nbcx (served +%lld, "
             "native +%lld)", f ? "persistent" : "i", d->name, o->name,
             count, inplace ? " in place" : "", s1 - s0, nat1 - nat0);
    if (t_failures == fails)
        n_passed++;
out:
    free(in);
    free(ref);
    free(got);
}

/* A predefined operation the standard does not define on the type. The
 * native libraries are no oracle here: Debian's MPICH, built without
 * argument checks, aborts (an assertion in its operation's kernel), and
 * Open MPI mostly returns MPI_ERR_OP. Under the shim the call must fail
 * with MPI_ERR_OP through the communicator's error handler
 * (MPI_ERRORS_RETURN here), as a checking library does, never abort, or
 * nbcx computes it (an integer type given a logical operation, say).
 * Counted both ways. Without the shim (NBCX_PMPI=off) it is skipped. */
static long long n_forbidden, n_forbidden_computed;

static void forbidden(const struct tdesc *d, const struct odesc *o)
{
    if (!g_expect_shim)
        return;
    enum { COUNT = 5 };
    int tsize;
    MPI_Aint lb, ext;
    MPI_Type_size(d->t, &tsize);
    MPI_Type_get_extent(d->t, &lb, &ext);
    size_t bytes = (size_t)ext * COUNT;
    char *in = malloc(bytes), *got = calloc(1, bytes);
    fill(d, tsize, ext, in, COUNT, 0);
    long long nat0, nat1;
    served_now(&nat0);
    if (g_verbose && t_rank == 0)
        fprintf(stderr, "not defined: iallreduce %s %s\n", d->name, o->name);
    MPI_Request r;
    int rc = MPI_Iallreduce(in, got, COUNT, d->t, o->op, MPI_COMM_WORLD, &r);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    served_now(&nat1);
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    t_step = "not defined by the standard";
    n_forbidden++;
    if (rc == MPI_SUCCESS)
        n_forbidden_computed++;
    (void)nat0, (void)nat1; /* a refusal is counted with the native calls */
    if (cls != MPI_SUCCESS && cls != MPI_ERR_OP)
        FAIL("iallreduce %s %s: error class %d, not MPI_ERR_OP", d->name,
             o->name, cls);
    free(in);
    free(got);
}

/* Data movement of every predefined type: ibcast, igather, iallgather,
 * ialltoall against the blocking ones. */
static void moved(const struct tdesc *d, int count)
{
    int tsize;
    MPI_Aint lb, ext;
    MPI_Type_size(d->t, &tsize);
    MPI_Type_get_extent(d->t, &lb, &ext);
    size_t one_ = (size_t)ext * (size_t)count, all = one_ * (size_t)t_size;
    char *in = malloc(all), *ref = malloc(all), *got = malloc(all);
    for (int k = 0; k < 4; k++) {
        fill(d, tsize, ext, in, count * t_size, k);
        memset(ref, 0, all);
        memset(got, 0, all);
        MPI_Request r;
        int rc1, rc2, n = count;
        switch (k) {
        case 0:
            memcpy(ref, in, one_);
            memcpy(got, in, one_);
            rc1 = MPI_Bcast(ref, count, d->t, 0, MPI_COMM_WORLD);
            rc2 = MPI_Ibcast(got, count, d->t, 0, MPI_COMM_WORLD, &r);
            t_step = "ibcast";
            break;
        case 1:
            rc1 = MPI_Gather(in, count, d->t, ref, count, d->t, 0, MPI_COMM_WORLD);
            rc2 = MPI_Igather(in, count, d->t, got, count, d->t, 0, MPI_COMM_WORLD, &r);
            n = t_rank == 0 ? count * t_size : 0;
            t_step = "igather";
            break;
        case 2:
            rc1 = MPI_Allgather(in, count, d->t, ref, count, d->t, MPI_COMM_WORLD);
            rc2 = MPI_Iallgather(in, count, d->t, got, count, d->t, MPI_COMM_WORLD, &r);
            n = count * t_size;
            t_step = "iallgather";
            break;
        default:
            rc1 = MPI_Alltoall(in, count, d->t, ref, count, d->t, MPI_COMM_WORLD);
            rc2 = MPI_Ialltoall(in, count, d->t, got, count, d->t, MPI_COMM_WORLD, &r);
            n = count * t_size;
            t_step = "ialltoall";
        }
        if (rc2 == MPI_SUCCESS)
            rc2 = MPI_Wait(&r, MPI_STATUS_IGNORE);
        n_checked++;
        if (rc1 != MPI_SUCCESS || rc2 != MPI_SUCCESS) {
            FAIL("%s count %d: native rc %d, shim rc %d", d->name, count, rc1,
                 rc2);
            continue;
        }
        /* Moved bytes are compared as bytes (MPI_PACKED, characters). */
        int bad = -1;
        for (int i = 0; i < n && bad < 0; i++)
            if (memcmp(ref + (size_t)i * (size_t)ext,
                       got + (size_t)i * (size_t)ext,
                       d->group == G_PAIR ? (size_t)d->vsize
                                          : (size_t)tsize) != 0 ||
                (d->group == G_PAIR &&
                 memcmp(ref + (size_t)i * (size_t)ext + d->xoff,
                        got + (size_t)i * (size_t)ext + d->xoff, 4) != 0))
                bad = i;
        if (bad >= 0)
            FAIL("%s count %d: element %d differs", d->name, count, bad);
        else
            n_passed++;
    }
    free(in);
    free(ref);
    free(got);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, -1);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int full = argc > 1 && !strcmp(argv[1], "full");
    static const int quick_counts[] = { 1, 5 };
    static const int full_counts[] = { 1, 5, 1000, 4099 };
    const int *counts = full ? full_counts : quick_counts;
    int ncounts = full ? 4 : 2;
    const char *e = getenv("NBCX_TEST_EXPECT_SHIM");
    g_expect_shim = e && *e == '1';
    g_verbose = getenv("PMPI_TYPES_VERBOSE") != NULL;
    g_counts = (counts_fn *)(size_t)dlsym(RTLD_DEFAULT, "nbcx_pmpi_counts");
    rcounts = malloc(sizeof *rcounts * (size_t)t_size);
    long long skipped_types = 0;
    for (int i = 0; i < NTYPES; i++) {
        const struct tdesc *d = &types[i];
        const char *only = getenv("PMPI_TYPES_ONLY"); /* one type's name */
        if (only && strcmp(only, d->name) != 0)
            continue;
        int tsize = 0;
        if (d->t == MPI_DATATYPE_NULL ||
            MPI_Type_size(d->t, &tsize) != MPI_SUCCESS || tsize == 0) {
            skipped_types++; /* optional, not defined by this library */
            continue;
        }
        for (int k = 0; k < ncounts; k++) {
            int count = counts[k];
            for (int r = 0; r < t_size; r++)
                rcounts[r] = count + r % 2;
            if (k < 2 || d->group == G_NONE || d->group == G_PAIR)
                moved(d, count);
            for (int o = 0; o < NOPS; o++) {
                if (!(ops[o].groups & d->group)) {
                    if (k == 0)
                        forbidden(d, &ops[o]);
                    continue;
                }
                for (int c = 0; c < NCOLL; c++)
                    for (int f = 0; f < NFORMS; f++) {
                        if (f == PERSISTENT && !HAVE_P)
                            continue;
                        for (int ip = 0; ip < 2; ip++)
                            one(d, &ops[o], (enum coll)c, (enum form)f,
                                count, ip);
                    }
            }
        }
    }
    free(rcounts);
    if (t_rank == 0)
        printf("pmpi_types (%s): %lld combinations checked, %lld passed, "
               "%lld refused by the native library (not checked), %lld "
               "optional types not defined\n", full ? "full" : "quick",
               n_checked, n_passed, n_native_fail, skipped_types);
    (void)n_other;
    if (t_rank == 0)
        printf("pmpi_types: %lld (type, operation) pairs the standard does "
               "not define: %lld computed by nbcx, the others MPI_ERR_OP\n",
               n_forbidden, n_forbidden_computed);
    return t_finish("pmpi_types");
}
