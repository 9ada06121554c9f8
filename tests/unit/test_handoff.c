/*
 * test_handoff.c - a start never waits for the engine lock where a
 * progress thread runs (progress/request.c): with the lock held by
 * another thread, starts hand their operations to the progress thread
 * and return at once; once the lock is free, every operation completes
 * with the right data, in thread and in auto mode.
 *
 * The test thread takes the lock itself, as the progress thread's pass
 * would. A start that waited for the lock would then deadlock: an alarm
 * turns that into a failure with a message instead of a hang.
 *
 *   thread, auto   the mode under test
 */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "loopback.h"
#include "progress/progress.h"

enum { P = 5, N = 301, ROUNDS = 20, ALARM_S = 60 };

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: a start waited for the engine lock "
                              "(or a handed-over operation never began)\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

static void run(nbcx_progress_mode mode)
{
    nbcx_progress_mode saved = NBCX_PROGRESS_CALLER;
    CHECK_OK(nbcx_progress_get(&saved));
    int err = nbcx_progress_set(mode);
    if (err != NBCX_SUCCESS) {
        CHECK(0, "nbcx_progress_set: %s", nbcx_error_string(err));
        return;
    }
    nbcx_comm c[P];
    REQUIRE_OK(loopback_world_create(P, c));
    /* A first operation starts the progress thread; in auto mode it does
     * not wait for the thread to be placed (place_lazily), so the thread
     * may come up after it: starts hand over once it runs. */
    nbcx_request req[2 * P];
    for (int r = 0; r < P; r++)
        CHECK_OK(nbcx_ibarrier(c[r], &req[r]));
    CHECK_OK(nbcx_waitall(P, req));
    for (int ms = 0; ms < 10000 && !nbcxi_thread_live(); ms++)
        nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
    if (!nbcxi_thread_live()) {
        CHECK(0, "the progress thread never ran");
        loopback_world_destroy(P, c);
        return;
    }

    static int32_t bc[P][N], as[P][N], ar[P][N];
    signal(SIGALRM, on_alarm);
    for (int round = 0; round < ROUNDS; round++) {
        th_cases++;
        const int root = round % P;
        for (int r = 0; r < P; r++)
            for (int i = 0; i < N; i++) {
                bc[r][i] = r == root ? round * 100000 + i : -1;
                as[r][i] = r * 1000 + i + round;
                ar[r][i] = -1;
            }
        alarm(ALARM_S);
        pthread_mutex_lock(&nbcxi_engine_lock);
        for (int r = 0; r < P; r++) {
            CHECK_OK(nbcx_ibcast(bc[r], N, NBCX_INT32, root, c[r], &req[r]));
            CHECK_OK(nbcx_iallreduce(as[r], ar[r], N, NBCX_INT32, NBCX_SUM,
                                     c[r], &req[P + r]));
        }
        /* Handed over, not begun: outstanding, and none complete. */
        CHECK(nbcxi_engine_busy_locked(), "round %d: nothing outstanding",
              round);
        for (int k = 0; k < 2 * P; k++)
            CHECK(!nbcxi_request_done(req[k]),
                  "round %d: request %d complete before its start ran",
                  round, k);
        pthread_mutex_unlock(&nbcxi_engine_lock);
        CHECK_OK(nbcx_waitall(2 * P, req));
        alarm(0);
        int bad = 0;
        for (int r = 0; r < P; r++)
            for (int i = 0; i < N; i++) {
                int32_t sum = 0;
                for (int q = 0; q < P; q++)
                    sum += q * 1000 + i + round;
                bad += bc[r][i] != round * 100000 + i;
                bad += ar[r][i] != sum;
            }
        CHECK(bad == 0, "round %d: %d wrong elements", round, bad);
    }
    pthread_mutex_lock(&nbcxi_engine_lock);
    CHECK(!nbcxi_engine_busy_locked(), "operations left behind");
    pthread_mutex_unlock(&nbcxi_engine_lock);
    loopback_world_destroy(P, c);
    CHECK_OK(nbcx_progress_set(saved));
}

static void test_thread(void)
{
    run(NBCX_PROGRESS_THREAD);
}

static void test_auto(void)
{
    run(NBCX_PROGRESS_AUTO);
}

static const struct th_test tests[] = {
    { "thread", test_thread },
    { "auto", test_auto },
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests, TH_COUNT(tests));
}
