/* trace.c - the trace recorder of NBCX_TRACE=DIR (trace.h says what it
 * records and where the hooks are).
 *
 * Each recording thread owns a buffer (struct tbuf) of NBCXI_TRACE_EVENTS
 * fixed-size events, appended under the buffer's own mutex (uncontended
 * but for a flush from another thread at MPI_Finalize or exit). A full
 * buffer is written out by its thread, as JSON, to the process's one file,
 * under the file's mutex; the file ends after every write with the
 * trailer (`],"otherData":{...}}`), which the next write overwrites, so
 * that the file parses after any flush. A write is itself a slice
 * ("trace flush") on the thread's track: its cost is in the trace.
 *
 * Tracks (Chrome's tid): thread k of the process (numbered as it first
 * records) has tid 100 k for its own calls and tid 100 k + 1 + lane for
 * the collectives it started, each on the lowest lane free at its start
 * (64 lanes; more operations outstanding share the last), so that the
 * slices of one track never overlap. Chrome's pid is the rank: MPI_COMM_
 * WORLD's (nbcxi_trace_sync), else, for thread ranks, the rank in the
 * operation's communicator, else the process id (the progress thread of
 * a process of thread ranks).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"
#include "trace.h"

bool nbcxi_trace_on;

enum ev_kind { EV_CALL, EV_START, EV_COLL, EV_RUN, EV_IDLE, EV_FLUSH };

struct nbcxi_trace_ev {
    int64_t t0, dur;          /* ns */
    const char *name, *op, *alg; /* static strings */
    uint64_t bytes;
    uintptr_t site;
    const void *comm;
    int64_t a, b;             /* by kind: nodes run (packed), exposed and
                                 cpu ns, sleeps and event wake-ups */
    int32_t pid, tid;
    int32_t size;             /* communicator size */
    uint8_t kind;
};

struct tbuf {
    pthread_mutex_t mu;
    struct nbcxi_trace_ev *ev; /* NULL once the thread ended */
    int n;
    int k;                     /* thread number, from 1 */
    bool progress;
    bool idle_open;            /* the last event is an idle slice that a
                                  sleep may extend */
    int rank;                  /* last communicator rank seen, -1 none */
    _Atomic uint64_t lanes;    /* lanes of the thread's open operations */
    int64_t call_t0;           /* the current application call's start */
    uint32_t nodes[NBCXI_TRACE_NKINDS];
    struct tbuf *next;
};

static pthread_mutex_t file_mu = PTHREAD_MUTEX_INITIALIZER;
static struct tbuf *all;           /* every buffer, under file_mu */
static int nthreads;               /* under file_mu */
static char dir[4096];
static FILE *out;                  /* under file_mu */
static char path[4200];
static long trailer_len;           /* bytes to overwrite, under file_mu */
static long long written;          /* events written, under file_mu */
static bool failed;                /* the file could not be written */
static int proc_rank = -1, proc_size; /* MPI_COMM_WORLD, if known */
static int64_t sync_ns;
static pthread_key_t key;
static _Thread_local struct tbuf *me;
static void *self_base;            /* libnbcx's load address (dladdr) */

static void flush_locked(struct tbuf *b);

int64_t nbcxi_trace_clock(void)
{
    return nbcxi_now_ns();
}

static void thread_end(void *p)
{
    struct tbuf *b = p;
    pthread_mutex_lock(&b->mu);
    flush_locked(b);
    free(b->ev);
    b->ev = NULL;
    pthread_mutex_unlock(&b->mu);
}

static void at_exit(void)
{
    nbcxi_trace_flush();
}

/* A child of fork() must not write its copy of the parent's buffers into
 * the parent's file (its exit would): it does not trace. */
static void in_child(void)
{
    nbcxi_trace_on = false;
    all = NULL;
    me = NULL;
    failed = true;
}

/* mkdir -p: 0, or -1 with errno. */
static int make_dirs(const char *name)
{
    char p[sizeof dir];
    snprintf(p, sizeof p, "%s", name);
    for (char *c = p + 1; *c; c++) {
        if (*c != '/')
            continue;
        *c = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            return -1;
        *c = '/';
    }
    return mkdir(p, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

__attribute__((constructor)) static void trace_init(void)
{
    const char *v = nbcxi_getenv("NBCX_TRACE");
    if (!v || !*v)
        return;
    if (strlen(v) >= sizeof dir) {
        fprintf(stderr, "nbcx: NBCX_TRACE: directory name too long; "
                        "tracing off\n");
        return;
    }
    if (make_dirs(v) != 0) {
        fprintf(stderr, "nbcx: NBCX_TRACE=%s: cannot create the "
                        "directory (%s); tracing off\n", v, strerror(errno));
        return;
    }
    snprintf(dir, sizeof dir, "%s", v);
    if (pthread_key_create(&key, thread_end) != 0)
        return;
    Dl_info info;
    if (dladdr((void *)trace_init, &info))
        self_base = info.dli_fbase;
    void *warm[2]; /* backtrace() loads libgcc once: not in a slice */
    (void)backtrace(warm, 2);
    atexit(at_exit);
    pthread_atfork(NULL, NULL, in_child);
    nbcxi_trace_on = true;
}

/* This thread's buffer, made at its first event; NULL without memory. */
static struct tbuf *mine(void)
{
    if (me)
        return me;
    struct tbuf *b = calloc(1, sizeof *b);
    if (!b || !(b->ev = malloc(NBCXI_TRACE_EVENTS * sizeof *b->ev))) {
        free(b);
        return NULL;
    }
    pthread_mutex_init(&b->mu, NULL);
    b->rank = -1;
    pthread_mutex_lock(&file_mu);
    b->k = ++nthreads;
    b->next = all;
    all = b;
    pthread_mutex_unlock(&file_mu);
    pthread_setspecific(key, b);
    return me = b;
}

static int32_t pid_of(const struct tbuf *b, int rank)
{
    if (proc_rank >= 0)
        return proc_rank;
    if (rank >= 0)
        return rank;
    return b->rank >= 0 && !b->progress ? b->rank : (int32_t)getpid();
}

/* A new event of b (lock held), written out first if b is full. */
static struct nbcxi_trace_ev *add(struct tbuf *b, enum ev_kind kind,
                                  int64_t t0, int64_t t1)
{
    if (b->n == NBCXI_TRACE_EVENTS) {
        int64_t f0 = nbcxi_now_ns();
        flush_locked(b);
        b->ev[b->n++] = (struct nbcxi_trace_ev){
            .t0 = f0, .dur = nbcxi_now_ns() - f0, .name = "trace flush",
            .kind = EV_FLUSH, .pid = pid_of(b, -1), .tid = 100 * b->k };
    }
    struct nbcxi_trace_ev *e = &b->ev[b->n++];
    *e = (struct nbcxi_trace_ev){ .t0 = t0, .dur = t1 - t0, .kind = kind,
                                  .pid = pid_of(b, -1), .tid = 100 * b->k };
    b->idle_open = false;
    return e;
}

/* The nodes this thread ran since the last slice, packed 12 bits each
 * (saturated), and reset. */
static int64_t take_nodes(struct tbuf *b)
{
    int64_t packed = 0;
    for (int i = 0; i < NBCXI_TRACE_NKINDS; i++) {
        uint32_t n = b->nodes[i] > 4095 ? 4095 : b->nodes[i];
        packed |= (int64_t)n << (12 * i);
        b->nodes[i] = 0;
    }
    return packed;
}

void nbcxi_trace_node(int k)
{
    struct tbuf *b = mine();
    if (b && k >= 0 && k < NBCXI_TRACE_NKINDS)
        b->nodes[k]++;
}

void nbcxi_trace_enter(void)
{
    struct tbuf *b = mine();
    if (b)
        b->call_t0 = nbcxi_now_ns();
}

void nbcxi_trace_leave(const char *what)
{
    struct tbuf *b = mine();
    if (!b)
        return;
    pthread_mutex_lock(&b->mu);
    if (b->ev) {
        struct nbcxi_trace_ev *e = add(b, EV_CALL, b->call_t0,
                                       nbcxi_now_ns());
        e->name = what;
        e->a = take_nodes(b);
    }
    pthread_mutex_unlock(&b->mu);
}

/* Whether the code at address a is nbcx's own (libnbcx, the shim), with
 * a small cache: call sites are few. */
static bool inside_nbcx(uintptr_t a)
{
    enum { N = 64 };
    static _Thread_local uintptr_t seen[N];
    static _Thread_local uint64_t ours; /* bit i: seen[i] is nbcx's */
    unsigned i = (unsigned)((a >> 4) ^ (a >> 12)) % N;
    if (seen[i] == a)
        return (ours >> i) & 1;
    Dl_info info;
    bool in = dladdr((void *)a, &info) &&
              (info.dli_fbase == self_base ||
               (info.dli_fname && strstr(info.dli_fname, "libnbcx")));
    seen[i] = a;
    ours = in ? ours | (1ull << i) : ours & ~(1ull << i);
    return in;
}

/* The return address into the first caller outside nbcx, 0 if none. */
static uintptr_t call_site(void)
{
    void *frames[24];
    int n = backtrace(frames, 24);
    for (int i = 1; i < n; i++)
        if (!inside_nbcx((uintptr_t)frames[i]))
            return (uintptr_t)frames[i];
    return 0;
}

/* The call site given by the public function (nbcxi_trace_site), 0:
 * none, look on the stack. */
static _Thread_local uintptr_t given_site;

void nbcxi_trace_site(void *ra)
{
    given_site = inside_nbcx((uintptr_t)ra) ? 0 : (uintptr_t)ra;
}

void nbcxi_trace_starting(struct nbcxi_trace_req *tr,
                          const struct nbcxi_trace_op *op)
{
    struct tbuf *b = mine();
    *tr = (struct nbcxi_trace_req){ .lane = -1 };
    if (!b)
        return;
    b->rank = op->rank;
    tr->site = given_site ? given_site : call_site();
    given_site = 0;
    tr->t0 = b->call_t0 ? b->call_t0 : nbcxi_now_ns();
    uint64_t used = atomic_load_explicit(&b->lanes, memory_order_relaxed);
    int lane = 63;
    while (used != UINT64_MAX) {
        int free_lane = __builtin_ctzll(~used);
        if (atomic_compare_exchange_weak(&b->lanes, &used,
                                         used | (1ull << free_lane))) {
            lane = free_lane;
            break;
        }
    }
    tr->lane = lane;
    tr->owner = b;
}

void nbcxi_trace_started(struct nbcxi_trace_req *tr,
                         const struct nbcxi_trace_op *op)
{
    struct tbuf *b = mine();
    if (!b || !tr->t0)
        return;
    int64_t now = nbcxi_now_ns();
    pthread_mutex_lock(&b->mu);
    if (b->ev) {
        struct nbcxi_trace_ev *e = add(b, EV_START, tr->t0, now);
        e->name = "start";
        e->op = op->op;
        e->alg = op->alg;
        e->bytes = op->bytes;
        e->site = tr->site;
        e->pid = pid_of(b, op->rank);
        e->a = take_nodes(b);
    }
    pthread_mutex_unlock(&b->mu);
    tr->exposed = now - tr->t0; /* the start is the application's */
    b->call_t0 = now; /* the next start of the same call begins here */
}

void nbcxi_trace_cpu(struct nbcxi_trace_req *tr, int64_t t0)
{
    if (me && me->progress && t0)
        tr->cpu += nbcxi_now_ns() - t0;
}

void nbcxi_trace_pending(struct nbcxi_trace_req *tr)
{
    if (me && me->call_t0 && tr->t0)
        tr->exposed += nbcxi_now_ns() - me->call_t0;
}

void nbcxi_trace_retired(struct nbcxi_trace_req *tr,
                         const struct nbcxi_trace_op *op)
{
    struct tbuf *b = mine();
    struct tbuf *owner = tr->owner;
    int lane = tr->lane;
    if (owner && lane >= 0 && lane < 63)
        atomic_fetch_and(&owner->lanes, ~(1ull << lane));
    tr->lane = -1; /* (released once) */
    if (!b || !tr->t0)
        return;
    int64_t done = tr->done ? tr->done : nbcxi_now_ns();
    /* the current call, up to the completion, was spent waiting for it */
    if (b->call_t0 && done > b->call_t0)
        tr->exposed += done - b->call_t0;
    if (tr->exposed > done - tr->t0) /* (a start that lasted past it) */
        tr->exposed = done - tr->t0;
    pthread_mutex_lock(&b->mu);
    if (b->ev) {
        struct nbcxi_trace_ev *e = add(b, EV_COLL, tr->t0, done);
        e->name = op->op;
        e->op = op->op;
        e->alg = op->alg;
        e->bytes = op->bytes;
        e->site = tr->site;
        e->comm = op->comm;
        e->size = op->size;
        e->a = tr->exposed;
        e->b = tr->cpu;
        e->pid = pid_of(b, op->rank);
        e->tid = 100 * (owner ? owner->k : b->k) + 1 + (lane < 0 ? 63 : lane);
    }
    pthread_mutex_unlock(&b->mu);
    tr->t0 = 0;
}

/* The progress thread's placement: -1 no thread (yet), 0 a core of its
 * own, 1 a core shared with the application. */
static atomic_int progress_shares = -1;

void nbcxi_trace_progress_thread(bool shares_core)
{
    atomic_store(&progress_shares, shares_core ? 1 : 0);
    struct tbuf *b = mine();
    if (b)
        b->progress = true;
}

void nbcxi_trace_pass(int64_t t0, long advanced)
{
    struct tbuf *b = mine();
    if (!b || !t0 || advanced <= 0)
        return;
    pthread_mutex_lock(&b->mu);
    if (b->ev) {
        struct nbcxi_trace_ev *e = add(b, EV_RUN, t0, nbcxi_now_ns());
        e->name = "run";
        e->a = take_nodes(b);
        e->b = advanced;
    }
    pthread_mutex_unlock(&b->mu);
}

void nbcxi_trace_sleep(int64_t t0, bool event)
{
    struct tbuf *b = mine();
    if (!b || !t0)
        return;
    int64_t now = nbcxi_now_ns();
    pthread_mutex_lock(&b->mu);
    if (b->ev && b->idle_open && b->n > 0) {
        /* one idle slice for consecutive sleeps (and the idle polls
         * between them): bounded events for a long wait */
        struct nbcxi_trace_ev *e = &b->ev[b->n - 1];
        e->dur = now - e->t0;
        e->a++;
        e->b += event;
    } else if (b->ev) {
        struct nbcxi_trace_ev *e = add(b, EV_IDLE, t0, now);
        e->name = "idle";
        e->a = 1;
        e->b = event;
        b->idle_open = true;
    }
    pthread_mutex_unlock(&b->mu);
}

/* ---- output ---- */

/* An event is formatted by hand into a line (printf's formatting was
 * most of a write's time: 1 us an event), then written at once. */
struct line {
    char *p, *end;
};

static void put_str(struct line *l, const char *s)
{
    while (*s && l->p < l->end)
        *l->p++ = *s++;
}

static void put_num(struct line *l, long long v)
{
    char t[24];
    int n = 0;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v
                                 : (unsigned long long)v;
    do
        t[n++] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        t[n++] = '-';
    while (n > 0 && l->p < l->end)
        *l->p++ = t[--n];
}

/* ,"key":number */
static void put_member(struct line *l, const char *key, long long v)
{
    put_str(l, ",\"");
    put_str(l, key);
    put_str(l, "\":");
    put_num(l, v);
}

/* ,"key":microseconds, from ns */
static void put_us(struct line *l, const char *key, int64_t ns)
{
    if (ns < 0)
        ns = 0;
    put_member(l, key, (long long)(ns / 1000));
    char frac[5] = { '.', (char)('0' + ns / 100 % 10),
                     (char)('0' + ns / 10 % 10), (char)('0' + ns % 10), 0 };
    put_str(l, frac);
}

/* The "site" (and "function") members for a call site, made once per
 * site (dladdr is slow): a small cache, under file_mu. */
static const char *site_text(uintptr_t site)
{
    enum { N = 64, LEN = 320 };
    static uintptr_t seen[N];
    static char text[N][LEN];
    unsigned i = (unsigned)((site >> 4) ^ (site >> 12)) % N;
    if (site && seen[i] == site)
        return text[i];
    char *t = text[i];
    Dl_info info;
    if (!site) {
        snprintf(t, LEN, ",\"site\":\"unknown\"");
    } else if (!dladdr((void *)site, &info) || !info.dli_fname) {
        snprintf(t, LEN, ",\"site\":\"0x%llx\"", (unsigned long long)site);
    } else {
        const char *obj = strrchr(info.dli_fname, '/');
        obj = obj ? obj + 1 : info.dli_fname;
        /* object+offset: what addr2line -e OBJECT takes (one less: the
         * call instruction, not the return address) */
        int n = snprintf(t, LEN, ",\"site\":\"%.120s+0x%llx\"",
                         *obj ? obj : "?",
                         (unsigned long long)(site - 1 -
                                              (uintptr_t)info.dli_fbase));
        if (info.dli_sname && n > 0 && n < LEN)
            snprintf(t + n, (size_t)(LEN - n),
                     ",\"function\":\"%.120s+0x%llx\"", info.dli_sname,
                     (unsigned long long)(site - (uintptr_t)info.dli_saddr));
    }
    seen[i] = site;
    return t;
}

static void put_nodes(struct line *l, int64_t packed)
{
    static const char *const names[NBCXI_TRACE_NKINDS] = {
        "send", "recv", "reduce", "copy", "other" };
    for (int i = 0; i < NBCXI_TRACE_NKINDS; i++) {
        long long n = (packed >> (12 * i)) & 4095;
        if (n)
            put_member(l, names[i], n);
    }
}

static void put_event(FILE *f, const struct tbuf *b,
                      const struct nbcxi_trace_ev *e)
{
    static const char *const cats[] = { "call", "call", "coll",
                                        "progress", "progress", "trace" };
    char text[1024];
    struct line l = { text, text + sizeof text };
    put_str(&l, written++ ? ",\n{\"name\":\"" : "\n{\"name\":\"");
    put_str(&l, e->name);
    put_str(&l, "\",\"cat\":\"");
    put_str(&l, cats[e->kind]);
    put_str(&l, "\",\"ph\":\"X\"");
    put_us(&l, "ts", e->t0);
    put_us(&l, "dur", e->dur);
    put_member(&l, "pid", e->pid);
    put_member(&l, "tid", e->tid);
    put_str(&l, b->progress ? ",\"args\":{\"thread\":\"progress "
                            : ",\"args\":{\"thread\":\"app ");
    put_num(&l, b->k);
    put_str(&l, "\"");
    switch ((enum ev_kind)e->kind) {
    case EV_START:
    case EV_COLL:
        put_str(&l, ",\"op\":\"");
        put_str(&l, e->op ? e->op : "?");
        put_str(&l, "\",\"alg\":\"");
        put_str(&l, e->alg ? e->alg : "?");
        put_str(&l, "\"");
        put_member(&l, "bytes", (long long)e->bytes);
        put_str(&l, site_text(e->site));
        if (e->kind == EV_START) {
            put_nodes(&l, e->a);
            break;
        }
        char comm[40];
        snprintf(comm, sizeof comm, ",\"comm\":\"%p\"", e->comm);
        put_str(&l, comm);
        put_member(&l, "comm_size", e->size);
        put_us(&l, "exposed_us", e->a);
        put_us(&l, "progress_us", e->b);
        break;
    case EV_CALL:
        put_nodes(&l, e->a);
        break;
    case EV_RUN:
        put_nodes(&l, e->a);
        put_member(&l, "finished", (long long)e->b);
        break;
    case EV_IDLE:
        put_member(&l, "sleeps", (long long)e->a);
        put_member(&l, "event_wakeups", (long long)e->b);
        break;
    case EV_FLUSH:
        break;
    }
    put_str(&l, "}}");
    fwrite(text, 1, (size_t)(l.p - text), f);
}

/* The file, opened at the first write (file_mu held); NULL if it cannot
 * be (said once). */
static FILE *file_locked(void)
{
    if (out || failed)
        return out;
    if (proc_rank >= 0)
        snprintf(path, sizeof path, "%s/nbcx-trace.%d.json", dir, proc_rank);
    else
        snprintf(path, sizeof path, "%s/nbcx-trace.p%ld.json", dir,
                 (long)getpid());
    out = fopen(path, "w");
    if (!out) {
        failed = true;
        fprintf(stderr, "nbcx: NBCX_TRACE: cannot write %s (%s); the trace "
                        "is lost\n", path, strerror(errno));
        return NULL;
    }
    static char buffer[1 << 16];
    setvbuf(out, buffer, _IOFBF, sizeof buffer);
    fputs("{\"traceEvents\":[", out);
    trailer_len = 0;
    return out;
}

static void trailer_locked(FILE *f)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    long before = ftell(f);
    fprintf(f, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{"
               "\"format\":\"nbcx-trace/1\",\"version\":\"%d.%d.%d\","
               "\"pid\":%ld,\"rank\":%d,\"size\":%d,\"host\":\"%s\","
               "\"clock\":\"CLOCK_MONOTONIC\",\"sync_us\":%lld.%03lld,"
               "\"buffer_events\":%d,\"event_bytes\":%zu,\"events\":%lld,"
               "\"progress_shares_core\":%s}}\n",
            NBCX_VERSION_MAJOR, NBCX_VERSION_MINOR, NBCX_VERSION_PATCH,
            (long)getpid(), proc_rank, proc_size, host,
            (long long)(sync_ns / 1000), (long long)(sync_ns % 1000),
            NBCXI_TRACE_EVENTS, sizeof(struct nbcxi_trace_ev), written,
            atomic_load(&progress_shares) < 0   ? "null"
            : atomic_load(&progress_shares) > 0 ? "true"
                                                : "false");
    trailer_len = ftell(f) - before;
    fflush(f);
    if (ftruncate(fileno(f), ftell(f)) != 0)
        failed = true;
}

/* Writes b's events out (b->mu held). */
static void flush_locked(struct tbuf *b)
{
    if (!b->ev || b->n == 0 || !nbcxi_trace_on)
        return;
    pthread_mutex_lock(&file_mu);
    FILE *f = file_locked();
    if (f) {
        if (trailer_len)
            fseek(f, -trailer_len, SEEK_END);
        for (int i = 0; i < b->n; i++)
            put_event(f, b, &b->ev[i]);
        trailer_locked(f);
    }
    pthread_mutex_unlock(&file_mu);
    b->n = 0;
    b->idle_open = false;
}

void nbcxi_trace_flush(void)
{
    if (!nbcxi_trace_on)
        return;
    pthread_mutex_lock(&file_mu);
    struct tbuf *list = all;
    pthread_mutex_unlock(&file_mu);
    for (struct tbuf *b = list; b; b = b->next) { /* (only prepended) */
        pthread_mutex_lock(&b->mu);
        flush_locked(b);
        pthread_mutex_unlock(&b->mu);
    }
}

void nbcxi_trace_sync(int rank, int size, int64_t t)
{
    pthread_mutex_lock(&file_mu);
    if (proc_rank < 0) {
        proc_rank = rank;
        proc_size = size;
        sync_ns = t;
        if (out) { /* opened under the process id: rename it */
            char old[sizeof path];
            memcpy(old, path, sizeof path);
            snprintf(path, sizeof path, "%s/nbcx-trace.%d.json", dir, rank);
            if (rename(old, path) != 0)
                memcpy(path, old, sizeof path);
        }
    }
    pthread_mutex_unlock(&file_mu);
}
