/*
 * test_transport.c - choosing the transport by name (NBCX_TRANSPORT).
 *
 *   - an unknown name: nbcx_comm_from_mpi fails on every rank with
 *     NBCX_ERR_TRANSPORT and a detail that names the variable, the value
 *     and the transports there are; nothing aborts, MPI and nbcx go on
 *     working (a communicator made afterwards on "mpi" runs an
 *     allreduce that equals MPI's);
 *   - "mpi" (explicit): the MPI transport;
 *   - "ucx": in a build with UCX (NBCX_TEST_HAVE_UCX) the communicator
 *     runs on "ucx", its allreduce and bcast equal MPI's, and nbcx_info
 *     names it (transport=ucx(tls=...)); in a build without UCX the
 *     name is unknown, as above;
 *   - the UCX module (libnbcx-ucx.so, loaded when first asked for): not
 *     mapped in this process (/proc/self/maps), nor libucp, after
 *     collectives on "mpi"; when it cannot be loaded (not in the only
 *     directory searched, NBCX_MODULE_PATH with NBCX_MODULE_PATH_ONLY;
 *     a file there that is no library) every rank fails with
 *     NBCX_ERR_TRANSPORT and a detail that says why (dlerror()), and
 *     nothing is left loaded; when one rank cannot load it the others
 *     fail too (no hang), naming that rank; then it loads, and both are
 *     mapped. (libucp is checked only when MPI had not mapped it already:
 *     MPICH runs on UCX itself.)
 *
 * The program sets NBCX_TRANSPORT itself (nbcx reads it at every
 * nbcx_comm_from_mpi); whatever the environment had is restored for the
 * mode check in mt_init, which runs first.
 */
#include "mpitest.h"

#include <unistd.h>

/* Whether a file whose path contains `lib` is mapped in this process. */
static bool mapped(const char *lib)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return false;
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, lib) != NULL;
    fclose(f);
    return found;
}

static bool ucp_at_start; /* libucp mapped before nbcx made a UCX comm */

/* The UCX module, and libucp with it, is loaded in this process (want)
 * or not. */
static void expect_ucx_loaded(bool want, const char *when)
{
    if (mapped("libnbcx-ucx.so") != want)
        mt_fail("%s: libnbcx-ucx.so is %smapped", when, want ? "not " : "");
    if (!ucp_at_start && mapped("libucp") != want)
        mt_fail("%s: libucp is %smapped", when, want ? "not " : "");
}

#ifdef NBCX_TEST_HAVE_UCX
/* NBCX_TRANSPORT=ucx with the module searched for in dir only (on this
 * rank when `me`, as usual otherwise): nbcx_comm_from_mpi must fail
 * cleanly on every rank; the detail must contain want (on the ranks
 * that searched dir) or name rank `who` (on the others). */
static void expect_load_failure(const char *what, const char *dir, bool me,
                                const char *want, int who)
{
    mt_watch(what);
    if (me) {
        setenv("NBCX_MODULE_PATH", dir, 1);
        setenv("NBCX_MODULE_PATH_ONLY", "1", 1);
    }
    setenv("NBCX_TRANSPORT", "ucx", 1);
    nbcx_comm comm = NBCX_COMM_NULL;
    int err = nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm);
    const char *detail = nbcx_error_detail(err);
    char rank[32];
    snprintf(rank, sizeof rank, "rank %d", who);
    if (err != NBCX_ERR_TRANSPORT)
        mt_fail("%s: nbcx_comm_from_mpi returned %d, expected "
                "NBCX_ERR_TRANSPORT", what, err);
    else if (!strstr(detail, "NBCX_TRANSPORT=ucx") ||
             !strstr(detail, me ? want : rank))
        mt_fail("%s: the detail does not say why (\"%s\" expected): %s",
                what, me ? want : rank, detail);
    if (comm != NBCX_COMM_NULL)
        mt_fail("%s: the handle is not NBCX_COMM_NULL", what);
    unsetenv("NBCX_MODULE_PATH");
    unsetenv("NBCX_MODULE_PATH_ONLY");
    unsetenv("NBCX_TRANSPORT");
}

/* The load failures, before any rank has loaded the module. */
static void load_failures(void)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/nbcx-test-modules-XXXXXX");
    if (!mkdtemp(dir)) {
        mt_fail("mkdtemp: cannot make a directory in /tmp");
        return;
    }
    /* Not there: the detail names the file and the directory. */
    expect_load_failure("the UCX module not found", dir, true, dir, 0);
    expect_ucx_loaded(false, "after the module was not found");
    /* A file that is no library: dlerror() names it. */
    char path[128];
    snprintf(path, sizeof path, "%s/libnbcx-ucx.so", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("not a shared object\n", f);
        fclose(f);
    }
    expect_load_failure("a broken UCX module", dir, true, path, 0);
    expect_ucx_loaded(false, "after a broken module");
    /* Only the last rank cannot load it: all fail, none hangs. */
    if (mt_size > 1)
        expect_load_failure("the UCX module missing on the last rank", "",
                            mt_rank == mt_size - 1, "not in", mt_size - 1);
    unlink(path);
    rmdir(dir);
}
#endif

static void expect_transport(nbcx_comm comm, const char *want)
{
    const char *name = NULL;
    MT_OK(nbcx_comm_transport(comm, &name));
    if (!name || strcmp(name, want) != 0)
        mt_fail("transport is %s, expected %s", name ? name : "(none)",
                want);
}

int main(int argc, char **argv)
{
    double t0 = mt_begin(&argc, &argv);
    nbcx_comm comm = NBCX_COMM_NULL;
    ucp_at_start = mapped("libucp");

    mt_watch("an unknown transport");
    setenv("NBCX_TRANSPORT", "bogus", 1);
    int err = nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm);
    const char *detail = nbcx_error_detail(err);
    if (err != NBCX_ERR_TRANSPORT)
        mt_fail("NBCX_TRANSPORT=bogus: nbcx_comm_from_mpi returned %d, "
                "expected NBCX_ERR_TRANSPORT (%d)", err, NBCX_ERR_TRANSPORT);
    else if (!strstr(detail, "NBCX_TRANSPORT=bogus") ||
             !strstr(detail, "mpi"))
        mt_fail("NBCX_TRANSPORT=bogus: the detail does not say what is "
                "wrong: \"%s\"", detail);
    if (comm != NBCX_COMM_NULL)
        mt_fail("NBCX_TRANSPORT=bogus: the handle is not NBCX_COMM_NULL");
#ifdef NBCX_TEST_HAVE_UCX
    if (!strstr(detail, "ucx"))
        mt_fail("NBCX_TRANSPORT=bogus: the detail does not list ucx: "
                "\"%s\"", detail);
#endif

    mt_watch("NBCX_TRANSPORT=mpi");
    setenv("NBCX_TRANSPORT", "mpi", 1);
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
    expect_transport(comm, "mpi");
    mt_check_on(comm, "mpi");
    MT_OK(nbcx_comm_free(&comm));
    expect_ucx_loaded(false, "after collectives on NBCX_TRANSPORT=mpi");
#ifdef NBCX_TEST_HAVE_UCX
    load_failures();
    /* MPI and nbcx go on working. */
    mt_watch("NBCX_TRANSPORT=mpi after the failures");
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
    mt_check_on(comm, "mpi after the failures");
    MT_OK(nbcx_comm_free(&comm));
#endif

    mt_watch("NBCX_TRANSPORT=ucx");
    setenv("NBCX_TRANSPORT", "ucx", 1);
    err = nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm);
#ifdef NBCX_TEST_HAVE_UCX
    if (err != NBCX_SUCCESS) {
        mt_fail("NBCX_TRANSPORT=ucx: %s", nbcx_error_detail(err));
    } else {
        expect_transport(comm, "ucx");
        mt_check_on(comm, "ucx");
        /* A second UCX communicator at once: its own context id, so the
         * two never cross (the same tags, opposite order). */
        nbcx_comm two = NBCX_COMM_NULL;
        MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &two));
        int a = mt_rank, b = 100 + mt_rank, sa = 0, sb = 0;
        nbcx_request r[2];
        MT_OK(nbcx_iallreduce(&b, &sb, 1, NBCX_INT32, NBCX_SUM, two, &r[1]));
        MT_OK(nbcx_iallreduce(&a, &sa, 1, NBCX_INT32, NBCX_SUM, comm, &r[0]));
        MT_OK(nbcx_waitall(2, r));
        int ra = 0, rb = 0;
        MT_MPI(MPI_Allreduce(&a, &ra, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        MT_MPI(MPI_Allreduce(&b, &rb, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        if (sa != ra || sb != rb)
            mt_fail("two UCX communicators: %d %d, MPI %d %d", sa, sb, ra,
                    rb);
        MT_OK(nbcx_comm_free(&two));
        char info[1024];
        MT_OK(nbcx_info(info, sizeof info));
        if (!strstr(info, "transport=ucx("))
            mt_fail("nbcx_info does not name the UCX transport: %s", info);
        MT_OK(nbcx_comm_free(&comm));
        expect_ucx_loaded(true, "after a UCX communicator");
    }
#else
    if (err != NBCX_ERR_TRANSPORT)
        mt_fail("NBCX_TRANSPORT=ucx in a build without UCX: returned %d",
                err);
#endif
    unsetenv("NBCX_TRANSPORT");
    return mt_finish("test_transport", t0);
}
