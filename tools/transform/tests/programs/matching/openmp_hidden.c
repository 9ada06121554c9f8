/* Issue 34: a collective in an OpenMP construct (built with -fopenmp).
 * libclang shows the construct's statement only as a captured statement,
 * without its code: the root's broadcast in "#pragma omp master" was no call
 * the tool saw, so the others' broadcast, alone in its group, became
 * MPI_Ibcast, and the root's blocking MPI_Bcast met it (a hang on 2 ranks).
 * Now the construct's text is read: its broadcast stays blocking, and so
 * does every call that can match it. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, provided, p[4] = { 0, 0, 0, 0 }, q = 0, s = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        p[0] = 7;
        p[1] = 8;
        p[2] = 9;
        p[3] = 10;
#pragma omp parallel
        {
#pragma omp master
            MPI_Bcast(p, 4, MPI_INT, 0, MPI_COMM_WORLD);
        }
        q = 1;
    } else {
        MPI_Bcast(p, 4, MPI_INT, 0, MPI_COMM_WORLD);
        q = 2; /* work after it: worth converting, were it alone */
        q *= 3;
    }
    MPI_Bcast(&q, 1, MPI_INT, 0, MPI_COMM_WORLD);
    s = p[0] + p[1] + p[2] + p[3];
    printf("%d: %d %d\n", rank, s, q);
    MPI_Finalize();
    return 0;
}
