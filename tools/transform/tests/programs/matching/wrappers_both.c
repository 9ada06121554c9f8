/* A one-collective wrapper called from both branches of a root test: the root
 * has work after its call (its call uses the wrapper's nonblocking twin), the
 * others read the buffer at once.  Every call must issue MPI_Ibcast: the twin,
 * and the wrapper itself (start-then-wait) for the calls left to it. */
#include <mpi.h>
#include <stdio.h>

static int get_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static void share(int *p, int n)
{
    MPI_Bcast(p, n, MPI_INT, 0, MPI_COMM_WORLD);
}

static void share_sum(double *in, double *out)
{
    MPI_Allreduce(in, out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int rank, size, i;
    int p[3] = {0, 0, 0}, q[2] = {0, 0};
    double mine, total = 0.0, work = 0.0;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank = get_rank();
    mine = rank + 0.5;
    if (rank == 0) {
        p[0] = 4; p[1] = 5; p[2] = 6;
        share(p, 3);
        for (i = 0; i < 50; i++)
            work += i * 0.25;
        q[0] = 1; q[1] = 2;
        share(q, 2);
        share_sum(&mine, &total);
        work += 1.0;
        work -= 1.0;
    } else {
        share(p, 3);
        work = p[0] + p[1] + p[2];
        share(q, 2);
        work += q[0] + q[1];
        share_sum(&mine, &total);
    }
    double all = 0.0;
    share_sum(&work, &all);
    if (rank == 0)
        printf("ranks %d: total %.1f all %.2f p %d %d %d\n", size, total, all, p[0], p[1], p[2]);
    MPI_Finalize();
    return 0;
}
