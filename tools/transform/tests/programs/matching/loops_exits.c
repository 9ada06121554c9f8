/* Rank-divergent collectives in loops with early exits: a broadcast from both
 * branches of a root test with an early return, an allreduce from both
 * branches of a parity test with a break, and a gather in a loop with a
 * continue.  Calls that could be persistent (loop-invariant arguments) must not
 * be: their *_init calls would not run in the same order on every rank. */
#include <mpi.h>
#include <stdio.h>

static int my_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

/* the root broadcasts candidates until one is large enough; all return it */
static int find(int rank, int *seen)
{
    int x = 0, i;
    for (i = 0; i < 10; i++) {
        if (rank == 0) {
            x = i * 3;
            MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
            *seen += 1;
            *seen += 0;
            if (x > 7)
                return x;
        } else {
            MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
            if (x > 7)
                return x;
            *seen += 1;
        }
    }
    return -1;
}

int main(int argc, char **argv)
{
    int rank, size, it, seen = 0, got;
    double loc = 0.0, glob = 0.0, acc = 0.0, other = 0.0;
    int mine[1], all[64];
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank = my_rank();
    got = find(rank, &seen);
    for (it = 0; it < 20; it++) {
        loc = rank + it;
        if (rank % 2 == 0) {
            MPI_Allreduce(&loc, &glob, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            acc += it * 0.5;
            other += 1.0;
            if (glob > 40.0)
                break;
        } else {
            MPI_Allreduce(&loc, &glob, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            if (glob > 40.0)
                break;
            other += 2.0;
        }
    }
    for (it = 0; it < 4 && size <= 64; it++) {
        mine[0] = rank * 10 + it;
        if (rank == 0) {
            MPI_Gather(mine, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
            acc += all[size - 1];
            continue;
        }
        MPI_Gather(mine, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
        other += 0.5;
    }
    double sum = 0.0;
    MPI_Allreduce(&other, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("ranks %d: got %d seen %d it %d glob %.1f acc %.1f sum %.1f\n", size, got, seen,
               it, glob, acc, sum);
    MPI_Finalize();
    return 0;
}
