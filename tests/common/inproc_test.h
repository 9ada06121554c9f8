/*
 * inproc_test.h - what the in-process tests (tests/inproc: ranks are
 * threads, nbcx_inproc_run) share: the world sizes their per-size tests
 * run on, completing a request by wait or by a test loop, and the
 * checks of the environment CTest sets.
 */
#ifndef NBCX_TEST_INPROC_TEST_H
#define NBCX_TEST_INPROC_TEST_H

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbcx.h"

/* X(P) for every world size P of the <test>_p<P> tests; the _ENTRIES
 * form separates them with commas (test tables). */
#define INPROC_SIZES(X) X(1) X(2) X(3) X(7) X(16) X(64)
#define INPROC_SIZE_ENTRIES(X) X(1), X(2), X(3), X(7), X(16), X(64)

/* Completes a request with wait, or with a test loop (both must work). */
static inline int complete(nbcx_request *req, bool by_test)
{
    if (!by_test)
        return nbcx_wait(req);
    for (;;) {
        int flag = 0, err = nbcx_test(req, &flag);
        if (err != NBCX_SUCCESS || flag)
            return err;
        sched_yield();
    }
}

/* The mode CTest asked for (NBCX_PROGRESS) is the one in effect; the
 * program ends (status 1) if not. */
static inline void check_mode(void)
{
    const char *want = getenv("NBCX_PROGRESS");
    nbcx_progress_mode m;
    if (!want || nbcx_progress_get(&m) != NBCX_SUCCESS)
        return;
    const char *got = m == NBCX_PROGRESS_CALLER   ? "caller"
                      : m == NBCX_PROGRESS_SPLIT ? "split"
                      : m == NBCX_PROGRESS_AUTO  ? "auto"
                                                  : "thread";
    if (strcmp(want, got) != 0) {
        fprintf(stderr, "NBCX_PROGRESS=%s but the mode is %s\n", want, got);
        exit(1);
    }
}

/* NBCX_TEST_QUICK set (and not "0"): sanitizer builds, fewer cases of
 * every kind. */
static inline bool test_quick(void)
{
    const char *q = getenv("NBCX_TEST_QUICK");
    return q && *q && strcmp(q, "0") != 0;
}

#endif /* NBCX_TEST_INPROC_TEST_H */
