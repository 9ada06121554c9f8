/*
 * test_check.c - tests of the schedule checker (include/nbcx_check.h).
 *
 *   test_check sizes COLL      every algorithm of COLL on 1..64 ranks, in
 *                              three variants (see run_sizes), must pass
 *   test_check scale COLL      every algorithm of COLL on 4,096 ranks
 *                              (neighbourhood collectives: torus, graph)
 *   test_check coverage C...   the collectives the checker knows are
 *                              exactly C... (so a new collective cannot
 *                              go untested: CMake passes its list)
 *   test_check [NAME...]       the table below: hand-built schedules with
 *                              one defect each (orphan send, size and tag
 *                              mismatch, cross-rank cycle, read before
 *                              write, races, ambiguous matching, ...),
 *                              each of which must be found and named
 *                              precisely, next to the corrected schedule,
 *                              which must pass; and argument errors.
 *
 * No MPI: schedules are built on communicators without a transport.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "nbcx_check.h"

/* ------------------------------------------------------------------ */
/* Collected reports                                                   */
/* ------------------------------------------------------------------ */

static char reports[1 << 16];
static size_t reports_len;

static void collect(const char *msg, void *ctx)
{
    (void)ctx;
    size_t n = strlen(msg);
    if (reports_len + n + 2 < sizeof reports) {
        memcpy(reports + reports_len, msg, n);
        reports_len += n;
        reports[reports_len++] = '\n';
        reports[reports_len] = '\0';
    }
}

static void reports_clear(void)
{
    reports_len = 0;
    reports[0] = '\0';
}

static nbcx_check_options opts(void)
{
    nbcx_check_options o = { 0 };
    o.report = collect;
    o.max_reports = 50;
    return o;
}

/* Every string of the NULL-terminated list occurs in the reports. */
static bool reported(const char *const *want)
{
    for (; *want; want++)
        if (!strstr(reports, *want))
            return false;
    return true;
}

#define CHECK_REPORTED(...)                                                  \
    do {                                                                     \
        const char *const want_[] = { __VA_ARGS__, NULL };                   \
        CHECK(reported(want_), "reports were:\n%s", reports);                \
    } while (0)

/* ------------------------------------------------------------------ */
/* Every algorithm must pass                                           */
/* ------------------------------------------------------------------ */

struct variant {
    const char *what;
    int count;
    int in_place;
    nbcx_datatype type;
    int noncommutative;
    size_t segsize;
    int root; /* -1: size - 1, -2: size / 2 */
    int topology;
};

static const struct variant variants[] = {
    { "count 1, torus", 1, 0, NBCX_INT32, 0, 0, 0, NBCX_CHECK_TORUS },
    { "count 3, in place, 4-byte fragments, last root, graph", 3, 1,
      NBCX_INT32, 0, 4, -1, NBCX_CHECK_GRAPH },
    { "count 2, double_int (gaps), non-commutative, middle root, grid", 2,
      0, NBCX_DOUBLE_INT, 1, 0, -2, NBCX_CHECK_GRID },
    { "count 0, graph", 0, 0, NBCX_INT32, 0, 0, 0, NBCX_CHECK_GRAPH },
};

/* Checks every algorithm of coll at each size in [p0, p1] and with each
 * variant; unusable combinations are allowed only for non-commutative
 * operations (a ring allreduce, say). */
static void check_all(const char *coll, int p0, int p1, int nvariants)
{
    const char *names;
    REQUIRE_OK(nbcx_algorithm_names(coll, &names));
    char list[256];
    snprintf(list, sizeof list, "%s", names);
    char *save = NULL;
    for (char *alg = strtok_r(list, " ", &save); alg;
         alg = strtok_r(NULL, " ", &save)) {
        /* "slots" (in-process ranks) moves data through shared memory,
         * not messages: no schedule to prove (tests/inproc runs it). */
        if (strcmp(alg, "slots") == 0)
            continue;
        double t0 = th_now(), worst = 0;
        long ok = 0, skipped = 0;
        for (int p = p0; p <= p1; p++) {
            for (int v = 0; v < nvariants; v++) {
                const struct variant *V = &variants[v];
                nbcx_check_options o = opts();
                o.in_place = V->in_place;
                o.type = V->type;
                o.noncommutative = V->noncommutative;
                o.segsize = V->segsize;
                o.root = V->root == -1 ? p - 1 : V->root == -2 ? p / 2 : 0;
                o.topology = V->topology;
                nbcx_check_result res;
                reports_clear();
                double t1 = th_now();
                int rc = nbcx_check_collective(coll, alg, p, V->count, &o,
                                               &res);
                double dt = th_now() - t1;
                worst = dt > worst ? dt : worst;
                th_cases++;
                if (rc == NBCX_ERR_ALGORITHM && V->noncommutative) {
                    skipped++;
                    continue;
                }
                if (!CHECK(rc == NBCX_SUCCESS,
                           "%s/%s on %d ranks, %s: %s, %lld errors:\n%s",
                           coll, alg, p, V->what, nbcx_error_string(rc),
                           res.errors, reports))
                    continue;
                CHECK(res.errors == 0 && (res.nodes > 0 || p == 1 ||
                                          V->count == 0 ||
                                          !strcmp(coll, "barrier")),
                      "%s/%s on %d ranks: errors %lld nodes %lld", coll,
                      alg, p, res.errors, res.nodes);
                ok++;
            }
        }
        printf("  %s/%s ranks %d..%d: %ld proven, %ld not usable, %.2f s "
               "(slowest %.3f s)\n",
               coll, alg, p0, p1, ok, skipped, th_now() - t0, worst);
    }
}

static int run_named(const char *what, const char *coll)
{
    double t0 = th_now();
    if (!strcmp(what, "sizes"))
        check_all(coll, 1, 64, (int)TH_COUNT(variants));
    else
        check_all(coll, 4096, 4096, strncmp(coll, "neighbor", 8) ? 1 : 2);
    printf("%s %s: %ld checks, %ld cases, %ld failed checks, %.2f s\n", what,
           coll, th_checks, th_cases, th_failures, th_now() - t0);
    return th_failures ? 1 : 0;
}

/* The checker must know exactly the collectives CMake tests. */
static int run_coverage(int argc, char **argv)
{
    const char *c;
    for (int i = 0; (c = nbcx_check_collective_name(i)); i++) {
        bool tested = false;
        for (int a = 0; a < argc; a++)
            tested = tested || !strcmp(argv[a], c);
        CHECK(tested, "collective %s is not in the tests' list "
                      "(tests/check/CMakeLists.txt)", c);
    }
    for (int a = 0; a < argc; a++) {
        bool known = false;
        for (int i = 0; (c = nbcx_check_collective_name(i)); i++)
            known = known || !strcmp(argv[a], c);
        CHECK(known, "collective %s is tested but unknown to the checker",
              argv[a]);
    }
    printf("coverage: %ld checks, %ld failed\n", th_checks, th_failures);
    return th_failures ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* Hand-built schedules                                                */
/* ------------------------------------------------------------------ */

enum { MAXR = 8 };

struct world {
    int size;
    nbcx_comm comm[MAXR];
    nbcx_sched s[MAXR];
    int buf[MAXR][64]; /* user memory of each rank */
};

static bool world_init(struct world *w, int size)
{
    memset(w, 0, sizeof *w);
    w->size = size;
    for (int r = 0; r < size; r++)
        if (nbcx_check_comm_create(r, size, &w->comm[r]) != NBCX_SUCCESS ||
            nbcx_sched_create(w->comm[r], &w->s[r]) != NBCX_SUCCESS)
            return false;
    return true;
}

static void world_free(struct world *w)
{
    for (int r = 0; r < w->size; r++) {
        nbcx_sched_free(&w->s[r]);
        nbcx_comm_free(&w->comm[r]);
    }
}

/* Runs the checker on the world; returns its code. */
static int world_check(struct world *w, nbcx_check_result *res)
{
    nbcx_check_options o = opts();
    reports_clear();
    th_cases++;
    return nbcx_check_schedules(w->size, w->s, &o, res);
}

static nbcx_node send(struct world *w, int r, int *buf, int n, int peer,
                      int tag)
{
    nbcx_node id = -1;
    CHECK_OK(nbcx_sched_send(w->s[r], buf, n, NBCX_INT32, peer, tag, &id));
    return id;
}

static nbcx_node recv(struct world *w, int r, int *buf, int n, int peer,
                      int tag)
{
    nbcx_node id = -1;
    CHECK_OK(nbcx_sched_recv(w->s[r], buf, n, NBCX_INT32, peer, tag, &id));
    return id;
}

static void dep(struct world *w, int r, nbcx_node a, nbcx_node b)
{
    CHECK_OK(nbcx_sched_depend(w->s[r], a, b));
}

#define EXPECT_FAIL(w, res)                                                  \
    do {                                                                     \
        int rc_ = world_check(w, res);                                       \
        CHECK(rc_ == NBCX_ERR_NODE && (res)->errors > 0,                     \
              "expected errors, got %s (%lld errors)",                       \
              nbcx_error_string(rc_), (res)->errors);                        \
    } while (0)

#define EXPECT_PASS(w, res)                                                  \
    do {                                                                     \
        int rc_ = world_check(w, res);                                       \
        CHECK(rc_ == NBCX_SUCCESS && (res)->errors == 0,                     \
              "expected a pass, got %s:\n%s", nbcx_error_string(rc_),        \
              reports);                                                      \
    } while (0)

/* The exchange both ranks could do: each sends 4 ints and receives 4. */
static void good_exchange(struct world *w)
{
    for (int r = 0; r < 2; r++) {
        send(w, r, w->buf[r], 4, 1 - r, 7);
        recv(w, r, w->buf[r] + 4, 4, 1 - r, 7);
    }
}

static void test_good_exchange(void)
{
    struct world w;
    nbcx_check_result res;
    REQUIRE_OK(world_init(&w, 2) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
    good_exchange(&w);
    EXPECT_PASS(&w, &res);
    CHECK(res.nodes == 4 && res.messages == 2, "nodes %lld messages %lld",
          res.nodes, res.messages);
    world_free(&w);
}

static void test_orphan_send(void)
{
    struct world w;
    nbcx_check_result res;
    REQUIRE_OK(world_init(&w, 2) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
    good_exchange(&w);
    send(&w, 0, w.buf[0] + 8, 2, 1, 3); /* nobody receives it */
    EXPECT_FAIL(&w, &res);
    CHECK(res.errors == 1, "%lld errors:\n%s", res.errors, reports);
    CHECK_REPORTED("orphan send: rank 0 node 2 (send 8 B to rank 1, tag 3)",
                   "rank 1 receives from rank 0 with tags 7");
    world_free(&w);
}

static void test_orphan_recv(void)
{
    struct world w;
    nbcx_check_result res;
    REQUIRE_OK(world_init(&w, 3) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
    good_exchange(&w);
    recv(&w, 2, w.buf[2], 1, 0, 0); /* rank 0 never sends to 2 */
    EXPECT_FAIL(&w, &res);
    CHECK_REPORTED("orphan receive: rank 2 node 0 (recv 4 B from rank 0, "
                   "tag 0)",
                   "rank 0 has no sends for rank 2");
    world_free(&w);
}

static void test_size_mismatch(void)
{
    struct world w;
    nbcx_check_result res;
    REQUIRE_OK(world_init(&w, 2) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
    send(&w, 0, w.buf[0], 4, 1, 0);
    recv(&w, 1, w.buf[1], 3, 0, 0);
    EXPECT_FAIL(&w, &res);
    CHECK(res.errors == 1, "%lld errors:\n%s", res.errors, reports);
    CHECK_REPORTED("size mismatch: rank 0 node 0 (send 16 B to rank 1, tag "
                   "0) meets rank 1 node 0 (recv 12 B from rank 0, tag 0)");
    world_free(&w);
}

static void test_tag_mismatch(void)
{
    struct world w;
    nbcx_check_result res;
    REQUIRE_OK(world_init(&w, 2) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
    send(&w, 0, w.buf[0], 4, 1, 1);
    recv(&w, 1, w.buf[1], 4, 0, 2);
    EXPECT_FAIL(&w, &res);
    CHECK(res.errors == 2, "%lld errors:\n%s", res.errors, reports);
    CHECK_REPORTED("orphan send: rank 0 node 0 (send 16 B to rank 1, tag 1)",
                   "rank 1 receives from rank 0 with tags 2)",
                   "orphan receive: rank 1 node 0 (recv 16 B from rank 0, "
                   "tag 2)",
                   "rank 0 sends to rank 1 with tags 1)");
    world_free(&w);
}

/* Each rank receives from the left, then sends to the right: nobody
 * starts. Sending first on rank 0 breaks the cycle. */
static void ring(struct world *w, int size, bool rank0_sends_first)
{
    for (int r = 0; r < size; r++) {
        int left = (r + size - 1) % size, right = (r + 1) % size;
        nbcx_node rv = recv(w, r, w->buf[r], 2, left, 0);
        nbcx_node sn = send(w, r, w->buf[r], 2, right, 0);
        if (r == 0 && rank0_sends_first)
            dep(w, r, sn, rv);
        else
            dep(w, r, rv, sn);
    }
}

static void test_cross_rank_cycle(void)
{
    struct world w;
    nbcx_check_result res;
    REQUIRE_OK(world_init(&w, 2) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
    ring(&w, 2, false);
    EXPECT_FAIL(&w, &res);
    CHECK(res.errors == 1, "%lld errors:\n%s", res.errors, reports);
    CHECK_REPORTED("deadlock: 4 nodes can never complete",
                   "a cycle of 2 steps",
                   "rank 0 node 1 (send 8 B to rank 1, tag 0) = rank 1 node "
                   "0 (recv 8 B from rank 0, tag 0)",
                   "rank 1 node 1 (send 8 B to rank 0, tag 0) = rank 0 node "
                   "0 (recv 8 B from rank 1, tag 0)");
    world_free(&w);

    REQUIRE_OK(world_init(&w, 2) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
    ring(&w, 2, true);
    EXPECT_PASS(&w, &res);
    world_free(&w);
}

static void test_ring_cycle(void)
{
    struct world w;
    nbcx_check_result res;
    REQUIRE_OK(world_init(&w, 5) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
    ring(&w, 5, false);
    EXPECT_FAIL(&w, &res);
    CHECK_REPORTED("deadlock: 10 nodes can never complete",
                   "a cycle of 5 steps", "rank 4 node 1");
    world_free(&w);

    REQUIRE_OK(world_init(&w, 5) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
    ring(&w, 5, true);
    EXPECT_PASS(&w, &res);
    world_free(&w);
}

/* Rank 0 sends what it receives, without waiting for the receive. */
static void test_read_before_write(void)
{
    struct world w;
    nbcx_check_result res;
    for (int fixed = 0; fixed < 2; fixed++) {
        REQUIRE_OK(world_init(&w, 2) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
        nbcx_node rv = recv(&w, 0, w.buf[0], 4, 1, 0);
        nbcx_node sn = send(&w, 0, w.buf[0], 4, 1, 1);
        if (fixed)
            dep(&w, 0, rv, sn);
        send(&w, 1, w.buf[1], 4, 0, 0);
        recv(&w, 1, w.buf[1] + 4, 4, 0, 1);
        if (fixed) {
            EXPECT_PASS(&w, &res);
        } else {
            EXPECT_FAIL(&w, &res);
            CHECK(res.errors == 1, "%lld errors:\n%s", res.errors, reports);
            CHECK_REPORTED("rank 0: ", "may be read before it is written",
                           "node 0 (recv 16 B from rank 1, tag 0) writes it",
                           "node 1 (send 16 B to rank 1, tag 1) reads it");
        }
        world_free(&w);
    }
}

/* Scratch read before anything writes it (the write comes after). */
static void test_scratch_read_before_write(void)
{
    struct world w;
    nbcx_check_result res;
    REQUIRE_OK(world_init(&w, 2) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
    void *tmp;
    REQUIRE_OK(nbcx_sched_tmp(w.s[0], 16, &tmp));
    nbcx_node sn = send(&w, 0, tmp, 4, 1, 0);
    nbcx_node rv = recv(&w, 0, tmp, 4, 1, 1);
    dep(&w, 0, sn, rv);
    recv(&w, 1, w.buf[1], 4, 0, 0);
    send(&w, 1, w.buf[1] + 4, 4, 0, 1);
    EXPECT_FAIL(&w, &res);
    CHECK_REPORTED("rank 0: read before write on scratch 0[0, 16)",
                   "node 0 (send 16 B to rank 1, tag 0) reads it before "
                   "node 1 (recv 16 B from rank 1, tag 1)");
    world_free(&w);
}

/* Two receives into overlapping bytes, unordered; then ordered. */
static void test_write_write_race(void)
{
    struct world w;
    nbcx_check_result res;
    for (int fixed = 0; fixed < 2; fixed++) {
        REQUIRE_OK(world_init(&w, 2) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
        nbcx_node a = recv(&w, 0, w.buf[0], 4, 1, 0);
        nbcx_node b = recv(&w, 0, w.buf[0] + 2, 4, 1, 1);
        if (fixed)
            dep(&w, 0, a, b);
        send(&w, 1, w.buf[1], 4, 0, 0);
        send(&w, 1, w.buf[1], 4, 0, 1);
        if (fixed) {
            EXPECT_PASS(&w, &res);
        } else {
            EXPECT_FAIL(&w, &res);
            CHECK_REPORTED("rank 0: write-write race on memory",
                           "node 0 (recv 16 B from rank 1, tag 0) and node "
                           "1 (recv 16 B from rank 1, tag 1) both write it");
        }
        world_free(&w);
    }
}

/* A local copy overwrites a buffer an in-flight send still reads. */
static void test_overwrite_in_flight(void)
{
    struct world w;
    nbcx_check_result res;
    for (int fixed = 0; fixed < 2; fixed++) {
        REQUIRE_OK(world_init(&w, 2) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
        nbcx_node sn = send(&w, 0, w.buf[0], 4, 1, 0);
        nbcx_node cp;
        REQUIRE_OK(nbcx_sched_copy(w.s[0], w.buf[0] + 8, 4, NBCX_INT32,
                                   w.buf[0], 4, NBCX_INT32, &cp));
        if (fixed)
            dep(&w, 0, sn, cp);
        recv(&w, 1, w.buf[1], 4, 0, 0);
        if (fixed) {
            EXPECT_PASS(&w, &res);
        } else {
            EXPECT_FAIL(&w, &res);
            CHECK_REPORTED("may be overwritten while it is read",
                           "node 0 (send 16 B to rank 1, tag 0) reads it",
                           "node 1 (copy 16 B) writes it");
        }
        world_free(&w);
    }
}

/* Two sends with the same peer and tag, each after its own local step:
 * either may be posted first. Posted at start (creation order) or
 * chained, they match deterministically. */
static void test_ambiguous_matching(void)
{
    struct world w;
    nbcx_check_result res;
    for (int how = 0; how < 3; how++) {
        REQUIRE_OK(world_init(&w, 2) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
        nbcx_node c1, c2;
        REQUIRE_OK(nbcx_sched_copy(w.s[0], w.buf[0], 2, NBCX_INT32,
                                   w.buf[0] + 8, 2, NBCX_INT32, &c1));
        REQUIRE_OK(nbcx_sched_copy(w.s[0], w.buf[0] + 2, 2, NBCX_INT32,
                                   w.buf[0] + 16, 2, NBCX_INT32, &c2));
        nbcx_node a = send(&w, 0, w.buf[0] + 8, 2, 1, 5);
        nbcx_node b = send(&w, 0, w.buf[0] + 16, 1, 1, 5);
        if (how == 0) { /* ambiguous */
            dep(&w, 0, c1, a);
            dep(&w, 0, c2, b);
        } else if (how == 1) { /* chained */
            dep(&w, 0, c1, a);
            dep(&w, 0, c2, b);
            dep(&w, 0, a, b);
        } else { /* posted at start: the copies run later */
            dep(&w, 0, a, c1);
            dep(&w, 0, b, c2);
        }
        recv(&w, 1, w.buf[1], 2, 0, 5);
        recv(&w, 1, w.buf[1] + 8, 1, 0, 5);
        if (how == 0) {
            EXPECT_FAIL(&w, &res);
            CHECK_REPORTED("rank 0: ambiguous matching: node 2 (send 8 B to "
                           "rank 1, tag 5) and node 3 (send 4 B to rank 1, "
                           "tag 5)");
        } else if (how == 1) {
            EXPECT_PASS(&w, &res);
        } else {
            /* The sends read buf+8 / buf+16 before the copies write:
             * input bytes, so that is fine too. */
            EXPECT_PASS(&w, &res);
        }
        world_free(&w);
    }
}

static void test_local_cycle(void)
{
    struct world w;
    nbcx_check_result res;
    REQUIRE_OK(world_init(&w, 2) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
    good_exchange(&w);
    dep(&w, 1, 0, 1);
    dep(&w, 1, 1, 0);
    EXPECT_FAIL(&w, &res);
    CHECK_REPORTED("rank 1: the schedule's dependencies form a cycle; 2 "
                   "nodes can never start: 0 1");
    world_free(&w);
}

static void test_copy_overlap(void)
{
    struct world w;
    nbcx_check_result res;
    REQUIRE_OK(world_init(&w, 1) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
    REQUIRE_OK(nbcx_sched_copy(w.s[0], w.buf[0], 4, NBCX_INT32, w.buf[0] + 2,
                               4, NBCX_INT32, NULL));
    EXPECT_FAIL(&w, &res);
    CHECK_REPORTED("rank 0: node 0 (copy 16 B) reads and writes overlapping "
                   "bytes");
    world_free(&w);
}

/* Many errors: all counted, max_reports of them shown. */
static void test_report_cap(void)
{
    struct world w;
    REQUIRE_OK(world_init(&w, 2) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
    for (int i = 0; i < 30; i++)
        send(&w, 0, w.buf[0], 1, 1, i);
    nbcx_check_options o = opts();
    o.max_reports = 5;
    nbcx_check_result res;
    reports_clear();
    CHECK_RC(nbcx_check_schedules(2, w.s, &o, &res), NBCX_ERR_NODE);
    CHECK(res.errors == 30, "%lld errors", res.errors);
    int lines = 0;
    for (const char *p = reports; *p; p++)
        lines += *p == '\n';
    CHECK(lines == 6, "%d lines:\n%s", lines, reports);
    CHECK_REPORTED("further errors are counted, not shown");
    world_free(&w);
}

/* A checker communicator cannot start anything. */
static void test_null_transport(void)
{
    struct world w;
    REQUIRE_OK(world_init(&w, 2) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
    good_exchange(&w);
    const char *name;
    CHECK_OK(nbcx_comm_transport(w.comm[0], &name));
    CHECK(!strcmp(name, "none"), "transport %s", name);
    nbcx_request req;
    CHECK_OK(nbcx_sched_start(&w.s[0], &req)); /* errors come at the end */
    CHECK(w.s[0] == NULL, "the schedule was consumed");
    CHECK_RC(nbcx_wait(&req), NBCX_ERR_TRANSPORT);
    world_free(&w);
}

static void test_arguments(void)
{
    nbcx_check_options o = opts();
    nbcx_check_result res;
    nbcx_comm c;
    CHECK_RC(nbcx_check_collective("bcast", "nosuch", 4, 1, &o, &res),
             NBCX_ERR_ALGORITHM);
    CHECK_RC(nbcx_check_collective("nosuch", "binomial", 4, 1, &o, &res),
             NBCX_ERR_ALGORITHM);
    CHECK_RC(nbcx_check_collective(NULL, "binomial", 4, 1, &o, &res),
             NBCX_ERR_ARG);
    CHECK_RC(nbcx_check_collective("bcast", "binomial", 0, 1, &o, &res),
             NBCX_ERR_ARG);
    CHECK_RC(nbcx_check_collective("bcast", "binomial", 4, -1, &o, &res),
             NBCX_ERR_COUNT);
    o.root = 4;
    CHECK_RC(nbcx_check_collective("bcast", "binomial", 4, 1, &o, &res),
             NBCX_ERR_ROOT);
    o.root = 0;
    o.type = NBCX_CHAR; /* no reduction is defined on characters */
    CHECK_RC(nbcx_check_collective("allreduce", "ring", 4, 1, &o, &res),
             NBCX_ERR_OP);
    o.type = (nbcx_datatype)(uintptr_t)99;
    CHECK_RC(nbcx_check_collective("bcast", "binomial", 4, 1, &o, &res),
             NBCX_ERR_TYPE);
    o.type = NULL;
    o.noncommutative = 1; /* the ring needs a commutative operation */
    CHECK_RC(nbcx_check_collective("allreduce", "ring", 4, 1, &o, &res),
             NBCX_ERR_ALGORITHM);
    CHECK_RC(nbcx_check_collective("allreduce", "recursive_doubling", 4, 1,
                                   &o, &res),
             NBCX_SUCCESS);
    /* a NULL options pointer and a NULL result are fine */
    CHECK_RC(nbcx_check_collective("alltoall", "bruck", 5, 2, NULL, NULL),
             NBCX_SUCCESS);

    CHECK_RC(nbcx_check_comm_create(2, 2, &c), NBCX_ERR_RANK);
    CHECK_RC(nbcx_check_comm_create(0, 0, &c), NBCX_ERR_ARG);
    CHECK_RC(nbcx_check_comm_create(0, 1, NULL), NBCX_ERR_ARG);
    nbcx_sched none[1] = { NULL };
    CHECK_RC(nbcx_check_schedules(1, none, &o, &res), NBCX_ERR_ARG);
    CHECK_RC(nbcx_check_schedules(0, none, &o, &res), NBCX_ERR_ARG);
    /* a schedule of the wrong rank */
    struct world w;
    REQUIRE_OK(world_init(&w, 2) ? NBCX_SUCCESS : NBCX_ERR_NOMEM);
    nbcx_sched swapped[2] = { w.s[1], w.s[0] };
    CHECK_RC(nbcx_check_schedules(2, swapped, &o, &res), NBCX_ERR_ARG);
    world_free(&w);
    th_cases++;
}

/* Without a segsize of the user's, the checker proves the schedule the
 * engine builds, with its floors: the ring allreduce's fragments are at
 * least 256 KiB (coll/allreduce.c), so 3 ranks reducing 300,000 int32
 * (blocks of 400,000 bytes: 2 fragments each) send 2 (p - 1) blocks of
 * 2 fragments per rank; a segsize of 64 KiB is taken as it is (7 each). */
static void test_segsize_floor(void)
{
    const int p = 3, count = 300000;
    const long long block = (long long)count / p * 4;
    const long long per_block_auto = (block + 262143) / 262144;
    const long long per_block_64k = (block + 65535) / 65536;
    nbcx_check_result res;
    nbcx_check_options o = opts();
    REQUIRE_OK(nbcx_check_collective("allreduce", "ring", p, count, &o,
                                     &res));
    CHECK(res.errors == 0 && res.messages == p * 2LL * (p - 1) *
                                                 per_block_auto,
          "ring, the engine's fragments: %lld messages, %lld errors, "
          "expected %lld", res.messages, res.errors,
          p * 2LL * (p - 1) * per_block_auto);
    o.segsize = 65536;
    REQUIRE_OK(nbcx_check_collective("allreduce", "ring", p, count, &o,
                                     &res));
    CHECK(res.errors == 0 && res.messages == p * 2LL * (p - 1) *
                                                 per_block_64k,
          "ring, --segsize 65536: %lld messages, %lld errors, expected "
          "%lld", res.messages, res.errors, p * 2LL * (p - 1) *
                                                per_block_64k);
}

/* nbcx_check_estimate_cost: the same argument errors as a check, and
 * totals near the check's own for every algorithm (exact where all ranks
 * are alike). It only estimates: nothing here is proven by it. */
static void test_estimate(void)
{
    nbcx_check_options o = opts();
    nbcx_check_estimate est;
    CHECK_RC(nbcx_check_estimate_cost("bcast", "binomial", 4, 1, &o, NULL),
             NBCX_ERR_ARG);
    CHECK_RC(nbcx_check_estimate_cost("bcast", "nosuch", 4, 1, &o, &est),
             NBCX_ERR_ALGORITHM);
    CHECK_RC(nbcx_check_estimate_cost("bcast", "binomial", 0, 1, &o, &est),
             NBCX_ERR_ARG);
    CHECK_RC(nbcx_check_estimate_cost("bcast", "binomial", 4, -1, &o, &est),
             NBCX_ERR_COUNT);
    o.noncommutative = 1;
    CHECK_RC(nbcx_check_estimate_cost("allreduce", "ring", 4, 1, &o, &est),
             NBCX_ERR_ALGORITHM);
    o.noncommutative = 0;

    /* all ranks alike: exact counts */
    int p = 700;
    CHECK_OK(nbcx_check_estimate_cost("alltoall", "pairwise", p, 1, &o,
                                      &est));
    CHECK(est.messages == (long long)p * (p - 1) && est.sampled == 16 &&
              est.bytes > 8.0 * est.messages && est.seconds > 0,
          "messages %lld sampled %d bytes %.0f s %.3f", est.messages,
          est.sampled, est.bytes, est.seconds);
    CHECK_OK(nbcx_check_estimate_cost("barrier", "dissemination", 3, 0, NULL,
                                      &est));
    CHECK(est.sampled == 3 && est.messages == 6, "sampled %d messages %lld",
          est.sampled, est.messages);

    /* every algorithm: within a factor of 2 of the check's totals */
    const char *c, *names;
    for (int i = 0; (c = nbcx_check_collective_name(i)); i++) {
        REQUIRE_OK(nbcx_algorithm_names(c, &names));
        char list[256];
        snprintf(list, sizeof list, "%s", names);
        char *save = NULL;
        for (char *alg = strtok_r(list, " ", &save); alg;
             alg = strtok_r(NULL, " ", &save)) {
            if (!strcmp(alg, "slots"))
                continue;
            for (int k = 0; k < 2; k++) {
                int size = k ? 600 : 97;
                nbcx_check_result res;
                reports_clear();
                CHECK_OK(nbcx_check_estimate_cost(c, alg, size, 2, &o, &est));
                CHECK(reports_len == 0, "the estimate reported:\n%s",
                      reports);
                CHECK_OK(nbcx_check_collective(c, alg, size, 2, &o, &res));
                th_cases++;
                CHECK(est.messages <= 2 * res.messages &&
                          res.messages <= 2 * est.messages &&
                          est.kept <= 2 * res.kept &&
                          res.kept <= 2 * est.kept,
                      "%s/%s on %d ranks: estimated %lld messages, %lld "
                      "kept; checked %lld, %lld",
                      c, alg, size, est.messages, est.kept, res.messages,
                      res.kept);
            }
        }
    }
}

static const struct th_test tests[] = {
    { "good_exchange", test_good_exchange },
    { "orphan_send", test_orphan_send },
    { "orphan_recv", test_orphan_recv },
    { "size_mismatch", test_size_mismatch },
    { "tag_mismatch", test_tag_mismatch },
    { "cross_rank_cycle", test_cross_rank_cycle },
    { "ring_cycle", test_ring_cycle },
    { "read_before_write", test_read_before_write },
    { "scratch_read_before_write", test_scratch_read_before_write },
    { "write_write_race", test_write_write_race },
    { "overwrite_in_flight", test_overwrite_in_flight },
    { "ambiguous_matching", test_ambiguous_matching },
    { "local_cycle", test_local_cycle },
    { "copy_overlap", test_copy_overlap },
    { "report_cap", test_report_cap },
    { "null_transport", test_null_transport },
    { "arguments", test_arguments },
    { "estimate", test_estimate },
    { "segsize_floor", test_segsize_floor },
};

int main(int argc, char **argv)
{
    if (argc == 3 && (!strcmp(argv[1], "sizes") || !strcmp(argv[1], "scale")))
        return run_named(argv[1], argv[2]);
    if (argc >= 2 && !strcmp(argv[1], "coverage"))
        return run_coverage(argc - 2, argv + 2);
    return th_main(argc, argv, tests, TH_COUNT(tests));
}
