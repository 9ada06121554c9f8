/* Issue 34: #ifdef ... #else ... #endif groups between a collective and its
 * wait, and a collective in one branch matched by calls in the other
 * configuration. The tool parses the file without FAST; the output must be
 * right compiled with -DFAST too (before the fix, that build hung: the
 * root's MPI_Bcast in the FAST branch was not seen and stayed blocking
 * while the other ranks' became MPI_Ibcast; and SCALE() wrote the receive
 * buffer of an MPI_Iallreduce still in flight). */
#include <mpi.h>
#include <stdio.h>

#ifdef FAST
#define SCALE(v) ((v) *= 2.0) /* writes the receive buffer */
#else
#define SCALE(v) ((void)0)
#endif

int main(int argc, char **argv)
{
    int rank, p[4] = {0, 0, 0, 0}, s = 0;
    double w[64], acc = 0, x, sum = 0, copy = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* a collective in each branch of a group, matched by the others' */
    if (rank == 0) {
        p[0] = 7;
        p[1] = 8;
        p[2] = 9;
        p[3] = 10;
#ifdef FAST
        MPI_Bcast(p, 4, MPI_INT, 0, MPI_COMM_WORLD);
        for (int i = 0; i < 64; i++)
            w[i] = i * 0.5;
        for (int i = 0; i < 64; i++)
            acc += w[i];
#else
        MPI_Bcast(p, 4, MPI_INT, 0, MPI_COMM_WORLD);
        s = p[0];
#endif
    } else {
        MPI_Bcast(p, 4, MPI_INT, 0, MPI_COMM_WORLD);
        for (int i = 0; i < 64; i++)
            w[i] = i * 0.25;
        for (int i = 0; i < 64; i++)
            acc += w[i];
    }
    /* code in the other branch (and a macro of the other configuration)
     * touches the receive buffer */
    x = rank + 1.0;
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < 64; i++)
        w[i] = w[i] * 0.5;
#ifdef FAST
    for (int i = 0; i < 64; i++)
        acc += w[i];
#else
    copy = sum;
#endif
    SCALE(sum);
    acc += 1.0;
    printf("rank %d: %d %d %d %d %d %g %g %g\n", rank, p[0], p[1], p[2], p[3], s, acc, sum, copy);
    MPI_Finalize();
    return 0;
}
