/*
 * test_timeout.c - a dead or stuck rank: the others time out.
 *
 *   test_timeout never   the last rank never joins a collective (it
 *                        waits in MPI_Barrier instead). The others set a
 *                        1 s timeout (nbcx_comm_set_timeout), start an
 *                        iallreduce and an ibarrier, and must see both
 *                        end with NBCX_ERR_TIMEOUT within the timeout
 *                        plus 1 s, with one diagnosis on stderr naming
 *                        the operation, its sequence number, algorithm
 *                        and a pending node with peer rank and tag; then
 *                        later starts on the communicator fail at once
 *                        with NBCX_ERR_TIMEOUT and it is freed. A new
 *                        communicator then works on every rank.
 *   test_timeout killed  the last rank is killed (SIGKILL) in the middle
 *                        of an iallreduce (ring: every survivor needs
 *                        its later steps): it starts it, sends its first
 *                        step and dies; the others start it 0.2 s later.
 *                        One iallreduce succeeded before;
 *                        NBCX_TIMEOUT=1 (the environment) on the others,
 *                        who must end as above. They cannot use
 *                        MPI_COMM_WORLD collectives any more: they report
 *                        to rank 0 point-to-point, rank 0 prints the
 *                        verdict, and they exit without MPI_Finalize
 *                        (which needs the dead rank). Open MPI runs it
 *                        with --enable-recovery (the job survives the
 *                        death); CTest judges the output (see
 *                        CMakeLists.txt: MPICH's mpiexec cannot keep
 *                        the survivors' job alive).
 */
#include <stdbool.h>
#include <time.h>

#include "capture.h"
#include "mpitest.h"

enum { N = 256 };
static const double TIMEOUT = 1.0;

/* ---- stderr capture (this rank's fd 2, capture.h) ---- */

/* The test's watchdog fired while stderr was captured: its message and
 * what was captured go to the real stderr (async-signal-safe calls). */
static void uncapture_on_timeout(void)
{
    static const char msg[] = "\nWATCHDOG (stderr was captured): ";
    char buf[4096];
    ssize_t n;
    off_t off = 0;
    int saved_fd = capture_saved_fd(), captured_fd = capture_file_fd();
    if (saved_fd < 0 || captured_fd < 0)
        return;
    if (write(saved_fd, msg, sizeof msg - 1) < 0 ||
        write(saved_fd, mt_step, mt_step_len) < 0 ||
        write(saved_fd, "\n", 1) < 0)
        return;
    while ((n = pread(captured_fd, buf, sizeof buf, off)) > 0) {
        if (write(saved_fd, buf, (size_t)n) < 0)
            return;
        off += n;
    }
}

/* Captures stderr (capture_begin), with the watchdog hook; a rank that
 * cannot ends the job. */
static void capture_start(void)
{
    mt_on_timeout = uncapture_on_timeout;
    if (!capture_begin()) {
        fprintf(stdout, "[rank %d] cannot capture stderr\n", mt_rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* ---- what the survivors check ---- */

/* Waits for the operations the survivors started, expecting a timeout
 * and a diagnosis within the timeout plus 1 s (t0: when they started,
 * with stderr captured already: capture_begin); then checks that the
 * communicator is broken, and frees it. */
static void expect_timeout(nbcx_comm *comm, nbcx_request *reqs, int nreqs,
                           double t0, int *in, int *out)
{
    mt_watch("waiting for the timeout");
    for (int i = 0; i < nreqs; i++) {
        int rc = nbcx_wait(&reqs[i]);
        if (rc != NBCX_ERR_TIMEOUT)
            mt_fail("operation %d ended with %d (%s), expected "
                    "NBCX_ERR_TIMEOUT", i, rc, nbcx_error_string(rc));
        if (reqs[i] != NBCX_REQUEST_NULL)
            mt_fail("request %d not freed by the wait", i);
    }
    double took = MPI_Wtime() - t0;
    /* Broken: every later start fails at once, with no new diagnosis. */
    mt_watch("starts on the broken communicator");
    nbcx_request r = NBCX_REQUEST_NULL;
    double t1 = MPI_Wtime();
    int rc1 = nbcx_iallreduce(in, out, N, NBCX_INT32, NBCX_SUM, *comm, &r);
    int rc2 = nbcx_ibarrier(*comm, &r);
    int rc3 = nbcx_barrier_init(*comm, &r);
    double t2 = MPI_Wtime();
    char *text = capture_end();
    if (rc1 != NBCX_ERR_TIMEOUT || rc2 != NBCX_ERR_TIMEOUT ||
        rc3 != NBCX_ERR_TIMEOUT || r != NBCX_REQUEST_NULL)
        mt_fail("starts on the broken communicator returned %d %d %d, "
                "expected NBCX_ERR_TIMEOUT (%d)", rc1, rc2, rc3,
                NBCX_ERR_TIMEOUT);
    if (t2 - t1 > 0.2)
        mt_fail("starts on the broken communicator took %.3f s", t2 - t1);
    if (took < TIMEOUT - 0.05 || took > TIMEOUT + 1.0)
        mt_fail("timed out after %.3f s, timeout %.1f s (+1 s allowed)",
                took, TIMEOUT);
    if (capture_count(text, "nbcx: TIMEOUT: ") != 1)
        mt_fail("%d diagnoses on stderr, expected 1",
                capture_count(text, "nbcx: TIMEOUT: "));
    if (!strstr(text, " #") || !strstr(text, "(algorithm ") ||
        !strstr(text, "peer rank ") || !strstr(text, ", tag ") ||
        !strstr(text, "is broken"))
        mt_fail("the diagnosis lacks the sequence number, algorithm, or "
                "a pending node with peer rank and tag");
    free(text);
    MT_OK(nbcx_comm_free(comm));
}

/* Starts an iallreduce and an ibarrier; returns how many started. In
 * split mode the start of a tree-shaped operation runs the application
 * thread's share of its first levels, which may wait for the missing
 * rank until the timeout: the communicator is then broken before the
 * ibarrier, which must fail at once. */
static int start_ops(nbcx_comm comm, nbcx_request *reqs, int *in, int *out)
{
    MT_OK(nbcx_iallreduce(in, out, N, NBCX_INT32, NBCX_SUM, comm,
                          &reqs[0]));
    int rc = nbcx_ibarrier(comm, &reqs[1]);
    if (rc == NBCX_ERR_TIMEOUT && mt_mode == NBCX_PROGRESS_SPLIT)
        return 1;
    if (rc != NBCX_SUCCESS)
        mt_fail("nbcx_ibarrier returned %d (%s)", rc, nbcx_error_string(rc));
    return rc == NBCX_SUCCESS ? 2 : 1;
}

static void test_never(void)
{
    static int in[N], out[N];
    int last = mt_size - 1;
    for (int i = 0; i < N; i++)
        in[i] = mt_rank + i;
    nbcx_comm comm = NBCX_COMM_NULL;
    mt_watch("never: setup");
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
    if (mt_rank != last) {
        double t = 0;
        MT_OK(nbcx_comm_set_timeout(comm, TIMEOUT));
        MT_OK(nbcx_comm_get_timeout(comm, &t));
        if (t != TIMEOUT)
            mt_fail("nbcx_comm_get_timeout gave %g, expected %g", t,
                    TIMEOUT);
        nbcx_request reqs[2];
        capture_start();
        double t0 = MPI_Wtime();
        int n = start_ops(comm, reqs, in, out);
        expect_timeout(&comm, reqs, n, t0, in, out);
    }
    /* Everyone meets again; a new communicator works. The rank that
     * never joined keeps its communicator until the end: the others'
     * messages it never received stay in flight (MPI cannot cancel a
     * send), and freeing it would let a new communicator reuse its
     * context and receive them (Open MPI does). */
    mt_watch("never: a new communicator");
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    nbcx_comm stale = comm;
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
    nbcx_request r;
    MT_OK(nbcx_iallreduce(in, out, N, NBCX_INT32, NBCX_SUM, comm, &r));
    MT_OK(nbcx_wait(&r));
    if (mt_rank == last)
        MT_OK(nbcx_comm_free(&stale));
    for (int i = 0; i < N; i++)
        if (out[i] != mt_size * i + mt_size * (mt_size - 1) / 2) {
            mt_fail("allreduce on the new communicator: out[%d] = %d", i,
                    out[i]);
            break;
        }
    MT_OK(nbcx_comm_free(&comm));
    mt_unwatch();
}

/* Returns normally only on rank 0 (which prints the verdict); the other
 * survivors exit, the last rank dies. */
static void test_killed(double t_start)
{
    static int in[N], out[N];
    int last = mt_size - 1;
    for (int i = 0; i < N; i++)
        in[i] = mt_rank + i;
    nbcx_comm comm = NBCX_COMM_NULL;
    mt_watch("killed: setup");
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
    double t = 0;
    MT_OK(nbcx_comm_get_timeout(comm, &t));
    if (t != TIMEOUT)
        mt_fail("NBCX_TIMEOUT=1 gives a timeout of %g s", t);
    nbcx_request reqs[2];
    mt_watch("killed: a first allreduce");
    MT_OK(nbcx_iallreduce(in, out, N, NBCX_INT32, NBCX_SUM, comm,
                          &reqs[0]));
    MT_OK(nbcx_wait(&reqs[0]));
    /* The ring: 2 (p - 1) steps, each needing the previous one's message
     * from the left neighbour. The last rank starts first, posts its
     * first step and dies; the others start 0.2 s later (so that the
     * last rank cannot have their messages and run ahead before it
     * dies) and every one of them stalls in a later step. */
    mt_watch("killed: the allreduce the last rank dies in");
    MT_OK(nbcx_algorithm_set("allreduce", "ring"));
    if (mt_rank == last) {
        MT_OK(nbcx_iallreduce(in, out, N, NBCX_INT32, NBCX_SUM, comm,
                              &reqs[0]));
        fflush(stdout);
        raise(SIGKILL); /* mid-operation */
    }
    struct timespec pause = { 0, 200000000 };
    nanosleep(&pause, NULL);
    capture_start();
    double t0 = MPI_Wtime();
    MT_OK(nbcx_iallreduce(in, out, N, NBCX_INT32, NBCX_SUM, comm,
                          &reqs[0]));
    expect_timeout(&comm, reqs, 1, t0, in, out);
    /* Verdict: the survivors tell rank 0 point-to-point (MPI_COMM_WORLD
     * collectives would need the dead rank). */
    mt_watch("killed: reporting to rank 0");
    int mine = atomic_load(&mt_failures);
    if (mt_rank != 0) {
        MT_MPI(MPI_Send(&mine, 1, MPI_INT, 0, 77, MPI_COMM_WORLD));
        mt_unwatch();
        fflush(stdout);
        fflush(stderr);
        exit(0);
    }
    int total = mine;
    for (int src = 1; src < last; src++) {
        int theirs = 0;
        MT_MPI(MPI_Recv(&theirs, 1, MPI_INT, src, 77, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        total += theirs;
    }
    mt_unwatch();
    printf("test_timeout killed: %d survivor(s), progress=%s, %d "
           "failure(s), %.2f s\n", last, mt_mode_name(mt_mode), total,
           MPI_Wtime() - t_start);
    if (total == 0)
        printf("TEST PASSED\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    double t0 = MPI_Wtime();
    const char *which = argc > 1 ? argv[1] : "";
    if (mt_size < 2) {
        if (mt_rank == 0)
            fprintf(stderr, "test_timeout needs 2 ranks or more\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (!strcmp(which, "never")) {
        test_never();
        return mt_finish("test_timeout never", t0);
    }
    if (!strcmp(which, "killed")) {
        test_killed(t0);
        exit(0); /* rank 0; no MPI_Finalize: a rank is dead */
    }
    if (mt_rank == 0)
        fprintf(stderr, "usage: test_timeout never|killed\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 2;
}
