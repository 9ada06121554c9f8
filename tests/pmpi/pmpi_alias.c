/* pmpi_alias.c - a send buffer equal to the receive buffer (or to this
 * rank's block of it) instead of MPI_IN_PLACE, under the shim.
 *
 * MPI forbids the overlap. The native libraries differ, and the shim
 * follows the one it runs on (gen_colls.py's ALIAS_IN_PLACE):
 *   MPICH refuses every such call with MPI_ERR_BUFFER: so must the shim,
 *     starting nothing (MPICH's own nonblocking-collective tests check it;
 *     nbcx used to start the operation, and a program that then went on,
 *     as those tests do, hung);
 *   Open MPI's libnbc runs it in place: so does the shim (nbcx, not the
 *     native library), and the result must be the native blocking
 *     collective's with MPI_IN_PLACE on the same input; (all)reduce and
 *     exscan, which Open MPI refuses (or fails), fail.
 * Every case runs on its own duplicate of MPI_COMM_WORLD with
 * MPI_ERRORS_RETURN. Rooted collectives: the root aliases, the others
 * pass their own buffers (on MPICH only the root calls: the others'
 * operation would have no partner). Nonblocking and, where the library
 * has them, persistent forms. And the valid case next to it: one array
 * holding an alltoallv's send and receive blocks apart (same_base_apart)
 * runs on nbcx, with the native result. */
#include "pmpi_test.h"

enum { B = 3 }; /* elements per block */

static long long native_calls(void)
{
    long long s, n;
    t_counts(&s, &n);
    return n;
}

static void fill(int *v, int n)
{
    for (int i = 0; i < n; i++)
        v[i] = 1000 * t_rank + 7 * i + 1;
}

#if defined(OPEN_MPI)
static const int in_place = 1; /* the library runs aliased calls in place */
#else
static const int in_place = 0; /* the library refuses them */
#endif

/* The outcome of one aliased call: rc and the request it left. */
static void outcome(const char *name, int rc, MPI_Request *q, int *got,
                    const int *want, int n, int must_fail, long long n0)
{
    t_step = name;
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (must_fail || !in_place) {
        if (rc == MPI_SUCCESS)
            FAIL("an aliased call succeeded (want an error)");
        else if (cls != MPI_ERR_BUFFER && cls != MPI_ERR_ARG)
            FAIL("error class %d (want MPI_ERR_BUFFER)", cls);
        if (*q != MPI_REQUEST_NULL)
            FAIL("a failed call left a request");
        return;
    }
    if (rc != MPI_SUCCESS) {
        FAIL("returned %d (class %d): Open MPI runs it in place", rc, cls);
        return;
    }
    MPI_OK(MPI_Wait(q, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) {
            FAIL("element %d: %d, in place natively %d", i, got[i], want[i]);
            break;
        }
    if (native_calls() != n0)
        FAIL("the call went to the native library");
}

/* One case on a fresh communicator: aliased(comm, buf, &req) must behave
 * as reference(comm, buf) does natively with MPI_IN_PLACE. */
typedef int aliased_fn(MPI_Comm c, int *buf, int *mine, MPI_Request *q,
                       int persistent);
typedef void reference_fn(MPI_Comm c, int *buf, int *mine);

static void run_case(const char *name, aliased_fn *al, reference_fn *ref,
                     int rooted, int must_fail, int persistent)
{
    int n = B * t_size * t_size, root = t_size - 1;
    int *got = malloc(sizeof(int) * (size_t)n);
    int *want = malloc(sizeof(int) * (size_t)n);
    int mine[B * 64], mine2[B * 64];
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    /* The shim joins a communicator to nbcx at its first collective, on
     * every rank (a collective step): so before the root alone calls. */
    MPI_Request wq;
    MPI_OK(MPI_Ibarrier(c, &wq));
    MPI_OK(MPI_Wait(&wq, MPI_STATUS_IGNORE));
    fill(got, n);
    fill(want, n);
    fill(mine, B * t_size);
    fill(mine2, B * t_size);
    if (ref && in_place && !must_fail)
        ref(c, want, mine2);
    if (!rooted || t_rank == root || (in_place && !must_fail)) {
        MPI_Request q = MPI_REQUEST_NULL;
        long long n0 = native_calls();
        int rc = al(c, got, mine, &q, persistent);
        if (persistent && rc == MPI_SUCCESS && q != MPI_REQUEST_NULL &&
            (!rooted || t_rank == root || in_place)) {
            MPI_OK(MPI_Start(&q));
            outcome(name, rc, &q, got, want, n, must_fail, n0);
            MPI_Request_free(&q);
        } else if (rooted && t_rank != root) {
            /* (a partner of the root's in-place call) */
            if (rc == MPI_SUCCESS)
                MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else {
            outcome(name, rc, &q, got, want, n, must_fail, n0);
        }
    }
    MPI_Barrier(c);
    MPI_Comm_free(&c);
    free(got);
    free(want);
}

#if HAVE_P
#define START(icall, pcall) (persistent ? (pcall) : (icall))
#else
#define START(icall, pcall) (persistent ? MPI_ERR_OTHER : (icall))
#endif

static int root_of(void) { return t_size - 1; }

static int al_allgather(MPI_Comm c, int *b, int *m, MPI_Request *q, int p)
{
    (void)m;
    int *own = b + B * t_rank;
    int persistent = p;
    return START(MPI_Iallgather(own, B, MPI_INT, b, B, MPI_INT, c, q),
                 P(Allgather)(own, B, MPI_INT, b, B, MPI_INT, c,
                              MPI_INFO_NULL, q));
}
static void ref_allgather(MPI_Comm c, int *b, int *m)
{
    (void)m;
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, B, MPI_INT, c);
}

static int cnts[64], disp[64];   /* v-forms: block i from/to rank i */
static int acnts[64], adisp[64]; /* alltoallv/w: symmetric counts */

static int al_allgatherv(MPI_Comm c, int *b, int *m, MPI_Request *q, int p)
{
    (void)m, (void)p;
    return MPI_Iallgatherv(b + disp[t_rank], cnts[t_rank], MPI_INT, b, cnts,
                           disp, MPI_INT, c, q);
}
static void ref_allgatherv(MPI_Comm c, int *b, int *m)
{
    (void)m;
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, cnts, disp,
                   MPI_INT, c);
}

static int al_alltoall(MPI_Comm c, int *b, int *m, MPI_Request *q, int p)
{
    (void)m;
    int persistent = p;
    return START(MPI_Ialltoall(b, B, MPI_INT, b, B, MPI_INT, c, q),
                 P(Alltoall)(b, B, MPI_INT, b, B, MPI_INT, c, MPI_INFO_NULL,
                             q));
}
static void ref_alltoall(MPI_Comm c, int *b, int *m)
{
    (void)m;
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, B, MPI_INT, c);
}

static int al_alltoallv(MPI_Comm c, int *b, int *m, MPI_Request *q, int p)
{
    (void)m, (void)p;
    return MPI_Ialltoallv(b, acnts, adisp, MPI_INT, b, acnts, adisp, MPI_INT, c,
                          q);
}
static void ref_alltoallv(MPI_Comm c, int *b, int *m)
{
    (void)m;
    MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, b, acnts, adisp,
                  MPI_INT, c);
}

static int al_alltoallw(MPI_Comm c, int *b, int *m, MPI_Request *q, int p)
{
    (void)m, (void)p;
    int bd[64];
    MPI_Datatype ty[64];
    for (int i = 0; i < t_size; i++) {
        bd[i] = adisp[i] * (int)sizeof(int);
        ty[i] = MPI_INT;
    }
    return MPI_Ialltoallw(b, acnts, bd, ty, b, acnts, bd, ty, c, q);
}
static void ref_alltoallw(MPI_Comm c, int *b, int *m)
{
    (void)m;
    int bd[64];
    MPI_Datatype ty[64];
    for (int i = 0; i < t_size; i++) {
        bd[i] = adisp[i] * (int)sizeof(int);
        ty[i] = MPI_INT;
    }
    MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, b, acnts, bd, ty, c);
}

static int al_rsb(MPI_Comm c, int *b, int *m, MPI_Request *q, int p)
{
    (void)m, (void)p;
    return MPI_Ireduce_scatter_block(b, b, B, MPI_INT, MPI_SUM, c, q);
}
static void ref_rsb(MPI_Comm c, int *b, int *m)
{
    (void)m;
    MPI_Reduce_scatter_block(MPI_IN_PLACE, b, B, MPI_INT, MPI_SUM, c);
}

static int al_rs(MPI_Comm c, int *b, int *m, MPI_Request *q, int p)
{
    (void)m, (void)p;
    return MPI_Ireduce_scatter(b, b, cnts, MPI_INT, MPI_SUM, c, q);
}
static void ref_rs(MPI_Comm c, int *b, int *m)
{
    (void)m;
    MPI_Reduce_scatter(MPI_IN_PLACE, b, cnts, MPI_INT, MPI_SUM, c);
}

static int al_scan(MPI_Comm c, int *b, int *m, MPI_Request *q, int p)
{
    (void)m, (void)p;
    return MPI_Iscan(b, b, B, MPI_INT, MPI_MAX, c, q);
}
static void ref_scan(MPI_Comm c, int *b, int *m)
{
    (void)m;
    MPI_Scan(MPI_IN_PLACE, b, B, MPI_INT, MPI_MAX, c);
}

static int al_allreduce(MPI_Comm c, int *b, int *m, MPI_Request *q, int p)
{
    (void)m;
    int persistent = p;
    return START(MPI_Iallreduce(b, b, B, MPI_INT, MPI_SUM, c, q),
                 P(Allreduce)(b, b, B, MPI_INT, MPI_SUM, c, MPI_INFO_NULL,
                              q));
}

static int al_exscan(MPI_Comm c, int *b, int *m, MPI_Request *q, int p)
{
    (void)m, (void)p;
    return MPI_Iexscan(b, b, B, MPI_INT, MPI_SUM, c, q);
}

/* Rooted: the root's send buffer is its block of the receive buffer
 * (gather) or its receive buffer its block of the send buffer (scatter);
 * the others send or receive with their own buffer m. */
static int al_gather(MPI_Comm c, int *b, int *m, MPI_Request *q, int p)
{
    int r = root_of(), persistent = p;
    const int *s = t_rank == r ? b + B * r : m;
    return START(MPI_Igather(s, B, MPI_INT, b, B, MPI_INT, r, c, q),
                 P(Gather)(s, B, MPI_INT, b, B, MPI_INT, r, c, MPI_INFO_NULL,
                           q));
}
static void ref_gather(MPI_Comm c, int *b, int *m)
{
    int r = root_of();
    if (t_rank == r)
        MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, B, MPI_INT, r, c);
    else
        MPI_Gather(m, B, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, r, c);
}

static int al_scatter(MPI_Comm c, int *b, int *m, MPI_Request *q, int p)
{
    (void)p;
    int r = root_of();
    void *d = t_rank == r ? (void *)(b + B * r) : (void *)m;
    return MPI_Iscatter(b, B, MPI_INT, d, B, MPI_INT, r, c, q);
}
static void ref_scatter(MPI_Comm c, int *b, int *m)
{
    int r = root_of();
    if (t_rank == r)
        MPI_Scatter(b, B, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, c);
    else
        MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, m, B, MPI_INT, r, c);
}

static int al_gatherv(MPI_Comm c, int *b, int *m, MPI_Request *q, int p)
{
    (void)p;
    int r = root_of();
    const int *s = t_rank == r ? b + disp[r] : m;
    return MPI_Igatherv(s, cnts[t_rank], MPI_INT, b, cnts, disp, MPI_INT, r,
                        c, q);
}
static void ref_gatherv(MPI_Comm c, int *b, int *m)
{
    int r = root_of();
    if (t_rank == r)
        MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, cnts, disp,
                    MPI_INT, r, c);
    else
        MPI_Gatherv(m, cnts[t_rank], MPI_INT, NULL, NULL, NULL,
                    MPI_DATATYPE_NULL, r, c);
}

static int al_scatterv(MPI_Comm c, int *b, int *m, MPI_Request *q, int p)
{
    (void)p;
    int r = root_of();
    void *d = t_rank == r ? (void *)(b + disp[r]) : (void *)m;
    return MPI_Iscatterv(b, cnts, disp, MPI_INT, d, cnts[t_rank], MPI_INT,
                         r, c, q);
}
static void ref_scatterv(MPI_Comm c, int *b, int *m)
{
    int r = root_of();
    if (t_rank == r)
        MPI_Scatterv(b, cnts, disp, MPI_INT, MPI_IN_PLACE, 0,
                     MPI_DATATYPE_NULL, r, c);
    else
        MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, m, cnts[t_rank],
                     MPI_INT, r, c);
}

/* Valid: one array holds both sides, apart (the send blocks in its first
 * half, the receive blocks in its second), so the send and receive
 * buffers are the same address with different blocks. It must run, on
 * nbcx, and give what the same call with two arrays gives natively (the
 * blocking MPI_Alltoallv/w on copies). */
static void same_base_apart(int w)
{
    t_step = w ? "alltoallw, one array, sides apart"
               : "alltoallv, one array, sides apart";
    int half = 0, sc[64], sd[64], rc[64], rd[64], bsd[64], brd[64];
    MPI_Datatype ty[64];
    for (int j = 0; j < t_size; j++) {
        sc[j] = rc[j] = acnts[j];
        sd[j] = half;
        half += acnts[j];
    }
    for (int j = 0; j < t_size; j++) {
        rd[j] = half + sd[j];
        bsd[j] = sd[j] * (int)sizeof(int);
        brd[j] = rd[j] * (int)sizeof(int);
        ty[j] = MPI_INT;
    }
    int *all = malloc(sizeof(int) * (size_t)(2 * half));
    int *s = malloc(sizeof(int) * (size_t)half);
    int *want = malloc(sizeof(int) * (size_t)half);
    fill(all, 2 * half);
    for (int i = 0; i < half; i++)
        s[i] = all[i];
    if (w)
        MPI_Alltoallw(s, sc, bsd, ty, want, rc, bsd, ty, MPI_COMM_WORLD);
    else
        MPI_Alltoallv(s, sc, sd, MPI_INT, want, rc, sd, MPI_INT,
                      MPI_COMM_WORLD);
    long long n0 = native_calls();
    MPI_Request q;
    if (w)
        MPI_OK(MPI_Ialltoallw(all, sc, bsd, ty, all, rc, brd, ty,
                              MPI_COMM_WORLD, &q));
    else
        MPI_OK(MPI_Ialltoallv(all, sc, sd, MPI_INT, all, rc, rd, MPI_INT,
                              MPI_COMM_WORLD, &q));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int i = 0; i < half; i++)
        if (all[half + i] != want[i]) {
            FAIL("element %d: %d, natively %d", i, all[half + i], want[i]);
            break;
        }
    if (native_calls() != n0)
        FAIL("the call went to the native library");
    free(all);
    free(s);
    free(want);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, -1);
    long long s0, n0;
    if (!t_counts(&s0, &n0))
        FAIL("libnbcx-pmpi is not loaded");
    if (t_size > 64) {
        FAIL("at most 64 ranks");
        return t_finish("pmpi_alias");
    }
    /* v-forms: block i has 1 + i % B elements, with a gap of one */
    for (int i = 0, at = 0; i < t_size; i++) {
        cnts[i] = 1 + i % B;
        disp[i] = at;
        at += cnts[i] + 1;
    }
    for (int j = 0, at = 0; j < t_size; j++) {
        acnts[j] = 1 + (t_rank + j) % B; /* as many as rank j sends me */
        adisp[j] = at;
        at += acnts[j] + 1;
    }
    for (int persistent = 0; persistent <= HAVE_P; persistent++) {
        run_case("allgather", al_allgather, ref_allgather, 0, 0, persistent);
        run_case("alltoall", al_alltoall, ref_alltoall, 0, 0, persistent);
        run_case("gather", al_gather, ref_gather, 1, 0, persistent);
        run_case("allreduce", al_allreduce, NULL, 0, 1, persistent);
    }
    run_case("allgatherv", al_allgatherv, ref_allgatherv, 0, 0, 0);
    run_case("alltoallv", al_alltoallv, ref_alltoallv, 0, 0, 0);
    run_case("alltoallw", al_alltoallw, ref_alltoallw, 0, 0, 0);
    run_case("reduce_scatter_block", al_rsb, ref_rsb, 0, 0, 0);
    run_case("reduce_scatter", al_rs, ref_rs, 0, 0, 0);
    run_case("scan", al_scan, ref_scan, 0, 0, 0);
    run_case("exscan", al_exscan, NULL, 0, 1, 0);
    run_case("scatter", al_scatter, ref_scatter, 1, 0, 0);
    run_case("gatherv", al_gatherv, ref_gatherv, 1, 0, 0);
    run_case("scatterv", al_scatterv, ref_scatterv, 1, 0, 0);
    same_base_apart(0);
    same_base_apart(1);
    return t_finish("pmpi_alias");
}
