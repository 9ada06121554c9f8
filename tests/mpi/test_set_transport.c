/*
 * test_set_transport.c - nbcx_comm_set_transport: moving a communicator
 * made from MPI onto another transport by name (issue 16).
 *
 *   - bad input, every rank the same verdict and the communicator still
 *     on "mpi" and working afterwards (an allreduce equal to MPI's):
 *     NBCX_COMM_NULL (NBCX_ERR_COMM), a NULL or empty name and an
 *     unknown one (NBCX_ERR_ARG; the detail names the value and, with
 *     UCX, lists "ucx"), "inproc" (NBCX_ERR_ARG: not chosen by name);
 *   - its own transport's name: success, nothing changes;
 *   - without UCX in the build: "ucx" fails with NBCX_ERR_TRANSPORT and
 *     a detail that says it is not built;
 *   - with UCX, the module not loadable (searched only in an empty
 *     directory): NBCX_ERR_TRANSPORT on every rank, comm still on "mpi";
 *   - in use (with UCX, the only transport created by name): an
 *     iallreduce in flight on every rank, a persistent
 *     allreduce planned on every rank, a user's schedule on the last
 *     rank only: every rank fails with NBCX_ERR_BUSY (the others' detail
 *     names the busy rank), nothing hangs, and the operation in flight
 *     then completes with MPI's result;
 *   - with UCX and NBCX_TEST_UCX_FAILS_ON_LAST set (a run of its own):
 *     UCX refuses a setting on the last rank only (NBCX_UCX_RNDV_THRESH;
 *     with "seg", nbcx refuses NBCX_UCX_TCP_TX_SEG_SIZE=bogus, which
 *     UCX itself would take with a warning): every rank fails
 *     with NBCX_ERR_TRANSPORT (the last naming the setting, the others
 *     the last rank), none hangs, comm stays on "mpi" and works;
 *   - with UCX: the switch succeeds, nbcx_comm_transport says "ucx",
 *     nbcx_info names it, and collectives on it equal MPI's blocking
 *     ones (allreduce, a 1 MiB bcast, alltoall, a persistent allreduce
 *     started twice); naming "ucx" again is a no-op;
 *   - with UCX, the way back: "mpi" while in use (as above, now on
 *     "ucx") fails on every rank with NBCX_ERR_BUSY and comm stays on
 *     "ucx"; then "mpi" succeeds, collectives equal MPI's, and "ucx"
 *     again makes a new UCX transport whose collectives equal MPI's;
 *     a communicator made with NBCX_TRANSPORT=ucx goes to "mpi" too;
 *     then the communicators are freed cleanly;
 *   - nbcx_comm_from_mpi out of memory on the last rank alone (the same
 *     calloc, below): NBCX_ERR_NOMEM there, NBCX_ERR_TRANSPORT naming it
 *     elsewhere, no communicator anywhere, and comm still works;
 *   - with UCX, a way back that fails on the last rank alone (its tag
 *     slots cannot be allocated: this program's calloc fails once;
 *     not in the sanitizer builds, whose allocator this would bypass):
 *     the last rank gets NBCX_ERR_NOMEM, the others NBCX_ERR_TRANSPORT
 *     naming it, and every rank stays on "ucx", whose collectives still
 *     equal MPI's (before, the others went back alone and the next
 *     collective hung).
 */
#include "mpitest.h"

#include <errno.h>
#include <stdatomic.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define NO_CALLOC_FAILURES 1
#endif
#endif
#if !defined(NO_CALLOC_FAILURES) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define CAN_FAIL_CALLOC 1
/* This program's calloc, which nbcx's calls reach: the next call for
 * fail_words 8-byte words (0: none) fails, once. */
extern void *__libc_calloc(size_t n, size_t size);
static _Atomic size_t fail_words;
static atomic_int calloc_failures;
__attribute__((visibility("default"))) /* (the build hides symbols) */
void *calloc(size_t n, size_t size)
{
    size_t want = atomic_load_explicit(&fail_words, memory_order_relaxed);
    if (want && n == want && size == 8 &&
        atomic_compare_exchange_strong(&fail_words, &want, 0)) {
        atomic_fetch_add(&calloc_failures, 1);
        errno = ENOMEM;
        return NULL;
    }
    return __libc_calloc(n, size);
}

/* The words of the tag bitmap of a communicator on MPI_COMM_WORLD's
 * tags (base/comm.c: a slot per 4096 tags, at most 65536 slots). */
static size_t tag_bitmap_words(void)
{
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    unsigned long slots = ((unsigned long)*ub + 1) >> 12;
    if (slots > 65536)
        slots = 65536;
    return (slots + 63) / 64;
}
#endif

enum { N = 1000 };

static void expect_transport(nbcx_comm comm, const char *want,
                             const char *when)
{
    const char *name = NULL;
    MT_OK(nbcx_comm_transport(comm, &name));
    if (!name || strcmp(name, want) != 0)
        mt_fail("%s: transport is %s, expected %s", when,
                name ? name : "(none)", want);
}

/* nbcx_comm_set_transport(comm, name) must return want, with a detail
 * that contains `says` (NULL: not checked). */
static void expect_set(nbcx_comm comm, const char *name, int want,
                       const char *says, const char *what)
{
    mt_watch("%s", what);
    int err = nbcx_comm_set_transport(comm, name);
    if (err != want) {
        mt_fail("%s: nbcx_comm_set_transport returned %d (%s), expected "
                "%d (%s); detail: %s", what, err, nbcx_error_string(err),
                want, nbcx_error_string(want), nbcx_error_detail(err));
        return;
    }
    const char *detail = nbcx_error_detail(err);
    if (says && !strstr(detail, says))
        mt_fail("%s: the detail does not say \"%s\": %s", what, says,
                detail);
}

/* Collectives on comm against MPI's blocking ones on MPI_COMM_WORLD. */
static void collectives_vs_mpi(nbcx_comm comm, const char *what)
{
    mt_watch("%s: collectives against MPI", what);
    mt_check_on(comm, what);
    nbcx_request r;

    enum { K = 100 };
    int32_t *s = malloc(sizeof *s * K * (size_t)mt_size);
    int32_t *o = malloc(sizeof *o * K * (size_t)mt_size);
    int32_t *e = malloc(sizeof *e * K * (size_t)mt_size);
    for (int i = 0; i < K * mt_size; i++)
        s[i] = mt_rank * 100000 + i;
    MT_OK(nbcx_ialltoall(s, K, NBCX_INT32, o, K, NBCX_INT32, comm, &r));
    MT_OK(nbcx_wait(&r));
    MT_MPI(MPI_Alltoall(s, K, MPI_INT32_T, e, K, MPI_INT32_T,
                        MPI_COMM_WORLD));
    if (memcmp(o, e, sizeof *o * K * (size_t)mt_size) != 0)
        mt_fail("%s: ialltoall differs from MPI_Alltoall", what);
    free(s);
    free(o);
    free(e);

    /* Persistent: planned on this transport, started twice. */
    static int32_t in[N], out[N], ref[N];
    uint64_t rng = mt_seed(7, (uint64_t)mt_rank, 3);
    MT_OK(nbcx_allreduce_init(in, out, N, NBCX_INT32, NBCX_MAX, comm, &r));
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++)
            in[i] = (int32_t)(mt_next(&rng) % 100000);
        memset(out, 0, sizeof out);
        MT_OK(nbcx_start(&r));
        MT_OK(nbcx_wait(&r));
        MT_MPI(MPI_Allreduce(in, ref, N, MPI_INT32_T, MPI_MAX,
                             MPI_COMM_WORLD));
        if (memcmp(out, ref, sizeof out) != 0)
            mt_fail("%s: persistent allreduce (start %d) differs from "
                    "MPI_Allreduce", what, round + 1);
    }
    MT_OK(nbcx_request_free(&r));
}

#ifdef NBCX_TEST_HAVE_UCX
/* Every rank uses comm, which is on transport `on` (want busy: some rank
 * holds something on it): the switch to `to` fails on all of them with
 * NBCX_ERR_BUSY, and comm stays on `on`. */
static void in_use(nbcx_comm comm, const char *to, const char *on)
{
    /* An operation in flight on every rank. */
    static int32_t in[N], out[N], ref[N];
    for (int i = 0; i < N; i++)
        in[i] = mt_rank * 3 + i;
    nbcx_request r;
    MT_OK(nbcx_iallreduce(in, out, N, NBCX_INT32, NBCX_SUM, comm, &r));
    expect_set(comm, to, NBCX_ERR_BUSY, "in flight",
               "an iallreduce in flight");
    MT_OK(nbcx_wait(&r));
    MT_MPI(MPI_Allreduce(in, ref, N, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD));
    if (memcmp(out, ref, sizeof out) != 0)
        mt_fail("the iallreduce in flight during the refused switch "
                "differs from MPI_Allreduce");
    expect_transport(comm, on, "after a refused switch");

    /* A persistent request planned on every rank. */
    MT_OK(nbcx_allreduce_init(in, out, N, NBCX_INT32, NBCX_SUM, comm, &r));
    expect_set(comm, to, NBCX_ERR_BUSY, "persistent",
               "a persistent allreduce planned");
    MT_OK(nbcx_request_free(&r));

    /* A schedule on the last rank only: the others must hear of it. */
    nbcx_sched s = NULL;
    int last = mt_size - 1;
    if (mt_rank == last)
        MT_OK(nbcx_sched_create(comm, &s));
    char says[32];
    snprintf(says, sizeof says, "rank %d", last);
    expect_set(comm, to, NBCX_ERR_BUSY, says,
               "a user's schedule on the last rank");
    if (s)
        MT_OK(nbcx_sched_free(&s));
    expect_transport(comm, on, "after the refused switches");
}

/* The UCX module searched for only in an empty directory: every rank
 * fails with NBCX_ERR_TRANSPORT, and comm stays on "mpi". */
static void module_missing(nbcx_comm comm)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/nbcx-test-set-XXXXXX");
    if (!mkdtemp(dir)) {
        mt_fail("mkdtemp: cannot make a directory in /tmp");
        return;
    }
    setenv("NBCX_MODULE_PATH", dir, 1);
    setenv("NBCX_MODULE_PATH_ONLY", "1", 1);
    expect_set(comm, "ucx", NBCX_ERR_TRANSPORT, "libnbcx-ucx.so",
               "the UCX module not found");
    unsetenv("NBCX_MODULE_PATH");
    unsetenv("NBCX_MODULE_PATH_ONLY");
    rmdir(dir);
    expect_transport(comm, "mpi", "after the module was not found");
}
#endif

int main(int argc, char **argv)
{
    double t0 = mt_begin(&argc, &argv);
    unsetenv("NBCX_TRANSPORT"); /* made on "mpi" */
    nbcx_comm comm = NBCX_COMM_NULL;
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
    expect_transport(comm, "mpi", "nbcx_comm_from_mpi");
#ifdef CAN_FAIL_CALLOC
    {
        /* nbcx_comm_from_mpi out of memory on the last rank alone: no
         * rank gets a communicator (the others used to). */
        int last = mt_size - 1;
        nbcx_comm other = NBCX_COMM_NULL;
        if (mt_rank == last)
            fail_words = tag_bitmap_words();
        mt_watch("nbcx_comm_from_mpi, out of memory on the last rank");
        int err = nbcx_comm_from_mpi(MPI_COMM_WORLD, &other);
        int want = mt_rank == last ? NBCX_ERR_NOMEM : NBCX_ERR_TRANSPORT;
        char says[64];
        snprintf(says, sizeof says, "rank %d could not make", last);
        if (err != want || other != NBCX_COMM_NULL)
            mt_fail("nbcx_comm_from_mpi, out of memory on rank %d: %d (%s), "
                    "expected %d, and %s communicator", last, err,
                    nbcx_error_string(err), want,
                    other ? "a" : "no");
        else if (mt_rank != last && !strstr(nbcx_error_detail(err), says))
            mt_fail("nbcx_comm_from_mpi: the detail does not say \"%s\": %s",
                    says, nbcx_error_detail(err));
        if (mt_rank == last && (fail_words != 0 || calloc_failures != 1))
            mt_fail("nbcx_comm_from_mpi: the tag bitmap's calloc was not "
                    "the one failed (%d failures)", (int)calloc_failures);
        fail_words = 0;
        if (other != NBCX_COMM_NULL)
            MT_OK(nbcx_comm_free(&other));
        collectives_vs_mpi(comm, "mpi after a failed nbcx_comm_from_mpi");
    }
#endif

    expect_set(NBCX_COMM_NULL, "ucx", NBCX_ERR_COMM, NULL,
               "NBCX_COMM_NULL");
    expect_set(comm, NULL, NBCX_ERR_ARG, "NULL", "a NULL name");
    expect_set(comm, "", NBCX_ERR_ARG, NULL, "an empty name");
    expect_set(comm, "bogus", NBCX_ERR_ARG, "\"bogus\"", "an unknown name");
#ifdef NBCX_TEST_HAVE_UCX
    expect_set(comm, "bogus", NBCX_ERR_ARG, "ucx",
               "an unknown name lists ucx");
#endif
    expect_set(comm, "inproc", NBCX_ERR_ARG, "nbcx_inproc_run",
               "inproc (not chosen by name)");
    expect_set(comm, "mpi", NBCX_SUCCESS, NULL, "its own transport");
    expect_transport(comm, "mpi", "after the bad input");
    collectives_vs_mpi(comm, "mpi after the bad input");

#ifdef NBCX_TEST_HAVE_UCX
    /* (without UCX no transport can be created by name: "ucx" is refused
     * as not built before anything is agreed on) */
    in_use(comm, "ucx", "mpi");
    collectives_vs_mpi(comm, "mpi after the refused switches");

    module_missing(comm);
    collectives_vs_mpi(comm, "mpi after the module was not found");

    const char *fails = getenv("NBCX_TEST_UCX_FAILS_ON_LAST");
    if (fails) {
        /* UCX cannot start on the last rank (a setting UCX refuses, or,
         * with "seg", a TCP segment size that nbcx refuses, since UCX
         * would only warn; once refused, UCX stays off in that process:
         * so this run ends here). Every rank fails, the others naming
         * the last; none hangs; comm stays on "mpi" and works. */
        bool seg = strcmp(fails, "seg") == 0;
        const char *var = seg ? "NBCX_UCX_TCP_TX_SEG_SIZE"
                              : "NBCX_UCX_RNDV_THRESH";
        int last = mt_size - 1;
        if (mt_rank == last)
            setenv(var, seg ? "bogus" : "not-a-size", 1);
        char says[64];
        if (mt_rank == last)
            snprintf(says, sizeof says, "%s", seg ? "NBCX_UCX_TCP_TX_SEG_"
                     "SIZE=bogus: not a size" : "NBCX_UCX_RNDV_THRESH="
                     "not-a-size");
        else
            snprintf(says, sizeof says, "rank %d", last);
        expect_set(comm, "ucx", NBCX_ERR_TRANSPORT, says,
                   "UCX not starting on the last rank");
        unsetenv(var);
        expect_transport(comm, "mpi", "after UCX failed on the last rank");
        collectives_vs_mpi(comm, "mpi after UCX failed on the last rank");
        mt_unwatch();
        MT_OK(nbcx_comm_free(&comm));
        return mt_finish("test_set_transport", t0);
    }

    expect_set(comm, "ucx", NBCX_SUCCESS, NULL, "the switch to ucx");
    expect_transport(comm, "ucx", "after the switch");
    char info[1024];
    MT_OK(nbcx_info(info, sizeof info));
    if (!strstr(info, "transport=ucx("))
        mt_fail("nbcx_info does not name the UCX transport: %s", info);
    /* nbcx's defaults of UCX's settings, and where they apply: TCP's
     * send segment wherever UCX may use TCP; the rendezvous threshold on
     * TCP alone (unless a variable of the user's sets it). */
    const char *tls = getenv("NBCX_UCX_TLS");
    tls = tls ? tls : getenv("UCX_TLS");
    bool rndv_env = getenv("NBCX_UCX_RNDV_THRESH") ||
                    getenv("UCX_RNDV_THRESH");
    bool tcp_alone = tls && (!strcmp(tls, "tcp") || !strcmp(tls, "tcp,self")
                             || !strcmp(tls, "self,tcp"));
    bool tcp_may = !tls || strstr(tls, "tcp") || strstr(tls, "all");
    if (!rndv_env && tcp_alone != (strstr(info, ";RNDV_THRESH=1m") != NULL))
        mt_fail("UCX given %s: nbcx's rendezvous threshold of 1m %s: %s",
                tls ? tls : "no list", tcp_alone ? "missing" : "set", info);
    if (!getenv("NBCX_UCX_TCP_TX_SEG_SIZE") && !getenv("UCX_TCP_TX_SEG_SIZE")
        && tcp_may != (strstr(info, ";TCP_TX_SEG_SIZE=64K") != NULL))
        mt_fail("UCX given %s: nbcx's TCP segment of 64K %s: %s",
                tls ? tls : "no list", tcp_may ? "missing" : "set", info);
    collectives_vs_mpi(comm, "ucx");
    expect_set(comm, "ucx", NBCX_SUCCESS, NULL, "ucx again");

    /* The way back to the MPI transport comm was made on: refused while
     * in use, then done; then to a new UCX transport again. */
    in_use(comm, "mpi", "ucx");
    collectives_vs_mpi(comm, "ucx after the refused ways back");
    expect_set(comm, "mpi", NBCX_SUCCESS, NULL, "back to mpi");
    expect_transport(comm, "mpi", "after the way back");
    collectives_vs_mpi(comm, "mpi after the way back");
    expect_set(comm, "ucx", NBCX_SUCCESS, NULL, "ucx a second time");
    expect_transport(comm, "ucx", "after the second switch");
    collectives_vs_mpi(comm, "ucx a second time");
#ifdef CAN_FAIL_CALLOC
    {
        int last = mt_size - 1;
        char says[64];
        if (mt_rank == last)
            snprintf(says, sizeof says, "no memory");
        else
            snprintf(says, sizeof says, "rank %d could not switch", last);
        int before = calloc_failures;
        if (mt_rank == last)
            fail_words = tag_bitmap_words();
        expect_set(comm, "mpi",
                   mt_rank == last ? NBCX_ERR_NOMEM : NBCX_ERR_TRANSPORT, says,
                   "the way back, out of memory on the last rank");
        if (mt_rank == last &&
            (fail_words != 0 || calloc_failures != before + 1))
            mt_fail("the tag bitmap's calloc was not the one failed (%d "
                    "failures)", (int)calloc_failures - before);
        fail_words = 0;
        expect_transport(comm, "ucx", "after the way back failed");
        collectives_vs_mpi(comm, "ucx after the way back failed");
    }
#endif

    /* Made on UCX (NBCX_TRANSPORT=ucx): nbcx_comm_from_mpi keeps the MPI
     * transport too, and "mpi" goes to it. */
    nbcx_comm made_on_ucx = NBCX_COMM_NULL;
    setenv("NBCX_TRANSPORT", "ucx", 1);
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &made_on_ucx));
    unsetenv("NBCX_TRANSPORT");
    expect_transport(made_on_ucx, "ucx", "made with NBCX_TRANSPORT=ucx");
    collectives_vs_mpi(made_on_ucx, "made on ucx");
    expect_set(made_on_ucx, "mpi", NBCX_SUCCESS, NULL,
               "made on ucx, to mpi");
    expect_transport(made_on_ucx, "mpi", "made on ucx, after \"mpi\"");
    collectives_vs_mpi(made_on_ucx, "made on ucx, then on mpi");
    MT_OK(nbcx_comm_free(&made_on_ucx));
#else
    expect_set(comm, "ucx", NBCX_ERR_TRANSPORT, "not in this build",
               "ucx in a build without UCX");
    expect_transport(comm, "mpi", "after ucx was refused");
#endif
    mt_unwatch();
    MT_OK(nbcx_comm_free(&comm));
    return mt_finish("test_set_transport", t0);
}
