/* A call that cannot be rewritten (from a macro; its result used) keeps every
 * call of its collective that can match it blocking. */
#include <mpi.h>
#include <stdio.h>

#define SHARE(buf, n) MPI_Bcast(buf, n, MPI_INT, 0, MPI_COMM_WORLD)

static int who(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

int main(int argc, char **argv)
{
    int rank, size, rc, i;
    int p[2] = {0, 0};
    double v = 1.0, s = 0.0, work = 0.0;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank = who();
    if (rank == 0) {
        p[0] = 3; p[1] = 4;
        MPI_Bcast(p, 2, MPI_INT, 0, MPI_COMM_WORLD);
        for (i = 0; i < 10; i++)
            work += i;
    } else {
        SHARE(p, 2);
        work = p[0] * p[1];
    }
    if (rank == 0) {
        v = 2.0;
        MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (i = 0; i < 10; i++)
            work += i;
    } else {
        rc = MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        work += rc;
    }
    double all = 0.0;
    MPI_Reduce(&work, &all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("ranks %d: p %d %d s %.1f all %.1f\n", size, p[0], p[1], s, all);
    MPI_Finalize();
    return 0;
}
