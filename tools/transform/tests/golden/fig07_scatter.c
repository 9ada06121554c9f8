/* Paper 004, Fig. 7: an MPI_Scatter whose wait belongs at different places on
 * the root (which overwrites the send buffer right away) and on the others
 * (which only need the received part later). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define LEN 4

/* "nums = do_computation()": overwrites the array that was scattered. */
static void do_computation(float *nums, int n)
{
    for (int i = 0; i < n; i++)
        nums[i] = nums[i] * 2.0f + 1.0f;
}

int main(int argc, char **argv)
{
    MPI_Request nbcx_req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int rank, size;
    const int root = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int len = LEN;
    float *nums = calloc((size_t)(LEN * size), sizeof(float));
    if (rank == root) {
        for (int i = 0; i < len * size; i++)
            nums[i] = (float)i;
    }
    float sub_nums[LEN];
    MPI_Iscatter(nums, len, MPI_FLOAT, sub_nums, len, MPI_FLOAT, root, MPI_COMM_WORLD, &nbcx_req[0]);
    if (rank == root) {
        MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
    }
    do_computation(nums, len * size);
    float local = 0.0f;
    if (rank != root) {
        MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < len; i++)
        local += sub_nums[i] * (float)(rank + 1);
    float total = 0.0f;
    MPI_Ireduce(&local, &total, 1, MPI_FLOAT, MPI_SUM, root, MPI_COMM_WORLD, &nbcx_req[1]);
    if (rank == root) {
        MPI_Wait(&nbcx_req[1], MPI_STATUS_IGNORE);
        printf("weighted sum of the scattered values: %.1f; nums[1] after computation: %.1f\n",
               total, nums[1]);
    }
    free(nums);
    if (rank != root) {
        MPI_Wait(&nbcx_req[1], MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
