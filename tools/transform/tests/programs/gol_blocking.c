/* Game of Life with a blocking neighbourhood exchange and a blocking
 * reduction of the "something changed" flag (the blocking form of paper 004,
 * Fig. 16); both are loop-invariant and become persistent. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "gol_common.h"

int main(int argc, char **argv)
{
    int rank, size, k;
    MPI_Comm commgraph;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int dims[1] = {size}, periods[1] = {0};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &commgraph);
    MPI_Comm_rank(commgraph, &rank);
    int myM = MYROWS, myN = NX;
    int *life = malloc(sizeof(int) * (size_t)((myM + 2) * myN));
    int *temp = malloc(sizeof(int) * (size_t)((myM + 2) * myN));
    seed(life, rank, myM, myN);
    memcpy(temp, life, sizeof(int) * (size_t)((myM + 2) * myN));

    MPI_Datatype row;
    MPI_Type_contiguous(myN, MPI_INT, &row);
    MPI_Type_commit(&row);
    int sendcounts[2] = {1, 1}, recvcounts[2] = {1, 1};
    MPI_Aint sdispls[2] = {(MPI_Aint)(sizeof(int) * (size_t)myN),
                           (MPI_Aint)(sizeof(int) * (size_t)(myM * myN))};
    MPI_Aint rdispls[2] = {0, (MPI_Aint)(sizeof(int) * (size_t)((myM + 1) * myN))};
    MPI_Datatype sendtypes[2] = {row, row}, recvtypes[2] = {row, row};

    int flag = 0, gflag = 1;
    for (k = 0; k < NTIMES; k++) {
        gflag = 0;
        /* boundary exchange */
        MPI_Neighbor_alltoallw(life, sendcounts, sdispls, sendtypes, life, recvcounts, rdispls,
                               recvtypes, commgraph);
        /* compute inner cells */
        flag = compute_inner(life, temp, myM, myN);
        /* compute boundary cells */
        flag += compute_boundary(life, temp, myM, myN);
        MPI_Allreduce(&flag, &gflag, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        memcpy(life + myN, temp + myN, sizeof(int) * (size_t)(myM * myN));
        if (gflag == 0)
            break;
    }

    int alive = 0, total = 0;
    for (int i = myN; i < (myM + 1) * myN; i++)
        alive += life[i];
    MPI_Reduce(&alive, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("after %d steps: %d cells alive, last change count %d\n", k, total, gflag);
    MPI_Type_free(&row);
    MPI_Comm_free(&commgraph);
    free(life);
    free(temp);
    MPI_Finalize();
    return 0;
}
