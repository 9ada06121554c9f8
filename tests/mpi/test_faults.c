/*
 * test_faults.c - long runs and misuse that once gave wrong results or
 * aborted the job (issue 12), run with a small tag space:
 * NBCX_TAG_BITS=14 leaves 4 tag slots per communicator, 2 for persistent
 * requests and 2 for nonblocking operations, so that the sequence numbers
 * wrap after a few operations instead of 2^15.
 *
 *   1. A persistent request planned long before (its sequence number
 *      wrapped many times since) and a nonblocking collective, started in
 *      opposite orders on alternate ranks, many rounds: each must get its
 *      own result (both used to complete with the other's).
 *   2. Exhaustion, nonblocking: all ranks but the last start two
 *      allreduces (the two slots) and a third one, which cannot have a
 *      slot while the first is in flight (the last rank has not started
 *      it): NBCX_ERR_EXHAUSTED; the communicator is then broken (the next
 *      start fails the same way), the two first complete with the right
 *      result, and the communicator can be freed.
 *   3. Persistent slots: given in init order, released by
 *      nbcx_request_free and taken again; an init whose slot a live
 *      request holds fails alike on every rank, and breaks the
 *      communicator as in 2.
 *   4. Truncation (ranks disagree on a count): the receiver gets
 *      NBCX_ERR_TRUNCATE, not NBCX_ERR_TRANSPORT, and the job is not
 *      aborted although MPI_COMM_WORLD keeps MPI_ERRORS_ARE_FATAL (MPICH
 *      raises request errors on MPI_COMM_WORLD); a handler the program
 *      put on MPI_COMM_WORLD still sees the program's own errors.
 *   5. A reduction too large for any rank (INT_MAX 16-byte elements) is
 *      refused with NBCX_ERR_NOMEM on every rank, not on the root alone.
 *   6. Stale handles: a copy of a communicator, user operation, MPI
 *      datatype or request handle used after it was freed (completed) is
 *      refused with NBCX_ERR_COMM / OP / TYPE / REQUEST and a detail that
 *      says it was freed; in the sanitizer builds, AddressSanitizer checks
 *      that no freed memory is read on the way.
 *   8. The full tag space on a communicator made by MPI_Comm_split (Open
 *      MPI does not give MPI_TAG_UB to such communicators; nbcx took the
 *      MPI minimum, 8 slots): without NBCX_TAG_BITS, 16 allreduces in
 *      flight on all ranks but the last (which joins later) must start.
 *   7. Each misuse of a request has its own message
 *      (nbcx_error_detail): NULL pointer, freed, not persistent, active
 *      (start, free), listed twice.
 */
#include <limits.h>
#include <stdbool.h>

#include "mpitest.h"

#define ROUNDS 40

static nbcx_comm comm;

/* Checks that every rank returned the same code (the decisions meant to
 * be the same everywhere). */
static void expect_same_everywhere(const char *what, int rc)
{
    int lo = 0, hi = 0;
    MT_MPI(MPI_Allreduce(&rc, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    MT_MPI(MPI_Allreduce(&rc, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (lo != hi)
        mt_fail("%s: ranks disagree (codes %d to %d)", what, lo, hi);
}

/* The sum over ranks of (rank + 1) * scale + i, element i. */
static int expected_sum(int scale, int i)
{
    return scale * mt_size * (mt_size + 1) / 2 + mt_size * i;
}

static void fill(int *v, int n, int scale)
{
    for (int i = 0; i < n; i++)
        v[i] = (mt_rank + 1) * scale + i;
}

static void check_sum(const char *what, int round, const int *v, int n,
                      int scale)
{
    for (int i = 0; i < n; i++)
        if (v[i] != expected_sum(scale, i)) {
            mt_fail("%s, round %d: element %d is %d, expected %d", what,
                    round, i, v[i], expected_sum(scale, i));
            return;
        }
}

/* 1. */
static void test_persistent_meets_wrap(void)
{
    enum { N = 64 };
    int pin[N], pout[N], nin[N], nout[N], xin[N], xout[N];
    nbcx_request p, reqs[3];
    mt_watch("1: persistent request and wrapped nonblocking ones");
    MT_OK(nbcx_allreduce_init(pin, pout, N, NBCX_INT32, NBCX_SUM, comm, &p));
    for (int round = 0; round < ROUNDS; round++) {
        /* Different contents each round and for each operation: a
         * result that went to the wrong operation shows. */
        fill(pin, N, 1000 + round);
        fill(nin, N, 7 + round);
        fill(xin, N, 3 + 2 * round);
        memset(pout, 0, sizeof pout);
        memset(nout, 0, sizeof nout);
        /* Alternate ranks: persistent first or last. */
        bool persistent_first = (mt_rank + round) % 2 == 0;
        if (persistent_first)
            MT_OK(nbcx_start(&p));
        MT_OK(nbcx_iallreduce(nin, nout, N, NBCX_INT32, NBCX_SUM, comm,
                              &reqs[1]));
        if (!persistent_first)
            MT_OK(nbcx_start(&p));
        /* Every third round, a second nonblocking one in flight (both
         * nonblocking slots), which also varies the sequence numbers
         * the first one gets, so that it meets every slot. */
        bool second = round % 3 == 0;
        reqs[2] = NBCX_REQUEST_NULL;
        if (second)
            MT_OK(nbcx_iallreduce(xin, xout, N, NBCX_INT32, NBCX_SUM, comm,
                                  &reqs[2]));
        reqs[0] = p;
        MT_OK(nbcx_waitall(3, reqs));
        p = reqs[0];
        check_sum("persistent allreduce", round, pout, N, 1000 + round);
        check_sum("nonblocking allreduce", round, nout, N, 7 + round);
        if (second)
            check_sum("second nonblocking allreduce", round, xout, N,
                      3 + 2 * round);
        if (p == NBCX_REQUEST_NULL) {
            mt_fail("the persistent request was released by waitall");
            return;
        }
    }
    MT_OK(nbcx_request_free(&p));
    mt_unwatch();
}

/* 2. */
static void test_nonblocking_exhaustion(void)
{
    if (mt_size < 2)
        return; /* one rank completes everything at once */
    enum { N = 8 };
    int in[2][N], out[2][N], extra_in[N], extra_out[N];
    nbcx_comm c;
    nbcx_request reqs[2], extra = NBCX_REQUEST_NULL;
    bool last = mt_rank == mt_size - 1;
    mt_watch("2: nonblocking exhaustion");
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &c));
    for (int k = 0; k < 2; k++)
        fill(in[k], N, 11 + k);
    fill(extra_in, N, 99);
    if (last) /* joins only once the others have tried the third */
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int k = 0; k < 2; k++)
        MT_OK(nbcx_iallreduce(in[k], out[k], N, NBCX_INT32, NBCX_SUM, c,
                              &reqs[k]));
    if (!last) {
        int rc = nbcx_iallreduce(extra_in, extra_out, N, NBCX_INT32,
                                 NBCX_SUM, c, &extra);
        if (rc != NBCX_ERR_EXHAUSTED || extra != NBCX_REQUEST_NULL)
            mt_fail("third start with two slots in flight: %d (%s), "
                    "expected NBCX_ERR_EXHAUSTED and no request", rc,
                    nbcx_error_string(rc));
        rc = nbcx_ibarrier(c, &extra);
        if (rc != NBCX_ERR_EXHAUSTED)
            mt_fail("start on a communicator broken by exhaustion: %d "
                    "(%s), expected NBCX_ERR_EXHAUSTED", rc,
                    nbcx_error_string(rc));
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    MT_OK(nbcx_waitall(2, reqs));
    for (int k = 0; k < 2; k++)
        check_sum("allreduce beside exhaustion", k, out[k], N, 11 + k);
    MT_OK(nbcx_comm_free(&c));
    mt_unwatch();
}

/* 3. Slots are given in init order (the same everywhere) and freed by
 * nbcx_request_free: with 2 persistent slots, P0 slot 0, P1 slot 1; P0
 * freed; P2 takes slot 0 again; P3 would need slot 1, still P1's. */
static void test_persistent_exhaustion(void)
{
    int a = mt_rank, b = 0, x = 0;
    nbcx_comm c;
    nbcx_request p[4] = { NBCX_REQUEST_NULL, NBCX_REQUEST_NULL,
                          NBCX_REQUEST_NULL, NBCX_REQUEST_NULL };
    mt_watch("3: persistent exhaustion");
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &c));
    MT_OK(nbcx_barrier_init(c, &p[0]));
    MT_OK(nbcx_allreduce_init(&a, &b, 1, NBCX_INT32, NBCX_SUM, c, &p[1]));
    MT_OK(nbcx_request_free(&p[0]));
    MT_OK(nbcx_bcast_init(&x, 1, NBCX_INT32, 0, c, &p[2]));
    for (int round = 0; round < 3; round++) {
        x = mt_rank == 0 ? 77 + round : -1;
        b = -1;
        MT_OK(nbcx_startall(2, &p[1]));
        MT_OK(nbcx_waitall(2, &p[1]));
        if (b != mt_size * (mt_size - 1) / 2 || x != 77 + round)
            mt_fail("persistent allreduce and bcast, round %d: %d and %d, "
                    "expected %d and %d", round, b, x,
                    mt_size * (mt_size - 1) / 2, 77 + round);
    }
    int rc = nbcx_bcast_init(&a, 1, NBCX_INT32, 0, c, &p[3]);
    if (rc != NBCX_ERR_EXHAUSTED || p[3] != NBCX_REQUEST_NULL)
        mt_fail("persistent init on the slot of a live request: %d (%s), "
                "expected NBCX_ERR_EXHAUSTED", rc, nbcx_error_string(rc));
    expect_same_everywhere("persistent exhaustion", rc);
    /* Broken: the live requests no longer start; they can be freed. */
    rc = nbcx_startall(2, &p[1]);
    if (rc != NBCX_ERR_EXHAUSTED)
        mt_fail("start on a broken communicator: %d (%s), expected "
                "NBCX_ERR_EXHAUSTED", rc, nbcx_error_string(rc));
    for (int k = 1; k < 3; k++)
        MT_OK(nbcx_request_free(&p[k]));
    MT_OK(nbcx_comm_free(&c));
    mt_unwatch();
}

/* 4. */
static int user_handler_calls;

static void user_handler(MPI_Comm *c, int *code, ...)
{
    (void)c;
    (void)code;
    user_handler_calls++;
}

static void test_truncation(void)
{
    if (mt_size < 2)
        return;
    enum { N = 16 };
    int buf[N];
    MPI_Comm pair;
    nbcx_comm c;
    nbcx_request req;
    mt_watch("4: truncation");
    /* Ranks 0 and 1 alone: the receiver gets the message straight from
     * the root (no forwarding that a failed rank would never do). */
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, mt_rank < 2 ? 0 : MPI_UNDEFINED,
                          mt_rank, &pair));
    if (pair != MPI_COMM_NULL) {
        MT_OK(nbcx_comm_from_mpi(pair, &c));
        for (int i = 0; i < N; i++)
            buf[i] = i;
        int count = mt_rank == 0 ? N : N / 2; /* the root sends more */
        MT_OK(nbcx_ibcast(buf, count, NBCX_INT32, 0, c, &req));
        int rc = nbcx_wait(&req);
        if (mt_rank == 1 && rc != NBCX_ERR_TRUNCATE)
            mt_fail("truncated receive completed with %d (%s), expected "
                    "NBCX_ERR_TRUNCATE", rc, nbcx_error_string(rc));
        if (mt_rank == 0 && rc != NBCX_SUCCESS)
            mt_fail("root of the truncated bcast: %d (%s)", rc,
                    nbcx_error_string(rc));
        MT_OK(nbcx_comm_free(&c));
        MT_MPI(MPI_Comm_free(&pair));
    }
    if (user_handler_calls != 0)
        mt_fail("nbcx's truncation reached the program's handler on "
                "MPI_COMM_WORLD (%d calls)", user_handler_calls);
    /* The program's own error on MPI_COMM_WORLD still goes to its
     * handler. */
    int x = 0, rc = MPI_Send(&x, 1, MPI_INT, mt_size + 5, 0, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS || user_handler_calls != 1)
        mt_fail("a send to rank %d on MPI_COMM_WORLD: rc %d, handler "
                "called %d times (expected an error and 1 call)",
                mt_size + 5, rc, user_handler_calls);
    mt_unwatch();
}

/* 5. */
static void test_huge_reduction(void)
{
    nbcx_double_int one = { 1.0, 0 }, res;
    nbcx_request req = NBCX_REQUEST_NULL;
    mt_watch("5: reduction of INT_MAX 16-byte elements");
    /* Refused before the buffers are touched: one element is enough. */
    int rc = nbcx_ireduce(&one, &res, INT_MAX, NBCX_DOUBLE_INT, NBCX_MAXLOC,
                          0, comm, &req);
    if (rc == NBCX_SUCCESS) {
        fprintf(stderr, "[rank %d] a reduction of %.0f GiB was accepted: "
                        "cannot continue\n", mt_rank,
                (double)INT_MAX * 16 / (1 << 30));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rc != NBCX_ERR_NOMEM || req != NBCX_REQUEST_NULL)
        mt_fail("huge reduce: %d (%s), expected NBCX_ERR_NOMEM", rc,
                nbcx_error_string(rc));
    expect_same_everywhere("huge reduce", rc);
    rc = nbcx_iallreduce(&one, &res, INT_MAX, NBCX_DOUBLE_INT, NBCX_MAXLOC,
                         comm, &req);
    if (rc != NBCX_ERR_NOMEM)
        mt_fail("huge allreduce: %d (%s), expected NBCX_ERR_NOMEM", rc,
                nbcx_error_string(rc));
    expect_same_everywhere("huge allreduce", rc);
    /* Nothing was posted: the communicator still works. */
    int a = 1, b = 0;
    MT_OK(nbcx_iallreduce(&a, &b, 1, NBCX_INT32, NBCX_SUM, comm, &req));
    MT_OK(nbcx_wait(&req));
    if (b != mt_size)
        mt_fail("allreduce after the huge ones: %d, expected %d", b, mt_size);
    mt_unwatch();
}

/* 6. */
static void user_sum(const void *in, void *inout, int count,
                     nbcx_datatype type, void *ctx)
{
    (void)type;
    (void)ctx;
    for (int i = 0; i < count; i++)
        ((int *)inout)[i] += ((const int *)in)[i];
}

/* rc must be `code` and its detail must contain `word`. */
static const char *expect_detail(const char *what, int rc, int code,
                                 const char *word)
{
    const char *d = nbcx_error_detail(rc);
    if (rc != code)
        mt_fail("%s: %d (%s), expected %d (%s)", what, rc,
                nbcx_error_string(rc), code, nbcx_error_string(code));
    else if (!d || !strstr(d, word))
        mt_fail("%s: detail \"%s\" does not say \"%s\"", what,
                d ? d : "(null)", word);
    return d;
}

static void test_stale_handles(void)
{
    int a = 1, b = 0;
    nbcx_comm c, c_copy;
    nbcx_op op, op_copy;
    nbcx_datatype t, t_copy;
    nbcx_request req, req_copy;
    mt_watch("6: stale handles");
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &c));
    c_copy = c;
    MT_OK(nbcx_comm_free(&c));
    expect_detail("ibarrier on a freed communicator",
                  nbcx_ibarrier(c_copy, &req), NBCX_ERR_COMM, "freed");
    expect_detail("nbcx_comm_free twice", nbcx_comm_free(&c_copy),
                  NBCX_ERR_COMM, "freed");

    MT_OK(nbcx_op_create(user_sum, 1, NULL, &op));
    op_copy = op;
    MT_OK(nbcx_op_free(&op));
    expect_detail("allreduce with a freed operation",
                  nbcx_iallreduce(&a, &b, 1, NBCX_INT32, op_copy, comm, &req),
                  NBCX_ERR_OP, "freed");

    MPI_Datatype pair; /* derived: MPI_INT alone maps to NBCX_INT32 */
    int two[2] = { 0, 0 };
    MT_MPI(MPI_Type_contiguous(2, MPI_INT, &pair));
    MT_MPI(MPI_Type_commit(&pair));
    MT_OK(nbcx_datatype_from_mpi(pair, &t));
    t_copy = t;
    MT_OK(nbcx_datatype_free(&t));
    MT_MPI(MPI_Type_free(&pair));
    int rc = nbcx_ibcast(two, 1, t_copy, 0, comm, &req);
    expect_detail("bcast with a freed datatype", rc, NBCX_ERR_TYPE, "freed");
    if (rc == NBCX_SUCCESS)
        MT_OK(nbcx_wait(&req));

    MT_OK(nbcx_iallreduce(&a, &b, 1, NBCX_INT32, NBCX_SUM, comm, &req));
    req_copy = req;
    MT_OK(nbcx_wait(&req));
    if (b != mt_size)
        mt_fail("allreduce: %d, expected %d", b, mt_size);
    expect_detail("wait on a completed request's copy", nbcx_wait(&req_copy),
                  NBCX_ERR_REQUEST, "already completed");
    int flag = 0;
    expect_detail("test on a completed request's copy",
                  nbcx_test(&req_copy, &flag), NBCX_ERR_REQUEST,
                  "already completed");
    mt_unwatch();
}

/* 7. */
static void test_request_messages(void)
{
    int a = 1, b = 0;
    nbcx_request req, p, twice[2];
    const char *d[6];
    char copy[6][256];
    mt_watch("7: request misuse messages");
    d[0] = expect_detail("start of a NULL pointer", nbcx_start(NULL),
                         NBCX_ERR_REQUEST, "NULL request pointer");
    snprintf(copy[0], sizeof copy[0], "%s", d[0]);
    MT_OK(nbcx_iallreduce(&a, &b, 1, NBCX_INT32, NBCX_SUM, comm, &req));
    d[1] = expect_detail("start of a nonblocking request", nbcx_start(&req),
                         NBCX_ERR_REQUEST, "not persistent");
    snprintf(copy[1], sizeof copy[1], "%s", d[1]);
    MT_OK(nbcx_wait(&req));
    MT_OK(nbcx_allreduce_init(&a, &b, 1, NBCX_INT32, NBCX_SUM, comm, &p));
    MT_OK(nbcx_start(&p));
    d[2] = expect_detail("start of an active request", nbcx_start(&p),
                         NBCX_ERR_REQUEST, "already active");
    snprintf(copy[2], sizeof copy[2], "%s", d[2]);
    d[3] = expect_detail("free of an active request", nbcx_request_free(&p),
                         NBCX_ERR_REQUEST, "is active");
    snprintf(copy[3], sizeof copy[3], "%s", d[3]);
    MT_OK(nbcx_wait(&p));
    twice[0] = twice[1] = p;
    d[4] = expect_detail("startall with a request twice",
                         nbcx_startall(2, twice), NBCX_ERR_REQUEST,
                         "listed twice");
    snprintf(copy[4], sizeof copy[4], "%s", d[4]);
    nbcx_request stale = p;
    MT_OK(nbcx_request_free(&p));
    d[5] = expect_detail("start of a freed request", nbcx_start(&stale),
                         NBCX_ERR_REQUEST, "already completed");
    snprintf(copy[5], sizeof copy[5], "%s", d[5]);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(copy[i], copy[j]))
                mt_fail("misuses %d and %d have the same message: %s", j, i,
                        copy[i]);
    mt_unwatch();
}

/* 8. */
static void test_split_tag_space(void)
{
    if (mt_size < 2)
        return;
    enum { K = 16 };
    int in[K], out[K];
    nbcx_request reqs[K];
    MPI_Comm split;
    nbcx_comm c;
    bool last = mt_rank == mt_size - 1;
    mt_watch("8: tag space of a split communicator");
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, mt_rank, &split));
    char *bits = getenv("NBCX_TAG_BITS");
    char saved[16];
    snprintf(saved, sizeof saved, "%s", bits ? bits : "");
    unsetenv("NBCX_TAG_BITS");
    MT_OK(nbcx_comm_from_mpi(split, &c));
    setenv("NBCX_TAG_BITS", saved, 1);
    if (last)
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int k = 0; k < K; k++) {
        in[k] = k + mt_rank;
        MT_OK(nbcx_iallreduce(&in[k], &out[k], 1, NBCX_INT32, NBCX_SUM, c,
                              &reqs[k]));
    }
    if (!last)
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_OK(nbcx_waitall(K, reqs));
    for (int k = 0; k < K; k++)
        if (out[k] != k * mt_size + mt_size * (mt_size - 1) / 2)
            mt_fail("split communicator, allreduce %d: %d", k, out[k]);
    MT_OK(nbcx_comm_free(&c));
    MT_MPI(MPI_Comm_free(&split));
    mt_unwatch();
}

int main(int argc, char **argv)
{
    /* MPI_COMM_WORLD gets a handler of the program's, which returns (not
     * MPI_ERRORS_RETURN: MPICH raises request errors there, and the test
     * must see whether nbcx's reach it), before nbcx sees MPI. */
    mt_world_handler = user_handler;
    mt_init(&argc, &argv);
    double t0 = MPI_Wtime();
    const char *bits = getenv("NBCX_TAG_BITS");
    if (!bits || atoi(bits) != 14) {
        if (mt_rank == 0)
            fprintf(stderr, "run with NBCX_TAG_BITS=14 (4 tag slots)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
    test_persistent_meets_wrap();
    test_nonblocking_exhaustion();
    test_persistent_exhaustion();
    test_truncation();
    test_huge_reduction();
    test_stale_handles();
    test_request_messages();
    test_split_tag_space();
    MT_OK(nbcx_comm_free(&comm));
    return mt_finish("test_faults", t0);
}
