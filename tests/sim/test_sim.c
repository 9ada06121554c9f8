/*
 * test_sim.c - the LogGP simulator (src/model/sim, docs/sim.md):
 * closed-form LogGP times on cases derived by hand, every algorithm of
 * every collective simulated to completion without unmatched messages,
 * folded runs equal to full ones, and the parameter file's errors.
 */
#include <math.h>

#include "harness.h"
#include "coll/coll.h"
#include "model/sim/sim.h"

/* Round numbers, g <= L + 2o, no local costs unless a test sets them. */
static struct nbcxi_sim_params params(void)
{
    struct nbcxi_sim_params p;
    memset(&p, 0, sizeof p);
    p.cores_per_node = 1;
    p.intra = (struct nbcxi_loggp){ 0.5, 0.25, 0.375, 0.001 };
    p.inter = (struct nbcxi_loggp){ 10, 2, 3, 0.01 };
    p.has_intra = p.has_inter = true;
    return p;
}

struct out {
    int rc;
    char err[512];
    struct nbcxi_sim_info info;
    struct nbcxi_sim_result res;
};

static struct out sim(const char *coll, const char *alg, int P, int C,
                      size_t bytes, int fold,
                      const struct nbcxi_sim_params *p, int progress,
                      double compute)
{
    struct out o;
    memset(&o, 0, sizeof o);
    struct nbcxi_sim_config cfg = { .coll = nbcxi_sim_coll(coll), .alg = alg,
                                    .ranks = P, .ranks_per_node = C,
                                    .bytes = bytes, .fold = fold };
    struct nbcxi_sim_run run = { progress, compute, 0, 0 };
    o.rc = nbcxi_sim_run(&cfg, p, &run, &o.info, &o.res, o.err,
                         sizeof o.err);
    return o;
}

static bool near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b)) + 1e-9;
}

#define CHECK_TIME(actual, expected)                                         \
    CHECK(near((actual), (expected)), "got %.9g us, expected %.9g us",      \
          (double)(actual), (double)(expected))

/* Binomial bcast of m bytes on P = 2^k ranks: k (L + 2o + (m-1)G), the
 * root sending to the largest subtree first; inside one node and with
 * every rank on its own node. */
static void test_bcast_binomial(void)
{
    struct nbcxi_sim_params p = params();
    for (int k = 1; k <= 10; k++) {
        int P = 1 << k;
        for (size_t m = 1; m <= 1 << 16; m *= 64) {
            struct out a = sim("bcast", "binomial", P, P, m,
                               NBCXI_SIM_FOLD_AUTO, &p, 0, 0);
            CHECK(a.rc == 0, "%s", a.err);
            CHECK_TIME(a.res.t_max, k * (p.intra.L + 2 * p.intra.o +
                                         (double)(m - 1) * p.intra.G));
            struct out b = sim("bcast", "binomial", P, 1, m,
                               NBCXI_SIM_FOLD_AUTO, &p, 0, 0);
            CHECK(b.rc == 0, "%s", b.err);
            CHECK_TIME(b.res.t_max, k * (p.inter.L + 2 * p.inter.o +
                                         (double)(m - 1) * p.inter.G));
        }
    }
}

/* Dissemination barrier: ceil(log2 P) rounds of L + 2o, any P. */
static void test_barrier(void)
{
    struct nbcxi_sim_params p = params();
    for (int P = 2; P <= 200; P++) {
        int rounds = 0;
        while ((1 << rounds) < P)
            rounds++;
        for (int fold = NBCXI_SIM_FOLD_AUTO; fold <= NBCXI_SIM_FOLD_OFF;
             fold += 2) {
            struct out a = sim("barrier", "dissemination", P, 1, 0, fold,
                               &p, 0, 0);
            CHECK(a.rc == 0, "%s", a.err);
            CHECK_TIME(a.res.t_max, rounds * (p.inter.L + 2 * p.inter.o));
            CHECK_TIME(a.res.t_min, a.res.t_max);
            CHECK(fold == NBCXI_SIM_FOLD_OFF ? a.info.period == 0
                                             : a.info.period == 1,
                  "P %d fold %d: period %d", P, fold, a.info.period);
        }
    }
}

/* Ring allgather of m-byte blocks: P - 1 steps of L + 2o + (m-1)G, each
 * forwarding the block received in the step before (the own block's
 * copy costs nothing here). */
static void test_allgather_ring(void)
{
    struct nbcxi_sim_params p = params();
    for (int P = 2; P <= 40; P += 3)
        for (size_t m = 8; m <= 8192; m *= 32) {
            struct out a = sim("allgather", "ring", P, 1, m,
                               NBCXI_SIM_FOLD_AUTO, &p, 0, 0);
            CHECK(a.rc == 0, "%s", a.err);
            CHECK_TIME(a.res.t_max, (P - 1) * (p.inter.L + 2 * p.inter.o +
                                               (double)(m - 1) * p.inter.G));
        }
}

/* Buffers of more than INT_MAX elements (issue 38), once refused ("the
 * buffers exceed nbcx's int displacements"): 1 MiB per rank of
 * allgather, alltoall and reduce_scatter(_block) on 16,384 ranks, 16 GiB
 * per buffer (bytes; int32 for the reductions, 4 Gi elements). The ring
 * allgather on one rank per node takes its formula, (P - 1)(L + 2o +
 * (m-1)G); the others complete, each after at least the P - 2 blocks a
 * rank receives from other nodes have crossed its link; Bruck's
 * allgather sends up to 8 GiB in one message (chunks, sched.h). Only the
 * v collectives' int displacements still refuse such a buffer. */
static void test_large_counts(void)
{
    struct nbcxi_sim_params p = params();
    const int P = 16384;
    const size_t m = (size_t)1 << 20;
    struct out a = sim("allgather", "ring", P, 1, m, NBCXI_SIM_FOLD_AUTO, &p,
                       0, 0);
    CHECK(a.rc == 0, "allgather ring: %s", a.err);
    CHECK_TIME(a.res.t_max,
               (P - 1) * (p.inter.L + 2 * p.inter.o + (double)(m - 1) *
                                                          p.inter.G));
    static const char *const runs[][2] = {
        { "allgather", NULL },         { "allgather", "bruck" },
        { "alltoall", NULL },          { "alltoall", "pairwise" },
        { "reduce_scatter", NULL },    { "reduce_scatter_block", NULL },
        { "reduce_scatter", "pairwise" },
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        struct out o = sim(runs[i][0], runs[i][1], P, 2, m,
                           NBCXI_SIM_FOLD_AUTO, &p, 0, 0);
        CHECK(o.rc == 0, "%s %s: %s", runs[i][0],
              runs[i][1] ? runs[i][1] : "auto", o.err);
        CHECK(o.rc != 0 || o.res.t_max >= (P - 2) * (double)(m - 1) *
                                               p.inter.G,
              "%s %s: %.9g us", runs[i][0], runs[i][1] ? runs[i][1] : "auto",
              o.res.t_max);
    }
    struct out v = sim("allgatherv", "ring", P, 2, m, NBCXI_SIM_FOLD_AUTO,
                       &p, 0, 0);
    CHECK(v.rc == NBCXI_SIM_EARG && strstr(v.err, "int displacements"),
          "allgatherv: rc %d %s", v.rc, v.err);
}

/* "inter_link": "shared" (tools/emunet: one loopback for both ways):
 * the 2 ranks of a ring allgather send at once; on a duplex link each
 * takes L + 2o + (m-1)G, on a shared one the second message waits for
 * the first to leave, g + (m-1)G more. A folded run cannot model the
 * shared link and is refused. */
static void test_shared_link(void)
{
    struct nbcxi_sim_params p = params();
    for (size_t m = 8; m <= 1 << 20; m *= 64) {
        struct out dup = sim("allgather", "ring", 2, 1, m,
                             NBCXI_SIM_FOLD_OFF, &p, 0, 0);
        p.inter_shared = true;
        struct out sh = sim("allgather", "ring", 2, 1, m, NBCXI_SIM_FOLD_OFF,
                            &p, 0, 0);
        CHECK(dup.rc == 0 && sh.rc == 0, "%s %s", dup.err, sh.err);
        double body = (double)(m - 1) * p.inter.G;
        CHECK_TIME(dup.res.t_max, p.inter.L + 2 * p.inter.o + body);
        CHECK_TIME(sh.res.t_max, dup.res.t_max + p.inter.g + body);
        struct out folded = sim("allgather", "ring", 8, 1, m,
                                NBCXI_SIM_FOLD_ON, &p, 0, 0);
        CHECK(folded.rc == NBCXI_SIM_EARG && strstr(folded.err, "folded"),
              "folded with a shared link: rc %d %s", folded.rc, folded.err);
        p.inter_shared = false;
    }
}

/* nbcxi_sim_job_same (nbcx-tune simulates a schedule once): true for
 * the same configuration built twice and for a fragment size the
 * algorithm does not use; false for another fragment of the chain, another
 * algorithm, size, rank count or node size. */
static struct nbcxi_sim_job *job_of(const char *coll, const char *alg,
                                    int P, int C, size_t bytes,
                                    size_t segsize)
{
    struct nbcxi_sim_config cfg = { .coll = nbcxi_sim_coll(coll), .alg = alg,
                                    .ranks = P, .ranks_per_node = C,
                                    .bytes = bytes, .segsize = segsize,
                                    .fold = NBCXI_SIM_FOLD_OFF };
    struct nbcxi_sim_job *J = NULL;
    char err[512];
    int rc = nbcxi_sim_build(&cfg, &J, err, sizeof err);
    CHECK(rc == 0 && J, "%s %s: %s", coll, alg ? alg : "auto", err);
    return J;
}

static void test_same_job(void)
{
    struct { const char *coll, *alg; int P, C; size_t bytes, seg; } v[] = {
        { "bcast", "chain", 16, 2, 1 << 20, 0 },
        { "bcast", "chain", 16, 2, 1 << 20, 16384 },
        { "bcast", "binomial", 16, 2, 1 << 20, 0 },
        { "bcast", "knomial4", 16, 2, 1 << 20, 0 },
        { "bcast", "binomial", 16, 2, 1 << 19, 0 },
        { "bcast", "binomial", 12, 2, 1 << 20, 0 },
        { "bcast", "binomial", 16, 4, 1 << 20, 0 },
        { "allgather", "ring", 16, 4, 1024, 0 },
    };
    enum { N = sizeof v / sizeof v[0] };
    struct nbcxi_sim_job *J[N];
    for (int i = 0; i < N; i++)
        J[i] = job_of(v[i].coll, v[i].alg, v[i].P, v[i].C, v[i].bytes,
                      v[i].seg);
    for (int i = 0; i < N; i++)
        for (int k = 0; k < N; k++)
            if (J[i] && J[k])
                CHECK(nbcxi_sim_job_same(J[i], J[k]) == (i == k),
                      "%s %s %d/%d %zu seg %zu against %s %s %d/%d %zu seg "
                      "%zu: %s", v[i].coll, v[i].alg, v[i].P, v[i].C,
                      v[i].bytes, v[i].seg, v[k].coll, v[k].alg, v[k].P,
                      v[k].C, v[k].bytes, v[k].seg,
                      i == k ? "not the same" : "the same");
    /* built again; a fragment size binomial and ring do not use */
    struct nbcxi_sim_job *again[3] = {
        job_of("bcast", "chain", 16, 2, 1 << 20, 16384),
        job_of("bcast", "binomial", 16, 2, 1 << 20, 65536),
        job_of("allgather", "ring", 16, 4, 1024, 4096),
    };
    const int of[3] = { 1, 2, 7 };
    for (int i = 0; i < 3; i++) {
        if (again[i] && J[of[i]])
            CHECK(nbcxi_sim_job_same(again[i], J[of[i]]),
                  "%s %s built again: not the same", v[of[i]].coll,
                  v[of[i]].alg);
        nbcxi_sim_free(again[i]);
    }
    for (int i = 0; i < N; i++)
        nbcxi_sim_free(J[i]);
}

/* Linear gather: P - 1 messages reach the root's NIC at o + L, which
 * takes one per g + (m-1)G; the root spends o on each (o <= that gap):
 * 2o + L + (m-1)G + (P-2)(g + (m-1)G). */
static void test_gather_linear(void)
{
    struct nbcxi_sim_params p = params();
    for (int P = 2; P <= 64; P *= 2)
        for (size_t m = 1; m <= 4096; m *= 16) {
            struct out a = sim("gather", "linear", P, 1, m,
                               NBCXI_SIM_FOLD_AUTO, &p, 0, 0);
            CHECK(a.rc == 0, "%s", a.err);
            double body = (double)(m - 1) * p.inter.G;
            CHECK_TIME(a.res.t_max, 2 * p.inter.o + p.inter.L + body +
                                        (P - 2) * (p.inter.g + body));
        }
}

/* Reductions and copies cost bytes x their rate: a binomial reduce of m
 * bytes on 2 ranks ends with the root's reduction after the message
 * (its own data's copy into rbuf is done long before). */
static void test_reduce_cost(void)
{
    struct nbcxi_sim_params p = params();
    p.reduce_per_byte = 0.002;
    p.copy_per_byte = 0.0001;
    size_t m = 4096;
    struct out a = sim("reduce", "binomial", 2, 1, m, NBCXI_SIM_FOLD_AUTO,
                       &p, 0, 0);
    CHECK(a.rc == 0, "%s", a.err);
    CHECK_TIME(a.res.t_max, p.inter.L + 2 * p.inter.o +
                                (double)(m - 1) * p.inter.G +
                                (double)m * p.reduce_per_byte);
    /* up to cache_bytes the cached rate applies, above it the other */
    p.reduce_per_byte_cached = 0.0005;
    p.copy_per_byte_cached = 0.00001;
    for (int k = 0; k < 2; k++) {
        p.cache_bytes = (double)m - k;
        struct out c = sim("reduce", "binomial", 2, 1, m,
                           NBCXI_SIM_FOLD_AUTO, &p, 0, 0);
        CHECK(c.rc == 0, "%s", c.err);
        CHECK_TIME(c.res.t_max,
                   p.inter.L + 2 * p.inter.o + (double)(m - 1) * p.inter.G +
                       (double)m * (k == 0 ? p.reduce_per_byte_cached
                                           : p.reduce_per_byte));
    }
}

/* nbcx's engine (start_cost s, node_cost n, message_cost c): a binomial
 * bcast of m bytes on 2 ranks: the root's start s, then its send's
 * o + c + n; the receiver's posting n is over long before the message
 * lands, then o + c:
 *     T = s + n + L + 2(o + c) + (m-1)G.
 * A binomial reduce on 2 ranks adds the root's reduction node, n + m x
 * reduce_per_byte, after its receive. A call-only schedule would finish
 * at s + n. Without the keys (0) the times are the plain LogGP ones. */
static void test_engine_cost(void)
{
    struct nbcxi_sim_params p = params();
    p.reduce_per_byte = 0.002;
    size_t m = 4096;
    double wire = p.inter.L + 2 * p.inter.o + (double)(m - 1) * p.inter.G;
    struct out plain = sim("bcast", "binomial", 2, 1, m, NBCXI_SIM_FOLD_OFF,
                           &p, NBCXI_SIM_CALLER, 0);
    CHECK(plain.rc == 0, "%s", plain.err);
    CHECK_TIME(plain.res.t_max, wire);
    p.start_cost = 0.7;
    p.node_cost = 0.125;
    p.message_cost = 0.0625;
    wire += 2 * p.message_cost;
    for (int progress = NBCXI_SIM_THREAD; progress <= NBCXI_SIM_CALLER;
         progress++) {
        struct out b = sim("bcast", "binomial", 2, 1, m, NBCXI_SIM_FOLD_OFF,
                           &p, progress, 0);
        CHECK(b.rc == 0, "%s", b.err);
        CHECK_TIME(b.res.t_max, p.start_cost + p.node_cost + wire);
        struct out r = sim("reduce", "binomial", 2, 1, m, NBCXI_SIM_FOLD_OFF,
                           &p, progress, 0);
        CHECK(r.rc == 0, "%s", r.err);
        CHECK_TIME(r.res.t_max, p.start_cost + 2 * p.node_cost + wire +
                                    (double)m * p.reduce_per_byte);
    }
    /* on one rank: the start alone (bcast has no node there) */
    struct out one = sim("bcast", "binomial", 1, 1, m, NBCXI_SIM_FOLD_OFF, &p,
                         NBCXI_SIM_CALLER, 0);
    CHECK(one.rc == 0, "%s", one.err);
    CHECK_TIME(one.res.t_max, p.start_cost);
    /* a binomial bcast on 2^k ranks: every level pays a send's n */
    for (int k = 2; k <= 4; k++) {
        struct out b = sim("bcast", "binomial", 1 << k, 1, m,
                           NBCXI_SIM_FOLD_OFF, &p, NBCXI_SIM_CALLER, 0);
        CHECK(b.rc == 0, "%s", b.err);
        CHECK_TIME(b.res.t_max, p.start_cost + k * (p.node_cost + wire));
    }
}

/* intra_cpu_share f (shared memory, copy-in/copy-out): one message
 * alone is unchanged, L + 2o + (m-1)G, but two ranks sending to each
 * other at once (allgather ring, alltoall pairwise on 2 ranks) each copy
 * both ways: 2o + (1 + f)(m-1)G instead of L + 2o + (m-1)G (here
 * L < f (m-1)G). Inter-node messages keep their NICs. */
static void test_cpu_link(void)
{
    struct nbcxi_sim_params p = params();
    size_t m = 1 << 16;
    double B = (double)(m - 1) * p.intra.G;
    static const double share[] = { 0, 1, 0.5 };
    for (int k3 = 0; k3 < 3; k3++) {
        double f = share[k3];
        p.intra_cpu_share = f;
        struct out b = sim("bcast", "binomial", 2, 2, m, NBCXI_SIM_FOLD_OFF,
                           &p, NBCXI_SIM_CALLER, 0);
        CHECK(b.rc == 0, "%s", b.err);
        CHECK_TIME(b.res.t_max, p.intra.L + 2 * p.intra.o + B);
        static const char *const ex[][2] = { { "allgather", "ring" },
                                             { "alltoall", "pairwise" } };
        for (int k = 0; k < 2; k++) {
            struct out x = sim(ex[k][0], ex[k][1], 2, 2, m,
                               NBCXI_SIM_FOLD_OFF, &p, NBCXI_SIM_CALLER, 0);
            CHECK(x.rc == 0, "%s %s: %s", ex[k][0], ex[k][1], x.err);
            CHECK_TIME(x.res.t_max, f > 0 ? 2 * p.intra.o + (1 + f) * B
                                          : p.intra.L + 2 * p.intra.o + B);
            struct out y = sim(ex[k][0], ex[k][1], 2, 1, m,
                               NBCXI_SIM_FOLD_OFF, &p, NBCXI_SIM_CALLER, 0);
            CHECK(y.rc == 0, "%s", y.err);
            CHECK_TIME(y.res.t_max, p.inter.L + 2 * p.inter.o +
                                        (double)(m - 1) * p.inter.G);
        }
    }
}

/* Oversubscription ("sched_latency" s: time_share): the ranks of a node
 * beyond cores_per_node share cores, rank r on core r mod cores; their
 * CPU work is serialised, a message between two ranks of one core is
 * all CPU work at both ends (share 1), and a rank that was waiting pays
 * s (k - 1) before its CPU takes a message, k ranks sharing its core.
 * Closed forms on one core (B = (m-1)G, L + s > 2B):
 *   one message (bcast, 2 ranks)  L + 2o + B + s
 *   an exchange (allgather ring)  the two sends' o, the two copy-ins
 *       (2o + 2B), the first copy-out, the second waits for its
 *       message (L + s after its copy-in: 2o + 2B + L + s) and takes B,
 *       the two receives' o: 4o + 2B + L + s.
 * Off without the key, and with as many cores as ranks per node. */
static void test_oversubscribed(void)
{
    struct nbcxi_sim_params p = params();
    size_t m = 1025;
    double B = (double)(m - 1) * p.intra.G, o = p.intra.o, L = p.intra.L;
    double s = 3;
    struct out b0 = sim("bcast", "binomial", 2, 2, m, NBCXI_SIM_FOLD_OFF, &p,
                        NBCXI_SIM_CALLER, 0);
    CHECK(b0.rc == 0, "%s", b0.err);
    CHECK_TIME(b0.res.t_max, L + 2 * o + B); /* no key: off */
    static const char file[] =
        "{\"format\": \"nbcx-loggp/1\", \"cores_per_node\": 1,\n"
        " \"intra\": {\"L\": 0.5, \"o\": 0.25, \"g\": 0.375, \"G\": 0.001},\n"
        " \"copy_per_byte\": 0, \"reduce_per_byte\": 0,\n"
        " \"sched_latency\": 3}";
    char err[256];
    struct nbcxi_sim_params q;
    CHECK(nbcxi_sim_params_parse(file, sizeof file - 1, &q, err,
                                 sizeof err) == 0, "%s", err);
    CHECK(q.time_share && q.sched_latency == 3, "sched_latency not read");
    p.time_share = true;
    p.sched_latency = s;
    struct out b = sim("bcast", "binomial", 2, 2, m, NBCXI_SIM_FOLD_OFF, &p,
                       NBCXI_SIM_CALLER, 0);
    CHECK(b.rc == 0, "%s", b.err);
    CHECK_TIME(b.res.t_max, L + 2 * o + B + s);
    struct out q1 = sim("bcast", "binomial", 2, 2, m, NBCXI_SIM_FOLD_OFF, &q,
                        NBCXI_SIM_CALLER, 0);
    CHECK(q1.rc == 0, "%s", q1.err);
    CHECK_TIME(q1.res.t_max, L + 2 * o + B + s); /* the same, from a file */
    struct out x = sim("allgather", "ring", 2, 2, m, NBCXI_SIM_FOLD_OFF, &p,
                       NBCXI_SIM_CALLER, 0);
    CHECK(x.rc == 0, "%s", x.err);
    CHECK_TIME(x.res.t_max, 4 * o + 2 * B + L + s);
    /* a core per rank: off (the 2-rank, one-core-each results stand) */
    p.cores_per_node = 2;
    struct out b2 = sim("bcast", "binomial", 2, 2, m, NBCXI_SIM_FOLD_OFF, &p,
                        NBCXI_SIM_CALLER, 0);
    CHECK(b2.rc == 0, "%s", b2.err);
    CHECK_TIME(b2.res.t_max, L + 2 * o + B);
    /* the wake-up grows with the ranks of a core: a binomial bcast on 4
     * ranks waits twice, s (k - 1) each, k = 2 on 2 cores, 4 on 1 (s
     * large: the rest, under 4 us, is LogGP and serialised o's) */
    p.sched_latency = s = 100;
    p.time_share = false;
    struct out f4 = sim("bcast", "binomial", 4, 4, 1, NBCXI_SIM_FOLD_OFF, &p,
                        NBCXI_SIM_CALLER, 0);
    CHECK(f4.rc == 0, "%s", f4.err);
    p.time_share = true;
    for (int cores = 1; cores <= 4; cores *= 2) {
        p.cores_per_node = cores;
        struct out w = sim("bcast", "binomial", 4, 4, 1, NBCXI_SIM_FOLD_OFF,
                           &p, NBCXI_SIM_CALLER, 0);
        CHECK(w.rc == 0, "%s", w.err);
        double extra = w.res.t_max - f4.res.t_max, k = 4 / cores;
        CHECK(extra >= 2 * s * (k - 1) && extra < 2 * s * (k - 1) + 4,
              "%d cores: %.3f us more than one core per rank, expected "
              "%.0f + under 4", cores, extra, 2 * s * (k - 1));
    }
}

/* Oversubscription, two mechanisms of the hand-over (simulate.c):
 *  - a rank switched in takes every message that reached it meanwhile:
 *    a linear gather of 3 ranks on one core (k = 3) waits once at the
 *    root, s (k - 1), however many messages arrive while it waits (it
 *    used to pay one wake-up per message: the receiving side's queue,
 *    pushed by the first wake-up, made the second look idle);
 *  - rendezvous ("eager_limit" E, "rndv_latency" h): on one core, a
 *    bcast of m > E bytes on 2 ranks is the header (o, L), the receiver
 *    switched in (s) to answer (o, L), the sender switched in (h) for
 *    the body (B on the core), the receiver switched in (h, L) for the
 *    copy-out (B) and the receive's o: 3o + 3L + s + 2h + B when
 *    L + h > B; m <= E is eager, L + 2o + B + s; without time-sharing
 *    E changes nothing. */
static void test_oversub_handover(void)
{
    struct nbcxi_sim_params p = params();
    double o = p.intra.o, L = p.intra.L;
    p.sched_latency = 100;
    struct out g0 = sim("gather", "linear", 3, 3, 1, NBCXI_SIM_FOLD_OFF, &p,
                        NBCXI_SIM_CALLER, 0);
    CHECK(g0.rc == 0, "%s", g0.err);
    p.time_share = true;
    struct out g = sim("gather", "linear", 3, 3, 1, NBCXI_SIM_FOLD_OFF, &p,
                       NBCXI_SIM_CALLER, 0);
    CHECK(g.rc == 0, "%s", g.err);
    double extra = g.res.t_max - g0.res.t_max;
    CHECK(extra >= 2 * p.sched_latency && extra < 2 * p.sched_latency + 4,
          "linear gather on one core: %.3f us more than without "
          "time-sharing, expected one wake-up (%.0f) + under 4",
          extra, 2 * p.sched_latency);

    double s = p.sched_latency = 3;
    size_t m = 1025;
    double B = (double)(m - 1) * p.intra.G;
    double h = p.rndv_latency = 1;
    p.eager_limit = 1024;
    struct out r = sim("bcast", "binomial", 2, 2, m, NBCXI_SIM_FOLD_OFF, &p,
                       NBCXI_SIM_CALLER, 0);
    CHECK(r.rc == 0, "%s", r.err);
    CHECK_TIME(r.res.t_max, 3 * o + 3 * L + s + 2 * h + B);
    p.eager_limit = (double)m; /* not above: eager */
    struct out e = sim("bcast", "binomial", 2, 2, m, NBCXI_SIM_FOLD_OFF, &p,
                       NBCXI_SIM_CALLER, 0);
    CHECK(e.rc == 0, "%s", e.err);
    CHECK_TIME(e.res.t_max, L + 2 * o + B + s);
    p.eager_limit = 1024;
    p.time_share = false; /* a core per rank: no rendezvous modelled */
    struct out d = sim("bcast", "binomial", 2, 2, m, NBCXI_SIM_FOLD_OFF, &p,
                       NBCXI_SIM_CALLER, 0);
    CHECK(d.rc == 0, "%s", d.err);
    CHECK_TIME(d.res.t_max, L + 2 * o + B);
    static const char file[] =
        "{\"format\": \"nbcx-loggp/1\", \"cores_per_node\": 1,\n"
        " \"intra\": {\"L\": 0.5, \"o\": 0.25, \"g\": 0.375, \"G\": 0.001},\n"
        " \"copy_per_byte\": 0, \"reduce_per_byte\": 0,\n"
        " \"sched_latency\": 3, \"eager_limit\": 4096, \"rndv_latency\": 0.5}";
    char err[256];
    struct nbcxi_sim_params q;
    CHECK(nbcxi_sim_params_parse(file, sizeof file - 1, &q, err,
                                 sizeof err) == 0, "%s", err);
    CHECK(q.eager_limit == 4096 && q.rndv_latency == 0.5,
          "eager_limit, rndv_latency not read");
}

/* Progress: one message (bcast on 2 ranks) and a computation c longer
 * than it. With a progress thread the receive happens during the
 * computation: wait returns at t_b + c, overlap 1. Called progress only:
 * the receiver spends its o at wait (t = c), and returns at c + o; the
 * overlap is (T + c - (c + o)) / T = 1 - o / T. */
static void test_progress(void)
{
    struct nbcxi_sim_params p = params();
    size_t m = 1000;
    double T = p.inter.L + 2 * p.inter.o + (double)(m - 1) * p.inter.G;
    double c = 1000;
    struct out pure = sim("bcast", "binomial", 2, 1, m, NBCXI_SIM_FOLD_OFF,
                          &p, NBCXI_SIM_THREAD, 0);
    CHECK_TIME(pure.res.t_total_max, T);
    struct out th = sim("bcast", "binomial", 2, 1, m, NBCXI_SIM_FOLD_OFF, &p,
                        NBCXI_SIM_THREAD, c);
    CHECK(th.rc == 0, "%s", th.err);
    /* the root's start is its send's o; the receiver's start is empty */
    CHECK_TIME(th.res.t_total_max, p.inter.o + c);
    CHECK_TIME(th.res.t_max, T);
    struct out ca = sim("bcast", "binomial", 2, 1, m, NBCXI_SIM_FOLD_OFF, &p,
                        NBCXI_SIM_CALLER, c);
    CHECK(ca.rc == 0, "%s", ca.err);
    CHECK_TIME(ca.res.t_total_max, p.inter.o + c);
    CHECK_TIME(ca.res.t_max, c + p.inter.o);
    CHECK_TIME(nbcxi_sim_overlap(T, c, ca.res.t_total_max),
               (T + c - (p.inter.o + c)) / T);
    /* a computation too short to cover the message: caller mode delays
     * nothing that was not waiting anyway */
    struct out sh = sim("bcast", "binomial", 2, 1, m, NBCXI_SIM_FOLD_OFF, &p,
                        NBCXI_SIM_CALLER, 1);
    CHECK_TIME(sh.res.t_max, T);
}

static struct out sim_split(const char *coll, const char *alg, int P,
                            size_t m, const struct nbcxi_sim_params *p,
                            double c, int levels)
{
    struct out o;
    memset(&o, 0, sizeof o);
    struct nbcxi_sim_config cfg = { .coll = nbcxi_sim_coll(coll), .alg = alg,
                                    .ranks = P, .ranks_per_node = 1,
                                    .bytes = m };
    struct nbcxi_sim_run run = { NBCXI_SIM_SPLIT, c, levels, 0 };
    o.rc = nbcxi_sim_run(&cfg, p, &run, &o.info, &o.res, o.err,
                         sizeof o.err);
    return o;
}

/* Split progress: S = 0 is thread mode; the leaf levels of a bcast wait
 * for wait (t = c) on the application core; the leaf level of a reduce
 * is done inside the start, which then lasts one message. */
static void test_split(void)
{
    struct nbcxi_sim_params p = params();
    const size_t m = 1000;
    const double c = 1000, T = p.inter.L + 2 * p.inter.o +
                               (double)(m - 1) * p.inter.G;
    static const char *const cases[][2] = {
        { "bcast", "binomial" }, { "reduce", "binomial" },
        { "allreduce", "reduce_bcast" }, { "gather", "binomial" },
        { "scatter", "binomial" }, { "alltoall", "pairwise" } };
    for (int k = 0; k < TH_COUNT(cases); k++) {
        struct out a = sim_split(cases[k][0], cases[k][1], 13, m, &p, c, 0);
        struct out b = sim(cases[k][0], cases[k][1], 13, 1, m,
                           NBCXI_SIM_FOLD_AUTO, &p, NBCXI_SIM_THREAD, c);
        CHECK(a.rc == 0 && b.rc == 0, "%s %s", a.err, b.err);
        CHECK(near(a.res.t_total_max, b.res.t_total_max) &&
                  near(a.res.t_max, b.res.t_max) &&
                  near(a.res.t_start_max, b.res.t_start_max),
              "%s: split S=0 %g %g, thread %g %g", cases[k][0],
              a.res.t_total_max, a.res.t_max, b.res.t_total_max,
              b.res.t_max);
        for (int S = 1; S <= 5; S++) { /* completes, never earlier */
            struct out x = sim_split(cases[k][0], cases[k][1], 13, m, &p, c,
                                     S);
            CHECK(x.rc == 0 && x.res.t_total_max >= b.res.t_total_max - 1e-9,
                  "%s S=%d: %s %g < %g", cases[k][0], S, x.err,
                  x.res.t_total_max, b.res.t_total_max);
        }
    }
    struct out s1 = sim_split("bcast", "binomial", 4, m, &p, c, 1);
    CHECK_TIME(s1.res.t_total_max, c + T);
    struct out s2 = sim_split("bcast", "binomial", 4, m, &p, c, 2);
    CHECK_TIME(s2.res.t_total_max, c + p.inter.o + T);
    struct out r1 = sim_split("reduce", "binomial", 2, m, &p, c, 1);
    CHECK_TIME(r1.res.t_start_max, T);
    CHECK_TIME(r1.res.t_total_max, T + c);
}

/* A run with k shared progress cores per node. */
static struct out sim_pool(const char *coll, const char *alg, int P, int C,
                           size_t m, const struct nbcxi_sim_params *p,
                           int progress, double c, int levels, int k)
{
    struct out o;
    memset(&o, 0, sizeof o);
    struct nbcxi_sim_config cfg = { .coll = nbcxi_sim_coll(coll), .alg = alg,
                                    .ranks = P, .ranks_per_node = C,
                                    .bytes = m, .fold = NBCXI_SIM_FOLD_OFF };
    struct nbcxi_sim_run run = { progress, c, levels, k };
    o.rc = nbcxi_sim_run(&cfg, p, &run, &o.info, &o.res, o.err,
                         sizeof o.err);
    return o;
}

/* Shared progress cores (run.progress_cores_per_node = k). Linear
 * alltoall of 1 byte on one node of P = 4 ranks, o = 1 >= g: the start
 * sends every rank's 3 messages on its application core, injected at
 * o, 2o, 3o; at j o + L each rank gets one (the peers are a shift), and
 * the 12 receives' o go to the pool. With a core per rank (k = 0) or
 * k = 4 each rank's receive is done o after it lands: L + 4o. With k
 * cores the pool never idles from the first landing, o + L, on: L + o +
 * 12 o / k (k = 1: the C ranks' o serialised, L + 13o; k = 2: L + 7o).
 * Caller mode ignores k. With k >= C ranks, the times of a core per
 * rank. */
static void test_shared_progress(void)
{
    struct nbcxi_sim_params p = params();
    p.intra = (struct nbcxi_loggp){ 3, 1, 0.5, 0.001 };
    const double L = p.intra.L, o = p.intra.o;
    static const int ks[] = { 0, 1, 2, 4 };
    const double want[] = { L + 4 * o, L + 13 * o, L + 7 * o, L + 4 * o };
    for (int i = 0; i < TH_COUNT(ks); i++) {
        struct out a = sim_pool("alltoall", "linear", 4, 4, 1, &p,
                                NBCXI_SIM_THREAD, 0, 0, ks[i]);
        CHECK(a.rc == 0, "k=%d: %s", ks[i], a.err);
        CHECK(near(a.res.t_max, want[i]), "k=%d: %g, expected %g", ks[i],
              a.res.t_max, want[i]);
        /* split mode at S = 0 is thread mode, also on a pool */
        struct out b = sim_pool("alltoall", "linear", 4, 4, 1, &p,
                                NBCXI_SIM_SPLIT, 0, 0, ks[i]);
        CHECK(b.rc == 0 && near(b.res.t_max, want[i]), "split k=%d: %g",
              ks[i], b.res.t_max);
        /* the pool is per node: two nodes of 4 ranks (the messages
         * between them inter-node, so only compare k = 1 with k = 0:
         * never faster) */
        struct out c0 = sim_pool("alltoall", "linear", 8, 4, 1, &p,
                                 NBCXI_SIM_CALLER, 100, 0, 0);
        struct out c1 = sim_pool("alltoall", "linear", 8, 4, 1, &p,
                                 NBCXI_SIM_CALLER, 100, 0, ks[i]);
        CHECK(c0.rc == 0 && c1.rc == 0 &&
                  near(c0.res.t_total_max, c1.res.t_total_max),
              "caller k=%d: %g vs %g", ks[i], c1.res.t_total_max,
              c0.res.t_total_max);
    }
    /* A rank's progress thread runs one item at a time, on whichever
     * core: k >= C gives the times of a core per rank, for any
     * schedule. */
    static const char *const trees[][2] = { { "bcast", "binomial" },
        { "reduce", "binomial" }, { "allreduce", "recursive_doubling" },
        { "scatter", "binomial" } };
    for (int i = 0; i < TH_COUNT(trees); i++) {
        struct out a = sim_pool(trees[i][0], trees[i][1], 13, 13, 1000, &p,
                                NBCXI_SIM_THREAD, 50, 0, 0);
        for (int k = 13; k <= 26; k += 13) {
            struct out b = sim_pool(trees[i][0], trees[i][1], 13, 13, 1000,
                                    &p, NBCXI_SIM_THREAD, 50, 0, k);
            CHECK(a.rc == 0 && b.rc == 0 &&
                      near(a.res.t_total_max, b.res.t_total_max) &&
                      near(a.res.t_max, b.res.t_max),
                  "%s k=%d: %g, a core per rank: %g", trees[i][0], k,
                  b.res.t_max, a.res.t_max);
        }
    }
    /* Split binomial bcast, 8 ranks on one node, 1 byte, k = 1, S = 1,
     * computation c long: level 3 (0 -> 4) is sent in the start (o on
     * the root's core), lands at o + L, rank 4's receive on the pool
     * until 2o + L; level 2: the root's send 0 -> 2 was in the start too
     * (2o, lands 2o + L), rank 4's send 4 -> 6 and rank 2's receive
     * share the one pool core: 2 -> [2o+L, 3o+L] receive of 2 (ready
     * first? both ready at 2o + L: the pool takes them one after the
     * other), then 4 -> 6 [3o+L, 4o+L], lands 4o+2L, rank 6's receive
     * [4o+2L, 5o+2L]; rank 2's send 2 -> 3 is level 1 (application).
     * Level 1 waits for c: the root's 0 -> 1 is in the start; 2 -> 3,
     * 4 -> 5, 6 -> 7 sends at c on each application core, then L, then
     * the receive o: all done at c + 2o + L. */
    p.intra.g = 0;
    const double c = 1000;
    struct out s = sim_pool("bcast", "binomial", 8, 8, 1, &p,
                            NBCXI_SIM_SPLIT, c, 1, 1);
    CHECK(s.rc == 0, "%s", s.err);
    CHECK(near(s.res.t_total_max, c + 2 * o + L), "split k=1: %g, want %g",
          s.res.t_total_max, c + 2 * o + L);
    /* S = 0, k = 1: the 7 receives and the 4 forwarding sends (4 -> 6,
     * 4 -> 5, 2 -> 3, 6 -> 7) all on one core, no computation: at least
     * 11 o of pool work after the first landing. */
    struct out z = sim_pool("bcast", "binomial", 8, 8, 1, &p,
                            NBCXI_SIM_SPLIT, 0, 0, 1);
    struct out z0 = sim_pool("bcast", "binomial", 8, 8, 1, &p,
                             NBCXI_SIM_SPLIT, 0, 0, 0);
    CHECK(z.rc == 0 && z.res.t_max >= o + L + 11 * o - 1e-9 &&
              z.res.t_max > z0.res.t_max,
          "S=0 k=1: %g (k=0: %g)", z.res.t_max, z0.res.t_max);
}

/* Every algorithm of every collective, on several P and placements:
 * built, matched, simulated to completion. */
static void test_all_algorithms(void)
{
    struct nbcxi_sim_params p = params();
    p.copy_per_byte = 0.0001;
    p.reduce_per_byte = 0.0003;
    static const int Ps[] = { 1, 2, 3, 4, 5, 7, 8, 12, 16, 33, 64 };
    long runs = 0;
    for (int c = 0; c < NBCXI_NCOLL; c++) {
        const char *alg;
        for (int i = 0; (alg = nbcxi_sim_alg(c, i)); i++)
            for (int k = 0; k < TH_COUNT(Ps); k++)
                for (int C = 1; C <= 4; C *= 4)
                    for (size_t m = 0; m <= 100000; m = m ? m * 100 : 10) {
                        struct out a = sim(nbcxi_coll_name(c), alg, Ps[k], C,
                                           m, NBCXI_SIM_FOLD_AUTO, &p, 0, 0);
                        CHECK(a.rc == 0, "%s %s P %d C %d m %zu: %s",
                              nbcxi_coll_name(c), alg, Ps[k], C, m, a.err);
                        CHECK(a.res.t_max >= a.res.t_median &&
                                  a.res.t_median >= a.res.t_min &&
                                  a.res.t_min >= 0,
                              "%s %s P %d: times %g %g %g",
                              nbcxi_coll_name(c), alg, Ps[k], a.res.t_max,
                              a.res.t_median, a.res.t_min);
                        CHECK(Ps[k] == 1 || m == 0 ||
                                  a.info.messages_total > 0,
                              "%s %s P %d m %zu: no messages",
                              nbcxi_coll_name(c), alg, Ps[k], m);
                        runs++;
                    }
        /* the automatic choice too */
        struct out a = sim(nbcxi_coll_name(c), "auto", 16, 2, 1024,
                           NBCXI_SIM_FOLD_AUTO, &p, 0, 0);
        CHECK(a.rc == 0, "%s auto: %s", nbcxi_coll_name(c), a.err);
        CHECK(a.info.alg[0] != '\0', "%s auto: no name", nbcxi_coll_name(c));
    }
    CHECK(runs > 1000, "only %ld runs", runs);
}

/* Folding (simulating one node's ranks for all) gives the times of the
 * full simulation, for every algorithm that folds, in both progress
 * modes. */
static void test_fold_equals_full(void)
{
    struct nbcxi_sim_params p = params();
    p.copy_per_byte = 0.0001;
    p.reduce_per_byte = 0.0003;
    int folded = 0;
    for (int c = 0; c < NBCXI_NCOLL; c++) {
        const char *alg;
        for (int i = 0; (alg = nbcxi_sim_alg(c, i)); i++)
            for (int C = 1; C <= 4; C *= 2)
                for (int P = 2 * C; P <= 48; P += 6 * C) {
                    /* a size most P here divide (720720 = 2^4 3^2 5 7 11
                     * 13): exact folds, approximate for the others */
                    size_t m = 4 * 720720;
                    if (c == NBCXI_ALLTOALL || c == NBCXI_ALLGATHER ||
                        c == NBCXI_ALLTOALLV || c == NBCXI_ALLTOALLW ||
                        c == NBCXI_ALLGATHERV || c == NBCXI_GATHER ||
                        c == NBCXI_SCATTER || c == NBCXI_GATHERV ||
                        c == NBCXI_SCATTERV || c == NBCXI_REDUCE_SCATTER ||
                        c == NBCXI_REDUCE_SCATTER_BLOCK)
                        m = 4 * 1000;
                    for (int pr = 0; pr < 2; pr++) {
                        struct out a = sim(nbcxi_coll_name(c), alg, P, C, m,
                                           NBCXI_SIM_FOLD_AUTO, &p, pr, 300);
                        struct out b = sim(nbcxi_coll_name(c), alg, P, C, m,
                                           NBCXI_SIM_FOLD_OFF, &p, pr, 300);
                        CHECK(a.rc == 0 && b.rc == 0, "%s %s: %s %s",
                              nbcxi_coll_name(c), alg, a.err, b.err);
                        if (!a.info.period)
                            continue;
                        folded++;
                        if (a.info.approx) {
                            /* sizes differ by an element between the
                             * ranks' blocks (count % P != 0): close */
                            CHECK(fabs(a.res.t_max - b.res.t_max) <=
                                      1e-4 * b.res.t_max,
                                  "%s %s P %d C %d: approx %g vs %g",
                                  nbcxi_coll_name(c), alg, P, C, a.res.t_max,
                                  b.res.t_max);
                            continue;
                        }
                        CHECK(near(a.res.t_max, b.res.t_max) &&
                                  near(a.res.t_min, b.res.t_min) &&
                                  near(a.res.t_median, b.res.t_median) &&
                                  near(a.res.t_total_max, b.res.t_total_max),
                              "%s %s P %d C %d mode %d: folded %g %g %g %g, "
                              "full %g %g %g %g",
                              nbcxi_coll_name(c), alg, P, C, pr, a.res.t_max,
                              a.res.t_median, a.res.t_min,
                              a.res.t_total_max, b.res.t_max,
                              b.res.t_median, b.res.t_min,
                              b.res.t_total_max);
                        CHECK(a.info.messages_total == b.info.messages_total,
                              "%s %s P %d: %lld messages folded, %lld full",
                              nbcxi_coll_name(c), alg, P,
                              a.info.messages_total, b.info.messages_total);
                    }
                }
    }
    /* at least the barrier, the rings, linear and pairwise alltoall */
    CHECK(folded >= 20, "only %d folded runs", folded);
}

static void test_params_file(void)
{
    struct nbcxi_sim_params p;
    char err[512];
    const char *good =
        "{\"format\": \"nbcx-loggp/1\", \"source\": \"t\\\"x\", "
        "\"cores_per_node\": 2, \"extra\": [1, {\"a\": null}, true],\n"
        " \"intra\": {\"L\": 0.35, \"o\": 0.25, \"g\": 0.30, \"G\": 1.2e-4},\n"
        " \"inter\": {\"L\": 45.0, \"o\": 3.0, \"g\": 4.0, \"G\": 0.0080},\n"
        " \"copy_per_byte\": 0.00008, \"reduce_per_byte\": 0.0003}\n";
    CHECK(nbcxi_sim_params_parse(good, strlen(good), &p, err, sizeof err) ==
              0,
          "%s", err);
    CHECK(p.cores_per_node == 2 && p.intra.G == 1.2e-4 && p.inter.L == 45 &&
              p.reduce_per_byte == 0.0003 && strcmp(p.source, "t\"x") == 0,
          "parsed wrongly");
    CHECK(p.start_cost == 0 && p.node_cost == 0 && p.message_cost == 0,
          "engine costs without their keys: %g %g", p.start_cost, p.node_cost);
    CHECK(p.cache_bytes == 0 && p.copy_per_byte_cached == p.copy_per_byte &&
              p.reduce_per_byte_cached == p.reduce_per_byte,
          "cached rates without their keys: %g %g %g", p.cache_bytes,
          p.copy_per_byte_cached, p.reduce_per_byte_cached);
    const char *engine =
        "{\"format\": \"nbcx-loggp/1\", \"cores_per_node\": 2,\n"
        " \"intra\": {\"L\": 0.35, \"o\": 0.25, \"g\": 0.30, \"G\": 1.2e-4},\n"
        " \"copy_per_byte\": 0.00008, \"reduce_per_byte\": 0.0003,\n"
        " \"start_cost\": 0.42, \"node_cost\": 0.031, \"message_cost\": 0.07,\n"
        " \"cache_bytes\": 65536,\n"
        " \"copy_per_byte_cached\": 2e-5, \"reduce_per_byte_cached\": 3e-5}\n";
    CHECK(nbcxi_sim_params_parse(engine, strlen(engine), &p, err,
                                 sizeof err) == 0,
          "%s", err);
    CHECK(p.start_cost == 0.42 && p.node_cost == 0.031 &&
              p.message_cost == 0.07,
          "engine costs parsed wrongly: %g %g", p.start_cost, p.node_cost);
    CHECK(p.cache_bytes == 65536 && p.copy_per_byte_cached == 2e-5 &&
              p.reduce_per_byte_cached == 3e-5,
          "cached rates parsed wrongly");
    /* One block only (one nbcx-loggp run): parsed, and a run that needs
     * the other block is refused with a message. */
    const char *intra_only =
        "{\"format\": \"nbcx-loggp/1\", \"cores_per_node\": 2,\n"
        " \"intra\": {\"L\": 0.35, \"o\": 0.25, \"g\": 0.30, \"G\": 1.2e-4},\n"
        " \"copy_per_byte\": 0.00008, \"reduce_per_byte\": 0.0003}\n";
    CHECK(nbcxi_sim_params_parse(intra_only, strlen(intra_only), &p, err,
                                 sizeof err) == 0,
          "%s", err);
    CHECK(p.has_intra && !p.has_inter, "blocks: intra %d inter %d",
          p.has_intra, p.has_inter);
    {
        struct nbcxi_sim_config cfg = { .coll = NBCXI_BCAST, .alg = "binomial",
                                        .ranks = 4, .ranks_per_node = 4,
                                        .bytes = 8 };
        struct nbcxi_sim_run run = { .progress = NBCXI_SIM_CALLER };
        struct nbcxi_sim_result res;
        err[0] = '\0';
        CHECK(nbcxi_sim_run(&cfg, &p, &run, NULL, &res, err, sizeof err) == 0,
              "one node, intra only: %s", err);
        cfg.ranks_per_node = 2;
        err[0] = '\0';
        CHECK(nbcxi_sim_run(&cfg, &p, &run, NULL, &res, err, sizeof err) ==
                      NBCXI_SIM_EARG &&
                  strstr(err, "no \"inter\" block"),
              "two nodes, intra only: %s", err);
    }
    static const struct {
        const char *text, *msg;
    } bad[] = {
        { "", "one JSON object" },
        { "{\"format\": \"nbcx-loggp/1\", \"cores_per_node\": 2, "
          "\"copy_per_byte\": 0, \"reduce_per_byte\": 0}",
          "missing key \"intra\" or \"inter\"" },
        { "[]", "one JSON object" },
        { "{\"format\": \"nbcx-loggp/2\"}", "is not \"nbcx-loggp/1\"" },
        { "{\"format\": \"nbcx-loggp/1\"}", "missing key \"cores_per_node\"" },
        { "{\"format\": \"nbcx-loggp/1\", \"cores_per_node\": 2, "
          "\"intra\": {\"L\": 1, \"o\": 1, \"g\": 1}}",
          "missing key \"G\" in \"intra\"" },
        { "{\"format\": \"nbcx-loggp/1\", \"cores_per_node\": 0}",
          "cores_per_node" },
        { "{\"format\": \"nbcx-loggp/1\", \"cores_per_node\": 1.5}",
          "cores_per_node" },
        { "{\"copy_per_byte\": -1}", "must be a finite number >= 0" },
        { "{\"node_cost\": -0.1}", "must be a finite number >= 0" },
        { "{\"intra_link\": \"dma\"}", "must be \"nic\" or \"cpu\"" },
        { "{\"intra_cpu_share\": 1.5}", "must be from 0 to 1" },
        { "{\"start_cost\": \"1\"}", "must be a number" },
        { "{\"copy_per_byte\": \"1\"}", "must be a number" },
        { "{\"copy_per_byte\": 1,}", "expected '\"'" },
        { "{\"copy_per_byte\": 1", "expected '}'" },
        { "{\"a\": 1} x", "text after" },
        { "{\"intra\": 3}", "must be an object" },
    };
    for (int i = 0; i < TH_COUNT(bad); i++) {
        err[0] = '\0';
        int rc = nbcxi_sim_params_parse(bad[i].text, strlen(bad[i].text), &p,
                                        err, sizeof err);
        CHECK(rc != 0 && strstr(err, bad[i].msg),
              "'%s': rc %d, message '%s' lacks '%s'", bad[i].text, rc, err,
              bad[i].msg);
    }
    CHECK(nbcxi_sim_params_load("/nonexistent/x.json", &p, err,
                                sizeof err) != 0 &&
              strstr(err, "/nonexistent/x.json"),
          "%s", err);
}

/* Bad configurations: clear errors, no crash. */
static void test_bad_config(void)
{
    struct nbcxi_sim_params p = params();
    struct out a = sim("bcast", "nosuch", 4, 1, 8, 0, &p, 0, 0);
    CHECK(a.rc == NBCXI_SIM_EARG && strstr(a.err, "binomial"), "%s", a.err);
    a = sim("nosuch", "auto", 4, 1, 8, 0, &p, 0, 0);
    CHECK(a.rc == NBCXI_SIM_EARG, "%s", a.err);
    a = sim("bcast", "auto", 0, 1, 8, 0, &p, 0, 0);
    CHECK(a.rc == NBCXI_SIM_EARG, "%s", a.err);
    a = sim("bcast", "binomial", 8, 3, 8, NBCXI_SIM_FOLD_ON, &p, 0, 0);
    CHECK(a.rc == NBCXI_SIM_EARG && strstr(a.err, "multiple"), "%s", a.err);
    a = sim("bcast", "binomial", 8, 2, 8, NBCXI_SIM_FOLD_ON, &p, 0, 0);
    CHECK(a.rc == NBCXI_SIM_EARG && strstr(a.err, "does not fold"), "%s",
          a.err);
    /* beyond the v collectives' int displacements, and an int count */
    a = sim("alltoallv", "linear", 100000, 1, (size_t)1 << 20, 0, &p, 0, 0);
    CHECK(a.rc == NBCXI_SIM_EARG && strstr(a.err, "int displacements"), "%s",
          a.err);
    a = sim("bcast", "binomial", 4, 1, (size_t)3 << 30, 0, &p, 0, 0);
    CHECK(a.rc == NBCXI_SIM_EARG && strstr(a.err, "int counts"), "%s", a.err);
    struct nbcxi_sim_config cfg = { .coll = NBCXI_ALLTOALL, .alg = "bruck",
                                    .ranks = 4000, .ranks_per_node = 1,
                                    .bytes = 8, .max_nodes = 100000 };
    struct nbcxi_sim_run run = { 0, 0, 0, 0 };
    struct nbcxi_sim_info info;
    struct nbcxi_sim_result res;
    char err[512];
    int rc = nbcxi_sim_run(&cfg, &p, &run, &info, &res, err, sizeof err);
    CHECK(rc == NBCXI_SIM_ETOOBIG && strstr(err, "too large"), "%d %s", rc,
          err);
}

/* One large run stays quick: a 100,000-rank binomial bcast (each rank's
 * schedule built) and a folded 100,000-rank ring allreduce. */
static void test_scale(void)
{
    struct nbcxi_sim_params p = params();
    p.cores_per_node = 2;
    struct out a = sim("bcast", "binomial", 100000, 2, 1024,
                       NBCXI_SIM_FOLD_AUTO, &p, 0, 0);
    CHECK(a.rc == 0, "%s", a.err);
    /* 17 levels: ceil(log2 100000); the first inside a node */
    CHECK(a.res.t_max > 16 * (p.inter.L + 2 * p.inter.o), "%g",
          a.res.t_max);
    struct out b = sim("allreduce", "ring", 100000, 2, 1 << 20,
                       NBCXI_SIM_FOLD_AUTO, &p, 0, 0);
    CHECK(b.rc == 0 && b.info.period == 2, "%s", b.err);
    CHECK(b.info.messages_total == 2LL * 100000 * 99999, "%lld",
          b.info.messages_total);
}

/* The data mode: every algorithm of every collective, run by the real
 * executor with real data, leaves the same bytes in every rank's buffers
 * as the collective's first algorithm (and the automatic choice). */
static void test_data(void)
{
    static const int Ps[] = { 1, 2, 3, 4, 5, 7, 8, 12, 16 };
    static const size_t sizes[] = { 0, 4, 40, 3000 };
    long compared = 0;
    for (int c = 0; c < NBCXI_NCOLL; c++)
        for (int k = 0; k < TH_COUNT(Ps); k++)
            for (int z = 0; z < TH_COUNT(sizes); z++) {
                unsigned char *ref = NULL;
                size_t reflen = 0;
                const char *alg, *refalg = NULL;
                for (int i = -1; i == -1 || (alg = nbcxi_sim_alg(c, i)); i++) {
                    if (i == -1)
                        alg = "auto";
                    struct nbcxi_sim_config cfg = {
                        .coll = c, .alg = alg, .ranks = Ps[k],
                        .ranks_per_node = 1, .bytes = sizes[z],
                        .root = Ps[k] / 2, .segsize = 1000 };
                    unsigned char *out;
                    size_t len;
                    char err[512];
                    int rc = nbcxi_sim_execute(&cfg, &out, &len, err,
                                               sizeof err);
                    CHECK(rc == 0, "%s %s P %d size %zu: %s",
                          nbcxi_coll_name(c), alg, Ps[k], sizes[z], err);
                    if (rc)
                        continue;
                    if (!ref) {
                        ref = out, reflen = len, refalg = alg;
                        continue;
                    }
                    size_t at = 0;
                    while (at < len && at < reflen && out[at] == ref[at])
                        at++;
                    CHECK(len == reflen && at == len,
                          "%s P %d size %zu: %s and %s differ at byte %zu "
                          "(rank %zu)",
                          nbcxi_coll_name(c), Ps[k], sizes[z], alg, refalg,
                          at, len / (size_t)Ps[k] ? at / (len / (size_t)Ps[k])
                                                  : 0);
                    compared++;
                    free(out);
                }
                free(ref);
            }
    CHECK(compared > 500, "only %ld comparisons", compared);
    /* and the bytes are the collective's: a bcast from root 2 of 5, an
     * allreduce (int32 sums) on 6 (inputs as exec.c's fill()) */
    for (int c = NBCXI_BCAST; c <= NBCXI_ALLREDUCE; c += 2) {
        int P = c == NBCXI_BCAST ? 5 : 6;
        struct nbcxi_sim_config cfg = { .coll = c, .alg = "auto", .ranks = P,
                                        .ranks_per_node = 1, .bytes = 40,
                                        .root = 2 };
        unsigned char *out;
        size_t len;
        char err[256];
        if (nbcxi_sim_execute(&cfg, &out, &len, err, sizeof err)) {
            CHECK(0, "%s", err);
            continue;
        }
        size_t one = len / (size_t)P;
        int bad = 0;
        for (int r = 0; r < P; r++)
            for (int i = 0; i < 10; i++) {
                int32_t got, want = 0;
                memcpy(&got, out + one * (size_t)r + 4 * (size_t)i, 4);
                if (c == NBCXI_BCAST) {
                    unsigned char w[4];
                    for (int b = 0; b < 4; b++)
                        w[b] = (unsigned char)(2 * 29 + (4 * i + b) * 3 + 2);
                    memcpy(&want, w, 4);
                } else {
                    for (int q = 0; q < P; q++)
                        want += (q * 131 + i * 7 + 1) % 1000;
                }
                bad += got != want;
            }
        CHECK(bad == 0, "%s: %d wrong elements", nbcxi_coll_name(c), bad);
        free(out);
    }
    /* errors, not crashes */
    struct nbcxi_sim_config big = { .coll = NBCXI_BCAST, .ranks = 5000,
                                    .ranks_per_node = 1, .bytes = 8 };
    unsigned char *out;
    size_t len;
    char err[256];
    CHECK(nbcxi_sim_execute(&big, &out, &len, err, sizeof err) ==
              NBCXI_SIM_EARG, "%s", err);
}

/* nbcx-sim --reference (reference.c): the peers' rules at points where
 * the source read says what they choose, and on a grid of ranks and sizes
 * every modelled choice names an nbcx algorithm of the collective
 * simulated, whose schedule the simulator then runs to completion. */
static void test_reference(void)
{
    struct nbcxi_sim_ref r;
    static const struct {
        const char *peer, *coll;
        int P;
        size_t bytes;
        const char *alg;  /* NULL: not modelled */
        size_t seg;
        int match;
    } cases[] = {
        { "mpich", "allreduce", 16, 8, "recursive_doubling", 0,
          NBCXI_SIM_REF_SAME },
        { "mpich", "allreduce", 16, 2048, "recursive_doubling", 0,
          NBCXI_SIM_REF_SAME },
        { "mpich", "allreduce", 16, 4096, "rabenseifner", 0,
          NBCXI_SIM_REF_SAME },
        /* 1,024 ints on 2,048 ranks: count < pof2 */
        { "mpich", "allreduce", 2048, 4096, "recursive_doubling", 0,
          NBCXI_SIM_REF_SAME },
        { "mpich", "bcast", 7, 1 << 20, "binomial", 0, NBCXI_SIM_REF_SAME },
        { "mpich", "bcast", 16, 12288, "scatter_allgather", 0,
          NBCXI_SIM_REF_VARIANT },
        { "mpich", "bcast", 16, 524288, NULL, 0, NBCXI_SIM_REF_NONE },
        { "mpich", "bcast", 12, 12288, NULL, 0, NBCXI_SIM_REF_NONE },
        { "mpich", "reduce", 16, 4096, "rabenseifner", 0,
          NBCXI_SIM_REF_VARIANT },
        { "mpich", "reduce", 16, 2048, "binomial", 0, NBCXI_SIM_REF_SAME },
        { "mpich", "allgather", 16, 32767, "bruck", 0,
          NBCXI_SIM_REF_VARIANT },
        { "mpich", "allgather", 16, 32768, "ring", 0, NBCXI_SIM_REF_SAME },
        { "mpich", "allgather", 10, 8191, "bruck", 0, NBCXI_SIM_REF_SAME },
        { "mpich", "alltoall", 8, 2048, "bruck", 0, NBCXI_SIM_REF_SAME },
        { "mpich", "alltoall", 7, 2048, "linear", 0, NBCXI_SIM_REF_SAME },
        { "mpich", "alltoall", 8, 32769, "pairwise", 0, NBCXI_SIM_REF_SAME },
        { "mpich", "reduce_scatter", 16, 32767, "recursive_halving", 0,
          NBCXI_SIM_REF_SAME },
        { "mpich", "reduce_scatter", 16, 32768, "pairwise", 0,
          NBCXI_SIM_REF_SAME },
        { "mpich", "barrier", 5, 0, "dissemination", 0, NBCXI_SIM_REF_SAME },
        { "openmpi-libnbc", "bcast", 4, 1 << 20, "knomial4", 0,
          NBCXI_SIM_REF_SAME },
        { "openmpi-libnbc", "bcast", 5, 65535, "binomial", 0,
          NBCXI_SIM_REF_SAME },
        { "openmpi-libnbc", "bcast", 5, 65536, "chain", 8192,
          NBCXI_SIM_REF_SAME },
        { "openmpi-libnbc", "bcast", 5, 524288, "chain", 32768,
          NBCXI_SIM_REF_SAME },
        { "openmpi-libnbc", "allreduce", 3, 1 << 20, "reduce_bcast", 0,
          NBCXI_SIM_REF_SAME },
        { "openmpi-libnbc", "allreduce", 16, 65536, "rabenseifner", 0,
          NBCXI_SIM_REF_SAME },
        /* 16,384 ints on 32,768 ranks: count < pof2 */
        { "openmpi-libnbc", "allreduce", 32768, 65536, "ring", 0,
          NBCXI_SIM_REF_VARIANT },
        { "openmpi-libnbc", "reduce", 16, 64, "rabenseifner", 0,
          NBCXI_SIM_REF_VARIANT },
        { "openmpi-libnbc", "reduce", 16, 8, "binomial", 0,
          NBCXI_SIM_REF_SAME },
        { "openmpi-libnbc", "reduce", 2, 65536, "chain", 8192,
          NBCXI_SIM_REF_SAME },
        { "openmpi-libnbc", "allgather", 16, 8, "linear", 0,
          NBCXI_SIM_REF_SAME },
        { "openmpi-libnbc", "alltoall", 64, 8, "linear", 0,
          NBCXI_SIM_REF_SAME },
        { "openmpi-libnbc", "reduce_scatter", 64, 8, "reduce_scatterv", 0,
          NBCXI_SIM_REF_SAME },
        { "openmpi-libnbc", "barrier", 64, 0, "dissemination", 0,
          NBCXI_SIM_REF_SAME },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int c = nbcxi_sim_coll(cases[i].coll);
        CHECK(nbcxi_sim_reference(cases[i].peer, c, cases[i].P,
                                  cases[i].bytes, &r) == 0, "%s %s",
              cases[i].peer, cases[i].coll);
        bool same_alg = cases[i].alg ? r.alg && strcmp(r.alg, cases[i].alg) == 0
                                     : r.alg == NULL;
        CHECK(same_alg && r.segsize == cases[i].seg &&
                  r.match == cases[i].match && r.peer_alg,
              "%s %s on %d ranks, %zu B: %s seg %zu match %d, expected %s "
              "seg %zu match %d", cases[i].peer, cases[i].coll, cases[i].P,
              cases[i].bytes, r.alg ? r.alg : "none", r.segsize, r.match,
              cases[i].alg ? cases[i].alg : "none", cases[i].seg,
              cases[i].match);
    }
    /* libnbc's allgather is simulated as nbcx's allgatherv */
    nbcxi_sim_reference("openmpi-libnbc", NBCXI_ALLGATHER, 16, 8, &r);
    CHECK(r.coll == NBCXI_ALLGATHERV, "coll %d", r.coll);
    CHECK(nbcxi_sim_reference("nosuch", NBCXI_BCAST, 4, 8, &r) == -1,
          "an unknown peer");
    CHECK(nbcxi_sim_reference("mpich", NBCXI_GATHERV, 4, 8, &r) == 1,
          "a collective whose rule is not modelled");
    CHECK(nbcxi_sim_reference_name(0) && nbcxi_sim_reference_name(1) &&
              !nbcxi_sim_reference_name(2), "two peers");

    /* the grid: every modelled choice is an algorithm of its collective,
     * and (on up to 64 ranks) simulates to completion */
    static const char *const colls[] = { "barrier", "bcast", "reduce",
        "allreduce", "allgather", "alltoall", "reduce_scatter" };
    static const int ranks[] = { 2, 3, 4, 5, 7, 8, 12, 16, 64, 1000, 4096,
                                 10000, 16384, 100000 };
    static const size_t sizes[] = { 0, 8, 2048, 2049, 12288, 65536,
                                    81920, 524288, 1 << 20, 16 << 20 };
    struct nbcxi_sim_params p = params();
    int modelled = 0;
    for (int peer = 0; nbcxi_sim_reference_name(peer); peer++)
        for (size_t c = 0; c < sizeof colls / sizeof *colls; c++)
            for (size_t k = 0; k < sizeof ranks / sizeof *ranks; k++)
                for (size_t b = 0; b < sizeof sizes / sizeof *sizes; b++) {
                    const char *name = nbcxi_sim_reference_name(peer);
                    int coll = nbcxi_sim_coll(colls[c]);
                    CHECK(nbcxi_sim_reference(name, coll, ranks[k],
                                              sizes[b], &r) == 0,
                          "%s %s", name, colls[c]);
                    CHECK((r.alg == NULL) == (r.match == NBCXI_SIM_REF_NONE),
                          "%s %s: alg and match disagree", name, colls[c]);
                    if (!r.alg)
                        continue;
                    modelled++;
                    CHECK(nbcxi_sim_has_alg(r.coll, r.alg),
                          "%s %s on %d ranks, %zu B: %s is not an algorithm "
                          "of %s", name, colls[c], ranks[k], sizes[b], r.alg,
                          nbcxi_coll_name(r.coll));
                    if (ranks[k] > 64 || sizes[b] > 65536)
                        continue;
                    struct out o = sim(nbcxi_coll_name(r.coll), r.alg,
                                       ranks[k], 2, sizes[b],
                                       NBCXI_SIM_FOLD_AUTO, &p,
                                       NBCXI_SIM_THREAD, 0);
                    CHECK(o.rc == 0 &&
                              (o.res.t_max > 0 || sizes[b] == 0) &&
                              strcmp(o.info.alg, r.alg) == 0,
                          "%s %s as %s on %d ranks, %zu B: built %s, %s",
                          name, colls[c], r.alg, ranks[k], sizes[b],
                          o.info.alg, o.err);
                }
    CHECK(modelled > 1500, "%d choices modelled", modelled);
}

static const struct th_test tests[] = {
    { "reference", test_reference },
    { "data", test_data },
    { "bcast_binomial", test_bcast_binomial },
    { "barrier", test_barrier },
    { "allgather_ring", test_allgather_ring },
    { "gather_linear", test_gather_linear },
    { "reduce_cost", test_reduce_cost },
    { "engine_cost", test_engine_cost },
    { "cpu_link", test_cpu_link },
    { "oversubscribed", test_oversubscribed },
    { "oversub_handover", test_oversub_handover },
    { "progress", test_progress },
    { "split", test_split },
    { "shared_progress", test_shared_progress },
    { "all_algorithms", test_all_algorithms },
    { "fold_equals_full", test_fold_equals_full },
    { "params_file", test_params_file },
    { "shared_link", test_shared_link },
    { "same_job", test_same_job },
    { "large_counts", test_large_counts },
    { "bad_config", test_bad_config },
    { "scale", test_scale },
};

int main(int argc, char **argv)
{
    (void)th_fail; /* the harness's, unused here */
    return th_main(argc, argv, tests, TH_COUNT(tests));
}
