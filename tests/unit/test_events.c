/*
 * test_events.c - the progress thread on a transport that wakes it (an
 * event fd, as UCX's): an event that finishes nothing costs it a poll or
 * two, not a new spin, while an application thread waits (progress_thread.c).
 *
 * A transport of its own, two ranks in this process: sends complete at
 * once (eager, the data copied into a mailbox), receives only once the
 * test delivers. Rank 1 waits for a bcast from rank 0 in another thread
 * (thread mode: the progress thread polls for it, SPIN_POLLS yields
 * first). The test then signals the event fd EVENTS times, each time
 * after the thread has armed the transport again (asleep on the fd), as
 * UCX's TCP transport does at every socket event of a large transfer,
 * and counts the thread's polls (testsome calls) meanwhile: at most
 * MAX_POLLS per event (2-4 here). It used to spin again after every
 * event: 66 polls each. Then the message is delivered and the bcast must
 * complete with the root's data.
 *
 *   spurious_events   the above
 *   paced_transfer    a transfer predicted to be in flight (a measured
 *                     bandwidth makes rank 1's 64 KiB receive due in
 *                     PACED_NS): while it is, the thread polls on the
 *                     paced timer and never arms the transport (UCX's
 *                     TCP transport would wake it at every chunk,
 *                     issue 16); once the prediction has long passed
 *                     (the root is late) it arms and sleeps on the fd;
 *                     then the root sends and the bcast completes with
 *                     its data.
 *   stream_events     no thread waits, nothing predicted: the thread
 *                     sleeps on the fd; then the fd signals every
 *                     STREAM_GAP_NS for STREAM_NS, each event finishing
 *                     nothing, as UCX's TCP transport does at every
 *                     chunk of a transfer that outlived its prediction:
 *                     the thread polls on the timer while the stream
 *                     moves and arms the transport at most about once
 *                     per 2 ms (progress_thread.c's EVENT_GRACE_NS), not after
 *                     every event (the rule before session 11: one arm
 *                     per event); then the bcast completes with the
 *                     root's data.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "harness.h"
#include "progress/progress.h"
#include "sched/sched.h"

enum { N = 64, EVENTS = 50, MAX_POLLS = 8, MAX_MSGS = 8,
       BIG = 16384 /* int32: 64 KiB, a timed request (sched/pace.c) */ };
static const int64_t PACED_NS = 300000000; /* the big receive's predicted
                                              duration (300 ms)      */
static const int64_t ARM_WAIT_NS = 2000000000; /* 2 s for the thread */
static const int64_t STREAM_NS = 100000000;    /* stream_events: 100 ms */
static const int64_t STREAM_GAP_NS = 200000;   /* of an event per 200 us */
static const int64_t GRACE_NS = 2000000;       /* progress_thread.c's EVENT_GRACE_NS */

struct ev_req {
    bool recv, done;
    void *buf;
    size_t bytes;
    int peer, tag;
};

static struct {
    int efd;
    atomic_long tests, arms;
    atomic_bool delivered;
    int nmsgs; /* under the engine lock, as every transport call */
    struct { int src, dst, tag; size_t bytes; char data[BIG * 4]; } msg[MAX_MSGS];
} ev = { .efd = -1 };

static int rank_of(nbcxi_transport *t)
{
    return (int)(intptr_t)t->state;
}

static int ev_isend(nbcxi_transport *t, const void *buf, int count,
                    struct nbcx_datatype_s *type, int peer, int tag,
                    void *req)
{
    size_t bytes = (size_t)count * type->size;
    if (ev.nmsgs == MAX_MSGS || bytes > sizeof ev.msg[0].data ||
        !type->contiguous)
        return NBCX_ERR_TRANSPORT;
    ev.msg[ev.nmsgs].src = rank_of(t);
    ev.msg[ev.nmsgs].dst = peer;
    ev.msg[ev.nmsgs].tag = tag;
    ev.msg[ev.nmsgs].bytes = bytes;
    memcpy(ev.msg[ev.nmsgs++].data, buf, bytes);
    *(struct ev_req *)req = (struct ev_req){ .done = true };
    return NBCX_SUCCESS;
}

static int ev_irecv(nbcxi_transport *t, void *buf, int count,
                    struct nbcx_datatype_s *type, int peer, int tag,
                    void *req)
{
    (void)t;
    *(struct ev_req *)req = (struct ev_req){
        .recv = true, .buf = buf, .bytes = (size_t)count * type->size,
        .peer = peer, .tag = tag };
    return type->contiguous ? NBCX_SUCCESS : NBCX_ERR_TRANSPORT;
}

/* A delivered receive takes its message from the mailbox. */
static bool arrived(nbcxi_transport *t, struct ev_req *r)
{
    if (!atomic_load(&ev.delivered))
        return false;
    for (int i = 0; i < ev.nmsgs; i++)
        if (ev.msg[i].src == r->peer && ev.msg[i].dst == rank_of(t) &&
            ev.msg[i].tag == r->tag && ev.msg[i].bytes <= r->bytes) {
            memcpy(r->buf, ev.msg[i].data, ev.msg[i].bytes);
            ev.msg[i] = ev.msg[--ev.nmsgs];
            return true;
        }
    return false;
}

static int ev_testsome(nbcxi_transport *t, int n, void *reqs, int *ndone,
                       int *idx)
{
    atomic_fetch_add(&ev.tests, 1);
    uint64_t v;
    (void)!read(ev.efd, &v, sizeof v); /* the events are consumed */
    struct ev_req *r = reqs;
    *ndone = 0;
    for (int i = 0; i < n; i++)
        if (r[i].done || (r[i].recv && arrived(t, &r[i]))) {
            r[i].done = false;
            idx[(*ndone)++] = i;
        }
    return NBCX_SUCCESS;
}

static void ev_cancel(nbcxi_transport *t, void *req)
{
    (void)t, (void)req;
}

static void ev_destroy(nbcxi_transport *t)
{
    free(t);
}

static int ev_event_fd(nbcxi_transport *t)
{
    (void)t;
    return ev.efd;
}

static int ev_arm(nbcxi_transport *t)
{
    (void)t;
    atomic_fetch_add(&ev.arms, 1);
    return 0;
}

static const struct nbcxi_transport_ops ev_ops = {
    .name = "events",
    .req_size = sizeof(struct ev_req),
    .isend = ev_isend,
    .irecv = ev_irecv,
    .testsome = ev_testsome,
    .cancel = ev_cancel,
    .destroy = ev_destroy,
    .event_fd = ev_event_fd,
    .arm = ev_arm,
    .caps = NBCXI_CAP_WAKES | NBCXI_CAP_PROGRESS_THREAD,
};

/* Waits until the thread has armed the transport more than `after`
 * times; false after ARM_WAIT_NS. */
static bool armed_again(long after)
{
    int64_t until = nbcxi_now_ns() + ARM_WAIT_NS;
    while (atomic_load(&ev.arms) <= after)
        if (nbcxi_now_ns() > until)
            return false;
        else
            sched_yield();
    /* The arm is made under the lock, the sleep after it is released:
     * once the lock is free, the thread sleeps (or is about to). */
    pthread_mutex_lock(&nbcxi_engine_lock);
    pthread_mutex_unlock(&nbcxi_engine_lock);
    return true;
}

struct waiter {
    nbcx_request req;
    int rc;
};

static void *wait_main(void *arg)
{
    struct waiter *w = arg;
    w->rc = nbcx_wait(&w->req);
    return NULL;
}

/* The event fd, thread mode and two ranks on the transport above;
 * false if something is missing. */
static bool setup(nbcx_comm c[2], nbcx_progress_mode *saved)
{
    ev.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!CHECK(ev.efd >= 0, "eventfd: %s", strerror(errno)))
        return false;
    atomic_store(&ev.delivered, false); /* (an earlier test's finish) */
    *saved = NBCX_PROGRESS_CALLER;
    CHECK_OK(nbcx_progress_get(saved));
    int rc = nbcx_progress_set(NBCX_PROGRESS_THREAD);
    if (!CHECK(rc == NBCX_SUCCESS, "nbcx_progress_set: %s",
               nbcx_error_string(rc)))
        return false;
    for (int r = 0; r < 2; r++) {
        nbcxi_transport *t = calloc(1, sizeof *t);
        if (!CHECK(t, "no memory"))
            return false;
        *t = (nbcxi_transport){ .ops = &ev_ops, .tag_ub = INT32_MAX,
                                .state = (void *)(intptr_t)r };
        rc = nbcxi_comm_create(r, 2, t, &c[r]);
        if (!CHECK(rc == NBCX_SUCCESS, "nbcxi_comm_create: %s",
                   nbcx_error_string(rc)))
            return false;
    }
    return true;
}

/* The message arrives (the transport's event): rank 1's bcast, waited
 * for by `waiter`, completes with the root's n elements 1, 2, ... in
 * got; then what setup() made is undone. */
static void finish(pthread_t waiter, const struct waiter *w,
                   const int32_t *got, int n, nbcx_comm c[2],
                   nbcx_progress_mode saved)
{
    atomic_store(&ev.delivered, true);
    uint64_t one = 1;
    (void)!write(ev.efd, &one, sizeof one);
    pthread_join(waiter, NULL);
    CHECK_OK(w->rc);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += got[i] != i + 1;
    CHECK(bad == 0, "%d wrong elements", bad);
    for (int r = 0; r < 2; r++)
        nbcx_comm_free(&c[r]);
    CHECK_OK(nbcx_progress_set(saved));
    close(ev.efd);
}

/* A bcast of N elements 1, 2, ... from rank 0 into buf[1]: the root's
 * part is over at once (eager), rank 1's (w->req) stays in flight until
 * the message is delivered. */
static void start_bcast(nbcx_comm c[2], int32_t buf[2][N], struct waiter *w)
{
    for (int i = 0; i < N; i++) {
        buf[0][i] = i + 1;
        buf[1][i] = -1;
    }
    nbcx_request root;
    CHECK_OK(nbcx_ibcast(buf[0], N, NBCX_INT32, 0, c[0], &root));
    CHECK_OK(nbcx_wait(&root));
    CHECK_OK(nbcx_ibcast(buf[1], N, NBCX_INT32, 0, c[1], &w->req));
}

static void test_spurious_events(void)
{
    nbcx_comm c[2];
    nbcx_progress_mode saved;
    if (!setup(c, &saved))
        return;
    static int32_t buf[2][N];
    struct waiter w;
    start_bcast(c, buf, &w);
    pthread_t waiter;
    if (!CHECK(pthread_create(&waiter, NULL, wait_main, &w) == 0,
            "pthread_create"))
        return;
    /* The waiter's kick, its spin, then the thread sleeps on the fd. */
    bool ok = armed_again(0);
    CHECK(ok, "the progress thread never armed the transport");
    long tests0 = atomic_load(&ev.tests), events = 0;
    for (; ok && events < EVENTS; events++) {
        long arms = atomic_load(&ev.arms);
        uint64_t one = 1;
        (void)!write(ev.efd, &one, sizeof one);
        ok = armed_again(arms);
        CHECK(ok, "event %ld: the thread did not sleep again", events);
    }
    long polls = atomic_load(&ev.tests) - tests0;
    printf("%ld events, %ld polls\n", events, polls);
    CHECK(polls <= MAX_POLLS * events, "%ld polls for %ld events that "
          "finished nothing (at most %d each)", polls, events, MAX_POLLS);
    /* The message arrives: the bcast completes, with the root's data. */
    finish(waiter, &w, buf[1], N, c, saved);
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000),
                           .tv_nsec = (long)(ns % 1000000000) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void test_paced_transfer(void)
{
    /* One 64 KiB message, not a chain of fragments too small to be
     * timed (read at the first collective). */
    setenv("NBCX_BCAST_ALG", "binomial", 1);
    nbcx_comm c[2];
    nbcx_progress_mode saved;
    if (!setup(c, &saved))
        return;
    /* A bandwidth measured before: 64 KiB take PACED_NS. */
    pthread_mutex_lock(&nbcxi_engine_lock);
    nbcxi_pace_reset();
    nbcxi_pace_sample(BIG * 4, 1, PACED_NS, 1 + PACED_NS);
    pthread_mutex_unlock(&nbcxi_engine_lock);
    static int32_t buf[2][BIG];
    for (int i = 0; i < BIG; i++) {
        buf[0][i] = i + 1;
        buf[1][i] = -1;
    }
    /* Rank 1 waits for the bcast; the root has not started it. */
    struct waiter w;
    int64_t t0 = nbcxi_now_ns();
    CHECK_OK(nbcx_ibcast(buf[1], BIG, NBCX_INT32, 0, c[1], &w.req));
    pthread_t waiter;
    if (!CHECK(pthread_create(&waiter, NULL, wait_main, &w) == 0,
               "pthread_create"))
        return;
    /* A third of the predicted time: the timer, no arm. */
    sleep_ns(PACED_NS / 3);
    long arms = atomic_load(&ev.arms), polls = atomic_load(&ev.tests);
    int64_t t1 = nbcxi_now_ns();
    printf("in flight (%.0f ms): %ld polls, %ld arms\n", (t1 - t0) / 1e6,
           polls, arms);
    if (t1 - t0 < PACED_NS) /* (a machine too slow to tell: no verdict) */
        CHECK(arms == 0, "the thread armed the transport %ld times while "
              "a transfer was predicted to be in flight", arms);
    CHECK(polls >= 10, "only %ld polls: the thread does not poll on the "
          "timer while the transfer is in flight", polls);
    /* The prediction passes: the root is late, the thread sleeps on the
     * fd. */
    bool ok = armed_again(0) || armed_again(0);
    CHECK(ok, "the thread never armed the transport after the predicted "
          "completion");
    printf("armed after %.0f ms\n", (nbcxi_now_ns() - t0) / 1e6);
    /* The root sends (eager): the message arrives, the bcast ends. */
    nbcx_request root;
    CHECK_OK(nbcx_ibcast(buf[0], BIG, NBCX_INT32, 0, c[0], &root));
    CHECK_OK(nbcx_wait(&root));
    finish(waiter, &w, buf[1], BIG, c, saved);
}

static void test_stream_events(void)
{
    nbcx_comm c[2];
    nbcx_progress_mode saved;
    if (!setup(c, &saved))
        return;
    /* Rank 1's receive stays in flight, and nobody waits for it: the
     * thread sleeps on the fd. */
    static int32_t buf[2][N];
    struct waiter w;
    start_bcast(c, buf, &w);
    bool ok = armed_again(0) || armed_again(0);
    CHECK(ok, "the progress thread never armed the transport");
    /* A stream: an event every STREAM_GAP_NS, each finishing nothing. */
    long arms0 = atomic_load(&ev.arms), polls0 = atomic_load(&ev.tests);
    long events = 0;
    int64_t t0 = nbcxi_now_ns();
    while (ok && nbcxi_now_ns() - t0 < STREAM_NS) {
        uint64_t one = 1;
        (void)!write(ev.efd, &one, sizeof one);
        events++;
        sleep_ns(STREAM_GAP_NS);
    }
    int64_t took = nbcxi_now_ns() - t0;
    long arms = atomic_load(&ev.arms) - arms0;
    long polls = atomic_load(&ev.tests) - polls0;
    printf("%ld events in %.0f ms: %ld arms, %ld polls\n", events,
           took / 1e6, arms, polls);
    /* At most one arm per 2 ms of stream, and a few more; a machine too
     * slow to make four events per allowed arm gets no verdict. */
    long max_arms = (long)(took / GRACE_NS) + 10;
    if (events >= 4 * max_arms)
        CHECK(arms <= max_arms, "%ld arms for %ld events in %.0f ms that "
              "finished nothing (at most %ld): the thread slept on the fd "
              "after every chunk of the stream", arms, events, took / 1e6,
              max_arms);
    /* The message arrives: the bcast completes, with the root's data. */
    pthread_t waiter;
    if (!CHECK(pthread_create(&waiter, NULL, wait_main, &w) == 0,
               "pthread_create"))
        return;
    finish(waiter, &w, buf[1], N, c, saved);
}

static const struct th_test tests[] = {
    { "spurious_events", test_spurious_events },
    { "paced_transfer", test_paced_transfer },
    { "stream_events", test_stream_events },
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests, TH_COUNT(tests));
}
