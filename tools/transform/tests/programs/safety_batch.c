/* Issue 18, safety of batched loops: loops of collectives whose operations may not
 * all be in flight together (or that the tool cannot prove so) stay blocking. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    double v[4] = { 0, 0, 0, 0 }, acc[4] = { 0, 0, 0, 0 }, one[1] = { 1 };
    long w[3] = { 0, 0, 0 };
    double *pv = v;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < 4; i++)
        v[i] = rank * 10 + i;
    /* two elements from root i % size: element i + 1 is written again by the next
     * iteration: the order of completion would decide its value */
    for (int i = 0; i < 3; i++)
        MPI_Bcast(&v[i], 2, MPI_DOUBLE, i % size, MPI_COMM_WORLD);
    /* the same element every time */
    for (int i = 0; i < 3; i++)
        MPI_Allreduce(MPI_IN_PLACE, &one[0], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    /* the send buffer is the array received into */
    for (int i = 0; i < 3; i++)
        MPI_Allreduce(&acc[i + 1], &acc[i], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    /* through a pointer (not an array variable) */
    for (int i = 0; i < 4; i++)
        MPI_Bcast(&pv[i], 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    /* a bound that is not a constant */
    for (int i = 0; i < size && i < 4; i++)
        MPI_Bcast(&v[i], 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    /* a statement besides the collective */
    for (int i = 0; i < 4; i++) {
        acc[i] += 1.0;
        MPI_Allreduce(MPI_IN_PLACE, &acc[i], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    /* a datatype that is not the element type */
    for (int i = 0; i < 3; i++)
        w[i] = rank == 0 ? i + 7 : 0;
    for (int i = 0; i < 3; i++)
        MPI_Bcast(&w[i], 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%g %g %g %g %g %g %g %g %g %ld %ld\n", v[0], v[1], v[2], v[3], one[0], acc[0],
               acc[1], acc[2], acc[3], w[0] + w[1], w[2]);
    MPI_Finalize();
    return 0;
}
