/*
 * test_inproc_timeout.c - timeouts and the dump with ranks as threads
 * (nbcx_inproc_run), in the progress mode NBCX_PROGRESS asks for.
 *
 *   never  3 thread ranks; rank 2 returns without joining (its body
 *          succeeds, so nothing tells the others it left). Ranks 0 and 1
 *          set a 0.5 s timeout, start an ibarrier and an iallreduce, and
 *          must see both end with NBCX_ERR_TIMEOUT within the timeout
 *          plus 1 s; then every later start on the communicator
 *          (collective, persistent init, user schedule) fails at once
 *          with NBCX_ERR_TIMEOUT, and the communicator is freed. Run
 *          twice: with the shared-memory slot algorithms (pending POLL
 *          nodes) and with point-to-point ones (pending receives). The
 *          diagnosis must be on stderr once per surviving rank (once per
 *          communicator), naming the collective, its sequence number,
 *          algorithm and pending nodes with peer rank and tag.
 *   dump   NBCX_DEBUG_DUMP=1, no timeout: rank 1 joins a barrier 1.6 s
 *          late and raises SIGUSR1 first; the barrier succeeds on both
 *          ranks, and stderr holds a stall dump and a SIGUSR1 dump.
 *   busy   NBCX_DEBUG_DUMP=signal, 2 thread ranks (issue 35): a dump
 *          while rank 1's thread holds its schedule's progress lock (a
 *          call node that waits until rank 0 has seen the dump) must
 *          name the schedule and say its lock is held, without its
 *          state; then 200 iallreduce rounds with a SIGUSR1 dump made at
 *          once (nbcx_progress) every 10, while rank 1 advances its own:
 *          results right, one dump per SIGUSR1. Under ThreadSanitizer
 *          this catches a dump that reads a schedule without its lock.
 *
 * stderr is captured in a temporary file to check the messages, then
 * copied to the real stderr. Everything is freed (LeakSanitizer checks
 * it in sanitizer builds).
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "nbcx.h"

#define NBCX_TEST_MIN(a, b) ((a) < (b) ? (a) : (b))

static atomic_int failures;

#define FAIL(...)                                                          \
    do {                                                                   \
        char m_[512];                                                      \
        snprintf(m_, sizeof m_, __VA_ARGS__);                              \
        fprintf(stdout, "FAIL: %s\n", m_);                                 \
        fflush(stdout);                                                    \
        atomic_fetch_add(&failures, 1);                                    \
    } while (0)

#define EXPECT(want, call)                                                 \
    do {                                                                   \
        int rc_ = (call);                                                  \
        if (rc_ != (want))                                                 \
            FAIL("%s:%d: %s returned %d (%s), expected %d", __FILE__,       \
                 __LINE__, #call, rc_, nbcx_error_string(rc_), (want));    \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    nanosleep(&ts, NULL);
}

/* ---- stderr capture (capture.h) ---- */

static void capture_start(void)
{
    if (!capture_begin()) {
        fprintf(stdout, "cannot capture stderr\n");
        exit(2);
    }
}

/* ---- never: a rank that never joins ---- */

enum { N = 64, TIMEOUT_MS = 500 };

static int noop(void *arg)
{
    (void)arg;
    return 0;
}

static int never_body(nbcx_comm comm, void *arg)
{
    (void)arg;
    int rank;
    nbcx_comm_rank(comm, &rank);
    if (rank == 2)
        return 0; /* leaves without a word */
    int in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = rank + i;
    double t = 0;
    EXPECT(NBCX_SUCCESS, nbcx_comm_set_timeout(comm, TIMEOUT_MS / 1000.0));
    EXPECT(NBCX_SUCCESS, nbcx_comm_get_timeout(comm, &t));
    if (t != TIMEOUT_MS / 1000.0)
        FAIL("rank %d: nbcx_comm_get_timeout gave %g", rank, t);
    EXPECT(NBCX_ERR_ARG, nbcx_comm_set_timeout(comm, -1));

    nbcx_request reqs[2];
    double t0 = now_s();
    EXPECT(NBCX_SUCCESS, nbcx_ibarrier(comm, &reqs[0]));
    /* (split mode: a start may run the application's share of a tree
     * operation and time out inside it; the second start then fails) */
    int rc1 = nbcx_iallreduce(in, out, N, NBCX_INT32, NBCX_SUM, comm,
                              &reqs[1]);
    if (rc1 != NBCX_SUCCESS && rc1 != NBCX_ERR_TIMEOUT)
        FAIL("rank %d: nbcx_iallreduce returned %d", rank, rc1);
    int rc0 = nbcx_wait(&reqs[0]);
    double took = now_s() - t0;
    if (rc1 == NBCX_SUCCESS)
        rc1 = nbcx_wait(&reqs[1]);
    if (rc0 != NBCX_ERR_TIMEOUT || rc1 != NBCX_ERR_TIMEOUT)
        FAIL("rank %d: waits returned %d and %d, expected NBCX_ERR_TIMEOUT",
             rank, rc0, rc1);
    if (took < TIMEOUT_MS / 1000.0 - 0.05 || took > TIMEOUT_MS / 1000.0 + 1)
        FAIL("rank %d: timed out after %.3f s, timeout %.3f s", rank, took,
             TIMEOUT_MS / 1000.0);

    /* Broken: every later start fails at once. */
    nbcx_request r = NBCX_REQUEST_NULL;
    t0 = now_s();
    EXPECT(NBCX_ERR_TIMEOUT, nbcx_ibarrier(comm, &r));
    EXPECT(NBCX_ERR_TIMEOUT, nbcx_iallreduce(in, out, N, NBCX_INT32,
                                             NBCX_SUM, comm, &r));
    EXPECT(NBCX_ERR_TIMEOUT, nbcx_allreduce_init(in, out, N, NBCX_INT32,
                                                 NBCX_SUM, comm, &r));
    if (r != NBCX_REQUEST_NULL)
        FAIL("rank %d: request not NULL after a failed start", rank);
    nbcx_sched s;
    EXPECT(NBCX_SUCCESS, nbcx_sched_create(comm, &s));
    nbcx_node node;
    EXPECT(NBCX_SUCCESS, nbcx_sched_call(s, noop, NULL, &node));
    EXPECT(NBCX_ERR_TIMEOUT, nbcx_sched_start(&s, &r));
    if (now_s() - t0 > 0.2)
        FAIL("rank %d: starts on a broken communicator took %.3f s", rank,
             now_s() - t0);
    EXPECT(NBCX_SUCCESS, nbcx_comm_free(&comm));
    return 0;
}

static void test_never(void)
{
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: the automatic choice (slots); 1: point-to-point */
        const char *alg = pass ? "recursive_doubling" : "auto";
        EXPECT(NBCX_SUCCESS, nbcx_algorithm_set("allreduce", alg));
        EXPECT(NBCX_SUCCESS, nbcx_algorithm_set("barrier",
                                                pass ? "dissemination"
                                                     : "auto"));
        capture_start();
        int rc = nbcx_inproc_run(3, never_body, NULL);
        char *text = capture_end();
        EXPECT(NBCX_SUCCESS, rc);
        /* Once per communicator: ranks 0 and 1. */
        if (capture_count(text, "nbcx: TIMEOUT: ") != 2)
            FAIL("pass %d: %d diagnoses, expected 2", pass,
                 capture_count(text, "nbcx: TIMEOUT: "));
        if (!strstr(text, "(algorithm ") || !strstr(text, " #") ||
            !strstr(text, "is broken"))
            FAIL("pass %d: the diagnosis lacks operation, sequence "
                 "number, algorithm or state", pass);
        if (pass == 1 && (!strstr(text, "peer rank 2, tag ") ||
                          !strstr(text, "recv from peer rank")))
            FAIL("pass 1: the diagnosis names no pending receive from "
                 "peer rank 2 with its tag");
        if (pass == 0 && !strstr(text, ": poll"))
            FAIL("pass 0: the diagnosis names no pending poll node");
        free(text);
    }
    nbcx_algorithm_set("allreduce", "auto");
    nbcx_algorithm_set("barrier", "auto");
}

/* ---- dump: NBCX_DEBUG_DUMP=1 and SIGUSR1, nothing fails ---- */

static int dump_body(nbcx_comm comm, void *arg)
{
    (void)arg;
    int rank;
    nbcx_comm_rank(comm, &rank);
    nbcx_request r;
    if (rank == 1) {
        sleep_s(0.3);
        raise(SIGUSR1); /* handled: the next progress pass dumps */
        sleep_s(1.3);
    }
    EXPECT(NBCX_SUCCESS, nbcx_ibarrier(comm, &r));
    EXPECT(NBCX_SUCCESS, nbcx_wait(&r));
    return 0;
}

static void test_dump(void)
{
    capture_start();
    int rc = nbcx_inproc_run(2, dump_body, NULL);
    char *text = capture_end();
    EXPECT(NBCX_SUCCESS, rc);
    if (!strstr(text, "nbcx: dump (SIGUSR1)"))
        FAIL("no dump on SIGUSR1");
    if (!strstr(text, "nbcx: dump (NBCX_DEBUG_DUMP"))
        FAIL("no dump of the stalled barrier (NBCX_DEBUG_DUMP=1)");
    if (!strstr(text, "barrier #"))
        FAIL("the dump does not name the barrier");
    if (strstr(text, "TIMEOUT"))
        FAIL("the dump made something fail");
    free(text);
}

/* ---- busy: dumps while other threads hold progress locks ---- */

enum { BUSY_ATTEMPTS = 20, STRESS_ROUNDS = 200, STRESS_DUMP_EVERY = 10 };

static _Thread_local int busy_rank = -1; /* the rank this thread is */
/* release_call: 1 rank 0 saw the dump, 2 it saw none in time (the
 * attempt does not count); held: an attempt counted. */
static atomic_int in_call, release_call, held;
static atomic_int raises; /* SIGUSR1 raised, in all */
static atomic_int sent, r1_done; /* attempt + 1: rank 0 began, rank 1 done */

/* The call node of rank 1's schedule. Run by rank 1's own pass (its
 * wait), it holds the schedule's progress lock until rank 0 has seen a
 * dump, or gave up waiting for one (rank 1 may hold the engine lock
 * too: split mode's service of deferred work); run by another thread's
 * pass (a sweep of rank 0, the progress thread), it returns at once.
 * Either way but the first, the attempt does not count. */
static int hold_call(void *arg)
{
    (void)arg;
    if (busy_rank != 1)
        return NBCX_SUCCESS;
    atomic_store(&in_call, 1);
    double t0 = now_s();
    while (!atomic_load(&release_call) && now_s() - t0 < 30)
        sleep_s(0.001);
    atomic_store(&in_call, 0);
    if (atomic_load(&release_call) == 1)
        atomic_store(&held, 1);
    return NBCX_SUCCESS;
}

/* What was captured so far: how many SIGUSR1 dumps. */
static int dumps_so_far(void)
{
    int fd = capture_file_fd();
    if (fd < 0)
        return 0;
    char buf[1 << 16];
    size_t len = 0;
    ssize_t n;
    while (len < sizeof buf - 1 &&
           (n = pread(fd, buf + len, sizeof buf - 1 - len, (off_t)len)) > 0)
        len += (size_t)n;
    buf[len] = '\0';
    return capture_count(buf, "nbcx: dump (SIGUSR1)");
}

static int busy_body(nbcx_comm comm, void *arg)
{
    (void)arg;
    int rank;
    nbcx_comm_rank(comm, &rank);
    busy_rank = rank;
    /* 1. A dump while rank 1's thread holds its schedule's progress
     * lock (in the call node): the dump must say so, not read it. Rank
     * 1's call must run in its own wait, not in a sweep (which holds the
     * engine lock: no dump then). So rank 1's receive completes only
     * once its start's sweep has gone past its schedule: rank 0's
     * schedule sends when it has received from rank 1, which that same
     * sweep sees (the list is newest first: rank 1's schedule, then rank
     * 0's), and rank 0 makes no call until rank 1's call runs. */
    for (int a = 0; a < BUSY_ATTEMPTS && !atomic_load(&held); a++) {
        int v = a, got = -1, ping = a;
        nbcx_sched s;
        nbcx_request r, bar;
        nbcx_node recv, next;
        EXPECT(NBCX_SUCCESS, nbcx_sched_create(comm, &s));
        if (rank == 0) {
            atomic_store(&release_call, 0);
            EXPECT(NBCX_SUCCESS,
                   nbcx_sched_recv(s, &got, 1, NBCX_INT32, 1, 2, &recv));
            EXPECT(NBCX_SUCCESS,
                   nbcx_sched_send(s, &v, 1, NBCX_INT32, 1, 1, &next));
        } else {
            while (atomic_load(&sent) != a + 1) /* rank 0's is begun */
                sleep_s(0.0002);
            EXPECT(NBCX_SUCCESS,
                   nbcx_sched_send(s, &ping, 1, NBCX_INT32, 0, 2, NULL));
            EXPECT(NBCX_SUCCESS,
                   nbcx_sched_recv(s, &got, 1, NBCX_INT32, 0, 1, &recv));
            EXPECT(NBCX_SUCCESS, nbcx_sched_call(s, hold_call, NULL, &next));
        }
        EXPECT(NBCX_SUCCESS, nbcx_sched_depend(s, recv, next));
        EXPECT(NBCX_SUCCESS, nbcx_sched_start(&s, &r));
        if (rank == 1) {
            EXPECT(NBCX_SUCCESS, nbcx_wait(&r));
            if (got != a)
                FAIL("attempt %d: rank 1 received %d", a, got);
            atomic_store(&r1_done, a + 1);
            EXPECT(NBCX_SUCCESS, nbcx_ibarrier(comm, &bar));
            EXPECT(NBCX_SUCCESS, nbcx_wait(&bar));
            continue;
        }
        EXPECT(NBCX_SUCCESS, nbcx_ibarrier(comm, &bar));
        atomic_store(&sent, a + 1);
        double t0 = now_s();
        while (!atomic_load(&in_call) && atomic_load(&r1_done) != a + 1 &&
               now_s() - t0 < 10)
            sleep_s(0.0002);
        /* Rank 1 joins the barrier once its call returned. */
        int flag = 0, before = 0;
        bool raised = false;
        while (!flag) {
            if (!raised && atomic_load(&in_call)) {
                before = dumps_so_far();
                raise(SIGUSR1); /* the next sweep dumps */
                atomic_fetch_add(&raises, 1);
                raised = true;
                t0 = now_s();
            }
            if (raised && !atomic_load(&release_call)) {
                if (dumps_so_far() > before)
                    atomic_store(&release_call, 1);
                else if (now_s() - t0 > 3)
                    atomic_store(&release_call, 2);
            }
            EXPECT(NBCX_SUCCESS, nbcx_test(&bar, &flag));
            if (!flag)
                sleep_s(0.0002);
        }
        EXPECT(NBCX_SUCCESS, nbcx_wait(&r));
        if (got != a)
            FAIL("attempt %d: rank 0 received %d", a, got);
        if (raised) /* a dump not made yet is made now: one per raise */
            EXPECT(NBCX_SUCCESS, nbcx_progress());
        /* held was set before rank 1 joined the barrier: both ranks
         * read the same value here and leave the loop together. */
    }
    /* 2. Dumps during progress: rank 0 asks for one every few rounds
     * and makes a sweep at once (nbcx_progress), while rank 1's thread
     * advances its allreduce under its own progress lock. */
    for (int i = 0; i < STRESS_ROUNDS; i++) {
        int in[8], out[8];
        for (int k = 0; k < 8; k++)
            in[k] = i + k + rank;
        nbcx_request r;
        EXPECT(NBCX_SUCCESS, nbcx_iallreduce(in, out, 8, NBCX_INT32, NBCX_SUM,
                                             comm, &r));
        if (rank == 0 && i % STRESS_DUMP_EVERY == 0) {
            raise(SIGUSR1);
            atomic_fetch_add(&raises, 1);
            EXPECT(NBCX_SUCCESS, nbcx_progress());
        }
        EXPECT(NBCX_SUCCESS, nbcx_wait(&r));
        for (int k = 0; k < 8; k++)
            if (out[k] != 2 * (i + k) + 1) {
                FAIL("round %d: rank %d has %d at %d, expected %d", i, rank,
                     out[k], k, 2 * (i + k) + 1);
                break;
            }
    }
    return 0;
}

static void test_busy(void)
{
    capture_start();
    int rc = nbcx_inproc_run(2, busy_body, NULL);
    char *text = capture_end();
    EXPECT(NBCX_SUCCESS, rc);
    if (!atomic_load(&held))
        FAIL("in %d attempts, rank 1's own wait never ran its call node",
             BUSY_ATTEMPTS);
    /* The line of rank 1's schedule in the dump made while it held its
     * progress lock. */
    const char *mark = "its progress lock is held by another thread, "
                       "state not shown";
    const char *at = strstr(text, mark);
    if (!at) {
        FAIL("no dump line says an operation's progress lock is held");
    } else {
        const char *line = at;
        while (line > text && line[-1] != '\n')
            line--;
        char one[512];
        size_t n = NBCX_TEST_MIN((size_t)(at - line), sizeof one - 1);
        memcpy(one, line, n);
        one[n] = '\0';
        if (!strstr(one, "nbcx: user schedule #") ||
            !strstr(one, "on rank 1 of 2"))
            FAIL("the held line does not name rank 1's schedule: %.300s", one);
        if (strstr(one, "nodes done"))
            FAIL("the held line shows state read without the lock: %.300s",
                 one);
    }
    int want = atomic_load(&raises);
    int got = capture_count(text, "nbcx: dump (SIGUSR1)");
    if (got != want)
        FAIL("%d SIGUSR1 dumps, expected %d (one per SIGUSR1)", got, want);
    if (strstr(text, "TIMEOUT"))
        FAIL("the dumps made something fail");
    free(text);
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "";
    /* Read once, at the first start: set before anything starts. */
    if (!strcmp(which, "dump"))
        setenv("NBCX_DEBUG_DUMP", "1", 1);
    else if (!strcmp(which, "busy"))
        setenv("NBCX_DEBUG_DUMP", "signal", 1); /* SIGUSR1 only */
    else
        unsetenv("NBCX_DEBUG_DUMP");
    unsetenv("NBCX_TIMEOUT");
    double t0 = now_s();
    if (!strcmp(which, "never"))
        test_never();
    else if (!strcmp(which, "dump"))
        test_dump();
    else if (!strcmp(which, "busy"))
        test_busy();
    else {
        fprintf(stderr, "usage: %s never|dump|busy\n", argv[0]);
        return 2;
    }
    const char *mode = getenv("NBCX_PROGRESS");
    printf("test_inproc_timeout %s (progress=%s): %d failure(s), %.2f s\n",
           which, mode ? mode : "(default)", atomic_load(&failures),
           now_s() - t0);
    return atomic_load(&failures) ? 1 : 0;
}
