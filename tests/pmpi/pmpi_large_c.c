/* pmpi_large_c.c - the MPI-4 large-count calls (MPI_I<op>_c,
 * MPI_<op>_init_c) served by nbcx under the shim (issue 38), on an MPI-4
 * library (MPICH 4.0; Open MPI 4.1 has no _c calls and the program
 * passes doing nothing there).
 *
 * Each call is made with MPI_Count counts and MPI_Aint displacements
 * and checked against the native blocking _c collective on the same
 * inputs, and against the shim's counts (nbcx_pmpi_counts): every call
 * here must be served by nbcx, none sent native. Before the shim called
 * nbcx's large-count API (nbcx_i<op>_c) it converted to int and went
 * native whenever a count or displacement did not fit; the second half
 * uses displacements above INT_MAX (2^31 + 4 KiB bytes into a buffer of
 * 2^31 + 12 KiB, mapped with MAP_NORESERVE: only the pages touched are
 * memory), which nbcx now serves, and a bcast of more than INT_MAX
 * elements (of an empty type: nbcx builds it in pieces).
 *
 * Run: mpiexec -n 2 pmpi_large_c (ctest: pmpi.pmpi_large_c.<mode>.np2).
 */
#include <limits.h>
#include <stdint.h>
#include <sys/mman.h>

#include "pmpi_test.h"

#if MPI_VERSION >= 4

enum { B = 5 };
#define BIG (((MPI_Aint)1 << 31) + 4096) /* a displacement above INT_MAX */
#define SPAN ((size_t)BIG + 8192)

static long long served0, native0;

static void counts_begin(void)
{
    t_counts(&served0, &native0);
}

/* The calls since counts_begin: all served by nbcx (when the shim is
 * there). */
static void counts_end(int calls)
{
    long long s, n;
    if (!t_counts(&s, &n))
        return;
    if (s - served0 != calls || n != native0)
        FAIL("nbcx served %lld of %d calls, %lld went native", s - served0,
             calls, n - native0);
}

static void wait_free(MPI_Request *rq, int persistent)
{
    if (persistent) {
        MPI_OK(MPI_Start(rq));
        MPI_OK(MPI_Wait(rq, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Request_free(rq));
    } else {
        MPI_OK(MPI_Wait(rq, MPI_STATUS_IGNORE));
    }
}

static void same(const char *name, const void *exp, const void *got,
                 size_t bytes)
{
    t_step = name;
    if (memcmp(exp, got, bytes) != 0)
        FAIL("%s differs from the native blocking _c call", name);
}

/* Small counts, every kind of argument: scalars, count and displacement
 * arrays; nonblocking and persistent. */
static void small(void)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int n = t_size, sb[64], exp[64], got[64];
    MPI_Count cnt[8], one[8];
    MPI_Aint dsp[8], bdsp[8];
    MPI_Datatype types[8];
    MPI_Aint at = 0;
    for (int i = n - 1; i >= 0; i--) { /* blocks in reverse, with gaps */
        cnt[i] = i + 1;
        dsp[i] = at;
        at += cnt[i] + 1;
    }
    for (int i = 0; i < n; i++) {
        one[i] = 1;
        bdsp[i] = dsp[i] * (MPI_Aint)sizeof(int);
        types[i] = MPI_INT;
    }
    for (int i = 0; i < 64; i++)
        sb[i] = 100 * t_rank + i;
    MPI_Count mine = t_rank + 1;
    counts_begin();
    int calls = 0;
    for (int p = 0; p < 2; p++) {
        MPI_Request rq;
        /* bcast */
        memcpy(exp, sb, sizeof exp);
        memcpy(got, sb, sizeof got);
        MPI_OK(MPI_Bcast_c(exp, B, MPI_INT, 1 % n, w));
        MPI_OK(p ? MPI_Bcast_init_c(got, B, MPI_INT, 1 % n, w, MPI_INFO_NULL,
                                    &rq)
                 : MPI_Ibcast_c(got, B, MPI_INT, 1 % n, w, &rq));
        wait_free(&rq, p);
        same(p ? "bcast_init_c" : "ibcast_c", exp, got, sizeof exp);
        calls++;
        /* allreduce */
        memset(exp, 0, sizeof exp);
        memset(got, 0, sizeof got);
        MPI_OK(MPI_Allreduce_c(sb, exp, 2 * B, MPI_INT, MPI_SUM, w));
        MPI_OK(p ? MPI_Allreduce_init_c(sb, got, 2 * B, MPI_INT, MPI_SUM, w,
                                        MPI_INFO_NULL, &rq)
                 : MPI_Iallreduce_c(sb, got, 2 * B, MPI_INT, MPI_SUM, w,
                                    &rq));
        wait_free(&rq, p);
        same(p ? "allreduce_init_c" : "iallreduce_c", exp, got, sizeof exp);
        calls++;
        /* allgatherv: rank i's i + 1 elements at dsp[i] */
        memset(exp, 0x5a, sizeof exp);
        memset(got, 0x5a, sizeof got);
        MPI_OK(MPI_Allgatherv_c(sb, mine, MPI_INT, exp, cnt, dsp, MPI_INT,
                                w));
        MPI_OK(p ? MPI_Allgatherv_init_c(sb, mine, MPI_INT, got, cnt, dsp,
                                         MPI_INT, w, MPI_INFO_NULL, &rq)
                 : MPI_Iallgatherv_c(sb, mine, MPI_INT, got, cnt, dsp,
                                     MPI_INT, w, &rq));
        wait_free(&rq, p);
        same(p ? "allgatherv_init_c" : "iallgatherv_c", exp, got,
             sizeof exp);
        calls++;
        /* alltoallw: one int to and from each rank, byte displacements */
        memset(exp, 0x5a, sizeof exp);
        memset(got, 0x5a, sizeof got);
        MPI_OK(MPI_Alltoallw_c(sb, one, bdsp, types, exp, one, bdsp, types,
                               w));
        MPI_OK(p ? MPI_Alltoallw_init_c(sb, one, bdsp, types, got, one, bdsp,
                                        types, w, MPI_INFO_NULL, &rq)
                 : MPI_Ialltoallw_c(sb, one, bdsp, types, got, one, bdsp,
                                    types, w, &rq));
        wait_free(&rq, p);
        same(p ? "alltoallw_init_c" : "ialltoallw_c", exp, got, sizeof exp);
        calls++;
        /* reduce_scatter: rank i gets cnt[i] sums */
        memset(exp, 0x5a, sizeof exp);
        memset(got, 0x5a, sizeof got);
        MPI_OK(MPI_Reduce_scatter_c(sb, exp, cnt, MPI_INT, MPI_SUM, w));
        MPI_OK(p ? MPI_Reduce_scatter_init_c(sb, got, cnt, MPI_INT, MPI_SUM,
                                             w, MPI_INFO_NULL, &rq)
                 : MPI_Ireduce_scatter_c(sb, got, cnt, MPI_INT, MPI_SUM, w,
                                         &rq));
        wait_free(&rq, p);
        same(p ? "reduce_scatter_init_c" : "ireduce_scatter_c", exp, got,
             sizeof exp);
        calls++;
    }
    t_step = "small counts";
    counts_end(calls);
}

/* Displacements above INT_MAX: a block 2^31 + 4 KiB into the receive
 * (allgatherv, gatherv) or send (scatterv) buffer. */
static void big_displacements(void)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int n = t_size;
    if (n > 2) {
        if (t_rank == 0)
            printf("pmpi_large_c: big displacements on 1-2 ranks only\n");
        return;
    }
    const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    unsigned char *exp = mmap(NULL, SPAN, PROT_READ | PROT_WRITE, flags, -1,
                              0);
    unsigned char *got = mmap(NULL, SPAN, PROT_READ | PROT_WRITE, flags, -1,
                              0);
    if (exp == MAP_FAILED || got == MAP_FAILED) {
        FAIL("mmap of 2 x %zu bytes failed", SPAN);
        return;
    }
    enum { LEN = 3000 }; /* crosses a page */
    unsigned char sb[LEN];
    for (int i = 0; i < LEN; i++)
        sb[i] = (unsigned char)(7 * t_rank + 13 * i + 1);
    /* rank 0's block at 0, rank 1's at BIG */
    MPI_Count cnt[2] = { LEN, LEN };
    MPI_Aint dsp[2] = { 0, BIG };
    counts_begin();
    MPI_Request rq;
    /* allgatherv */
    MPI_OK(MPI_Allgatherv_c(sb, LEN, MPI_BYTE, exp, cnt, dsp, MPI_BYTE, w));
    MPI_OK(MPI_Iallgatherv_c(sb, LEN, MPI_BYTE, got, cnt, dsp, MPI_BYTE, w,
                             &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++)
        same("iallgatherv_c (displacement 2^31 + 4 KiB)", exp + dsp[i],
             got + dsp[i], LEN);
    /* gatherv at rank 0 */
    memset(got + BIG, 0, LEN);
    memset(exp + BIG, 0, LEN);
    MPI_OK(MPI_Gatherv_c(sb, LEN, MPI_BYTE, exp, cnt, dsp, MPI_BYTE, 0, w));
    MPI_OK(MPI_Igatherv_c(sb, LEN, MPI_BYTE, got, cnt, dsp, MPI_BYTE, 0, w,
                          &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    if (t_rank == 0)
        for (int i = 0; i < n; i++)
            same("igatherv_c (displacement 2^31 + 4 KiB)", exp + dsp[i],
                 got + dsp[i], LEN);
    /* scatterv from rank 0's buffer (got holds the blocks) */
    unsigned char re[LEN], rg[LEN];
    memset(re, 0, LEN);
    memset(rg, 1, LEN);
    MPI_OK(MPI_Scatterv_c(exp, cnt, dsp, MPI_BYTE, re, LEN, MPI_BYTE, 0, w));
    MPI_OK(MPI_Iscatterv_c(exp, cnt, dsp, MPI_BYTE, rg, LEN, MPI_BYTE, 0, w,
                           &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    same("iscatterv_c (displacement 2^31 + 4 KiB)", re, rg, LEN);
    t_step = "big displacements";
    counts_end(3);
    /* A count above INT_MAX of an empty type (nothing moves): bcast is
     * one of the collectives nbcx builds in pieces, so nbcx serves it. */
    MPI_Datatype empty;
    MPI_OK(MPI_Type_contiguous(0, MPI_INT, &empty));
    MPI_OK(MPI_Type_commit(&empty));
    counts_begin();
    MPI_OK(MPI_Ibcast_c(got, (MPI_Count)INT_MAX + 5, empty, 0, w, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Type_free(&empty));
    t_step = "ibcast_c(count > INT_MAX)";
    counts_end(1);
    munmap(exp, SPAN);
    munmap(got, SPAN);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, -1);
    small();
    big_displacements();
    return t_finish("pmpi_large_c");
}

#else /* no _c calls (MPI-3 library): nothing to test */

int main(int argc, char **argv)
{
    t_init(&argc, &argv, -1);
    if (t_rank == 0)
        printf("pmpi_large_c: MPI %d has no large-count calls\n",
               MPI_VERSION);
    return t_finish("pmpi_large_c");
}

#endif
