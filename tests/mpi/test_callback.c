/*
 * test_callback.c - completion callbacks (nbcx_request_on_complete) over
 * MPI, in the mode NBCX_PROGRESS names: results against MPI's blocking
 * allreduce, callbacks that run exactly once, on nbcx's progress thread
 * while the main thread makes no nbcx call (thread and auto modes),
 * on the main thread in caller mode, a chain of collectives each started by the previous one's
 * callback, persistent restarts, and registrations that race the
 * completion. The in-process tests (tests/inproc/test_inproc_callback.c)
 * cover the same on thread ranks, under ThreadSanitizer too.
 */
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "mpitest.h"

enum { N = 64, CHAIN = 32, ROUNDS = 200 };

static pthread_t main_thread;
static atomic_int off_main; /* callbacks that ran on another thread */
/* Callbacks run by the main thread outside nbcx_request_on_complete (a
 * registration after completion runs it at once, in the caller). */
static atomic_int main_outside;
static atomic_bool registering;

struct one {
    const int *out, *want;
    atomic_int calls, bad;
};

static void one_cb(void *arg, int err)
{
    struct one *o = arg;
    if (!pthread_equal(pthread_self(), main_thread))
        atomic_fetch_add(&off_main, 1);
    else if (!atomic_load(&registering))
        atomic_fetch_add(&main_outside, 1);
    if (err || memcmp(o->out, o->want, N * sizeof(int)) != 0)
        atomic_store(&o->bad, 1);
    atomic_fetch_add(&o->calls, 1);
}

static void await_calls(atomic_int *c, int want, const char *what)
{
    while (atomic_load(c) < want) { /* (the watchdog reports a hang) */
        nbcx_progress();
        sched_yield();
    }
    if (atomic_load(c) != want)
        mt_fail("%s: %d callbacks, want %d", what, atomic_load(c), want);
}

static void basic(nbcx_comm comm)
{
    int in[N], out[N], want[N];
    for (int k = 0; k < 20; k++) {
        mt_watch("basic round %d", k);
        for (int i = 0; i < N; i++) {
            in[i] = mt_rank * 31 + i * k;
            out[i] = -1;
        }
        MPI_Allreduce(in, want, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        struct one o = { .out = out, .want = want };
        nbcx_request r;
        MT_OK(nbcx_iallreduce(in, out, N, NBCX_INT32, NBCX_SUM, comm, &r));
        MT_OK(nbcx_request_on_complete(r, one_cb, &o));
        MT_OK(nbcx_wait(&r));
        await_calls(&o.calls, 1, "basic");
        if (atomic_load(&o.bad))
            mt_fail("basic round %d: result not in place at the callback",
                    k);
    }
}

struct chain {
    nbcx_comm comm;
    int in[CHAIN][N], out[CHAIN][N], want[CHAIN][N];
    nbcx_request reqs[CHAIN];
    struct link {
        struct chain *c;
        int k;
    } links[CHAIN];
    atomic_int ready, calls, bad;
};

static int chain_start(struct chain *c, int k);

static void chain_cb(void *arg, int err)
{
    struct link *l = arg;
    struct chain *c = l->c;
    if (err || memcmp(c->out[l->k], c->want[l->k], sizeof c->out[0]) != 0)
        atomic_store(&c->bad, 1);
    if (l->k + 1 < CHAIN && chain_start(c, l->k + 1) != NBCX_SUCCESS)
        atomic_store(&c->bad, 2);
    atomic_fetch_add(&c->calls, 1);
}

static int chain_start(struct chain *c, int k)
{
    c->links[k] = (struct link){ c, k };
    int rc = nbcx_iallreduce(c->in[k], c->out[k], N, NBCX_INT32, NBCX_SUM,
                             c->comm, &c->reqs[k]);
    if (rc == NBCX_SUCCESS)
        rc = nbcx_request_on_complete(c->reqs[k], chain_cb, &c->links[k]);
    int seen = atomic_load(&c->ready); /* raised, never lowered */
    while (seen < k + 1 &&
           !atomic_compare_exchange_weak(&c->ready, &seen, k + 1))
        ;
    return rc;
}

static void chain(nbcx_comm comm)
{
    mt_watch("chain");
    struct chain *c = calloc(1, sizeof *c);
    c->comm = comm;
    for (int k = 0; k < CHAIN; k++)
        for (int i = 0; i < N; i++)
            c->in[k][i] = mt_rank + k * i;
    /* The references first: the chain runs while the main thread waits. */
    for (int k = 0; k < CHAIN; k++)
        MPI_Allreduce(c->in[k], c->want[k], N, MPI_INT, MPI_SUM,
                      MPI_COMM_WORLD);
    MT_OK(chain_start(c, 0));
    for (int k = 0; k < CHAIN; k++) {
        while (atomic_load(&c->ready) < k + 1) {
            nbcx_progress();
            sched_yield();
        }
        MT_OK(nbcx_wait(&c->reqs[k]));
    }
    await_calls(&c->calls, CHAIN, "chain");
    if (atomic_load(&c->bad))
        mt_fail("chain: a link failed (%d)", atomic_load(&c->bad));
    free(c);
}

static void persistent(nbcx_comm comm)
{
    mt_watch("persistent");
    int in[N], out[N], want[N];
    nbcx_request r;
    MT_OK(nbcx_allreduce_init(in, out, N, NBCX_INT32, NBCX_SUM, comm, &r));
    struct one o = { .out = out, .want = want };
    MT_OK(nbcx_request_on_complete(r, one_cb, &o));
    for (int k = 0; k < 20; k++) {
        for (int i = 0; i < N; i++)
            in[i] = mt_rank - k + i;
        MPI_Allreduce(in, want, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MT_OK(nbcx_start(&r));
        MT_OK(nbcx_wait(&r));
        await_calls(&o.calls, k + 1, "persistent");
    }
    MT_OK(nbcx_request_free(&r));
    if (atomic_load(&o.bad))
        mt_fail("persistent: wrong result at a callback");
}

static void count_cb(void *arg, int err)
{
    (void)err;
    atomic_fetch_add((atomic_int *)arg, 1);
}

static void race(nbcx_comm comm)
{
    mt_watch("race");
    for (int k = 0; k < ROUNDS; k++) {
        atomic_int calls = 0;
        nbcx_request r;
        MT_OK(nbcx_ibarrier(comm, &r));
        for (volatile int spin = (k * 37) % 2000; spin > 0; spin--)
            ;
        MT_OK(nbcx_request_on_complete(r, count_cb, &calls));
        MT_OK(nbcx_wait(&r));
        await_calls(&calls, 1, "race");
    }
}

/* Thread and auto modes: the main thread makes no nbcx call until
 * the callback has run, so only the progress thread can complete the
 * operation and run it (or the registration, when the operation was
 * complete by then) (auto mode too: a request with a callback is not
 * left to the application). */
static void hands_off(nbcx_comm comm)
{
    /* (Not split mode: the tree levels it leaves to the application
     * thread run in its wait, which this never makes before the
     * callback.) */
    if (mt_mode != NBCX_PROGRESS_THREAD && mt_mode != NBCX_PROGRESS_AUTO)
        return;
    int in[N], out[N], want[N];
    for (int k = 0; k < 10; k++) {
        mt_watch("hands off, round %d", k);
        for (int i = 0; i < N; i++)
            in[i] = mt_rank * k + i;
        MPI_Allreduce(in, want, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        struct one o = { .out = out, .want = want };
        int before = atomic_load(&main_outside);
        nbcx_request r;
        MT_OK(nbcx_iallreduce(in, out, N, NBCX_INT32, NBCX_SUM, comm, &r));
        atomic_store(&registering, true);
        MT_OK(nbcx_request_on_complete(r, one_cb, &o));
        atomic_store(&registering, false);
        while (atomic_load(&o.calls) == 0) {
            struct timespec us = { 0, 50000 };
            nanosleep(&us, NULL);
        }
        if (atomic_load(&main_outside) != before)
            mt_fail("hands off: the callback ran on the main thread");
        if (atomic_load(&o.bad))
            mt_fail("hands off: result not in place at the callback");
        MT_OK(nbcx_wait(&r));
    }
}

int main(int argc, char **argv)
{
    double t0 = mt_begin(&argc, &argv);
    main_thread = pthread_self();
    nbcx_comm comm;
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
    basic(comm);
    chain(comm);
    persistent(comm);
    race(comm);
    hands_off(comm);
    int off = atomic_load(&off_main);
    if (mt_mode == NBCX_PROGRESS_CALLER && off != 0)
        mt_fail("caller mode: %d callbacks ran off the main thread", off);
    MT_OK(nbcx_comm_free(&comm));
    return mt_finish("test_callback", t0);
}
