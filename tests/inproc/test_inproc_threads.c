/*
 * test_inproc_threads.c - inproc.comm_threads.<mode> (issue 35): on 3
 * thread ranks, each rank runs CT_THREADS application threads, each on a
 * duplicate of the rank's communicator of its own, and every thread runs
 * many collectives at once with the others, each result checked against
 * a sequential reference (tests/common/comm_threads.h). The in-process
 * transport lets the threads on different communicators progress their
 * own operations at once (engine.c: one progress lock per communicator);
 * ThreadSanitizer runs it in every mode (scripts/test).
 * Uses only the public API.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>

#include "comm_threads.h"

enum { RANKS = 3 };

static int rounds(void)
{
    return getenv("NBCX_TEST_QUICK") ? 12 : 80;
}

static int body(nbcx_comm comm, void *arg)
{
    (void)arg;
    struct ct_worker w[CT_THREADS];
    pthread_t t[CT_THREADS];
    int rank, size, failures = 0;
    nbcx_comm_rank(comm, &rank);
    nbcx_comm_size(comm, &size);
    for (int i = 0; i < CT_THREADS; i++) { /* (collective, in order) */
        w[i] = (struct ct_worker){ .tid = i, .rank = rank, .size = size,
                                   .rounds = rounds(),
                                   .no_calls = ct_thread_completes() };
        atomic_init(&w[i].done_rounds, 0);
        atomic_init(&w[i].fired, 0);
        if (nbcx_comm_dup(comm, &w[i].comm) != NBCX_SUCCESS) {
            fprintf(stderr, "rank %d: nbcx_comm_dup failed\n", rank);
            return 1;
        }
    }
    for (int i = 0; i < CT_THREADS; i++)
        if (pthread_create(&t[i], NULL, ct_run, &w[i]) != 0) {
            fprintf(stderr, "rank %d: pthread_create failed\n", rank);
            abort();
        }
    for (int i = 0; i < CT_THREADS; i++) {
        pthread_join(t[i], NULL);
        if (w[i].failures) {
            fprintf(stderr, "rank %d: %s\n", rank, w[i].why);
            failures++;
        }
        nbcx_comm_free(&w[i].comm);
    }
    return failures ? 1 : 0;
}

int main(void)
{
    double t0 = ct_now();
    int rc = nbcx_inproc_run(RANKS, body, NULL);
    printf("comm_threads: %d ranks x %d threads x %d rounds of %d "
           "collectives, %s (%.2f s)\n", RANKS, CT_THREADS, rounds(),
           CT_BATCH, rc == 0 ? "all results right" : "FAILED",
           ct_now() - t0);
    return rc == 0 ? 0 : 1;
}
