/*
 * comm_threads.h - the worker of the "threads on their own communicators"
 * tests (issue 35: mpi.test_comm_threads, inproc.comm_threads): CT_THREADS
 * application threads per rank, each on a communicator of its own, run
 * many collectives at once and check every result against a sequential
 * reference computed in the thread (closed forms of what every rank
 * contributed), not against another library.
 *
 * What it catches: a result that another thread's operation corrupted
 * (executor state shared between communicators), an operation that never
 * completes (a progress lock held, a sweep that skips forever, a lost
 * wake-up), and under ThreadSanitizer any unguarded access of the
 * engine. Each round starts CT_BATCH operations back to back (allreduce,
 * broadcast from a moving root, allgather; 1, 1,000 and, every 8th
 * round, 20,000 ints: lazy and thread-driven in auto mode) and completes
 * them one of four ways: waits in order, nbcx_test polling, nbcx_waitall,
 * or completion callbacks; in the thread and auto modes the callback
 * round then spins on the callbacks' counter without calling nbcx at
 * all, so only the progress thread can complete them.
 *
 * Uses only the public API (nbcx.h). Include once per program.
 */
#ifndef NBCX_COMM_THREADS_H
#define NBCX_COMM_THREADS_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nbcx.h"

#define CT_THREADS 4
#define CT_BATCH 3

struct ct_worker {
    nbcx_comm comm;
    int tid, rank, size;
    int rounds;             /* how many to run */
    bool no_calls;          /* the progress thread completes callbacks */
    atomic_int done_rounds; /* for a watchdog */
    atomic_int fired;       /* completion callbacks run */
    int failures;
    char why[256];          /* the first failure */
};

static double ct_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* What rank r contributes at element i of operation k of a round. */
static int ct_value(int r, int tid, int round, int k, int i)
{
    return (r + 1) * 1000003 + tid * 7919 + round * 131 + k * 17 + i % 997;
}

static void ct_fail(struct ct_worker *w, const char *fmt, int a, int b,
                    int c, int d)
{
    if (w->failures++ == 0)
        snprintf(w->why, sizeof w->why, fmt, a, b, c, d);
}

struct ct_op {
    int kind, count, root;
    int *send, *recv;
    nbcx_request req;
};

static int ct_start(struct ct_worker *w, int round, int k, struct ct_op *o)
{
    o->kind = k % 3;
    o->count = round % 8 == 7 && k == 0 ? 20000 : (round + k) % 2 ? 1000 : 1;
    o->root = (round + w->tid) % w->size;
    size_t n = (size_t)o->count * (o->kind == 2 ? (size_t)w->size : 1);
    o->send = malloc((size_t)o->count * sizeof(int));
    o->recv = calloc(n, sizeof(int));
    if (!o->send || !o->recv)
        return NBCX_ERR_NOMEM;
    for (int i = 0; i < o->count; i++)
        o->send[i] = ct_value(w->rank, w->tid, round, k, i);
    o->req = NBCX_REQUEST_NULL;
    switch (o->kind) {
    case 0:
        return nbcx_iallreduce(o->send, o->recv, o->count, NBCX_INT32,
                               NBCX_SUM, w->comm, &o->req);
    case 1: /* the root's buffer is its send values, the others' zeros */
        if (w->rank == o->root)
            memcpy(o->recv, o->send, (size_t)o->count * sizeof(int));
        return nbcx_ibcast(o->recv, o->count, NBCX_INT32, o->root, w->comm,
                           &o->req);
    default:
        return nbcx_iallgather(o->send, o->count, NBCX_INT32, o->recv,
                               o->count, NBCX_INT32, w->comm, &o->req);
    }
}

/* The sequential reference: what element i must hold. */
static int ct_expect(const struct ct_worker *w, int round, int k,
                     const struct ct_op *o, int i)
{
    switch (o->kind) {
    case 0: {
        unsigned sum = 0; /* (wraps as the int sum does, defined) */
        for (int r = 0; r < w->size; r++)
            sum += (unsigned)ct_value(r, w->tid, round, k, i);
        return (int)sum;
    }
    case 1:
        return ct_value(o->root, w->tid, round, k, i);
    default:
        return ct_value(i / o->count, w->tid, round, k, i % o->count);
    }
}

static void ct_check(struct ct_worker *w, int round, int k, struct ct_op *o)
{
    int n = o->count * (o->kind == 2 ? w->size : 1);
    for (int i = 0; i < n; i++) {
        int want = ct_expect(w, round, k, o, i);
        if (o->recv[i] != want) {
            ct_fail(w, "thread %d round %d op %d: wrong element %d", w->tid,
                    round, k, i);
            break;
        }
    }
    free(o->send);
    free(o->recv);
}

static void ct_fired(void *arg, int err)
{
    struct ct_worker *w = arg;
    if (err == NBCX_SUCCESS)
        atomic_fetch_add(&w->fired, 1);
}

/* Completes the round's operations in the round's way; returns an error
 * code or NBCX_SUCCESS. */
static int ct_complete(struct ct_worker *w, int round, struct ct_op *ops)
{
    nbcx_request reqs[CT_BATCH];
    for (int k = 0; k < CT_BATCH; k++)
        reqs[k] = ops[k].req;
    int rc = NBCX_SUCCESS;
    switch (round % 4) {
    case 0:
        for (int k = 0; k < CT_BATCH && rc == NBCX_SUCCESS; k++)
            rc = nbcx_wait(&reqs[k]);
        return rc;
    case 1:
        for (int k = 0; k < CT_BATCH && rc == NBCX_SUCCESS; k++)
            for (int flag = 0; !flag && rc == NBCX_SUCCESS;)
                rc = nbcx_test(&reqs[k], &flag);
        return rc;
    case 2:
        return nbcx_waitall(CT_BATCH, reqs);
    default:
        break;
    }
    int before = atomic_load(&w->fired);
    for (int k = 0; k < CT_BATCH && rc == NBCX_SUCCESS; k++)
        rc = nbcx_request_on_complete(reqs[k], ct_fired, w);
    double end = ct_now() + 30;
    while (rc == NBCX_SUCCESS &&
           atomic_load(&w->fired) - before < CT_BATCH) {
        if (ct_now() > end) {
            ct_fail(w, "thread %d round %d: %d of %d callbacks in 30 s",
                    w->tid, round, atomic_load(&w->fired) - before,
                    CT_BATCH);
            return NBCX_ERR_INTERN;
        }
        if (w->no_calls)
            sched_yield(); /* the progress thread alone moves them */
        else
            rc = nbcx_progress();
    }
    return rc == NBCX_SUCCESS ? nbcx_waitall(CT_BATCH, reqs) : rc;
}

/* The thread's body (pthread_create): w->rounds rounds on w->comm. */
static void *ct_run(void *arg)
{
    struct ct_worker *w = arg;
    for (int round = 0; round < w->rounds && !w->failures; round++) {
        struct ct_op ops[CT_BATCH];
        int rc = NBCX_SUCCESS;
        for (int k = 0; k < CT_BATCH && rc == NBCX_SUCCESS; k++)
            rc = ct_start(w, round, k, &ops[k]);
        if (rc == NBCX_SUCCESS)
            rc = ct_complete(w, round, ops);
        if (rc != NBCX_SUCCESS) {
            ct_fail(w, "thread %d round %d: error %d (%d)", w->tid, round,
                    rc, 0);
            break; /* (buffers left: the test fails anyway) */
        }
        for (int k = 0; k < CT_BATCH; k++)
            ct_check(w, round, k, &ops[k]);
        atomic_fetch_add(&w->done_rounds, 1);
    }
    return NULL;
}

/* Whether the mode in force lets callbacks complete with no calls. */
static bool ct_thread_completes(void)
{
    const char *m = getenv("NBCX_PROGRESS");
    return m && (!strcmp(m, "thread") || !strcmp(m, "auto"));
}

#endif /* NBCX_COMM_THREADS_H */
