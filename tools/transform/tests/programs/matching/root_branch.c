/* Issue 34's reproducer: the root broadcasts in one branch, the other ranks in
 * the other.  The root's first broadcast has work after it, the others read
 * theirs at once: both must become MPI_Ibcast, or neither. */
#include <mpi.h>
#include <stdio.h>

/* the rank from a helper, as many codes have it (getMyRank(), ...) */
static int get_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

int main(int argc, char **argv)
{
    int rank, size;
    int p[4] = {0, 0, 0, 0};
    double o[2] = {0.0, 0.0};
    int s = 0;
    MPI_Init(&argc, &argv);
    rank = get_rank();
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        p[0] = 7; p[1] = 8; p[2] = 9; p[3] = 10;
        MPI_Bcast(p, 4, MPI_INT, 0, MPI_COMM_WORLD);
        o[0] = 2.5; o[1] = 3.5;                    /* work after it: converted */
        MPI_Bcast(o, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        s = p[0] + p[1] + p[2] + p[3];
    } else {
        MPI_Bcast(p, 4, MPI_INT, 0, MPI_COMM_WORLD);  /* read at once */
        s = p[0] + p[1] + p[2] + p[3];
        MPI_Bcast(o, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    int t = 0;
    double u = 0.0, w = o[0] + o[1];
    MPI_Reduce(&s, &t, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&w, &u, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("ranks %d: sum %d, o %.1f\n", size, t, u);
    MPI_Finalize();
    return 0;
}
