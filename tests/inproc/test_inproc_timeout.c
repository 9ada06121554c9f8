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
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "nbcx.h"

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

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "";
    /* Read once, at the first start: set before anything starts. */
    if (!strcmp(which, "dump"))
        setenv("NBCX_DEBUG_DUMP", "1", 1);
    else
        unsetenv("NBCX_DEBUG_DUMP");
    unsetenv("NBCX_TIMEOUT");
    double t0 = now_s();
    if (!strcmp(which, "never"))
        test_never();
    else if (!strcmp(which, "dump"))
        test_dump();
    else {
        fprintf(stderr, "usage: %s never|dump\n", argv[0]);
        return 2;
    }
    const char *mode = getenv("NBCX_PROGRESS");
    printf("test_inproc_timeout %s (progress=%s): %d failure(s), %.2f s\n",
           which, mode ? mode : "(default)", atomic_load(&failures),
           now_s() - t0);
    return atomic_load(&failures) ? 1 : 0;
}
