/*
 * test_comm_threads.c - mpi.test_comm_threads.<mode>.np<n> (issue 35):
 * CT_THREADS application threads per rank (MPI_THREAD_MULTIPLE), each on
 * an nbcx communicator of its own (made from an MPI_Comm_dup by the main
 * thread, in the same order on every rank), run many collectives at once,
 * each result checked against a sequential reference computed in the
 * thread (tests/common/comm_threads.h), not against MPI's collectives:
 * the threads then call MPI only through nbcx's transport. Over the MPI
 * transport the threads progress their own communicators at once
 * (engine.c: one progress lock per communicator). ThreadSanitizer runs
 * it in the caller, thread and auto modes on 2 ranks (scripts/test).
 */
#include <pthread.h>

#include "comm_threads.h"
#include "mpitest.h"

static struct ct_worker workers[CT_THREADS];
static MPI_Comm dups[CT_THREADS];

static int rounds(void)
{
    return getenv("NBCX_TEST_QUICK") || mt_size > 2 ? 16 : 80;
}

int main(int argc, char **argv)
{
    double t0 = mt_begin(&argc, &argv);
    pthread_t t[CT_THREADS];
    for (int i = 0; i < CT_THREADS; i++) {
        struct ct_worker *w = &workers[i];
        *w = (struct ct_worker){ .tid = i, .rank = mt_rank, .size = mt_size,
                                 .rounds = rounds(),
                                 .no_calls = ct_thread_completes() };
        atomic_init(&w->done_rounds, 0);
        atomic_init(&w->fired, 0);
        MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dups[i]));
        MT_OK(nbcx_comm_from_mpi(dups[i], &w->comm));
    }
    mt_watch("%d threads on their own communicators", CT_THREADS);
    for (int i = 0; i < CT_THREADS; i++)
        if (pthread_create(&t[i], NULL, ct_run, &workers[i]) != 0) {
            fprintf(stderr, "[rank %d] pthread_create failed\n", mt_rank);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    for (int i = 0; i < CT_THREADS; i++) {
        pthread_join(t[i], NULL);
        if (workers[i].failures)
            mt_fail("%s", workers[i].why);
    }
    mt_watch("teardown");
    for (int i = 0; i < CT_THREADS; i++) {
        MT_OK(nbcx_comm_free(&workers[i].comm));
        MPI_Comm_free(&dups[i]);
    }
    return mt_finish("test_comm_threads", t0);
}
