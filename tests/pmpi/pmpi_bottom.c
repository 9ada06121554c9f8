/* pmpi_bottom.c - MPI_BOTTOM with predefined datatypes in the w variants
 * (issue 33). Their displacements are in bytes, so MPI allows MPI_BOTTOM
 * (NULL) with any datatype: the displacements are then absolute
 * addresses. MPI_Ineighbor_alltoallw (MPI_Aint displacements, from
 * MPI_Get_address) and MPI_Ialltoallw (int displacements: the data sits
 * in a mapping below 2 GiB, so that its addresses fit an int), both with
 * MPI_INT, and their persistent forms, each against the native blocking
 * collective with the same arguments; every one of these calls must be
 * served by nbcx (counted with nbcx_pmpi_counts: none native). */
#include <stdint.h>
#include <sys/mman.h>

#include "pmpi_test.h"

enum { CNT = 3 }; /* ints per block */

static counts_fn *g_counts;

static void counts(long long *served, long long *native)
{
    *served = *native = 0;
    if (g_counts)
        g_counts(served, native);
}

static void fill(int *send, int *recv, int nblocks, int round)
{
    for (int i = 0; i < nblocks * CNT; i++) {
        send[i] = 100000 * round + 1000 * t_rank + i;
        recv[i] = -1;
    }
}

/* Two results the same? */
static void same(const int *got, const int *want, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) {
            FAIL("%s: element %d is %d, native %d", what, i, got[i], want[i]);
            return;
        }
}

/* The served and native counts moved as expected for ncalls calls. */
static void all_served(long long s0, long long n0, long long ncalls,
                       const char *what)
{
    long long s1, n1;
    counts(&s1, &n1);
    if (s1 - s0 != ncalls || n1 != n0)
        FAIL("%s: %lld calls served by nbcx, %lld native (want %lld, 0)",
             what, s1 - s0, n1 - n0, ncalls);
}

static void neighbor(void)
{
    /* Sends to the right neighbour and to itself, receives from the left
     * and from itself: no neighbour twice in a list (the order of two
     * messages from one peer differs between Open MPI 4.1's blocking and
     * nonblocking neighbourhood collectives). */
    MPI_Comm ring;
    int dst[2] = { (t_rank + 1) % t_size, t_rank };
    int src[2] = { (t_rank + t_size - 1) % t_size, t_rank };
    int w[2] = { 1, 1 }; /* (MPI_UNWEIGHTED upsets GCC 12) */
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, w, 2, dst, w, MPI_INFO_NULL, 0, &ring));
    int send[2 * CNT], recv[2 * CNT], want[2 * CNT];
    int c[2] = { CNT, CNT };
    MPI_Aint sd[2], rd[2];
    MPI_Datatype ty[2] = { MPI_INT, MPI_INT };
    for (int k = 0; k < 2; k++) {
        MPI_OK(MPI_Get_address(&send[k * CNT], &sd[k]));
        MPI_OK(MPI_Get_address(&recv[k * CNT], &rd[k]));
    }
    long long s0, n0;
    t_step = "ineighbor_alltoallw, MPI_BOTTOM + MPI_INT";
    fill(send, recv, 2, 0);
    MPI_OK(MPI_Neighbor_alltoallw(MPI_BOTTOM, c, sd, ty, MPI_BOTTOM, c, rd, ty, ring));
    memcpy(want, recv, sizeof want);
    fill(send, recv, 2, 0);
    counts(&s0, &n0);
    MPI_Request r;
    MPI_OK(MPI_Ineighbor_alltoallw(MPI_BOTTOM, c, sd, ty, MPI_BOTTOM, c, rd, ty, ring, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    all_served(s0, n0, 1, t_step);
    same(recv, want, 2 * CNT, t_step);
#if HAVE_P
    t_step = "neighbor_alltoallw_init, MPI_BOTTOM + MPI_INT";
    counts(&s0, &n0);
    MPI_OK(P(Neighbor_alltoallw)(MPI_BOTTOM, c, sd, ty, MPI_BOTTOM, c, rd, ty, ring, MPI_INFO_NULL, &r));
    for (int round = 1; round <= 2; round++) {
        fill(send, recv, 2, round);
        MPI_OK(MPI_Neighbor_alltoallw(MPI_BOTTOM, c, sd, ty, MPI_BOTTOM, c, rd, ty, ring));
        memcpy(want, recv, sizeof want);
        fill(send, recv, 2, round);
        MPI_OK(MPI_Start(&r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        same(recv, want, 2 * CNT, t_step);
    }
    MPI_OK(MPI_Request_free(&r));
    all_served(s0, n0, 1, t_step);
#endif
    MPI_Comm_free(&ring);
}

/* Memory whose addresses fit an int (MPI_Ialltoallw's displacements):
 * a mapping asked for below 2 GiB; NULL when the system gives none. */
static void *low_memory(size_t bytes)
{
    for (uintptr_t hint = 0x10000000u; hint < 0x70000000u; hint += 0x8000000u) {
        void *p = mmap((void *)hint, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            continue;
        if ((uintptr_t)p + bytes < 0x7fffffffu)
            return p;
        munmap(p, bytes);
    }
    return NULL;
}

static void alltoallw(void)
{
    int n = t_size;
    size_t bytes = sizeof(int) * (size_t)(2 * n * CNT);
    int *mem = low_memory(bytes);
    if (!mem) {
        FAIL("no memory below 2 GiB: MPI_Ialltoallw cannot be tested");
        return;
    }
    int *send = mem, *recv = mem + n * CNT;
    int *want = malloc(sizeof(int) * (size_t)(n * CNT));
    int *c = malloc(sizeof(int) * (size_t)n);
    int *sd = malloc(sizeof(int) * (size_t)n);
    int *rd = malloc(sizeof(int) * (size_t)n);
    /* Receive types in an array of their own: MPICH 4.0.2 refuses
     * MPI_Alltoallw with sendbuf == recvbuf (both MPI_BOTTOM here) when
     * the two sides share their count and type arrays ("Buffers must not
     * be aliased"). */
    MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)(2 * n));
    if (!want || !c || !sd || !rd || !ty) {
        FAIL("out of memory");
        return;
    }
    for (int k = 0; k < n; k++) {
        c[k] = CNT;
        /* The blocks in reverse order, at their absolute addresses. */
        sd[k] = (int)(uintptr_t)&send[(n - 1 - k) * CNT];
        rd[k] = (int)(uintptr_t)&recv[(n - 1 - k) * CNT];
        ty[k] = ty[n + k] = MPI_INT;
    }
    MPI_Datatype *rty = ty + n;
    long long s0, n0;
    t_step = "ialltoallw, MPI_BOTTOM + MPI_INT";
    fill(send, recv, n, 0);
    MPI_OK(MPI_Alltoallw(MPI_BOTTOM, c, sd, ty, MPI_BOTTOM, c, rd, rty, MPI_COMM_WORLD));
    memcpy(want, recv, sizeof(int) * (size_t)(n * CNT));
    fill(send, recv, n, 0);
    counts(&s0, &n0);
    MPI_Request r;
    MPI_OK(MPI_Ialltoallw(MPI_BOTTOM, c, sd, ty, MPI_BOTTOM, c, rd, rty, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    all_served(s0, n0, 1, t_step);
    same(recv, want, n * CNT, t_step);
#if HAVE_P
    t_step = "alltoallw_init, MPI_BOTTOM + MPI_INT";
    counts(&s0, &n0);
    MPI_OK(P(Alltoallw)(MPI_BOTTOM, c, sd, ty, MPI_BOTTOM, c, rd, rty, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    for (int round = 1; round <= 2; round++) {
        fill(send, recv, n, round);
        MPI_OK(MPI_Alltoallw(MPI_BOTTOM, c, sd, ty, MPI_BOTTOM, c, rd, rty, MPI_COMM_WORLD));
        memcpy(want, recv, sizeof(int) * (size_t)(n * CNT));
        fill(send, recv, n, round);
        MPI_OK(MPI_Start(&r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        same(recv, want, n * CNT, t_step);
    }
    MPI_OK(MPI_Request_free(&r));
    all_served(s0, n0, 1, t_step);
#endif
    free(want);
    free(c);
    free(sd);
    free(rd);
    free(ty);
    munmap(mem, bytes);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, -1);
    g_counts = (counts_fn *)(size_t)dlsym(RTLD_DEFAULT, "nbcx_pmpi_counts");
    if (!g_counts)
        FAIL("libnbcx-pmpi is not loaded");
    neighbor();
    alltoallw();
    return t_finish("pmpi_bottom");
}
