/* A program outside the nbcx tree, no MPI: an iallreduce on 3 thread
 * ranks (nbcx_inproc_run), checked against the sum it must give. */
#include <stdio.h>

#include <nbcx.h>

static int body(nbcx_comm comm, void *arg)
{
    (void)arg;
    int rank, size, sum = -1;
    nbcx_request req;
    int err = nbcx_comm_rank(comm, &rank);
    if (!err)
        err = nbcx_comm_size(comm, &size);
    if (!err)
        err = nbcx_iallreduce(&rank, &sum, 1, NBCX_INT32, NBCX_SUM, comm, &req);
    if (!err)
        err = nbcx_wait(&req);
    if (!err && sum != size * (size - 1) / 2)
        err = NBCX_ERR_INTERN;
    return err;
}

int main(void)
{
    int err = nbcx_inproc_run(3, body, NULL);
    printf("consumer_inproc: %s\n", err ? nbcx_error_string(err) : "ok");
    return err ? 1 : 0;
}
