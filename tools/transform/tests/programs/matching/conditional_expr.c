/* Collectives reached through a conditional expression, with no `if`: the
 * root's wrapper in one operand of `?:`, `&&`, `||` or GNU `?:`, the other
 * ranks' in another (or in another such expression).  The root's wrapper has
 * work after its collective, the others read the result at once.  Both were
 * taken as called on every rank (only `if`, `switch` and jumps counted as
 * conditions), decided one by one, and the transformed program hung: every
 * call of one collective must be converted alike. */
#include <mpi.h>
#include <stdio.h>

static int root_side(int *p, double *w)
{
    int i;
    p[0] = 7; p[1] = 8; p[2] = 9; p[3] = 10;
    MPI_Bcast(p, 4, MPI_INT, 0, MPI_COMM_WORLD);
    for (i = 0; i < 8; i++)
        w[i] = 0.5 * i;
    w[0] += w[7];
    w[1] += w[6];
    w[2] += w[5];
    return p[0];
}

static int other_side(int *p, double *w)
{
    MPI_Bcast(p, 4, MPI_INT, 0, MPI_COMM_WORLD); /* read at once */
    w[0] = p[0] + p[1] + p[2] + p[3];
    return p[1];
}

static int root_reduce(const double *v, double *s, double *w)
{
    int i;
    MPI_Reduce(v, s, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    for (i = 0; i < 8; i++)
        w[i] += 1.0;
    w[3] = w[4] + w[5];
    w[6] = w[7] * 2.0;
    return 1;
}

static int leaf_reduce(const double *v, double *s)
{
    MPI_Reduce(v, s, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); /* read at once */
    return *s > -1.0;
}

static int root_gather(const int *mine, int *all, double *w)
{
    MPI_Gather(mine, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    w[0] += 0.25;
    w[1] -= 0.25;
    w[2] += 0.5;
    return 1;
}

static int leaf_gather(const int *mine, int *all)
{
    MPI_Gather(mine, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD); /* read at once */
    return all[0] >= 0;
}

int main(int argc, char **argv)
{
    int rank, size, r, i, mine, is_root, all[64];
    int p[4] = {0, 0, 0, 0};
    double v, s = 0.0, w[8] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (i = 0; i < 64; i++)
        all[i] = 0;
    v = rank + 0.5;
    is_root = rank == 0;
    mine = 10 * rank;
    r = rank == 0 ? root_side(p, w) : other_side(p, w);
    r += (rank == 0 && root_reduce(&v, &s, w)) || leaf_reduce(&v, &s);
    r += rank ?: root_gather(&mine, all, w);
    r += is_root ?: leaf_gather(&mine, all);
    printf("rank %d r %d p %d %d %d %d s %g w %g %g %g gathered %d\n", rank, r, p[0], p[1],
           p[2], p[3], rank == 0 ? s : 0.0, w[0], w[3], w[6], rank == 0 ? all[size - 1] : 0);
    MPI_Finalize();
    return 0;
}
