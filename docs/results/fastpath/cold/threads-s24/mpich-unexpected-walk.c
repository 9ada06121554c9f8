/* mpich-unexpected-walk.c - no nbcx: T threads per rank, each on its own
 * communicator (MPI_Comm_dup), rank 0 sends N messages of 8 bytes
 * (MPI_Send: eager, complete once buffered), rank 1 receives them
 * (MPI_Irecv of a specific source and tag, then MPI_Test until done: a
 * receiver that polls, as nbcx's waits do; with MPI_Recv the sender did
 * not run ahead here). Prints each rank's aggregate messages per second
 * (T * N over its slowest thread's time). With K > 0, both ranks'
 * threads MPI_Barrier on their communicator every K messages.
 *   mpicc.mpich -O2 -pthread mpich-unexpected-walk.c -o walk
 *   mpiexec.mpich -n 2 ./walk THREADS N [K [US]]
 * US: rank 1 spins US microseconds after each receive (outside MPI),
 * so that the sender is the faster side, as an ibcast root is.
 */
/* Session 25, issue 35: a start on a reproducer without nbcx; see
 * README.md, "The MPICH ibcast collapse: cause". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>

static int rank, n, k, d;

static void spin(int us)
{
    double end = MPI_Wtime() + us * 1e-6;
    while (MPI_Wtime() < end)
        ;
}
struct th { pthread_t t; MPI_Comm c; double s; };

static void *work(void *a)
{
    struct th *w = a;
    int buf[2] = { 1, 2 };
    MPI_Barrier(w->c);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        if (rank == 0)
            MPI_Send(buf, 2, MPI_INT, 1, 0, w->c);
        else
        {
            MPI_Request q;
            int f = 0;
            MPI_Irecv(buf, 2, MPI_INT, 0, 0, w->c, &q);
            while (!f)
                MPI_Test(&q, &f, MPI_STATUS_IGNORE);
            spin(d);
        }
        if (k && (i + 1) % k == 0)
            MPI_Barrier(w->c);
    }
    w->s = MPI_Wtime() - t0;
    return NULL;
}

int main(int argc, char **argv)
{
    int p, t = argc > 1 ? atoi(argv[1]) : 4;
    n = argc > 2 ? atoi(argv[2]) : 100000;
    k = argc > 3 ? atoi(argv[3]) : 0;
    d = argc > 4 ? atoi(argv[4]) : 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    struct th w[64];
    for (int i = 0; i < t; i++)
        MPI_Comm_dup(MPI_COMM_WORLD, &w[i].c);
    for (int i = 0; i < t; i++)
        pthread_create(&w[i].t, NULL, work, &w[i]);
    double slow = 0;
    for (int i = 0; i < t; i++) {
        pthread_join(w[i].t, NULL);
        slow = w[i].s > slow ? w[i].s : slow;
    }
    printf("rank %d: %d threads, %d messages each, sync %d, receiver spins %d us: %.0f messages/s\n",
           rank, t, n, k, d, t * n / slow);
    for (int i = 0; i < t; i++)
        MPI_Comm_free(&w[i].c);
    MPI_Finalize();
    return 0;
}
