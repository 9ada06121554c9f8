/* pmpi_report.c - known call sites for NBCX_PMPI_REPORT (check_report.py).
 *
 * A plain MPI program (built with -g) that makes its collectives from
 * known places: MPI_Iallreduce from two lines of main, MPI_Ibcast from a
 * helper function, a persistent allreduce started several times (where
 * the library has persistent collectives), and an MPI_Ibarrier on an
 * intercommunicator, which the shim sends native. Rank 0 prints one
 * "expect" line per site on stdout: operation, path, calls and bytes
 * summed over the ranks, function, file:line (from __LINE__ on the line
 * of the call). The results are checked too. */
#include "pmpi_test.h"

#define EXPECT(op, path, calls, bytes, fn, line)                            \
    do {                                                                    \
        if (t_rank == 0)                                                    \
            printf("expect %s %s %lld %lld %s %s:%d\n", op, path,           \
                   (long long)(calls), (long long)(bytes), fn,              \
                   "pmpi_report.c", line);                                  \
    } while (0)

/* Work between the start and the wait: the hidden share is not zero. */
static volatile double sink;
static void compute(int n)
{
    double x = 0;
    for (int i = 0; i < n; i++)
        x += (double)i * 1e-9;
    sink = x;
}

static int bcast_line;

__attribute__((noinline)) static void bcast_helper(int *buf, int n)
{
    MPI_Request r;
    MPI_OK(MPI_Ibcast(buf, n, MPI_INT, 0, MPI_COMM_WORLD, &r)); bcast_line = __LINE__;
    compute(20000);
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, -1);
    enum { NA = 100, RA = 10, NB = 7, RB = 3, NC = 16, RC = 4, RP = 5 };
    int a_in[NA], a_out[NA];
    double b_in[NB], b_out[NB];
    int line_a = 0, line_b = 0, line_p = 0, line_x = 0;
    for (int i = 0; i < NA; i++)
        a_in[i] = i + t_rank;
    for (int i = 0; i < NB; i++)
        b_in[i] = 0.5 * (i + t_rank);

    t_step = "iallreduce, two lines";
    for (int k = 0; k < RA; k++) {
        MPI_Request r;
        MPI_OK(MPI_Iallreduce(a_in, a_out, NA, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r)); line_a = __LINE__;
        compute(20000);
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        for (int i = 0; i < NA; i++)
            CHECK(a_out[i] == t_size * i + t_size * (t_size - 1) / 2);
    }
    for (int k = 0; k < RB; k++) {
        MPI_Request r;
        int flag = 0;
        MPI_OK(MPI_Iallreduce(b_in, b_out, NB, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &r)); line_b = __LINE__;
        while (!flag)
            MPI_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
        for (int i = 0; i < NB; i++)
            CHECK(b_out[i] == 0.5 * (i + t_size - 1));
    }

    t_step = "ibcast in a helper";
    for (int k = 0; k < RC; k++) {
        int c[NC];
        for (int i = 0; i < NC; i++)
            c[i] = t_rank == 0 ? 1000 * k + i : -1;
        bcast_helper(c, NC);
        for (int i = 0; i < NC; i++)
            CHECK(c[i] == 1000 * k + i);
    }

#if HAVE_P
    t_step = "persistent allreduce";
    {
        MPI_Request r;
        long v = t_rank + 1, s = 0;
        MPI_OK(P(Allreduce)(&v, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r)); line_p = __LINE__;
        for (int k = 0; k < RP; k++) {
            s = 0;
            MPI_OK(MPI_Start(&r));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            CHECK(s == (long)t_size * (t_size + 1) / 2);
        }
        MPI_OK(MPI_Request_free(&r));
    }
#endif

    t_step = "ibarrier on an intercommunicator (native)";
    if (t_size >= 2) {
        MPI_Comm half, inter;
        int color = t_rank % 2;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color, t_rank, &half));
        MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 7, &inter));
        MPI_Request r;
        MPI_OK(MPI_Ibarrier(inter, &r)); line_x = __LINE__;
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }

    EXPECT("iallreduce", "nbcx", RA * t_size,
           RA * t_size * NA * (long long)sizeof(int), "main", line_a);
    EXPECT("iallreduce", "nbcx", RB * t_size,
           RB * t_size * NB * (long long)sizeof(double), "main", line_b);
    EXPECT("ibcast", "nbcx", RC * t_size,
           RC * t_size * NC * (long long)sizeof(int), "bcast_helper",
           bcast_line);
    if (HAVE_P)
        EXPECT("allreduce_init", "nbcx", RP * t_size,
               RP * t_size * (long long)sizeof(long), "main", line_p);
    if (t_size >= 2)
        EXPECT("ibarrier", "native", t_size, 0, "main", line_x);
    fflush(stdout);
    return t_finish("pmpi_report");
}
