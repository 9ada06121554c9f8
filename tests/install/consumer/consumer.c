/* A program outside the nbcx tree: an iallreduce checked against MPI. */
#include <stdio.h>

#include <nbcx_mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, sum = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    nbcx_comm comm;
    nbcx_request req;
    int err = nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm);
    if (!err)
        err = nbcx_iallreduce(&rank, &sum, 1, NBCX_INT32, NBCX_SUM, comm, &req);
    if (!err)
        err = nbcx_wait(&req);
    nbcx_comm_free(&comm);
    int ok = !err && sum == size * (size - 1) / 2;
    if (rank == 0)
        printf("consumer: %s\n", ok ? "ok" : nbcx_error_string(err));
    MPI_Finalize();
    return ok ? 0 : 1;
}
