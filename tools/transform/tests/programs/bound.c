/* Issue 34: the bound beside the overlap (FileTransform.bound): the statements
 * to the first one that touches the call's buffers, passing what the placement
 * cannot see through or cross. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

void external_work(double *w, int n); /* defined in no file given */

static void die(const char *msg)
{
    fprintf(stderr, "%s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* An unknown call stops the wait; the bound passes it and counts to the read. */
static double unknown_call(int n)
{
    double loc = n, sum = 0, w[4] = { 0, 0, 0, 0 };
    MPI_Allreduce(&loc, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    w[0] = 1;
    external_work(w, 4);
    w[1] = 2;
    w[2] = 3;
    return sum + w[1] + w[2];
}

/* The bound stops at the same read the wait does: no gap. */
static double no_gap(int n)
{
    double loc = n, sum = 0, a = 0, b = 0;
    MPI_Allreduce(&loc, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    a = n * 2.0;
    b = a + 1;
    return sum + a + b;
}

/* A preprocessor directive (not an #if group) stops the wait; the bound passes it. */
static double directive(int n)
{
    double loc = n, sum = 0, a = 0, b = 0;
    MPI_Allreduce(&loc, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    a = n * 2.0;
#define BOUND_TWO 2
    a += BOUND_TWO;
    b = a + 1;
    return sum + a + b;
}

/* MPI_Abort (in die()) stops the wait; the bound passes it (it ends every
 * rank), but not MPI_Barrier, an order it keeps. */
static double aborts(int n)
{
    double loc = n, sum = 0, a = 0, b = 0;
    MPI_Allreduce(&loc, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    a = n * 2.0;
    if (n < 0)
        die("negative");
    b = a + 1;
    MPI_Barrier(MPI_COMM_WORLD);
    a += b;
    return sum + a;
}

/* In a loop: the wait is carried to the next iteration's read, the bound too. */
static double loop(int n)
{
    double loc = 0, sum = 0, acc = 0;
    for (int it = 0; it < n; it++) {
        acc += it;
        acc += sum;
        loc = it + 1.0;
        MPI_Allreduce(&loc, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        acc *= 0.5;
        acc += it;
    }
    return acc + sum;
}

static int my_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

/* The rank from a function: no rank test for the tool, but the call is in the
 * branch of "me == 0", so the bound does not place the other ranks' wait there. */
static double root_branch(void)
{
    int me = my_rank();
    double v = 0, t = 0, u = 0;
    if (me == 0) {
        v = 1;
        MPI_Bcast(&v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        v = 2;
        t = 3;
        u = 4;
    } else {
        MPI_Bcast(&v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        t = v;
    }
    return v + t + u;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double r = unknown_call(3) + no_gap(4) + directive(5) + aborts(6) + loop(7) +
               root_branch();
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("%.3f\n", r);
    MPI_Finalize();
    return 0;
}
