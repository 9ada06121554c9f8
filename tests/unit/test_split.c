/*
 * test_split.c - split-tree progress: the cost model (nbcx_split_model),
 * the tree-level annotations of the binomial builders, the choice of
 * application nodes (nbcxi_split_mark), and results in split mode.
 *
 * model_*      values worked out by hand from the model's equations (see
 *              progress/mode_split.c) and the paper's own examples.
 * levels       builds the schedule of every rank of bcast, reduce,
 *              gather, scatter (binomial) and allreduce (reduce_bcast) on
 *              1..17 and 33 ranks, several roots, and checks that every
 *              message of the tree has the level of its tree edge with the
 *              right direction, and that the levels hold F(N, j) messages.
 * mark         NBCX_SPLIT_LEVELS = 0..H+1 (and bad values) against the
 *              nodes nbcxi_split_mark gives the application.
 * split_mode   runs the collectives in split mode on loopback worlds, one
 *              thread per virtual rank (the start call of an "up" tree
 *              blocks until its lowest levels are done, which needs the
 *              other ranks to have started), against the expected data.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "coll/coll.h"
#include "coll/tree.h"
#include "progress/request.h"
#include "harness.h"
#include "loopback.h"
#include "matrix_op.h"
#include "progress/progress.h"

/* ------------------------------------------------------------------ */
/* The model                                                           */
/* ------------------------------------------------------------------ */

static int ceil_log2(long n)
{
    int h = 0;
    while ((1L << h) < n)
        h++;
    return h;
}

/* Ranks 1..n-1 whose lowest set bit is 2^(j-1): the messages of level j
 * of the binomial tree (tree.h), counted one by one. */
static long count_level(int n, int j)
{
    long c = 0;
    for (int v = 1; v < n; v++)
        if ((v & -v) == 1 << (j - 1))
            c++;
    return c;
}

/* t_collective of the model for n ranks, S levels, the application on
 * n cores (the paper's setting) and one dedicated progress core. */
static double t_coll_p1(int n, int S)
{
    double c = -1, o = -1;
    nbcx_split_model(n, n, 1, 0.0, S, &c, &o, NULL);
    return c;
}

static void test_model_levels(void)
{
    for (int n = 1; n <= 300; n++) {
        int h = -1;
        double c = -1, o = -1;
        CHECK(nbcx_split_model(n, n, 1, 0.0, 0, &c, &o, &h) >= 0, "n=%d", n);
        CHECK(h == ceil_log2(n), "n=%d: H=%d, expected %d", n, h,
              ceil_log2(n));
        /* Everything folded on one core: every message in sequence. */
        CHECK(c == n - 1, "n=%d: T(0) = %g, expected %d", n, c, n - 1);
        /* Everything on the application: one step per level. */
        CHECK(t_coll_p1(n, h) == h, "n=%d", n);
        /* T(S-1) - T(S) = F(n, S) - 1: the level's messages, minus the
         * one step they take on the application. */
        long sum = 0;
        for (int j = 1; j <= h; j++) {
            long f = (long)(t_coll_p1(n, j - 1) - t_coll_p1(n, j)) + 1;
            CHECK(f == count_level(n, j), "n=%d j=%d: F=%ld, tree has %ld",
                  n, j, f, count_level(n, j));
            CHECK(f >= 1, "n=%d j=%d", n, j);
            sum += f;
        }
        CHECK(sum == n - 1, "n=%d: sum F = %ld", n, sum);
        /* A single application core: every message in sequence too. */
        nbcx_split_model(n, 1, 1, 0.0, h, &c, &o, NULL);
        CHECK(c == n - 1, "n=%d: one core: %g", n, c);
    }
    /* The largest communicator: no overflow. */
    int h = -1;
    double c = -1, o = -1;
    CHECK(nbcx_split_model(2147483647, 1, 1, 0.0, 0, &c, &o, &h) >= 0, "");
    CHECK_INT(h, 31);
    CHECK(c == 2147483646.0, "%g", c);
}

static void test_model_paper(void)
{
    /* Figure 1: 16 ranks, one progress core. T(S) = S + sum of the
     * upper levels' messages (8, 4, 2, 1 from the leaves). */
    static const double t16[] = { 15, 8, 5, 4, 4 };
    for (int S = 0; S <= 4; S++)
        CHECK(t_coll_p1(16, S) == t16[S], "S=%d: %g", S, t_coll_p1(16, S));
    CHECK(t_coll_p1(16, 9) == 4, "S > H counts as H");

    /* Overlapped with C = 4 (eq. 5): S + max(4, upper levels). */
    static const double o16[] = { 15, 8, 6, 7, 8 };
    for (int S = 0; S <= 4; S++) {
        double c, o;
        CHECK_INT(nbcx_split_model(16, 16, 1, 4.0, S, &c, &o, NULL), 2);
        CHECK(o == o16[S], "S=%d: %g", S, o);
    }
    double c, o;
    CHECK_INT(nbcx_split_model(16, 16, 1, 4.0, -1, &c, &o, NULL), 2);
    CHECK(c == 5 && o == 6, "best: %g %g", c, o);

    /* Section 4's discussion, 64 cores, N ranks, 64 - N progress cores,
     * computation C(N) = N / 64 * H(64): the best S is 1 for N = 57, 2
     * for N = 60, 3 for N = 62. */
    static const int n[] = { 57, 60, 62 }, best[] = { 1, 2, 3 };
    for (int k = 0; k < 3; k++)
        CHECK(nbcx_split_model(n[k], n[k], 64 - n[k], n[k] / 64.0 * 6, -1,
                               NULL, NULL, NULL) == best[k],
              "N=%d", n[k]);
    /* N = 57, P = 7 by hand: levels 28, 14, 7, 4, 2, 1 messages; S = 1:
     * 1 + max(5.34, 2 + 1 + 1 + 1 + 1). */
    nbcx_split_model(57, 57, 7, 57 / 64.0 * 6, 1, &c, &o, NULL);
    CHECK(c == 7 && o == 7, "%g %g", c, o);
    nbcx_split_model(57, 57, 7, 57 / 64.0 * 6, 0, &c, &o, NULL);
    CHECK(c == 10 && o == 10, "%g %g", c, o);
}

static void test_model_shared(void)
{
    double c, o;
    /* 4 ranks on 2 cores, progress on the same cores, C = 2. Levels: 2
     * and 1 messages. S = 0: 1 + 1 steps folded on 2 cores, the thread's
     * CPU time 0.05 * 3 / 2 added to the computation. */
    CHECK_INT(nbcx_split_model(4, 2, 0, 2.0, 0, &c, &o, NULL), 0);
    CHECK(c == 2 && fabs(o - 2.075) < 1e-12, "%g %g", c, o);
    nbcx_split_model(4, 2, 0, 2.0, 1, &c, &o, NULL);
    CHECK(c == 2 && fabs(o - 3.025) < 1e-12, "%g %g", c, o);
    nbcx_split_model(4, 2, 0, 2.0, 2, &c, &o, NULL);
    CHECK(c == 2 && o == 4, "%g %g", c, o);
    /* 64 ranks on 2 shared cores, C = 6: S = 0 folds 32, 16, 8, 4, 2, 1
     * onto 2 cores (32 steps) and overlaps the computation. */
    CHECK_INT(nbcx_split_model(64, 2, 0, 6.0, 0, &c, &o, NULL), 0);
    CHECK(c == 32 && o == 32, "%g %g", c, o);
    /* A long computation on shared cores: the computation decides, and
     * it is longest when the application does tree levels itself. */
    nbcx_split_model(64, 2, 0, 100.0, 0, &c, &o, NULL);
    CHECK(fabs(o - (100 + 0.05 * 63 / 2)) < 1e-9, "%g", o);
    CHECK_INT(nbcx_split_model(64, 2, 0, 100.0, -1, &c, &o, NULL), 0);
}

static void test_model_edges(void)
{
    double c = -1, o = -1;
    int h = -1;
    /* One rank: no tree. */
    CHECK_INT(nbcx_split_model(1, 1, 0, 3.0, -1, &c, &o, &h), 0);
    CHECK(h == 0 && c == 0 && o == 3, "%d %g %g", h, c, o);
    CHECK_INT(nbcx_split_model(1, 4, 2, 0.0, 5, &c, &o, &h), 0);
    /* Ties go to the smaller S: 16 ranks, 1 progress core, no
     * computation: S = 3 and S = 4 both take 4. */
    CHECK_INT(nbcx_split_model(16, 16, 1, 0.0, -1, &c, &o, NULL), 3);
    /* Two ranks, C = 1: S = 0 takes max(1, 1) = 1, S = 1 takes 2. */
    CHECK_INT(nbcx_split_model(2, 2, 1, 1.0, -1, &c, &o, NULL), 0);
    CHECK(c == 1 && o == 1, "%g %g", c, o);
    /* Many progress cores: folding costs nothing, S = 0. */
    CHECK_INT(nbcx_split_model(1000, 1000, 1000, 10.0, -1, NULL, NULL,
                               NULL),
              0);
    /* Outputs are optional. */
    CHECK_INT(nbcx_split_model(16, 16, 1, 4.0, 2, NULL, NULL, NULL), 2);
    /* Bad arguments. */
    CHECK_INT(nbcx_split_model(0, 1, 0, 0.0, -1, &c, &o, &h), -1);
    CHECK_INT(nbcx_split_model(-3, 1, 0, 0.0, -1, &c, &o, &h), -1);
    CHECK_INT(nbcx_split_model(4, 0, 0, 0.0, -1, &c, &o, &h), -1);
    CHECK_INT(nbcx_split_model(4, 1, -1, 0.0, -1, &c, &o, &h), -1);
    CHECK_INT(nbcx_split_model(4, 1, 0, -1.0, -1, &c, &o, &h), -1);
    CHECK_INT(nbcx_split_model(4, 1, 0, NAN, -1, &c, &o, &h), -1);
    CHECK_INT(nbcx_split_model(4, 1, 0, 0.0, -2, &c, &o, &h), -1);
}

/* ------------------------------------------------------------------ */
/* Level annotations of the builders                                   */
/* ------------------------------------------------------------------ */

enum kind { K_BCAST, K_REDUCE, K_GATHER, K_SCATTER, K_ALLREDUCE, NKINDS };
static const char *const kind_names[NKINDS] = {
    "bcast", "reduce", "gather", "scatter", "allreduce/reduce_bcast",
};
static nbcxi_builder *const builders[NKINDS] = {
    nbcxi_build_bcast_binomial, nbcxi_build_reduce_binomial,
    nbcxi_build_gather_binomial, nbcxi_build_scatter_binomial,
    nbcxi_build_allreduce_reduce_bcast,
};

/* Level of the edge between a rank and its parent: its lowest set bit. */
static int parent_level(int v)
{
    int l = 1;
    for (int b = v & -v; b > 1; b >>= 1)
        l++;
    return l;
}

static char ctxbuf[160];

/* Builds rank r's schedule of `kind` on comms[r]. */
static struct nbcx_sched_s *build(enum kind kind, nbcx_comm comm, int root,
                                  struct nbcx_op_s *op, void *sbuf,
                                  void *rbuf, int count)
{
    struct nbcx_sched_s *s = NULL;
    if (nbcxi_sched_new(nbcxi_comm(comm), &s) != NBCX_SUCCESS)
        return NULL;
    struct nbcx_datatype_s *t = nbcxi_type(NBCX_INT32);
    struct nbcxi_coll_args a = {
        .sbuf = sbuf, .rbuf = rbuf, .scount = count, .rcount = count,
        .stype = t, .rtype = t, .op = op, .root = root, .segsize = 100,
    };
    if (kind == K_BCAST)
        a.sbuf = NULL;
    int err = builders[kind](s, &a);
    CHECK(err == NBCX_SUCCESS, "%s: build: %s", ctxbuf,
          nbcx_error_string(err));
    return s;
}

/* Per-level message totals over all ranks, by direction. */
struct totals {
    long send[2][32], recv[2][32]; /* [0]: up, [1]: down */
};

/* Checks the nodes of rank r's schedule. The tree is rooted at troot
 * (relative ranks); `hop_ok`: a level-0 message between rank 0 and root
 * is allowed (non-commutative reduce with root != 0). */
static void check_sched(const struct nbcx_sched_s *s, enum kind kind, int p,
                        int root, int troot, bool hop_ok, struct totals *tot)
{
    int h = ceil_log2(p);
    int vr = nbcxi_rel_rank(s->build.rank, troot, p);
    bool any_level = false;
    int reds[32] = { 0 }, child_recvs[32] = { 0 };
    int up_to_parent = 0, down_from_parent = 0;
    for (int i = 0; i < s->build.nnodes; i++) {
        const struct nbcxi_node *n = &s->build.nodes[i];
        int lv = n->level < 0 ? -n->level : n->level;
        int up = n->level > 0;
        if (n->level != 0)
            any_level = true;
        if (n->kind == NBCXI_NODE_COPY || n->kind == NBCXI_NODE_CALL) {
            CHECK(n->level == 0, "%s rank %d: copy node %d has level %d",
                  ctxbuf, s->build.rank, i, n->level);
            continue;
        }
        if (n->kind == NBCXI_NODE_REDUCE) {
            CHECK(n->level >= 1 && n->level <= h,
                  "%s rank %d: reduce node %d has level %d", ctxbuf,
                  s->build.rank, i, n->level);
            if (n->level >= 1 && n->level <= h)
                reds[n->level]++;
            continue;
        }
        bool send = n->kind == NBCXI_NODE_SEND;
        int peer = n->u.p2p.peer;
        if (n->level == 0) {
            int me = s->build.rank;
            bool hop = hop_ok && ((me == 0 && peer == root && send) ||
                                  (me == root && peer == 0 && !send));
            CHECK(hop, "%s rank %d: %s node %d (peer %d) has no level",
                  ctxbuf, s->build.rank, send ? "send" : "recv", i, peer);
            continue;
        }
        CHECK(lv >= 1 && lv <= h, "%s rank %d: level %d outside [1, %d]",
              ctxbuf, s->build.rank, n->level, h);
        if (lv < 1 || lv > h)
            continue;
        /* Direction: bcast/scatter down, reduce/gather up, allreduce
         * both (checked by the message's sense below). */
        if (kind == K_BCAST || kind == K_SCATTER)
            CHECK(!up, "%s rank %d: node %d goes up", ctxbuf, s->build.rank, i);
        if (kind == K_REDUCE || kind == K_GATHER)
            CHECK(up, "%s rank %d: node %d goes down", ctxbuf, s->build.rank,
                  i);
        int vq = nbcxi_rel_rank(peer, troot, p);
        if (vr > 0 && vq == nbcxi_binomial_parent(vr)) {
            CHECK(lv == parent_level(vr), "%s rank %d: parent edge level %d",
                  ctxbuf, s->build.rank, lv);
            /* Towards the parent: a send going up, a receive going down */
            CHECK(send == up, "%s rank %d: node %d: wrong sense to parent",
                  ctxbuf, s->build.rank, i);
            up_to_parent += up;
            down_from_parent += !up;
        } else if (vq > 0 && vr == nbcxi_binomial_parent(vq)) {
            CHECK(lv == parent_level(vq), "%s rank %d: child %d edge level %d",
                  ctxbuf, s->build.rank, peer, lv);
            CHECK(send != up, "%s rank %d: node %d: wrong sense to child",
                  ctxbuf, s->build.rank, i);
            if (up)
                child_recvs[lv]++;
        } else {
            CHECK(0, "%s rank %d: node %d: peer %d is no tree neighbour",
                  ctxbuf, s->build.rank, i, peer);
        }
        if (send)
            tot->send[!up][lv]++;
        else
            tot->recv[!up][lv]++;
    }
    /* A reduction per child, on the child's level. */
    for (int j = 1; j <= h && h < 32; j++)
        if (kind == K_REDUCE || kind == K_ALLREDUCE)
            CHECK(reds[j] == child_recvs[j],
                  "%s rank %d: level %d: %d reductions, %d children", ctxbuf,
                  s->build.rank, j, reds[j], child_recvs[j]);
    bool has_up = kind != K_BCAST && kind != K_SCATTER;
    bool has_down = kind != K_REDUCE && kind != K_GATHER;
    if (vr > 0) {
        CHECK(up_to_parent == (has_up ? 1 : 0), "%s rank %d", ctxbuf,
              s->build.rank);
        CHECK(down_from_parent == (has_down ? 1 : 0), "%s rank %d", ctxbuf,
              s->build.rank);
    }
    if (p > 1)
        CHECK(s->build.tree_height == h, "%s rank %d: tree height %d", ctxbuf,
              s->build.rank, s->build.tree_height);
    else
        CHECK(!any_level, "%s: levels on one rank", ctxbuf);
}

static void user_matmul(const void *in, void *inout, int count,
                        nbcx_datatype type, void *ctx)
{
    (void)type;
    (void)ctx;
    mat_mul_into(in, inout, count);
}

static void test_levels(void)
{
    static const int sizes[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                 13, 14, 15, 16, 17, 33 };
    nbcx_op noncomm = NBCX_OP_NULL;
    REQUIRE_OK(nbcx_op_create(user_matmul, 0, NULL, &noncomm));
    enum { COUNT = 3, MAXP = 33 };
    static int32_t sbuf[MAXP * COUNT], rbuf[MAXP * COUNT];
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int p = sizes[si];
        nbcx_comm comms[MAXP];
        REQUIRE_OK(loopback_world_create(p, comms));
        int roots[] = { 0, p - 1, p / 2 };
        for (int k = 0; k < NKINDS; k++) {
            for (int ri = 0; ri < 3; ri++) {
                for (int commute = 1; commute >= 0; commute--) {
                    int root = roots[ri];
                    bool reduction = k == K_REDUCE || k == K_ALLREDUCE;
                    if (!commute && !reduction)
                        continue;
                    if (k == K_ALLREDUCE && ri > 0)
                        continue; /* no root */
                    struct nbcx_op_s *op =
                        nbcxi_op(commute ? NBCX_SUM : noncomm);
                    int troot = k == K_ALLREDUCE ||
                                        (k == K_REDUCE && !commute)
                                    ? 0
                                    : root;
                    bool hop_ok = k == K_REDUCE && !commute && root != 0;
                    snprintf(ctxbuf, sizeof ctxbuf, "%s p=%d root=%d%s",
                             kind_names[k], p, root,
                             commute ? "" : " non-commutative");
                    th_cases++;
                    struct totals tot;
                    memset(&tot, 0, sizeof tot);
                    for (int r = 0; r < p; r++) {
                        struct nbcx_sched_s *s =
                            build((enum kind)k, comms[r], root, op, sbuf,
                                  rbuf, COUNT);
                        if (!s)
                            continue;
                        check_sched(s, (enum kind)k, p, root, troot, hop_ok,
                                    &tot);
                        nbcxi_sched_destroy(s);
                    }
                    /* Every level holds F(p, j) messages each way it
                     * goes: as many sends as receives. */
                    int h = ceil_log2(p);
                    for (int d = 0; d < 2; d++) {
                        bool used = d == 0 ? k != K_BCAST && k != K_SCATTER
                                           : k != K_REDUCE && k != K_GATHER;
                        for (int j = 1; j <= h; j++) {
                            long f = used ? count_level(p, j) : 0;
                            CHECK(tot.send[d][j] == f && tot.recv[d][j] == f,
                                  "%s: level %d %s: %ld sends, %ld recvs, "
                                  "F=%ld",
                                  ctxbuf, j, d ? "down" : "up",
                                  tot.send[d][j], tot.recv[d][j], f);
                        }
                    }
                }
            }
        }
        loopback_world_destroy(p, comms);
    }
    nbcx_op_free(&noncomm);
}

/* ------------------------------------------------------------------ */
/* nbcxi_split_mark                                                    */
/* ------------------------------------------------------------------ */

/* Marks s with NBCX_SPLIT_LEVELS = env and checks the application nodes
 * are those with 1 <= |level| <= expect. */
static void check_mark(struct nbcx_sched_s *s, const char *env, int expect)
{
    if (env)
        setenv("NBCX_SPLIT_LEVELS", env, 1);
    else
        unsetenv("NBCX_SPLIT_LEVELS");
    nbcxi_split_mark(s);
    int up = 0, down = 0;
    for (int i = 0; i < s->build.nnodes; i++) {
        const struct nbcxi_node *n = &s->build.nodes[i];
        int lv = n->level < 0 ? -n->level : n->level;
        bool want = lv >= 1 && lv <= expect;
        CHECK(n->app == want, "%s NBCX_SPLIT_LEVELS=%s: node %d level %d",
              ctxbuf, env ? env : "(unset)", i, n->level);
        if (want && n->level > 0)
            up++;
        if (want && n->level < 0)
            down++;
    }
    CHECK(s->split.app_up_left == up && s->split.app_down_left == down,
          "%s NBCX_SPLIT_LEVELS=%s: counts %d/%d, expected %d/%d", ctxbuf,
          env ? env : "(unset)", s->split.app_up_left,
          s->split.app_down_left, up, down);
}

static void test_mark(void)
{
    enum { P = 13, COUNT = 2 };
    static int32_t sbuf[P * COUNT], rbuf[P * COUNT];
    nbcx_comm comms[P];
    REQUIRE_OK(loopback_world_create(P, comms));
    int h = ceil_log2(P);
    int app = 0, prog = 0;
    nbcxi_placement_cores(&app, &prog);
    int model = nbcx_split_model(P, app > 0 ? app : 1, prog > 0 ? prog : 0,
                                 (double)h, -1, NULL, NULL, NULL);
    for (int k = 0; k < NKINDS; k++) {
        for (int r = 0; r < P; r++) {
            snprintf(ctxbuf, sizeof ctxbuf, "%s p=%d rank %d", kind_names[k],
                     P, r);
            struct nbcx_sched_s *s = build((enum kind)k, comms[r], 5,
                                           nbcxi_op(NBCX_SUM), sbuf, rbuf,
                                           COUNT);
            if (!s)
                continue;
            th_cases++;
            char v[16];
            for (int S = 0; S <= h + 2; S++) {
                snprintf(v, sizeof v, "%d", S);
                check_mark(s, v, S < h ? S : h);
            }
            check_mark(s, "1000000", h);
            check_mark(s, NULL, model);
            check_mark(s, "auto", model);
            /* Bad values: the model, with a one-time warning. */
            check_mark(s, "-1", model);
            check_mark(s, "two", model);
            check_mark(s, "2x", model);
            check_mark(s, "1", 1); /* and back: marks are redone */
            nbcxi_sched_destroy(s);
        }
    }
    /* No tree (size 1, or a linear algorithm): nothing to mark. */
    struct nbcx_sched_s *s = NULL;
    REQUIRE_OK(nbcxi_sched_new(nbcxi_comm(comms[0]), &s));
    struct nbcx_datatype_s *t = nbcxi_type(NBCX_INT32);
    struct nbcxi_coll_args a = { .sbuf = sbuf, .rbuf = rbuf, .scount = 1,
                                 .rcount = 1, .stype = t, .rtype = t,
                                 .root = 0, .segsize = 100 };
    CHECK_OK(nbcxi_build_gather_linear(s, &a));
    CHECK_INT(s->build.tree_height, 0);
    snprintf(ctxbuf, sizeof ctxbuf, "gather linear");
    check_mark(s, "3", 0);
    nbcxi_sched_destroy(s);
    unsetenv("NBCX_SPLIT_LEVELS");
    loopback_world_destroy(P, comms);
}

/* ------------------------------------------------------------------ */
/* Results in split mode                                               */
/* ------------------------------------------------------------------ */

enum { SM_COUNT = 5, SM_MAXP = 16 };

struct rank_job {
    enum kind kind;
    nbcx_comm comm;
    int rank, p, root;
    nbcx_op op;
    int32_t sbuf[SM_MAXP * SM_COUNT], rbuf[SM_MAXP * SM_COUNT];
    int err;
};

static int32_t value(int r, int i)
{
    return 1000 * r + i + 1;
}

static uint32_t matval(int r, int i)
{
    /* Invertible-ish matrices with small entries, distinct per rank. */
    return (uint32_t)(1 + r) | (uint32_t)(2 + i) << 8 |
           (uint32_t)(r + i) % 7 << 16 | (uint32_t)(1 + 2 * r) << 24;
}

static void *rank_main(void *arg)
{
    struct rank_job *j = arg;
    nbcx_request req = NBCX_REQUEST_NULL;
    int n = SM_COUNT, err;
    for (int i = 0; i < SM_MAXP * SM_COUNT; i++)
        j->rbuf[i] = -1;
    switch (j->kind) {
    case K_BCAST:
        if (j->rank == j->root)
            for (int i = 0; i < n; i++)
                j->rbuf[i] = value(j->root, i);
        err = nbcx_ibcast(j->rbuf, n, NBCX_INT32, j->root, j->comm, &req);
        break;
    case K_REDUCE:
        for (int i = 0; i < n; i++)
            j->sbuf[i] = value(j->rank, i);
        err = nbcx_ireduce(j->sbuf, j->rbuf, n, NBCX_INT32, NBCX_SUM, j->root,
                           j->comm, &req);
        break;
    case K_ALLREDUCE:
        for (int i = 0; i < n; i++)
            j->sbuf[i] = (int32_t)matval(j->rank, i);
        err = nbcx_iallreduce(j->sbuf, j->rbuf, n, NBCX_UINT32, j->op,
                              j->comm, &req);
        break;
    case K_GATHER:
        for (int i = 0; i < n; i++)
            j->sbuf[i] = value(j->rank, i);
        err = nbcx_igather(j->sbuf, n, NBCX_INT32, j->rbuf, n, NBCX_INT32,
                           j->root, j->comm, &req);
        break;
    case K_SCATTER:
    default:
        for (int r = 0; r < j->p; r++)
            for (int i = 0; i < n; i++)
                j->sbuf[r * n + i] = value(r, i);
        err = nbcx_iscatter(j->sbuf, n, NBCX_INT32, j->rbuf, n, NBCX_INT32,
                            j->root, j->comm, &req);
        break;
    }
    if (err == NBCX_SUCCESS)
        err = nbcx_wait(&req);
    j->err = err;
    return NULL;
}

static void check_result(const struct rank_job *j)
{
    int n = SM_COUNT;
    CHECK(j->err == NBCX_SUCCESS, "%s rank %d: %s", ctxbuf, j->rank,
          nbcx_error_string(j->err));
    switch (j->kind) {
    case K_BCAST:
        for (int i = 0; i < n; i++)
            CHECK(j->rbuf[i] == value(j->root, i), "%s rank %d [%d]", ctxbuf,
                  j->rank, i);
        break;
    case K_REDUCE:
        if (j->rank == j->root)
            for (int i = 0; i < n; i++) {
                int32_t sum = 0;
                for (int r = 0; r < j->p; r++)
                    sum += value(r, i);
                CHECK(j->rbuf[i] == sum, "%s [%d]", ctxbuf, i);
            }
        break;
    case K_ALLREDUCE:
        for (int i = 0; i < n; i++) {
            uint32_t x = matval(0, i);
            for (int r = 1; r < j->p; r++)
                x = mat_mul(x, matval(r, i));
            CHECK((uint32_t)j->rbuf[i] == x, "%s rank %d [%d]", ctxbuf,
                  j->rank, i);
        }
        break;
    case K_GATHER:
        if (j->rank == j->root)
            for (int r = 0; r < j->p; r++)
                for (int i = 0; i < n; i++)
                    CHECK(j->rbuf[r * n + i] == value(r, i), "%s [%d][%d]",
                          ctxbuf, r, i);
        break;
    case K_SCATTER:
    default:
        for (int i = 0; i < n; i++)
            CHECK(j->rbuf[i] == value(j->rank, i), "%s rank %d [%d]", ctxbuf,
                  j->rank, i);
        break;
    }
}

static void test_split_mode(void)
{
    nbcx_progress_mode saved = NBCX_PROGRESS_CALLER;
    CHECK_OK(nbcx_progress_get(&saved));
    int err = nbcx_progress_set(NBCX_PROGRESS_SPLIT);
    if (err != NBCX_SUCCESS) {
        CHECK(0, "nbcx_progress_set(SPLIT): %s", nbcx_error_string(err));
        return;
    }
    CHECK_OK(nbcx_algorithm_set("allreduce", "reduce_bcast"));
    nbcx_op noncomm = NBCX_OP_NULL;
    REQUIRE_OK(nbcx_op_create(user_matmul, 0, NULL, &noncomm));
    static const int sizes[] = { 1, 2, 3, 5, 8, 11, 16 };
    static const char *const levels[] = { "0", "1", "2", "9", "auto" };
    static struct rank_job jobs[SM_MAXP];
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int p = sizes[si];
        nbcx_comm comms[SM_MAXP];
        REQUIRE_OK(loopback_world_create(p, comms));
        for (size_t li = 0; li < sizeof levels / sizeof levels[0]; li++) {
            setenv("NBCX_SPLIT_LEVELS", levels[li], 1);
            for (int k = 0; k < NKINDS; k++) {
                int root = k == K_ALLREDUCE ? 0 : (int)(si + li) % p;
                snprintf(ctxbuf, sizeof ctxbuf,
                         "split mode %s p=%d root=%d NBCX_SPLIT_LEVELS=%s",
                         kind_names[k], p, root, levels[li]);
                th_cases++;
                pthread_t tids[SM_MAXP];
                for (int r = 0; r < p; r++) {
                    jobs[r] = (struct rank_job){ .kind = (enum kind)k,
                                                 .comm = comms[r], .rank = r,
                                                 .p = p, .root = root,
                                                 .op = noncomm };
                    pthread_create(&tids[r], NULL, rank_main, &jobs[r]);
                }
                for (int r = 0; r < p; r++)
                    pthread_join(tids[r], NULL);
                for (int r = 0; r < p; r++)
                    check_result(&jobs[r]);
            }
        }
        loopback_world_destroy(p, comms);
    }
    unsetenv("NBCX_SPLIT_LEVELS");
    nbcx_op_free(&noncomm);
    CHECK_OK(nbcx_algorithm_set("allreduce", "auto"));
    CHECK_OK(nbcx_progress_set(saved));
}

static const struct th_test tests[] = {
    { "model_levels", test_model_levels },
    { "model_paper", test_model_paper },
    { "model_shared", test_model_shared },
    { "model_edges", test_model_edges },
    { "levels", test_levels },
    { "mark", test_mark },
    { "split_mode", test_split_mode },
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests, TH_COUNT(tests));
}
