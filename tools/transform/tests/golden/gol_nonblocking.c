/* Game of Life, nonblocking, as in paper 004, Fig. 16 (a): the inner cells
 * are computed while the halos travel.  Both nonblocking collectives have
 * loop-invariant arguments: the tool makes them persistent (Fig. 16 (b)). */
#include <mpi.h>
/* nbcx-transform: NBCX_PERSISTENT selects the persistent collectives: 4 for the
 * MPI-4 names, 1 for Open MPI 4's MPIX_*_init (mpi-ext.h), 0 for the nonblocking
 * forms where there are none or they are unreliable (MPICH before 4.3 returns
 * stale data from some, e.g. MPI_Allgather_init, MPI_Gather_init). */
#ifndef NBCX_PERSISTENT
#if MPI_VERSION >= 4 && !(defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40300000)
#define NBCX_PERSISTENT 4
#elif defined(OPEN_MPI)
#include <mpi-ext.h>
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
#define NBCX_PERSISTENT 1
#else
#define NBCX_PERSISTENT 0
#endif
#else
#define NBCX_PERSISTENT 0
#endif
#endif
#include <stdio.h>
#include <stdlib.h>

#include "gol_common.h"

int main(int argc, char **argv)
{
    MPI_Request nbcx_req[1] = {MPI_REQUEST_NULL};
    int nbcx_flag[1] = {0};
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
#if NBCX_PERSISTENT
    reqs[0] = MPI_REQUEST_NULL;
    reqs[1] = MPI_REQUEST_NULL;
#endif
    for (k = 0; k < NTIMES && gflag != 0; k++) {
        gflag = 0;
        // start boundary exchange
#if NBCX_PERSISTENT
        if (reqs[0] == MPI_REQUEST_NULL) {
#if NBCX_PERSISTENT == 4
            MPI_Neighbor_alltoallw_init(life, sendcounts, sdispls, sendtypes, life, recvcounts, rdispls, recvtypes, commgraph, MPI_INFO_NULL, &reqs[0]);
#else
            MPIX_Neighbor_alltoallw_init(life, sendcounts, sdispls, sendtypes, life, recvcounts, rdispls, recvtypes, commgraph, MPI_INFO_NULL, &reqs[0]);
#endif
        }
        MPI_Start(&reqs[0]);
#else
        MPI_Ineighbor_alltoallw(life, sendcounts, sdispls, sendtypes, life, recvcounts, rdispls,
                                recvtypes, commgraph, &reqs[0]);
#endif
        // compute inner cells
        flag = compute_inner(life, temp, myM, myN);
        // wait for boundary exchange to complete
        MPI_Wait(&reqs[0], &stats[0]);
        // compute boundary cells
        flag += compute_boundary(life, temp, myM, myN);
#if NBCX_PERSISTENT
        if (reqs[1] == MPI_REQUEST_NULL) {
#if NBCX_PERSISTENT == 4
            MPI_Allreduce_init(&flag, &gflag, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[1]);
#else
            MPIX_Allreduce_init(&flag, &gflag, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[1]);
#endif
        }
        MPI_Start(&reqs[1]);
#else
        MPI_Iallreduce(&flag, &gflag, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[1]);
#endif
        MPI_Wait(&reqs[1], &stats[1]);
        if (gflag != 0) {
            memcpy(life + myN, temp + myN, sizeof(int) * (size_t)(myM * myN));
        }
    }
#if NBCX_PERSISTENT
    if (reqs[0] != MPI_REQUEST_NULL) {
        MPI_Request_free(&reqs[0]);
    }
    if (reqs[1] != MPI_REQUEST_NULL) {
        MPI_Request_free(&reqs[1]);
    }
#endif

    int alive = 0, total = 0;
    for (int i = myN; i < (myM + 1) * myN; i++)
        alive += life[i];
    MPI_Ireduce(&alive, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &nbcx_req[0]);
    nbcx_flag[0] = 1;
    if (rank == 0) {
        MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
        nbcx_flag[0] = 0;
        printf("after %d steps: %d cells alive, last change count %d\n", k, total, gflag);
    }
    MPI_Type_free(&row);
    MPI_Comm_free(&commgraph);
    free(life);
    free(temp);
    if (nbcx_flag[0]) {
        MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
        nbcx_flag[0] = 0;
    }
    MPI_Finalize();
    return 0;
}
