/*
 * exec.c - the simulator's data mode: the real executor
 * (sched/executor.c) runs every rank's schedule with real data, over a
 * transport that delivers messages inside this process as MPI would
 * (eager, matched by source and tag in posting order), one thread driving
 * all P ranks. It checks what the timing path assumes: the schedules it
 * simulates complete under the real executor, every message is matched
 * with the size it expects, and (nbcx-sim --verify, tests/sim) every
 * algorithm of a collective leaves the same bytes in every rank's
 * buffers. Small P only: P real buffers are allocated. Time is not
 * simulated here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simint.h"

struct xmsg { /* a sent message not yet received: its bytes, packed */
    int src, tag;
    size_t bytes;
    struct xmsg *next;
    unsigned char data[];
};

struct xreq {
    bool done, recv;
    int peer, tag, count, err;
    void *buf;
    struct nbcx_datatype_s *type;
    struct xreq *next; /* posted receives of a rank, in order */
};

struct xworld {
    int P;
    struct xmsg **unexp, **unexp_tail;  /* per rank */
    struct xreq **posted, **posted_tail;
    long long messages;
};

struct xrank {
    struct xworld *W;
    int rank;
};

static int deliver(struct xreq *rq, const void *data, size_t bytes)
{
    size_t want = (size_t)rq->count * rq->type->size;
    rq->done = true;
    if (bytes != want)
        return rq->err = NBCX_ERR_TRUNCATE;
    return rq->err = nbcxi_type_unpack(data, rq->count, rq->type, rq->buf);
}

static int x_isend(nbcxi_transport *t, const void *buf, int count,
                   struct nbcx_datatype_s *type, int peer, int tag, void *req)
{
    struct xrank *me = t->state;
    struct xworld *W = me->W;
    size_t bytes = (size_t)count * type->size;
    struct xreq *sq = calloc(1, sizeof *sq);
    struct xmsg *m = malloc(sizeof *m + (bytes ? bytes : 1));
    if (!sq || !m) {
        free(sq);
        free(m);
        return NBCX_ERR_NOMEM;
    }
    int err = nbcxi_type_pack(buf, count, type, m->data);
    W->messages++;
    /* the first posted receive of peer for (me, tag) */
    struct xreq **pp = &W->posted[peer], *prev = NULL;
    for (struct xreq *rq = *pp; rq; prev = rq, rq = rq->next)
        if (rq->peer == me->rank && rq->tag == tag) {
            if (prev)
                prev->next = rq->next;
            else
                W->posted[peer] = rq->next;
            if (W->posted_tail[peer] == rq)
                W->posted_tail[peer] = prev;
            int e = deliver(rq, m->data, bytes);
            free(m);
            sq->done = true;
            sq->err = err ? err : e;
            *(struct xreq **)req = sq;
            return NBCX_SUCCESS;
        }
    m->src = me->rank, m->tag = tag, m->bytes = bytes, m->next = NULL;
    if (W->unexp_tail[peer])
        W->unexp_tail[peer]->next = m;
    else
        W->unexp[peer] = m;
    W->unexp_tail[peer] = m;
    sq->done = true; /* eager: the data is copied */
    sq->err = err;
    *(struct xreq **)req = sq;
    return NBCX_SUCCESS;
}

static int x_irecv(nbcxi_transport *t, void *buf, int count,
                   struct nbcx_datatype_s *type, int peer, int tag, void *req)
{
    struct xrank *me = t->state;
    struct xworld *W = me->W;
    struct xreq *rq = calloc(1, sizeof *rq);
    if (!rq)
        return NBCX_ERR_NOMEM;
    *rq = (struct xreq){ false, true, peer, tag, count, 0, buf, type, NULL };
    *(struct xreq **)req = rq;
    struct xmsg *prev = NULL;
    for (struct xmsg *m = W->unexp[me->rank]; m; prev = m, m = m->next)
        if (m->src == peer && m->tag == tag) {
            if (prev)
                prev->next = m->next;
            else
                W->unexp[me->rank] = m->next;
            if (W->unexp_tail[me->rank] == m)
                W->unexp_tail[me->rank] = prev;
            deliver(rq, m->data, m->bytes);
            free(m);
            return NBCX_SUCCESS;
        }
    if (W->posted_tail[me->rank])
        W->posted_tail[me->rank]->next = rq;
    else
        W->posted[me->rank] = rq;
    W->posted_tail[me->rank] = rq;
    return NBCX_SUCCESS;
}

static int x_testsome(nbcxi_transport *t, int n, void *reqs, int *ndone,
                      int *idx)
{
    (void)t;
    struct xreq **r = reqs;
    int k = 0, err = NBCX_SUCCESS;
    for (int i = 0; i < n; i++)
        if (r[i]->done) {
            if (r[i]->err && !err)
                err = r[i]->err;
            free(r[i]);
            idx[k++] = i;
        }
    *ndone = k;
    return err;
}

static void x_cancel(nbcxi_transport *t, void *req)
{
    struct xrank *me = t->state;
    struct xworld *W = me->W;
    struct xreq *rq = *(struct xreq **)req, *prev = NULL;
    if (rq->recv && !rq->done)
        for (struct xreq *p = W->posted[me->rank]; p; prev = p, p = p->next)
            if (p == rq) {
                if (prev)
                    prev->next = p->next;
                else
                    W->posted[me->rank] = p->next;
                if (W->posted_tail[me->rank] == p)
                    W->posted_tail[me->rank] = prev;
                break;
            }
    free(rq);
}

static void x_destroy(nbcxi_transport *t)
{
    free(t->state);
    free(t);
}

static const struct nbcxi_transport_ops x_ops = {
    .name = "sim-data",
    .req_size = sizeof(struct xreq *),
    .isend = x_isend,
    .irecv = x_irecv,
    .testsome = x_testsome,
    .cancel = x_cancel,
    .destroy = x_destroy,
};

static int x_comm(struct xworld *W, int rank, struct nbcx_comm_s **out)
{
    *out = NULL;
    nbcxi_transport *tp = calloc(1, sizeof *tp);
    struct xrank *me = malloc(sizeof *me);
    if (!tp || !me) {
        free(tp);
        free(me);
        return NBCX_ERR_NOMEM;
    }
    *me = (struct xrank){ W, rank };
    tp->ops = &x_ops;
    tp->tag_ub = (1 << 24) - 1;
    tp->state = me;
    return nbcxi_comm_create(rank, W->P, tp, out);
}

/* Input bytes: a pattern of the rank and the position; int32 elements of
 * the reductions stay small (no overflow in a sum over ranks). */
static void fill(unsigned char *b, size_t n, int rank, int salt, bool ints)
{
    if (ints) {
        for (size_t i = 0; i + 4 <= n; i += 4) {
            int32_t v = (int32_t)((rank * 131 + (long)(i / 4) * 7 + salt) %
                                  1000);
            memcpy(b + i, &v, 4);
        }
        return;
    }
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(rank * 29 + i * 3 + (size_t)salt);
}

int nbcxi_sim_execute(const struct nbcxi_sim_config *cfg, unsigned char **out,
                      size_t *outlen, char *err, size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    err[0] = '\0';
    if (cfg->coll < 0 || cfg->coll >= NBCXI_NCOLL || cfg->ranks < 1 ||
        cfg->ranks > 1024 || cfg->root < 0 || cfg->root >= cfg->ranks) {
        snprintf(err, errlen, "the data mode runs 1 to 1024 ranks (and a "
                 "root among them)");
        return NBCXI_SIM_EARG;
    }
    struct setup S = { 0 };
    S.cfg = cfg;
    if (cfg->alg && strcmp(cfg->alg, "auto") != 0 &&
        !(S.alg = sim_find_alg(cfg->coll, cfg->alg))) {
        snprintf(err, errlen, "no algorithm '%s'", cfg->alg);
        return NBCXI_SIM_EARG;
    }
    int rc = sim_setup_job(&S, err, errlen);
    const int P = cfg->ranks;
    const size_t one = S.one;
    struct xworld W = { .P = P };
    W.unexp = calloc((size_t)P, sizeof *W.unexp);
    W.unexp_tail = calloc((size_t)P, sizeof *W.unexp_tail);
    W.posted = calloc((size_t)P, sizeof *W.posted);
    W.posted_tail = calloc((size_t)P, sizeof *W.posted_tail);
    struct nbcx_sched_s **s = calloc((size_t)P, sizeof *s);
    unsigned char *mem = malloc(2 * one * (size_t)P);
    bool *done = calloc((size_t)P, sizeof *done);
    int left = P;
    if (rc == NBCXI_SIM_OK && (!W.unexp || !W.unexp_tail || !W.posted ||
                               !W.posted_tail || !s || !mem || !done)) {
        snprintf(err, errlen, "out of memory");
        rc = NBCXI_SIM_ENOMEM;
    }
    bool ints = S.type->size == 4;
    for (int r = 0; r < P && rc == NBCXI_SIM_OK; r++) {
        unsigned char *sb = mem + 2 * one * (size_t)r, *rb = sb + one;
        fill(sb, one, r, 1, ints);
        fill(rb, one, r, 2, ints); /* bcast's root data; in/out pattern */
        S.sbuf = (char *)sb;
        S.rbuf = (char *)rb;
        struct nbcx_comm_s *comm;
        int e = x_comm(&W, r, &comm);
        if (e == NBCX_SUCCESS && cfg->coll >= NBCXI_NEIGHBOR_ALLGATHER) {
            int periods[2] = { 1, 1 };
            e = nbcx_comm_set_cart(comm, 2, S.dims, periods);
        }
        if (e == NBCX_SUCCESS)
            e = nbcxi_sched_new(comm, &s[r]);
        if (comm)
            nbcxi_comm_release(comm);
        if (e == NBCX_SUCCESS) {
            struct nbcxi_coll_args a;
            sim_setup_rank(&S, r, atomic_load(&s[r]->build.comm->topo), &a);
            if (S.alg && S.alg->usable && !S.alg->usable(s[r], &a))
                e = NBCX_ERR_ALGORITHM;
            else if (S.alg)
                e = S.alg->build(s[r], &a);
            else
                e = nbcxi_coll_build((enum nbcxi_coll)cfg->coll, s[r], &a,
                                     NULL);
            if (e == NBCX_SUCCESS)
                e = s[r]->build.err;
        }
        if (e != NBCX_SUCCESS) {
            snprintf(err, errlen, "rank %d: building failed: %s", r,
                     nbcx_error_string(e));
            rc = NBCXI_SIM_EBUILD;
        }
    }
    /* run: every rank starts, then passes until all are done */
    for (int r = 0; r < P && rc == NBCXI_SIM_OK; r++) {
        int e = nbcxi_sched_begin(s[r], &done[r]);
        if (e != NBCX_SUCCESS) {
            snprintf(err, errlen, "rank %d: %s", r, nbcx_error_string(e));
            rc = NBCXI_SIM_EMATCH;
        }
        left -= done[r];
    }
    while (rc == NBCXI_SIM_OK && left > 0) {
        int moved = 0;
        for (int r = 0; r < P && rc == NBCXI_SIM_OK; r++) {
            if (done[r])
                continue;
            int before = s[r]->exec.ndone;
            int e = nbcxi_sched_progress(s[r], true, &done[r]);
            if (e != NBCX_SUCCESS) {
                snprintf(err, errlen, "rank %d: %s", r,
                         nbcx_error_string(e));
                rc = NBCXI_SIM_EMATCH;
            }
            moved += s[r]->exec.ndone != before;
            left -= done[r];
        }
        if (rc == NBCXI_SIM_OK && !moved) {
            snprintf(err, errlen, "deadlock: %d rank(s) cannot finish", left);
            rc = NBCXI_SIM_EMATCH;
        }
    }
    for (int r = 0; r < P && rc == NBCXI_SIM_OK; r++)
        if (W.unexp[r] || W.posted[r]) {
            snprintf(err, errlen, "rank %d: %s left over", r,
                     W.unexp[r] ? "a message nobody received"
                                : "a receive nobody sent to");
            rc = NBCXI_SIM_EMATCH;
        }
    if (rc == NBCXI_SIM_OK) { /* the receive buffers, rank after rank */
        *out = malloc(one * (size_t)P);
        if (!*out) {
            snprintf(err, errlen, "out of memory");
            rc = NBCXI_SIM_ENOMEM;
        } else {
            for (int r = 0; r < P; r++)
                memcpy(*out + one * (size_t)r, mem + 2 * one * (size_t)r + one,
                       one);
            *outlen = one * (size_t)P;
        }
    }
    for (int r = 0; s && done && r < P; r++) {
        if (s[r] && !done[r] && s[r]->exec.succ)
            nbcxi_sched_abort(s[r], NBCX_ERR_INTERN); /* cancels requests */
        nbcxi_sched_destroy(s[r]);
    }
    for (int r = 0; W.unexp && r < P; r++)
        while (W.unexp[r]) {
            struct xmsg *m = W.unexp[r];
            W.unexp[r] = m->next;
            free(m);
        }
    free(W.unexp);
    free(W.unexp_tail);
    free(W.posted);
    free(W.posted_tail);
    free(s);
    free(mem);
    free(done);
    sim_free_setup(&S);
    return rc;
}
