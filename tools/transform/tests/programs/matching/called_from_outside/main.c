/* The root's and the others' wrappers are called on every rank from main, and
 * also from dispatch() in dispatch.c, on some ranks only.  Given alone (with
 * -p: dispatch.c is in compile_commands.json), main.c's wrappers looked called
 * from main only, on every rank; their broadcasts were decided one by one
 * (root_side's MPI_Ibcast, other_side's MPI_Bcast) and dispatch() made them
 * meet: the program hung.  A function whose name the files not given use may
 * be called from there. */
#include <mpi.h>
#include <stdio.h>

void dispatch(int rank, int *p, double *w);

void root_side(int *p, double *w)
{
    int i;
    double t[8];
    MPI_Bcast(p, 4, MPI_INT, 0, MPI_COMM_WORLD);
    for (i = 0; i < 8; i++)
        t[i] = 0.5 * i;
    t[0] += t[7];
    w[0] += t[0];
}

void other_side(int *p, double *w)
{
    MPI_Bcast(p, 4, MPI_INT, 0, MPI_COMM_WORLD); /* read at once */
    w[0] += p[0] + p[1] + p[2] + p[3];
}

int main(int argc, char **argv)
{
    int rank, p[4] = {1, 2, 3, 4};
    double w[1] = {0.0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    root_side(p, w);
    other_side(p, w);
    dispatch(rank, p, w);
    printf("rank %d p %d w %g\n", rank, p[0], w[0]);
    MPI_Finalize();
    return 0;
}
