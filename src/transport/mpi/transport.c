/* mpi.c - the MPI transport: MPI_Isend/MPI_Irecv on a private duplicate
 * of the user's communicator, tested many at a time with MPI_Testsome;
 * for persistent operations, MPI_Send_init/MPI_Recv_init once and
 * MPI_Startall at every start.
 *
 * Errors are returned, not fatal: the duplicate has MPI_ERRORS_RETURN.
 * MPICH (4.0) raises the errors of request functions (MPI_Testsome,
 * MPI_Test, MPI_Request_get_status...) on MPI_COMM_WORLD's handler
 * instead of the request's communicator's, which aborts the job on a
 * truncation by default; there, the transport puts a handler of its own
 * on MPI_COMM_WORLD (install_guard below).
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_backend.h"

_Static_assert(sizeof(MPI_Request) <= 16, "MPI_Request fits a slot");

struct mpi_state {
    MPI_Comm comm;
    int *nodes; /* node of each rank (its lowest rank), NULL: not known */
};

static MPI_Comm comm_of(nbcxi_transport *t)
{
    return ((struct mpi_state *)t->state)->comm;
}

MPI_Comm nbcxi_mpi_comm_of(nbcxi_transport *t)
{
    return comm_of(t);
}

int nbcxi_mpi_error(int mpi_err)
{
    if (mpi_err == MPI_SUCCESS)
        return NBCX_SUCCESS;
    int cls = MPI_ERR_OTHER;
    PMPI_Error_class(mpi_err, &cls);
    return cls == MPI_ERR_TRUNCATE ? NBCX_ERR_TRUNCATE : NBCX_ERR_TRANSPORT;
}

/* ---- MPI_COMM_WORLD's error handler, where MPI raises request errors
 * there (MPICH) ----
 *
 * The handler put on MPI_COMM_WORLD returns quietly (as MPI_ERRORS_RETURN)
 * while this thread is inside one of the transport's own MPI calls
 * (`in_nbcx`), so that the error comes back as a return code; any other
 * error goes to the handler the program had set, which is kept on a
 * private duplicate of MPI_COMM_SELF and invoked there with
 * MPI_Comm_call_errhandler: MPI_ERRORS_ARE_FATAL still aborts, a user
 * handler still runs (its first argument is that duplicate). A program
 * that sets MPI_COMM_WORLD's handler later replaces this one, and then
 * gets nbcx's request errors in its own handler. */
#if defined(MPICH)
static _Thread_local bool in_nbcx;
static MPI_Comm forward = MPI_COMM_NULL;

static void world_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    if (!in_nbcx && forward != MPI_COMM_NULL)
        PMPI_Comm_call_errhandler(forward, *code);
}

static void install_guard(void)
{
    MPI_Errhandler mine, theirs;
    if (PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &theirs) != MPI_SUCCESS)
        return;
    if (PMPI_Comm_dup(MPI_COMM_SELF, &forward) != MPI_SUCCESS ||
        PMPI_Comm_set_errhandler(forward, theirs) != MPI_SUCCESS ||
        PMPI_Comm_create_errhandler(world_handler, &mine) != MPI_SUCCESS) {
        fprintf(stderr, "nbcx: warning: could not guard MPI_COMM_WORLD's "
                        "error handler; an MPI error in a collective may "
                        "abort the job\n");
        PMPI_Errhandler_free(&theirs);
        return;
    }
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, mine);
    PMPI_Errhandler_free(&mine);
    PMPI_Errhandler_free(&theirs);
}
static void enter(void) { in_nbcx = true; }
static void leave(void) { in_nbcx = false; }
#else
static void install_guard(void) {}
static void enter(void) {}
static void leave(void) {}
#endif

MPI_Datatype nbcxi_mpi_type(const struct nbcx_datatype_s *t)
{
    switch (t->id) {
    case 1: return MPI_INT8_T;
    case 2: return MPI_UINT8_T;
    case 3: return MPI_INT16_T;
    case 4: return MPI_UINT16_T;
    case 5: return MPI_INT32_T;
    case 6: return MPI_UINT32_T;
    case 7: return MPI_INT64_T;
    case 8: return MPI_UINT64_T;
    case 9: return MPI_FLOAT;
    case 10: return MPI_DOUBLE;
    case 11: return MPI_BYTE;
    case 12: return MPI_CHAR;
    case 13: return MPI_FLOAT_INT;
    case 14: return MPI_DOUBLE_INT;
    case 15: return MPI_LONG_INT;
    case 16: return MPI_2INT;
    case 17: return MPI_SHORT_INT;
    default: return *(const MPI_Datatype *)t->handle; /* from MPI */
    }
}

static int mpi_isend(nbcxi_transport *t, const void *buf, int count,
                     struct nbcx_datatype_s *type, int peer, int tag,
                     void *req)
{
    return nbcxi_mpi_error(PMPI_Isend(buf, count, nbcxi_mpi_type(type), peer,
                                     tag, comm_of(t), (MPI_Request *)req));
}

static int mpi_irecv(nbcxi_transport *t, void *buf, int count,
                     struct nbcx_datatype_s *type, int peer, int tag,
                     void *req)
{
    return nbcxi_mpi_error(PMPI_Irecv(buf, count, nbcxi_mpi_type(type), peer,
                                     tag, comm_of(t), (MPI_Request *)req));
}

/* With statuses: when a request fails, MPI_Testsome says only
 * MPI_ERR_IN_STATUS, and the request's own error (a truncation, say) is
 * in its status. */
enum { STATUSES_ON_STACK = 32 };

static int mpi_testsome(nbcxi_transport *t, int n, void *reqs, int *ndone,
                        int *idx)
{
    (void)t;
    MPI_Status stack[STATUSES_ON_STACK], *st = stack;
    if (n > STATUSES_ON_STACK && !(st = malloc(sizeof *st * (size_t)n)))
        return NBCX_ERR_NOMEM;
    int out = 0;
    enter();
    int rc = PMPI_Testsome(n, (MPI_Request *)reqs, &out, idx, st);
    leave();
    *ndone = out == MPI_UNDEFINED ? 0 : out;
    int err = nbcxi_mpi_error(rc);
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        PMPI_Error_class(rc, &cls);
    if (cls == MPI_ERR_IN_STATUS) { /* the first request that failed */
        for (int k = 0; k < *ndone; k++) {
            if (st[k].MPI_ERROR != MPI_SUCCESS) {
                err = nbcxi_mpi_error(st[k].MPI_ERROR);
                break;
            }
        }
    }
    if (st != stack)
        free(st);
    return err;
}

/* Only on error paths: a receive is cancelled; a send that cannot be
 * cancelled is left to complete on its own (MPI_Request_free). */
static void mpi_cancel(nbcxi_transport *t, void *slot)
{
    (void)t;
    MPI_Request *req = slot;
    if (*req == MPI_REQUEST_NULL)
        return;
    int flag = 0;
    enter();
    PMPI_Cancel(req);
    PMPI_Test(req, &flag, MPI_STATUS_IGNORE);
    if (!flag && *req != MPI_REQUEST_NULL)
        PMPI_Request_free(req);
    leave();
}

static int mpi_send_init(nbcxi_transport *t, const void *buf, int count,
                         struct nbcx_datatype_s *type, int peer, int tag,
                         void *req)
{
    return nbcxi_mpi_error(PMPI_Send_init(buf, count, nbcxi_mpi_type(type),
                                         peer, tag, comm_of(t),
                                         (MPI_Request *)req));
}

static int mpi_recv_init(nbcxi_transport *t, void *buf, int count,
                         struct nbcx_datatype_s *type, int peer, int tag,
                         void *req)
{
    return nbcxi_mpi_error(PMPI_Recv_init(buf, count, nbcxi_mpi_type(type),
                                         peer, tag, comm_of(t),
                                         (MPI_Request *)req));
}

static int mpi_start(nbcxi_transport *t, int n, void *reqs)
{
    (void)t;
    enter();
    int rc = PMPI_Startall(n, (MPI_Request *)reqs);
    leave();
    return nbcxi_mpi_error(rc);
}

/* Error paths only: the persistent request stays allocated (an active
 * one may still be freed, MPI then releases it once it completes). */
static void mpi_cancel_prepared(nbcxi_transport *t, void *slot)
{
    (void)t;
    enter();
    PMPI_Cancel((MPI_Request *)slot);
    leave();
}

static void mpi_free_prepared(nbcxi_transport *t, void *slot)
{
    (void)t;
    int finalized = 0;
    PMPI_Finalized(&finalized);
    if (!finalized && *(MPI_Request *)slot != MPI_REQUEST_NULL) {
        enter();
        PMPI_Request_free((MPI_Request *)slot);
        leave();
    }
}

static void mpi_destroy(nbcxi_transport *t)
{
    int finalized = 0;
    PMPI_Finalized(&finalized);
    if (!finalized) {
        MPI_Comm comm = comm_of(t);
        PMPI_Comm_free(&comm);
    }
    free(((struct mpi_state *)t->state)->nodes);
    free(t->state);
    free(t);
}

static int mpi_node_of(const nbcxi_transport *t, int r)
{
    const int *nodes = ((const struct mpi_state *)t->state)->nodes;
    return nodes ? nodes[r] : -1;
}

static int mpi_split(nbcxi_transport *t, struct nbcx_comm_s *c, int color,
                     int key, struct nbcx_comm_s **out);

static const struct nbcxi_transport_ops mpi_ops = {
    .name = "mpi",
    .req_size = sizeof(MPI_Request),
    .isend = mpi_isend,
    .irecv = mpi_irecv,
    .testsome = mpi_testsome,
    .cancel = mpi_cancel,
    .destroy = mpi_destroy,
    .send_init = mpi_send_init,
    .recv_init = mpi_recv_init,
    .start = mpi_start,
    .cancel_prepared = mpi_cancel_prepared,
    .free_prepared = mpi_free_prepared,
    .split = mpi_split,
    .node_of = mpi_node_of,
    /* (without MPI_THREAD_MULTIPLE, the face refuses threads:
     * nbcxi_progress_threads_allowed; each communicator is an MPI
     * communicator of its own, and MPI_THREAD_MULTIPLE lets threads call
     * on different ones at once, or the program calls from one thread at
     * a time) */
    .caps = NBCXI_CAP_PROGRESS_THREAD | NBCXI_CAP_COMM_PARALLEL,
};

/* Whether list (an Open MPI or UCX component list: "a,b", or "^a,b" for
 * all but those) lets one of names in, where names are the shared-memory
 * components' (comma-separated, matched whole). NULL or "": all in. */
static bool list_admits(const char *list, const char *const names[])
{
    if (!list || !*list)
        return true;
    bool exclude = list[0] == '^', named = false;
    for (const char *w = list + exclude; *w;) {
        size_t n = strcspn(w, ",");
        named |= n == 3 && strncmp(w, "all", 3) == 0;
        for (int i = 0; names[i]; i++)
            named |= strlen(names[i]) == n && strncmp(w, names[i], n) == 0;
        w += n + (w[n] == ',');
    }
    return exclude ? !named : named;
}

/* Where MPI moves comm's data (transport.h). Collective over comm, as
 * nbcx_comm_from_mpi is. Over a network when MPI_COMM_TYPE_SHARED splits
 * it (its ranks span nodes, or MPICH's MPIR_CVAR_NOLOCAL, as on the
 * emulated network, tools/emunet, makes every rank its own node).
 * Through memory when it does not, unless Open MPI or UCX is told to
 * leave shared memory out (OMPI_MCA_btl=tcp,self on the emulated
 * network; UCX_TLS=tcp): then, TCP through one host's kernel or an
 * emulated link, not known (the measured bandwidth decides). */
/* The node of every rank of comm (node: this rank's part of
 * MPI_COMM_TYPE_SHARED), named by its lowest rank (transport.h, node_of):
 * the rank in comm of node's rank 0 (split_type with key 0 keeps comm's
 * order), gathered from all. NBCX_NODE_RANKS=N (for tests on one real
 * node) makes blocks of N consecutive ranks the nodes instead. NULL on
 * every rank when one could not allocate or MPI failed: "not known". */
static int *node_ranks(MPI_Comm comm, MPI_Comm node, int size)
{
    size_t fake = nbcxi_env_size("NBCX_NODE_RANKS", 0);
    int *nodes = malloc(sizeof(int) * (size_t)size);
    int ok = nodes != NULL, all = 0;
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS ||
        !all) {
        free(nodes);
        return NULL;
    }
    if (fake > 0) {
        for (int r = 0; r < size; r++)
            nodes[r] = r - (int)((size_t)r % fake);
        return nodes;
    }
    int zero = 0, mine = MPI_UNDEFINED;
    MPI_Group g, gn;
    PMPI_Comm_group(comm, &g);
    PMPI_Comm_group(node, &gn);
    PMPI_Group_translate_ranks(gn, 1, &zero, g, &mine);
    PMPI_Group_free(&gn);
    PMPI_Group_free(&g);
    if (PMPI_Allgather(&mine, 1, MPI_INT, nodes, 1, MPI_INT, comm) !=
        MPI_SUCCESS) {
        free(nodes);
        return NULL;
    }
    for (int r = 0; r < size; r++)
        if (nodes[r] < 0 || nodes[r] > r || nodes[nodes[r]] != nodes[r]) {
            free(nodes); /* (the same data, so the same answer, on all) */
            return NULL;
        }
    return nodes;
}

/* Where comm's data moves; *one_node: every rank on this node (the same
 * answer on every rank: a node's group is the whole communicator on all
 * ranks, or on none); *nodes: node_ranks. */
static enum nbcxi_medium medium_of(MPI_Comm comm, bool *one_node,
                                   int **nodes)
{
    static const char *const btl_shm[] = { "vader", "sm", "smcuda", NULL };
    static const char *const ucx_shm[] = { "sm", "shm", "posix", "sysv",
                                           "cma", "knem", "xpmem", NULL };
    int size = 0, local = 0;
    MPI_Comm node;
    PMPI_Comm_size(comm, &size);
    if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                             &node) != MPI_SUCCESS)
        return NBCXI_MEDIUM_UNKNOWN;
    PMPI_Comm_size(node, &local);
    *nodes = node_ranks(comm, node, size);
    PMPI_Comm_free(&node);
    *one_node = local == size;
    if (local < size)
        return NBCXI_MEDIUM_NETWORK;
    if (!list_admits(nbcxi_getenv("OMPI_MCA_btl"), btl_shm) ||
        !list_admits(nbcxi_getenv("UCX_TLS"), ucx_shm))
        return NBCXI_MEDIUM_UNKNOWN;
    return NBCXI_MEDIUM_MEMORY;
}

/* nbcx_comm_split (base/transport.h's split op): nbcx's private
 * communicator is split (a collective on it, next to the point-to-point
 * traffic of operations in flight, which MPI_THREAD_MULTIPLE allows), and
 * each part gets an MPI transport and a communicator on it. Every member
 * has its communicator, or none has: one that failed alone (out of
 * memory) must not leave the others with a communicator whose first
 * collective would hang, so the outcome is agreed over the parent. */
static int mpi_split(nbcxi_transport *t, struct nbcx_comm_s *c, int color,
                     int key, struct nbcx_comm_s **out)
{
    (void)c;
    MPI_Comm parent = nbcxi_mpi_comm_of(t), part = MPI_COMM_NULL;
    int rc = PMPI_Comm_split(parent,
                             color == NBCX_UNDEFINED ? MPI_UNDEFINED : color,
                             key, &part);
    if (rc != MPI_SUCCESS)
        return nbcxi_mpi_error(rc);
    int err = NBCX_SUCCESS;
    if (part != MPI_COMM_NULL) {
        PMPI_Comm_set_errhandler(part, MPI_ERRORS_RETURN);
        int rank, size;
        PMPI_Comm_rank(part, &rank);
        PMPI_Comm_size(part, &size);
        nbcxi_transport *tp;
        err = nbcxi_mpi_transport_create(part, &tp); /* owns part */
        if (err != NBCX_SUCCESS)
            PMPI_Comm_free(&part);
        else
            err = nbcxi_comm_create(rank, size, tp, out); /* takes tp */
    }
    int me, first = INT_MAX;
    PMPI_Comm_rank(parent, &me);
    int mine = err == NBCX_SUCCESS ? INT_MAX : me;
    rc = PMPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, parent);
    if (err == NBCX_SUCCESS && (rc != MPI_SUCCESS || first != INT_MAX)) {
        (*out)->magic = 0; /* new, unused: no cache, nothing in flight */
        nbcxi_comm_release(*out);
        *out = NULL;
        err = rc != MPI_SUCCESS
                  ? nbcxi_mpi_error(rc)
                  : nbcxi_error(NBCX_ERR_TRANSPORT, "nbcx_comm_split: rank "
                                "%d could not make its communicator", first);
    }
    return err;
}

int nbcxi_mpi_transport_create(MPI_Comm comm, nbcxi_transport **out)
{
    nbcxi_transport *t = calloc(1, sizeof *t);
    struct mpi_state *st = calloc(1, sizeof *st);
    int *ub = NULL, flag = 0;
    if (!t || !st) {
        free(t);
        free(st);
        return NBCX_ERR_NOMEM;
    }
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_guard);
    /* MPI_TAG_UB is an attribute of MPI_COMM_WORLD, valid for every
     * communicator; Open MPI 4.1 does not copy it to communicators made
     * by split, Cartesian or graph creation (without it nbcx had 8 tag
     * slots there instead of 2^16). */
    PMPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &flag);
    if (!flag || !ub)
        PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    st->comm = comm;
    t->ops = &mpi_ops;
    t->state = st;
    t->tag_ub = (flag && ub) ? *ub : 32767; /* the MPI minimum */
    t->one_node = false;
    t->medium = medium_of(comm, &t->one_node, &st->nodes);
    if (st->nodes) {
        int size = 0;
        PMPI_Comm_size(comm, &size);
        for (int r = 0; r < size; r++)
            t->nnodes += st->nodes[r] == r;
    }
    *out = t;
    return NBCX_SUCCESS;
}
