/*
 * simulate.c - the discrete-event simulation of the compact schedules
 * (build.c) under a LogGP model (docs/sim.md has the same in prose).
 *
 * Each simulated rank has one CPU that runs its schedule's work one item
 * at a time, in the order the items become ready (ties: the order they
 * were found, which follows the executor's: receives first, then node
 * order, then successor order):
 *
 *   send of m bytes    o on the CPU; then the sending NIC injects it as
 *                      soon as it is free: inject time w, and the NIC is
 *                      busy until w + g + (m-1)G; the first byte reaches
 *                      the receiving NIC at w + L, which takes it when it
 *                      is free (busy g + (m-1)G per message, too); the
 *                      last byte is there (m-1)G later: the arrival. The
 *                      send completes (its successors may run) when the
 *                      last byte has left, w + (m-1)G.
 *   receive            posting costs nothing; once the receive is posted
 *                      and its message has arrived, o on the CPU, and it
 *                      completes.
 *   copy, reduction    bytes x copy_per_byte (reduce_per_byte) on the CPU;
 *                      at most cache_bytes bytes: x copy_per_byte_cached
 *                      (reduce_per_byte_cached), the operands being in
 *                      the core's cache.
 *   call               nothing.
 *
 * nbcx's own engine (the parameter file's start_cost, node_cost and
 * message_cost, default 0): each rank's start first takes start_cost on
 * its CPU, and every node the executor runs takes node_cost more on the
 * CPU: added to a send's o, to a copy's or reduction's time, as the CPU
 * time of a receive's posting and of a call (with node_cost 0 those two
 * cost nothing and do not wait for the CPU, as before). Both ends of a
 * message take message_cost more than o: o + message_cost at the send
 * and at the receive's completion.
 *
 * With intra_cpu_share f > 0 ("intra_link": "cpu" is f = 1) the CPUs
 * move the bytes of intra-node messages (shared memory, copy-in/
 * copy-out): the injection also waits for the sender's CPU and keeps it
 * busy for f (m-1)G, and the receiving NIC also waits for the receiver's
 * CPU and keeps it busy for f (m-1)G. One message alone still takes
 * L + 2o + (m-1)G; two ranks sending to each other at once take
 * 2o + (1 + f)(m-1)G (when f (m-1)G >= L).
 *
 * With "inter_link": "shared" in the parameter file one sending
 * interface serves every inter-node message of every node (the emulated
 * network: one rate-limited loopback for both directions).
 * One message alone thus takes o + L + (m-1)G + o. L, o, g, G are the
 * intra-node ones when both ranks are on the same node (ranks r and q
 * with r / C == q / C), else the inter-node ones. Sending and receiving
 * NICs are per rank inside a node, and per node between nodes (the C
 * ranks of a node share its network interface).
 *
 * Oversubscription (the parameter file's "sched_latency" s, which sets
 * time_share; only on nodes with more ranks C than cores_per_node n):
 * rank r runs on core (r mod C) mod n of its node, shared by k ranks.
 * The CPU work of a core's ranks is serialised (core[]: when the core
 * is free; every CPU item starts at max(ready, rank's CPU, core) and
 * reserves the core, in the order the simulation meets the items); a
 * rank that is waiting when a message reaches it pays s (k - 1) before
 * taking it (at the copy-out with a CPU share, else before the
 * receive's o: flag F_WOKEN says it was paid); and a message between
 * two ranks of one core is all CPU work at both ends (share 1). One
 * message on one core takes L + 2o + (m-1)G + s. Waiting (waiting()):
 * its CPU's work was over when the message's first byte got there, or
 * a core-mate has run on its core since its own last work (it was
 * switched out); a rank still on its core takes every message that
 * reached it meanwhile (Open MPI yields only after an empty poll).
 * With "eager_limit" E > 0 an intra-node message above E bytes goes by
 * rendezvous on such a node (ob1 over vader without single copy): the
 * header (the sending NIC's g, L; EV_LAND with F_ACKED clear), the
 * receiver switched in if waiting (s (k - 1)) answering with o on its
 * CPU, the answer L later at the sender (EV_INJECT again, F_ACKED set),
 * which, switched in if waiting (rndv_latency (k - 1)), sends the body
 * as an eager message whose receiver pays rndv_latency (k - 1), not s,
 * if waiting. One such message on one core: 3o + 3L + s + 2h + B.
 *
 * Progress. Whoever calls start runs what is ready at once, on the
 * application's core: the nodes without predecessors and, as the
 * executor does, the local nodes they release (this is "the start", it
 * ends at t_b); the messages it posts fly on their own. After it:
 *   thread  a progress core per rank runs the rest as it becomes ready;
 *           the computation of c µs runs on the application core from
 *           t_b, and wait returns at max(t_b + c, completion).
 *   caller  nothing runs until wait is called, at t_w = t_b + c: every
 *           CPU item that becomes ready after the start waits until t_w.
 *   split   (progress/mode_split.c) the nodes of the S binomial-tree levels
 *           nearest the leaves (1 <= |level| <= S) belong to the
 *           application: they run on the application core, during the
 *           start (which, as nbcx's, lasts until the application's
 *           nodes of the levels going up, reduce and gather, are done)
 *           and from t_w = t_b + c on; the other nodes run on the
 *           progress core as in thread mode. S = 0 is thread mode.
 * With c = 0 thread and caller are the same.
 *
 * Shared progress cores (run->progress_cores_per_node = k > 0, thread
 * and split): instead of a progress core per rank, each node has a pool
 * of k progress cores that serves the progress work of all its C ranks
 * (in split mode: the nodes of the upper levels). Each rank still has
 * one progress thread (as in MPC, paper 002: a thread per MPI task, the
 * threads bound to the communication cores), which now needs a core of
 * the pool: an item ready at t goes to the pool's core that is free
 * first (the lowest-numbered on ties) and starts at max(t, that core
 * free, the rank's thread free; the thread is first free when the
 * rank's start is over). With k = 1 the progress work of the C ranks is
 * serialised (their o one after the other); with k >= C it is the same
 * as a core per rank. The application cores still run the start (and,
 * in split mode, the lower S levels). This is paper 002's manycore node:
 * N application cores and N_proc - N communication cores.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simint.h"

enum { EV_INJECT, EV_LAND, EV_ARRIVE, EV_DONE };
enum { F_POSTED = 1, F_ARRIVED = 2, F_DONE = 4, F_WOKEN = 8,
       F_ACKED = 16 /* a rendezvous send: the receiver has answered */ };

struct ev {
    double t;
    uint64_t seq;
    uint32_t node;
    uint32_t rt; /* rank << 2 | type */
};

/* The events still to come, least (t, seq) first: a 4-ary heap (half
 * the levels of a binary one, the four children of a node in one or two
 * cache lines: an all-to-all's million events at 1,024 ranks made the
 * binary heap's pop most of the simulation's time). seq is unique, so
 * the order of the events, and every result, does not depend on the
 * heap's shape. */
struct heap {
    struct ev *a;
    size_t n, cap;
};

enum { HEAP_D = 4 };

static bool before(const struct ev *x, const struct ev *y)
{
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static int push(struct heap *h, struct ev e)
{
    if (h->n == h->cap) {
        size_t nc = h->cap ? 2 * h->cap : 4096;
        struct ev *p = realloc(h->a, nc * sizeof *p);
        if (!p)
            return -1;
        h->a = p;
        h->cap = nc;
    }
    size_t i = h->n++;
    while (i > 0) {
        size_t up = (i - 1) / HEAP_D;
        if (!before(&e, &h->a[up]))
            break;
        h->a[i] = h->a[up];
        i = up;
    }
    h->a[i] = e;
    return 0;
}

static struct ev pop(struct heap *h)
{
    struct ev top = h->a[0], last = h->a[--h->n];
    size_t i = 0, n = h->n;
    for (;;) {
        size_t c = HEAP_D * i + 1;
        if (c >= n)
            break;
        size_t end = c + HEAP_D < n ? c + HEAP_D : n, m = c;
        for (size_t k = c + 1; k < end; k++)
            if (before(&h->a[k], &h->a[m]))
                m = k;
        if (!before(&h->a[m], &last))
            break;
        h->a[i] = h->a[m];
        i = m;
    }
    if (n)
        h->a[i] = last;
    return top;
}

struct work {
    uint32_t node;
    double t;
};

struct sim {
    struct nbcxi_sim_job *J;
    const struct nbcxi_sim_params *p;
    const struct nbcxi_sim_run *run;
    struct heap h;
    uint64_t seq;
    /* per simulated rank; tb < 0: the start is not over (split) */
    double *cpu, *snic, *rnic, *done, *tb, *cpu_app;
    /* shared progress cores: k per node, pool[node * k + j] free at */
    double *pool;
    int k;
    /* oversubscribed cores (time_share): core[i] free at, and the rank
     * whose work it ran last (-1: none yet) */
    double *core;
    int *core_last;
    bool ts;
    uint32_t *left, *up_left;
    /* per node (inter-node NICs) */
    double *snic_n, *rnic_n;
    /* ready nodes found while handling one event */
    struct work *wl;
    size_t nwl, wlcap;
    bool init;  /* in the start call */
    int fail;
    long long events;
};

/* An event of type on node of rank r at t. */
static void event(struct sim *S, double t, int r, uint32_t node,
                  uint32_t type)
{
    if (push(&S->h, (struct ev){ t, S->seq++, node,
                                 (uint32_t)r << 2 | type }))
        S->fail = NBCXI_SIM_ENOMEM;
}

static void later(struct sim *S, uint32_t node, double t)
{
    if (S->nwl == S->wlcap) {
        size_t nc = S->wlcap ? 2 * S->wlcap : 1024;
        struct work *p = realloc(S->wl, nc * sizeof *p);
        if (!p) {
            S->fail = NBCXI_SIM_ENOMEM;
            return;
        }
        S->wl = p;
        S->wlcap = nc;
    }
    S->wl[S->nwl++] = (struct work){ node, t };
}

static bool same_node(const struct sim *S, int r, int q)
{
    return r / S->J->C == q / S->J->C;
}

static const struct nbcxi_loggp *model(const struct sim *S, int r, int q)
{
    return same_node(S, r, q) ? &S->p->intra : &S->p->inter;
}

static double per_byte(const struct nbcxi_loggp *m, uint64_t bytes)
{
    return bytes > 1 ? (double)(bytes - 1) * m->G : 0;
}

/* Split mode: whether node i belongs to the application thread. */
static bool app_node(const struct sim *S, uint32_t i)
{
    int lv = S->J->node[i].level;
    lv = lv < 0 ? -lv : lv;
    return S->run->progress == NBCXI_SIM_SPLIT && lv >= 1 &&
           lv <= S->run->split_levels;
}

/* The pool core of rank r's node that is free first. */
static double *pool_core(struct sim *S, int r)
{
    double *c = &S->pool[(size_t)(r / S->J->C) * (size_t)S->k];
    double *best = c;
    for (int j = 1; j < S->k; j++)
        if (c[j] < *best)
            best = &c[j];
    return best;
}

/* Time-sharing (p->time_share, a node with more ranks than cores): the
 * core rank r runs on, and how many ranks of its node share it. */
static double *core_of(const struct sim *S, int r)
{
    int C = S->J->C, n = S->p->cores_per_node;
    return &S->core[(size_t)(r / C) * (size_t)n + (size_t)(r % C % n)];
}

static int *core_last_of(const struct sim *S, int r)
{
    int C = S->J->C, n = S->p->cores_per_node;
    return &S->core_last[(size_t)(r / C) * (size_t)n + (size_t)(r % C % n)];
}

static int core_ranks(const struct sim *S, int r)
{
    int C = S->J->C, n = S->p->cores_per_node;
    int first = r / C * C, size = S->J->P - first < C ? S->J->P - first : C;
    return (size - r % C % n + n - 1) / n;
}

/* Whether rank r must be switched in to take a message that reached it
 * at t: it was idle then (its CPU's work over), or, on a time-shared
 * core, a core-mate has run since its own last work (it was switched
 * out). A rank still on its core takes every message that reached it. */
static bool waiting(const struct sim *S, int r, double t)
{
    return t > S->cpu[r] || (S->ts && *core_last_of(S, r) != r);
}

/* What a rank that was waiting pays before its CPU handles a message:
 * the scheduler switching it in past its core-mates. */
static double wake(const struct sim *S, int r)
{
    return S->ts ? S->p->sched_latency * (core_ranks(S, r) - 1) : 0;
}

/* A rendezvous hand-over inside a message (the sender taking the
 * answer, the receiver taking the body): rndv_latency per core-mate. */
static double handover(const struct sim *S, int r)
{
    return S->p->rndv_latency * (core_ranks(S, r) - 1);
}

/* The share of an intra-node message's (m-1)G that is CPU time of its
 * sender r and of its receiver q (global ranks of one node):
 * intra_cpu_share, or all of it when both run on the same time-shared
 * core (the copy-in and the copy-out cannot overlap: one core does
 * both). */
static double cpu_share(const struct sim *S, int r, int q)
{
    int C = S->J->C, n = S->p->cores_per_node;
    if (S->ts && r % C % n == q % C % n)
        return 1;
    return S->p->intra_cpu_share;
}

/* Whether a message of `bytes` from r to q goes by rendezvous on a
 * time-shared core (eager_limit, docs/sim.md): its header first, the
 * receiver's answer, then the body, each needing its rank switched in. */
static bool rendezvous(const struct sim *S, int r, int q, uint64_t bytes)
{
    return S->ts && S->p->eager_limit > 0 &&
           (double)bytes > S->p->eager_limit && same_node(S, r, q);
}

/* Work of dur on rank r's CPU from at least t, on a time-shared core:
 * after the core-mates' work; returns when it starts. */
static double core_run(struct sim *S, int r, double t, double dur)
{
    if (S->ts) {
        double *c = core_of(S, r);
        if (t < *c)
            t = *c;
        *c = t + dur;
        *core_last_of(S, r) = r;
    }
    return t;
}

/* Runs an item of node i of rank r, ready at t, taking dur on the CPU
 * that runs it; returns when it starts. */
static double cpu_run(struct sim *S, int r, uint32_t i, double t, double dur)
{
    bool split = S->run->progress == NBCXI_SIM_SPLIT;
    bool app = app_node(S, i);
    double *cpu = split && (app || S->init) ? &S->cpu_app[r] : &S->cpu[r];
    double *core = NULL; /* the shared progress core, if any */
    if (S->k > 0 && !S->init && !app &&
        S->run->progress != NBCXI_SIM_CALLER) {
        core = pool_core(S, r);
        if (t < *core)
            t = *core;
    }
    double s = t > *cpu ? t : *cpu;
    if (!S->init && (S->run->progress == NBCXI_SIM_CALLER ||
                     (app && S->tb[r] >= 0))) {
        double tw = S->tb[r] + S->run->compute_us;
        if (s < tw)
            s = tw;
    }
    if (!core)
        s = core_run(S, r, s, dur);
    *cpu = s + dur;
    if (core)
        *core = s + dur;
    return s;
}

static void node_done(struct sim *S, int r, uint32_t i, double t)
{
    const struct nbcxi_sim_job *J = S->J;
    S->J->flags[i] |= F_DONE;
    S->left[r]--;
    if (J->node[i].level > 0 && app_node(S, i) && --S->up_left[r] == 0 &&
        !S->init && S->tb[r] < 0) /* the start returns */
        S->tb[r] = t > S->cpu_app[r] ? t : S->cpu_app[r];
    if (t > S->done[r])
        S->done[r] = t;
    for (uint32_t k = J->node[i].succ; k < J->node[i + 1].succ; k++)
        if (--J->pend[J->succ[k]] == 0)
            later(S, J->succ[k], t);
}

/* A receive whose message is there and which is posted: o on the CPU.
 * arrived: the message has just arrived (the rank may have been waiting
 * for it: a time-shared core's wake-up, unless its copy-out paid it). */
static void recv_task(struct sim *S, int r, uint32_t i, double t,
                      bool arrived)
{
    const struct sim_node *n = &S->J->node[i];
    if (arrived && !(S->J->flags[i] & F_WOKEN) && S->ts && waiting(S, r, t))
        t += wake(S, r);
    const struct nbcxi_loggp *m = model(S, r, n->peer);
    double d = m->o + S->p->message_cost;
    double s = cpu_run(S, r, i, t, d);
    event(S, s + d, r, i, EV_DONE);
}

/* Node i of rank r is ready at t. */
static void ready(struct sim *S, int r, uint32_t i, double t)
{
    const struct sim_node *n = &S->J->node[i];
    switch (n->kind) {
    case NBCXI_NODE_RECV:
        if (S->p->node_cost > 0) /* the executor posts it */
            cpu_run(S, r, i, t, S->p->node_cost);
        S->J->flags[i] |= F_POSTED;
        if (S->J->flags[i] & F_ARRIVED)
            recv_task(S, r, i, t, false);
        return;
    case NBCXI_NODE_SEND: {
        const struct nbcxi_loggp *m = model(S, r, n->peer);
        double d = m->o + S->p->message_cost + S->p->node_cost;
        double s = cpu_run(S, r, i, t, d);
        event(S, s + d, r, i, EV_INJECT);
        return;
    }
    case NBCXI_NODE_COPY:
    case NBCXI_NODE_REDUCE: {
        bool cached = (double)n->bytes <= S->p->cache_bytes;
        double rate = n->kind == NBCXI_NODE_COPY
                          ? (cached ? S->p->copy_per_byte_cached
                                    : S->p->copy_per_byte)
                          : (cached ? S->p->reduce_per_byte_cached
                                    : S->p->reduce_per_byte);
        double d = (double)n->bytes * rate + S->p->node_cost;
        double e = cpu_run(S, r, i, t, d) + d;
        if (S->init)
            node_done(S, r, i, e); /* the start runs what it releases */
        else
            event(S, e, r, i, EV_DONE);
        return;
    }
    default: /* calls: only the executor's node_cost */
        if (S->p->node_cost > 0) {
            double d = S->p->node_cost, e = cpu_run(S, r, i, t, d) + d;
            if (S->init)
                node_done(S, r, i, e);
            else
                event(S, e, r, i, EV_DONE);
            return;
        }
        node_done(S, r, i, t);
        return;
    }
}

/* Runs the ready nodes found, in the order found (what they release
 * joins the end). */
static void drain(struct sim *S, int r)
{
    for (size_t k = 0; k < S->nwl && !S->fail; k++) {
        struct work w = S->wl[k];
        ready(S, r, w.node, w.t);
    }
    S->nwl = 0;
}

static void handle(struct sim *S, const struct ev *e)
{
    struct nbcxi_sim_job *J = S->J;
    const struct sim_node *n = &J->node[e->node];
    int r = (int)(e->rt >> 2);
    switch (e->rt & 3) {
    case EV_INJECT: { /* the send's o is over: to the NIC */
        bool local = same_node(S, r, n->peer);
        const struct nbcxi_loggp *m = local ? &S->p->intra : &S->p->inter;
        double *nic = local             ? &S->snic[r]
                      : S->p->inter_shared ? &S->snic_n[0] /* one link */
                                           : &S->snic_n[r / J->C];
        double t = e->t;
        if (rendezvous(S, r, n->peer, n->bytes)) {
            if (!(J->flags[e->node] & F_ACKED)) {
                /* the header alone; the body when the answer is back */
                double w = t > *nic ? t : *nic;
                *nic = w + m->g;
                event(S, w + m->L, r, e->node, EV_LAND);
                break;
            }
            /* the answer is there: the sender switched in, if waiting */
            if (waiting(S, r, t))
                t += handover(S, r);
        }
        double w = t > *nic ? t : *nic;
        double f = local ? cpu_share(S, r, n->peer) : 0;
        bool by_cpu = f > 0;
        double body = per_byte(m, n->bytes);
        if (by_cpu) {
            if (w < S->cpu[r])
                w = S->cpu[r];
            w = core_run(S, r, w, f * body);
        }
        *nic = w + m->g + body;
        if (by_cpu)
            S->cpu[r] = w + f * body; /* copy-in */
        event(S, w + m->L, r, e->node, EV_LAND);
        event(S, w + body, r, e->node, EV_DONE);
        break;
    }
    case EV_LAND: { /* first byte at the receiving NIC */
        bool local = same_node(S, r, n->peer);
        const struct nbcxi_loggp *m = local ? &S->p->intra : &S->p->inter;
        int d = n->peer % J->F;
        if (rendezvous(S, r, n->peer, n->bytes) &&
            !(J->flags[e->node] & F_ACKED)) {
            /* the header: the receiver, switched in if it was waiting,
             * answers (o on its CPU); the answer reaches the sender L
             * later, which then sends the body (EV_INJECT again) */
            double a = e->t;
            if (waiting(S, d, a))
                a += wake(S, d);
            if (a < S->cpu[d])
                a = S->cpu[d];
            a = core_run(S, d, a, m->o);
            S->cpu[d] = a + m->o;
            J->flags[e->node] |= F_ACKED;
            event(S, a + m->o + m->L, r, e->node, EV_INJECT);
            break;
        }
        double *nic = local ? &S->rnic[d] : &S->rnic_n[d / J->C];
        double a0 = e->t > *nic ? e->t : *nic;
        double f = local ? cpu_share(S, r, n->peer) : 0;
        bool by_cpu = f > 0;
        double body = per_byte(m, n->bytes);
        if (by_cpu) {
            /* its CPU takes the message here: the wake-up if it was
             * waiting, i.e. idle when the message reached it (e->t; not
             * a0, which a wake-up of the message before it may have
             * pushed past its CPU's end: a rank switched in takes every
             * message that reached it meanwhile) */
            if (S->ts && waiting(S, d, e->t))
                a0 += rendezvous(S, r, n->peer, n->bytes) ? handover(S, d)
                                                          : wake(S, d);
            J->flags[J->partner[e->node]] |= F_WOKEN;
            if (a0 < S->cpu[d])
                a0 = S->cpu[d];
            a0 = core_run(S, d, a0, f * body);
        }
        *nic = a0 + m->g + body;
        if (by_cpu)
            S->cpu[d] = a0 + f * body; /* copy-out */
        event(S, a0 + body, d, J->partner[e->node], EV_ARRIVE);
        break;
    }
    case EV_ARRIVE:
        J->flags[e->node] |= F_ARRIVED;
        if (J->flags[e->node] & F_POSTED)
            recv_task(S, r, e->node, e->t, true);
        break;
    default:
        node_done(S, r, e->node, e->t);
        drain(S, r);
        break;
    }
}

double nbcxi_sim_overlap(double t_pure, double c, double t_total)
{
    double d = t_pure < c ? t_pure : c;
    if (!(d > 0))
        return 0;
    double v = (t_pure + c - t_total) / d;
    return v < 0 ? 0 : v > 1 ? 1 : v;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

int nbcxi_sim_simulate(struct nbcxi_sim_job *J,
                       const struct nbcxi_sim_params *p,
                       const struct nbcxi_sim_run *run,
                       struct nbcxi_sim_result *res)
{
    memset(res, 0, sizeof *res);
    if (nbcxi_sim_params_fit(p, J->P, J->C))
        return NBCXI_SIM_EARG;
    if (p->inter_shared && J->F < J->P && J->C < J->P)
        return NBCXI_SIM_EARG; /* folded: the others' traffic is missing */
    int64_t t0 = nbcxi_now_ns();
    const size_t F = (size_t)J->F, nn = (size_t)J->nnodes;
    const size_t nodes = (F + (size_t)J->C - 1) / (size_t)J->C;
    struct sim S = { .J = J, .p = p, .run = run };
    if (!J->pend)
        J->pend = malloc(sizeof(uint32_t) * (nn ? nn : 1));
    if (!J->flags)
        J->flags = malloc(nn ? nn : 1);
    S.k = run->progress == NBCXI_SIM_CALLER ? 0
          : run->progress_cores_per_node > 0 ? run->progress_cores_per_node
                                              : 0;
    S.ts = p->time_share && p->cores_per_node > 0 &&
           J->C > p->cores_per_node;
    size_t ncores = S.ts ? nodes * (size_t)p->cores_per_node : 0;
    double *arr = calloc(6 * F + 2 * nodes + nodes * (size_t)S.k + ncores,
                         sizeof(double));
    S.left = malloc(sizeof(uint32_t) * F);
    S.up_left = calloc(F, sizeof(uint32_t));
    if (!J->pend || !J->flags || !arr || !S.left || !S.up_left) {
        free(arr);
        free(S.left);
        free(S.up_left);
        return NBCXI_SIM_ENOMEM;
    }
    S.cpu_app = arr + 5 * F + 2 * nodes;
    S.pool = arr + 6 * F + 2 * nodes;
    S.core = S.pool + nodes * (size_t)S.k;
    if (ncores) {
        S.core_last = malloc(sizeof(int) * ncores);
        if (!S.core_last) {
            free(arr);
            free(S.left);
            free(S.up_left);
            return NBCXI_SIM_ENOMEM;
        }
        for (size_t c = 0; c < ncores; c++)
            S.core_last[c] = -1;
    }
    S.cpu = arr, S.snic = arr + F, S.rnic = arr + 2 * F, S.done = arr + 3 * F;
    S.tb = arr + 4 * F, S.snic_n = arr + 5 * F, S.rnic_n = S.snic_n + nodes;
    for (size_t i = 0; i < nn; i++) {
        J->pend[i] = J->node[i].npred;
        J->flags[i] = 0;
    }
    for (size_t r = 0; r < F; r++)
        for (uint32_t i = J->rep_off[r]; i < J->rep_off[r + 1]; i++)
            S.up_left[r] += J->node[i].level > 0 && app_node(&S, i);
    /* The start, rank by rank: receives first, then the other nodes
     * without predecessors (the executor's order), and what they
     * release locally. */
    S.init = true;
    for (size_t r = 0; r < F && !S.fail; r++) {
        uint32_t a = J->rep_off[r], b = J->rep_off[r + 1];
        S.left[r] = b - a;
        /* the engine's start, before any node (the start's CPU) */
        S.cpu[r] = S.cpu_app[r] = S.done[r] =
            core_run(&S, (int)r, 0, p->start_cost) + p->start_cost;
        for (int pass = 0; pass < 2; pass++)
            for (uint32_t i = a; i < b; i++)
                if (J->node[i].npred == 0 &&
                    (J->node[i].kind == NBCXI_NODE_RECV) == (pass == 0)) {
                    later(&S, i, 0);
                    /* in order: run each before finding the next */
                    drain(&S, (int)r);
                }
        if (run->progress == NBCXI_SIM_SPLIT) {
            /* the progress core takes over when the start has posted */
            S.cpu[r] = S.cpu_app[r];
            S.tb[r] = S.up_left[r] ? -1 : S.cpu_app[r];
        } else {
            S.tb[r] = S.cpu[r];
        }
    }
    S.init = false;
    while (S.h.n > 0 && !S.fail) {
        struct ev e = pop(&S.h);
        S.events++;
        handle(&S, &e);
    }
    int rc = S.fail;
    if (!rc) {
        for (size_t r = 0; r < F; r++)
            if (S.left[r]) {
                rc = NBCXI_SIM_EMATCH; /* a deadlock */
                break;
            }
    }
    if (!rc) {
        double c = run->compute_us;
        res->t_max = 0;
        for (size_t r = 0; r < F; r++) {
            double wait = S.tb[r] + c;
            double end = S.done[r] > wait ? S.done[r] : wait;
            if (end > res->t_total_max)
                res->t_total_max = end;
            if (S.tb[r] > res->t_start_max)
                res->t_start_max = S.tb[r];
            if (S.done[r] > res->t_max)
                res->t_max = S.done[r];
        }
        /* distribution over the simulated ranks (folded: each stands for
         * P / F ranks, so the distribution is the same) */
        memcpy(S.cpu, S.done, F * sizeof(double));
        qsort(S.cpu, F, sizeof(double), cmp_double);
        res->t_min = S.cpu[0];
        res->t_median = F % 2 ? S.cpu[F / 2]
                              : (S.cpu[F / 2 - 1] + S.cpu[F / 2]) / 2;
    }
    res->events = S.events;
    free(S.h.a);
    free(S.wl);
    free(S.core_last);
    free(arr);
    free(S.left);
    free(S.up_left);
    res->sim_seconds = (double)(nbcxi_now_ns() - t0) * 1e-9;
    return rc;
}

const char *nbcxi_sim_params_fit(const struct nbcxi_sim_params *p, int ranks,
                                 int ranks_per_node)
{
    if (!p->has_inter && ranks_per_node < ranks)
        return "the parameter file has no \"inter\" block (messages "
               "between nodes): ranks per node must be at least the ranks";
    if (!p->has_intra && ranks_per_node > 1 && ranks > 1)
        return "the parameter file has no \"intra\" block (messages "
               "inside a node): use 1 rank per node";
    return NULL;
}

int nbcxi_sim_prepare(const struct nbcxi_sim_config *cfg,
                      const struct nbcxi_sim_params *p,
                      struct nbcxi_sim_job **job, char *err, size_t errlen)
{
    const char *why = nbcxi_sim_params_fit(p, cfg->ranks, cfg->ranks_per_node);
    *job = NULL;
    if (why) {
        snprintf(err, errlen, "%s", why);
        return NBCXI_SIM_EARG;
    }
    return nbcxi_sim_build(cfg, job, err, errlen);
}

int nbcxi_sim_simulate_err(struct nbcxi_sim_job *job,
                           const struct nbcxi_sim_params *p,
                           const struct nbcxi_sim_run *run,
                           struct nbcxi_sim_result *res, char *err,
                           size_t errlen)
{
    int rc = nbcxi_sim_simulate(job, p, run, res);
    if (rc == NBCXI_SIM_ENOMEM)
        snprintf(err, errlen, "out of memory simulating");
    else if (rc == NBCXI_SIM_EARG)
        snprintf(err, errlen, "a shared inter-node link (inter_link) cannot "
                              "be simulated folded: --fold off");
    else if (rc)
        snprintf(err, errlen, "deadlock: nodes never ran");
    return rc;
}

int nbcxi_sim_run(const struct nbcxi_sim_config *cfg,
                  const struct nbcxi_sim_params *p,
                  const struct nbcxi_sim_run *run,
                  struct nbcxi_sim_info *info, struct nbcxi_sim_result *res,
                  char *err, size_t errlen)
{
    struct nbcxi_sim_job *J;
    int rc = nbcxi_sim_prepare(cfg, p, &J, err, errlen);
    if (rc)
        return rc;
    if (info)
        nbcxi_sim_job_info(J, info);
    rc = nbcxi_sim_simulate_err(J, p, run, res, err, errlen);
    nbcxi_sim_free(J);
    return rc;
}
