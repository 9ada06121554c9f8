/* Issue 34: calls through a local function pointer that is only ever set to
 * functions of this file take the union of their effects; any other pointer
 * stays a call of unknown effects. */
#include <mpi.h>
#include <stdio.h>

static double g_send[2];

static void scale(double *w, int n)
{
    for (int i = 0; i < n; i++)
        w[i] *= 2;
}

static void shift(double *w, int n)
{
    for (int i = 0; i < n; i++)
        w[i] += 1;
}

/* writes the global that a reduction sends */
static void bump_global(double *w, int n)
{
    g_send[0] += w[0] + n;
}

/* Through op (scale or shift, on w only): the wait comes after both calls. */
static double both_sides(int rank, int iters)
{
    double loc[2], sum[2] = { 0, 0 }, w[4] = { 1, 2, 3, 4 }, acc = 0;
    void (*op)(double *, int) = rank % 2 ? scale : shift;
    for (int it = 0; it < iters; it++) {
        loc[0] = rank + it;
        loc[1] = 2.0 * rank;
        MPI_Allreduce(loc, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        op(w, 4);
        (*op)(w + 1, 3);
        acc += sum[0] + sum[1] + w[0] + w[3];
    }
    return acc;
}

/* The pointer may be bump_global, which writes the send buffer: the wait
 * comes before the call. */
static double writes_send(int rank, int iters)
{
    double sum[2] = { 0, 0 }, w[4] = { 1, 2, 3, 4 }, acc = 0;
    void (*op)(double *, int) = &scale;
    if (iters > 2)
        op = bump_global;
    for (int it = 0; it < iters; it++) {
        g_send[0] = rank + it;
        g_send[1] = it;
        MPI_Allreduce(g_send, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        w[1] += 1;
        op(w, 4);
        acc += sum[0] + sum[1] + w[1];
    }
    return acc + g_send[0];
}

/* The pointer is given the receive buffer: the wait comes before the call. */
static double reads_recv(int rank)
{
    double loc = rank + 1, sum = 0, t = 0;
    void (*op)(double *, int) = shift;
    MPI_Allreduce(&loc, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    t = loc * 3;
    op(&sum, 1);
    return sum + t;
}

/* The pointer's address is taken: it may be set through pp, its calls stay
 * of unknown effects. */
static double address_taken(int rank, void (**out)(double *, int))
{
    double loc = rank + 1, sum = 0, w[2] = { 1, 1 };
    void (*op)(double *, int) = scale;
    void (**pp)(double *, int) = &op;
    *out = *pp;
    MPI_Allreduce(&loc, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    w[0] = 2;
    op(w, 2);
    w[1] = 3;
    return sum + w[0] + w[1];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    void (*got)(double *, int) = NULL;
    double r = both_sides(rank, 5) + writes_send(rank, 4) + reads_recv(rank) +
               address_taken(rank, &got);
    double all[1] = { 0 };
    MPI_Reduce(&r, all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%.3f %d\n", all[0], got == scale);
    MPI_Finalize();
    return 0;
}
