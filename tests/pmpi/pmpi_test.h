/* pmpi_test.h - helpers of the libnbcx-pmpi tests: plain MPI programs (no
 * nbcx header) run with the shim linked in or preloaded.
 *
 * NBCX_TEST_EXPECT_SHIM=1: the program fails unless the shim is there and
 * served some calls (NBCX_TEST_EXPECT_NATIVE=1: and sent some to the
 * native library; it asks nbcx_pmpi_counts, found with dlsym, so that
 * the program itself needs nothing from nbcx). The watchdog
 * (NBCX_TEST_TIMEOUT seconds, default 60) turns a hang into a failure. */
#ifndef PMPI_TEST_H
#define PMPI_TEST_H
/* GCC 12 mistakes MPICH's MPI_STATUSES_IGNORE (a constant pointer) for
 * an array of size 0. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include <dlfcn.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The persistent collectives: MPI_<op>_init on MPI-4 libraries, Open MPI
 * 4.1's MPIX_<op>_init (mpi-ext.h); HAVE_P 0 where there are none. */
#if MPI_VERSION >= 4
#define HAVE_P 1
#define P(x) MPI_##x##_init
#elif defined(OPEN_MPI)
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define HAVE_P 1
#define P(x) MPIX_##x##_init
#endif
#endif
#ifndef HAVE_P
#define HAVE_P 0
#endif

static int t_rank, t_size, t_failures;
static const char *t_step = "start";

#define FAIL(...)                                                        \
    do {                                                                 \
        fprintf(stderr, "rank %d: FAIL %s:%d (%s): ", t_rank, __FILE__, \
                __LINE__, t_step);                                       \
        fprintf(stderr, __VA_ARGS__);                                    \
        fprintf(stderr, "\n");                                           \
        t_failures++;                                                    \
    } while (0)
#define CHECK(c)                     \
    do {                             \
        if (!(c))                    \
            FAIL("%s", #c);          \
    } while (0)
#define MPI_OK(call)                                         \
    do {                                                     \
        int rc_ = (call);                                    \
        if (rc_ != MPI_SUCCESS)                              \
            FAIL("%s returned %d", #call, rc_);              \
    } while (0)

static void t_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "pmpi test: watchdog expired (hang)\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(3);
}

static void t_init(int *argc, char ***argv, int level)
{
    int provided;
    if (level < 0)
        MPI_Init(argc, argv);
    else
        MPI_Init_thread(argc, argv, level, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
    const char *to = getenv("NBCX_TEST_TIMEOUT");
    signal(SIGALRM, t_alarm);
    alarm(to ? (unsigned)atoi(to) : 60);
}

typedef int counts_fn(long long *served, long long *native);

/* The shim's counts so far (nbcx_pmpi_counts, found with dlsym): calls
 * served by nbcx and sent to the native library; returns 0, counts 0,
 * when the shim is not loaded. */
static int t_counts(long long *served, long long *native)
{
    counts_fn *f = (counts_fn *)(size_t)dlsym(RTLD_DEFAULT,
                                             "nbcx_pmpi_counts");
    *served = *native = 0;
    if (!f)
        return 0;
    f(served, native);
    return 1;
}

static int t_finish(const char *name)
{
    const char *e = getenv("NBCX_TEST_EXPECT_SHIM");
    if (e && *e == '1') {
        long long served, native;
        int loaded = t_counts(&served, &native);
        if (!loaded)
            FAIL("libnbcx-pmpi is not loaded");
        else if (served == 0)
            FAIL("the shim served no call (native %lld)", native);
        const char *n = getenv("NBCX_TEST_EXPECT_NATIVE");
        if (loaded && n && *n == '1' && native == 0)
            FAIL("no call went native (served %lld)", served);
    }
    int all = 0;
    MPI_Allreduce(&t_failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (t_rank == 0)
        printf("%s: %s on %d ranks (%d failures)\n", name,
               all ? "FAILED" : "passed", t_size, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
#endif
