/*
 * harness.h - a tiny assertion harness for the unit tests (no framework).
 *
 * A test program is a table of named test functions:
 *
 *     static const struct th_test tests[] = {
 *         { "empty_schedule", test_empty_schedule },
 *         ...
 *     };
 *     int main(int argc, char **argv)
 *     { return th_main(argc, argv, tests, TH_COUNT(tests)); }
 *
 * Without arguments every test runs; otherwise only those named on the
 * command line (so CTest can register each one separately). CHECK-style
 * macros count checks and failures and print the location, the failed
 * expression and a formatted explanation; a test function keeps going
 * after a failed check unless it chooses to return. The exit status is
 * nonzero if any check failed.
 */
#ifndef NBCX_TEST_HARNESS_H
#define NBCX_TEST_HARNESS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nbcx.h"

struct th_test {
    const char *name;
    void (*fn)(void);
};

#define TH_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static long th_checks, th_failures;
static const char *th_context; /* printed with every failure, if set */

/* Caps the output of a test that fails the same way thousands of times. */
enum { TH_MAX_REPORTS = 60 };

static void th_vfail(const char *file, int line, const char *expr,
                     const char *fmt, va_list ap)
{
    if (++th_failures > TH_MAX_REPORTS) {
        if (th_failures == TH_MAX_REPORTS + 1)
            fprintf(stderr, "(further failures are counted, not shown)\n");
        return;
    }
    fprintf(stderr, "%s:%d: FAILED %s", file, line, expr);
    if (th_context)
        fprintf(stderr, "\n    in %s", th_context);
    if (fmt && *fmt) {
        fprintf(stderr, "\n    ");
        vfprintf(stderr, fmt, ap);
    }
    fputc('\n', stderr);
}

static void th_fail(const char *file, int line, const char *expr,
                    const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    th_vfail(file, line, expr, fmt, ap);
    va_end(ap);
}

/* Counts a check; reports it if it failed. Returns ok. */
static int th_check(int ok, const char *file, int line, const char *expr,
                    const char *fmt, ...)
{
    th_checks++;
    if (!ok) {
        va_list ap;
        va_start(ap, fmt);
        th_vfail(file, line, expr, fmt, ap);
        va_end(ap);
    }
    return ok;
}

/* CHECK(cond, "printf format", ...): the value is cond (as 0 or 1), so a
 * test can react to a failure. Always give a format (strict ISO C wants
 * an argument for the "..."); "" is fine. */
#define CHECK(cond, ...)                                                      \
    th_check((cond) ? 1 : 0, __FILE__, __LINE__, #cond, "" __VA_ARGS__)

/* Two ints (or return codes) equal; prints both, with error strings. */
#define CHECK_INT(actual, expected)                                           \
    do {                                                                      \
        long a_ = (long)(actual), e_ = (long)(expected);                      \
        th_checks++;                                                          \
        if (a_ != e_)                                                         \
            th_fail(__FILE__, __LINE__, #actual " == " #expected,             \
                    "got %ld, expected %ld", a_, e_);                         \
    } while (0)

#define CHECK_RC(call, expected)                                              \
    do {                                                                      \
        int a_ = (call), e_ = (expected);                                     \
        th_checks++;                                                          \
        if (a_ != e_)                                                         \
            th_fail(__FILE__, __LINE__, #call,                                \
                    "returned %d (%s), expected %d (%s)", a_,                 \
                    nbcx_error_string(a_), e_, nbcx_error_string(e_));        \
    } while (0)

#define CHECK_OK(call) CHECK_RC(call, NBCX_SUCCESS)

/* REJECT(code, call): a call with bad arguments is rejected before
 * anything is posted: it returns code and sets the request it was given
 * (a variable `nbcx_request req` of the caller, passed as &req) to
 * NBCX_REQUEST_NULL. Two checks. */
#define REJECT(code, call)                                                    \
    do {                                                                      \
        req = (nbcx_request)(uintptr_t)0x1;                                   \
        CHECK_RC(call, code);                                                 \
        CHECK(req == NBCX_REQUEST_NULL, "*req not reset by a rejected call"); \
    } while (0)

/* For set-up steps a test cannot go on without. */
#define REQUIRE_OK(call)                                                      \
    do {                                                                      \
        int a_ = (call);                                                      \
        th_checks++;                                                          \
        if (a_ != NBCX_SUCCESS) {                                             \
            th_fail(__FILE__, __LINE__, #call, "returned %d (%s)", a_,        \
                    nbcx_error_string(a_));                                   \
            return;                                                           \
        }                                                                     \
    } while (0)

static double th_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Counts one test case (a combination of parameters) for the summary. */
static long th_cases;

static int th_main(int argc, char **argv, const struct th_test *tests,
                   int ntests)
{
    int ran = 0;
    double t0 = th_now();
    for (int i = 0; i < ntests; i++) {
        bool wanted = argc <= 1;
        for (int a = 1; a < argc; a++)
            if (strcmp(argv[a], tests[i].name) == 0)
                wanted = true;
        if (!wanted)
            continue;
        long f0 = th_failures, c0 = th_checks, k0 = th_cases;
        double t1 = th_now();
        th_context = NULL;
        tests[i].fn();
        th_context = NULL;
        printf("%-6s %-28s %9ld checks %7ld cases %7.2f s\n",
               th_failures > f0 ? "FAIL" : "ok", tests[i].name,
               th_checks - c0, th_cases - k0, th_now() - t1);
        fflush(stdout);
        ran++;
    }
    for (int a = 1; a < argc; a++) {
        bool known = false;
        for (int i = 0; i < ntests; i++)
            known = known || strcmp(argv[a], tests[i].name) == 0;
        if (!known) {
            fprintf(stderr, "unknown test '%s'; tests are:", argv[a]);
            for (int i = 0; i < ntests; i++)
                fprintf(stderr, " %s", tests[i].name);
            fputc('\n', stderr);
            return 2;
        }
    }
    printf("%d tests, %ld checks, %ld cases, %ld failed checks, %.2f s\n",
           ran, th_checks, th_cases, th_failures, th_now() - t0);
    return th_failures ? 1 : 0;
}

#endif /* NBCX_TEST_HARNESS_H */
