/*
 * test_mode.c - the default progress mode waits for a transport
 * (progress/modes.c): it depends on the transports' capabilities, so a
 * report before any communicator exists (nbcx_info, nbcx_progress_get)
 * decides nothing and starts no thread. The loopback transport is not
 * safe for a progress thread (no NBCXI_CAP_PROGRESS_THREAD): once its
 * world exists the mode in force is caller, with no thread, even when
 * nbcx_info asked first. (Before the fix, nbcx_info fixed auto mode and
 * started its thread, which then drove the loopback's lock-free queues.)
 *
 * Run with NBCX_PROGRESS unset (ctest: unit.mode.*); a program that
 * chooses a mode is not under test, and the test says so and passes.
 *
 *   info_first   nbcx_info and nbcx_progress_get, then a loopback world
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "loopback.h"
#include "progress/progress.h"

enum { P = 3, N = 1000 };

static void test_info_first(void)
{
    if (getenv("NBCX_PROGRESS") && *getenv("NBCX_PROGRESS")) {
        printf("NBCX_PROGRESS is set: the default is not under test\n");
        return;
    }
    char info[1024];
    nbcx_progress_mode m = NBCX_PROGRESS_CALLER;
    CHECK_OK(nbcx_info(info, sizeof info));
    CHECK(strstr(info, " progress=auto") != NULL, "before any "
          "communicator: %s", info);
    CHECK_OK(nbcx_progress_get(&m));
    CHECK_INT(m, NBCX_PROGRESS_AUTO);
    CHECK(!nbcxi_thread_live(), "nbcx_info started the progress thread "
          "before any transport existed");

    nbcx_comm c[P];
    REQUIRE_OK(loopback_world_create(P, c));
    CHECK_OK(nbcx_progress_get(&m));
    CHECK_INT(m, NBCX_PROGRESS_CALLER);
    CHECK_OK(nbcx_info(info, sizeof info));
    CHECK(strstr(info, " progress=caller") != NULL, "on the loopback "
          "transport: %s", info);

    /* and operations run with no thread: the caller drives them */
    static int32_t buf[P][N];
    nbcx_request req[P];
    for (int r = 0; r < P; r++) {
        for (int i = 0; i < N; i++)
            buf[r][i] = r == 1 ? i * 7 + 1 : -1;
        CHECK_OK(nbcx_ibcast(buf[r], N, NBCX_INT32, 1, c[r], &req[r]));
    }
    CHECK(!nbcxi_thread_live(), "a start began the progress thread on a "
          "transport not safe for one");
    CHECK_OK(loopback_waitall(c[0], P, req));
    for (int r = 0; r < P; r++)
        for (int i = 0; i < N; i++)
            if (!CHECK(buf[r][i] == i * 7 + 1, "rank %d element %d: %d", r,
                       i, buf[r][i]))
                break;
    CHECK(!nbcxi_thread_live(), "the progress thread runs after a caller "
          "mode operation");
    loopback_world_destroy(P, c);
}

static const struct th_test tests[] = {
    { "info_first", test_info_first },
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests, TH_COUNT(tests));
}
