/* pmpi_onerank.c - an erroneous collective on one rank only, as the first
 * nonblocking or persistent collective on its communicator, under the
 * shim.
 *
 * The shim joins a communicator to nbcx at each rank's first such call, a
 * step all ranks take together. A rank whose first call has arguments
 * that rank alone can see are erroneous (a negative count, a root outside
 * the communicator, MPI_OP_NULL) must get its error at once, as from a
 * checking MPI library, and not wait in that step for ranks that never
 * come (they go on with a blocking barrier here). Then every rank makes
 * a valid call on the same communicator, which must give the native
 * blocking collective's result. Each case on its own duplicate of
 * MPI_COMM_WORLD with MPI_ERRORS_RETURN; the erring rank is the last one.
 * Without the early refusal the erring rank hangs (the watchdog fails
 * the test). */
#include "pmpi_test.h"

enum { N = 5 };

static MPI_Comm fresh(void)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
}

/* The erring rank's call gave rc and left *q: want error class `want`
 * and no request. */
static void refused(int rc, MPI_Request *q, int want)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (rc == MPI_SUCCESS)
        FAIL("the erroneous call succeeded (want class %d)", want);
    else if (cls != want)
        FAIL("error class %d (want %d)", cls, want);
    if (*q != MPI_REQUEST_NULL)
        FAIL("a refused call left a request");
}

/* Every rank: a valid ibcast and iallreduce on c, against the blocking
 * native calls on MPI_COMM_WORLD. */
static void valid_after(MPI_Comm c)
{
    int b[N], ref[N], in[N], out[N], rsum[N];
    for (int i = 0; i < N; i++) {
        b[i] = ref[i] = t_rank == 0 ? 40 + i : -1;
        in[i] = t_rank * 10 + i;
    }
    MPI_Request q[2];
    MPI_OK(MPI_Ibcast(b, N, MPI_INT, 0, c, &q[0]));
    MPI_OK(MPI_Iallreduce(in, out, N, MPI_INT, MPI_SUM, c, &q[1]));
    MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    MPI_Bcast(ref, N, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allreduce(in, rsum, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (memcmp(b, ref, sizeof b) || memcmp(out, rsum, sizeof out))
        FAIL("the valid calls after the error differ from MPI's");
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, MPI_THREAD_MULTIPLE);
    const int erring = t_size - 1;
    int buf[N * 8] = { 0 }, out[N * 8] = { 0 };
    static const char *const cases[] = {
        "ibcast count -1", "igather root = size", "iallreduce MPI_OP_NULL",
        "iscatter negative sendcount at the root", "ireduce root -1",
        "iallgather recvcount -1", "bcast_init count -1",
    };
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    for (int k = 0; k < ncases; k++) {
        t_step = cases[k];
        MPI_Comm c = fresh();
        if (t_rank == erring) {
            MPI_Request q = MPI_REQUEST_NULL;
            int rc = MPI_SUCCESS, want = MPI_ERR_COUNT;
            switch (k) {
            case 0:
                rc = MPI_Ibcast(buf, -1, MPI_INT, 0, c, &q);
                break;
            case 1:
                rc = MPI_Igather(buf, 1, MPI_INT, out, 1, MPI_INT, t_size,
                                 c, &q);
                want = MPI_ERR_ROOT;
                break;
            case 2:
                rc = MPI_Iallreduce(buf, out, 1, MPI_INT, MPI_OP_NULL, c,
                                    &q);
                want = MPI_ERR_OP;
                break;
            case 3: /* the erring rank is the root */
                rc = MPI_Iscatter(buf, -2, MPI_INT, out, 1, MPI_INT, erring,
                                  c, &q);
                break;
            case 4:
                rc = MPI_Ireduce(buf, out, 1, MPI_INT, MPI_SUM, -1, c, &q);
                want = MPI_ERR_ROOT;
                break;
            case 5:
                rc = MPI_Iallgather(buf, 1, MPI_INT, out, -1, MPI_INT, c,
                                    &q);
                break;
            case 6:
#if HAVE_P
                rc = P(Bcast)(buf, -1, MPI_INT, 0, c, MPI_INFO_NULL, &q);
#else
                rc = MPI_ERR_COUNT; /* no persistent collectives here */
#endif
                break;
            }
            refused(rc, &q, want);
        }
        /* the other ranks never make that call: they go on */
        MPI_Barrier(c);
        valid_after(c);
        MPI_Comm_free(&c);
    }
    t_step = "end";
    return t_finish("pmpi_onerank");
}
