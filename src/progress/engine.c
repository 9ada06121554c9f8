/* engine.c - requests and the progress engine (caller mode).
 *
 * Every started operation is on one process-wide list. Any call that
 * makes progress (test, wait, nbcx_progress) advances all of them, not
 * just the one asked about: a rank waiting for one collective must keep
 * serving the others, or two ranks waiting for different collectives
 * would deadlock. The list and the executor are guarded by one mutex, so
 * progress may be driven from any thread (a progress thread later).
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "../core.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct nbcx_request_s *active; /* doubly linked, under lock */

static void unlink_request(struct nbcx_request_s *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        active = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->prev = r->next = NULL;
}

static void finish(struct nbcx_request_s *r, int err)
{
    r->err = err;
    atomic_store_explicit(&r->complete, true, memory_order_release);
}

int nbcxi_start(struct nbcx_sched_s *s, nbcx_request *req)
{
    *req = NBCX_REQUEST_NULL;
    int err = nbcxi_sched_prepare(s);
    struct nbcx_request_s *r = err ? NULL : calloc(1, sizeof *r);
    if (!r) {
        nbcxi_sched_destroy(s);
        return err ? err : NBCX_ERR_NOMEM;
    }
    r->sched = s;
    atomic_init(&r->complete, false);
    /* Collectives are started in the same order on every rank, so the
     * sequence number (and with it the tag space) agrees everywhere. */
    s->seq = atomic_fetch_add_explicit(&s->comm->seq, 1, memory_order_relaxed);

    bool done;
    pthread_mutex_lock(&lock);
    err = nbcxi_sched_begin(s, &done);
    if (err == NBCX_SUCCESS && !done) {
        r->next = active;
        if (active)
            active->prev = r;
        active = r;
    }
    pthread_mutex_unlock(&lock);
    /* A communication error met while starting (the executor has
     * cancelled what it posted) is reported at completion, as MPI does:
     * part of the schedule may already have run. */
    if (done)
        finish(r, err);
    *req = r;
    return NBCX_SUCCESS;
}

/* Advances every active operation; returns how many nodes finished. */
static long progress_all(void)
{
    long advanced = 0;
    pthread_mutex_lock(&lock);
    struct nbcx_request_s *r = active;
    while (r) {
        struct nbcx_request_s *next = r->next;
        struct nbcx_sched_s *s = r->sched;
        int before = s->ndone;
        bool done;
        int err = nbcxi_sched_progress(s, &done);
        advanced += s->ndone - before;
        if (done) {
            unlink_request(r);
            finish(r, err);
            advanced++;
        }
        r = next;
    }
    pthread_mutex_unlock(&lock);
    return advanced;
}

int nbcx_progress(void)
{
    progress_all();
    return NBCX_SUCCESS;
}

static bool is_complete(nbcx_request r)
{
    return atomic_load_explicit(&r->complete, memory_order_acquire);
}

/* Releases a completed request and returns its result. */
static int retire(nbcx_request *req)
{
    struct nbcx_request_s *r = *req;
    int err = r->err;
    nbcxi_sched_destroy(r->sched);
    free(r);
    *req = NBCX_REQUEST_NULL;
    return err;
}

/* Called in a wait loop: yields the core when polling found nothing
 * several times in a row (ranks often outnumber cores). */
static void backoff(long advanced, int *idle)
{
    if (advanced) {
        *idle = 0;
    } else if (++*idle > 64) {
        sched_yield();
    }
}

int nbcx_test(nbcx_request *req, int *flag)
{
    if (!req || !flag)
        return NBCX_ERR_REQUEST;
    *flag = 0;
    if (!*req) {
        *flag = 1;
        return NBCX_SUCCESS;
    }
    if (!is_complete(*req))
        progress_all();
    if (!is_complete(*req))
        return NBCX_SUCCESS;
    *flag = 1;
    return retire(req);
}

int nbcx_wait(nbcx_request *req)
{
    if (!req)
        return NBCX_ERR_REQUEST;
    if (!*req)
        return NBCX_SUCCESS;
    int idle = 0;
    while (!is_complete(*req))
        backoff(progress_all(), &idle);
    return retire(req);
}

int nbcx_testall(int count, nbcx_request reqs[], int *flag)
{
    if (count < 0 || (count > 0 && !reqs) || !flag)
        return NBCX_ERR_REQUEST;
    *flag = 0;
    progress_all();
    for (int i = 0; i < count; i++)
        if (reqs[i] && !is_complete(reqs[i]))
            return NBCX_SUCCESS;
    /* All complete: release them all (MPI_Testall semantics). */
    int err = NBCX_SUCCESS;
    for (int i = 0; i < count; i++) {
        if (reqs[i]) {
            int e = retire(&reqs[i]);
            if (err == NBCX_SUCCESS)
                err = e;
        }
    }
    *flag = 1;
    return err;
}

int nbcx_waitall(int count, nbcx_request reqs[])
{
    if (count < 0 || (count > 0 && !reqs))
        return NBCX_ERR_REQUEST;
    int err = NBCX_SUCCESS, idle = 0;
    for (int i = 0; i < count; i++) {
        while (reqs[i] && !is_complete(reqs[i]))
            backoff(progress_all(), &idle);
        if (reqs[i]) {
            int e = retire(&reqs[i]);
            if (err == NBCX_SUCCESS)
                err = e;
        }
    }
    return err;
}

int nbcx_waitany(int count, nbcx_request reqs[], int *index)
{
    if (count < 0 || (count > 0 && !reqs) || !index)
        return NBCX_ERR_REQUEST;
    *index = -1;
    int idle = 0;
    for (;;) {
        bool any = false;
        for (int i = 0; i < count; i++) {
            if (!reqs[i])
                continue;
            any = true;
            if (is_complete(reqs[i])) {
                *index = i;
                return retire(&reqs[i]);
            }
        }
        if (!any)
            return NBCX_SUCCESS;
        backoff(progress_all(), &idle);
    }
}
