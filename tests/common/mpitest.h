/*
 * mpitest.h - the few helpers shared by the MPI tests of nbcx.
 *
 *   - a small deterministic random number generator (splitmix64), so that
 *     every rank can produce its inputs from (case, rank) alone;
 *   - a watchdog: each test step names itself with mt_watch(); if it has
 *     not finished after NBCX_TEST_TIMEOUT seconds (default 120) the
 *     process prints the step and exits, so a hang is reported precisely
 *     instead of being killed silently by CTest (NBCX_TEST_VERBOSE=1
 *     prints every step as it starts);
 *   - failure accounting: mt_fail() prints one line per failure (the
 *     first MT_MAX_REPORTS of them) and mt_finish() sums the failures of
 *     all ranks, so that every rank exits with status 1 when any failed;
 *   - the progress mode: MPI is initialised with MPI_THREAD_MULTIPLE (the
 *     progress thread and the multi-threaded tests need it) and mt_init()
 *     checks that nbcx runs in the mode NBCX_PROGRESS asks for (CTest
 *     runs every program once per mode), so that a test registered as
 *     "thread" cannot silently pass in caller mode; likewise the
 *     transport NBCX_TRANSPORT asks for (default mpi).
 *
 * Only the public API of nbcx (nbcx.h, nbcx_mpi.h) is used.
 */
#ifndef NBCX_MPITEST_H
#define NBCX_MPITEST_H

#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nbcx_mpi.h"

#define MT_MAX_REPORTS 40

static int mt_rank, mt_size;       /* in MPI_COMM_WORLD */
static atomic_int mt_failures;     /* on this rank (any thread may fail) */
static int mt_thread_level;        /* provided by MPI_Init_thread */
static nbcx_progress_mode mt_mode; /* in effect after mt_init() */
/* MPI_COMM_WORLD's error handler function, set by mt_init before nbcx
 * sees MPI; NULL: MPI_ERRORS_RETURN. */
static MPI_Comm_errhandler_function *mt_world_handler;

/* ---- random numbers ------------------------------------------------ */

static inline uint64_t mt_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A seed from a few integers (case number, rank, buffer...). */
static inline uint64_t mt_seed(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t s = a * 0x100000001b3ull ^ (b << 20) ^ (c << 40) ^ 0x5eed;
    (void)mt_next(&s);
    return s;
}

/* Uniform integer in [lo, hi]. */
static inline int mt_range(uint64_t *state, int lo, int hi)
{
    return lo + (int)(mt_next(state) % (uint64_t)(hi - lo + 1));
}

/* ---- watchdog ------------------------------------------------------ */

static char mt_step[600];
static size_t mt_step_len;
/* Called by the watchdog before it exits (async-signal-safe calls only):
 * a multi-threaded test prints what each of its threads was doing. */
static void (*mt_on_timeout)(void);

static void mt_on_alarm(int sig)
{
    static const char msg[] = "\nWATCHDOG: step did not finish in time: ";
    (void)sig;
    /* Only async-signal-safe calls here. */
    if (write(2, msg, sizeof msg - 1) < 0 ||
        write(2, mt_step, mt_step_len) < 0 || write(2, "\n", 1) < 0) {
        /* nothing more we can do */
    }
    if (mt_on_timeout)
        mt_on_timeout();
    _exit(3);
}

static unsigned mt_timeout(void)
{
    const char *s = getenv("NBCX_TEST_TIMEOUT");
    long v = s ? strtol(s, NULL, 10) : 0;
    return v > 0 ? (unsigned)v : 120u;
}

/* Names the step about to run and (re)arms the watchdog. */
static void mt_watch(const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(mt_step, sizeof mt_step, "[rank %d/%d] ", mt_rank,
                     mt_size);
    va_start(ap, fmt);
    vsnprintf(mt_step + n, sizeof mt_step - (size_t)n, fmt, ap);
    va_end(ap);
    mt_step_len = strlen(mt_step);
    if (getenv("NBCX_TEST_VERBOSE")) /* trace every step */
        fprintf(stderr, "%s\n", mt_step);
    alarm(mt_timeout());
}

static void mt_unwatch(void) { alarm(0); }

/* ---- failures ------------------------------------------------------ */

static void mt_fail(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    int n, nfail = atomic_fetch_add(&mt_failures, 1) + 1;
    if (nfail > MT_MAX_REPORTS) {
        if (nfail == MT_MAX_REPORTS + 1)
            fprintf(stderr, "[rank %d] (further failures not shown)\n",
                    mt_rank);
        return;
    }
    /* One write per line, so that the lines of the ranks do not mix. */
    n = snprintf(line, sizeof line, "[rank %d/%d] FAIL: ", mt_rank, mt_size);
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    strcat(line, "\n");
    fputs(line, stderr);
    fflush(stderr);
}

/* Checks the return code of an nbcx call that must succeed. */
#define MT_OK(call)                                                        \
    do {                                                                   \
        int mt_rc_ = (call);                                               \
        if (mt_rc_ != NBCX_SUCCESS)                                        \
            mt_fail("%s:%d: %s returned %d (%s)", __FILE__, __LINE__,      \
                    #call, mt_rc_, nbcx_error_string(mt_rc_));             \
    } while (0)

/* Checks an MPI call (the reference must work, or the test is moot). */
#define MT_MPI(call)                                                       \
    do {                                                                   \
        int mt_rc_ = (call);                                               \
        if (mt_rc_ != MPI_SUCCESS) {                                       \
            fprintf(stderr, "[rank %d] %s:%d: %s failed (%d)\n", mt_rank,  \
                    __FILE__, __LINE__, #call, mt_rc_);                    \
            MPI_Abort(MPI_COMM_WORLD, 2);                                  \
        }                                                                  \
    } while (0)

static const char *mt_mode_name(nbcx_progress_mode m)
{
    return m == NBCX_PROGRESS_CALLER   ? "caller"
           : m == NBCX_PROGRESS_THREAD ? "thread"
           : m == NBCX_PROGRESS_SPLIT  ? "split"
           : m == NBCX_PROGRESS_AUTO   ? "auto"
                                       : "(invalid)";
}

/* The mode nbcx must be in: NBCX_PROGRESS, else auto; either way caller
 * when MPI does not allow calls from a progress thread. The face learns
 * the thread level when the first communicator is made, so the mode is
 * read after making one. */
static void mt_check_mode(void)
{
    const char *env = getenv("NBCX_PROGRESS");
    nbcx_progress_mode want = NBCX_PROGRESS_AUTO;
    nbcx_comm c = NBCX_COMM_NULL;

    if (env && strcmp(env, "caller") == 0)
        want = NBCX_PROGRESS_CALLER;
    else if (env && strcmp(env, "thread") == 0)
        want = NBCX_PROGRESS_THREAD;
    else if (env && strcmp(env, "split") == 0)
        want = NBCX_PROGRESS_SPLIT;
    else if (env && strcmp(env, "auto") == 0)
        want = NBCX_PROGRESS_AUTO;
    if (mt_thread_level != MPI_THREAD_MULTIPLE)
        want = NBCX_PROGRESS_CALLER;
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &c));
    mt_mode = (nbcx_progress_mode)0;
    MT_OK(nbcx_progress_get(&mt_mode));
    if (mt_mode != want)
        mt_fail("progress mode is %s, expected %s (NBCX_PROGRESS=%s, MPI "
                "thread level %d)", mt_mode_name(mt_mode),
                mt_mode_name(want), env ? env : "(unset)", mt_thread_level);
    /* And on the transport NBCX_TRANSPORT asks for (default "mpi"), so
     * that a test registered as "ucx" cannot silently run on MPI. */
    const char *tp = getenv("NBCX_TRANSPORT"), *name = NULL;
    MT_OK(nbcx_comm_transport(c, &name));
    if (!name || strcmp(name, tp && *tp ? tp : "mpi") != 0)
        mt_fail("transport is %s, expected %s (NBCX_TRANSPORT)",
                name ? name : "(none)", tp && *tp ? tp : "mpi");
    MT_OK(nbcx_comm_free(&c));
}

static void mt_init(int *argc, char ***argv)
{
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &mt_thread_level);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
    /* Errors of the reference collectives come back as codes (or go to
     * the test's own handler). */
    if (mt_world_handler) {
        MPI_Errhandler eh;
        MPI_Comm_create_errhandler(mt_world_handler, &eh);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
        MPI_Errhandler_free(&eh);
    } else {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    }
    const char *expect = getenv("NBCX_TEST_EXPECT_RANKS");
    if (expect && atoi(expect) != mt_size) {
        fprintf(stderr, "started on %d rank(s), expected %s: is mpiexec "
                        "the one of this MPI library?\n", mt_size, expect);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    signal(SIGALRM, mt_on_alarm);
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* Both MPI libraries the tests run with provide it; without it the
     * thread and split modes cannot be tested at all, which must not
     * pass unnoticed. NBCX_TEST_ALLOW_NO_MULTIPLE=1 runs the tests
     * anyway (in caller mode) with an MPI built without thread support. */
    if (mt_thread_level != MPI_THREAD_MULTIPLE &&
        !getenv("NBCX_TEST_ALLOW_NO_MULTIPLE")) {
        if (mt_rank == 0)
            fprintf(stderr, "MPI_Init_thread provided thread level %d, not "
                            "MPI_THREAD_MULTIPLE (%d)\n", mt_thread_level,
                    MPI_THREAD_MULTIPLE);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    mt_watch("setup: progress mode");
    mt_check_mode();
    mt_unwatch();
}

/* The MPI library is MPICH (or derived from it): some reference
 * collectives need a workaround there. */
static inline bool mt_is_mpich(void)
{
    static char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    return strstr(version, "MPICH") != NULL;
}

#define MT_MAX_ALGS 16

/* The algorithms of coll as nbcx lists them, without those named in
 * skip (NULL or NULL-terminated), then "auto". A test fails if nbcx lists
 * none. */
static inline int mt_algorithms(const char *coll, char names[][40],
                                const char *const *skip)
{
    const char *list = NULL, *p;
    int n = 0;
    MT_OK(nbcx_algorithm_names(coll, &list));
    for (p = list ? list : ""; *p && n < MT_MAX_ALGS - 1;) {
        size_t len = strcspn(p, " ");
        if (len > 0 && len < 40) {
            bool skipped = false;
            memcpy(names[n], p, len);
            names[n][len] = '\0';
            for (int k = 0; skip && skip[k]; k++)
                skipped = skipped || strcmp(names[n], skip[k]) == 0;
            if (!skipped)
                n++;
        }
        p += len;
        p += strspn(p, " ");
    }
    if (n == 0)
        mt_fail("nbcx_algorithm_names(%s) lists no algorithm", coll);
    strcpy(names[n++], "auto");
    return n;
}

/* Waits for an nbcx collective whose start returned rc; a failure ends
 * the job (the other ranks could wait forever). The request must be
 * reset by the wait. */
static inline void mt_nbcx_wait(const char *what, int rc, nbcx_request *req)
{
    if (rc == NBCX_SUCCESS)
        rc = nbcx_wait(req);
    if (rc != NBCX_SUCCESS) {
        mt_fail("%s: nbcx returned %d (%s); stopping the job", what, rc,
                nbcx_error_string(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (*req != NBCX_REQUEST_NULL)
        mt_fail("%s: request not reset by nbcx_wait", what);
}

/* A reference MPI collective returned rc: a failure is reported with
 * the first line of MPI's message. */
static inline void mt_mpi_check(const char *what, int rc)
{
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        msg[strcspn(msg, "\n")] = '\0'; /* first line only */
        mt_fail("%s: the reference MPI collective failed: %s", what, msg);
    }
}

/* The send buffer (bytes bytes) must be as it was (init). */
static inline void mt_check_sendbuf(const char *what,
                                    const unsigned char *buf,
                                    const unsigned char *init, size_t bytes)
{
    if (bytes && memcmp(buf, init, bytes) != 0)
        mt_fail("%s: nbcx modified the send buffer", what);
}

/* After the cases of a collective: its automatic algorithm and the
 * default fragment size (the transport's) again. */
static inline void mt_restore_defaults(const char *coll)
{
    MT_OK(nbcx_algorithm_set(coll, "auto"));
    MT_OK(nbcx_segsize_set(0));
}

/* mt_init, then the watchdog on the setup step; returns the start time
 * (for mt_finish). */
static inline double mt_begin(int *argc, char ***argv)
{
    mt_init(argc, argv);
    double t0 = MPI_Wtime();
    mt_watch("setup");
    return t0;
}

/* Sums the failures of all ranks, finalises MPI and returns the exit
 * status: 1 on every rank if any rank failed. */
static int mt_finish(const char *prog, double t0)
{
    int mine = atomic_load(&mt_failures), total = 0;
    mt_unwatch();
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (mt_rank == 0)
        printf("%s: %d rank(s), progress=%s, %d failure(s), %.2f s\n",
               prog, mt_size, mt_mode_name(mt_mode), total,
               MPI_Wtime() - t0);
    MPI_Finalize();
    return total ? 1 : 0;
}

/* An allreduce (SUM of 1000 int32) and a 1 MiB bcast (a rendezvous on
 * UCX) on comm, each against MPI's blocking collective on
 * MPI_COMM_WORLD, which comm must span in the same rank order. */
static inline void mt_check_on(nbcx_comm comm, const char *what)
{
    enum { N = 1000, M = 1 << 20 };
    static int32_t in[N], out[N], ref[N];
    uint64_t rng = mt_seed(1, (uint64_t)mt_rank, 16);
    for (int i = 0; i < N; i++)
        in[i] = (int32_t)(mt_next(&rng) % 1000);
    nbcx_request r;
    MT_OK(nbcx_iallreduce(in, out, N, NBCX_INT32, NBCX_SUM, comm, &r));
    MT_OK(nbcx_wait(&r));
    MT_MPI(MPI_Allreduce(in, ref, N, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD));
    if (memcmp(out, ref, sizeof out) != 0)
        mt_fail("%s: iallreduce differs from MPI_Allreduce", what);
    char *b = malloc(M), *c = malloc(M);
    if (!b || !c) {
        mt_fail("%s: no memory for the bcast", what);
        free(b);
        free(c);
        return;
    }
    for (int i = 0; i < M; i++)
        b[i] = c[i] = mt_rank == 0 ? (char)(i * 7 + 3) : 0;
    MT_OK(nbcx_ibcast(b, M, NBCX_BYTE, 0, comm, &r));
    MT_OK(nbcx_wait(&r));
    MT_MPI(MPI_Bcast(c, M, MPI_BYTE, 0, MPI_COMM_WORLD));
    if (memcmp(b, c, M) != 0)
        mt_fail("%s: ibcast of 1 MiB differs from MPI_Bcast", what);
    free(b);
    free(c);
}

#endif /* NBCX_MPITEST_H */
