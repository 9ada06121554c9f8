/*
 * test_tuning.c - the selection table of NBCX_TUNING (coll/tuning.c).
 *
 * The table is read once per process, so CTest runs each test in a
 * process of its own (the test writes its file and sets NBCX_TUNING
 * before nbcx reads it):
 *   choose    rules steer the choice: by collective, rank range and byte
 *             range, first match wins; a rule's segment size reaches the
 *             builder; an algorithm that cannot serve the call (ring for
 *             a non-commutative op) falls back to the built-in choice,
 *             as do calls no rule covers; a forced algorithm wins;
 *             reduce_scatter's bytes are its average block
 *   results   collectives chosen by the table give the sequential
 *             reference's results on a loopback world
 *   missing   a file that does not exist: every call fails with
 *             NBCX_ERR_ALGORITHM and stderr names the file
 *   bad_line  a line naming an unknown algorithm: the same, and stderr
 *             and nbcx_error_detail name the file, the line, the name
 *             and the collective's algorithms
 *   bad_coll  an unknown collective: named, with the collectives
 *   bad_field a malformed ranks, bytes, ranks-per-node, segsize or split
 *             S field, too few or too many fields: the field and its
 *             text named (on stderr and in nbcx_error_detail)
 *   rpn       rules with a ranks-per-node column (nbcx-tune/2) match
 *             the communicator's ranks per node, ceil(ranks / nodes);
 *             where the transport does not know the nodes only "*" does
 *   builtin   the built-in table (coll/tuning_builtin.inc) parses, is
 *             named by nbcx_info, and steers the choice: every one of its
 *             rules for 16 ranks, on a 16-rank world with that rule's
 *             ranks per node, gives the rule's algorithm, and so does
 *             every rule for 4 ranks on more than one node; on fewer
 *             than 16 ranks on one node, or where the nodes are unknown,
 *             no rule applies (the thresholds' choices),
 *             (NBCX_TUNING's rules come first: rpn)
 *   names     the lists an unknown name is answered with
 *             (nbcxi_coll_names): the whole list equals
 *             nbcx_algorithm_names'; a buffer too short for it gets
 *             whole names only, terminated, and nothing past its end
 *   split     split rules (nbcx-tune --split) give split mode's S per
 *             collective, ranks and bytes; NBCX_SPLIT_LEVELS still wins;
 *             calls no split rule covers keep the model; split rules do
 *             not steer the algorithm, nor algorithm rules S
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "coll/coll.h"
#include "harness.h"
#include "loopback.h"
#include "progress/progress.h"
#include "progress/request.h"

enum { P = 4, BIG = 16, MAXC = 1 << 18 };

static nbcx_comm comms[BIG];
static char path[64];

static void write_table(const char *text)
{
    snprintf(path, sizeof path, "/tmp/nbcx-tuning-%d.txt", (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    setenv("NBCX_TUNING", path, 1);
}

/* Builds rank 0's schedule of coll with count int32 elements (double for
 * the reductions) on p ranks of comms; returns the algorithm's name and
 * the segment size the builder got (a copy: the schedule is freed). */
static const char *chosen(enum nbcxi_coll coll, int count, nbcx_op op,
                          size_t *segsize, int *err)
{
    static int32_t buf[2][MAXC];
    struct nbcx_sched_s *s = NULL;
    *err = nbcxi_sched_new(nbcxi_comm(comms[0]), &s);
    if (*err)
        return NULL;
    struct nbcx_datatype_s *t = nbcxi_type(NBCX_INT32);
    struct nbcxi_coll_args a = {
        .sbuf = buf[0], .rbuf = buf[1], .scount = count, .rcount = count,
        .stype = t, .rtype = t, .op = nbcxi_op(op), .root = 0,
    };
    static int counts[BIG];
    if (coll == NBCXI_REDUCE_SCATTER) { /* as api/ passes it: a vector */
        for (int i = 0; i < BIG; i++)
            counts[i] = count;
        a.rv.counts = counts;
        a.rcount = a.scount = 0;
        a.stype = NULL;
    }
    *err = nbcxi_coll_build(coll, s, &a, NULL);
    const char *name = *err ? NULL : s->build.alg_name;
    if (segsize)
        *segsize = a.segsize;
    nbcxi_sched_destroy(s);
    return name;
}

static void expect_alg(enum nbcxi_coll coll, int count, nbcx_op op,
                       const char *want, size_t want_seg)
{
    size_t seg = 0;
    int err = 0;
    const char *got = chosen(coll, count, op, &seg, &err);
    CHECK(err == NBCX_SUCCESS, "%s x%d: %s", nbcxi_coll_name(coll), count,
          nbcx_error_string(err));
    CHECK(got && strcmp(got, want) == 0, "%s x%d: got %s, want %s",
          nbcxi_coll_name(coll), count, got ? got : "(none)", want);
    if (want_seg)
        CHECK(seg == want_seg, "%s x%d: segsize %zu, want %zu",
              nbcxi_coll_name(coll), count, seg, want_seg);
}

static void world(void)
{
    REQUIRE_OK(loopback_world_create(P, comms));
}

/* A user op that is not commutative (first argument wins). */
static void first_wins(const void *in, void *inout, int count,
                       nbcx_datatype type, void *ctx)
{
    (void)in, (void)inout, (void)count, (void)type, (void)ctx;
}

static void test_choose(void)
{
    /* Built in, on 4 ranks: allreduce of 8 bytes is recursive_doubling,
     * of 1 MiB ring; bcast of 1 MiB is chain, of 8 bytes binomial. */
    write_table("# nbcx-tune/1 (test)\n"
                "allreduce 2-3 *        recursive_doubling 0\n"
                "allreduce 4   0-1023   ring 0   # small: ring\n"
                "allreduce *   1024-*   recursive_doubling 0\n"
                "bcast     4-* 4096-*   binomial 0\n"
                "bcast     *   *        chain    1000\n"
                "alltoall  *   *        pairwise 0\n"
                "alltoall  *   *        bruck    0   # never: first wins\n"
                "reduce_scatter * 1024-* reduce_scatterv 0\n");
    world();
    expect_alg(NBCXI_ALLREDUCE, 2, NBCX_SUM, "ring", 0);
    expect_alg(NBCXI_ALLREDUCE, 1 << 18, NBCX_SUM, "recursive_doubling", 0);
    expect_alg(NBCXI_BCAST, 1 << 18, NBCX_SUM, "binomial", 0);
    expect_alg(NBCXI_BCAST, 2, NBCX_SUM, "chain", 1000);
    expect_alg(NBCXI_ALLTOALL, 2, NBCX_SUM, "pairwise", 0);
    /* reduce_scatter's bytes: the average block of its vector of counts
     * (1 KiB here; 1020 B: no rule, the built-in pairwise) */
    expect_alg(NBCXI_REDUCE_SCATTER, 256, NBCX_SUM, "reduce_scatterv", 0);
    expect_alg(NBCXI_REDUCE_SCATTER, 255, NBCX_SUM, "pairwise", 0);
    /* Not covered: the built-in choice. */
    expect_alg(NBCXI_GATHER, 1, NBCX_SUM, "binomial", 0);
    expect_alg(NBCXI_GATHER, 4096, NBCX_SUM, "linear", 0);
    /* ring cannot serve a non-commutative op: the built-in choice. */
    nbcx_op nc;
    REQUIRE_OK(nbcx_op_create(first_wins, 0, NULL, &nc));
    expect_alg(NBCXI_ALLREDUCE, 2, nc, "recursive_doubling", 0);
    nbcx_op_free(&nc);
    /* A forced algorithm wins over the table. */
    REQUIRE_OK(nbcx_algorithm_set("bcast", "binomial"));
    expect_alg(NBCXI_BCAST, 2, NBCX_SUM, "binomial", 0);
    REQUIRE_OK(nbcx_algorithm_set("bcast", "auto"));
    /* nbcx_info names the table. */
    char info[2048];
    REQUIRE_OK(nbcx_info(info, sizeof info));
    CHECK(strstr(info, "tuning=") && strstr(info, "(8 rules)"),
          "nbcx_info does not name the table: %s", info);
    loopback_world_destroy(P, comms);
    unlink(path);
}

static void test_results(void)
{
    write_table("allreduce * * ring 0\n"
                "bcast * * chain 24\n");
    world();
    enum { N = 37 };
    static double in[P][N], out[P][N];
    static int32_t data[P][N];
    nbcx_request req[P];
    for (int r = 0; r < P; r++)
        for (int i = 0; i < N; i++) {
            in[r][i] = r * 100 + i;
            out[r][i] = -1;
            data[r][i] = r == 2 ? 7 * i + 1 : -1;
        }
    for (int r = 0; r < P; r++)
        REQUIRE_OK(nbcx_iallreduce(in[r], out[r], N, NBCX_DOUBLE, NBCX_SUM,
                                   comms[r], &req[r]));
    REQUIRE_OK(loopback_waitall(comms[0], P, req));
    for (int r = 0; r < P; r++)
        for (int i = 0; i < N; i++)
            CHECK(out[r][i] == 600.0 + 4.0 * i, "rank %d [%d]: %g", r, i,
                  out[r][i]);
    for (int r = 0; r < P; r++)
        REQUIRE_OK(nbcx_ibcast(data[r], N, NBCX_INT32, 2, comms[r], &req[r]));
    REQUIRE_OK(loopback_waitall(comms[0], P, req));
    for (int r = 0; r < P; r++)
        for (int i = 0; i < N; i++)
            CHECK(data[r][i] == 7 * i + 1, "bcast rank %d [%d]: %d", r, i,
                  (int)data[r][i]);
    loopback_world_destroy(P, comms);
    unlink(path);
}

/* A call on another thread than the one that read the file: its error
 * and nbcx_error_detail, as that thread saw them. */
struct other_call {
    int err;
    char detail[256];
};

static void *call_elsewhere(void *arg)
{
    struct other_call *o = arg;
    double x = 1, y = 0;
    nbcx_request req;
    o->err = nbcx_iallreduce(&x, &y, 1, NBCX_DOUBLE, NBCX_SUM, comms[0],
                             &req);
    snprintf(o->detail, sizeof o->detail, "%s", nbcx_error_detail(o->err));
    return NULL;
}

/* Every call fails with NBCX_ERR_ALGORITHM; stderr says `what`, and so
 * does nbcx_error_detail on this thread (the one that read the file),
 * after the call that read it and after a later one, and on another
 * thread, with the file's name: not just "unknown collective or
 * algorithm name". */
static void expect_refused(const char *what)
{
    if (!CHECK(capture_begin(), "cannot capture stderr"))
        return;
    world();
    int err = 0;
    chosen(NBCXI_BCAST, 1, NBCX_SUM, NULL, &err);
    CHECK(err == NBCX_ERR_ALGORITHM, "bcast: %s", nbcx_error_string(err));
    const char *d = nbcx_error_detail(err);
    CHECK(strstr(d, "NBCX_TUNING=") && strstr(d, what),
          "bcast: nbcx_error_detail lacks \"%s\": %s", what, d);
    double x = 1, y = 0;
    nbcx_request req;
    err = nbcx_iallreduce(&x, &y, 1, NBCX_DOUBLE, NBCX_SUM, comms[0], &req);
    CHECK(err == NBCX_ERR_ALGORITHM, "iallreduce: %s",
          nbcx_error_string(err));
    d = nbcx_error_detail(err);
    CHECK(strstr(d, "NBCX_TUNING=") && strstr(d, what),
          "iallreduce: nbcx_error_detail lacks \"%s\": %s", what, d);
    struct other_call o = { 0 };
    pthread_t t;
    if (CHECK(pthread_create(&t, NULL, call_elsewhere, &o) == 0,
              "pthread_create")) {
        pthread_join(t, NULL);
        CHECK(o.err == NBCX_ERR_ALGORITHM, "other thread: %s",
              nbcx_error_string(o.err));
        CHECK(strstr(o.detail, "NBCX_TUNING=") && strstr(o.detail, what),
              "other thread: nbcx_error_detail lacks \"%s\": %s", what,
              o.detail);
    }
    loopback_world_destroy(P, comms);
    char *said = capture_end();
    CHECK(said && strstr(said, "NBCX_TUNING=") && strstr(said, what),
          "stderr lacks \"%s\": %s", what, said ? said : "(null)");
    free(said);
}

/* A world of n ranks whose nodes are blocks of rpn consecutive ranks
 * (rpn 0: a transport that does not know the nodes). */
static void world_nodes(int n, int rpn)
{
    int nodes[BIG];
    for (int r = 0; r < n; r++)
        nodes[r] = rpn ? r / rpn * rpn : 0;
    struct loopback_options opt = { .nodes = rpn ? nodes : NULL };
    REQUIRE_OK(loopback_world_create_ex(n, &opt, comms));
}

static void test_rpn(void)
{
    /* 5 fields and 6 in one file: the 5-field rule is any rpn */
    write_table("# nbcx-tune/2 (test)\n"
                "allreduce 4 1   *    ring 0\n"
                "allreduce 4 2-3 *    rabenseifner 0\n"
                "allreduce 4 4-* 0-15 reduce_bcast 0\n"
                "allreduce 4     *    recursive_doubling 0\n"
                "allreduce 16 16 0-8  reduce_bcast 0\n");
    static const struct { int rpn; const char *alg; } cases[] = {
        { 1, "ring" }, { 2, "rabenseifner" }, { 4, "reduce_bcast" },
        { 0, "recursive_doubling" } };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        world_nodes(P, cases[i].rpn);
        expect_alg(NBCXI_ALLREDUCE, 2, NBCX_SUM, cases[i].alg, 0);
        loopback_world_destroy(P, comms);
    }
    /* 3 ranks on one node: no rule for 3 ranks, and the built-in table
     * serves fewer than 16 ranks only on more than one node: the
     * thresholds (on nodes of 2 the built-in table's rules for 3-5 ranks
     * would apply: builtin) */
    world_nodes(3, 3);
    expect_alg(NBCXI_ALLREDUCE, 1 << 18, NBCX_SUM, "ring", 0);
    loopback_world_destroy(3, comms);
    /* NBCX_TUNING's rules come before the built-in table's */
    world_nodes(BIG, 16);
    expect_alg(NBCXI_ALLREDUCE, 2, NBCX_SUM, "reduce_bcast", 0);
    loopback_world_destroy(BIG, comms);
    /* 4 ranks on nodes of 4, 64 bytes: past the 4-* rule's bytes */
    world_nodes(P, 4);
    expect_alg(NBCXI_ALLREDUCE, 16, NBCX_SUM, "recursive_doubling", 0);
    loopback_world_destroy(P, comms);
    unlink(path);
}

/* The built-in table, as the library has it. */
static const char *const builtin_rules[] = {
#include "coll/tuning_builtin.inc"
    NULL
};

/* Every rule of the built-in table whose ranks hold n and whose low
 * ranks per node r divides n, below n (more than one node; at 16 ranks
 * also n itself), at the low end of its bytes on a world of n ranks in
 * nodes of r: gives the rule's algorithm. Returns the rules checked. */
static int check_rules(int n)
{
    int checked = 0;
    for (int i = 0; builtin_rules[i]; i++) {
        char coll[64], ranks[32], rpn[32], bytes[64], alg[64];
        unsigned long long seg;
        if (!CHECK(sscanf(builtin_rules[i], "%63s %31s %31s %63s %63s %llu",
                          coll, ranks, rpn, bytes, alg, &seg) == 6,
                   "built-in rule %d: %s", i, builtin_rules[i]))
            return checked;
        int rlo = atoi(rpn);
        unsigned long blo = strtoul(bytes, NULL, 10);
        char *dash = strchr(ranks, '-');
        int plo = atoi(ranks), phi = dash ? atoi(dash + 1) : plo;
        if (n < plo || n > phi || rlo > n || n % rlo || (n < BIG && rlo == n))
            continue;
        int c = nbcxi_coll_by_name(coll);
        /* int32 elements: bcast and the reductions count the buffer,
         * the others a block (message_bytes; reduce_scatter: the
         * average block of its vector) */
        int count = (int)((blo + 3) / 4);
        if (c < 0 || count > MAXC / BIG ||
            (c != NBCXI_BCAST && c != NBCXI_REDUCE && c != NBCXI_ALLREDUCE &&
             c != NBCXI_SCAN && c != NBCXI_BARRIER && c != NBCXI_GATHER &&
             c != NBCXI_SCATTER && c != NBCXI_ALLGATHER &&
             c != NBCXI_REDUCE_SCATTER))
            continue;
        if (c == NBCXI_BARRIER)
            count = 0;
        world_nodes(n, rlo);
        size_t segsize = 0;
        int err = 0;
        const char *got = chosen(c, count, NBCX_SUM, &segsize, &err);
        CHECK(!err && got && strcmp(got, alg) == 0,
              "rule \"%s\": %s x%d on %d ranks, %d per node: got %s",
              builtin_rules[i], coll, count, n, rlo, got ? got : "(none)");
        loopback_world_destroy(n, comms);
        checked++;
    }
    return checked;
}

static void test_builtin(void)
{
    unsetenv("NBCX_TUNING");
    unsetenv("NBCX_TUNING_BUILTIN");
    world_nodes(P, 2);
    char info[2048];
    REQUIRE_OK(nbcx_info(info, sizeof info));
    int n = 0;
    const char *at = strstr(info, "tuning_builtin=");
    CHECK(at && sscanf(at, "tuning_builtin=%d", &n) == 1 && n > 100,
          "nbcx_info: no built-in table of more than 100 rules: %s", info);
    loopback_world_destroy(P, comms);
    /* below 16 ranks on one node, or where the nodes are unknown: the
     * thresholds of select.c, where the table's rules for 5-9 ranks on
     * nodes of 3 and more (made for more than one node) would give
     * hier, hier and knomial4 */
    enum { FEW = 8 };
    static const struct { enum nbcxi_coll c; int count; const char *alg; }
        few[] = { { NBCXI_ALLREDUCE, 2, "recursive_doubling" },
                  { NBCXI_BARRIER, 0, "knomial6" },
                  { NBCXI_BCAST, 2, "knomial6" } };
    for (int rpn = 0; rpn <= FEW; rpn += FEW) {
        world_nodes(FEW, rpn);
        for (size_t i = 0; i < sizeof few / sizeof *few; i++)
            expect_alg(few[i].c, few[i].count, NBCX_SUM, few[i].alg, 0);
        loopback_world_destroy(FEW, comms);
    }
    /* every rule for 16 ranks (first in their collective's list: the
     * generator writes the grid's first rank count first), and every
     * rule for 4 ranks on more than one node (4 nodes of 1, 2 of 2) */
    int checked = check_rules(BIG);
    CHECK(checked >= 20, "only %d built-in rules for 16 ranks checked",
          checked);
    checked = check_rules(P);
    CHECK(checked >= 20, "only %d built-in rules for 4 ranks checked",
          checked);
}

static void test_missing(void)
{
    setenv("NBCX_TUNING", "/nonexistent/tuning.txt", 1);
    expect_refused("No such file");
}

static void test_bad_line(void)
{
    write_table("# fine\nbcast * * binomial 0\n\nbcast * * fastest 0\n");
    char want[128];
    snprintf(want, sizeof want, "%s:4: unknown algorithm \"fastest\" for "
             "bcast (have: binomial ", path);
    expect_refused(want);
    unlink(path);
}

static void test_bad_coll(void)
{
    write_table("bcast * * binomial 0\nbroadcast * * binomial 0\n");
    expect_refused(":2: unknown collective \"broadcast\" (have: barrier "
                   "bcast ");
    unlink(path);
}

/* A malformed field: named with its text, on stderr and in
 * nbcx_error_detail (nbcxi_tuning_load straight: nbcx reads NBCX_TUNING
 * once, and a file that fails leaves no table behind). */
static void test_bad_field(void)
{
    static const char *const lines[][2] = {
        { "bcast 4-x * binomial 0", "bad ranks range \"4-x\"" },
        { "bcast 4 0-1k binomial 0", "bad bytes range \"0-1k\"" },
        { "bcast 4 8-x * binomial 0", "bad ranks-per-node range \"8-x\"" },
        { "bcast 4 * binomial 64k", "bad segsize \"64k\"" },
        { "bcast 4 * binomial", "4 fields, expected 5 or 6" },
        { "split bcast 4 * 200", "bad split levels S \"200\"" },
        { "bcast 4 * binomial 0 0 0", "more than 6 fields (\"0\" is the "
                                      "7th)" },
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        char text[64], want[128];
        snprintf(text, sizeof text, "# a comment\n%s\n", lines[i][0]);
        write_table(text);
        snprintf(want, sizeof want, "%s:2: %s", path, lines[i][1]);
        if (!CHECK(capture_begin(), "cannot capture stderr"))
            return;
        int err = nbcxi_tuning_load(path);
        char *said = capture_end();
        CHECK(err == NBCX_ERR_ALGORITHM, "%s: %s", lines[i][0],
              nbcx_error_string(err));
        CHECK(strstr(nbcx_error_detail(err), want),
              "%s: nbcx_error_detail lacks \"%s\": %s", lines[i][0], want,
              nbcx_error_detail(err));
        CHECK(said && strstr(said, want), "%s: stderr lacks \"%s\": %s",
              lines[i][0], want, said ? said : "(null)");
        free(said);
        unlink(path);
    }
}

/* The S split mode marks on rank 0's schedule of coll (binomial, or the
 * table's algorithm), count int32 elements: the highest level of a node
 * it gives the application. */
static int split_levels(enum nbcxi_coll coll, int count, const char **alg)
{
    static int32_t buf[2][MAXC];
    struct nbcx_sched_s *s = NULL;
    CHECK_OK(nbcxi_sched_new(nbcxi_comm(comms[0]), &s));
    if (!s)
        return -1;
    struct nbcx_datatype_s *t = nbcxi_type(NBCX_INT32);
    struct nbcxi_coll_args a = {
        .sbuf = buf[0], .rbuf = buf[1], .scount = count, .rcount = count,
        .stype = t, .rtype = t, .op = nbcxi_op(NBCX_SUM), .root = 0,
    };
    CHECK_OK(nbcxi_coll_build(coll, s, &a,
                              nbcxi_split_mode.algorithm((int)coll)));
    *alg = s->build.alg_name;
    nbcxi_split_mark(s);
    int top = 0;
    for (int i = 0; i < s->build.nnodes; i++) {
        int lv = s->build.nodes[i].level < 0 ? -s->build.nodes[i].level
                                       : s->build.nodes[i].level;
        if (s->build.nodes[i].app && lv > top)
            top = lv;
    }
    nbcxi_sched_destroy(s);
    return top;
}

static void test_split(void)
{
    write_table("# nbcx-tune --split (test)\n"
                "split bcast  4   0-1023  2\n"
                "split bcast  4   1024-*  0\n"
                "split reduce 2-8 *       1\n"
                "bcast        *   *       chain 0   # split mode: binomial\n");
    world();
    unsetenv("NBCX_SPLIT_LEVELS");
    const char *alg = NULL;
    /* 4 ranks: a tree of 2 levels */
    CHECK_INT(split_levels(NBCXI_BCAST, 2, &alg), 2);
    CHECK(strcmp(alg, "binomial") == 0, "%s", alg);
    CHECK_INT(split_levels(NBCXI_BCAST, 1024, &alg), 0);
    CHECK_INT(split_levels(NBCXI_REDUCE, 1 << 16, &alg), 1);
    /* forced S wins over the table */
    setenv("NBCX_SPLIT_LEVELS", "1", 1);
    CHECK_INT(split_levels(NBCXI_BCAST, 2, &alg), 1);
    unsetenv("NBCX_SPLIT_LEVELS");
    /* no split rule for gather: the model's S */
    int app = 0, prog = 0;
    nbcxi_placement_cores(&app, &prog);
    int model = nbcx_split_model(P, app > 0 ? app : 1, prog > 0 ? prog : 0,
                                 2.0, -1, NULL, NULL, NULL);
    CHECK_INT(split_levels(NBCXI_GATHER, 2, &alg), model);
    /* split rules are not algorithm rules: bcast still gets chain
     * outside split mode */
    expect_alg(NBCXI_BCAST, 2, NBCX_SUM, "chain", 0);
    loopback_world_destroy(P, comms);
    unlink(path);
}

/* Every collective's list, and every cut of it: whole names, a prefix
 * of the whole list, never a byte past the buffer (a guard after it). */
static void test_names(void)
{
    char all[512];
    nbcxi_coll_names(-1, all, sizeof all);
    CHECK(strncmp(all, "barrier bcast ", 14) == 0, "collectives: %s", all);
    for (int c = -1; c < NBCXI_NCOLL; c++) {
        char full[512];
        nbcxi_coll_names(c, full, sizeof full);
        if (c >= 0) {
            const char *api = NULL;
            CHECK(nbcx_algorithm_names(nbcxi_coll_name(c), &api) ==
                             NBCX_SUCCESS &&
                         strcmp(api, full) == 0,
                     "%s: nbcx_algorithm_names gives \"%s\", the list "
                     "\"%s\"", nbcxi_coll_name(c), api ? api : "", full);
        }
        size_t n = strlen(full);
        CHECK(n > 0 && n < sizeof full - 1, "collective %d: \"%s\"", c,
                 full);
        for (size_t len = 1; len <= n + 1; len++) {
            char buf[520];
            memset(buf, 'G', sizeof buf);
            nbcxi_coll_names(c, buf, len);
            size_t got = strlen(buf);
            CHECK(got < len && buf[len] == 'G',
                     "collective %d, %zu bytes: overran", c, len);
            CHECK(strncmp(buf, full, got) == 0 &&
                         (got == 0 || full[got] == ' ' || full[got] == '\0'),
                     "collective %d, %zu bytes: \"%s\" is not whole "
                     "names of \"%s\"", c, len, buf, full);
            if (len == n + 1)
                CHECK(strcmp(buf, full) == 0, "collective %d: cut at "
                         "exactly its length", c);
        }
    }
}

static const struct th_test tests[] = {
    { "names", test_names },
    { "choose", test_choose },
    { "split", test_split },
    { "rpn", test_rpn },
    { "builtin", test_builtin },
    { "results", test_results },
    { "missing", test_missing },
    { "bad_line", test_bad_line },
    { "bad_coll", test_bad_coll },
    { "bad_field", test_bad_field },
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests, TH_COUNT(tests));
}
