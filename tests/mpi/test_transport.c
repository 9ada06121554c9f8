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
 *     name is unknown, as above.
 *
 * The program sets NBCX_TRANSPORT itself (nbcx reads it at every
 * nbcx_comm_from_mpi); whatever the environment had is restored for the
 * mode check in mt_init, which runs first.
 */
#include "mpitest.h"

static void allreduce_vs_mpi(nbcx_comm comm, const char *what)
{
    enum { N = 1000 };
    static int in[N], out[N], ref[N];
    uint64_t rng = mt_seed(1, (uint64_t)mt_rank, 16);
    for (int i = 0; i < N; i++)
        in[i] = (int)(mt_next(&rng) % 1000);
    nbcx_request r;
    MT_OK(nbcx_iallreduce(in, out, N, NBCX_INT32, NBCX_SUM, comm, &r));
    MT_OK(nbcx_wait(&r));
    MT_MPI(MPI_Allreduce(in, ref, N, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD));
    if (memcmp(out, ref, sizeof out) != 0)
        mt_fail("%s: iallreduce differs from MPI_Allreduce", what);
    /* A large bcast (rendezvous on UCX) */
    enum { M = 1 << 20 };
    char *b = malloc(M), *c = malloc(M);
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
    allreduce_vs_mpi(comm, "mpi");
    MT_OK(nbcx_comm_free(&comm));

    mt_watch("NBCX_TRANSPORT=ucx");
    setenv("NBCX_TRANSPORT", "ucx", 1);
    err = nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm);
#ifdef NBCX_TEST_HAVE_UCX
    if (err != NBCX_SUCCESS) {
        mt_fail("NBCX_TRANSPORT=ucx: %s", nbcx_error_detail(err));
    } else {
        expect_transport(comm, "ucx");
        allreduce_vs_mpi(comm, "ucx");
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
    }
#else
    if (err != NBCX_ERR_TRANSPORT)
        mt_fail("NBCX_TRANSPORT=ucx in a build without UCX: returned %d",
                err);
#endif
    unsetenv("NBCX_TRANSPORT");
    return mt_finish("test_transport", t0);
}
