/* watchdog.c - timeouts and the debug dump.
 *
 * A dead or stuck peer would otherwise leave every other rank waiting
 * forever. The engine asks the watchdog, at most every SCAN_NS during
 * its progress passes (caller mode: the waiting thread's; thread and
 * split modes: the progress thread's), about every operation in flight:
 *
 *   - progress: an operation whose count of finished nodes changed since
 *     the watchdog last looked has made progress; its clock restarts.
 *     (The clock starts when the watchdog first sees the operation, at
 *     most SCAN_NS after its start.) So does one holding work for its
 *     application thread (split mode): it waits for this rank's own
 *     application, not for a peer.
 *     In caller mode the watchdog runs only inside test/wait calls; an
 *     operation is progressed in the same pass before it is judged, so
 *     messages that arrived while the application computed count as
 *     progress.
 *   - timeout: no progress for its communicator's timeout
 *     (nbcx_comm_set_timeout, default NBCX_TIMEOUT seconds, off when
 *     neither is set): the verdict is NBCX_ERR_TIMEOUT, the engine
 *     cancels the operation and completes it with that error (waiters are
 *     woken as for any completion). The communicator is marked broken:
 *     its other operations get the same verdict at the next scan, later
 *     starts fail at once (the executor and api/ look at the flag). The
 *     first timeout on a communicator prints its diagnosis, once.
 *   - dump (NBCX_DEBUG_DUMP=<seconds>): an operation without progress for
 *     that long makes the next pass print every operation in flight, at
 *     most once every that many seconds; nothing fails. SIGUSR1 (handler
 *     installed only when NBCX_DEBUG_DUMP is set, and only if the
 *     application has none) asks for the same dump: the handler only
 *     sets a flag, the next progress pass prints.
 *
 * Nothing here runs unless a timeout or the dump was ever asked for
 * (nbcxi_watchdog_armed). Everything runs in sweeps (engine.c), under
 * the engine lock, and a verdict also under the operation's progress
 * lock, so the timeout never waits for a transport call to return,
 * except one in progress on the same locks: a transport call that blocks
 * forever blocks the engine, and nbcx cannot time out (nbcx.h says so).
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"

enum {
    SCAN_NS = 10000000,  /* between two looks at the operations: 10 ms */
    DIAG_NODES = 8,      /* pending nodes listed in a timeout diagnosis */
    DUMP_OPS = 16,       /* operations listed in a dump */
    DUMP_NODES = 4       /* pending nodes listed per operation (dump) */
};

atomic_bool nbcxi_watchdog_armed;

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static int64_t default_timeout_ns; /* NBCX_TIMEOUT; 0: off */
static int64_t dump_after_ns;      /* NBCX_DEBUG_DUMP; 0: off */
/* Set by the SIGUSR1 handler: a lock-free atomic (async-signal-safe,
 * and seen by whichever thread makes the next pass). */
static atomic_int dump_signalled;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "a lock-free flag for a handler");
/* Under the engine lock: */
static int64_t last_scan, last_dump;
static bool dump_wanted;

static void on_sigusr1(int sig)
{
    (void)sig;
    atomic_store(&dump_signalled, 1); /* the next pass prints */
}

/* Seconds from the environment; 0 when unset, invalid (with a warning)
 * or "signal" (NBCX_DEBUG_DUMP: the signal only). */
static int64_t env_seconds(const char *name)
{
    const char *v = nbcxi_getenv(name);
    if (!v || !strcmp(v, "signal"))
        return 0;
    char *end;
    double s = strtod(v, &end);
    if (end == v || *end || !(s >= 0) || s > 1e9) {
        fprintf(stderr, "nbcx: %s=%s is not a number of seconds; "
                        "ignored\n", name, v);
        return 0;
    }
    return (int64_t)(s * 1e9);
}

static void read_env(void)
{
    default_timeout_ns = env_seconds("NBCX_TIMEOUT");
    dump_after_ns = env_seconds("NBCX_DEBUG_DUMP");
    if (nbcxi_getenv("NBCX_DEBUG_DUMP")) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_sigusr1;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        /* Never take SIGUSR1 from an application that handles it. */
        if (sigaction(SIGUSR1, NULL, &old) == 0 &&
            old.sa_handler == SIG_DFL && !(old.sa_flags & SA_SIGINFO))
            sigaction(SIGUSR1, &sa, NULL);
        else
            fprintf(stderr, "nbcx: NBCX_DEBUG_DUMP: SIGUSR1 is handled "
                            "by the application; no dump on SIGUSR1\n");
        atomic_store(&nbcxi_watchdog_armed, true);
    }
    if (default_timeout_ns > 0)
        atomic_store(&nbcxi_watchdog_armed, true);
}

void nbcxi_watchdog_init(void)
{
    pthread_once(&env_once, read_env);
}

int64_t nbcxi_watchdog_timeout_ns(struct nbcx_comm_s *c)
{
    nbcxi_watchdog_init();
    int64_t t = atomic_load_explicit(&c->timeout_ns, memory_order_relaxed);
    return t > 0 ? t : t < 0 ? 0 : default_timeout_ns;
}

void nbcxi_watchdog_set_timeout(struct nbcx_comm_s *c, int64_t ns)
{
    nbcxi_watchdog_init();
    atomic_store(&c->timeout_ns, ns > 0 ? ns : -1);
    if (ns > 0)
        atomic_store(&nbcxi_watchdog_armed, true);
}

/* ---- describing an operation ---- */

struct out {
    char *buf;
    size_t len, cap;
};

static void put(struct out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
    if (o->len >= o->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len = NBCXI_MIN(o->len + (size_t)n, o->cap - 1);
}

static const char *kind_name(int kind)
{
    static const char *const names[] = { "send", "recv", "reduce", "copy",
                                         "call", "poll" };
    return kind >= 0 && kind <= NBCXI_NODE_POLL ? names[kind] : "?";
}

static double secs(int64_t ns)
{
    return (double)ns / 1e9;
}

/* One pending node: a posted request (slot >= 0), a waiting poll, or
 * application work set aside (split mode). */
static void put_node(struct out *o, const char *indent,
                     const struct nbcx_sched_s *s, int id, int slot,
                     const char *state, int64_t now)
{
    const struct nbcxi_node *nd = &s->build.nodes[id];
    put(o, "nbcx: %snode %d: %s", indent, id, kind_name(nd->kind));
    if (nd->kind == NBCXI_NODE_SEND || nd->kind == NBCXI_NODE_RECV) {
        put(o, " %s peer rank %d, tag %d (schedule tag %d), %zu bytes",
            nd->kind == NBCXI_NODE_SEND ? "to" : "from", nd->u.p2p.peer,
            nbcxi_tag(s->tag.slot, nd->u.p2p.tag), nd->u.p2p.tag,
            (size_t)nd->u.p2p.count * nd->u.p2p.type->size);
        if (slot >= 0 && s->pace.req_t0 && s->pace.req_t0[slot] > 0)
            put(o, ", posted %.2f s ago", secs(now - s->pace.req_t0[slot]));
    }
    put(o, "%s\n", state);
}

/* The pending nodes of s, at most `max` lines. */
static void put_pending(struct out *o, const char *indent,
                        const struct nbcx_sched_s *s, int max, int64_t now)
{
    int shown = 0;
    int total = s->exec.nactive + s->exec.npolls + s->split.ndeferred;
    for (int i = 0; i < s->exec.nactive && shown < max; i++, shown++)
        put_node(o, indent, s, s->exec.req_node[i], i,
                 i >= s->exec.nactive - s->persist.unstarted
                     ? " (not started)"
                     : "",
                 now);
    for (int i = 0; i < s->exec.npolls && shown < max; i++, shown++)
        put_node(o, indent, s, s->exec.polls[i], -1,
                 " (waiting for other ranks' shared-memory slots)", now);
    for (int i = 0; i < s->split.ndeferred && shown < max; i++, shown++)
        put_node(o, indent, s, s->split.deferred[i], -1,
                 " (ready, for the application thread)", now);
    if (total > shown)
        put(o, "nbcx: %s... and %d more pending nodes\n", indent,
            total - shown);
    int blocked = s->build.nnodes - s->exec.ndone - total -
                  (s->exec.ready_tail - s->exec.ready_head);
    if (blocked > 0)
        put(o, "nbcx: %s%d more nodes wait for these\n", indent, blocked);
}

/* What names an operation: fixed while it is in flight, so read
 * without its progress lock. */
static void put_name(struct out *o, const struct nbcx_sched_s *s)
{
    put(o, "%s%s #%u (algorithm %s) on rank %d of %d",
        s->build.op_name ? s->build.op_name : "user schedule",
        s->build.persistent ? " (persistent)" : "", s->tag.seq,
        s->build.alg_name ? s->build.alg_name : "-", s->build.rank,
        s->build.size);
}

/* Its name and state: under its progress lock (exec) and the engine
 * lock (watch). */
static void put_title(struct out *o, const struct nbcx_sched_s *s,
                      int64_t now)
{
    put_name(o, s);
    put(o, ": %d of %d nodes done, no progress for %.2f s", s->exec.ndone,
        s->build.nnodes, s->watch.since ? secs(now - s->watch.since) : 0.0);
}

static void emit(struct out *o)
{
    fputs(o->buf, stderr); /* one call: ranks' lines do not interleave */
    fflush(stderr);
}

/* The diagnosis of the operation that timed out on its communicator. */
static void diagnose(struct nbcx_sched_s *s, int64_t now, int64_t limit)
{
    char buf[4096];
    struct out o = { buf, 0, sizeof buf };
    buf[0] = '\0';
    put(&o, "nbcx: TIMEOUT: ");
    put_title(&o, s, now);
    put(&o, " (timeout %.2f s)\n", secs(limit));
    put_pending(&o, "  ", s, DIAG_NODES, now);
    put(&o, "nbcx: the communicator (rank %d of %d) is broken: its "
        "operations fail with NBCX_ERR_TIMEOUT; free it\n", s->build.rank,
        s->build.size);
    emit(&o);
}

/* Every operation in flight (the dump). */
static void dump_all(struct nbcx_request_s *active, int64_t now,
                     const char *why)
{
    int n = 0;
    for (struct nbcx_request_s *r = active; r; r = r->next)
        n++;
    size_t cap = 1024 + (size_t)NBCXI_MIN(n, DUMP_OPS) * 1536;
    struct out o = { malloc(cap), 0, cap };
    if (!o.buf)
        return;
    o.buf[0] = '\0';
    put(&o, "nbcx: dump (%s): %d operation(s) in flight\n", why, n);
    int shown = 0;
    for (struct nbcx_request_s *r = active; r && shown < DUMP_OPS;
         r = r->next, shown++) {
        struct nbcx_sched_s *s = r->sched;
        const char *broken = nbcxi_comm_broken(s->build.comm)
                                 ? " (communicator broken)" : "";
        /* Its executor state is its progress lock's: only tried (the
         * engine lock is held, "Locks"). The thread that holds it is
         * advancing this operation or another under the same lock: the
         * state is then not read, the line says so. */
        pthread_mutex_t *l = nbcxi_op_lock(r);
        if (pthread_mutex_trylock(l) != 0) {
            put(&o, "nbcx: ");
            put_name(&o, s);
            put(&o, ": its progress lock is held by another thread, "
                    "state not shown%s\n", broken);
            continue;
        }
        put(&o, "nbcx: ");
        put_title(&o, s, now);
        put(&o, "%s\n", broken);
        put_pending(&o, "  ", s, DUMP_NODES, now);
        pthread_mutex_unlock(l);
    }
    if (n > shown)
        put(&o, "nbcx: ... and %d more operations\n", n - shown);
    emit(&o);
    free(o.buf);
}

/* ---- the engine's hooks ---- */

int64_t nbcxi_watchdog_pass_locked(struct nbcx_request_s *active)
{
    int64_t now = nbcxi_now_ns();
    if (atomic_load_explicit(&dump_signalled, memory_order_relaxed) &&
        atomic_exchange(&dump_signalled, 0))
        dump_all(active, now, "SIGUSR1");
    if (dump_wanted) {
        dump_wanted = false;
        last_dump = now;
        dump_all(active, now, "NBCX_DEBUG_DUMP: an operation is stalled");
    }
    if (now - last_scan < SCAN_NS)
        return 0;
    last_scan = now;
    return now;
}

int nbcxi_watchdog_verdict_locked(struct nbcx_sched_s *s, int64_t now)
{
    struct nbcx_comm_s *c = s->build.comm;
    /* Broken by a timeout: the other operations in flight end too (they
     * would only time out one by one). */
    if (nbcxi_comm_broken(c) == NBCX_ERR_TIMEOUT)
        return NBCX_ERR_TIMEOUT;
    /* Work set aside for the application thread (split mode) waits for
     * this rank's own application to call nbcx, not for a peer: no
     * stall while there is some. */
    if (s->exec.ndone != s->watch.ndone || !s->watch.since ||
        s->split.ndeferred > 0) {
        s->watch.ndone = s->exec.ndone;
        s->watch.since = now;
        return NBCX_SUCCESS;
    }
    int64_t idle = now - s->watch.since;
    int64_t limit = nbcxi_watchdog_timeout_ns(c);
    if (limit > 0 && idle >= limit) {
        int expected = 0;
        atomic_compare_exchange_strong(&c->broken, &expected,
                                       NBCX_ERR_TIMEOUT);
        if (!atomic_exchange(&c->diagnosed, true))
            diagnose(s, now, limit);
        return NBCX_ERR_TIMEOUT;
    }
    if (dump_after_ns > 0 && idle >= dump_after_ns &&
        (!last_dump || now - last_dump >= dump_after_ns))
        dump_wanted = true;
    return NBCX_SUCCESS;
}
