/*
 * test_threads.c - several application threads use nbcx at once.
 *
 * NTHREADS threads per rank, each with a communicator of its own (an
 * MPI_Comm_dup of MPI_COMM_WORLD made into an nbcx communicator; both are
 * created by the main thread, in the same order on every rank, since
 * creating them is collective). Each thread runs NROUNDS rounds; a round
 * starts BATCH collectives of the core kinds back to back (counts 0, 1,
 * 7, 300 and now and then 20000 elements, several fragments; ints and
 * doubles with exact operations, and a derived contiguous type the thread
 * made itself for the data-movement kinds; roots all over), completes
 * them in the round's way:
 *   nbcx_wait in order / nbcx_test polling loops / nbcx_waitall /
 *   nbcx_waitany,
 * and compares every result with the blocking MPI collective run on the
 * thread's own MPI communicator (MPI_THREAD_MULTIPLE). The threads of a
 * rank thus start, progress and complete operations concurrently, on one
 * engine: in caller mode every thread's test/wait progresses everyone's
 * operations, in thread mode they sleep while the progress thread works,
 * in split mode they also run tree levels inside start and wait.
 *
 * A hang is reported with what every thread was doing: the main thread
 * re-arms the watchdog whenever a thread finishes a round.
 */
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "mpicoll.h"

#define NTHREADS 4
#define NROUNDS 16
#define BATCH 8

struct worker {
    int id;
    pthread_t thread;
    MPI_Comm mpi;        /* the reference collectives run here */
    nbcx_comm nb;        /* nbcx's collectives, on its own duplicate */
    atomic_int rounds;   /* finished, for the watchdog */
    char step[160];      /* what it is doing, for the watchdog */
};
static struct worker workers[NTHREADS];

static const char *const way_name[4] = {
    "nbcx_wait in order", "nbcx_test loops", "nbcx_waitall",
    "nbcx_waitany"};

/* Watchdog hook (async-signal-safe): each thread's last step. */
static void print_steps(void)
{
    for (int i = 0; i < NTHREADS; i++) {
        const char *s = workers[i].step;
        size_t n = 0;
        while (n < sizeof workers[i].step && s[n])
            n++;
        if (write(2, "  ", 2) < 0 || write(2, s, n) < 0 ||
            write(2, "\n", 1) < 0)
            return;
    }
}

static void set_step(struct worker *w, int round, const char *what)
{
    snprintf(w->step, sizeof w->step, "[rank %d/%d] thread %d round %d "
             "(%s): %s", mt_rank, mt_size, w->id, round,
             way_name[round % 4], what);
}

/* Completes the round's requests in the round's way. */
static void complete(struct worker *w, int round, struct mc_coll *cs)
{
    nbcx_request reqs[BATCH];
    int rc, flag = 0, index;
    char what[200];

    snprintf(what, sizeof what, "thread %d round %d (%s)", w->id, round,
             way_name[round % 4]);
    for (int i = 0; i < BATCH; i++)
        reqs[i] = cs[i].req;
    switch (round % 4) {
    case 0:
        for (int i = 0; i < BATCH; i++)
            if ((rc = nbcx_wait(&reqs[i])) != NBCX_SUCCESS)
                mt_fail("%s: nbcx_wait(#%d) returned %d (%s)", what, i, rc,
                        nbcx_error_string(rc));
        break;
    case 1: /* each request tested until done, the last one first */
        for (int i = BATCH - 1; i >= 0; i--)
            for (flag = 0; !flag;) {
                if ((rc = nbcx_test(&reqs[i], &flag)) != NBCX_SUCCESS) {
                    mt_fail("%s: nbcx_test(#%d) returned %d (%s)", what, i,
                            rc, nbcx_error_string(rc));
                    break;
                }
                if (!flag)
                    sched_yield(); /* 2 cores, many threads */
            }
        break;
    case 2:
        if ((rc = nbcx_waitall(BATCH, reqs)) != NBCX_SUCCESS)
            mt_fail("%s: nbcx_waitall returned %d (%s)", what, rc,
                    nbcx_error_string(rc));
        break;
    default:
        for (int n = 0; n < BATCH; n++) {
            rc = nbcx_waitany(BATCH, reqs, &index);
            if (rc != NBCX_SUCCESS || index < 0 || index >= BATCH) {
                mt_fail("%s: nbcx_waitany returned %d (%s), index %d", what,
                        rc, nbcx_error_string(rc), index);
                break;
            }
        }
        break;
    }
    for (int i = 0; i < BATCH; i++)
        if (reqs[i] != NBCX_REQUEST_NULL) {
            mt_fail("%s: request #%d not reset on completion", what, i);
            MPI_Abort(MPI_COMM_WORLD, 1); /* its buffers are still in use */
        }
}

static void *run_worker(void *arg)
{
    static const int counts[] = {0, 1, 7, 300, 300, 20000};
    struct worker *w = arg;
    struct mc_type t_int, t_double, t_contig;
    struct mc_coll cs[BATCH];
    char what[80];

    mc_type_int(&t_int);
    mc_type_double(&t_double);
    mc_type_contig(&t_contig, 3); /* made in the thread: face calls too */

    for (int round = 0; round < NROUNDS; round++) {
        set_step(w, round, "starting");
        for (int i = 0; i < BATCH; i++) {
            /* the shape from (thread, round, i), the same on all ranks */
            uint64_t shape = mt_seed((uint64_t)(round * BATCH + i), w->id,
                                     21);
            uint64_t data = mt_seed((uint64_t)(round * BATCH + i),
                                    w->id * 1000 + mt_rank + 1, 23);
            enum mc_kind kind = (enum mc_kind)((round + i) % MC_NKINDS);
            int ic = mt_range(&shape, 0, 5);
            int root = mt_range(&shape, 0, mt_size - 1);
            int which = mt_range(&shape, 0, 2);
            const struct mc_type *t =
                which == 0 ? &t_int : which == 1 ? &t_double : &t_contig;
            if (t->nops == 0 &&
                (kind == MC_REDUCE || kind == MC_ALLREDUCE))
                t = &t_int;
            int op = t->nops ? mt_range(&shape, 0, t->nops - 1) : 0;
            bool in_place = mt_range(&shape, 0, 2) == 0;
            int count = counts[ic];
            if (t == &t_contig && count > 1) /* same bytes, fewer elements */
                count /= 3;
            mc_setup(&cs[i], kind, count, root, t, op, in_place, mt_size,
                     &data);
            int rc = mc_start(&cs[i], w->nb);
            if (rc != NBCX_SUCCESS) {
                /* the other ranks would wait for it forever */
                fprintf(stderr, "[rank %d] thread %d round %d: starting #%d "
                        "(%s) failed: %s\n", mt_rank, w->id, round, i,
                        mc_kind_name[kind], nbcx_error_string(rc));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        set_step(w, round, "completing");
        complete(w, round, cs);
        set_step(w, round, "checking against MPI");
        snprintf(what, sizeof what, "thread %d round %d (%s)", w->id, round,
                 way_name[round % 4]);
        for (int i = 0; i < BATCH; i++) {
            mc_check(&cs[i], w->mpi, mt_rank, what, i);
            mc_free(&cs[i]);
        }
        atomic_fetch_add(&w->rounds, 1);
    }
    set_step(w, NROUNDS, "done");
    mc_type_free(&t_contig);
    return NULL;
}

int main(int argc, char **argv)
{
    const struct timespec tick = {0, 20 * 1000 * 1000};
    int last = -1, done = 0;
    double t0;

    mt_init(&argc, &argv);
    t0 = MPI_Wtime();
    mt_watch("setup: communicators");
    for (int i = 0; i < NTHREADS; i++) {
        struct worker *w = &workers[i];
        w->id = i;
        atomic_init(&w->rounds, 0);
        snprintf(w->step, sizeof w->step, "thread %d: not started", i);
        MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &w->mpi));
        MPI_Comm_set_errhandler(w->mpi, MPI_ERRORS_RETURN);
        MT_OK(nbcx_comm_from_mpi(w->mpi, &w->nb));
    }

    mt_on_timeout = print_steps;
    for (int i = 0; i < NTHREADS; i++)
        if (pthread_create(&workers[i].thread, NULL, run_worker,
                           &workers[i]) != 0) {
            fprintf(stderr, "[rank %d] pthread_create failed\n", mt_rank);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    /* The watchdog fires when no thread finished a round for
     * NBCX_TEST_TIMEOUT seconds. */
    while (done < NTHREADS * NROUNDS) {
        done = 0;
        for (int i = 0; i < NTHREADS; i++)
            done += atomic_load(&workers[i].rounds);
        if (done != last) {
            mt_watch("%d threads running: %d of %d rounds done", NTHREADS,
                     done, NTHREADS * NROUNDS);
            last = done;
        }
        nanosleep(&tick, NULL);
    }
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(workers[i].thread, NULL);
    mt_on_timeout = NULL;

    mt_watch("teardown");
    for (int i = 0; i < NTHREADS; i++) {
        MT_OK(nbcx_comm_free(&workers[i].nb));
        MPI_Comm_free(&workers[i].mpi);
    }
    return mt_finish("test_threads", t0);
}
