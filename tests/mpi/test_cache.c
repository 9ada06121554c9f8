/*
 * test_cache.c - the schedule cache (src/api/cache.c) reuses the schedule
 * of a repeated identical nonblocking call and never changes a result.
 *
 *   1. The same iallreduce / ibcast / ialltoall on the same buffers, 50
 *      times with new data: every result equals MPI's, and the cache
 *      reports at least 49 hits per kind (nbcx_info's cache_hits).
 *   2. The algorithm changes between identical calls (nbcx_algorithm_set):
 *      the call misses the cache and gives the right result.
 *   3. Two identical calls in flight at once: both right (the second
 *      cannot share the first's schedule).
 *   4. A derived type freed and made again between identical calls.
 *   5. More distinct calls than the cache holds, cycled: right results
 *      while schedules are evicted.
 *   6. The communicator is freed with schedules in its cache (leaks are
 *      for the sanitizer build to find).
 *   7. The v and w variants, whose counts, displacements and types are
 *      in user arrays: iallgatherv and ialltoallw repeated on the same
 *      arrays hit the cache; the same arrays (same addresses) with other
 *      contents between identical calls miss it and give the right result,
 *      and so do block types freed and made again with another layout
 *      into the same slots of the types array; iscan hits too.
 */
#include "mpitest.h"

#define ROUNDS 50

static unsigned long cache_hits(void)
{
    char info[1024];
    MT_OK(nbcx_info(info, sizeof info));
    const char *p = strstr(info, "cache_hits=");
    if (!p) {
        mt_fail("nbcx_info does not report cache_hits: %s", info);
        return 0;
    }
    return strtoul(p + strlen("cache_hits="), NULL, 10);
}

/* in[i] = f(rank, round, i); checks an allreduce (sum) of n ints. */
static void allreduce_round(nbcx_comm comm, int *in, int *out, int *ref,
                            int n, int round, const char *what)
{
    for (int i = 0; i < n; i++)
        in[i] = (mt_rank + 1) * (round + 1) + i;
    nbcx_request req;
    MT_OK(nbcx_iallreduce(in, out, n, NBCX_INT32, NBCX_SUM, comm, &req));
    MT_OK(nbcx_wait(&req));
    MT_MPI(MPI_Allreduce(in, ref, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (memcmp(out, ref, sizeof(int) * (size_t)n) != 0)
        mt_fail("%s: round %d: allreduce result differs from MPI's", what,
                round);
}

static void repeated(nbcx_comm comm)
{
    enum { N = 300 };
    int in[N], out[N], ref[N];
    int *a2a_in = malloc(sizeof(int) * (size_t)mt_size * 4);
    int *a2a_out = malloc(sizeof(int) * (size_t)mt_size * 4);
    int *a2a_ref = malloc(sizeof(int) * (size_t)mt_size * 4);
    if (!a2a_in || !a2a_out || !a2a_ref)
        MPI_Abort(MPI_COMM_WORLD, 2);

    mt_watch("repeated allreduce");
    unsigned long h0 = cache_hits();
    for (int r = 0; r < ROUNDS; r++)
        allreduce_round(comm, in, out, ref, N, r, "repeated");
    unsigned long h1 = cache_hits();
    if (h1 - h0 < ROUNDS - 1)
        mt_fail("repeated allreduce: %lu cache hits in %d identical calls",
                h1 - h0, ROUNDS);

    mt_watch("repeated bcast and alltoall");
    for (int r = 0; r < ROUNDS; r++) {
        int root = 0; /* same root: same call */
        for (int i = 0; i < N; i++)
            in[i] = mt_rank == root ? r * 7 + i : -1;
        memcpy(ref, in, sizeof in);
        nbcx_request req;
        MT_OK(nbcx_ibcast(in, N, NBCX_INT32, root, comm, &req));
        MT_OK(nbcx_wait(&req));
        MT_MPI(MPI_Bcast(ref, N, MPI_INT, root, MPI_COMM_WORLD));
        if (memcmp(in, ref, sizeof in) != 0)
            mt_fail("repeated bcast: round %d differs from MPI", r);
        for (int i = 0; i < mt_size * 4; i++)
            a2a_in[i] = mt_rank * 1000 + r * 10 + i;
        MT_OK(nbcx_ialltoall(a2a_in, 4, NBCX_INT32, a2a_out, 4, NBCX_INT32,
                             comm, &req));
        MT_OK(nbcx_wait(&req));
        MT_MPI(MPI_Alltoall(a2a_in, 4, MPI_INT, a2a_ref, 4, MPI_INT,
                            MPI_COMM_WORLD));
        if (memcmp(a2a_out, a2a_ref, sizeof(int) * (size_t)mt_size * 4))
            mt_fail("repeated alltoall: round %d differs from MPI", r);
    }
    unsigned long h2 = cache_hits();
    if (h2 - h1 < 2 * (ROUNDS - 1))
        mt_fail("repeated bcast+alltoall: %lu cache hits in %d identical "
                "calls of each", h2 - h1, ROUNDS);

    /* 2: another algorithm for the same call. */
    mt_watch("algorithm change");
    static const char *const algs[] = {"ring", "recursive_doubling",
                                       "reduce_bcast", "auto"};
    for (int k = 0; k < 4; k++) {
        MT_OK(nbcx_algorithm_set("allreduce", algs[k]));
        unsigned long before = cache_hits();
        allreduce_round(comm, in, out, ref, N, 100 + k, algs[k]);
        if (k < 3 && cache_hits() != before)
            mt_fail("allreduce after switching to %s hit the cache",
                    algs[k]);
        allreduce_round(comm, in, out, ref, N, 200 + k, algs[k]);
    }

    /* 3: two identical calls in flight. */
    mt_watch("identical calls in flight");
    for (int r = 0; r < 5; r++) {
        nbcx_request q[2];
        int out2[N];
        for (int i = 0; i < N; i++)
            in[i] = mt_rank + r + i;
        MT_OK(nbcx_iallreduce(in, out, N, NBCX_INT32, NBCX_MAX, comm, &q[0]));
        /* same arguments as q[0]: must not share its schedule */
        MT_OK(nbcx_iallreduce(in, out2, N, NBCX_INT32, NBCX_MAX, comm,
                              &q[1]));
        MT_OK(nbcx_waitall(2, q));
        MT_MPI(MPI_Allreduce(in, ref, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        if (memcmp(out, ref, sizeof out) || memcmp(out2, ref, sizeof out2))
            mt_fail("two identical allreduces in flight: wrong result");
    }
    free(a2a_in);
    free(a2a_out);
    free(a2a_ref);
}

/* 4: a derived type freed and made again between identical calls. */
static void retyped(nbcx_comm comm)
{
    int buf[40], ref[40];
    mt_watch("derived type made again");
    for (int r = 0; r < 6; r++) {
        MPI_Datatype mt;
        nbcx_datatype nt;
        /* every other round a different layout of the same 40 ints */
        int blocks = r % 2 ? 4 : 2;
        MT_MPI(MPI_Type_contiguous(40 / blocks, MPI_INT, &mt));
        MT_MPI(MPI_Type_commit(&mt));
        MT_OK(nbcx_datatype_from_mpi(mt, &nt));
        for (int i = 0; i < 40; i++)
            buf[i] = mt_rank == 0 ? r * 100 + i : -1;
        memcpy(ref, buf, sizeof buf);
        nbcx_request req;
        MT_OK(nbcx_ibcast(buf, blocks, nt, 0, comm, &req));
        MT_OK(nbcx_wait(&req));
        MT_MPI(MPI_Bcast(ref, 40, MPI_INT, 0, MPI_COMM_WORLD));
        if (memcmp(buf, ref, sizeof buf) != 0)
            mt_fail("bcast with a remade derived type: round %d wrong", r);
        MT_OK(nbcx_datatype_free(&nt));
        MPI_Type_free(&mt);
    }
}

/* 5: more distinct calls than the cache holds (NBCX_SCHED_CACHE, 16 by
 * default), cycled through three times. */
static void evictions(nbcx_comm comm)
{
    enum { CALLS = 40, N = 8 };
    static int in[CALLS][N], out[CALLS][N], ref[N];
    mt_watch("evictions");
    for (int pass = 0; pass < 3; pass++)
        for (int c = 0; c < CALLS; c++) {
            for (int i = 0; i < N; i++)
                in[c][i] = mt_rank * 3 + pass * 5 + c + i;
            nbcx_request req;
            MT_OK(nbcx_iallreduce(in[c], out[c], N, NBCX_INT32, NBCX_SUM,
                                  comm, &req));
            MT_OK(nbcx_wait(&req));
            MT_MPI(MPI_Allreduce(in[c], ref, N, MPI_INT, MPI_SUM,
                                 MPI_COMM_WORLD));
            if (memcmp(out[c], ref, sizeof ref) != 0)
                mt_fail("evictions: pass %d call %d wrong", pass, c);
        }
}

/* 7: the v and w variants. Each round may rewrite counts, displs and
 * types in place (the same arrays, the same addresses). */
static void vectors(nbcx_comm comm)
{
    enum { MAXB = 6, ROOM = MAXB + 12 };
    const int p = mt_size;
    int *counts = malloc(sizeof(int) * (size_t)p);
    int *displs = malloc(sizeof(int) * (size_t)p);
    int *sin = malloc(sizeof(int) * (size_t)p * ROOM);
    int *out = malloc(sizeof(int) * (size_t)p * ROOM);
    int *ref = malloc(sizeof(int) * (size_t)p * ROOM);
    nbcx_datatype *ntypes = malloc(sizeof *ntypes * (size_t)p);
    MPI_Datatype *mtypes = malloc(sizeof *mtypes * (size_t)p);
    if (!counts || !displs || !sin || !out || !ref || !ntypes ||
        !mtypes)
        MPI_Abort(MPI_COMM_WORLD, 2);

    mt_watch("repeated and rewritten iallgatherv");
    unsigned long h0 = cache_hits(), rewrites = 0;
    for (int r = 0; r < 2 * ROUNDS; r++) {
        /* rounds 0..ROUNDS-1: one layout; then a new layout every 5th
         * round, none equal to another */
        int shape = r < ROUNDS ? 0 : 1 + (r - ROUNDS) / 5;
        for (int i = 0, at = 0; i < p; i++) {
            counts[i] = 1 + (i + shape) % MAXB;
            displs[i] = at + shape; /* a gap that differs per shape */
            at = displs[i] + counts[i];
        }
        rewrites += r >= ROUNDS && (r - ROUNDS) % 5 == 0;
        int mine = counts[mt_rank];
        for (int i = 0; i < mine; i++)
            sin[i] = mt_rank * 100 + r + i;
        for (int i = 0; i < p * ROOM; i++)
            out[i] = ref[i] = -7;
        nbcx_request req;
        MT_OK(nbcx_iallgatherv(sin, mine, NBCX_INT32, out, counts, displs,
                               NBCX_INT32, comm, &req));
        MT_OK(nbcx_wait(&req));
        /* the sequential reference (MPICH 4.0.2's own MPI_Allgatherv
         * ignores displs on one rank) */
        for (int j = 0; j < p; j++)
            for (int i = 0; i < counts[j]; i++)
                ref[displs[j] + i] = j * 100 + r + i;
        if (memcmp(out, ref, sizeof(int) * (size_t)p * ROOM) != 0)
            mt_fail("iallgatherv round %d (layout %d): differs from the "
                    "reference", r, shape);
        if (r == ROUNDS - 1 && cache_hits() - h0 < ROUNDS - 1)
            mt_fail("iallgatherv: %lu cache hits in %d identical calls",
                    cache_hits() - h0, ROUNDS);
    }
    /* every rewrite is a miss: at most the identical calls hit */
    unsigned long hits = cache_hits() - h0;
    if (hits > 2 * ROUNDS - rewrites - 1)
        mt_fail("iallgatherv: %lu hits in %d calls with %lu rewritten "
                "layouts: a rewritten array hit the cache",
                hits, 2 * ROUNDS, rewrites);

    mt_watch("repeated and retyped ialltoallw");
    for (int i = 0; i < p; i++) {
        counts[i] = 1;
        displs[i] = i * ROOM * (int)sizeof(int);
    }
    h0 = cache_hits();
    for (int r = 0; r < 12; r++) {
        /* every 4th round the block types are freed and made again,
         * with another length, into the same slots of the array */
        if (r % 4 == 0)
            for (int i = 0; i < p; i++) {
                MT_MPI(MPI_Type_contiguous(1 + (r / 4) % 3, MPI_INT,
                                           &mtypes[i]));
                MT_MPI(MPI_Type_commit(&mtypes[i]));
                MT_OK(nbcx_datatype_from_mpi(mtypes[i], &ntypes[i]));
            }
        for (int i = 0; i < p * ROOM; i++) {
            sin[i] = mt_rank * 1000 + r * 10 + i;
            out[i] = ref[i] = -7;
        }
        nbcx_request req;
        MT_OK(nbcx_ialltoallw(sin, counts, displs, ntypes, out, counts,
                              displs, ntypes, comm, &req));
        MT_OK(nbcx_wait(&req));
        MT_MPI(MPI_Alltoallw(sin, counts, displs, mtypes, ref, counts, displs,
                             mtypes, MPI_COMM_WORLD));
        if (memcmp(out, ref, sizeof(int) * (size_t)p * ROOM) != 0)
            mt_fail("ialltoallw round %d: differs from MPI", r);
        if (r % 4 == 3)
            for (int i = 0; i < p; i++) {
                MT_OK(nbcx_datatype_free(&ntypes[i]));
                MPI_Type_free(&mtypes[i]);
            }
    }
    if (cache_hits() - h0 < 9)
        mt_fail("ialltoallw: %lu cache hits in 12 calls, 3 of each of 3 "
                "type sets identical to the one before",
                cache_hits() - h0);

    mt_watch("repeated iscan");
    h0 = cache_hits();
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < MAXB; i++)
            sin[i] = mt_rank + r * i;
        nbcx_request req;
        MT_OK(nbcx_iscan(sin, out, MAXB, NBCX_INT32, NBCX_SUM, comm, &req));
        MT_OK(nbcx_wait(&req));
        MT_MPI(MPI_Scan(sin, ref, MAXB, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        if (memcmp(out, ref, sizeof(int) * MAXB) != 0)
            mt_fail("iscan round %d: differs from MPI", r);
    }
    if (cache_hits() - h0 < ROUNDS - 1)
        mt_fail("iscan: %lu cache hits in %d identical calls",
                cache_hits() - h0, ROUNDS);
    free(counts);
    free(displs);
    free(sin);
    free(out);
    free(ref);
    free(ntypes);
    free(mtypes);
}

int main(int argc, char **argv)
{
    nbcx_comm comm = NBCX_COMM_NULL;
    mt_init(&argc, &argv);
    double t0 = MPI_Wtime();
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
    repeated(comm);
    retyped(comm);
    evictions(comm);
    vectors(comm);
    mt_watch("teardown with a full cache");
    MT_OK(nbcx_comm_free(&comm));
    return mt_finish("test_cache", t0);
}
