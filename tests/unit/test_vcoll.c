/*
 * test_vcoll.c - the vector, w, reduce-scatter, scan and neighbourhood
 * collectives on loopback worlds, every algorithm, against a sequential
 * reference. The cases and the reference are those of vcoll_cases.h
 * (shared with tests/inproc/test_inproc_vcoll.c, where ranks are
 * threads); here one thread starts every rank's part and waits for all.
 *
 * Worlds of 1..9, 12, 16 and 33 ranks, ordered and random loopback modes
 * (the random one delivers and completes in random legal orders, and the
 * loopback rejects any operation posted on the bytes of a pending
 * receive: a missing dependency). Also: bad arguments, arguments MPI
 * calls insignificant, the algorithm API, and long scans.
 */
#include "vcoll_cases.h"
#include "lbworld.h"

enum { SEGSIZE = 100, TAG_UB = 32767 };

static const int sizes[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 33 };

/* ------------------------------------------------------------------ */
/* Worlds                                                              */
/* ------------------------------------------------------------------ */

/* The world of a case, for its description. */
static void world_where(const struct lb_world *w, char where[40])
{
    snprintf(where, 40, "p=%d mode=%s", w->p,
             w->mode ? "random" : "ordered");
}

/* Runs a case (x) set up already, if the world is ready: start(x, r,
 * comm, &req) on every rank, then, if all completed (a start error drops
 * the world at once: the others may be stuck), check(x). */
static void run_on_world(struct lb_world *w, bool ready, void *x,
                         int (*start)(void *, int, nbcx_comm,
                                      nbcx_request *),
                         void (*check)(void *))
{
    nbcx_request req[MAXP];
    int started[MAXP] = { 0 };
    if (!ready)
        return;
    for (int r = 0; r < w->p; r++)
        started[r] = start(x, r, w->c[r], &req[r]);
    if (lb_world_finish(w, started, req, false))
        check(x);
}

static int vstart(void *x, int r, nbcx_comm c, nbcx_request *req)
{
    return vcase_start(x, r, c, req);
}

static int nstart(void *x, int r, nbcx_comm c, nbcx_request *req)
{
    return ncase_start(x, r, c, req);
}

static int rstart(void *x, int r, nbcx_comm c, nbcx_request *req)
{
    return rcase_start(x, r, c, req);
}

static void xcheck(void *x) { xcase_check(x); }

static void rcheck(void *x) { rcase_check(x); }

static void run_vcase(struct lb_world *w, enum vcoll coll, int maxw,
                      int root, enum tmode m, bool in_place)
{
    char where[40];
    world_where(w, where);
    struct xcase *x = calloc(1, sizeof *x);
    vcase_setup(x, where, w->p, coll, maxw, root, m, in_place);
    run_on_world(w, lb_world_get(w), x, vstart, xcheck);
    xcase_free(x);
    free(x);
}

static void run_vcoll(enum vcoll coll, enum loopback_mode mode)
{
    const char *names = NULL;
    char list[256];
    REQUIRE_OK(nbcx_algorithm_names(vcoll_names[coll], &names));
    snprintf(list, sizeof list, "%s auto", names);
    static const int maxws[] = { 0, 3, 60 };
    for (char *save = NULL, *alg = strtok_r(list, " ", &save); alg;
         alg = strtok_r(NULL, " ", &save)) {
        th_context = NULL;
        CHECK_OK(nbcx_algorithm_set(vcoll_names[coll], alg));
        long f0 = th_failures, k0 = th_cases;
        double t0 = th_now();
        for (size_t si = 0; si < TH_COUNT(sizes); si++) {
            struct lb_world w = { .p = sizes[si], .mode = mode,
                                  .tag_ub = TAG_UB,
                                  .seed = 31u * (uint64_t)coll + 7 };
            int roots[3] = { 0, w.p - 1, w.p / 2 };
            for (size_t mi = 0; mi < TH_COUNT(maxws); mi++)
                for (int m = 0; m < NTMODES; m++) {
                    if ((m == T_W) != (coll == V_ALLTOALLW))
                        continue;
                    for (int ip = 0; ip < 2; ip++) {
                        bool rooted = coll == V_GATHERV ||
                                      coll == V_SCATTERV;
                        for (int k = 0; k < (rooted ? 3 : 1); k++) {
                            if (k > 0 && (roots[k] == roots[0] ||
                                          roots[k] == roots[k - 1]))
                                continue;
                            run_vcase(&w, coll, maxws[mi], roots[k],
                                      (enum tmode)m, ip);
                        }
                    }
                }
            lb_world_drop(&w);
        }
        th_context = NULL;
        printf("  %-11s %-18s %6ld cases %7.2f s%s\n", vcoll_names[coll],
               alg, th_cases - k0, th_now() - t0,
               th_failures > f0 ? "  FAILED" : "");
    }
    CHECK_OK(nbcx_algorithm_set(vcoll_names[coll], "auto"));
}

static bool topo_attach(struct lb_world *w, const struct topo *t)
{
    bool ok = true;
    struct nbr_seen s;
    for (int r = 0; r < w->p; r++) {
        topo_seen(topo_set(t, r, w->c[r]), w->c[r], &s);
        ok = topo_check(t, r, &s) && ok;
    }
    return ok;
}

static void run_ncase(struct lb_world *w, const struct topo *t,
                      enum ncoll coll, int maxw, enum tmode m)
{
    char where[40];
    world_where(w, where);
    struct xcase *x = calloc(1, sizeof *x);
    ncase_setup(x, where, w->p, t, coll, maxw, m);
    run_on_world(w, lb_world_get(w) && topo_attach(w, t), x, nstart,
                 xcheck);
    xcase_free(x);
    free(x);
}

static void run_ncoll(enum ncoll coll, enum loopback_mode mode)
{
    static const int maxws[] = { 0, 3, 40 };
    static struct topo topos[8];
    long f0 = th_failures, k0 = th_cases;
    double t0 = th_now();
    CHECK_OK(nbcx_algorithm_set(ncoll_names[coll], "linear"));
    for (size_t si = 0; si < TH_COUNT(sizes); si++) {
        struct lb_world w = { .p = sizes[si], .mode = mode,
                              .tag_ub = TAG_UB, .seed = 3 };
        int nt = topologies(w.p, topos);
        for (int k = 0; k < nt; k++)
            for (size_t mi = 0; mi < TH_COUNT(maxws); mi++)
                for (int m = 0; m < NTMODES; m++)
                    if ((m == T_W) == (coll == N_ALLTOALLW))
                        run_ncase(&w, &topos[k], coll, maxws[mi],
                                  (enum tmode)m);
        lb_world_drop(&w);
    }
    th_context = NULL;
    CHECK_OK(nbcx_algorithm_set(ncoll_names[coll], "auto"));
    printf("  %-20s %6ld cases %7.2f s%s\n", ncoll_names[coll],
           th_cases - k0, th_now() - t0, th_failures > f0 ? "  FAILED" : "");
}

static void run_rcase(struct lb_world *w, enum rcoll coll, int maxc,
                      const struct redop *o, bool in_place)
{
    char where[40];
    world_where(w, where);
    struct rcase *x = calloc(1, sizeof *x);
    rcase_setup(x, where, w->p, coll, maxc, o, in_place);
    run_on_world(w, lb_world_get(w), x, rstart, rcheck);
    rcase_free(x);
    free(x);
}

static void run_rcoll(enum rcoll coll, enum loopback_mode mode)
{
    const char *names = NULL;
    char list[256];
    REQUIRE_OK(nbcx_algorithm_names(rcoll_names[coll], &names));
    snprintf(list, sizeof list, "%s auto", names);
    static const int maxcs[] = { 0, 1, 7, 60 };
    create_user_ops();
    nbcx_segsize_set(SEGSIZE);
    for (char *save = NULL, *alg = strtok_r(list, " ", &save); alg;
         alg = strtok_r(NULL, " ", &save)) {
        th_context = NULL;
        CHECK_OK(nbcx_algorithm_set(rcoll_names[coll], alg));
        long f0 = th_failures, k0 = th_cases;
        double t0 = th_now();
        for (size_t si = 0; si < TH_COUNT(sizes); si++) {
            struct lb_world w = { .p = sizes[si], .mode = mode,
                                  .tag_ub = TAG_UB, .seed = 5 };
            for (size_t ci = 0; ci < TH_COUNT(maxcs); ci++)
                for (int k = 0; k < NREDOPS; k++)
                    for (int ip = 0; ip < 2; ip++)
                        run_rcase(&w, coll, maxcs[ci], &redops[k], ip);
            lb_world_drop(&w);
        }
        th_context = NULL;
        printf("  %-20s %-18s %6ld cases %7.2f s%s\n", rcoll_names[coll],
               alg, th_cases - k0, th_now() - t0,
               th_failures > f0 ? "  FAILED" : "");
    }
    CHECK_OK(nbcx_algorithm_set(rcoll_names[coll], "auto"));
    free_user_ops();
}

/* Long vectors: the pipelined scan chain with more fragments than tags
 * would allow (it then lengthens them), every scan algorithm. */
static void test_long_scan(void)
{
    create_user_ops();
    nbcx_segsize_set(4); /* one int32 per fragment: 5000 fragments */
    for (int coll = R_SCAN; coll <= R_EXSCAN; coll++) {
        static const char *const algs[] = { "linear", "recursive_doubling" };
        for (int a = 0; a < 2; a++) {
            CHECK_OK(nbcx_algorithm_set(rcoll_names[coll], algs[a]));
            for (int p = 2; p <= 5; p++) {
                struct lb_world w = { .p = p, .mode = LOOPBACK_RANDOM,
                                      .tag_ub = TAG_UB, .seed = 9 };
                run_rcase(&w, (enum rcoll)coll, 5000, &redops[0], p % 2);
                run_rcase(&w, (enum rcoll)coll, 5000, &redops[3], false);
                lb_world_drop(&w);
            }
        }
        CHECK_OK(nbcx_algorithm_set(rcoll_names[coll], "auto"));
    }
    nbcx_segsize_set(SEGSIZE);
    free_user_ops();
}

/* ------------------------------------------------------------------ */
/* Bad arguments and topologies                                        */
/* ------------------------------------------------------------------ */

/* Bad arguments are rejected before anything is posted (REJECT:
 * harness.h). */
static void test_argument_errors(void)
{
    enum { P = 3 };
    nbcx_comm c[P];
    REQUIRE_OK(loopback_world_create(P, c));
    int32_t a[16] = { 0 }, b[16] = { 0 };
    const int cnt[P] = { 1, 2, 1 }, dsp[P] = { 0, 1, 3 };
    const int neg[P] = { 1, -1, 1 };
    const nbcx_datatype ty[P] = { NBCX_INT32, NBCX_INT32, NBCX_INT32 };
    const nbcx_datatype badty[P] = { NBCX_INT32, (nbcx_datatype)(uintptr_t)99,
                                     NBCX_INT32 };
    const ptrdiff_t adsp[P] = { 0, 4, 12 };
    nbcx_datatype bad = (nbcx_datatype)(uintptr_t)99;
    nbcx_request req;
    void *IP = NBCX_IN_PLACE;
    nbcx_comm c0 = c[0];

    /* gatherv / scatterv (rank 0 is the root unless said otherwise) */
    REJECT(NBCX_ERR_ROOT, nbcx_igatherv(a, 1, NBCX_INT32, b, cnt, dsp,
                                        NBCX_INT32, P, c0, &req));
    REJECT(NBCX_ERR_ARG, nbcx_igatherv(a, 1, NBCX_INT32, b, NULL, dsp,
                                       NBCX_INT32, 0, c0, &req));
    REJECT(NBCX_ERR_ARG, nbcx_igatherv(a, 1, NBCX_INT32, b, cnt, NULL,
                                       NBCX_INT32, 0, c0, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_igatherv(a, 1, NBCX_INT32, b, neg, dsp,
                                         NBCX_INT32, 0, c0, &req));
    REJECT(NBCX_ERR_TYPE, nbcx_igatherv(a, 1, NBCX_INT32, b, cnt, dsp, bad,
                                        0, c0, &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_igatherv(a, 1, NBCX_INT32, NULL, cnt, dsp,
                                          NBCX_INT32, 0, c0, &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_igatherv(a, 1, NBCX_INT32, IP, cnt, dsp,
                                            NBCX_INT32, 0, c0, &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_igatherv(IP, 1, NBCX_INT32, b, cnt, dsp,
                                            NBCX_INT32, 1, c0, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_igatherv(a, -1, NBCX_INT32, NULL, NULL, NULL,
                                         NBCX_DATATYPE_NULL, 1, c0, &req));
    REJECT(NBCX_ERR_ROOT, nbcx_iscatterv(a, cnt, dsp, NBCX_INT32, b, 1,
                                         NBCX_INT32, -1, c0, &req));
    REJECT(NBCX_ERR_ARG, nbcx_iscatterv(a, NULL, dsp, NBCX_INT32, b, 1,
                                        NBCX_INT32, 0, c0, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_iscatterv(a, neg, dsp, NBCX_INT32, b, 1,
                                          NBCX_INT32, 0, c0, &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_iscatterv(a, cnt, dsp, NBCX_INT32, IP, 1,
                                             NBCX_INT32, 2, c0, &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_iscatterv(NULL, cnt, dsp, NBCX_INT32, b, 1,
                                           NBCX_INT32, 0, c0, &req));
    /* allgatherv */
    REJECT(NBCX_ERR_ARG, nbcx_iallgatherv(a, 1, NBCX_INT32, b, cnt, NULL,
                                          NBCX_INT32, c0, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_iallgatherv(a, 1, NBCX_INT32, b, neg, dsp,
                                            NBCX_INT32, c0, &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_iallgatherv(a, 1, NBCX_INT32, IP, cnt,
                                               dsp, NBCX_INT32, c0, &req));
    REJECT(NBCX_ERR_TYPE, nbcx_iallgatherv(a, 1, bad, b, cnt, dsp,
                                           NBCX_INT32, c0, &req));
    /* alltoallv, alltoallw */
    REJECT(NBCX_ERR_ARG, nbcx_ialltoallv(a, cnt, NULL, NBCX_INT32, b, cnt,
                                         dsp, NBCX_INT32, c0, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_ialltoallv(a, neg, dsp, NBCX_INT32, b, cnt,
                                           dsp, NBCX_INT32, c0, &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_ialltoallv(a, cnt, dsp, NBCX_INT32, IP,
                                              cnt, dsp, NBCX_INT32, c0,
                                              &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_ialltoallv(a, cnt, dsp, NBCX_INT32, NULL,
                                            cnt, dsp, NBCX_INT32, c0, &req));
    REJECT(NBCX_ERR_ARG, nbcx_ialltoallw(a, cnt, dsp, NULL, b, cnt, dsp, ty,
                                         c0, &req));
    REJECT(NBCX_ERR_TYPE, nbcx_ialltoallw(a, cnt, dsp, ty, b, cnt, dsp,
                                          badty, c0, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_ialltoallw(a, cnt, dsp, ty, b, neg, dsp, ty,
                                           c0, &req));
    /* the rank's block to itself: sizes that differ are caught at build
     * time (nothing posted), not copied past the end */
    const int cnt2[P] = { 2, 2, 1 };
    REJECT(NBCX_ERR_TRUNCATE, nbcx_ialltoallv(a, cnt, dsp, NBCX_INT32, b,
                                              cnt2, dsp, NBCX_INT32, c0,
                                              &req));
    REJECT(NBCX_ERR_TRUNCATE, nbcx_igatherv(a, 2, NBCX_INT32, b, cnt, dsp,
                                            NBCX_INT32, 0, c0, &req));
    /* reduce_scatter(_block), scan, exscan */
    REJECT(NBCX_ERR_ARG, nbcx_ireduce_scatter(a, b, NULL, NBCX_INT32,
                                              NBCX_SUM, c0, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_ireduce_scatter(a, b, neg, NBCX_INT32,
                                                NBCX_SUM, c0, &req));
    REJECT(NBCX_ERR_OP, nbcx_ireduce_scatter(a, b, cnt, NBCX_INT32,
                                             NBCX_MINLOC, c0, &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_ireduce_scatter(a, IP, cnt, NBCX_INT32,
                                                   NBCX_SUM, c0, &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_ireduce_scatter(NULL, b, cnt, NBCX_INT32,
                                                 NBCX_SUM, c0, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_ireduce_scatter_block(a, b, -1, NBCX_INT32,
                                                      NBCX_SUM, c0, &req));
    /* (P * count > INT_MAX is no error: the schedules count the whole
     * vector in 64 bits; test_algorithms' "chunked" and tests/inproc's
     * large_counts run such counts) */
    REJECT(NBCX_ERR_TYPE, nbcx_ireduce_scatter_block(a, b, 1, bad, NBCX_SUM,
                                                     c0, &req));
    REJECT(NBCX_ERR_OP, nbcx_iscan(a, b, 1, NBCX_INT32, NBCX_OP_NULL, c0,
                                   &req));
    REJECT(NBCX_ERR_COUNT, nbcx_iscan(a, b, -3, NBCX_INT32, NBCX_SUM, c0,
                                      &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_iscan(a, IP, 1, NBCX_INT32, NBCX_SUM, c0,
                                         &req));
    REJECT(NBCX_ERR_OP, nbcx_iexscan(a, b, 1, NBCX_DOUBLE, NBCX_BXOR, c0,
                                     &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_iexscan(a, NULL, 1, NBCX_INT32, NBCX_SUM,
                                         c0, &req));
    /* neighbourhood: no topology yet */
    REJECT(NBCX_ERR_TOPOLOGY, nbcx_ineighbor_allgather(a, 1, NBCX_INT32, b,
                                                       1, NBCX_INT32, c0,
                                                       &req));
    REJECT(NBCX_ERR_TOPOLOGY, nbcx_ineighbor_alltoallw(a, cnt, adsp, ty, b,
                                                       cnt, adsp, ty, c0,
                                                       &req));
    int ring_src[2] = { 2, 1 }, ring_dst[2] = { 2, 1 };
    int dims[2] = { 3, 1 }, periods[2] = { 1, 0 };
    CHECK_OK(nbcx_comm_set_neighbors(c0, 2, ring_src, 2, ring_dst));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_ineighbor_allgather(IP, 1, NBCX_INT32, b,
                                                       1, NBCX_INT32, c0,
                                                       &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_ineighbor_alltoall(a, 1, NBCX_INT32, IP,
                                                      1, NBCX_INT32, c0,
                                                      &req));
    REJECT(NBCX_ERR_COUNT, nbcx_ineighbor_alltoall(a, -1, NBCX_INT32, b, 1,
                                                   NBCX_INT32, c0, &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_ineighbor_alltoall(a, 1, NBCX_INT32, NULL,
                                                    1, NBCX_INT32, c0,
                                                    &req));
    REJECT(NBCX_ERR_ARG, nbcx_ineighbor_allgatherv(a, 1, NBCX_INT32, b, cnt,
                                                   NULL, NBCX_INT32, c0,
                                                   &req));
    REJECT(NBCX_ERR_COUNT, nbcx_ineighbor_alltoallv(a, neg, dsp, NBCX_INT32,
                                                    b, cnt, dsp, NBCX_INT32,
                                                    c0, &req));
    REJECT(NBCX_ERR_TYPE, nbcx_ineighbor_alltoallw(a, cnt, adsp, badty, b,
                                                   cnt, adsp, ty, c0, &req));
    REJECT(NBCX_ERR_ARG, nbcx_ineighbor_alltoallw(a, cnt, NULL, ty, b, cnt,
                                                  adsp, ty, c0, &req));
    /* topologies */
    int bad_rank[1] = { P }, self[1] = { 0 }, one[1] = { 1 };
    CHECK_RC(nbcx_comm_set_neighbors(c0, 1, bad_rank, 0, NULL),
             NBCX_ERR_RANK);
    CHECK_RC(nbcx_comm_set_neighbors(c0, -1, NULL, 0, NULL), NBCX_ERR_COUNT);
    CHECK_RC(nbcx_comm_set_neighbors(c0, 1, NULL, 0, NULL), NBCX_ERR_ARG);
    /* an edge to itself must also come back from itself */
    CHECK_RC(nbcx_comm_set_neighbors(c0, 1, one, 1, self), NBCX_ERR_TOPOLOGY);
    CHECK_RC(nbcx_comm_set_neighbors(NBCX_COMM_NULL, 0, NULL, 0, NULL),
             NBCX_ERR_COMM);
    CHECK_RC(nbcx_comm_set_cart(c0, 2, dims, NULL), NBCX_SUCCESS);
    dims[0] = 2;
    CHECK_RC(nbcx_comm_set_cart(c0, 2, dims, periods), NBCX_ERR_TOPOLOGY);
    dims[0] = 0;
    CHECK_RC(nbcx_comm_set_cart(c0, 2, dims, periods), NBCX_ERR_TOPOLOGY);
    CHECK_RC(nbcx_comm_set_cart(c0, 2, NULL, periods), NBCX_ERR_ARG);
    CHECK_RC(nbcx_comm_set_cart(c0, -1, dims, periods), NBCX_ERR_ARG);
    int in, out;
    CHECK_RC(nbcx_comm_neighbors_count(c0, NULL, &out), NBCX_ERR_ARG);
    CHECK_OK(nbcx_comm_neighbors_count(c0, &in, &out));
    CHECK(in == 4 && out == 4, "3x1 grid: %d %d neighbours", in, out);
    CHECK_RC(nbcx_comm_neighbors_count(c[1], &in, &out), NBCX_SUCCESS);
    CHECK(in == 0 && out == 0, "no topology: %d %d", in, out);
    CHECK_RC(nbcx_comm_neighbors(c[1], 0, NULL, 0, NULL), NBCX_ERR_TOPOLOGY);
    th_cases++;

    struct loopback_stats st;
    CHECK_OK(loopback_stats(c0, &st));
    CHECK_INT(st.posted, 0);

    /* The sequence numbers are intact: a real collective matches up. */
    nbcx_request r[P];
    int32_t v[P] = { 0 }, sum[P] = { 0 };
    for (int k = 0; k < P; k++) {
        v[k] = k + 1;
        CHECK_OK(nbcx_iscan(&v[k], &sum[k], 1, NBCX_INT32, NBCX_SUM, c[k],
                            &r[k]));
    }
    CHECK_OK(loopback_waitall(c0, P, r));
    CHECK(sum[0] == 1 && sum[1] == 3 && sum[2] == 6, "scan: %d %d %d",
          (int)sum[0], (int)sum[1], (int)sum[2]);
    loopback_world_destroy(P, c);
}

/* Arguments MPI calls insignificant may be anything: the receive side of
 * gatherv and the send side of scatterv off the root (NULL arrays, bad
 * types and counts), the send side of in-place alltoallv/w. */
static void test_insignificant_args(void)
{
    enum { P = 4, ROOT = 1 };
    nbcx_comm c[P];
    REQUIRE_OK(loopback_world_create(P, c));
    int32_t in[P][8], out[P][8];
    int cnt[P] = { 1, 2, 0, 3 }, dsp[P] = { 0, 1, 3, 3 };
    nbcx_request req[P];
    for (int r = 0; r < P; r++)
        for (int i = 0; i < 8; i++) {
            in[r][i] = 100 * r + i;
            out[r][i] = -1;
        }
    for (int r = 0; r < P; r++)
        CHECK_OK(r == ROOT ? nbcx_igatherv(in[r], cnt[r], NBCX_INT32, out[r],
                                           cnt, dsp, NBCX_INT32, ROOT, c[r],
                                           &req[r])
                           : nbcx_igatherv(in[r], cnt[r], NBCX_INT32, NULL,
                                           NULL, NULL, NBCX_DATATYPE_NULL,
                                           ROOT, c[r], &req[r]));
    CHECK_OK(loopback_waitall(c[0], P, req));
    for (int r = 0; r < P; r++)
        for (int i = 0; i < cnt[r]; i++)
            CHECK(out[ROOT][dsp[r] + i] == 100 * r + i, "gatherv %d %d", r,
                  i);
    for (int r = 0; r < P; r++)
        CHECK_OK(r == ROOT ? nbcx_iscatterv(in[r], cnt, dsp, NBCX_INT32,
                                            out[r], cnt[r], NBCX_INT32, ROOT,
                                            c[r], &req[r])
                           : nbcx_iscatterv(NULL, NULL, NULL,
                                            NBCX_DATATYPE_NULL, out[r],
                                            cnt[r], NBCX_INT32, ROOT, c[r],
                                            &req[r]));
    CHECK_OK(loopback_waitall(c[0], P, req));
    for (int r = 0; r < P; r++)
        for (int i = 0; i < cnt[r]; i++)
            CHECK(out[r][i] == 100 * ROOT + dsp[r] + i, "scatterv %d %d", r,
                  i);
    /* in-place alltoallw: the send side is NULL everywhere */
    int one[P] = { 1, 1, 1, 1 }, bd[P] = { 0, 4, 8, 12 };
    nbcx_datatype ty[P] = { NBCX_INT32, NBCX_INT32, NBCX_INT32, NBCX_INT32 };
    for (int r = 0; r < P; r++)
        CHECK_OK(nbcx_ialltoallw(NBCX_IN_PLACE, NULL, NULL, NULL, in[r], one,
                                 bd, ty, c[r], &req[r]));
    CHECK_OK(loopback_waitall(c[0], P, req));
    for (int r = 0; r < P; r++)
        for (int i = 0; i < P; i++)
            CHECK(in[r][i] == 100 * i + r, "alltoallw in place: rank %d "
                  "block %d is %d", r, i, (int)in[r][i]);
    th_cases += 3;
    loopback_world_destroy(P, c);
}

/* Names and the algorithm API for the new collectives. */
static void test_algorithm_api(void)
{
    static const char *const colls[] = {
        "gatherv", "scatterv", "allgatherv", "alltoallv", "alltoallw",
        "reduce_scatter", "reduce_scatter_block", "scan", "exscan",
        "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall",
        "neighbor_alltoallv", "neighbor_alltoallw" };
    for (int k = 0; k < TH_COUNT(colls); k++) {
        const char *names = NULL;
        CHECK_OK(nbcx_algorithm_names(colls[k], &names));
        CHECK(names && *names, "%s has algorithm names", colls[k]);
        CHECK_OK(nbcx_algorithm_set(colls[k], "auto"));
        CHECK_RC(nbcx_algorithm_set(colls[k], "no_such"), NBCX_ERR_ALGORITHM);
    }
    th_cases++;
}

#define V_TESTS(NAME, ID)                                                     \
    static void test_##NAME(void) { run_vcoll(ID, LOOPBACK_ORDERED); }        \
    static void test_##NAME##_random(void) { run_vcoll(ID, LOOPBACK_RANDOM); }
V_TESTS(gatherv, V_GATHERV)
V_TESTS(scatterv, V_SCATTERV)
V_TESTS(allgatherv, V_ALLGATHERV)
V_TESTS(alltoallv, V_ALLTOALLV)
V_TESTS(alltoallw, V_ALLTOALLW)
#define R_TESTS(NAME, ID)                                                     \
    static void test_##NAME(void) { run_rcoll(ID, LOOPBACK_ORDERED); }        \
    static void test_##NAME##_random(void) { run_rcoll(ID, LOOPBACK_RANDOM); }
R_TESTS(reduce_scatter, R_REDUCE_SCATTER)
R_TESTS(reduce_scatter_block, R_REDUCE_SCATTER_BLOCK)
R_TESTS(scan, R_SCAN)
R_TESTS(exscan, R_EXSCAN)
#define N_TESTS(NAME, ID)                                                     \
    static void test_##NAME(void) { run_ncoll(ID, LOOPBACK_ORDERED); }        \
    static void test_##NAME##_random(void) { run_ncoll(ID, LOOPBACK_RANDOM); }
N_TESTS(neighbor_allgather, N_ALLGATHER)
N_TESTS(neighbor_allgatherv, N_ALLGATHERV)
N_TESTS(neighbor_alltoall, N_ALLTOALL)
N_TESTS(neighbor_alltoallv, N_ALLTOALLV)
N_TESTS(neighbor_alltoallw, N_ALLTOALLW)

#define T(NAME) { #NAME, test_##NAME }, { #NAME "_random", test_##NAME##_random }
static const struct th_test tests[] = {
    { "algorithm_api", test_algorithm_api },
    { "argument_errors", test_argument_errors },
    { "insignificant_args", test_insignificant_args },
    { "long_scan", test_long_scan },
    T(gatherv),
    T(scatterv),
    T(allgatherv),
    T(alltoallv),
    T(alltoallw),
    T(reduce_scatter),
    T(reduce_scatter_block),
    T(scan),
    T(exscan),
    T(neighbor_allgather),
    T(neighbor_allgatherv),
    T(neighbor_alltoall),
    T(neighbor_alltoallv),
    T(neighbor_alltoallw),
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests, TH_COUNT(tests));
}
