/* nbcx without MPI: 4 ranks that are threads of this process, each
 * starting an allreduce, computing, then waiting (the README's C quick
 * start). Build: cc threads.c $(pkg-config --cflags --libs nbcx). */
#include <nbcx.h>
#include <stdio.h>

static int body(nbcx_comm comm, void *arg)      /* runs on every rank */
{
    (void)arg;
    int rank;
    nbcx_comm_rank(comm, &rank);
    double x = rank + 1, sum = 0;
    nbcx_request req;
    nbcx_iallreduce(&x, &sum, 1, NBCX_DOUBLE, NBCX_SUM, comm, &req);
    /* ... compute while the allreduce moves ... */
    int err = nbcx_wait(&req);
    printf("rank %d: sum %g\n", rank, sum);
    return err;
}

int main(void)
{
    return nbcx_inproc_run(4, body, NULL) == NBCX_SUCCESS ? 0 : 1;
}
