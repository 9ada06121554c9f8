/*
 * test_look.c - auto mode's watch of lazy work (progress/thread.c,
 * engine.c, auto.c): the progress thread leaves a lazy operation whose
 * duration the measured bandwidth predicts to the application for four
 * times that, and finishes it by itself after that, for a program that
 * blocks elsewhere.
 *
 * Two loopback ranks. The bandwidth is set by one pace sample, so that a
 * 48 KiB broadcast is predicted to take PREDICT_MS: it is lazy (under
 * NBCX_AUTO_THREAD_BYTES). The root starts it; its send completes once
 * the other rank starts too, and only a progress pass on the root's
 * request can then see that.
 *
 *   gap       the bandwidth counts as memory's (NBCX_AUTO_COPY_BW=1, one
 *             byte per second): the look gap is four times the predicted
 *             duration. No application calls at all: the request is not
 *             complete at a quarter of the gap (the thread's watch, once
 *             a millisecond, would have completed it), and completes by
 *             itself within a few seconds after it
 *   network   the same bandwidth counts as a network's (under the
 *             default 2 GiB/s): no look gap, the watch looks at once
 *             (within its millisecond) and the operation completes by
 *             itself well before PREDICT_MS
 *   small     1 KiB: nothing predicted, the watch looks at once and the
 *             operation completes by itself
 *   messages  a network's bandwidth by which 64 KiB take 1 ms: an
 *             exchange of two 32 KiB messages each way is lazy (under
 *             NBCX_AUTO_THREAD_BYTES each, sent eagerly), one of a single
 *             64 KiB message is not (rendezvous: the thread answers it)
 */
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

/* Sets up auto mode, two ranks and a running progress thread; starts the
 * broadcast on both ranks (the root first); *req is the root's. */
static bool setup(nbcx_comm c[2], nbcx_request *req, nbcx_request *other,
                  int64_t *t0, int n, bool want_gap)
{
    int err = nbcx_progress_set(NBCX_PROGRESS_AUTO);
    if (err != NBCX_SUCCESS) {
        CHECK(0, "nbcx_progress_set: %s", nbcx_error_string(err));
        return false;
    }
    if (loopback_world_create(2, c) != NBCX_SUCCESS) {
        CHECK(0, "loopback_world_create failed");
        return false;
    }
    nbcx_request b[2];
    for (int r = 0; r < 2; r++) /* starts the progress thread */
        CHECK_OK(nbcx_ibarrier(c[r], &b[r]));
    CHECK_OK(nbcx_waitall(2, b));
    pthread_mutex_lock(&nbcxi_engine_lock);
    nbcxi_pace_reset();
    nbcxi_pace_sample(N, 1, (int64_t)PREDICT_MS * 1000000,
                      1 + (int64_t)PREDICT_MS * 1000000);
    pthread_mutex_unlock(&nbcxi_engine_lock);
    for (int i = 0; i < n; i++) {
        buf[0][i] = (char)(i * 7 + 1);
        buf[1][i] = 0;
    }
    *t0 = now_ms();
    CHECK_OK(nbcx_ibcast(buf[0], n, NBCX_BYTE, 0, c[0], req));
    pthread_mutex_lock(&nbcxi_engine_lock);
    /* A start made while the progress thread held the lock was handed
     * over to it (engine.c), and is not begun, nor marked lazy, until the
     * thread adopts it: adopt it here, as the thread would. */
    nbcxi_engine_adopt_locked();
    bool lazy = (*req)->lazy, gap = (*req)->look_gap > 0;
    pthread_mutex_unlock(&nbcxi_engine_lock);
    CHECK_OK(nbcx_ibcast(buf[1], n, NBCX_BYTE, 0, c[1], other));
    CHECK(lazy && gap == want_gap, "%d bytes: lazy %d, look gap %d", n,
          lazy, gap);
    return lazy && gap == want_gap;
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
    setenv("NBCX_AUTO_COPY_BW", "1", 1); /* read at the first start */
    if (!setup(c, &req, &other, &t0, N, true))
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

/* Every watch looks: a program that blocks elsewhere sees the operation
 * finish within a few ms, by `within_ms`. */
static void looked_at_once(int n, int within_ms)
{
    nbcx_comm c[2];
    nbcx_request req, other;
    int64_t t0;
    if (!setup(c, &req, &other, &t0, n, false))
        return;
    int64_t limit = t0 + 10000;
    while (!nbcxi_request_done(req) && now_ms() < limit)
        sleep_ms(1);
    int64_t took = now_ms() - t0;
    CHECK(nbcxi_request_done(req), "the watch never finished the operation");
    CHECK(took < within_ms, "finished after %lld ms, not within %d ms",
          (long long)took, within_ms);
    CHECK_OK(nbcx_wait(&req));
    CHECK_OK(nbcx_wait(&other));
    check_data(n);
    loopback_world_destroy(2, c);
}

/* A network's bandwidth: no gap, well before the predicted duration. */
static void test_network(void)
{
    looked_at_once(N, PREDICT_MS);
}

/* Under 32 KiB nothing is predicted. */
static void test_small(void)
{
    looked_at_once(SMALL, 10000);
}

/* An exchange of `parts` messages each way between ranks 0 and 1,
 * 64 KiB in all, built with the public schedule API; whether auto mode
 * made rank 0's lazy. */
static bool exchange_lazy(nbcx_comm c[2], int parts)
{
    static char out[2][65536], in[2][65536];
    nbcx_request req[2];
    bool lazy = false;
    for (int r = 0; r < 2; r++) {
        nbcx_sched s;
        CHECK_OK(nbcx_sched_create(c[r], &s));
        int n = 65536 / parts;
        for (int k = 0; k < parts; k++) {
            CHECK_OK(nbcx_sched_recv(s, in[r] + k * n, n, NBCX_BYTE, 1 - r,
                                     k, NULL));
            CHECK_OK(nbcx_sched_send(s, out[r] + k * n, n, NBCX_BYTE, 1 - r,
                                     k, NULL));
        }
        CHECK_OK(nbcx_sched_start(&s, &req[r]));
        pthread_mutex_lock(&nbcxi_engine_lock);
        nbcxi_engine_adopt_locked(); /* as in setup */
        if (r == 0)
            lazy = req[0]->lazy;
        pthread_mutex_unlock(&nbcxi_engine_lock);
    }
    CHECK_OK(nbcx_waitall(2, req));
    return lazy;
}

static void test_messages(void)
{
    nbcx_comm c[2];
    CHECK_OK(nbcx_progress_set(NBCX_PROGRESS_AUTO));
    REQUIRE_OK(loopback_world_create(2, c));
    nbcx_request b[2];
    for (int r = 0; r < 2; r++) /* starts the progress thread */
        CHECK_OK(nbcx_ibarrier(c[r], &b[r]));
    CHECK_OK(nbcx_waitall(2, b));
    pthread_mutex_lock(&nbcxi_engine_lock);
    nbcxi_pace_reset();
    nbcxi_pace_sample(65536, 1, 1000000, 1000001); /* 0.066 GB/s */
    pthread_mutex_unlock(&nbcxi_engine_lock);
    CHECK(exchange_lazy(c, 2), "two 32 KiB messages: not lazy");
    CHECK(!exchange_lazy(c, 1), "one 64 KiB message: lazy");
    loopback_world_destroy(2, c);
}

static const struct th_test tests[] = {
    { "gap", test_gap },
    { "messages", test_messages },
    { "network", test_network },
    { "small", test_small },
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests, TH_COUNT(tests));
}
