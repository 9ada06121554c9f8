/* nbcx-check: a run-time checker for programs rewritten by nbcx-transform.
 *
 * Preloaded (LD_PRELOAD) into an MPI program, it interposes the nonblocking
 * collectives through the PMPI profiling interface.  Each operation receives
 * into a private shadow buffer while the program's receive buffer is filled
 * with 0xff bytes (NaN as doubles, -1 as integers) until the operation's
 * MPI_Wait / MPI_Waitall: a read of the result before the wait computes with
 * poison, so the program's output differs from the original's.  At the wait the
 * checker verifies that the receive buffer still holds the poison (else: the
 * program wrote it while the operation was in flight) and that the send buffer
 * is unchanged since the start (else: the program wrote it), reports each
 * violation on stderr, then copies the result in (also at a successful
 * MPI_Test).  MPI_Finalize prints a summary and exits with status 3 if there
 * was a violation or an operation never completed.
 *
 * Persistent collectives are not interposed: build the transformed program with
 * -DNBCX_PERSISTENT=0 to check their nonblocking form.
 *
 * Build: mpicc -shared -fPIC -O1 -o libnbcx_check.so nbcx_check.c
 * Use:   LD_PRELOAD=./libnbcx_check.so mpiexec -n 2 ./prog
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXOPS 1024
#define POISON 0xff

struct op {
    int used;
    MPI_Request req;
    MPI_Request *reqp; /* where the program keeps it: completed requests may share a handle */
    const char *name;
    unsigned long serial;
    void *user; /* the program's receive buffer (start of its span) */
    void *shadow; /* what MPI receives into */
    size_t rlen;
    const void *sbuf; /* the program's send buffer and a copy */
    void *scopy;
    size_t slen;
};

static struct op ops[MAXOPS];
static unsigned long n_started, n_checked, n_violations, serial;

static int my_rank(void)
{
    int r = -1, init = 0;
    PMPI_Initialized(&init);
    if (init)
        PMPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

/* Bytes spanned by count elements of type t at buf: [buf + true_lb, +len). */
static size_t span(MPI_Datatype t, MPI_Aint count, MPI_Aint *lb_out)
{
    MPI_Aint lb, ext, tlb, text;
    PMPI_Type_get_extent(t, &lb, &ext);
    PMPI_Type_get_true_extent(t, &tlb, &text);
    *lb_out = tlb;
    if (count <= 0)
        return 0;
    return (size_t)((count - 1) * ext + text);
}

static int comm_size(MPI_Comm c)
{
    int n = 1, inter = 0;
    PMPI_Comm_test_inter(c, &inter);
    if (inter)
        PMPI_Comm_remote_size(c, &n);
    else
        PMPI_Comm_size(c, &n);
    return n;
}

static int comm_rank(MPI_Comm c)
{
    int r = 0;
    PMPI_Comm_rank(c, &r);
    return r;
}

static struct op *new_op(const char *name)
{
    for (int i = 0; i < MAXOPS; i++)
        if (!ops[i].used) {
            memset(&ops[i], 0, sizeof ops[i]);
            ops[i].used = 1;
            ops[i].name = name;
            ops[i].serial = ++serial;
            n_started++;
            return &ops[i];
        }
    fprintf(stderr, "nbcx-check: more than %d operations in flight\n", MAXOPS);
    PMPI_Abort(MPI_COMM_WORLD, 4);
    return NULL;
}

/* The receive buffer goes to a shadow (with its current content, for
 * MPI_IN_PLACE); the program's copy is poisoned.  Returns what MPI gets. */
static void *recv_shadow(struct op *o, void *buf, MPI_Datatype t, MPI_Aint count)
{
    MPI_Aint lb;
    size_t len = span(t, count, &lb);
    if (buf == NULL || buf == MPI_IN_PLACE || len == 0)
        return buf;
    char *shadow = malloc(len);
    if (shadow == NULL)
        return buf;
    o->user = (char *)buf + lb;
    o->rlen = len;
    o->shadow = shadow;
    memcpy(shadow, o->user, len);
    memset(o->user, POISON, len);
    return shadow - lb;
}

static void send_copy(struct op *o, const void *buf, MPI_Datatype t, MPI_Aint count)
{
    MPI_Aint lb;
    size_t len = span(t, count, &lb);
    if (buf == NULL || buf == MPI_IN_PLACE || len == 0)
        return;
    o->sbuf = (const char *)buf + lb;
    o->slen = len;
    o->scopy = malloc(len);
    if (o->scopy != NULL)
        memcpy(o->scopy, o->sbuf, len);
}

static void violation(struct op *o, const char *what)
{
    n_violations++;
    fprintf(stderr, "nbcx-check: rank %d: %s (operation #%lu): %s between its start and its wait\n",
            my_rank(), o->name, o->serial, what);
}

static void finish(struct op *o)
{
    n_checked++;
    if (o->shadow != NULL) {
        const unsigned char *u = o->user;
        for (size_t i = 0; i < o->rlen; i++)
            if (u[i] != POISON) {
                violation(o, "receive buffer written");
                break;
            }
        memcpy(o->user, o->shadow, o->rlen);
        free(o->shadow);
    }
    if (o->scopy != NULL) {
        if (memcmp(o->scopy, o->sbuf, o->slen) != 0)
            violation(o, "send buffer written");
        free(o->scopy);
    }
    o->used = 0;
}

static struct op *find(MPI_Request *p)
{
    if (*p == MPI_REQUEST_NULL)
        return NULL;
    for (int i = 0; i < MAXOPS; i++)
        if (ops[i].used && ops[i].reqp == p && ops[i].req == *p)
            return &ops[i];
    /* the request was copied elsewhere: the oldest operation with this handle */
    struct op *best = NULL;
    for (int i = 0; i < MAXOPS; i++)
        if (ops[i].used && ops[i].req == *p && (best == NULL || ops[i].serial < best->serial))
            best = &ops[i];
    return best;
}

static MPI_Aint sum_span(const int *counts, const int *displs, int n)
{
    MPI_Aint hi = 0;
    for (int i = 0; i < n; i++)
        if (counts[i] > 0 && (MPI_Aint)displs[i] + counts[i] > hi)
            hi = (MPI_Aint)displs[i] + counts[i];
    return hi;
}

#define DONE(o, rc, req)              \
    do {                              \
        if ((rc) == MPI_SUCCESS) {    \
            (o)->req = *(req);        \
            (o)->reqp = (req);        \
        } else                        \
            (o)->used = 0;            \
        return rc;                    \
    } while (0)

int MPI_Iallreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                   MPI_Request *req)
{
    struct op *o = new_op("MPI_Iallreduce");
    send_copy(o, s, t, n);
    void *rr = recv_shadow(o, r, t, n);
    int rc = PMPI_Iallreduce(s, rr, n, t, op, c, req);
    DONE(o, rc, req);
}

int MPI_Ireduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c,
                MPI_Request *req)
{
    struct op *o = new_op("MPI_Ireduce");
    send_copy(o, s, t, n);
    void *rr = comm_rank(c) == root ? recv_shadow(o, r, t, n) : r;
    int rc = PMPI_Ireduce(s, rr, n, t, op, root, c, req);
    DONE(o, rc, req);
}

int MPI_Iscan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
              MPI_Request *req)
{
    struct op *o = new_op("MPI_Iscan");
    send_copy(o, s, t, n);
    void *rr = recv_shadow(o, r, t, n);
    int rc = PMPI_Iscan(s, rr, n, t, op, c, req);
    DONE(o, rc, req);
}

int MPI_Iexscan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                MPI_Request *req)
{
    struct op *o = new_op("MPI_Iexscan");
    send_copy(o, s, t, n);
    void *rr = recv_shadow(o, r, t, n);
    int rc = PMPI_Iexscan(s, rr, n, t, op, c, req);
    DONE(o, rc, req);
}

int MPI_Ibcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *req)
{
    struct op *o = new_op("MPI_Ibcast");
    void *bb = b;
    if (comm_rank(c) == root)
        send_copy(o, b, t, n);
    else
        bb = recv_shadow(o, b, t, n);
    int rc = PMPI_Ibcast(bb, n, t, root, c, req);
    DONE(o, rc, req);
}

int MPI_Iallgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                   MPI_Comm c, MPI_Request *req)
{
    struct op *o = new_op("MPI_Iallgather");
    send_copy(o, s, st, sn);
    void *rr = recv_shadow(o, r, rt, (MPI_Aint)rn * comm_size(c));
    int rc = PMPI_Iallgather(s, sn, st, rr, rn, rt, c, req);
    DONE(o, rc, req);
}

int MPI_Iallgatherv(const void *s, int sn, MPI_Datatype st, void *r, const int rn[],
                    const int displs[], MPI_Datatype rt, MPI_Comm c, MPI_Request *req)
{
    struct op *o = new_op("MPI_Iallgatherv");
    send_copy(o, s, st, sn);
    void *rr = recv_shadow(o, r, rt, sum_span(rn, displs, comm_size(c)));
    int rc = PMPI_Iallgatherv(s, sn, st, rr, rn, displs, rt, c, req);
    DONE(o, rc, req);
}

int MPI_Igather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                int root, MPI_Comm c, MPI_Request *req)
{
    struct op *o = new_op("MPI_Igather");
    send_copy(o, s, st, sn);
    void *rr = comm_rank(c) == root ? recv_shadow(o, r, rt, (MPI_Aint)rn * comm_size(c)) : r;
    int rc = PMPI_Igather(s, sn, st, rr, rn, rt, root, c, req);
    DONE(o, rc, req);
}

int MPI_Igatherv(const void *s, int sn, MPI_Datatype st, void *r, const int rn[],
                 const int displs[], MPI_Datatype rt, int root, MPI_Comm c, MPI_Request *req)
{
    struct op *o = new_op("MPI_Igatherv");
    send_copy(o, s, st, sn);
    void *rr = comm_rank(c) == root ? recv_shadow(o, r, rt, sum_span(rn, displs, comm_size(c)))
                                    : r;
    int rc = PMPI_Igatherv(s, sn, st, rr, rn, displs, rt, root, c, req);
    DONE(o, rc, req);
}

int MPI_Iscatter(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                 int root, MPI_Comm c, MPI_Request *req)
{
    struct op *o = new_op("MPI_Iscatter");
    if (comm_rank(c) == root)
        send_copy(o, s, st, (MPI_Aint)sn * comm_size(c));
    void *rr = recv_shadow(o, r, rt, rn);
    int rc = PMPI_Iscatter(s, sn, st, rr, rn, rt, root, c, req);
    DONE(o, rc, req);
}

int MPI_Iscatterv(const void *s, const int sn[], const int displs[], MPI_Datatype st, void *r,
                  int rn, MPI_Datatype rt, int root, MPI_Comm c, MPI_Request *req)
{
    struct op *o = new_op("MPI_Iscatterv");
    if (comm_rank(c) == root)
        send_copy(o, s, st, sum_span(sn, displs, comm_size(c)));
    void *rr = recv_shadow(o, r, rt, rn);
    int rc = PMPI_Iscatterv(s, sn, displs, st, rr, rn, rt, root, c, req);
    DONE(o, rc, req);
}

int MPI_Ialltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                  MPI_Comm c, MPI_Request *req)
{
    struct op *o = new_op("MPI_Ialltoall");
    send_copy(o, s, st, (MPI_Aint)sn * comm_size(c));
    void *rr = recv_shadow(o, r, rt, (MPI_Aint)rn * comm_size(c));
    int rc = PMPI_Ialltoall(s, sn, st, rr, rn, rt, c, req);
    DONE(o, rc, req);
}

int MPI_Ireduce_scatter_block(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
                              MPI_Comm c, MPI_Request *req)
{
    struct op *o = new_op("MPI_Ireduce_scatter_block");
    send_copy(o, s, t, (MPI_Aint)n * comm_size(c));
    void *rr = recv_shadow(o, r, t, n);
    int rc = PMPI_Ireduce_scatter_block(s, rr, n, t, op, c, req);
    DONE(o, rc, req);
}

int MPI_Ibarrier(MPI_Comm c, MPI_Request *req)
{
    struct op *o = new_op("MPI_Ibarrier");
    int rc = PMPI_Ibarrier(c, req);
    DONE(o, rc, req);
}

int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
    struct op *o = find(req);
    int rc = PMPI_Wait(req, st);
    if (o != NULL)
        finish(o);
    return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
    struct op *o = find(req);
    int rc = PMPI_Test(req, flag, st);
    if (o != NULL && rc == MPI_SUCCESS && *flag)
        finish(o);
    return rc;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    struct op *few[64];
    struct op **found = n <= 64 ? few : malloc(sizeof(struct op *) * (size_t)n);
    if (found == NULL)
        return PMPI_Waitall(n, reqs, sts);
    for (int i = 0; i < n; i++)
        found[i] = find(&reqs[i]);
    int rc = PMPI_Waitall(n, reqs, sts);
    for (int i = 0; i < n; i++)
        if (found[i] != NULL)
            finish(found[i]);
    if (found != few)
        free(found);
    return rc;
}

int MPI_Finalize(void)
{
    int rank = my_rank();
    unsigned long pending = 0;
    for (int i = 0; i < MAXOPS; i++)
        pending += (unsigned long)ops[i].used;
    if (getenv("NBCX_CHECK_QUIET") == NULL || n_violations || pending)
        fprintf(stderr,
                "nbcx-check: rank %d: %lu nonblocking collectives, %lu checked at their wait, "
                "%lu violations, %lu never waited for\n",
                rank, n_started, n_checked, n_violations, pending);
    int rc = PMPI_Finalize();
    if (n_violations || pending)
        exit(3);
    return rc;
}
