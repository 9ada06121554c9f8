/*
 * test_sched.c - the schedule layer through the public builder API
 * (nbcx_sched_*), on loopback communicators.
 *
 * What is checked: nodes start only after all their predecessors, in a
 * topological order; receives without predecessors are posted when the
 * schedule starts; cycles are rejected before anything is posted; every
 * builder error code; scratch memory; empty schedules; reduce and copy
 * nodes; non-commutative user operations; the completion calls (test,
 * testall, waitany, waitall); error strings; and the pipelined chain
 * broadcast of paper 001 (Fig. 3) written with the public API only.
 * Tests that move data run in both loopback modes (ordered and random).
 */
#include <stdint.h>

#include <time.h>

#include "progress/progress.h"
#include "progress/request.h"
#include "sched/sched.h"
#include "harness.h"
#include "matrix_op.h"
#include "loopback.h"

enum { MAXP = 16 };

static const char *mode_name(enum loopback_mode m)
{
    return m == LOOPBACK_RANDOM ? "random" : "ordered";
}

static int world(int n, enum loopback_mode mode, uint64_t seed,
                 nbcx_comm comms[])
{
    struct loopback_options opt = { .mode = mode, .seed = seed };
    return loopback_world_create_ex(n, &opt, comms);
}

/* ------------------------------------------------------------------ */
/* Call nodes that record the order they run in                        */
/* ------------------------------------------------------------------ */

struct order_log {
    int n;
    int seq[256];
};

struct rec_arg {
    struct order_log *log;
    int id;
};

static int record(void *arg)
{
    struct rec_arg *a = arg;
    if (a->log->n < 256)
        a->log->seq[a->log->n++] = a->id;
    return NBCX_SUCCESS;
}

static uint64_t rng = 42;

static uint32_t rnd(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (uint32_t)(z ^ (z >> 31));
}

/* Random DAGs of call nodes: every node runs once, after each of its
 * predecessors. Nodes are created in a shuffled order so that creation
 * order and topological order differ. */
static void test_topological_order(void)
{
    enum { NN = 60 };
    nbcx_comm c[1];
    REQUIRE_OK(loopback_world_create(1, c));
    for (int trial = 0; trial < 20; trial++) {
        struct order_log log = { 0 };
        struct rec_arg args[NN];
        int rank_of[NN], perm[NN];      /* topological rank -> node */
        nbcx_node node[NN];
        for (int i = 0; i < NN; i++)
            perm[i] = i;
        for (int i = NN - 1; i > 0; i--) {
            int j = (int)(rnd() % (uint32_t)(i + 1)), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        nbcx_sched s;
        REQUIRE_OK(nbcx_sched_create(c[0], &s));
        for (int k = 0; k < NN; k++) { /* node perm[k] is created k-th */
            args[perm[k]] = (struct rec_arg){ &log, perm[k] };
            CHECK_OK(nbcx_sched_call(s, record, &args[perm[k]],
                                     &node[perm[k]]));
        }
        /* Edges only from lower to higher id: acyclic. Dense enough that
         * most nodes have several predecessors. */
        int from[NN * 4], to[NN * 4], ne = 0;
        for (int e = 0; e < NN * 4; e++) {
            int a = (int)(rnd() % NN), b = (int)(rnd() % NN);
            if (a == b)
                continue;
            if (a > b) {
                int t = a;
                a = b;
                b = t;
            }
            CHECK_OK(nbcx_sched_depend(s, node[a], node[b]));
            from[ne] = a;
            to[ne++] = b;
        }
        nbcx_request req;
        REQUIRE_OK(nbcx_sched_start(&s, &req));
        CHECK(s == NULL, "nbcx_sched_start did not consume the schedule");
        CHECK_OK(loopback_waitall(c[0], 1, &req));
        CHECK_INT(log.n, NN);
        for (int i = 0; i < NN; i++)
            rank_of[i] = -1;
        for (int i = 0; i < log.n; i++) {
            CHECK(rank_of[log.seq[i]] < 0, "node %d ran twice", log.seq[i]);
            rank_of[log.seq[i]] = i;
        }
        for (int e = 0; e < ne; e++)
            CHECK(rank_of[from[e]] >= 0 && rank_of[from[e]] < rank_of[to[e]],
                  "trial %d: edge %d -> %d but %d ran at %d, %d at %d",
                  trial, from[e], to[e], from[e], rank_of[from[e]], to[e],
                  rank_of[to[e]]);
        th_cases++;
    }
    loopback_world_destroy(1, c);
}

/* A call node after a receive sees the received data: the receive is
 * complete (in random mode data arrives at a random later moment, so a
 * call run too early would see the old contents). Ranks 0 and 1 bounce a
 * vector, each checking and incrementing it in a call node. */
struct bounce {
    int32_t buf[8];
    int32_t expect;   /* value every element must have when checked */
    int ok;
};

static int bounce_check(void *arg)
{
    struct bounce *b = arg;
    for (int i = 0; i < 8; i++)
        if (b->buf[i] != b->expect + i)
            return NBCX_SUCCESS; /* ok stays 0 */
    for (int i = 0; i < 8; i++)
        b->buf[i]++;
    b->ok = 1;
    return NBCX_SUCCESS;
}

static void test_predecessors_complete(void)
{
    for (int mode = 0; mode < 2; mode++) {
        for (int trial = 0; trial < 10; trial++) {
            nbcx_comm c[2];
            REQUIRE_OK(world(2, (enum loopback_mode)mode, (uint64_t)trial, c));
            struct bounce b0 = { .expect = 1 }, b1 = { .expect = 0 };
            for (int i = 0; i < 8; i++)
                b0.buf[i] = i; /* rank 0's initial data: expect 0 + i */
            nbcx_sched s0, s1;
            nbcx_node n0[3], n1[3];
            REQUIRE_OK(nbcx_sched_create(c[0], &s0));
            REQUIRE_OK(nbcx_sched_create(c[1], &s1));
            /* rank 0: send -> (rank 1 checks, adds 1) -> recv -> check */
            CHECK_OK(nbcx_sched_send(s0, b0.buf, 8, NBCX_INT32, 1, 0, &n0[0]));
            CHECK_OK(nbcx_sched_recv(s0, b0.buf, 8, NBCX_INT32, 1, 1, &n0[1]));
            CHECK_OK(nbcx_sched_call(s0, bounce_check, &b0, &n0[2]));
            CHECK_OK(nbcx_sched_depend(s0, n0[0], n0[1])); /* buffer reuse */
            CHECK_OK(nbcx_sched_depend(s0, n0[1], n0[2]));
            /* rank 1: recv -> check -> send back */
            CHECK_OK(nbcx_sched_recv(s1, b1.buf, 8, NBCX_INT32, 0, 0, &n1[0]));
            CHECK_OK(nbcx_sched_call(s1, bounce_check, &b1, &n1[1]));
            CHECK_OK(nbcx_sched_send(s1, b1.buf, 8, NBCX_INT32, 0, 1, &n1[2]));
            CHECK_OK(nbcx_sched_depend(s1, n1[0], n1[1]));
            CHECK_OK(nbcx_sched_depend(s1, n1[1], n1[2]));
            nbcx_request r[2];
            REQUIRE_OK(nbcx_sched_start(&s0, &r[0]));
            REQUIRE_OK(nbcx_sched_start(&s1, &r[1]));
            CHECK_OK(loopback_waitall(c[0], 2, r));
            CHECK(b1.ok && b0.ok, "%s mode: a call node ran before its "
                  "receive completed (rank 1 ok %d, rank 0 ok %d)",
                  mode_name((enum loopback_mode)mode), b1.ok, b0.ok);
            loopback_world_destroy(2, c);
            th_cases++;
        }
    }
}

/* Receives without predecessors are posted at start, even when the
 * rank's own sends wait for a call node that can only run much later:
 *
 *   rank 0:  R0 (recv tag 0)    R1 (recv tag 1) -> C (call) -> S (send)
 *   rank 1:  A (send tag 0) -> B (send tag 1)       T (recv tag 2)
 *
 * Sends are rendezvous: A completes only once R0 is posted, B is sent
 * only after A, C runs only after B arrived. If R0 were posted together
 * with rank 0's sends (after C), nothing could ever move. */
static void test_recv_posted_at_start(void)
{
    for (int mode = 0; mode < 2; mode++) {
        nbcx_comm c[2];
        REQUIRE_OK(world(2, (enum loopback_mode)mode, 7, c));
        struct order_log log = { 0 };
        struct rec_arg carg = { &log, 1 };
        int32_t r0 = 0, r1 = 0, s = 5, a = 11, b = 12, t = 0;
        nbcx_sched s0, s1;
        nbcx_node R0, R1, C, S, A, B, T;
        REQUIRE_OK(nbcx_sched_create(c[0], &s0));
        REQUIRE_OK(nbcx_sched_create(c[1], &s1));
        CHECK_OK(nbcx_sched_call(s0, record, &carg, &C));
        CHECK_OK(nbcx_sched_send(s0, &s, 1, NBCX_INT32, 1, 2, &S));
        CHECK_OK(nbcx_sched_recv(s0, &r1, 1, NBCX_INT32, 1, 1, &R1));
        CHECK_OK(nbcx_sched_recv(s0, &r0, 1, NBCX_INT32, 1, 0, &R0));
        CHECK_OK(nbcx_sched_depend(s0, R1, C));
        CHECK_OK(nbcx_sched_depend(s0, C, S));
        CHECK_OK(nbcx_sched_send(s1, &a, 1, NBCX_INT32, 0, 0, &A));
        CHECK_OK(nbcx_sched_send(s1, &b, 1, NBCX_INT32, 0, 1, &B));
        CHECK_OK(nbcx_sched_recv(s1, &t, 1, NBCX_INT32, 0, 2, &T));
        CHECK_OK(nbcx_sched_depend(s1, A, B));
        (void)R0;
        (void)T;

        /* Rank 0 alone: both receives are posted, its send is not. */
        struct loopback_stats st;
        nbcx_request r[2];
        REQUIRE_OK(nbcx_sched_start(&s0, &r[0]));
        CHECK_OK(nbcx_progress());
        CHECK_OK(loopback_stats(c[0], &st));
        CHECK_INT(st.posted, 2);
        CHECK_INT(log.n, 0);
        REQUIRE_OK(nbcx_sched_start(&s1, &r[1]));
        CHECK_OK(loopback_waitall(c[0], 2, r));
        CHECK(r0 == 11 && r1 == 12 && t == 5 && log.n == 1,
              "%s mode: r0 %d r1 %d t %d, call ran %d times",
              mode_name((enum loopback_mode)mode), (int)r0, (int)r1, (int)t,
              log.n);
        CHECK_OK(loopback_stats(c[0], &st));
        CHECK_INT(st.live, 0);
        loopback_world_destroy(2, c);
        th_cases++;
    }
}

/* A cycle is rejected at start with NBCX_ERR_NODE; nothing is posted, not
 * even the receive that has no predecessor. */
static void test_cycle_rejected(void)
{
    nbcx_comm c[2];
    REQUIRE_OK(loopback_world_create(2, c));
    struct order_log log = { 0 };
    struct rec_arg args[3] = { { &log, 0 }, { &log, 1 }, { &log, 2 } };
    int32_t x = 1, y = 0;
    nbcx_sched s;
    nbcx_node n[3], snd, rcv;
    REQUIRE_OK(nbcx_sched_create(c[0], &s));
    CHECK_OK(nbcx_sched_recv(s, &y, 1, NBCX_INT32, 1, 0, &rcv));
    for (int i = 0; i < 3; i++)
        CHECK_OK(nbcx_sched_call(s, record, &args[i], &n[i]));
    CHECK_OK(nbcx_sched_send(s, &x, 1, NBCX_INT32, 1, 0, &snd));
    CHECK_OK(nbcx_sched_depend(s, n[0], n[1]));
    CHECK_OK(nbcx_sched_depend(s, n[1], snd));
    CHECK_OK(nbcx_sched_depend(s, snd, n[2]));
    CHECK_OK(nbcx_sched_depend(s, n[2], n[0])); /* closes the cycle */
    CHECK_RC(nbcx_sched_depend(s, n[1], n[1]), NBCX_ERR_NODE); /* a loop */
    (void)rcv;
    nbcx_request req = (nbcx_request)(uintptr_t)0x1234;
    CHECK_RC(nbcx_sched_start(&s, &req), NBCX_ERR_NODE);
    CHECK(req == NBCX_REQUEST_NULL, "no request after a rejected start");
    CHECK(s == NULL, "the schedule is consumed even when rejected");
    struct loopback_stats st;
    CHECK_OK(nbcx_progress());
    CHECK_OK(loopback_stats(c[0], &st));
    CHECK_INT(st.posted, 0);
    CHECK_INT(log.n, 0);
    loopback_world_destroy(2, c);
    th_cases++;
}

/* ------------------------------------------------------------------ */
/* Builder argument checks                                             */
/* ------------------------------------------------------------------ */

static int noop(void *arg)
{
    (void)arg;
    return NBCX_SUCCESS;
}

static void test_builder_errors(void)
{
    nbcx_comm c[3];
    REQUIRE_OK(loopback_world_create(3, c));
    int32_t buf[4] = { 1, 2, 3, 4 }, out[4] = { 0 };
    double dbl[4] = { 0 };
    nbcx_datatype bad_type = (nbcx_datatype)(uintptr_t)99;
    nbcx_sched s = NULL;

    CHECK_RC(nbcx_sched_create(NBCX_COMM_NULL, &s), NBCX_ERR_COMM);
    CHECK_RC(nbcx_sched_create(c[0], NULL), NBCX_ERR_ARG);
    REQUIRE_OK(nbcx_sched_create(c[0], &s));

    /* Each rejected call must leave the schedule as it was. */
    static const struct { int peer, tag, count; int null_buf; int err; }
    p2p_cases[] = {
        { -1, 0, 1, 0, NBCX_ERR_RANK },  { 3, 0, 1, 0, NBCX_ERR_RANK },
        { 1, -1, 1, 0, NBCX_ERR_TAG },   { 1, NBCX_SCHED_TAG_MAX + 1, 1, 0,
                                           NBCX_ERR_TAG },
        { 1, 0, -1, 0, NBCX_ERR_COUNT }, { 1, 0, 1, 1, NBCX_ERR_BUFFER },
        { 1, 0, 1, 2, NBCX_ERR_BUFFER }, /* NBCX_IN_PLACE */
    };
    for (size_t i = 0; i < sizeof p2p_cases / sizeof p2p_cases[0]; i++) {
        void *b = p2p_cases[i].null_buf == 1   ? NULL
                  : p2p_cases[i].null_buf == 2 ? NBCX_IN_PLACE
                                               : (void *)buf;
        nbcx_node node;
        CHECK_RC(nbcx_sched_send(s, b, p2p_cases[i].count, NBCX_INT32,
                                 p2p_cases[i].peer, p2p_cases[i].tag, &node),
                 p2p_cases[i].err);
        CHECK_RC(nbcx_sched_recv(s, b, p2p_cases[i].count, NBCX_INT32,
                                 p2p_cases[i].peer, p2p_cases[i].tag, &node),
                 p2p_cases[i].err);
        th_cases++;
    }
    CHECK_RC(nbcx_sched_send(s, buf, 1, bad_type, 1, 0, NULL), NBCX_ERR_TYPE);
    CHECK_RC(nbcx_sched_recv(s, buf, 1, NBCX_DATATYPE_NULL, 1, 0, NULL),
             NBCX_ERR_TYPE);
    CHECK_RC(nbcx_sched_send(NULL, buf, 1, NBCX_INT32, 1, 0, NULL),
             NBCX_ERR_ARG);

    CHECK_RC(nbcx_sched_reduce(s, buf, out, 4, NBCX_INT32, NBCX_OP_NULL, NULL),
             NBCX_ERR_OP);
    CHECK_RC(nbcx_sched_reduce(s, dbl, dbl, 4, NBCX_DOUBLE, NBCX_BAND, NULL),
             NBCX_ERR_OP);
    CHECK_RC(nbcx_sched_reduce(s, buf, out, -1, NBCX_INT32, NBCX_SUM, NULL),
             NBCX_ERR_COUNT);
    CHECK_RC(nbcx_sched_reduce(s, NULL, out, 4, NBCX_INT32, NBCX_SUM, NULL),
             NBCX_ERR_BUFFER);
    CHECK_RC(nbcx_sched_reduce(s, buf, NULL, 4, NBCX_INT32, NBCX_SUM, NULL),
             NBCX_ERR_BUFFER);
    CHECK_RC(nbcx_sched_copy(s, buf, 4, NBCX_INT32, out, 3, NBCX_INT32, NULL),
             NBCX_ERR_ARG); /* 16 bytes into 12 */
    CHECK_RC(nbcx_sched_copy(s, buf, -1, NBCX_INT32, out, 3, NBCX_INT32, NULL),
             NBCX_ERR_COUNT);
    CHECK_RC(nbcx_sched_copy(s, buf, 4, NBCX_INT32, NULL, 4, NBCX_INT32, NULL),
             NBCX_ERR_BUFFER);
    CHECK_RC(nbcx_sched_call(s, NULL, NULL, NULL), NBCX_ERR_ARG);

    void *tmp;
    CHECK_RC(nbcx_sched_tmp(s, 8, NULL), NBCX_ERR_ARG);
    CHECK_RC(nbcx_sched_tmp(NULL, 8, &tmp), NBCX_ERR_ARG);

    /* Node numbers: none exist yet, then two. */
    CHECK_RC(nbcx_sched_depend(s, 0, 1), NBCX_ERR_NODE);
    nbcx_node a, b;
    CHECK_OK(nbcx_sched_call(s, noop, NULL, &a));
    CHECK_OK(nbcx_sched_call(s, noop, NULL, &b));
    CHECK_RC(nbcx_sched_depend(s, -1, b), NBCX_ERR_NODE);
    CHECK_RC(nbcx_sched_depend(s, a, 2), NBCX_ERR_NODE);
    CHECK_RC(nbcx_sched_depend(s, a, a), NBCX_ERR_NODE);
    CHECK_RC(nbcx_sched_depend(NULL, a, b), NBCX_ERR_ARG);
    CHECK_OK(nbcx_sched_depend(s, a, b));

    /* Valid nodes: count 0 with a NULL buffer, a send to itself. */
    nbcx_node n1, n2, n3;
    CHECK_OK(nbcx_sched_send(s, NULL, 0, NBCX_INT32, 1, 0, &n1));
    CHECK_OK(nbcx_sched_send(s, buf, 4, NBCX_INT32, 0, NBCX_SCHED_TAG_MAX,
                             &n2));
    CHECK_OK(nbcx_sched_recv(s, out, 4, NBCX_INT32, 0, NBCX_SCHED_TAG_MAX,
                             &n3));

    /* Starting: the request pointer first (the schedule stays ours). */
    CHECK_RC(nbcx_sched_start(&s, NULL), NBCX_ERR_REQUEST);
    CHECK(s != NULL, "a start rejected for its request kept the schedule");
    nbcx_request req = (nbcx_request)(uintptr_t)0x1234;
    nbcx_sched none = NULL;
    CHECK_RC(nbcx_sched_start(&none, &req), NBCX_ERR_ARG);
    CHECK(req == NBCX_REQUEST_NULL, "req reset on a rejected start");
    CHECK_RC(nbcx_sched_start(NULL, &req), NBCX_ERR_ARG);

    /* After all those errors the schedule still works; rank 1 receives the
     * empty message. */
    nbcx_sched s1;
    nbcx_request r[2];
    REQUIRE_OK(nbcx_sched_create(c[1], &s1));
    CHECK_OK(nbcx_sched_recv(s1, NULL, 0, NBCX_INT32, 0, 0, NULL));
    REQUIRE_OK(nbcx_sched_start(&s, &r[0]));
    REQUIRE_OK(nbcx_sched_start(&s1, &r[1]));
    CHECK_OK(loopback_waitall(c[0], 2, r));
    CHECK(memcmp(buf, out, sizeof buf) == 0, "self send did not arrive");

    /* Freeing: a built schedule that is never started, and NULL. */
    REQUIRE_OK(nbcx_sched_create(c[2], &s));
    CHECK_OK(nbcx_sched_send(s, buf, 4, NBCX_INT32, 0, 0, NULL));
    CHECK_OK(nbcx_sched_free(&s));
    CHECK(s == NULL, "nbcx_sched_free resets the handle");
    CHECK_OK(nbcx_sched_free(&s));
    CHECK_RC(nbcx_sched_free(NULL), NBCX_ERR_ARG);
    loopback_world_destroy(3, c);
}

/* ------------------------------------------------------------------ */
/* Scratch memory, empty schedules, reduce and copy nodes              */
/* ------------------------------------------------------------------ */

struct scratch_check {
    const int32_t *tmp;
    int32_t out[100];
};

static int scratch_out(void *arg)
{
    struct scratch_check *sc = arg;
    memcpy(sc->out, sc->tmp, sizeof sc->out);
    return NBCX_SUCCESS;
}

static void test_scratch(void)
{
    for (int mode = 0; mode < 2; mode++) {
        nbcx_comm c[2];
        REQUIRE_OK(world(2, (enum loopback_mode)mode, 3, c));
        int32_t data[100];
        for (int i = 0; i < 100; i++)
            data[i] = 1000 + i * 7;
        nbcx_sched s0, s1;
        REQUIRE_OK(nbcx_sched_create(c[0], &s0));
        REQUIRE_OK(nbcx_sched_create(c[1], &s1));
        void *zero, *t1, *t2;
        CHECK_OK(nbcx_sched_tmp(s1, 0, &zero));
        CHECK(zero != NULL, "scratch of 0 bytes is a valid pointer");
        CHECK_OK(nbcx_sched_tmp(s1, sizeof data, &t1));
        CHECK_OK(nbcx_sched_tmp(s1, 3, &t2));
        CHECK(t1 && t2 && t1 != t2 && t1 != zero, "distinct scratch buffers");
        memset(t2, 0xab, 3); /* all of it is usable (ASan checks) */
        struct scratch_check sc = { .tmp = t1 };
        nbcx_node rv, call;
        CHECK_OK(nbcx_sched_send(s0, data, 100, NBCX_INT32, 1, 9, NULL));
        CHECK_OK(nbcx_sched_recv(s1, t1, 100, NBCX_INT32, 0, 9, &rv));
        CHECK_OK(nbcx_sched_call(s1, scratch_out, &sc, &call));
        CHECK_OK(nbcx_sched_depend(s1, rv, call));
        nbcx_request r[2];
        REQUIRE_OK(nbcx_sched_start(&s0, &r[0]));
        REQUIRE_OK(nbcx_sched_start(&s1, &r[1]));
        CHECK_OK(loopback_waitall(c[0], 2, r));
        CHECK(memcmp(sc.out, data, sizeof data) == 0,
              "%s mode: data through scratch differs",
              mode_name((enum loopback_mode)mode));
        loopback_world_destroy(2, c);
        th_cases++;
    }
}

static void test_empty_schedule(void)
{
    nbcx_comm c[2];
    REQUIRE_OK(loopback_world_create(2, c));
    nbcx_sched s;
    nbcx_request req;
    int flag = 0;
    REQUIRE_OK(nbcx_sched_create(c[1], &s));
    REQUIRE_OK(nbcx_sched_start(&s, &req));
    CHECK(req != NBCX_REQUEST_NULL, "an empty schedule still has a request");
    CHECK_OK(nbcx_test(&req, &flag));
    CHECK_INT(flag, 1);
    CHECK(req == NBCX_REQUEST_NULL, "completed request reset to NULL");
    /* Again, through nbcx_wait. */
    REQUIRE_OK(nbcx_sched_create(c[0], &s));
    REQUIRE_OK(nbcx_sched_start(&s, &req));
    CHECK_OK(nbcx_wait(&req));
    CHECK(req == NBCX_REQUEST_NULL, "completed request reset to NULL");
    loopback_world_destroy(2, c);
    th_cases += 2;
}

/* Three ranks: ranks 1 and 2 send vectors to rank 0, which combines them
 * with its own through copy and reduce nodes, in a diamond:
 *
 *   copy(own -> acc) ----+
 *   recv(1 -> t1) -------+--> reduce(t1, acc) --> reduce(t2, acc) --+
 *   recv(2 -> t2) ----------------------------------^                |
 *                         copy(acc as INT32 x 2n -> out as INT64 x n) <+
 *
 * once for NBCX_INT32/NBCX_SUM (results checked through the INT64 view)
 * and once for NBCX_DOUBLE/NBCX_MAX. */
static void test_reduce_copy_nodes(void)
{
    enum { N = 10 };
    for (int mode = 0; mode < 2; mode++) {
        for (int dbl = 0; dbl < 2; dbl++) {
            nbcx_comm c[3];
            REQUIRE_OK(world(3, (enum loopback_mode)mode, 11, c));
            nbcx_datatype type = dbl ? NBCX_DOUBLE : NBCX_INT32;
            nbcx_op op = dbl ? NBCX_MAX : NBCX_SUM;
            size_t esz = dbl ? sizeof(double) : sizeof(int32_t);
            union { int32_t i[N]; double d[N]; } v[3], v0[3], acc, t1, t2;
            int64_t out[N]; /* N * esz bytes at most */
            for (int r = 0; r < 3; r++)
                for (int i = 0; i < N; i++) {
                    if (dbl)
                        v[r].d[i] = (double)((r * 5 + i * 3) % 7) - 2;
                    else
                        v[r].i[i] = (r + 1) * 100 + i * ((r & 1) ? -3 : 5);
                }
            memcpy(v0, v, sizeof v);
            memset(out, 0, sizeof out);
            nbcx_sched s[3];
            for (int r = 0; r < 3; r++)
                REQUIRE_OK(nbcx_sched_create(c[r], &s[r]));
            for (int r = 1; r < 3; r++)
                CHECK_OK(nbcx_sched_send(s[r], &v[r], N, type, 0, 3, NULL));
            nbcx_node cp, r1, r2, red1, red2, cp2;
            CHECK_OK(nbcx_sched_copy(s[0], &v[0], N, type, &acc, N, type,
                                     &cp));
            CHECK_OK(nbcx_sched_recv(s[0], &t1, N, type, 1, 3, &r1));
            CHECK_OK(nbcx_sched_recv(s[0], &t2, N, type, 2, 3, &r2));
            CHECK_OK(nbcx_sched_reduce(s[0], &t1, &acc, N, type, op, &red1));
            CHECK_OK(nbcx_sched_reduce(s[0], &t2, &acc, N, type, op, &red2));
            /* The bytes of acc into out, viewed as 64-bit elements. */
            int nout = (int)(N * esz / sizeof(int64_t));
            CHECK_OK(nbcx_sched_copy(s[0], &acc, N, type, out, nout,
                                     NBCX_INT64, &cp2));
            CHECK_OK(nbcx_sched_depend(s[0], cp, red1));
            CHECK_OK(nbcx_sched_depend(s[0], r1, red1));
            CHECK_OK(nbcx_sched_depend(s[0], red1, red2));
            CHECK_OK(nbcx_sched_depend(s[0], r2, red2));
            CHECK_OK(nbcx_sched_depend(s[0], red2, cp2));
            nbcx_request req[3];
            for (int r = 0; r < 3; r++)
                REQUIRE_OK(nbcx_sched_start(&s[r], &req[r]));
            CHECK_OK(loopback_waitall(c[0], 3, req));

            union { int32_t i[N]; double d[N]; } want;
            for (int i = 0; i < N; i++) {
                if (dbl) {
                    double m = v0[0].d[i];
                    for (int r = 1; r < 3; r++)
                        m = v0[r].d[i] > m ? v0[r].d[i] : m;
                    want.d[i] = m;
                } else {
                    want.i[i] = v0[0].i[i] + v0[1].i[i] + v0[2].i[i];
                }
            }
            CHECK(memcmp(out, &want, N * esz) == 0,
                  "%s mode, %s: reduce/copy result differs",
                  mode_name((enum loopback_mode)mode), dbl ? "MAX" : "SUM");
            CHECK(memcmp(v, v0, sizeof v) == 0, "inputs were modified");
            loopback_world_destroy(3, c);
            th_cases++;
        }
    }
}

/* ------------------------------------------------------------------ */
/* A non-commutative user operation: 2x2 matrices modulo 251           */
/* ------------------------------------------------------------------ */

static void mat_op(const void *in, void *inout, int count, nbcx_datatype type,
                   void *ctx)
{
    (void)type;
    (void)ctx;
    mat_mul_into(in, inout, count);
}

static uint32_t rnd_mat(void)
{
    return (rnd() % 251) | (rnd() % 251) << 8 | (rnd() % 251) << 16 |
           (rnd() % 251) << 24;
}

/* A hand-made prefix product along a chain of P ranks: rank r receives
 * M0 * ... * M(r-1) from r - 1 (the lower ranks' part, so "in"), computes
 * that times its own M(r) and passes it on. The operation is freed right
 * after the schedules are built: schedules keep it alive. */
static void test_user_op_noncommutative(void)
{
    enum { P = 5, N = 6 };
    for (int mode = 0; mode < 2; mode++) {
        nbcx_comm c[P];
        REQUIRE_OK(world(P, (enum loopback_mode)mode, 5, c));
        nbcx_op op;
        int commutative = 1;
        REQUIRE_OK(nbcx_op_create(mat_op, 0, NULL, &op));
        CHECK_OK(nbcx_op_commutative(op, &commutative));
        CHECK_INT(commutative, 0);
        uint32_t m[P][N], in[P][N], want[N];
        for (int r = 0; r < P; r++)
            for (int i = 0; i < N; i++)
                m[r][i] = rnd_mat();
        for (int i = 0; i < N; i++) {
            want[i] = m[0][i];
            for (int r = 1; r < P; r++)
                want[i] = mat_mul(want[i], m[r][i]);
        }
        nbcx_sched s[P];
        nbcx_request req[P];
        for (int r = 0; r < P; r++) {
            nbcx_node rv = -1, red = -1;
            REQUIRE_OK(nbcx_sched_create(c[r], &s[r]));
            if (r > 0) {
                CHECK_OK(nbcx_sched_recv(s[r], in[r], N, NBCX_UINT32, r - 1,
                                         0, &rv));
                CHECK_OK(nbcx_sched_reduce(s[r], in[r], m[r], N, NBCX_UINT32,
                                           op, &red));
                CHECK_OK(nbcx_sched_depend(s[r], rv, red));
            }
            if (r < P - 1) {
                nbcx_node sn;
                CHECK_OK(nbcx_sched_send(s[r], m[r], N, NBCX_UINT32, r + 1, 0,
                                         &sn));
                if (red >= 0)
                    CHECK_OK(nbcx_sched_depend(s[r], red, sn));
            }
        }
        CHECK_OK(nbcx_op_free(&op));
        for (int r = 0; r < P; r++)
            REQUIRE_OK(nbcx_sched_start(&s[r], &req[r]));
        CHECK_OK(loopback_waitall(c[0], P, req));
        CHECK(memcmp(m[P - 1], want, sizeof want) == 0,
              "%s mode: product not in rank order",
              mode_name((enum loopback_mode)mode));
        loopback_world_destroy(P, c);
        th_cases++;
    }
}

/* ------------------------------------------------------------------ */
/* Completion calls and errors                                         */
/* ------------------------------------------------------------------ */

/* A receive on rank 0 that completes once rank 1's send is started. */
static void pending_pair(nbcx_comm c[2], int32_t *buf, const int32_t *src,
                         nbcx_request *recv, nbcx_sched *send)
{
    nbcx_sched s;
    *recv = NBCX_REQUEST_NULL;
    if (nbcx_sched_create(c[0], &s) != NBCX_SUCCESS)
        return;
    nbcx_sched_recv(s, buf, 1, NBCX_INT32, 1, 0, NULL);
    nbcx_sched_start(&s, recv);
    nbcx_sched_create(c[1], send);
    nbcx_sched_send(*send, src, 1, NBCX_INT32, 0, 0, NULL);
}

static nbcx_request empty_request(nbcx_comm c)
{
    nbcx_sched s;
    nbcx_request r = NBCX_REQUEST_NULL;
    if (nbcx_sched_create(c, &s) == NBCX_SUCCESS)
        nbcx_sched_start(&s, &r);
    return r;
}

/* Every schedule takes the next sequence number of its communicator, so
 * schedules that talk to each other must be started in the same order on
 * every rank, as collectives are. The empty requests below therefore come
 * from a world of their own (e). */
static void test_completion_calls(void)
{
    nbcx_comm c[2], e[1];
    REQUIRE_OK(loopback_world_create(2, c));
    REQUIRE_OK(loopback_world_create(1, e));
    int flag = -1, index = 7;
    nbcx_request null_req = NBCX_REQUEST_NULL, reqs[3];

    /* NULL requests and bad arguments. */
    CHECK_OK(nbcx_test(&null_req, &flag));
    CHECK_INT(flag, 1);
    CHECK_OK(nbcx_wait(&null_req));
    CHECK_RC(nbcx_test(NULL, &flag), NBCX_ERR_REQUEST);
    CHECK_RC(nbcx_test(&null_req, NULL), NBCX_ERR_REQUEST);
    CHECK_RC(nbcx_wait(NULL), NBCX_ERR_REQUEST);
    CHECK_OK(nbcx_waitall(0, NULL));
    CHECK_RC(nbcx_waitall(-1, reqs), NBCX_ERR_REQUEST);
    CHECK_RC(nbcx_waitall(1, NULL), NBCX_ERR_REQUEST);
    CHECK_RC(nbcx_testall(1, NULL, &flag), NBCX_ERR_REQUEST);
    CHECK_RC(nbcx_waitany(1, reqs, NULL), NBCX_ERR_REQUEST);
    reqs[0] = reqs[1] = reqs[2] = NBCX_REQUEST_NULL;
    CHECK_OK(nbcx_waitany(3, reqs, &index));
    CHECK_INT(index, -1);
    index = 7;
    CHECK_OK(nbcx_waitany(0, NULL, &index));
    CHECK_INT(index, -1);
    flag = 0;
    CHECK_OK(nbcx_testall(3, reqs, &flag));
    CHECK_INT(flag, 1);

    /* testall: while one request is pending, none is released. */
    int32_t got = 0, src = 77;
    nbcx_sched sender;
    pending_pair(c, &got, &src, &reqs[0], &sender);
    reqs[1] = NBCX_REQUEST_NULL;
    reqs[2] = empty_request(e[0]);
    REQUIRE_OK(reqs[0] && reqs[2] ? NBCX_SUCCESS : NBCX_ERR_INTERN);
    flag = 1;
    CHECK_OK(nbcx_testall(3, reqs, &flag));
    CHECK_INT(flag, 0);
    CHECK(reqs[0] && reqs[2], "testall released requests before all were "
          "complete");
    /* waitany: the complete one, then the pending one once it can go. */
    CHECK_OK(nbcx_waitany(3, reqs, &index));
    CHECK_INT(index, 2);
    CHECK(reqs[2] == NBCX_REQUEST_NULL, "waitany resets the completed one");
    nbcx_request sreq;
    REQUIRE_OK(nbcx_sched_start(&sender, &sreq));
    CHECK_OK(nbcx_waitany(3, reqs, &index));
    CHECK_INT(index, 0);
    CHECK(reqs[0] == NBCX_REQUEST_NULL, "waitany resets the completed one");
    CHECK_INT(got, 77);
    CHECK_OK(nbcx_wait(&sreq));
    CHECK(sreq == NBCX_REQUEST_NULL, "wait resets the request");

    /* testall and waitall release every request once all are done. */
    got = 0;
    pending_pair(c, &got, &src, &reqs[0], &sender);
    REQUIRE_OK(nbcx_sched_start(&sender, &reqs[1]));
    reqs[2] = empty_request(e[0]);
    for (flag = 0; !flag;)
        CHECK_OK(nbcx_testall(3, reqs, &flag));
    CHECK(!reqs[0] && !reqs[1] && !reqs[2], "testall resets all requests");
    pending_pair(c, &got, &src, &reqs[0], &sender);
    REQUIRE_OK(nbcx_sched_start(&sender, &reqs[1]));
    reqs[2] = NBCX_REQUEST_NULL;
    CHECK_OK(nbcx_waitall(3, reqs));
    CHECK(!reqs[0] && !reqs[1] && !reqs[2], "waitall resets all requests");
    loopback_world_destroy(2, c);
    loopback_world_destroy(1, e);
    th_cases++;
}

static int fail_call(void *arg)
{
    return *(int *)arg;
}

/* An error in a node ends the operation with that error: pending
 * receives are cancelled (nothing leaks), the request still completes. A
 * truncated receive fails on the receiving side only. */
static void test_errors_propagate(void)
{
    nbcx_comm c[2];
    struct loopback_options quiet = { .quiet = 1 };
    REQUIRE_OK(loopback_world_create_ex(2, &quiet, c));
    int code = NBCX_ERR_INTERN;
    int32_t buf[4] = { 1, 2, 3, 4 }, small[3] = { 0 }, x = 0, y = 0;
    nbcx_sched s, s1;
    nbcx_request req, r[2];
    nbcx_node call, rv, rv2;
    struct loopback_stats st;

    /* Rank 0 waits for two messages; the first triggers a failing call
     * while the second receive is still pending. Rank 1 sends one. */
    REQUIRE_OK(nbcx_sched_create(c[0], &s));
    REQUIRE_OK(nbcx_sched_create(c[1], &s1));
    CHECK_OK(nbcx_sched_recv(s, &x, 1, NBCX_INT32, 1, 0, &rv));
    CHECK_OK(nbcx_sched_recv(s, &y, 1, NBCX_INT32, 1, 1, &rv2));
    CHECK_OK(nbcx_sched_call(s, fail_call, &code, &call));
    CHECK_OK(nbcx_sched_depend(s, rv, call));
    CHECK_OK(nbcx_sched_send(s1, buf, 1, NBCX_INT32, 0, 0, NULL));
    REQUIRE_OK(nbcx_sched_start(&s, &r[0]));
    REQUIRE_OK(nbcx_sched_start(&s1, &r[1]));
    CHECK_OK(nbcx_wait(&r[1]));
    CHECK_RC(nbcx_wait(&r[0]), NBCX_ERR_INTERN);
    CHECK(r[0] == NBCX_REQUEST_NULL, "a failed request is released too");
    CHECK_OK(loopback_stats(c[0], &st));
    CHECK_INT(st.live, 0); /* the pending receive was cancelled */
    (void)rv2;

    /* A call failing the moment the schedule starts: the error comes from
     * nbcx_sched_start (no request) or from the wait; the posted receive
     * is cancelled either way. (A world of its own: the failed start may
     * or may not have used a sequence number of rank 0.) */
    nbcx_comm f[2];
    REQUIRE_OK(loopback_world_create_ex(2, &quiet, f));
    REQUIRE_OK(nbcx_sched_create(f[0], &s));
    CHECK_OK(nbcx_sched_recv(s, &x, 1, NBCX_INT32, 1, 0, NULL));
    CHECK_OK(nbcx_sched_call(s, fail_call, &code, NULL));
    int err = nbcx_sched_start(&s, &req);
    if (err == NBCX_SUCCESS)
        err = nbcx_wait(&req);
    CHECK_RC(err, NBCX_ERR_INTERN);
    CHECK(req == NBCX_REQUEST_NULL, "no request left after a failure");
    CHECK_OK(loopback_stats(f[0], &st));
    CHECK_INT(st.live, 0);
    loopback_world_destroy(2, f);

    /* Truncation: 4 elements sent, room for 3; the receive is posted
     * after or before the send. Only the receiving side fails. When the
     * message arrives during the start call, the error may come from
     * nbcx_sched_start itself. */
    for (int recv_first = 0; recv_first < 2; recv_first++) {
        REQUIRE_OK(nbcx_sched_create(c[0], &s));
        REQUIRE_OK(nbcx_sched_create(c[1], &s1));
        CHECK_OK(nbcx_sched_send(s, buf, 4, NBCX_INT32, 1, 0, NULL));
        CHECK_OK(nbcx_sched_recv(s1, small, 3, NBCX_INT32, 0, 0, NULL));
        int e0, e1;
        if (recv_first) {
            e1 = nbcx_sched_start(&s1, &r[1]);
            e0 = nbcx_sched_start(&s, &r[0]);
        } else {
            e0 = nbcx_sched_start(&s, &r[0]);
            e1 = nbcx_sched_start(&s1, &r[1]);
        }
        if (e1 == NBCX_SUCCESS)
            e1 = nbcx_wait(&r[1]);
        if (e0 == NBCX_SUCCESS)
            e0 = nbcx_wait(&r[0]);
        CHECK_RC(e0, NBCX_SUCCESS);
        CHECK_RC(e1, NBCX_ERR_TRUNCATE);
        CHECK_OK(loopback_stats(c[0], &st));
        CHECK_INT(st.live, 0);
    }

    /* Same bytes, different types (4 x INT32 into 2 x INT64) is fine. */
    int64_t wide[2] = { 0 };
    REQUIRE_OK(nbcx_sched_create(c[0], &s));
    REQUIRE_OK(nbcx_sched_create(c[1], &s1));
    CHECK_OK(nbcx_sched_send(s, buf, 4, NBCX_INT32, 1, 0, NULL));
    CHECK_OK(nbcx_sched_recv(s1, wide, 2, NBCX_INT64, 0, 0, NULL));
    REQUIRE_OK(nbcx_sched_start(&s, &r[0]));
    REQUIRE_OK(nbcx_sched_start(&s1, &r[1]));
    CHECK_OK(loopback_waitall(c[0], 2, r));
    CHECK(memcmp(wide, buf, sizeof wide) == 0, "typed bytes differ");
    loopback_world_destroy(2, c);
    th_cases += 3;
}

static void test_error_strings(void)
{
    for (int e = 0; e < NBCX_ERR_LASTCODE; e++) {
        const char *m = nbcx_error_string(e);
        CHECK(m && *m, "code %d has no message", e);
        for (int f = 0; f < e; f++)
            CHECK(!m || strcmp(m, nbcx_error_string(f)) != 0,
                  "codes %d and %d share the message \"%s\"", f, e, m);
    }
    CHECK(nbcx_error_string(-1) != NULL, "negative code");
    CHECK(nbcx_error_string(NBCX_ERR_LASTCODE) != NULL, "past the last code");
    CHECK(nbcx_error_string(1 << 20) != NULL, "large code");
}

/* Communicator queries, and a transport whose tags are too few for nbcx
 * (tag_ub < 4095 leaves no room for a sequence number). */
static void test_comm_queries(void)
{
    nbcx_comm c[4];
    REQUIRE_OK(loopback_world_create(4, c));
    for (int r = 0; r < 4; r++) {
        int rank = -1, size = -1;
        const char *name = NULL;
        CHECK_OK(nbcx_comm_rank(c[r], &rank));
        CHECK_OK(nbcx_comm_size(c[r], &size));
        CHECK_OK(nbcx_comm_transport(c[r], &name));
        CHECK(rank == r && size == 4 && name && strcmp(name, "loopback") == 0,
              "rank %d size %d transport %s", rank, size, name ? name : "-");
    }
    CHECK_RC(nbcx_comm_rank(NBCX_COMM_NULL, NULL), NBCX_ERR_COMM);
    CHECK_RC(nbcx_comm_size(c[0], NULL), NBCX_ERR_ARG);
    loopback_world_destroy(4, c);
    CHECK(c[0] == NBCX_COMM_NULL, "freed communicators are reset");

    struct loopback_options few = { .tag_ub = 1000, .quiet = 1 };
    CHECK(loopback_world_create_ex(4, &few, c) != NBCX_SUCCESS,
          "tag_ub 1000 leaves no sequence numbers");
    CHECK(c[0] == NBCX_COMM_NULL && c[3] == NBCX_COMM_NULL,
          "no communicator after a failed creation");
}

/* Handles freed while operations use them stay alive until the last
 * operation is released: the communicators (all of them, so the world's
 * transports go away only at the end), a user operation and a derived
 * datatype made the way a face makes one (heap-allocated, one user
 * reference, a release callback). ASan and LSan check the rest. */
static int type_released;

static void count_release(struct nbcx_datatype_s *t)
{
    (void)t;
    type_released++;
}

static const struct nbcxi_type_face counting_face = { .release =
                                                          count_release };

static void test_handles_freed_in_flight(void)
{
    enum { P = 3, N = 5 };
    nbcx_comm c[P];
    REQUIRE_OK(world(P, LOOPBACK_RANDOM, 21, c));
    /* A contiguous derived type of one int32 (the face never packs). */
    struct nbcx_datatype_s *t = calloc(1, sizeof *t);
    REQUIRE_OK(t ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
    t->magic = NBCXI_TYPE_MAGIC;
    t->name = "counted_int32";
    t->size = 4;
    t->extent = 4;
    t->true_extent = 4;
    t->contiguous = true;
    t->face = &counting_face;
    atomic_init(&t->refs, 1);
    nbcx_datatype type = t;
    nbcx_op op;
    REQUIRE_OK(nbcx_op_create(mat_op, 0, NULL, &op));
    type_released = 0;

    /* Rank 0 sends to the others, which combine it with their own. */
    uint32_t data[P][N], in[P][N], want[P][N];
    for (int r = 0; r < P; r++)
        for (int i = 0; i < N; i++)
            data[r][i] = rnd_mat();
    for (int r = 1; r < P; r++)
        for (int i = 0; i < N; i++)
            want[r][i] = mat_mul(data[0][i], data[r][i]);
    nbcx_request req[P];
    for (int r = 0; r < P; r++) {
        nbcx_sched s;
        REQUIRE_OK(nbcx_sched_create(c[r], &s));
        if (r == 0) {
            for (int d = 1; d < P; d++)
                CHECK_OK(nbcx_sched_send(s, data[0], N, type, d, 0, NULL));
        } else {
            nbcx_node rv, red;
            CHECK_OK(nbcx_sched_recv(s, in[r], N, type, 0, 0, &rv));
            CHECK_OK(nbcx_sched_reduce(s, in[r], data[r], N, type, op, &red));
            CHECK_OK(nbcx_sched_depend(s, rv, red));
        }
        REQUIRE_OK(nbcx_sched_start(&s, &req[r]));
    }
    CHECK_OK(nbcx_datatype_free(&type));
    CHECK(type == NBCX_DATATYPE_NULL, "nbcx_datatype_free resets the handle");
    CHECK_OK(nbcx_op_free(&op));
    loopback_world_destroy(P, c);
    CHECK_INT(type_released, 0); /* still in use */
    CHECK_OK(nbcx_waitall(P, req));
    CHECK_INT(type_released, 1);
    for (int r = 1; r < P; r++)
        CHECK(memcmp(data[r], want[r], sizeof want[r]) == 0,
              "rank %d: wrong result after freeing the handles", r);
    th_cases++;
}

/* ------------------------------------------------------------------ */
/* The pipelined chain broadcast of paper 001, Fig. 3                  */
/* ------------------------------------------------------------------ */
/*
 * Every rank builds its own graph: for fragment k, a receive from the
 * predecessor in the chain (no predecessor node: posted at start) and a
 * send to the successor after that receive and after the send of
 * fragment k - 1 (fragments leave in order, which tag reuse needs). The
 * figure's "spreve" is the previous send; it must be updated each round.
 */
static int chain_bcast(nbcx_comm comm, int32_t *buf, int count, int frag,
                       int root, nbcx_request *req)
{
    int rank, size, err;
    nbcx_sched s;
    if ((err = nbcx_comm_rank(comm, &rank)) ||
        (err = nbcx_comm_size(comm, &size)) ||
        (err = nbcx_sched_create(comm, &s)))
        return err;
    int vr = (rank - root + size) % size;
    int prev = vr > 0 ? (rank - 1 + size) % size : -1;
    int next = vr < size - 1 ? (rank + 1) % size : -1;
    nbcx_node prev_send = -1;
    for (int k = 0, off = 0; off < count && !err; k++, off += frag) {
        int n = count - off < frag ? count - off : frag;
        int tag = k % (NBCX_SCHED_TAG_MAX + 1);
        nbcx_node rn = -1, sn = -1;
        if (prev >= 0)
            err = nbcx_sched_recv(s, buf + off, n, NBCX_INT32, prev, tag, &rn);
        if (next >= 0 && !err) {
            err = nbcx_sched_send(s, buf + off, n, NBCX_INT32, next, tag, &sn);
            if (!err && rn >= 0)
                err = nbcx_sched_depend(s, rn, sn);
            if (!err && prev_send >= 0)
                err = nbcx_sched_depend(s, prev_send, sn);
            prev_send = sn;
        }
    }
    if (err) {
        nbcx_sched_free(&s);
        return err;
    }
    return nbcx_sched_start(&s, req);
}

/* Runs one chain broadcast on world c of p ranks and checks every rank. */
static void run_chain(nbcx_comm *c, int p, int count, int frag, int root,
                      int32_t salt, const char *what)
{
    int32_t *buf[MAXP];
    nbcx_request req[MAXP];
    for (int r = 0; r < p; r++) {
        buf[r] = malloc(sizeof(int32_t) * (size_t)(count ? count : 1));
        for (int i = 0; i < count; i++)
            buf[r][i] = r == root ? salt + i * 3 : -1;
    }
    for (int r = 0; r < p; r++)
        CHECK_OK(chain_bcast(c[r], buf[r], count, frag, root, &req[r]));
    int err = loopback_waitall(c[0], p, req);
    CHECK(err == NBCX_SUCCESS, "%s: waitall returned %d", what, err);
    for (int r = 0; r < p; r++) {
        for (int i = 0; i < count; i++) {
            if (!CHECK(buf[r][i] == salt + i * 3,
                       "%s: p %d count %d frag %d root %d: rank %d element %d"
                       " is %d, expected %d", what, p, count, frag, root, r,
                       i, (int)buf[r][i], (int)(salt + i * 3)))
                break;
        }
        free(buf[r]);
    }
    th_cases++;
}

static void test_chain_bcast(void)
{
    static const int counts[] = { 0, 1, 7, 100 };
    static const int frags[] = { 1, 3, 16, 1000 };
    for (int mode = 0; mode < 2; mode++) {
        for (int p = 1; p <= 9; p++) {
            nbcx_comm c[MAXP];
            REQUIRE_OK(world(p, (enum loopback_mode)mode, (uint64_t)p, c));
            int roots[3] = { 0, p - 1, p / 2 };
            for (int ci = 0; ci < 4; ci++)
                for (int fi = 0; fi < 4; fi++)
                    for (int ri = 0; ri < 3; ri++)
                        run_chain(c, p, counts[ci], frags[fi], roots[ri],
                                  (int32_t)(p * 1000 + ci * 10 + fi),
                                  mode_name((enum loopback_mode)mode));
            loopback_world_destroy(p, c);
        }
    }
    /* More fragments than tags: fragment k and k + 4096 share a tag and
     * must match in order. */
    nbcx_comm c[3];
    REQUIRE_OK(world(3, LOOPBACK_RANDOM, 99, c));
    run_chain(c, 3, 5000, 1, 1, 12345, "4096+ fragments");
    loopback_world_destroy(3, c);
}

/* Sequence numbers wrap around: with tag_ub = 65535 there are only
 * (65535 + 1) >> 12 = 16 tag slots, 8 for nonblocking operations (the
 * others are for persistent requests). Twenty broadcasts one after the
 * other reuse them, and eight at once (the most allowed) use them all. */
static void test_tag_wraparound(void)
{
    enum { P = 4, K = 8, N = 20 };
    struct loopback_options opt = { .tag_ub = 65535 };
    for (int mode = 0; mode < 2; mode++) {
        opt.mode = (enum loopback_mode)mode;
        nbcx_comm c[P];
        REQUIRE_OK(loopback_world_create_ex(P, &opt, c));
        for (int k = 0; k < 20; k++)
            run_chain(c, P, N, 4, k % P, k * 100, "sequential");

        int32_t buf[K][P][N];
        nbcx_request req[K * P];
        for (int k = 0; k < K; k++)
            for (int r = 0; r < P; r++)
                for (int i = 0; i < N; i++)
                    buf[k][r][i] = r == k % P ? k * 1000 + i : -1;
        for (int k = 0; k < K; k++) /* all ranks start in the same order */
            for (int r = 0; r < P; r++)
                CHECK_OK(chain_bcast(c[r], buf[k][r], N, 3, k % P,
                                     &req[k * P + r]));
        CHECK_OK(loopback_waitall(c[0], K * P, req));
        for (int k = 0; k < K; k++)
            for (int r = 0; r < P; r++)
                for (int i = 0; i < N; i++)
                    if (!CHECK(buf[k][r][i] == k * 1000 + i,
                               "%s mode: concurrent broadcast %d, rank %d, "
                               "element %d is %d",
                               mode_name((enum loopback_mode)mode), k, r, i,
                               (int)buf[k][r][i]))
                        break;
        loopback_world_destroy(P, c);
        th_cases++;
    }
}

/* The measured bandwidth (sched/pace.c) takes only operations whose
 * completion it can time: a 64 KiB chain broadcast from rank 0 to rank 1
 * (one message), in caller mode (no thread), tested by hand.
 *   arrived    rank 0 started GAP_MS before rank 1, whose receive is
 *              found done in its start: no sample (it reads memory speed,
 *              not the network's); rank 0 only sends, never a sample
 *   seen late  rank 1's receive waited, was found pending, then done
 *              only GAP_MS after its data came: the window is the whole
 *              wait, no sample
 *   waited     rank 1's receive was found pending just before its data
 *              came, GAP_MS after its start: one sample, bytes / GAP_MS
 *              (kept unless the machine stalls GAP_MS / 4 between two
 *              calls of this thread)
 *   slack      an operation of 40 us found done at the pass after its
 *              start is kept (shared memory: its window is under 50 us),
 *              one of 100 us found so after 60 us is not
 *   median     a sample five times higher than eight others (a rank
 *              that came late), or ten times lower (one that made the
 *              connections), does not move the estimate */
static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void nap_ms(int ms)
{
    struct timespec t = { .tv_sec = 0, .tv_nsec = (long)ms * 1000000 };
    while (nanosleep(&t, &t) != 0)
        ;
}

static double bandwidth(void)
{
    pthread_mutex_lock(&nbcxi_engine_lock);
    double b = nbcxi_pace_bandwidth();
    pthread_mutex_unlock(&nbcxi_engine_lock);
    return b;
}

static void test_pace_samples(void)
{
    enum { N = 16384, GAP_MS = 50 }; /* int32: 64 KiB, one message */
    static int32_t buf[2][N];
    nbcx_progress_mode saved;
    REQUIRE_OK(nbcx_progress_get(&saved));
    REQUIRE_OK(nbcx_progress_set(NBCX_PROGRESS_CALLER));
    nbcx_comm c[2];
    REQUIRE_OK(world(2, LOOPBACK_ORDERED, 1, c));
    pthread_mutex_lock(&nbcxi_engine_lock);
    nbcxi_pace_reset();
    pthread_mutex_unlock(&nbcxi_engine_lock);
    nbcx_request r[2];
    int done;

    /* arrived */
    CHECK_OK(chain_bcast(c[0], buf[0], N, N, 0, &r[0]));
    nap_ms(GAP_MS);
    CHECK_OK(chain_bcast(c[1], buf[1], N, N, 0, &r[1]));
    CHECK_OK(loopback_waitall(c[0], 2, r));
    CHECK(bandwidth() == 0, "arrived: a receive done when posted gave "
          "a sample, %g GB/s", bandwidth());

    /* seen late */
    CHECK_OK(chain_bcast(c[1], buf[1], N, N, 0, &r[1]));
    CHECK_OK(nbcx_test(&r[1], &done));
    CHECK(!done, "seen late: the receive is done before the send");
    CHECK_OK(chain_bcast(c[0], buf[0], N, N, 0, &r[0]));
    nap_ms(GAP_MS);
    CHECK_OK(loopback_waitall(c[0], 2, r));
    CHECK(bandwidth() == 0, "seen late: a completion found %d ms late "
          "gave a sample, %g GB/s", GAP_MS, bandwidth());

    /* waited */
    int64_t t0 = now_ns();
    CHECK_OK(chain_bcast(c[1], buf[1], N, N, 0, &r[1]));
    nap_ms(GAP_MS);
    CHECK_OK(nbcx_test(&r[1], &done));
    CHECK(!done, "waited: the receive is done before the send");
    CHECK_OK(chain_bcast(c[0], buf[0], N, N, 0, &r[0]));
    CHECK_OK(loopback_waitall(c[0], 2, r));
    double want = (double)N * 4 / (double)(now_ns() - t0);
    double got = bandwidth();
    CHECK(got >= want * 0.9 && got <= want * 1.5,
          "waited: measured %g GB/s, the receive took %g GB/s", got, want);

    /* slack */
    pthread_mutex_lock(&nbcxi_engine_lock);
    nbcxi_pace_reset();
    nbcxi_pace_sample(1 << 20, 1000, 41000, 101000);
    double none = nbcxi_pace_bandwidth();
    nbcxi_pace_sample(1 << 16, 1000, 1001, 41000);
    double some = nbcxi_pace_bandwidth();
    pthread_mutex_unlock(&nbcxi_engine_lock);
    CHECK(none == 0, "slack: a 60 us window of 100 us kept, %g GB/s", none);
    CHECK(some > 3.2 && some < 3.4, "slack: 64 KiB in 40 us, window 40 us: "
          "%g GB/s", some);

    /* median */
    pthread_mutex_lock(&nbcxi_engine_lock);
    nbcxi_pace_reset();
    for (int i = 0; i < 10; i++) { /* 1 MiB in 1 ms, once in 0.2, once in 10 */
        int64_t end = i == 4 ? 201000 : i == 0 ? 10001000 : 1001000;
        nbcxi_pace_sample(1 << 20, 1000, end - 1000, end);
    }
    double b = nbcxi_pace_bandwidth();
    pthread_mutex_unlock(&nbcxi_engine_lock);
    CHECK(b > 1.04 && b < 1.06, "median: %g GB/s from eight samples of "
          "1.05, one of 5.2 and one of 0.105", b);

    loopback_world_destroy(2, c);
    nbcx_progress_set(saved);
    th_cases++;
}


/* Contiguous copies at every distance modulo 4 KiB that memcpy's rep
 * movsb handles slowly (1-63 bytes: datatype.c copies in pieces there)
 * and around it, sizes on both sides of the pieces' and the range's
 * bounds: the bytes arrive exactly, through nbcxi_type_copy (apart and
 * overlapping: memmove's order) and nbcxi_type_pack / _unpack. */
static void test_copy_distances(void)
{
    static const size_t sizes[] = { 1, 2047, 2048, 2049, 4097, 65536 + 3,
                                    524287, 524288, 600000 };
    static const size_t gaps[] = { 0, 1, 8, 16, 31, 32, 63, 64, 4095 };
    struct nbcx_datatype_s *byte = nbcxi_type(NBCX_BYTE);
    size_t max = 600000 + 8192;
    unsigned char *src = malloc(max), *dst = malloc(2 * max);
    CHECK(byte && src && dst, "setup");
    if (!byte || !src || !dst) {
        free(src);
        free(dst);
        return;
    }
    for (size_t i = 0; i < max; i++)
        src[i] = (unsigned char)(i * 131 + 7);
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++) {
            size_t n = sizes[z];
            /* dst lies gaps[g] bytes past src, modulo 4 KiB */
            size_t soff = (uintptr_t)src & 4095;
            size_t doff = ((soff + gaps[g]) - ((uintptr_t)dst & 4095)) & 4095;
            unsigned char *d = dst + doff;
            for (int how = 0; how < 3; how++) {
                memset(dst, 0xA5, 2 * max);
                int rc = how == 0 ? nbcxi_type_copy(src, d, (int)n, byte)
                         : how == 1 ? nbcxi_type_pack(src, (int)n, byte, d)
                                    : nbcxi_type_unpack(src, (int)n, byte, d);
                CHECK_INT(rc, NBCX_SUCCESS);
                CHECK(memcmp(d, src, n) == 0 && (doff == 0 || d[-1] == 0xA5) &&
                          d[n] == 0xA5,
                      "%zu bytes, %zu past mod 4 KiB, way %d: wrong bytes",
                      n, gaps[g], how);
            }
        }
    }
    /* overlapping, both directions, at a slow distance */
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        size_t n = sizes[z];
        for (int dir = 0; dir < 2; dir++) {
            unsigned char *b = dst;
            memcpy(b + (dir ? 0 : 16), src, n);
            CHECK_INT(nbcxi_type_copy(b + (dir ? 0 : 16), b + (dir ? 16 : 0),
                                      (int)n, byte), NBCX_SUCCESS);
            CHECK(memcmp(b + (dir ? 16 : 0), src, n) == 0,
                  "%zu bytes overlapping by 16, direction %d: wrong bytes", n,
                  dir);
        }
    }
    free(src);
    free(dst);
}

static const struct th_test tests[] = {
    { "topological_order", test_topological_order },
    { "predecessors_complete", test_predecessors_complete },
    { "recv_posted_at_start", test_recv_posted_at_start },
    { "cycle_rejected", test_cycle_rejected },
    { "builder_errors", test_builder_errors },
    { "scratch", test_scratch },
    { "empty_schedule", test_empty_schedule },
    { "reduce_copy_nodes", test_reduce_copy_nodes },
    { "user_op_noncommutative", test_user_op_noncommutative },
    { "completion_calls", test_completion_calls },
    { "errors_propagate", test_errors_propagate },
    { "error_strings", test_error_strings },
    { "comm_queries", test_comm_queries },
    { "handles_freed_in_flight", test_handles_freed_in_flight },
    { "chain_bcast", test_chain_bcast },
    { "tag_wraparound", test_tag_wraparound },
    { "pace_samples", test_pace_samples },
    { "copy_distances", test_copy_distances },
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests, TH_COUNT(tests));
}
