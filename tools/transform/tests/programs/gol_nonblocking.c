/* Game of Life, nonblocking, as in paper 004, Fig. 16 (a): the inner cells
 * are computed while the halos travel.  Both nonblocking collectives have
 * loop-invariant arguments: the tool makes them persistent (Fig. 16 (b)). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "gol_common.h"

int main(int argc, char **argv)
{
    int rank, size, k;
    MPI_Comm commgraph;
    MPI_Request reqs[2];
    MPI_Status stats[2];
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
    for (k = 0; k < NTIMES && gflag != 0; k++) {
        gflag = 0;
        // start boundary exchange
        MPI_Ineighbor_alltoallw(life, sendcounts, sdispls, sendtypes, life, recvcounts, rdispls,
                                recvtypes, commgraph, &reqs[0]);
        // compute inner cells
        flag = compute_inner(life, temp, myM, myN);
        // wait for boundary exchange to complete
        MPI_Wait(&reqs[0], &stats[0]);
        // compute boundary cells
        flag += compute_boundary(life, temp, myM, myN);
        MPI_Iallreduce(&flag, &gflag, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[1]);
        MPI_Wait(&reqs[1], &stats[1]);
        if (gflag != 0) {
            memcpy(life + myN, temp + myN, sizeof(int) * (size_t)(myM * myN));
        }
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
