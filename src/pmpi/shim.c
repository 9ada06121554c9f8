/* shim.c - libnbcx-pmpi: state, communicator cache, requests, and the
 * MPI completion, request and environment functions.
 *
 * Request design (docs/shim.md):
 *   - a nonblocking collective served by nbcx is a generalized request
 *     (MPI_Grequest_start). It is a real MPI request: any MPI function
 *     accepts it, and it sits in mixed arrays with point-to-point
 *     requests. The shim completes it (MPI_Grequest_complete) inside the
 *     completion functions it wraps, once nbcx_test/nbcx_wait says the
 *     operation is done: the data moves in the background on nbcx's
 *     progress thread, the MPI handle is completed where the program
 *     looks at it;
 *   - a persistent collective cannot be a generalized request (those are
 *     never persistent): it is a real inactive persistent request (the
 *     "token", a receive on a private communicator that is never
 *     started). MPI_Start starts the nbcx request, not the token; the
 *     wrapped completion calls report it complete once nbcx has
 *     completed it, and it stays inactive, as MPI wants.
 * A table maps the MPI handle to the shim's state.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

_Thread_local int shim_in_nbcx;

static const char *const op_names[OP_COUNT] = {
    "ibarrier", "ibcast", "ireduce", "iallreduce", "igather", "iscatter",
    "iallgather", "ialltoall", "igatherv", "iscatterv", "iallgatherv",
    "ialltoallv", "ialltoallw", "ireduce_scatter", "ireduce_scatter_block",
    "iscan", "iexscan", "ineighbor_allgather", "ineighbor_allgatherv",
    "ineighbor_alltoall", "ineighbor_alltoallv", "ineighbor_alltoallw",
    "barrier_init", "bcast_init", "reduce_init", "allreduce_init",
    "gather_init", "scatter_init", "allgather_init", "alltoall_init",
    "gatherv_init", "scatterv_init", "allgatherv_init", "alltoallv_init",
    "alltoallw_init", "reduce_scatter_init", "reduce_scatter_block_init",
    "scan_init", "exscan_init", "neighbor_allgather_init",
    "neighbor_allgatherv_init", "neighbor_alltoall_init",
    "neighbor_alltoallv_init", "neighbor_alltoallw_init",
};
static const char *const reason_names[R_COUNT] = {
    "served", "NBCX_PMPI=off", "not in NBCX_PMPI_OPS",
    "called from inside nbcx", "intercommunicator",
    "nbcx communicator setup failed", "datatype refused",
    "operation refused", "arguments refused", "other",
};

/* ---- configuration and counters ---- */

static int g_enabled = -1;        /* NBCX_PMPI != off */
static int g_verbose;             /* NBCX_PMPI_VERBOSE */
static unsigned char g_allowed[OP_COUNT];
static int g_user_level = MPI_THREAD_SINGLE; /* what the program asked */
static int g_real_level = MPI_THREAD_SINGLE; /* what MPI gave */
static atomic_llong g_count[OP_COUNT][R_COUNT];
static atomic_int g_outstanding;  /* nbcx operations not yet complete */
static int g_caller_mode = -1;    /* nbcx progress mode is CALLER or AUTO */
static char *g_report_dest;       /* NBCX_PMPI_REPORT (report.c) */

static void configure(void)
{
    if (g_enabled >= 0)
        return;
    const char *e = nbcx_setting_value("NBCX_PMPI");
    int on = !(e && (!strcmp(e, "off") || !strcmp(e, "0") ||
                     !strcmp(e, "no") || !strcmp(e, "false")));
    const char *v = nbcx_setting_value("NBCX_PMPI_VERBOSE");
    g_verbose = v && *v && strcmp(v, "0") != 0;
    const char *rep = nbcx_setting_value("NBCX_PMPI_REPORT");
    if (rep && *rep && strcmp(rep, "0") != 0 &&
        (g_report_dest = strdup(rep)) != NULL)
        shim_report = 1;
    const char *ops = nbcx_setting_value("NBCX_PMPI_OPS");
    int all = !ops || !*ops || !strcmp(ops, "all");
    for (int i = 0; i < OP_COUNT; i++)
        g_allowed[i] = (unsigned char)all;
    if (!all) {
        char *copy = strdup(ops), *save = NULL;
        for (char *t = copy ? strtok_r(copy, ", ", &save) : NULL; t;
             t = strtok_r(NULL, ", ", &save)) {
            int found = 0;
            for (int i = 0; i < OP_COUNT; i++) {
                /* "iallreduce" names the nonblocking form; "allreduce"
                 * both it and allreduce_init. */
                const char *n = op_names[i];
                size_t tl = strlen(t);
                if (!strcmp(n, t) ||
                    (i < OP_FIRST_PERSISTENT && !strcmp(n + 1, t)) ||
                    (i >= OP_FIRST_PERSISTENT && !strncmp(n, t, tl) &&
                     !strcmp(n + tl, "_init"))) {
                    g_allowed[i] = 1;
                    found = 1;
                }
            }
            if (!found)
                fprintf(stderr, "nbcx-pmpi: NBCX_PMPI_OPS: unknown "
                                "operation '%s' ignored\n", t);
        }
        free(copy);
    }
    g_enabled = on;
}

static void count(int op, int reason)
{
    atomic_fetch_add_explicit(&g_count[op][reason], 1, memory_order_relaxed);
}

/* count, and with the report on, the call site's row (returned). */
static struct shim_site *note(void *site, int op, int reason,
                              long long bytes)
{
    count(op, reason);
    if (!shim_report)
        return NULL;
    struct shim_site *s = shim_site_get(site, op, reason);
    shim_site_count(s, 1, bytes);
    return s;
}

/* ---- the request table ---- */

struct shim_req {
    MPI_Request handle;     /* the user's handle (grequest or token) */
    nbcx_request nreq;
    int persistent;
    int pending;            /* nbcx has not completed the operation */
    int err;                /* MPI error code of the last completion */
    int detached;           /* freed by the program while pending */
    int ready;              /* persistent: done, not yet reported */
    struct shim_comm *sc;
    struct shim_site *site; /* NBCX_PMPI_REPORT: its row (else NULL) */
    long long bytes;        /* report: bytes of one start (persistent) */
    long long t0, t_acc;    /* report: started; exposure counted up to */
    long long exposed;      /* report: time exposed so far (ns) */
    nbcx_datatype *types;   /* persistent: kept for the request's life */
    int ntypes;
    nbcx_op nop;
    MPI_Op uop;             /* a user operation held until destroyed */
    struct shim_req *hnext; /* hash chain */
    struct shim_req *dnext; /* detached list */
};

enum { NBUCKETS = 1024 };
static struct shim_req *g_table[NBUCKETS];
static atomic_int g_nreqs; /* entries in the table: 0 = fast path */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shim_req *g_detached;
static atomic_int g_ndetached;

static unsigned hash_req(MPI_Request r)
{
    uint64_t h = 0;
    memcpy(&h, &r, sizeof r < sizeof h ? sizeof r : sizeof h);
    h ^= h >> 29;
    h *= 0x9e3779b97f4a7c15ull;
    return (unsigned)(h >> 40) % NBUCKETS;
}

static void table_add(struct shim_req *p)
{
    unsigned b = hash_req(p->handle);
    pthread_mutex_lock(&g_lock);
    p->hnext = g_table[b];
    g_table[b] = p;
    atomic_fetch_add(&g_nreqs, 1);
    pthread_mutex_unlock(&g_lock);
}

static void table_remove(struct shim_req *p)
{
    unsigned b = hash_req(p->handle);
    pthread_mutex_lock(&g_lock);
    for (struct shim_req **q = &g_table[b]; *q; q = &(*q)->hnext)
        if (*q == p) {
            *q = p->hnext;
            atomic_fetch_sub(&g_nreqs, 1);
            break;
        }
    pthread_mutex_unlock(&g_lock);
}

static struct shim_req *lookup(MPI_Request r)
{
    /* Inside the shim's own nbcx calls no request is the shim's (nbcx's
     * MPI transport calls the PMPI_ names, which do not come here; the
     * flag also keeps the shim's own MPI calls from counting). */
    if (r == MPI_REQUEST_NULL || shim_in_nbcx ||
        atomic_load_explicit(&g_nreqs, memory_order_acquire) == 0)
        return NULL;
    unsigned b = hash_req(r);
    struct shim_req *p;
    pthread_mutex_lock(&g_lock);
    for (p = g_table[b]; p; p = p->hnext)
        if (memcmp(&p->handle, &r, sizeof r) == 0)
            break;
    pthread_mutex_unlock(&g_lock);
    return p;
}

/* ---- communicators ---- */

static int g_keyval = MPI_KEYVAL_INVALID;
static pthread_mutex_t g_comm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shim_comm *g_comms;

static void comm_release(struct shim_comm *sc)
{
    if (sc && atomic_fetch_sub(&sc->refs, 1) == 1)
        free(sc);
}

static void comm_unlink(struct shim_comm *sc)
{
    pthread_mutex_lock(&g_comm_lock);
    if (sc->prev)
        sc->prev->next = sc->next;
    else if (g_comms == sc)
        g_comms = sc->next;
    if (sc->next)
        sc->next->prev = sc->prev;
    sc->next = sc->prev = NULL;
    pthread_mutex_unlock(&g_comm_lock);
}

/* MPI_Comm_free (and the shim's MPI_Finalize) delete the attribute:
 * operations in flight on the nbcx communicator still complete. */
static int comm_delete(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)comm, (void)key, (void)extra;
    struct shim_comm *sc = val;
    atomic_store(&sc->alive, 0);
    comm_unlink(sc);
    if (sc->nc != NBCX_COMM_NULL) {
        shim_in_nbcx++;
        nbcx_comm_free(&sc->nc);
        shim_in_nbcx--;
    }
    comm_release(sc);
    return MPI_SUCCESS;
}

static struct shim_comm *comm_get(MPI_Comm comm)
{
    if (g_keyval == MPI_KEYVAL_INVALID) {
        pthread_mutex_lock(&g_comm_lock);
        if (g_keyval == MPI_KEYVAL_INVALID)
            PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete,
                                    &g_keyval, NULL);
        pthread_mutex_unlock(&g_comm_lock);
        if (g_keyval == MPI_KEYVAL_INVALID)
            return NULL;
    }
    void *val = NULL;
    int flag = 0;
    if (PMPI_Comm_get_attr(comm, g_keyval, &val, &flag) != MPI_SUCCESS)
        return NULL;
    if (flag)
        return val;
    /* First use: make the nbcx twin (collective over comm, as the call
     * that got us here is). Not under a lock: two threads making twins
     * of two communicators at once must not wait for each other. */
    struct shim_comm *sc = calloc(1, sizeof *sc);
    if (!sc)
        return NULL;
    sc->comm = comm;
    atomic_init(&sc->refs, 1);
    atomic_init(&sc->alive, 1);
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) {
        sc->reason = R_INTERCOMM;
    } else {
        shim_in_nbcx++;
        int err = nbcx_comm_from_mpi(comm, &sc->nc);
        if (g_caller_mode < 0) {
            nbcx_progress_mode m = NBCX_PROGRESS_CALLER;
            nbcx_progress_get(&m);
            /* (auto mode leaves short operations to the caller too) */
            g_caller_mode = m == NBCX_PROGRESS_CALLER ||
                            m == NBCX_PROGRESS_AUTO;
        }
        shim_in_nbcx--;
        if (err != NBCX_SUCCESS) {
            sc->nc = NBCX_COMM_NULL;
            sc->reason = R_COMM_SETUP;
        }
    }
    PMPI_Comm_set_attr(comm, g_keyval, sc);
    pthread_mutex_lock(&g_comm_lock);
    sc->next = g_comms;
    if (g_comms)
        g_comms->prev = sc;
    g_comms = sc;
    pthread_mutex_unlock(&g_comm_lock);
    return sc;
}

/* ---- serving a call ---- */

static void reap_detached(int blocking);
static void free_unheld(void);

int shim_begin(struct shim_call *c, int op, MPI_Comm comm, void *site)
{
    memset(c, 0, sizeof *c);
    c->uop = MPI_OP_NULL;
    c->op = op;
    c->types = c->inline_types;
    c->cap = 4;
    configure();
    if (shim_report)
        c->site = shim_fsite ? shim_fsite : site;
    if (!g_enabled)
        c->reason = R_OFF;
    else if (!g_allowed[op])
        c->reason = R_NOT_LISTED;
    else if (shim_in_nbcx)
        c->reason = R_NESTED;
    if (c->reason) {
        note(c->site, op, c->reason, 0);
        return 0;
    }
    if (atomic_load_explicit(&g_ndetached, memory_order_relaxed))
        reap_detached(0);
    free_unheld();
    int inter = 0;
    if (comm == MPI_COMM_NULL ||
        PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) {
        c->reason = R_OTHER; /* let MPI report the bad communicator */
    } else {
        struct shim_comm *sc = comm_get(comm);
        if (!sc)
            c->reason = R_COMM_SETUP;
        else if (sc->nc == NBCX_COMM_NULL)
            c->reason = sc->reason;
        else
            c->sc = sc;
    }
    if (c->reason) {
        note(c->site, op, c->reason, 0);
        return 0;
    }
    if (shim_report) /* (after the communicator's first-use setup) */
        c->t0 = shim_now_ns();
    shim_in_nbcx++;
    return 1;
}

int shim_type(struct shim_call *c, MPI_Datatype t, nbcx_datatype *out)
{
    *out = NBCX_DATATYPE_NULL;
    if (t == MPI_DATATYPE_NULL)
        return 1;
    if (c->ntypes == c->cap) {
        int cap = c->cap * 2;
        nbcx_datatype *n = malloc(sizeof *n * (size_t)cap);
        if (!n) {
            c->reason = R_OTHER;
            return 0;
        }
        memcpy(n, c->types, sizeof *n * (size_t)c->ntypes);
        if (c->types != c->inline_types)
            free(c->types);
        c->types = n;
        c->cap = cap;
    }
    if (nbcx_datatype_from_mpi(t, out) != NBCX_SUCCESS) {
        c->reason = R_TYPE;
        return 0;
    }
    c->types[c->ntypes++] = *out;
    return 1;
}

int shim_types(struct shim_call *c, int n, const MPI_Datatype *t,
               nbcx_datatype **out)
{
    *out = NULL;
    if (n <= 0)
        return 1;
    if (!t) {
        c->reason = R_ARGS;
        return 0;
    }
    nbcx_datatype *a = calloc((size_t)n, sizeof *a);
    if (!a) {
        c->reason = R_OTHER;
        return 0;
    }
    *out = a;
    c->arrays[c->narrays++] = a; /* freed with the call */
    for (int i = 0; i < n; i++)
        if (!shim_type(c, t[i], &a[i]))
            return 0;
    return 1;
}

/* ---- user operations held while nbcx uses them ----
 *
 * MPI lets a program free an operation (MPI_Op_free) while a collective
 * that uses it is in flight; the collective completes as if it still
 * existed. nbcx applies a user operation with MPI_Reduce_local on its
 * handle, so the shim holds every user operation an operation of its
 * own uses, and MPI_Op_free of a held one only marks it: the library's
 * free comes when the last request using it is destroyed. */
struct op_hold {
    MPI_Op op;
    int refs;
    int freed; /* the program freed it: free it at the last release */
    struct op_hold *next;
};
static struct op_hold *g_holds;
static pthread_mutex_t g_hold_lock = PTHREAD_MUTEX_INITIALIZER;

static int predefined_op(MPI_Op o)
{
    static const MPI_Op ops[] = {
        MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR,
        MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE,
        MPI_NO_OP,
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (o == ops[i])
            return 1;
    return 0;
}

static int op_hold(MPI_Op o)
{
    pthread_mutex_lock(&g_hold_lock);
    struct op_hold *h = g_holds;
    while (h && h->op != o)
        h = h->next;
    if (!h && (h = calloc(1, sizeof *h))) {
        h->op = o;
        h->next = g_holds;
        g_holds = h;
    }
    if (h)
        h->refs++;
    pthread_mutex_unlock(&g_hold_lock);
    return h != NULL;
}

/* Operations whose last user is gone, to be freed by the library. Not
 * freed at once: the last release often runs inside a generalized
 * request's free callback, within MPI_Wait, where MPICH 4.0 asserts on
 * MPI_Op_free (its global lock is held). Freed at the next collective
 * the shim sees, at the next MPI_Op_free, and at MPI_Finalize. */
static MPI_Op *g_unheld;
static int g_nunheld, g_capunheld;
static atomic_int g_any_unheld;

static void free_unheld(void)
{
    if (!atomic_load_explicit(&g_any_unheld, memory_order_relaxed))
        return;
    pthread_mutex_lock(&g_hold_lock);
    MPI_Op *list = g_unheld;
    int n = g_nunheld;
    g_unheld = NULL;
    g_nunheld = g_capunheld = 0;
    atomic_store(&g_any_unheld, 0);
    pthread_mutex_unlock(&g_hold_lock);
    for (int i = 0; i < n; i++)
        PMPI_Op_free(&list[i]);
    free(list);
}

static void op_release(MPI_Op *o)
{
    if (*o == MPI_OP_NULL)
        return;
    MPI_Op free_it = MPI_OP_NULL;
    pthread_mutex_lock(&g_hold_lock);
    for (struct op_hold **p = &g_holds; *p; p = &(*p)->next) {
        struct op_hold *h = *p;
        if (h->op != *o)
            continue;
        if (--h->refs == 0) {
            if (h->freed)
                free_it = h->op;
            *p = h->next;
            free(h);
        }
        break;
    }
    if (free_it != MPI_OP_NULL) {
        if (g_nunheld == g_capunheld) {
            int cap = g_capunheld ? 2 * g_capunheld : 8;
            MPI_Op *l = realloc(g_unheld, sizeof *l * (size_t)cap);
            if (l) {
                g_unheld = l;
                g_capunheld = cap;
            }
        }
        if (g_nunheld < g_capunheld) /* else (no memory): left allocated */
            g_unheld[g_nunheld++] = free_it;
        atomic_store(&g_any_unheld, 1);
    }
    pthread_mutex_unlock(&g_hold_lock);
    *o = MPI_OP_NULL;
}

int MPI_Op_free(MPI_Op *op)
{
    free_unheld();
    if (op && *op != MPI_OP_NULL && !predefined_op(*op)) {
        pthread_mutex_lock(&g_hold_lock);
        struct op_hold *h = g_holds;
        while (h && h->op != *op)
            h = h->next;
        if (h)
            h->freed = 1;
        pthread_mutex_unlock(&g_hold_lock);
        if (h) {
            *op = MPI_OP_NULL;
            return MPI_SUCCESS;
        }
    }
    return PMPI_Op_free(op);
}

int shim_op(struct shim_call *c, MPI_Op o, MPI_Datatype t, nbcx_op *out)
{
    *out = NBCX_OP_NULL;
    if (o == MPI_OP_NULL ||
        nbcx_op_from_mpi_typed(o, t, out) != NBCX_SUCCESS) {
        c->reason = R_OP;
        return 0;
    }
    c->nop = *out;
    int combiner = MPI_UNDEFINED;
#if MPI_VERSION >= 4 /* (the large-count query: see type_combiner in face.c) */
    MPI_Count ni, na, nl, nt;
    int rc = t == MPI_DATATYPE_NULL
                 ? MPI_ERR_TYPE
                 : PMPI_Type_get_envelope_c(t, &ni, &na, &nl, &nt, &combiner);
#else
    int ni, na, nt;
    int rc = t == MPI_DATATYPE_NULL
                 ? MPI_ERR_TYPE
                 : PMPI_Type_get_envelope(t, &ni, &na, &nt, &combiner);
#endif
    c->predefined = predefined_op(o) && rc == MPI_SUCCESS &&
                    combiner == MPI_COMBINER_NAMED;
    if (!predefined_op(o)) {
        if (!op_hold(o)) {
            c->reason = R_OTHER;
            return 0;
        }
        c->uop = o;
    }
    return 1;
}

static void release_handles(nbcx_datatype *types, int n, nbcx_op *op)
{
    for (int i = 0; i < n; i++)
        nbcx_datatype_free(&types[i]);
    if (*op != NBCX_OP_NULL)
        nbcx_op_free(op);
}

static void call_release(struct shim_call *c)
{
    release_handles(c->types, c->ntypes, &c->nop);
    op_release(&c->uop);
    if (c->types != c->inline_types)
        free(c->types);
    c->types = c->inline_types;
    c->ntypes = 0;
    for (int i = 0; i < c->narrays; i++)
        free(c->arrays[i]);
    c->narrays = 0;
}

void shim_native(struct shim_call *c)
{
    call_release(c);
    shim_in_nbcx--;
    note(c->site, c->op, c->reason ? c->reason : R_OTHER, c->bytes);
}

int shim_neighbor_degrees(struct shim_call *c, int *in, int *out)
{
    *in = *out = 0;
    return nbcx_comm_neighbors_count(c->sc->nc, in, out) == NBCX_SUCCESS;
}

int shim_precheck(MPI_Comm comm, int op)
{
    configure();
    int inter = 1;
    return g_enabled == 1 && g_allowed[op] && !shim_in_nbcx &&
           comm != MPI_COMM_NULL &&
           PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter;
}

int shim_bad_root(MPI_Comm comm, int root)
{
    int size = 0;
    PMPI_Comm_size(comm, &size);
    return root < 0 || root >= size;
}

int shim_is_root(MPI_Comm comm, int root)
{
    int rank = -1;
    PMPI_Comm_rank(comm, &rank);
    return rank == root;
}

static int to_mpi_error(int err);

int shim_refuse(MPI_Comm comm, int err, MPI_Request *request, int op,
                void *site)
{
    int cls = to_mpi_error(err);
    note(shim_report ? (shim_fsite ? shim_fsite : site) : NULL, op, R_ARGS,
         0);
    if (request)
        *request = MPI_REQUEST_NULL;
    PMPI_Comm_call_errhandler(comm, cls);
    return cls;
}

int shim_comm_size(struct shim_call *c)
{
    int n = 0;
    nbcx_comm_size(c->sc->nc, &n);
    return n;
}

int shim_comm_rank(struct shim_call *c)
{
    int r = 0;
    nbcx_comm_rank(c->sc->nc, &r);
    return r;
}

int shim_outdegree(struct shim_call *c)
{
    int in = 0, out = 0;
    shim_neighbor_degrees(c, &in, &out);
    return out;
}

/* Generalized-request callbacks. The status of a completed collective:
 * empty (MPI_ANY_SOURCE, MPI_ANY_TAG, no elements, not cancelled). The
 * operation's error is reported by the wrappers, on the communicator. */
static int greq_query(void *extra, MPI_Status *st)
{
    (void)extra;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    return MPI_SUCCESS;
}

static void req_destroy(struct shim_req *p)
{
    shim_in_nbcx++;
    if (p->nreq != NBCX_REQUEST_NULL)
        nbcx_request_free(&p->nreq);
    release_handles(p->types, p->ntypes, &p->nop);
    shim_in_nbcx--;
    op_release(&p->uop);
    free(p->types);
    comm_release(p->sc);
    free(p);
}

static int greq_free(void *extra)
{
    struct shim_req *p = extra;
    table_remove(p);
    req_destroy(p);
    return MPI_SUCCESS;
}

static int greq_cancel(void *extra, int complete)
{
    (void)extra, (void)complete; /* collectives cannot be cancelled */
    return MPI_SUCCESS;
}

/* Persistent tokens are receives on a private duplicate of
 * MPI_COMM_SELF, never started (so never matched). Not receives from
 * MPI_PROC_NULL: in MPICH 4.0.2, freeing a never-started persistent
 * receive from MPI_PROC_NULL makes later persistent collectives hang. */
static MPI_Comm g_token_comm = MPI_COMM_NULL;

static MPI_Comm token_comm(void)
{
    pthread_mutex_lock(&g_comm_lock);
    if (g_token_comm == MPI_COMM_NULL &&
        PMPI_Comm_dup(MPI_COMM_SELF, &g_token_comm) != MPI_SUCCESS)
        g_token_comm = MPI_COMM_NULL;
    MPI_Comm c = g_token_comm;
    pthread_mutex_unlock(&g_comm_lock);
    return c;
}

static int to_mpi_error(int err);

int shim_finish(struct shim_call *c, int err, nbcx_request nreq,
                MPI_Request *req)
{
    /* Erroneous for any MPI: reported here, as a checking library does
     * (Debian's MPICH has no checks, and aborts or crashes on them); an
     * aliased send buffer where the library refuses one too (gen_colls.py's
     * ALIAS_IN_PLACE retries the others in place). A
     * predefined operation nbcx refuses on a predefined type is one the
     * standard does not define on it (MPICH 4.0.2 asserts in its kernel);
     * on a derived type it goes native (the library decides). */
    if (err == NBCX_ERR_COUNT || err == NBCX_ERR_ROOT ||
        err == NBCX_ERR_ALIAS || (err == NBCX_ERR_OP && c->predefined)) {
        c->reason = R_ARGS;
        shim_native(c); /* counted with the arguments refused */
        int cls = to_mpi_error(err);
        if (req)
            *req = MPI_REQUEST_NULL;
        PMPI_Comm_call_errhandler(c->sc->comm, cls);
        return cls;
    }
    if (err != NBCX_SUCCESS) {
        c->reason = err == NBCX_ERR_TYPE ? R_TYPE
                    : err == NBCX_ERR_OP ? R_OP
                    : err == NBCX_ERR_NOMEM || err == NBCX_ERR_TRANSPORT ||
                            err == NBCX_ERR_INTERN
                        ? R_OTHER
                        : R_ARGS;
        shim_native(c);
        return -1;
    }
    struct shim_req *p = calloc(1, sizeof *p);
    int persistent = c->op >= OP_FIRST_PERSISTENT;
    int rc = MPI_ERR_NO_MEM;
    if (p) {
        p->nreq = nreq;
        p->persistent = persistent;
        p->pending = !persistent;
        p->sc = c->sc;
        p->uop = c->uop; /* held until the request is destroyed */
        c->uop = MPI_OP_NULL;
        atomic_fetch_add(&c->sc->refs, 1);
        if (persistent) {
            /* The request keeps its converted handles. */
            p->types = malloc(sizeof *p->types * (size_t)(c->ntypes + 1));
            if (p->types) {
                memcpy(p->types, c->types,
                       sizeof *p->types * (size_t)c->ntypes);
                p->ntypes = c->ntypes;
                p->nop = c->nop;
                c->ntypes = 0;
                c->nop = NBCX_OP_NULL;
                MPI_Comm tc = token_comm();
                rc = tc == MPI_COMM_NULL
                         ? MPI_ERR_INTERN
                         : PMPI_Recv_init(NULL, 0, MPI_BYTE, 0, 0, tc,
                                          &p->handle);
            }
        } else {
            rc = PMPI_Grequest_start(greq_query, greq_free, greq_cancel, p,
                                     &p->handle);
        }
    }
    call_release(c);
    shim_in_nbcx--;
    if (rc != MPI_SUCCESS) {
        /* The operation is posted: it cannot go native any more. */
        shim_in_nbcx++;
        if (persistent)
            nbcx_request_free(&nreq);
        else
            nbcx_wait(&nreq);
        shim_in_nbcx--;
        if (p) {
            p->nreq = NBCX_REQUEST_NULL;
            req_destroy(p);
        }
        *req = MPI_REQUEST_NULL;
        note(c->site, c->op, R_SERVED, c->bytes);
        PMPI_Comm_call_errhandler(c->sc->comm, rc);
        return rc;
    }
    if (!persistent) {
        atomic_fetch_add(&g_outstanding, 1);
        p->site = note(c->site, c->op, R_SERVED, c->bytes);
        p->t0 = p->t_acc = c->t0;
    } else {
        /* The row counts the starts (start_ours). */
        count(c->op, R_SERVED);
        if (shim_report)
            p->site = shim_site_get(c->site, c->op, R_SERVED);
        p->bytes = c->bytes;
    }
    table_add(p);
    *req = p->handle;
    return MPI_SUCCESS;
}

/* ---- completion ---- */

/* The MPI error code for an nbcx error: in the error class the native
 * library would use (nbcx_error_to_mpi), with nbcx's message, so that
 * MPI_Error_class gives the class and MPI_Error_string says what nbcx
 * saw. One code per nbcx error, made at its first use (MPI_Add_error_code
 * and MPI_Add_error_string); the bare class where the library cannot
 * give the message back. */
static pthread_mutex_t g_code_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_codes[NBCX_ERR_LASTCODE + 1];

static int to_mpi_error(int err)
{
    if (err == NBCX_SUCCESS)
        return MPI_SUCCESS;
    int cls = nbcx_error_to_mpi(err);
    if (err < 0 || err > NBCX_ERR_LASTCODE)
        return cls;
    pthread_mutex_lock(&g_code_lock);
    if (!g_codes[err]) {
        int code;
        char msg[MPI_MAX_ERROR_STRING];
        snprintf(msg, sizeof msg, "nbcx: %s", nbcx_error_string(err));
        char back[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        /* MPICH 4.0.2 makes the code, takes the string, and gives back
         * garbage for it ("Invalid count, error stack: ... inet_pton"):
         * there the bare class, with the library's own message. */
        g_codes[err] = PMPI_Add_error_code(cls, &code) == MPI_SUCCESS &&
                               PMPI_Add_error_string(code, msg) ==
                                   MPI_SUCCESS &&
                               PMPI_Error_string(code, back, &len) ==
                                   MPI_SUCCESS &&
                               strcmp(back, msg) == 0
                           ? code
                           : cls;
    }
    int code = g_codes[err];
    pthread_mutex_unlock(&g_code_lock);
    return code;
}

/* NBCX_PMPI_REPORT: when the application's current completion call
 * (MPI_Wait*, MPI_Test*, MPI_Request_free) began; 0 outside them. */
static _Thread_local long long t_wait;

/* The report's clock of p, after a test or wait of it: the time since
 * the completion call began (or since p was last looked at in it) is
 * exposed; once done, the operation's times go to its row. */
static void report_advance(struct shim_req *p, int done)
{
    long long now = shim_now_ns();
    long long from = t_wait > p->t_acc ? t_wait : p->t_acc;
    if (t_wait && now > from)
        p->exposed += now - from;
    p->t_acc = now;
    if (done) {
        shim_site_time(p->site, now - p->t0, p->exposed);
        p->exposed = 0;
    }
}

/* Tests (or waits for) the nbcx operation behind p; once it is done,
 * completes the MPI handle so that the native completion functions
 * return it. Returns 1 when no longer pending. */
static int advance(struct shim_req *p, int blocking)
{
    if (!p->pending)
        return 1;
    int flag = 0, err;
    shim_in_nbcx++;
    if (blocking) {
        err = nbcx_wait(&p->nreq);
        flag = 1;
    } else {
        err = nbcx_test(&p->nreq, &flag);
    }
    shim_in_nbcx--;
    if (p->site)
        report_advance(p, flag);
    if (!flag)
        return 0;
    p->err = to_mpi_error(err);
    p->pending = 0;
    atomic_fetch_sub(&g_outstanding, 1);
    if (p->persistent)
        p->ready = 1; /* the shim reports it (the token stays inactive) */
    else
        PMPI_Grequest_complete(p->handle);
    return 1;
}

/* nbcx progress in caller (or auto) mode while the program waits for
 * something else (a point-to-point request): a native library progresses its
 * collectives inside any MPI call, and peers may need ours to move. */
static int caller_progress_needed(void)
{
    return g_caller_mode == 1 && !shim_in_nbcx &&
           atomic_load_explicit(&g_outstanding, memory_order_relaxed) > 0;
}

static void poll_pause(void)
{
    if (caller_progress_needed()) {
        shim_in_nbcx++;
        nbcx_progress();
        shim_in_nbcx--;
    } else {
        sched_yield();
    }
}

static int raise_error(struct shim_comm *sc, int err)
{
    MPI_Comm comm = sc && atomic_load(&sc->alive) ? sc->comm : MPI_COMM_WORLD;
    PMPI_Comm_call_errhandler(comm, err);
    return err;
}

static void reap_detached(int blocking)
{
    pthread_mutex_lock(&g_lock);
    struct shim_req *list = g_detached;
    g_detached = NULL;
    atomic_store(&g_ndetached, 0);
    pthread_mutex_unlock(&g_lock);
    struct shim_req *keep = NULL;
    int nkeep = 0;
    while (list) {
        struct shim_req *p = list;
        list = p->dnext;
        if (advance(p, blocking)) {
            MPI_Request h = p->handle;
            PMPI_Request_free(&h); /* greq_free releases p */
            continue;
        }
        p->dnext = keep;
        keep = p;
        nkeep++;
    }
    if (keep) {
        pthread_mutex_lock(&g_lock);
        struct shim_req *t = keep;
        while (t->dnext)
            t = t->dnext;
        t->dnext = g_detached;
        g_detached = keep;
        atomic_fetch_add(&g_ndetached, nkeep);
        pthread_mutex_unlock(&g_lock);
    }
}

/* The status of a completed collective (MPI_ERROR untouched). */
static void empty_status(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
}

/* Scratch copy of a request array for the native call: the shim's
 * persistent requests read as MPI_REQUEST_NULL there (their token is an
 * inactive request the native library would report at once; the shim
 * reports them itself when nbcx has completed them). The errors of ours
 * are noted before the native call frees them. */
struct reqs {
    MPI_Request *v;
    struct shim_req **p; /* ours per index, or NULL */
    int *err;
    struct shim_comm **sc; /* held (a reference) where err is set */
    char *m;               /* masked: one of our persistent requests */
    MPI_Request small_v[32];
    char small_m[32];
    struct shim_req *small_p[32];
    int small_err[32];
    struct shim_comm *small_sc[32];
    int n, any_ours, pending; /* pending: ours persistent, running */
};

static int reqs_open(struct reqs *r, int n, MPI_Request *in)
{
    if (shim_in_nbcx ||
        atomic_load_explicit(&g_nreqs, memory_order_acquire) == 0) {
        if (!caller_progress_needed())
            return 0; /* the native call, directly */
    }
    r->n = n;
    r->any_ours = r->pending = 0;
    r->v = r->small_v;
    r->p = r->small_p;
    r->err = r->small_err;
    r->sc = r->small_sc;
    r->m = r->small_m;
    if (n > 32) {
        r->m = malloc((size_t)n);
        r->v = malloc(sizeof *r->v * (size_t)n);
        r->p = malloc(sizeof *r->p * (size_t)n);
        r->err = malloc(sizeof *r->err * (size_t)n);
        r->sc = malloc(sizeof *r->sc * (size_t)n);
        if (!r->v || !r->p || !r->err || !r->sc || !r->m) {
            free(r->m);
            free(r->v);
            free(r->p);
            free(r->err);
            free(r->sc);
            return 0;
        }
    }
    for (int i = 0; i < n; i++) {
        r->v[i] = in[i];
        r->p[i] = lookup(in[i]);
        r->err[i] = MPI_SUCCESS;
        r->sc[i] = NULL;
        r->m[i] = 0;
        if (r->p[i])
            r->any_ours = 1;
    }
    return 1;
}

/* Advances ours (nonblocking, or blocking) and masks our persistent
 * requests; counts those still running. */
static void reqs_advance(struct reqs *r, MPI_Request *in, int blocking)
{
    r->pending = 0;
    for (int i = 0; i < r->n; i++) {
        struct shim_req *p = r->p[i];
        r->v[i] = in[i];
        r->m[i] = 0;
        if (!p)
            continue;
        if (p->persistent) {
            r->v[i] = MPI_REQUEST_NULL;
            r->m[i] = 1;
        } else if (r->sc[i]) {
            continue; /* done, its error noted */
        }
        advance(p, blocking);
        if (p->persistent && p->pending)
            r->pending++;
        if ((p->persistent ? p->ready : !p->pending) &&
            p->err != MPI_SUCCESS && !r->sc[i]) {
            r->err[i] = p->err;
            r->sc[i] = p->sc;
            atomic_fetch_add(&p->sc->refs, 1);
        }
    }
}

static void reqs_close(struct reqs *r, MPI_Request *out)
{
    for (int i = 0; i < r->n; i++) {
        if (!r->m[i])
            out[i] = r->v[i];
        comm_release(r->sc[i]);
    }
    if (r->v != r->small_v) {
        free(r->v);
        free(r->p);
        free(r->err);
        free(r->sc);
        free(r->m);
    }
}

/* Errors of the requests completed by this call (indices idx[0..nidx),
 * or 0..nidx when idx is NULL), written into the statuses when there is
 * one; returns one of them (its communicator in *sc) or MPI_SUCCESS. */
static int reqs_errors(struct reqs *r, const int *idx, int nidx,
                       MPI_Status *st, struct shim_comm **sc)
{
    int any = MPI_SUCCESS;
    for (int k = 0; k < nidx; k++) {
        int i = idx ? idx[k] : k;
        if (r->err[i] != MPI_SUCCESS) {
            any = r->err[i];
            *sc = r->sc[i];
        }
    }
    if (any != MPI_SUCCESS && st != MPI_STATUSES_IGNORE)
        for (int k = 0; k < nidx; k++)
            st[k].MPI_ERROR = r->err[idx ? idx[k] : k];
    return any;
}

/* ---- wrapped MPI functions ---- */

#define ENABLED() (configure(), g_enabled)

/* MPI_COMM_WORLD's twin is made in MPI_Init, as MPI makes its own
 * set-up there: nbcx_comm_from_mpi places the progress thread of auto
 * mode (hwloc's topology, 8-13 ms of CPU), which made on the program's
 * first collective would cost that collective the time, or, placed in
 * the background, take the core from the collectives after it
 * (docs/results/fastpath/cold/stalls-s25). Collective over the world,
 * as MPI_Init is. */
static void init_world(int rc)
{
    if (rc == MPI_SUCCESS)
        (void)comm_get(MPI_COMM_WORLD);
}

int MPI_Init(int *argc, char ***argv)
{
    if (!ENABLED())
        return PMPI_Init(argc, argv);
    int rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &g_real_level);
    g_user_level = MPI_THREAD_SINGLE;
    init_world(rc);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (!ENABLED())
        return PMPI_Init_thread(argc, argv, required, provided);
    int rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &g_real_level);
    g_user_level = required < g_real_level ? required : g_real_level;
    if (provided)
        *provided = g_user_level;
    init_world(rc);
    return rc;
}

int MPI_Query_thread(int *provided)
{
    int rc = PMPI_Query_thread(provided);
    if (rc == MPI_SUCCESS && g_enabled == 1 && !shim_in_nbcx &&
        *provided > g_user_level)
        *provided = g_user_level;
    return rc;
}

int MPI_Finalize(void)
{
    if (g_enabled != 1) {
        if (shim_report) /* the calls went native: NBCX_PMPI=off */
            shim_report_write(g_report_dest, op_names, reason_names);
        return PMPI_Finalize();
    }
    /* Operations the program freed without completing them. */
    while (atomic_load(&g_ndetached))
        reap_detached(1);
    free_unheld();
    if (shim_report)
        shim_report_write(g_report_dest, op_names, reason_names);
    if (g_verbose) {
        int rank = 0;
        long long local[OP_COUNT][R_COUNT], sum[OP_COUNT][R_COUNT];
        for (int i = 0; i < OP_COUNT; i++)
            for (int j = 0; j < R_COUNT; j++)
                local[i][j] = atomic_load(&g_count[i][j]);
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        PMPI_Reduce(local, sum, OP_COUNT * R_COUNT, MPI_LONG_LONG, MPI_SUM, 0,
                    MPI_COMM_WORLD);
        if (rank == 0) {
            int nprocs = 1;
            PMPI_Comm_size(MPI_COMM_WORLD, &nprocs);
            const char *mode = g_caller_mode == 1   ? "caller"
                               : g_caller_mode == 0 ? "thread"
                                                    : "unused";
            fprintf(stderr, "nbcx-pmpi: calls on %d ranks (progress: %s, "
                            "MPI thread level %s):\n", nprocs, mode,
                    g_real_level == MPI_THREAD_MULTIPLE ? "MULTIPLE"
                                                        : "below MULTIPLE");
            long long served = 0, native = 0;
            for (int i = 0; i < OP_COUNT; i++) {
                long long n = 0;
                for (int j = 1; j < R_COUNT; j++)
                    n += sum[i][j];
                if (!n && !sum[i][R_SERVED])
                    continue;
                served += sum[i][R_SERVED];
                native += n;
                fprintf(stderr, "nbcx-pmpi:   %-26s %8lld nbcx %8lld native",
                        op_names[i], sum[i][R_SERVED], n);
                for (int j = 1; j < R_COUNT; j++)
                    if (sum[i][j])
                        fprintf(stderr, " (%s: %lld)", reason_names[j],
                                sum[i][j]);
                fprintf(stderr, "\n");
            }
            fprintf(stderr, "nbcx-pmpi:   total %lld nbcx, %lld native\n",
                    served, native);
        }
    }
    /* Release every nbcx communicator while MPI still runs. */
    for (;;) {
        pthread_mutex_lock(&g_comm_lock);
        struct shim_comm *sc = g_comms;
        MPI_Comm comm = sc ? sc->comm : MPI_COMM_NULL;
        pthread_mutex_unlock(&g_comm_lock);
        if (!sc)
            break;
        if (PMPI_Comm_delete_attr(comm, g_keyval) != MPI_SUCCESS)
            comm_unlink(sc); /* should not happen; avoid looping */
    }
    if (g_keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&g_keyval);
    if (g_token_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&g_token_comm);
    return PMPI_Finalize();
}

static int wait_impl(MPI_Request *req, MPI_Status *status)
{
    struct shim_req *p = req ? lookup(*req) : NULL;
    if (!p) {
        if (!req || !caller_progress_needed())
            return PMPI_Wait(req, status);
        for (;;) {
            int flag = 0, rc = PMPI_Test(req, &flag, status);
            if (rc != MPI_SUCCESS || flag)
                return rc;
            poll_pause();
        }
    }
    advance(p, 1);
    struct shim_comm *sc = p->sc;
    int err = p->err, rc = MPI_SUCCESS;
    if (p->persistent) {
        p->ready = 0;
        empty_status(status);
    } else {
        if (err != MPI_SUCCESS)
            atomic_fetch_add(&sc->refs, 1); /* p goes in PMPI_Wait */
        rc = PMPI_Wait(req, status);
    }
    if (err != MPI_SUCCESS) {
        if (status != MPI_STATUS_IGNORE)
            status->MPI_ERROR = err;
        rc = raise_error(sc, err);
        if (!p->persistent)
            comm_release(sc);
    }
    return rc;
}

static int test_impl(MPI_Request *req, int *flag, MPI_Status *status)
{
    struct shim_req *p = req ? lookup(*req) : NULL;
    if (!p) {
        if (caller_progress_needed())
            poll_pause();
        return PMPI_Test(req, flag, status);
    }
    if (!advance(p, 0)) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    struct shim_comm *sc = p->sc;
    int err = p->err, rc = MPI_SUCCESS, persistent = p->persistent;
    if (persistent) {
        p->ready = 0;
        *flag = 1;
        empty_status(status);
    } else {
        if (err != MPI_SUCCESS)
            atomic_fetch_add(&sc->refs, 1);
        rc = PMPI_Test(req, flag, status);
    }
    if (err != MPI_SUCCESS) {
        if (*flag && status != MPI_STATUS_IGNORE)
            status->MPI_ERROR = err;
        if (*flag)
            rc = raise_error(sc, err);
        if (!persistent)
            comm_release(sc);
    }
    return rc;
}

static int request_get_status_impl(MPI_Request req, int *flag, MPI_Status *status)
{
    struct shim_req *p = lookup(req);
    if (!p) {
        if (caller_progress_needed())
            poll_pause();
        return PMPI_Request_get_status(req, flag, status);
    }
    if (!advance(p, 0)) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    int rc = MPI_SUCCESS;
    if (p->persistent) {
        *flag = 1;
        empty_status(status);
    } else {
        rc = PMPI_Request_get_status(req, flag, status);
    }
    if (*flag && status != MPI_STATUS_IGNORE)
        status->MPI_ERROR = p->err;
    return rc;
}

/* Our persistent requests of the array, now complete: reported. */
static void report_persistent(struct reqs *r, MPI_Status *st)
{
    for (int i = 0; i < r->n; i++)
        if (r->m[i] && r->p[i]->ready) {
            r->p[i]->ready = 0;
            if (st != MPI_STATUSES_IGNORE)
                empty_status(&st[i]);
        }
}

static int waitall_impl(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    struct reqs r;
    if (count <= 0 || !reqs || !reqs_open(&r, count, reqs))
        return PMPI_Waitall(count, reqs, statuses);
    if (!r.any_ours && !caller_progress_needed()) {
        reqs_close(&r, reqs);
        return PMPI_Waitall(count, reqs, statuses);
    }
    reqs_advance(&r, reqs, 1); /* every one of ours is now complete */
    int rc;
    if (caller_progress_needed()) {
        for (;;) {
            int flag = 0;
            rc = PMPI_Testall(count, r.v, &flag, statuses);
            if (rc != MPI_SUCCESS || flag)
                break;
            poll_pause();
        }
    } else {
        rc = PMPI_Waitall(count, r.v, statuses);
    }
    report_persistent(&r, statuses);
    struct shim_comm *sc = NULL;
    if (reqs_errors(&r, NULL, count, statuses, &sc) != MPI_SUCCESS)
        rc = raise_error(sc, MPI_ERR_IN_STATUS);
    reqs_close(&r, reqs);
    return rc;
}

static int testall_impl(int count, MPI_Request reqs[], int *flag,
                MPI_Status statuses[])
{
    struct reqs r;
    if (count <= 0 || !reqs || !reqs_open(&r, count, reqs))
        return PMPI_Testall(count, reqs, flag, statuses);
    if (!r.any_ours) {
        reqs_close(&r, reqs);
        if (caller_progress_needed())
            poll_pause();
        return PMPI_Testall(count, reqs, flag, statuses);
    }
    reqs_advance(&r, reqs, 0);
    if (r.pending) { /* all or nothing: some of ours are not done */
        reqs_close(&r, reqs);
        *flag = 0;
        return MPI_SUCCESS;
    }
    int rc = PMPI_Testall(count, r.v, flag, statuses);
    struct shim_comm *sc = NULL;
    if (rc == MPI_SUCCESS && *flag) {
        report_persistent(&r, statuses);
        if (reqs_errors(&r, NULL, count, statuses, &sc) != MPI_SUCCESS)
            rc = raise_error(sc, MPI_ERR_IN_STATUS);
    }
    reqs_close(&r, reqs);
    return rc;
}

static int any_common(int count, MPI_Request reqs[], int *index, int *flag,
                      MPI_Status *status, int blocking)
{
    struct reqs r;
    if (count <= 0 || !reqs || !reqs_open(&r, count, reqs))
        return blocking ? PMPI_Waitany(count, reqs, index, status)
                        : PMPI_Testany(count, reqs, index, flag, status);
    if (!r.any_ours && !caller_progress_needed()) {
        reqs_close(&r, reqs);
        return blocking ? PMPI_Waitany(count, reqs, index, status)
                        : PMPI_Testany(count, reqs, index, flag, status);
    }
    int rc = MPI_SUCCESS, f = 0;
    for (;;) {
        reqs_advance(&r, reqs, 0);
        int i;
        for (i = 0; i < count; i++)
            if (r.m[i] && r.p[i]->ready)
                break;
        if (i < count) { /* one of our persistent requests is done */
            r.p[i]->ready = 0;
            empty_status(status);
            *index = i;
            f = 1;
            break;
        }
        rc = PMPI_Testany(count, r.v, index, &f, status);
        if (rc != MPI_SUCCESS)
            break;
        if (f && *index == MPI_UNDEFINED && r.pending)
            f = 0; /* only ours left, still running */
        if (f || !blocking)
            break;
        poll_pause();
    }
    if (flag)
        *flag = f;
    if (rc == MPI_SUCCESS && f && *index != MPI_UNDEFINED &&
        r.err[*index] != MPI_SUCCESS) {
        if (status != MPI_STATUS_IGNORE)
            status->MPI_ERROR = r.err[*index];
        rc = raise_error(r.sc[*index], r.err[*index]);
    }
    reqs_close(&r, reqs);
    return rc;
}

static int waitany_impl(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    return any_common(count, reqs, index, NULL, status, 1);
}

static int testany_impl(int count, MPI_Request reqs[], int *index, int *flag,
                MPI_Status *status)
{
    return any_common(count, reqs, index, flag, status, 0);
}

static int some_common(int incount, MPI_Request reqs[], int *outcount,
                       int indices[], MPI_Status statuses[], int blocking)
{
    struct reqs r;
    if (incount <= 0 || !reqs || !reqs_open(&r, incount, reqs))
        return blocking
                   ? PMPI_Waitsome(incount, reqs, outcount, indices, statuses)
                   : PMPI_Testsome(incount, reqs, outcount, indices, statuses);
    if (!r.any_ours && !caller_progress_needed()) {
        reqs_close(&r, reqs);
        return blocking
                   ? PMPI_Waitsome(incount, reqs, outcount, indices, statuses)
                   : PMPI_Testsome(incount, reqs, outcount, indices, statuses);
    }
    int rc;
    for (;;) {
        reqs_advance(&r, reqs, 0);
        rc = PMPI_Testsome(incount, r.v, outcount, indices, statuses);
        if (rc != MPI_SUCCESS)
            break;
        int ready = 0;
        for (int i = 0; i < incount; i++)
            if (r.m[i] && r.p[i]->ready)
                ready++;
        if (*outcount == MPI_UNDEFINED && (r.pending || ready))
            *outcount = 0; /* ours are not all inactive */
        for (int i = 0; i < incount && ready; i++)
            if (r.m[i] && r.p[i]->ready) {
                r.p[i]->ready = 0;
                if (statuses != MPI_STATUSES_IGNORE)
                    empty_status(&statuses[*outcount]);
                indices[(*outcount)++] = i;
            }
        if (*outcount != 0 || !blocking)
            break;
        poll_pause();
    }
    struct shim_comm *sc = NULL;
    if (rc == MPI_SUCCESS && *outcount > 0 &&
        reqs_errors(&r, indices, *outcount, statuses, &sc) != MPI_SUCCESS)
        rc = raise_error(sc, MPI_ERR_IN_STATUS);
    reqs_close(&r, reqs);
    return rc;
}

static int waitsome_impl(int incount, MPI_Request reqs[], int *outcount,
                 int indices[], MPI_Status statuses[])
{
    return some_common(incount, reqs, outcount, indices, statuses, 1);
}

static int testsome_impl(int incount, MPI_Request reqs[], int *outcount,
                 int indices[], MPI_Status statuses[])
{
    return some_common(incount, reqs, outcount, indices, statuses, 0);
}

static int start_ours(struct shim_req *p)
{
    if (p->pending)
        return MPI_ERR_REQUEST; /* already active */
    if (p->site) {
        shim_site_count(p->site, 1, p->bytes);
        p->t0 = p->t_acc = shim_now_ns();
        p->exposed = 0;
    }
    shim_in_nbcx++;
    int err = nbcx_start(&p->nreq);
    shim_in_nbcx--;
    if (err != NBCX_SUCCESS)
        return to_mpi_error(err);
    p->pending = 1;
    p->ready = 0;
    p->err = MPI_SUCCESS;
    atomic_fetch_add(&g_outstanding, 1);
    return MPI_SUCCESS;
}

int MPI_Start(MPI_Request *req)
{
    struct shim_req *p = req ? lookup(*req) : NULL;
    if (!p || !p->persistent)
        return PMPI_Start(req);
    int rc = start_ours(p);
    return rc == MPI_SUCCESS ? rc : raise_error(p->sc, rc);
}

int MPI_Startall(int count, MPI_Request reqs[])
{
    struct reqs r;
    if (count <= 0 || !reqs || !reqs_open(&r, count, reqs))
        return PMPI_Startall(count, reqs);
    if (!r.any_ours) {
        reqs_close(&r, reqs);
        return PMPI_Startall(count, reqs);
    }
    int rc = MPI_SUCCESS;
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++)
        if (r.p[i] && r.p[i]->persistent) {
            rc = start_ours(r.p[i]);
            if (rc != MPI_SUCCESS)
                rc = raise_error(r.p[i]->sc, rc);
        } else {
            rc = PMPI_Start(&r.v[i]);
        }
    reqs_close(&r, reqs);
    return rc;
}

static int request_free_impl(MPI_Request *req)
{
    struct shim_req *p = req ? lookup(*req) : NULL;
    if (!p)
        return PMPI_Request_free(req);
    if (!p->persistent) {
        if (!p->pending)
            return PMPI_Request_free(req); /* greq_free releases p */
        /* Freed while running: the shim keeps the grequest, completes
         * it once nbcx is done (in any later shim call, at the latest in
         * MPI_Finalize) and frees it then; the program's handle is
         * MPI_REQUEST_NULL at once, as MPI wants. */
        pthread_mutex_lock(&g_lock);
        p->detached = 1;
        p->dnext = g_detached;
        g_detached = p;
        atomic_fetch_add(&g_ndetached, 1);
        pthread_mutex_unlock(&g_lock);
        *req = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
    }
    /* Freeing an active persistent request: the operation is completed
     * first (nbcx frees only inactive ones). */
    advance(p, 1);
    MPI_Request h = p->handle;
    table_remove(p);
    int rc = PMPI_Request_free(&h);
    req_destroy(p);
    *req = MPI_REQUEST_NULL;
    return rc;
}

int MPI_Cancel(MPI_Request *req)
{
    struct shim_req *p = req ? lookup(*req) : NULL;
    if (!p)
        return PMPI_Cancel(req);
    return MPI_SUCCESS; /* collectives cannot be cancelled (MPI 5.12) */
}

/* The completion functions the application calls: with the report on,
 * timed (t_wait: the exposed time of the operations they look at). */
#define TIMED(call)                                                        \
    do {                                                                   \
        if (!shim_report)                                                  \
            return call;                                                   \
        t_wait = shim_now_ns();                                            \
        int rc_ = call;                                                    \
        t_wait = 0;                                                        \
        return rc_;                                                        \
    } while (0)

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    TIMED(wait_impl(req, status));
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    TIMED(test_impl(req, flag, status));
}

int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status)
{
    TIMED(request_get_status_impl(req, flag, status));
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    TIMED(waitall_impl(count, reqs, statuses));
}

int MPI_Testall(int count, MPI_Request reqs[], int *flag,
                MPI_Status statuses[])
{
    TIMED(testall_impl(count, reqs, flag, statuses));
}

int MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    TIMED(waitany_impl(count, reqs, index, status));
}

int MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag,
                MPI_Status *status)
{
    TIMED(testany_impl(count, reqs, index, flag, status));
}

int MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount,
                 int indices[], MPI_Status statuses[])
{
    TIMED(waitsome_impl(incount, reqs, outcount, indices, statuses));
}

int MPI_Testsome(int incount, MPI_Request reqs[], int *outcount,
                 int indices[], MPI_Status statuses[])
{
    TIMED(testsome_impl(incount, reqs, outcount, indices, statuses));
}

int MPI_Request_free(MPI_Request *req)
{
    TIMED(request_free_impl(req));
}

/* For tests and tools (no header: find it with dlsym): this process's
 * calls served by nbcx and sent to the native library so far. */
int nbcx_pmpi_counts(long long *served, long long *native);
int nbcx_pmpi_counts(long long *served, long long *native)
{
    long long s = 0, n = 0;
    for (int i = 0; i < OP_COUNT; i++) {
        s += atomic_load(&g_count[i][R_SERVED]);
        for (int j = 1; j < R_COUNT; j++)
            n += atomic_load(&g_count[i][j]);
    }
    if (served)
        *served = s;
    if (native)
        *native = n;
    return 0;
}
