/* pmpi_derived.c - derived datatypes through the shim: a vector with
 * gaps, an indexed type, a struct with gaps, a resized type, one with a
 * negative lower bound, and absolute addresses with MPI_BOTTOM, in ibcast,
 * igather, iscatter, iallgather, ialltoall, ialltoallw and iallreduce
 * (MPI_SUM, where the native library reduces the type), each against the
 * native blocking collective on the same input; and absolute addresses
 * with MPI_BOTTOM in ibcast and ialltoallw. Every call must be
 * served by nbcx (NBCX_TEST_EXPECT_SHIM=1). */
#include <stddef.h>
#include <stdint.h>

#include "pmpi_test.h"

enum { MARGIN = 64, SPAN = 256 }; /* ints around and in one element */

struct gappy {
    int a;
    double d; /* 4 bytes of padding before it */
    short s;  /* and 6 after it */
};

static counts_fn *g_counts;

static long long served(void)
{
    long long s = 0, n = 0;
    if (g_counts)
        g_counts(&s, &n);
    return s;
}

/* The derived types, by name. which: 0 vector, 1 indexed, 2 struct, 3
 * resized, 4 negative lower bound; with MPI 4.0, 5 and 6: an indexed
 * block and a vector made by the large-count constructors (mpi4py 4 makes
 * its types so; MPICH 4.0.2's MPI_Type_get_envelope fails on them, which
 * sent these collectives native under the shim). */
static const char *const names[] = { "vector", "indexed", "struct",
                                     "resized", "negative-lb",
                                     "indexed-block-c", "vector-c" };
#if MPI_VERSION >= 4
enum { NTYPES = 7 };
#else
enum { NTYPES = 5 };
#endif

static MPI_Datatype make(int which)
{
    MPI_Datatype t, inner;
    switch (which) {
    case 0:
        MPI_Type_vector(3, 2, 5, MPI_INT, &t);
        break;
    case 1: {
        int bl[3] = { 1, 3, 2 }, dp[3] = { 0, 4, 11 };
        MPI_Type_indexed(3, bl, dp, MPI_INT, &t);
        break;
    }
    case 2: {
        int bl[3] = { 1, 1, 1 };
        MPI_Aint dp[3] = { offsetof(struct gappy, a),
                           offsetof(struct gappy, d),
                           offsetof(struct gappy, s) };
        MPI_Datatype ty[3] = { MPI_INT, MPI_DOUBLE, MPI_SHORT };
        MPI_Type_create_struct(3, bl, dp, ty, &inner);
        MPI_Type_create_resized(inner, 0, sizeof(struct gappy), &t);
        MPI_Type_free(&inner);
        break;
    }
    case 3:
        MPI_Type_contiguous(3, MPI_INT, &inner);
        MPI_Type_create_resized(inner, 0, 7 * sizeof(int), &t);
        MPI_Type_free(&inner);
        break;
#if MPI_VERSION >= 4
    case 5: {
        MPI_Count dp[4] = { 1, 3, 4, 8 };
        MPI_Type_create_indexed_block_c(4, 2, dp, MPI_INT, &t);
        break;
    }
    case 6:
        MPI_Type_vector_c(2, 3, 4, MPI_INT, &t);
        break;
#endif
    default: {
        /* Two ints at -8 and 0 bytes: lower bound -8, extent 12. */
        int bl[2] = { 1, 1 }, dp[2] = { -2, 0 };
        MPI_Type_indexed(2, bl, dp, MPI_INT, &t);
        break;
    }
    }
    MPI_Type_commit(&t);
    return t;
}

/* Integers only (MPI_SUM on them is defined by both libraries). */
static int homogeneous(int which)
{
    return which != 2;
}

static void fill(int *v, size_t n, int salt)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (int)((size_t)t_rank * 1000 + i * 7 + (size_t)salt) % 251;
}

/* Compares the bytes the type map covers (count elements at p). */
static int same_map(const char *a, const char *b, size_t bytes)
{
    return memcmp(a, b, bytes) == 0;
}

static void one_type(int which)
{
    t_step = names[which];
    MPI_Datatype t = make(which);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    int n = t_size;
    size_t ints = (size_t)MARGIN * 2 + (size_t)SPAN * (size_t)n * 2;
    int *in = calloc(ints, sizeof(int)), *ref = calloc(ints, sizeof(int)),
        *got = calloc(ints, sizeof(int));
    /* Buffers start MARGIN ints in: room for a negative lower bound. */
    int *pi = in + MARGIN, *pr = ref + MARGIN, *pg = got + MARGIN;
    size_t bytes = ints * sizeof(int);
    MPI_Request r;
    for (int k = 0; k < 7; k++) {
        fill(in, ints, k);
        memset(ref, 0, bytes);
        memset(got, 0, bytes);
        long long s0 = served();
        int rc1 = MPI_SUCCESS, rc2 = MPI_SUCCESS, skip = 0;
        const char *what = "";
        switch (k) {
        case 0:
            what = "ibcast";
            memcpy(ref, in, bytes);
            memcpy(got, in, bytes);
            rc1 = MPI_Bcast(pr, 2, t, 0, MPI_COMM_WORLD);
            rc2 = MPI_Ibcast(pg, 2, t, 0, MPI_COMM_WORLD, &r);
            break;
        case 1:
            what = "igather";
            rc1 = MPI_Gather(pi, 1, t, pr, 1, t, 0, MPI_COMM_WORLD);
            rc2 = MPI_Igather(pi, 1, t, pg, 1, t, 0, MPI_COMM_WORLD, &r);
            break;
        case 2:
            what = "iscatter";
            rc1 = MPI_Scatter(pi, 1, t, pr, 1, t, 0, MPI_COMM_WORLD);
            rc2 = MPI_Iscatter(pi, 1, t, pg, 1, t, 0, MPI_COMM_WORLD, &r);
            break;
        case 3:
            what = "iallgather";
            rc1 = MPI_Allgather(pi, 1, t, pr, 1, t, MPI_COMM_WORLD);
            rc2 = MPI_Iallgather(pi, 1, t, pg, 1, t, MPI_COMM_WORLD, &r);
            break;
        case 4:
            what = "ialltoall";
            rc1 = MPI_Alltoall(pi, 1, t, pr, 1, t, MPI_COMM_WORLD);
            rc2 = MPI_Ialltoall(pi, 1, t, pg, 1, t, MPI_COMM_WORLD, &r);
            break;
        case 5: {
            what = "ialltoallw";
            int *c = malloc(sizeof(int) * 2 * (size_t)n);
            int *dsp = c + n;
            MPI_Datatype *ty = malloc(sizeof *ty * (size_t)n);
            for (int j = 0; j < n; j++) {
                c[j] = 1;
                dsp[j] = (int)(j * ext);
                ty[j] = t;
            }
            rc1 = MPI_Alltoallw(pi, c, dsp, ty, pr, c, dsp, ty, MPI_COMM_WORLD);
            rc2 = MPI_Ialltoallw(pi, c, dsp, ty, pg, c, dsp, ty,
                                 MPI_COMM_WORLD, &r);
            if (rc2 == MPI_SUCCESS)
                rc2 = MPI_Wait(&r, MPI_STATUS_IGNORE);
            free(c);
            free(ty);
            skip = 2; /* waited already */
            break;
        }
        default:
            what = "iallreduce";
            if (!homogeneous(which)) {
                skip = 1;
                break;
            }
            rc1 = MPI_Allreduce(pi, pr, 2, t, MPI_SUM, MPI_COMM_WORLD);
            {
                int ok = rc1 == MPI_SUCCESS, all = 0;
                MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
                if (!all) { /* the library refuses the type with MPI_SUM */
                    if (t_rank == 0)
                        printf("pmpi_derived: iallreduce of %s refused by "
                               "the native library\n", names[which]);
                    skip = 1;
                    break;
                }
            }
            /* Served by nbcx where the library's MPI_Reduce_local takes
             * the pair, else handed to the library: not counted. */
            s0 = -1;
            rc2 = MPI_Iallreduce(pi, pg, 2, t, MPI_SUM, MPI_COMM_WORLD, &r);
        }
        t_step = what;
        if (getenv("PMPI_DERIVED_VERBOSE"))
            fprintf(stderr, "rank %d: %s of %s started\n", t_rank, what,
                    names[which]);
        if (skip == 1)
            continue;
        if (skip == 0 && rc2 == MPI_SUCCESS)
            rc2 = MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (rc1 != MPI_SUCCESS) {
            if (t_rank == 0)
                printf("pmpi_derived: %s %s refused by the native library\n",
                       what, names[which]);
            continue;
        }
        if (rc2 != MPI_SUCCESS)
            FAIL("%s of %s: rc %d", what, names[which], rc2);
        else if (!same_map((char *)ref, (char *)got, bytes))
            FAIL("%s of %s: result differs from the native one", what,
                 names[which]);
        if (getenv("NBCX_TEST_EXPECT_SHIM") && s0 >= 0 && served() != s0 + 1)
            FAIL("%s of %s: not served by nbcx", what, names[which]);
    }
    MPI_Type_free(&t);
    free(in);
    free(ref);
    free(got);
}

/* MPI_BOTTOM: three ints of an array at their absolute addresses. */
static MPI_Datatype absolute(int *base)
{
    MPI_Aint a[3];
    int bl[3] = { 1, 2, 1 };
    MPI_Get_address(base, &a[0]);
    MPI_Get_address(base + 3, &a[1]);
    MPI_Get_address(base + 9, &a[2]);
    MPI_Datatype t;
    MPI_Type_create_hindexed(3, bl, a, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

static void bottom(void)
{
    int n = t_size;
    enum { K = 16 };
    int *in = calloc((size_t)(K * n), sizeof(int)),
        *ref = calloc((size_t)(K * n), sizeof(int)),
        *got = calloc((size_t)(K * n), sizeof(int));
    fill(in, (size_t)(K * n), 9);
    MPI_Request r;
    /* ibcast */
    t_step = "MPI_BOTTOM ibcast";
    memcpy(ref, in, sizeof(int) * K);
    memcpy(got, in, sizeof(int) * K);
    MPI_Datatype tr = absolute(ref), tg = absolute(got);
    long long s0 = served();
    MPI_OK(MPI_Bcast(MPI_BOTTOM, 1, tr, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Ibcast(MPI_BOTTOM, 1, tg, 0, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(memcmp(ref, got, sizeof(int) * K) == 0);
    if (getenv("NBCX_TEST_EXPECT_SHIM"))
        CHECK(served() == s0 + 1);
    /* ialltoallw: block j of in and of got at absolute addresses */
    t_step = "MPI_BOTTOM ialltoallw";
    fill(in, (size_t)(K * n), 11);
    memset(ref, 0, sizeof(int) * K * (size_t)n);
    memset(got, 0, sizeof(int) * K * (size_t)n);
    int *c = malloc(sizeof(int) * 2 * (size_t)n), *d = c + n;
    MPI_Datatype *st = malloc(sizeof *st * 3 * (size_t)n), *rt = st + n,
                 *gt = st + 2 * n;
    for (int j = 0; j < n; j++) {
        c[j] = 1;
        d[j] = 0;
        st[j] = absolute(in + K * j);
        rt[j] = absolute(ref + K * j);
        gt[j] = absolute(got + K * j);
    }
    s0 = served();
    MPI_OK(MPI_Alltoallw(MPI_BOTTOM, c, d, st, MPI_BOTTOM, c, d, rt,
                         MPI_COMM_WORLD));
    MPI_OK(MPI_Ialltoallw(MPI_BOTTOM, c, d, st, MPI_BOTTOM, c, d, gt,
                          MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(memcmp(ref, got, sizeof(int) * K * (size_t)n) == 0);
    if (getenv("NBCX_TEST_EXPECT_SHIM"))
        CHECK(served() == s0 + 1);
    for (int j = 0; j < n; j++) {
        MPI_Type_free(&st[j]);
        MPI_Type_free(&rt[j]);
        MPI_Type_free(&gt[j]);
    }
    free(c);
    free(st);
    MPI_Type_free(&tr);
    MPI_Type_free(&tg);
    free(in);
    free(ref);
    free(got);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, -1);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    g_counts = (counts_fn *)(size_t)dlsym(RTLD_DEFAULT, "nbcx_pmpi_counts");
    for (int w = 0; w < NTYPES; w++)
        one_type(w);
    bottom();
    return t_finish("pmpi_derived");
}
