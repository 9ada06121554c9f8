/*
 * test_look.c - auto mode's watch of lazy work (progress/progress_thread.c,
 * request.c, mode_auto.c): the progress thread leaves a lazy operation whose
 * duration the measured bandwidth predicts to the application for four
 * times that, and finishes it by itself after that, for a program that
 * blocks elsewhere.
 *
 * Two loopback ranks. The bandwidth is set by one pace sample, so that a
 * 48 KiB broadcast is predicted to take PREDICT_MS: it is lazy (under
 * NBCX_AUTO_THREAD_BYTES), and its look gap is four times that. The root
 * starts it; its send completes once the other rank starts too, and only
 * a progress pass on the root's request can then see that.
 *
 *   gap       no application calls at all: the request is not complete
 *             at a quarter of the gap (the thread's watch, once a
 *             millisecond, would have completed it), and completes by
 *             itself within a few seconds after it
 *   small     1 KiB: nothing predicted, the watch looks at once (within
 *             its millisecond) and the operation completes by itself
 *   carried   a transport that carries 64 KiB by itself (ops->carries_max):
 *             a 64 KiB broadcast, predicted to take far longer than
 *             auto mode leaves to the application, is lazy on the ranks
 *             whose start posted every send (the root, a leaf), not on a
 *             rank that forwards what it receives (the middle of a
 *             chain), nor over a transport that carries less or nothing
 *   medium    nothing measured yet (a process's first operation): a
 *             4 MiB broadcast over a transport through memory is lazy
 *             exactly when the progress thread has no core to spare
 *             (the copies are the application's work either way), over
 *             a network, or a transport that does not know, the
 *             thread's; with memory's bandwidth measured, the unknown
 *             one is judged as memory. Run twice by ctest: as it comes,
 *             and bound to one core with the thread on it
 *             (NBCX_TEST_NO_SPARE_CORE=1 asserts that no core was spare,
 *             so that the lazy branch is taken)
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "loopback.h"
#include "progress/progress.h"

enum { N = 48 * 1024, SMALL = 1024, PREDICT_MS = 100,
       GAP_MS = 4 * PREDICT_MS };

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec t = { .tv_sec = ms / 1000,
                          .tv_nsec = (long)(ms % 1000) * 1000000 };
    nanosleep(&t, NULL);
}

static char buf[2][N];

/* Auto mode, p loopback ranks (opt NULL: the default transport) and a
 * running progress thread, with a bandwidth that predicts N bytes to take
 * PREDICT_MS. */
static bool start_world(int p, const struct loopback_options *opt,
                        nbcx_comm c[])
{
    int err = nbcx_progress_set(NBCX_PROGRESS_AUTO);
    if (!CHECK(err == NBCX_SUCCESS, "nbcx_progress_set: %s",
               nbcx_error_string(err)))
        return false;
    if (!CHECK(loopback_world_create_ex(p, opt, c) == NBCX_SUCCESS,
               "loopback_world_create failed"))
        return false;
    nbcx_request b[3];
    for (int r = 0; r < p; r++) /* starts the progress thread */
        CHECK_OK(nbcx_ibarrier(c[r], &b[r]));
    CHECK_OK(nbcx_waitall(p, b));
    /* Auto mode does not wait for the thread to be placed (place_lazily):
     * the tests below read what its placement decided (a spare core) and
     * count on its looks, so they begin once it runs. */
    for (int ms = 0; ms < 10000 && !nbcxi_thread_live(); ms++)
        nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
    if (!CHECK(nbcxi_thread_live(), "the progress thread never ran"))
        return false;
    pthread_mutex_lock(&nbcxi_engine_lock);
    nbcxi_pace_reset();
    nbcxi_pace_sample(N, 1, (int64_t)PREDICT_MS * 1000000,
                      1 + (int64_t)PREDICT_MS * 1000000);
    pthread_mutex_unlock(&nbcxi_engine_lock);
    return true;
}

/* Sets up two ranks (start_world) and starts the broadcast on both (the
 * root first); *req is the root's. */
static bool setup(nbcx_comm c[2], nbcx_request *req, nbcx_request *other,
                  int64_t *t0, int n)
{
    if (!start_world(2, NULL, c))
        return false;
    for (int i = 0; i < n; i++) {
        buf[0][i] = (char)(i * 7 + 1);
        buf[1][i] = 0;
    }
    *t0 = now_ms();
    CHECK_OK(nbcx_ibcast(buf[0], n, NBCX_BYTE, 0, c[0], req));
    pthread_mutex_lock(&nbcxi_engine_lock);
    /* A start made while the progress thread held the lock was handed
     * over to it (request.c), and is not begun, nor marked lazy, until the
     * thread adopts it: adopt it here, as the thread would. */
    nbcxi_engine_adopt_locked();
    bool lazy = (*req)->lazy, gap = (*req)->look_gap > 0;
    pthread_mutex_unlock(&nbcxi_engine_lock);
    CHECK_OK(nbcx_ibcast(buf[1], n, NBCX_BYTE, 0, c[1], other));
    CHECK(lazy && gap == (n >= 32768),
          "%d bytes: lazy %d, look gap %d", n, lazy, gap);
    return lazy && gap == (n >= 32768);
}

static void check_data(int n)
{
    CHECK(memcmp(buf[0], buf[1], (size_t)n) == 0, "rank 1 got other data");
}

static void test_gap(void)
{
    nbcx_comm c[2];
    nbcx_request req, other;
    int64_t t0;
    if (!setup(c, &req, &other, &t0, N))
        return;
    sleep_ms(GAP_MS / 4);
    /* Only a check of the flag: no progress pass of ours. */
    bool early = nbcxi_request_done(req);
    int64_t checked = now_ms() - t0;
    CHECK(early == false || checked >= GAP_MS,
          "the watch finished the operation after %lld ms, before its "
          "gap of %d ms", (long long)checked, GAP_MS);
    int64_t limit = t0 + GAP_MS + 10000;
    while (!nbcxi_request_done(req) && now_ms() < limit)
        sleep_ms(5);
    int64_t took = now_ms() - t0;
    CHECK(nbcxi_request_done(req),
          "the watch never finished the operation (%lld ms)",
          (long long)took);
    CHECK(took >= GAP_MS - 20, "finished after %lld ms, gap %d ms",
          (long long)took, GAP_MS);
    CHECK_OK(nbcx_wait(&req));
    CHECK_OK(nbcx_wait(&other));
    check_data(N);
    loopback_world_destroy(2, c);
}

/* Under 32 KiB nothing is predicted: every watch looks, so a program
 * that blocks elsewhere sees the operation finish within a few ms. */
static void test_small(void)
{
    nbcx_comm c[2];
    nbcx_request req, other;
    int64_t t0;
    if (!setup(c, &req, &other, &t0, SMALL))
        return;
    int64_t limit = t0 + 10000;
    while (!nbcxi_request_done(req) && now_ms() < limit)
        sleep_ms(1);
    CHECK(nbcxi_request_done(req), "the watch never finished the operation");
    CHECK_OK(nbcx_wait(&req));
    CHECK_OK(nbcx_wait(&other));
    check_data(SMALL);
    loopback_world_destroy(2, c);
}

/* A 64 KiB broadcast on p ranks whose transport carries lazy_max bytes,
 * the ranks started from the last to the first; lazy[r]: whether rank
 * r's was left to the application. Checks the data every rank received. */
static void carried_bcast(int p, size_t lazy_max, bool lazy[])
{
    enum { M = 64 * 1024 };
    static char data[3][M];
    /* Random delivery: nothing completes within its start (an operation
     * done there is never marked lazy) */
    struct loopback_options opt = { .lazy_max = lazy_max, .seed = 11,
                                    .mode = LOOPBACK_RANDOM };
    nbcx_comm c[3];
    if (!start_world(p, &opt, c)) /* 64 KiB predicted to take 133 ms */
        return;
    nbcx_request req[3];
    for (int i = 0; i < M; i++) {
        data[0][i] = (char)(i * 5 + 3);
        data[1][i] = data[2][i] = 0;
    }
    for (int r = p - 1; r >= 0; r--) {
        CHECK_OK(nbcx_ibcast(data[r], M, NBCX_BYTE, 0, c[r], &req[r]));
        pthread_mutex_lock(&nbcxi_engine_lock);
        nbcxi_engine_adopt_locked(); /* (see setup) */
        lazy[r] = req[r] != NBCX_REQUEST_NULL && req[r]->lazy;
        pthread_mutex_unlock(&nbcxi_engine_lock);
    }
    CHECK_OK(nbcx_waitall(p, req));
    for (int r = 1; r < p; r++)
        CHECK(memcmp(data[0], data[r], M) == 0, "rank %d got other data", r);
    loopback_world_destroy(p, c);
}

static void test_carried(void)
{
    bool lazy[3];
    /* nothing carried: the thread's, on both ranks */
    carried_bcast(2, 0, lazy);
    CHECK(!lazy[0] && !lazy[1], "lazy_max 0: lazy %d %d", lazy[0], lazy[1]);
    /* carried: the application's */
    carried_bcast(2, 64 * 1024, lazy);
    CHECK(lazy[0] && lazy[1], "lazy_max 64 KiB: lazy %d %d", lazy[0],
          lazy[1]);
    /* carried only up to 32 KiB: the thread's */
    carried_bcast(2, 32 * 1024, lazy);
    CHECK(!lazy[0] && !lazy[1], "lazy_max 32 KiB: lazy %d %d", lazy[0],
          lazy[1]);
    /* a chain: rank 1 forwards what it has not received yet */
    CHECK_OK(nbcx_algorithm_set("bcast", "chain"));
    carried_bcast(3, 64 * 1024, lazy);
    CHECK_OK(nbcx_algorithm_set("bcast", "auto"));
    CHECK(lazy[0] && !lazy[1] && lazy[2], "chain: lazy %d %d %d", lazy[0],
          lazy[1], lazy[2]);
}

/* A 4 MiB broadcast on 2 loopback ranks whose transport says medium;
 * with nothing measured, or, measured, memory's bandwidth (4 GB/s: the
 * broadcast is predicted to take 1 ms, too long to be left to the
 * application for its length alone, mode_auto.c's LAZY_NS).
 * lazy[r]: whether auto mode left rank r's to the application. */
static void medium_bcast(int medium, bool measured, bool lazy[2])
{
    enum { M = 4 << 20 };
    static char data[2][M];
    struct loopback_options opt = { .seed = 5, .mode = LOOPBACK_RANDOM,
                                    .medium = medium };
    nbcx_comm c[2];
    if (!start_world(2, &opt, c))
        return;
    pthread_mutex_lock(&nbcxi_engine_lock);
    nbcxi_pace_reset(); /* a process's first operation */
    if (measured) /* M bytes in 1 ms */
        nbcxi_pace_sample(M, 1, 1000000, 1000001);
    pthread_mutex_unlock(&nbcxi_engine_lock);
    nbcx_request req[2];
    for (int i = 0; i < M; i++) {
        data[0][i] = (char)(i * 7 + 1);
        data[1][i] = 0;
    }
    for (int r = 1; r >= 0; r--) {
        CHECK_OK(nbcx_ibcast(data[r], M, NBCX_BYTE, 0, c[r], &req[r]));
        pthread_mutex_lock(&nbcxi_engine_lock);
        nbcxi_engine_adopt_locked(); /* (see setup) */
        lazy[r] = req[r] != NBCX_REQUEST_NULL && req[r]->lazy;
        pthread_mutex_unlock(&nbcxi_engine_lock);
    }
    CHECK_OK(nbcx_waitall(2, req));
    CHECK(memcmp(data[0], data[1], M) == 0, "rank 1 got other data");
    loopback_world_destroy(2, c);
}

static void test_medium(void)
{
    bool lazy[2];
    medium_bcast(NBCXI_MEDIUM_NETWORK, false, lazy);
    bool spare = nbcxi_placement_spare_core(); /* (the thread is placed) */
    const char *want = getenv("NBCX_TEST_NO_SPARE_CORE");
    if (want && *want == '1')
        CHECK(!spare, "NBCX_TEST_NO_SPARE_CORE=1, but the progress thread "
                      "has a spare core");
    CHECK(!lazy[0] && !lazy[1], "network: lazy %d %d", lazy[0], lazy[1]);
    medium_bcast(NBCXI_MEDIUM_MEMORY, false, lazy);
    CHECK(lazy[0] == !spare && lazy[1] == !spare,
          "memory, nothing measured, %s spare core: lazy %d %d",
          spare ? "a" : "no", lazy[0], lazy[1]);
    medium_bcast(NBCXI_MEDIUM_UNKNOWN, false, lazy);
    CHECK(!lazy[0] && !lazy[1], "not known, nothing measured: lazy %d %d",
          lazy[0], lazy[1]);
    medium_bcast(NBCXI_MEDIUM_UNKNOWN, true, lazy);
    CHECK(lazy[0] == !spare && lazy[1] == !spare,
          "not known, memory's bandwidth measured, %s spare core: "
          "lazy %d %d", spare ? "a" : "no", lazy[0], lazy[1]);
    medium_bcast(NBCXI_MEDIUM_NETWORK, true, lazy);
    CHECK(!lazy[0] && !lazy[1], "network, memory's bandwidth measured: "
          "lazy %d %d", lazy[0], lazy[1]);
}

static const struct th_test tests[] = {
    { "gap", test_gap },
    { "small", test_small },
    { "carried", test_carried },
    { "medium", test_medium },
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests, TH_COUNT(tests));
}
