/*
 * test_inproc_callback.c - completion callbacks (nbcx_request_on_complete)
 * on thread ranks, in the progress mode NBCX_PROGRESS names (ctest runs
 * each test in caller, thread, split and auto modes; the thread modes
 * under ThreadSanitizer too). One test per argument:
 *   errors      NULL, freed and foreign handles, a NULL callback, a
 *               second callback on a nonblocking request (one rank: a
 *               stale handle's memory may be reused by another rank's
 *               start, a race ThreadSanitizer reports);
 *   basic       a callback per iallreduce: it runs once, with the result
 *               in the receive buffer and the operation's error code;
 *   after       registered once the operation has completed (one rank:
 *               the start completes it): runs at once, in the caller;
 *   chain       each callback starts the next collective of a chain (and
 *               registers itself on it); the main thread only waits;
 *   persistent  registered once on a persistent allreduce: fires at
 *               every start, then replaced by another callback;
 *   race        registration right after the start, while the progress
 *               thread or another rank completes the operation: exactly
 *               once, every time;
 *   many        64 operations in flight at once, each with a callback.
 * Uses only the public API.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nbcx.h"

static bool quick; /* NBCX_TEST_QUICK: sanitizer builds */

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                  \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
            return 1;                                                        \
        }                                                                    \
    } while (0)

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Waits (driving progress, as caller mode needs) until *c reaches want;
 * returns whether it did within 30 s. */
static bool await_count(atomic_int *c, int want)
{
    double end = now_s() + 30;
    while (atomic_load(c) < want) {
        if (now_s() > end)
            return false;
        nbcx_progress();
        sched_yield();
    }
    return true;
}

/* ------------------------------------------------------------------ */

static void count_cb(void *arg, int err)
{
    (void)err;
    atomic_fetch_add((atomic_int *)arg, 1);
}

static int t_errors(nbcx_comm comm, void *arg)
{
    (void)arg;
    atomic_int n = 0;
    CHECK(nbcx_request_on_complete(NBCX_REQUEST_NULL, count_cb, &n) ==
              NBCX_ERR_REQUEST, "NULL request");
    int x = 1, y = 0;
    nbcx_request r, stale;
    CHECK(nbcx_iallreduce(&x, &y, 1, NBCX_INT32, NBCX_SUM, comm, &r) == 0,
          "iallreduce");
    CHECK(nbcx_request_on_complete(r, NULL, &n) == NBCX_ERR_ARG,
          "NULL callback");
    CHECK(nbcx_request_on_complete(r, count_cb, &n) == NBCX_SUCCESS,
          "first callback");
    CHECK(nbcx_request_on_complete(r, count_cb, &n) == NBCX_ERR_REQUEST,
          "second callback on a nonblocking request");
    stale = r;
    CHECK(nbcx_wait(&r) == NBCX_SUCCESS && r == NBCX_REQUEST_NULL, "wait");
    CHECK(await_count(&n, 1), "the callback never ran");
    CHECK(nbcx_request_on_complete(stale, count_cb, &n) == NBCX_ERR_REQUEST,
          "freed request");
    int junk[8] = { 0 };
    CHECK(nbcx_request_on_complete((nbcx_request)(void *)junk, count_cb,
                                   &n) == NBCX_ERR_REQUEST,
          "not a request");
    /* A freed persistent request, too. */
    nbcx_request p;
    CHECK(nbcx_allreduce_init(&x, &y, 1, NBCX_INT32, NBCX_SUM, comm, &p) ==
              0, "allreduce_init");
    CHECK(nbcx_request_on_complete(p, count_cb, &n) == 0, "persistent");
    stale = p;
    CHECK(nbcx_request_free(&p) == 0, "free");
    CHECK(nbcx_request_on_complete(stale, count_cb, &n) == NBCX_ERR_REQUEST,
          "freed persistent request");
    CHECK(atomic_load(&n) == 1, "callbacks: %d, want 1", atomic_load(&n));
    return 0;
}

/* ------------------------------------------------------------------ */

enum { N = 8 };

struct check {
    const int *out; /* the receive buffer */
    int want;       /* out[i] == want + i * size */
    int size;
    atomic_int calls, bad, err;
};

static void check_cb(void *arg, int err)
{
    struct check *c = arg;
    for (int i = 0; i < N; i++)
        if (c->out[i] != c->want + i * c->size)
            atomic_store(&c->bad, 1);
    if (err)
        atomic_store(&c->err, err);
    atomic_fetch_add(&c->calls, 1); /* last: then c may go */
}

static int t_basic(nbcx_comm comm, void *arg)
{
    (void)arg;
    int rank, size;
    nbcx_comm_rank(comm, &rank);
    nbcx_comm_size(comm, &size);
    int rounds = quick ? 10 : 50;
    for (int k = 0; k < rounds; k++) {
        int in[N], out[N];
        for (int i = 0; i < N; i++) {
            in[i] = rank + k + i;
            out[i] = -1;
        }
        struct check c = { .out = out,
                           .want = size * (size - 1) / 2 + size * k,
                           .size = size };
        nbcx_request r;
        CHECK(nbcx_iallreduce(in, out, N, NBCX_INT32, NBCX_SUM, comm, &r) ==
                  0, "iallreduce");
        CHECK(nbcx_request_on_complete(r, check_cb, &c) == 0, "register");
        CHECK(nbcx_wait(&r) == 0, "wait");
        CHECK(await_count(&c.calls, 1), "round %d: no callback", k);
        CHECK(atomic_load(&c.calls) == 1, "round %d: %d calls", k,
              atomic_load(&c.calls));
        CHECK(!atomic_load(&c.bad), "round %d: result not in place", k);
        CHECK(!atomic_load(&c.err), "round %d: err %d", k,
              atomic_load(&c.err));
    }
    return 0;
}

/* ------------------------------------------------------------------ */

struct after {
    pthread_t caller;
    atomic_int calls, same_thread;
};

static void after_cb(void *arg, int err)
{
    struct after *a = arg;
    (void)err;
    if (pthread_equal(pthread_self(), a->caller))
        atomic_store(&a->same_thread, 1);
    atomic_fetch_add(&a->calls, 1);
}

static int t_after(nbcx_comm comm, void *arg)
{
    (void)arg;
    /* One rank: the start completes an allreduce of one rank (a copy);
     * a test would release it, so none is made before registering. */
    int x = 3, y = 0;
    nbcx_request r;
    struct after a = { .caller = pthread_self() };
    CHECK(nbcx_iallreduce(&x, &y, 1, NBCX_INT32, NBCX_SUM, comm, &r) == 0,
          "iallreduce");
    /* Let the progress thread finish it where it has it. */
    struct timespec pause = { 0, 20000000 };
    nanosleep(&pause, NULL);
    CHECK(nbcx_request_on_complete(r, after_cb, &a) == 0, "register");
    /* Complete (y is read only after the callback proves it). */
    if (atomic_load(&a.calls) == 1) {
        CHECK(atomic_load(&a.same_thread), "ran on another thread");
        CHECK(y == 3, "result");
    }
    CHECK(nbcx_wait(&r) == 0, "wait");
    CHECK(await_count(&a.calls, 1), "no callback");
    CHECK(atomic_load(&a.calls) == 1, "%d calls", atomic_load(&a.calls));
    /* Persistent, completed and not yet waited for: at once as well,
     * and again at the next start. */
    nbcx_request p;
    struct after b = { .caller = pthread_self() };
    CHECK(nbcx_allreduce_init(&x, &y, 1, NBCX_INT32, NBCX_SUM, comm, &p) ==
              0, "init");
    CHECK(nbcx_start(&p) == 0, "start");
    nanosleep(&pause, NULL);
    CHECK(nbcx_request_on_complete(p, after_cb, &b) == 0, "register p");
    CHECK(nbcx_wait(&p) == 0, "wait p");
    CHECK(await_count(&b.calls, 1), "no callback (persistent)");
    CHECK(nbcx_start(&p) == 0 && nbcx_wait(&p) == 0, "restart");
    CHECK(await_count(&b.calls, 2), "no callback at the restart");
    CHECK(nbcx_request_free(&p) == 0, "free");
    CHECK(atomic_load(&b.calls) == 2, "%d calls", atomic_load(&b.calls));
    return 0;
}

/* ------------------------------------------------------------------ */

enum { CHAIN_MAX = 64 };

struct chain {
    nbcx_comm comm;
    int rank, size, len;
    int in[CHAIN_MAX][N], out[CHAIN_MAX][N];
    nbcx_request reqs[CHAIN_MAX];
    struct link {
        struct chain *c;
        int k;
    } links[CHAIN_MAX];
    atomic_int ready; /* reqs[0..ready) are set and registered */
    atomic_int calls, bad;
};

static int chain_start(struct chain *c, int k);

/* (With one rank a link completes at its start, and its callback runs
 * at its registration: inside the previous link's callback.) */
static void chain_cb(void *arg, int err)
{
    struct link *l = arg;
    struct chain *c = l->c;
    int k = l->k;
    int want = c->size * (c->size - 1) / 2 + c->size * k;
    for (int i = 0; i < N; i++)
        if (err || c->out[k][i] != want + i * c->size)
            atomic_store(&c->bad, 1);
    if (k + 1 < c->len && chain_start(c, k + 1) != 0)
        atomic_store(&c->bad, 2);
    atomic_fetch_add(&c->calls, 1);
}

/* Starts link k (from the body for k = 0, else from link k-1's callback),
 * then publishes its handle. */
static int chain_start(struct chain *c, int k)
{
    for (int i = 0; i < N; i++)
        c->in[k][i] = c->rank + k + i;
    int rc = nbcx_iallreduce(c->in[k], c->out[k], N, NBCX_INT32, NBCX_SUM,
                             c->comm, &c->reqs[k]);
    c->links[k] = (struct link){ c, k };
    if (rc == 0)
        rc = nbcx_request_on_complete(c->reqs[k], chain_cb, &c->links[k]);
    /* Raised, never lowered: with one rank the later links were
     * published inside the registration above. */
    int seen = atomic_load(&c->ready);
    while (seen < k + 1 &&
           !atomic_compare_exchange_weak(&c->ready, &seen, k + 1))
        ;
    return rc;
}

static int t_chain(nbcx_comm comm, void *arg)
{
    (void)arg;
    struct chain *c = calloc(1, sizeof *c);
    CHECK(c, "memory");
    c->comm = comm;
    nbcx_comm_rank(comm, &c->rank);
    nbcx_comm_size(comm, &c->size);
    c->len = quick ? 16 : CHAIN_MAX;
    CHECK(chain_start(c, 0) == 0, "first link");
    for (int k = 0; k < c->len; k++) {
        CHECK(await_count(&c->ready, k + 1), "link %d never started", k);
        CHECK(nbcx_wait(&c->reqs[k]) == 0, "wait link %d", k);
    }
    CHECK(await_count(&c->calls, c->len), "callbacks: %d of %d",
          atomic_load(&c->calls), c->len);
    CHECK(!atomic_load(&c->bad), "a link failed (%d)", atomic_load(&c->bad));
    free(c);
    return 0;
}

/* ------------------------------------------------------------------ */

struct pers {
    const int *out;
    int size;
    atomic_int round; /* the round started */
    atomic_int calls, bad;
};

static void pers_cb(void *arg, int err)
{
    struct pers *p = arg;
    int k = atomic_load(&p->round);
    for (int i = 0; i < N; i++)
        if (err || p->out[i] != p->size * (p->size - 1) / 2 + p->size * k +
                                    i * p->size)
            atomic_store(&p->bad, 1);
    atomic_fetch_add(&p->calls, 1);
}

static int t_persistent(nbcx_comm comm, void *arg)
{
    (void)arg;
    int rank, size, in[N], out[N];
    nbcx_comm_rank(comm, &rank);
    nbcx_comm_size(comm, &size);
    nbcx_request r;
    CHECK(nbcx_allreduce_init(in, out, N, NBCX_INT32, NBCX_SUM, comm, &r) ==
              0, "init");
    struct pers a = { .out = out, .size = size }, b = a;
    CHECK(nbcx_request_on_complete(r, pers_cb, &a) == 0, "register");
    int rounds = quick ? 10 : 40;
    for (int k = 0; k < rounds; k++) {
        if (k == rounds / 2) /* replaced while inactive */
            CHECK(nbcx_request_on_complete(r, pers_cb, &b) == 0, "replace");
        struct pers *p = k < rounds / 2 ? &a : &b;
        for (int i = 0; i < N; i++)
            in[i] = rank + k + i;
        atomic_store(&p->round, k);
        CHECK(nbcx_start(&r) == 0, "start %d", k);
        CHECK(nbcx_wait(&r) == 0 && r != NBCX_REQUEST_NULL, "wait %d", k);
        int want = k < rounds / 2 ? k + 1 : k + 1 - rounds / 2;
        CHECK(await_count(&p->calls, want), "start %d: no callback", k);
        CHECK(atomic_load(&p->calls) == want, "start %d: %d calls", k,
              atomic_load(&p->calls));
    }
    CHECK(nbcx_request_free(&r) == 0, "free");
    CHECK(atomic_load(&a.calls) == rounds / 2 &&
              atomic_load(&b.calls) == rounds - rounds / 2,
          "calls %d + %d", atomic_load(&a.calls), atomic_load(&b.calls));
    CHECK(!atomic_load(&a.bad) && !atomic_load(&b.bad), "wrong result");
    return 0;
}

/* ------------------------------------------------------------------ */

static int t_race(nbcx_comm comm, void *arg)
{
    (void)arg;
    int rank;
    nbcx_comm_rank(comm, &rank);
    int rounds = quick ? 100 : 1000;
    atomic_int calls[8];
    for (int k = 0; k < rounds; k++) {
        atomic_int *n = &calls[k % 8];
        atomic_store(n, 0);
        nbcx_request r;
        int x = k, y;
        CHECK(nbcx_iallreduce(&x, &y, 1, NBCX_INT32, NBCX_MAX, comm, &r) ==
                  0, "iallreduce");
        /* Vary the moment of registration against the completion. */
        for (volatile int spin = (k * 7 + rank * 13) % 300; spin > 0; spin--)
            ;
        CHECK(nbcx_request_on_complete(r, count_cb, n) == 0, "register");
        CHECK(nbcx_wait(&r) == 0, "wait");
        CHECK(await_count(n, 1), "round %d: no callback", k);
        CHECK(y == k, "round %d: result %d", k, y);
        /* A second call would come late: look again after a while. */
        if (k % 8 == 7) {
            sched_yield();
            for (int j = 0; j < 8; j++)
                CHECK(atomic_load(&calls[j]) == 1, "round %d: %d calls", k,
                      atomic_load(&calls[j]));
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */

static int t_many(nbcx_comm comm, void *arg)
{
    (void)arg;
    enum { M = 64 };
    int rank, size;
    nbcx_comm_rank(comm, &rank);
    nbcx_comm_size(comm, &size);
    static _Thread_local int in[M][N], out[M][N];
    static _Thread_local struct check c[M];
    nbcx_request r[M];
    for (int m = 0; m < M; m++) {
        for (int i = 0; i < N; i++) {
            in[m][i] = rank + m + i;
            out[m][i] = -1;
        }
        c[m] = (struct check){ .out = out[m],
                               .want = size * (size - 1) / 2 + size * m,
                               .size = size };
        atomic_init(&c[m].calls, 0);
        atomic_init(&c[m].bad, 0);
        atomic_init(&c[m].err, 0);
        CHECK(nbcx_iallreduce(in[m], out[m], N, NBCX_INT32, NBCX_SUM, comm,
                              &r[m]) == 0, "iallreduce %d", m);
        CHECK(nbcx_request_on_complete(r[m], check_cb, &c[m]) == 0,
              "register %d", m);
    }
    CHECK(nbcx_waitall(M, r) == 0, "waitall");
    for (int m = 0; m < M; m++) {
        CHECK(await_count(&c[m].calls, 1), "%d: no callback", m);
        CHECK(atomic_load(&c[m].calls) == 1 && !atomic_load(&c[m].bad) &&
                  !atomic_load(&c[m].err), "%d: calls %d bad %d", m,
              atomic_load(&c[m].calls), atomic_load(&c[m].bad));
    }
    return 0;
}

/* ------------------------------------------------------------------ */

static const struct {
    const char *name;
    nbcx_inproc_body *body;
    int ranks[3];
} tests[] = {
    { "errors", t_errors, { 1 } }, /* (stale handles: one thread) */
    { "basic", t_basic, { 1, 3, 4 } },
    { "after", t_after, { 1 } },
    { "chain", t_chain, { 1, 2, 4 } },
    { "persistent", t_persistent, { 1, 3 } },
    { "race", t_race, { 2, 3 } },
    { "many", t_many, { 2, 4 } },
};

int main(int argc, char **argv)
{
    quick = getenv("NBCX_TEST_QUICK") && *getenv("NBCX_TEST_QUICK");
    int ran = 0, failed = 0;
    for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++) {
        if (argc > 1 && strcmp(argv[1], tests[t].name) != 0)
            continue;
        for (int j = 0; j < 3 && tests[t].ranks[j]; j++) {
            int p = tests[t].ranks[j];
            int rc = nbcx_inproc_run(p, tests[t].body, NULL);
            printf("%s on %d ranks: %s\n", tests[t].name, p,
                   rc ? "FAILED" : "ok");
            failed += rc != 0;
            ran++;
        }
    }
    if (!ran) {
        fprintf(stderr, "no test named %s\n", argc > 1 ? argv[1] : "");
        return 2;
    }
    return failed ? 1 : 0;
}
