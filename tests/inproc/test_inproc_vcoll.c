/*
 * test_inproc_vcoll.c - the vector, w, reduce-scatter, scan and
 * neighbourhood collectives on the in-process transport, where ranks are
 * threads (nbcx_inproc_run), every algorithm, against the sequential
 * reference of tests/common/vcoll_cases.h (the cases of the loopback test
 * test_vcoll.c, whose header comment describes them: self-describing
 * words, zero-sized blocks on some ranks, blocks in reverse order with
 * gaps and sentinels, mixed and derived non-contiguous types, per-block
 * types for the w variants, NBCX_IN_PLACE wherever MPI allows it, a
 * non-commutative user operation, Cartesian grids including a periodic
 * 2-D torus, and irregular graphs).
 *
 * Tests (one CTest test each, in every progress mode: NBCX_PROGRESS is
 * set by CTest and checked here), on P = 1, 2, 3, 7, 16 and 64 thread
 * ranks, each algorithm of nbcx_algorithm_names and "auto" in turn:
 *   vcoll_p<P>     gatherv, scatterv (roots first, last, middle),
 *                  allgatherv, alltoallv, alltoallw; blocks of up to 0,
 *                  3, 60 and (P <= 16) 3000 data words, so that some
 *                  messages are above the 16 KiB eager limit
 *                  (rendezvous);
 *   vreduce_p<P>   reduce_scatter, reduce_scatter_block, scan, exscan
 *                  with six (type, op) pairs; 0, 1, 7, 60 and (P <= 16)
 *                  5000 elements per block, in 1 KiB segments;
 *   neighbor_p<P>  neighbor_allgather(v), neighbor_alltoall(v,w) on the
 *                  topologies of vcoll_cases.h: 1-D rings and lines, the
 *                  most square periodic 2-D torus (4 x 4 on 16 ranks,
 *                  8 x 8 on 64) and a half-periodic grid, a P x 1 torus,
 *                  a 2 x P/2 x 1 grid, two irregular graphs; each
 *                  attached on every rank thread (and the neighbour lists
 *                  checked) before its cases; blocks of up to 0, 3, 40
 *                  and (P <= 16) 3000 words.
 *   many_p<P>      60 rounds of 2 to 12 cases of any of the 14
 *                  collectives (random sizes, types, roots, in place,
 *                  operations) started together on every rank, then
 *                  completed in reverse order (ranks 0, 3, ...), with
 *                  nbcx_waitall (1, 4, ...) or nbcx_waitany (2, 5, ...);
 *                  each round with other algorithms and the next
 *                  topology.
 * P = 64 runs smaller blocks (up to 60 words, 20 elements).
 * NBCX_TEST_QUICK=1 (sanitizer builds) keeps every kind of case but
 * fewer of each: int32 and derived types (not mixed), two block sizes (a
 * small one and a rendezvous one; zero-sized blocks occur among them;
 * one for the neighbourhood collectives), three (type, op) pairs (int32
 * SUM, the matrix product, the derived type), roots first and last, 10
 * rounds of many_p<P>, rendezvous-sized reductions on up to 7 ranks.
 *
 * How it runs: one nbcx_inproc_run per (collective, algorithm), or per
 * many_p<P> test. Rank 0's thread walks the cases: it builds a case (or a
 * round of them) for all ranks (*_setup, with the harness), then every
 * rank thread starts its own part on its own communicator (*_start), all
 * starts are compared at a barrier (a failed start ends the program: the
 * other ranks' operations could never complete), every rank completes
 * its requests (one case: nbcx_wait, or an nbcx_test loop on every third
 * rank and case), and after a second barrier rank 0 checks every rank's
 * buffers (*_check). The harness is thus only used by
 * one thread at a time, ordered by the barriers.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "inproc_test.h"
#include "vcoll_cases.h"

enum { SEGSIZE = 1024 };

static bool quick;

enum family { F_V, F_R, F_N, F_MANY };
enum action { A_STOP, A_TOPO, A_CASES };
enum kind { K_V, K_N, K_R };
enum { MAXITEMS = 12 };

/* A case in flight: a data-moving one (x) or a reduction (rc). */
struct item {
    enum kind kind;
    struct xcase *x;
    struct rcase *rc;
};

struct job {
    enum family fam;
    int coll, p;
    pthread_barrier_t bar;
    /* the step all ranks take next, set by rank 0 between barriers */
    enum action act;
    struct item items[MAXITEMS];
    int nitems;
    const struct topo *t;
    int started[MAXP], done[MAXP];
    struct nbr_seen seen[MAXP];
    struct topo topos[8];
};

/* Every rank takes the step job->act; false when told to stop. Rank 0
 * then checks the starts (and, if one failed, ends the program). */
static bool step(struct job *job, int r, nbcx_comm comm)
{
    pthread_barrier_wait(&job->bar);
    enum action act = job->act;
    if (act == A_STOP)
        return false;
    if (act == A_TOPO) {
        topo_seen(topo_set(job->t, r, comm), comm, &job->seen[r]);
        pthread_barrier_wait(&job->bar);
        return true;
    }
    /* every item started in order (MPI's rule), or none after an error */
    nbcx_request req[MAXITEMS];
    const int n = job->nitems;
    int err = NBCX_SUCCESS;
    for (int i = 0; i < n && err == NBCX_SUCCESS; i++) {
        struct item *it = &job->items[i];
        req[i] = NBCX_REQUEST_NULL;
        err = it->kind == K_V   ? vcase_start(it->x, r, comm, &req[i])
              : it->kind == K_N ? ncase_start(it->x, r, comm, &req[i])
                                : rcase_start(it->rc, r, comm, &req[i]);
    }
    job->started[r] = err;
    pthread_barrier_wait(&job->bar);
    for (int q = 0; q < job->p; q++)
        if (job->started[q] != NBCX_SUCCESS) {
            if (r == 0) {
                CHECK(0, "rank %d: start returned %s; the other ranks' "
                      "operations can never complete: giving up", q,
                      nbcx_error_string(job->started[q]));
                fflush(stdout);
                fflush(stderr);
                _exit(1);
            }
            for (;;) /* until rank 0 ends the program */
                pause();
        }
    /* one by one (a test loop on every third rank and case), or several
     * in flight: waited in reverse order, with waitall or with waitany
     * (the first error is kept) */
    err = NBCX_SUCCESS;
    int e;
    switch (n == 1 ? 3 : r % 3) {
    case 0:
        for (int i = n - 1; i >= 0; i--)
            if ((e = nbcx_wait(&req[i])) != NBCX_SUCCESS && !err)
                err = e;
        break;
    case 1:
        err = nbcx_waitall(n, req);
        break;
    case 2:
        for (int k = 0; k < n; k++) {
            int idx = -1;
            if ((e = nbcx_waitany(n, req, &idx)) != NBCX_SUCCESS && !err)
                err = e;
        }
        break;
    default:
        err = complete(&req[0], (r + case_salt) % 3 == 0);
        break;
    }
    job->done[r] = err;
    pthread_barrier_wait(&job->bar);
    return true;
}

/* Rank 0: every rank runs the one case (kind, x or rc). */
static void step_one(struct job *job, nbcx_comm comm, enum kind kind,
                     struct xcase *x, struct rcase *rc)
{
    job->items[0] = (struct item){ kind, x, rc };
    job->nitems = 1;
    job->act = A_CASES;
    step(job, 0, comm);
}

/* Rank 0, after a step: did every rank complete without error? */
static bool all_done(struct job *job)
{
    bool ok = true;
    for (int q = 0; q < job->p; q++)
        if (!CHECK(job->done[q] == NBCX_SUCCESS, "rank %d: completion "
                   "returned %s", q, nbcx_error_string(job->done[q])))
            ok = false;
    return ok;
}

static void drive_v(struct job *job, nbcx_comm comm, const char *where)
{
    const int p = job->p;
    const enum vcoll coll = (enum vcoll)job->coll;
    int maxws[4] = { 0, 3, 60, 3000 }, nmaxw = p <= 16 ? 4 : 3;
    if (p >= 64) {
        maxws[2] = 20;
        nmaxw = 3;
    }
    if (quick) { /* 0-word blocks still occur among the others */
        maxws[0] = 3;
        maxws[1] = p <= 16 ? 3000 : 60;
        nmaxw = 2;
    }
    const bool few = quick;
    const int roots[3] = { 0, p - 1, p / 2 };
    const bool rooted = coll == V_GATHERV || coll == V_SCATTERV;
    for (int mi = 0; mi < nmaxw; mi++)
        for (int m = 0; m < NTMODES; m++) {
            if ((m == T_W) != (coll == V_ALLTOALLW) ||
                (few && m == T_MIXED))
                continue;
            for (int ip = 0; ip < 2; ip++)
                for (int k = 0; k < (rooted ? 3 - few : 1); k++) {
                    if (k > 0 && (roots[k] == roots[0] ||
                                  roots[k] == roots[k - 1]))
                        continue;
                    struct xcase *x = calloc(1, sizeof *x);
                    vcase_setup(x, where, p, coll, maxws[mi], roots[k],
                                (enum tmode)m, ip);
                    step_one(job, comm, K_V, x, NULL);
                    if (all_done(job))
                        xcase_check(x);
                    xcase_free(x);
                    free(x);
                }
        }
}

static void drive_r(struct job *job, nbcx_comm comm, const char *where)
{
    const int p = job->p;
    const enum rcoll coll = (enum rcoll)job->coll;
    int maxcs[5] = { 0, 1, 7, 60, 5000 }, nmaxc = p <= 16 ? 5 : 4;
    if (p >= 64) {
        maxcs[3] = 20;
        nmaxc = 4;
    }
    if (quick) {
        maxcs[0] = 7;
        maxcs[1] = p <= 7 ? 5000 : 60;
        nmaxc = 2;
    }
    /* few: int32 SUM, the non-commutative matrix product, derived SUM */
    static const int some[] = { 0, 3, NREDOPS - 1 };
    const bool few = quick;
    for (int ci = 0; ci < nmaxc; ci++)
        for (int k = 0; k < (few ? 3 : NREDOPS); k++)
            for (int ip = 0; ip < 2; ip++) {
                struct rcase *x = calloc(1, sizeof *x);
                rcase_setup(x, where, p, coll, maxcs[ci],
                            &redops[few ? some[k] : k], ip);
                step_one(job, comm, K_R, NULL, x);
                if (all_done(job))
                    rcase_check(x);
                rcase_free(x);
                free(x);
            }
}

static void drive_n(struct job *job, nbcx_comm comm, const char *where)
{
    const int p = job->p;
    const enum ncoll coll = (enum ncoll)job->coll;
    int maxws[4] = { 0, 3, 40, 3000 }, nmaxw = p <= 16 ? 4 : 3;
    if (quick) {
        maxws[0] = p <= 16 ? 3000 : 40;
        nmaxw = 1;
    }
    const bool few = quick;
    int nt = topologies(p, job->topos);
    for (int k = 0; k < nt; k++) {
        const struct topo *t = &job->topos[k];
        job->t = t;
        job->act = A_TOPO;
        step(job, 0, comm);
        bool ok = true;
        th_context = NULL;
        for (int r = 0; r < p; r++)
            ok = topo_check(t, r, &job->seen[r]) && ok;
        if (!ok)
            continue;
        for (int mi = 0; mi < nmaxw; mi++)
            for (int m = 0; m < NTMODES; m++) {
                if ((m == T_W) != (coll == N_ALLTOALLW) ||
                    (few && m == T_MIXED))
                    continue;
                struct xcase *x = calloc(1, sizeof *x);
                ncase_setup(x, where, p, t, coll, maxws[mi], (enum tmode)m);
                step_one(job, comm, K_N, x, NULL);
                if (all_done(job))
                    xcase_check(x);
                xcase_free(x);
                free(x);
            }
    }
}

/* Sets algorithm number k (modulo the number, "auto" last) of coll. */
static void pick_algorithm(const char *coll, int k)
{
    const char *algs = NULL;
    char list[256], *names[16];
    int n = 0;
    int err = nbcx_algorithm_names(coll, &algs);
    if (!CHECK(err == NBCX_SUCCESS, "%s: %s", coll, nbcx_error_string(err)))
        return;
    snprintf(list, sizeof list, "%s auto", algs);
    for (char *save = NULL, *a = strtok_r(list, " ", &save); a && n < 16;
         a = strtok_r(NULL, " ", &save))
        names[n++] = a;
    CHECK_OK(nbcx_algorithm_set(coll, names[k % n]));
}

/* Rounds of up to MAXITEMS random cases of all 14 collectives at once:
 * every rank starts them all, then completes them in its own order.
 * Each round picks other algorithms and another topology for its
 * neighbourhood cases. */
static void drive_many(struct job *job, nbcx_comm comm, const char *where)
{
    const int p = job->p, rounds = quick ? 10 : 60;
    static const int maxws[4] = { 0, 3, 60, 3000 };
    const int nt = topologies(p, job->topos);
    for (int k = 0; k < rounds; k++) {
        for (int c = 0; c < NVCOLL; c++)
            pick_algorithm(vcoll_names[c], k + c);
        for (int c = 0; c < NRCOLL; c++)
            pick_algorithm(rcoll_names[c], k + c);
        for (int c = 0; c < NNCOLL; c++)
            pick_algorithm(ncoll_names[c], k + c);
        const struct topo *t = &job->topos[k % nt];
        job->t = t;
        job->act = A_TOPO;
        step(job, 0, comm);
        bool topo_ok = true;
        th_context = NULL;
        for (int r = 0; r < p; r++)
            topo_ok = topo_check(t, r, &job->seen[r]) && topo_ok;
        const int n = 2 + (int)(mix(77, (uint32_t)k, 1) % (MAXITEMS - 1));
        for (int i = 0; i < n; i++) {
            uint32_t h = mix(99, (uint32_t)k, (uint32_t)i);
            int g = (int)(h % (NVCOLL + NRCOLL + NNCOLL));
            int maxw = maxws[(h >> 8) % (p <= 16 ? 4 : 3)];
            bool ip = (h >> 12) & 1;
            struct item *it = &job->items[i];
            *it = (struct item){ K_V, NULL, NULL };
            if (g >= NVCOLL && g < NVCOLL + NRCOLL) {
                it->kind = K_R;
                it->rc = calloc(1, sizeof *it->rc);
                rcase_setup(it->rc, where, p, (enum rcoll)(g - NVCOLL),
                            maxw > 60 ? 5000 : maxw,
                            &redops[(h >> 16) % NREDOPS], ip);
                continue;
            }
            it->x = calloc(1, sizeof *it->x);
            bool w = g == V_ALLTOALLW || g == NVCOLL + NRCOLL + N_ALLTOALLW;
            enum tmode m = w ? T_W : (enum tmode)((h >> 20) % T_W);
            if (g < NVCOLL) {
                vcase_setup(it->x, where, p, (enum vcoll)g, maxw,
                            (int)((h >> 24) % (unsigned)p), m, ip);
            } else if (topo_ok) {
                it->kind = K_N;
                ncase_setup(it->x, where, p, t,
                            (enum ncoll)(g - NVCOLL - NRCOLL), maxw, m);
            } else { /* no topology: an alltoallv instead */
                vcase_setup(it->x, where, p, V_ALLTOALLV, maxw, 0,
                            m == T_W ? T_INT32 : m, ip);
            }
        }
        snprintf(ctx, sizeof ctx, "round %d of %d cases at once, %s", k, n,
                 where);
        th_context = ctx;
        job->nitems = n;
        job->act = A_CASES;
        step(job, 0, comm);
        bool ok = all_done(job);
        for (int i = 0; i < n; i++) {
            struct item *it = &job->items[i];
            if (it->kind == K_R) {
                if (ok)
                    rcase_check(it->rc);
                rcase_free(it->rc);
                free(it->rc);
            } else {
                if (ok)
                    xcase_check(it->x);
                xcase_free(it->x);
                free(it->x);
            }
        }
    }
    for (int c = 0; c < NVCOLL; c++)
        CHECK_OK(nbcx_algorithm_set(vcoll_names[c], "auto"));
    for (int c = 0; c < NRCOLL; c++)
        CHECK_OK(nbcx_algorithm_set(rcoll_names[c], "auto"));
    for (int c = 0; c < NNCOLL; c++)
        CHECK_OK(nbcx_algorithm_set(ncoll_names[c], "auto"));
}

static int body(nbcx_comm comm, void *arg)
{
    struct job *job = arg;
    int r = -1;
    nbcx_comm_rank(comm, &r);
    if (r != 0) {
        while (step(job, r, comm))
            ;
        return NBCX_SUCCESS;
    }
    char where[40];
    snprintf(where, sizeof where, "p=%d inproc", job->p);
    switch (job->fam) {
    case F_V: drive_v(job, comm, where); break;
    case F_R: drive_r(job, comm, where); break;
    case F_MANY: drive_many(job, comm, where); break;
    default: drive_n(job, comm, where); break;
    }
    th_context = NULL;
    job->act = A_STOP;
    step(job, 0, comm);
    return NBCX_SUCCESS;
}

/* One nbcx_inproc_run of the cases of (fam, coll) on p thread ranks;
 * what: its name in the summary line. */
static void run_job(enum family fam, int coll, int p, const char *what)
{
    long f0 = th_failures, k0 = th_cases;
    double t0 = th_now();
    struct job *job = calloc(1, sizeof *job);
    job->fam = fam;
    job->coll = coll;
    job->p = p;
    pthread_barrier_init(&job->bar, NULL, (unsigned)p);
    int err = nbcx_inproc_run(p, body, job);
    CHECK(err == NBCX_SUCCESS, "%s on %d thread ranks: nbcx_inproc_run "
          "returned %s", what, p, nbcx_error_string(err));
    pthread_barrier_destroy(&job->bar);
    free(job);
    printf("  %-40s %5ld cases %7.2f s%s\n", what, th_cases - k0,
           th_now() - t0, th_failures > f0 ? "  FAILED" : "");
}

/* Every algorithm of every collective of the family on p thread ranks. */
static void run_family(enum family fam, int p)
{
    if (fam == F_MANY) {
        run_job(fam, 0, p, "all at once");
        return;
    }
    static const char *const *const names[] = { vcoll_names, rcoll_names,
                                                 ncoll_names };
    static const int ncolls[] = { NVCOLL, NRCOLL, NNCOLL };
    for (int c = 0; c < ncolls[fam]; c++) {
        const char *coll = names[fam][c], *algs = NULL;
        char list[256], what[300];
        REQUIRE_OK(nbcx_algorithm_names(coll, &algs));
        snprintf(list, sizeof list, "%s auto", algs);
        for (char *save = NULL, *alg = strtok_r(list, " ", &save); alg;
             alg = strtok_r(NULL, " ", &save)) {
            CHECK_OK(nbcx_algorithm_set(coll, alg));
            snprintf(what, sizeof what, "%s/%s", coll, alg);
            run_job(fam, c, p, what);
        }
        CHECK_OK(nbcx_algorithm_set(coll, "auto"));
    }
}

#define FAMILY_TESTS(P)                                                       \
    static void test_vcoll_p##P(void) { run_family(F_V, P); }                 \
    static void test_vreduce_p##P(void) { run_family(F_R, P); }               \
    static void test_neighbor_p##P(void) { run_family(F_N, P); }            \
    static void test_many_p##P(void) { run_family(F_MANY, P); }
INPROC_SIZES(FAMILY_TESTS)
#define FAMILY_ENTRIES(P)                                                     \
    { "vcoll_p" #P, test_vcoll_p##P },                                        \
    { "vreduce_p" #P, test_vreduce_p##P },                                    \
    { "neighbor_p" #P, test_neighbor_p##P },                                  \
    { "many_p" #P, test_many_p##P }

static const struct th_test tests[] = {
    INPROC_SIZE_ENTRIES(FAMILY_ENTRIES),
};

int main(int argc, char **argv)
{
    check_mode(); /* the mode CTest asked for is the one in effect */
    quick = test_quick();
    create_user_ops();
    nbcx_segsize_set(SEGSIZE);
    int rc = th_main(argc, argv, tests, TH_COUNT(tests));
    free_user_ops();
    return rc;
}
