/*
 * test_persistent.c - persistent collectives (nbcx_<op>_init, nbcx_start,
 * nbcx_startall, nbcx_request_free).
 *
 *   1. Every core collective, for several shapes (counts 0 to 1000, int,
 *      double and a derived type, several operations, every root, in-place
 *      allreduce), is planned once and started RESTARTS times with new
 *      input each time. After every run the result is compared with MPI's
 *      on the same input: with MPI's own persistent collective where the
 *      library has them (MPI 4, e.g. MPICH 4), else with the blocking one.
 *      The request must stay valid (inactive) after each wait.
 *   2. All kinds planned at once and run together with nbcx_startall,
 *      completed with nbcx_waitall, three times.
 *   3. Memory: a one-element allreduce restarted many times (100,000 on
 *      up to 2 ranks) must not make the process grow: the resident size
 *      after the last start may exceed the size after the first tenth by
 *      at most MEM_SLACK.
 *   4. Misuse: starting a request that is not persistent, or one already
 *      active; a duplicate in nbcx_startall (nothing may start); freeing
 *      an active request; bad arguments to an init (*req stays NULL).
 */
#include <unistd.h>

#include "mpicoll.h"

#define RESTARTS 4
#define MEM_SLACK (1024 * 1024) /* bytes of resident growth tolerated */

static struct mc_type t_int, t_double, t_contig;

static int plan(struct mc_coll *c, nbcx_comm comm)
{
    const void *s = c->in_place ? NBCX_IN_PLACE : c->s;
    nbcx_datatype t = c->t->nb;
    nbcx_op op = c->t->nops ? c->t->nb_op[c->op] : NBCX_OP_NULL;
    nbcx_request *req = &c->req;
    int n = c->count;
    switch (c->kind) {
    case MC_BARRIER: return nbcx_barrier_init(comm, req);
    case MC_BCAST: return nbcx_bcast_init(c->r, n, t, c->root, comm, req);
    case MC_REDUCE:
        return nbcx_reduce_init(s, c->r, n, t, op, c->root, comm, req);
    case MC_ALLREDUCE:
        return nbcx_allreduce_init(s, c->r, n, t, op, comm, req);
    case MC_GATHER:
        return nbcx_gather_init(s, n, t, c->r, n, t, c->root, comm, req);
    case MC_SCATTER:
        return nbcx_scatter_init(s, n, t, c->r, n, t, c->root, comm, req);
    case MC_ALLGATHER:
        return nbcx_allgather_init(s, n, t, c->r, n, t, comm, req);
    case MC_ALLTOALL:
        return nbcx_alltoall_init(s, n, t, c->r, n, t, comm, req);
    default: return NBCX_ERR_INTERN;
    }
}

#if MPI_VERSION >= 4
/* MPI's own persistent collective on the same input, into r_ref. */
static int native_persistent(struct mc_coll *c, MPI_Comm w)
{
    void *s = c->in_place ? MPI_IN_PLACE : (void *)c->s;
    MPI_Datatype t = c->t->mpi;
    MPI_Op op = c->t->nops ? c->t->mpi_op[c->op] : MPI_OP_NULL;
    MPI_Info i = MPI_INFO_NULL;
    MPI_Request r = MPI_REQUEST_NULL;
    int n = c->count, rc;
    switch (c->kind) {
    case MC_BARRIER: rc = MPI_Barrier_init(w, i, &r); break;
    case MC_BCAST: rc = MPI_Bcast_init(c->r_ref, n, t, c->root, w, i, &r);
        break;
    case MC_REDUCE:
        rc = MPI_Reduce_init(s, c->r_ref, n, t, op, c->root, w, i, &r);
        break;
    case MC_ALLREDUCE:
        rc = MPI_Allreduce_init(s, c->r_ref, n, t, op, w, i, &r);
        break;
    case MC_GATHER:
        rc = MPI_Gather_init(s, n, t, c->r_ref, n, t, c->root, w, i, &r);
        break;
    case MC_SCATTER:
        rc = MPI_Scatter_init(s, n, t, c->r_ref, n, t, c->root, w, i, &r);
        break;
    case MC_ALLGATHER:
        rc = MPI_Allgather_init(s, n, t, c->r_ref, n, t, w, i, &r);
        break;
    case MC_ALLTOALL:
        rc = MPI_Alltoall_init(s, n, t, c->r_ref, n, t, w, i, &r);
        break;
    default: return MPI_ERR_OTHER;
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Start(&r);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (r != MPI_REQUEST_NULL)
        MPI_Request_free(&r);
    return rc;
}
#endif

/* Compares c's result with MPI's on the same input (see the top). */
static void check(struct mc_coll *c, const char *what, int i)
{
#if MPI_VERSION >= 4
    /* In place, r_ref must start as r's input did: mc_refill keeps them
     * equal until nbcx runs. */
    bool significant = !((c->kind == MC_REDUCE || c->kind == MC_GATHER) &&
                         mt_rank != c->root);
    if (c->kind == MC_BARRIER)
        return;
    if (native_persistent(c, MPI_COMM_WORLD) != MPI_SUCCESS)
        mt_fail("%s: MPI's persistent %s failed", what,
                mc_kind_name[c->kind]);
    if (significant && memcmp(c->r, c->r_ref, c->rbytes) != 0)
        mt_fail("%s: collective #%d (%s count=%d %s root=%d): result "
                "differs from MPI's persistent collective", what, i,
                mc_kind_name[c->kind], c->count, c->t->name, c->root);
#else
    mc_check(c, MPI_COMM_WORLD, mt_rank, what, i);
#endif
}

/* New input for the next start, in the buffers the request was planned
 * on (their addresses must not change). */
static void refill(struct mc_coll *c, uint64_t *data)
{
    mc_fill(c->s, c->sbytes, c->t->dbl, data);
    mc_fill(c->r, c->rbytes, c->t->dbl, data);
    memcpy(c->r_ref, c->r, c->rbytes);
}

static void expect_inactive(nbcx_request *req, const char *what)
{
    int flag = 0;
    if (*req == NBCX_REQUEST_NULL) {
        mt_fail("%s: a persistent request became NULL on completion", what);
        return;
    }
    int rc = nbcx_test(req, &flag);
    if (rc != NBCX_SUCCESS || !flag || *req == NBCX_REQUEST_NULL)
        mt_fail("%s: test of an inactive request gave rc=%d flag=%d", what,
                rc, flag);
    if ((rc = nbcx_wait(req)) != NBCX_SUCCESS)
        mt_fail("%s: wait on an inactive request gave %d", what, rc);
}

/* Part 1: every kind, several shapes, restarted with new input. */
static void restarts(nbcx_comm comm)
{
    static const int counts[] = {0, 1, 7, 1000};
    const struct mc_type *types[] = {&t_int, &t_double, &t_contig};
    char what[160];
    int i = 0;
    for (int k = 0; k < MC_NKINDS; k++)
        for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++)
            for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
                const struct mc_type *t = types[ti];
                bool reduces = k == MC_REDUCE || k == MC_ALLREDUCE;
                if (reduces && !t->nops)
                    continue;
                if (k == MC_BARRIER && (ci > 0 || ti > 0))
                    continue;
                uint64_t data = mt_seed((uint64_t)i, mt_rank + 1, 5);
                struct mc_coll c;
                int root = i % mt_size;
                mc_setup(&c, (enum mc_kind)k, counts[ci], root, t,
                         i % (t->nops ? t->nops : 1), i % 3 == 0, mt_size,
                         &data);
                snprintf(what, sizeof what, "persistent %s count=%d %s",
                         mc_kind_name[k], counts[ci], t->name);
                mt_watch("%s: init", what);
                int rc = plan(&c, comm);
                if (rc != NBCX_SUCCESS) {
                    fprintf(stderr, "[rank %d] %s: init failed: %s\n",
                            mt_rank, what, nbcx_error_string(rc));
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                expect_inactive(&c.req, what);
                for (int run = 0; run < RESTARTS; run++) {
                    if (run > 0)
                        refill(&c, &data);
                    mt_watch("%s: start %d", what, run);
                    MT_OK(nbcx_start(&c.req));
                    if ((rc = nbcx_wait(&c.req)) != NBCX_SUCCESS)
                        mt_fail("%s: run %d: wait gave %s", what, run,
                                nbcx_error_string(rc));
                    mt_watch("%s: check %d", what, run);
                    check(&c, what, i);
                    expect_inactive(&c.req, what);
                }
                MT_OK(nbcx_request_free(&c.req));
                if (c.req != NBCX_REQUEST_NULL)
                    mt_fail("%s: request_free did not reset the request",
                            what);
                mc_free(&c);
                i++;
            }
}

/* Part 2: every kind planned at once, run together. */
static void startall(nbcx_comm comm)
{
    struct mc_coll cs[MC_NKINDS];
    nbcx_request reqs[MC_NKINDS];
    for (int k = 0; k < MC_NKINDS; k++) {
        uint64_t data = mt_seed((uint64_t)k, mt_rank + 1, 17);
        mc_setup(&cs[k], (enum mc_kind)k, 5 + k, k % mt_size, &t_int,
                 k % t_int.nops, false, mt_size, &data);
        MT_OK(plan(&cs[k], comm));
        reqs[k] = cs[k].req;
    }
    for (int run = 0; run < 3; run++) {
        mt_watch("startall: run %d", run);
        for (int k = 0; run > 0 && k < MC_NKINDS; k++) {
            uint64_t data = mt_seed((uint64_t)(k + 100 * run), mt_rank, 3);
            refill(&cs[k], &data);
        }
        MT_OK(nbcx_startall(MC_NKINDS, reqs));
        int rc = nbcx_waitall(MC_NKINDS, reqs);
        if (rc != NBCX_SUCCESS)
            mt_fail("startall: waitall gave %s", nbcx_error_string(rc));
        for (int k = 0; k < MC_NKINDS; k++) {
            if (reqs[k] != cs[k].req)
                mt_fail("startall: waitall changed persistent request %d",
                        k);
            check(&cs[k], "startall", k);
        }
    }
    for (int k = 0; k < MC_NKINDS; k++) {
        MT_OK(nbcx_request_free(&reqs[k]));
        mc_free(&cs[k]);
    }
}

static long resident_bytes(void)
{
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld %ld", &pages, &rss) != 2)
        rss = -1;
    if (f)
        fclose(f);
    return rss < 0 ? -1 : rss * sysconf(_SC_PAGESIZE);
}

/* Part 3: restarts must not grow memory. */
static void memory(nbcx_comm comm)
{
    /* 100,000 on up to 2 ranks; fewer where more ranks than cores make
     * every collective slow (the growth per start is what matters). */
    const int n = mt_size <= 2 ? 100000 : 5000;
    double in = 0, out = 0;
    nbcx_request req;
    long early = 0;
    MT_OK(nbcx_allreduce_init(&in, &out, 1, NBCX_DOUBLE, NBCX_SUM, comm,
                              &req));
    mt_watch("memory: %d restarts", n);
    for (int k = 0; k < n; k++) {
        in = mt_rank + k % 7;
        MT_OK(nbcx_start(&req));
        MT_OK(nbcx_wait(&req));
        double want = (double)mt_size * (mt_size - 1) / 2 +
                      (double)mt_size * (k % 7);
        if (out != want) {
            mt_fail("memory: restart %d: allreduce gave %g, expected %g", k,
                    out, want);
            break;
        }
        if (k == n / 10)
            early = resident_bytes();
    }
    long late = resident_bytes();
    MT_OK(nbcx_request_free(&req));
    if (early < 0 || late < 0)
        mt_fail("memory: cannot read /proc/self/statm");
    else if (late - early > MEM_SLACK)
        mt_fail("memory: resident size grew by %ld bytes between restart "
                "%d and %d", late - early, n / 10, n);
    if (mt_rank == 0 && getenv("NBCX_TEST_VERBOSE"))
        printf("  memory: %d restarts, resident %ld -> %ld bytes\n", n,
               early, late);
}

/* Part 4: misuse gets an error and changes nothing. */
static void misuse(nbcx_comm comm)
{
    int x = mt_rank, y = -1, rc;
    nbcx_request a = NBCX_REQUEST_NULL, b = NBCX_REQUEST_NULL, nb;

    mt_watch("misuse");
    /* Bad arguments: nothing planned. */
    if ((rc = nbcx_bcast_init(&x, -1, NBCX_INT32, 0, comm, &a)) !=
            NBCX_ERR_COUNT || a != NBCX_REQUEST_NULL)
        mt_fail("bcast_init with count -1: rc=%d", rc);
    if ((rc = nbcx_bcast_init(&x, 1, NBCX_INT32, mt_size, comm, &a)) !=
            NBCX_ERR_ROOT || a != NBCX_REQUEST_NULL)
        mt_fail("bcast_init with root = size: rc=%d", rc);
    if ((rc = nbcx_start(NULL)) != NBCX_ERR_REQUEST)
        mt_fail("nbcx_start(NULL) gave %d", rc);
    if ((rc = nbcx_start(&a)) != NBCX_ERR_REQUEST)
        mt_fail("nbcx_start of a NULL request gave %d", rc);
    if ((rc = nbcx_startall(-1, &a)) != NBCX_ERR_REQUEST)
        mt_fail("nbcx_startall(-1) gave %d", rc);

    /* A nonblocking request cannot be started. */
    MT_OK(nbcx_iallreduce(&x, &y, 1, NBCX_INT32, NBCX_SUM, comm, &nb));
    if ((rc = nbcx_start(&nb)) != NBCX_ERR_REQUEST)
        mt_fail("nbcx_start of a nonblocking request gave %d", rc);
    MT_OK(nbcx_wait(&nb));
    if (y != mt_size * (mt_size - 1) / 2)
        mt_fail("iallreduce next to persistent misuse gave %d", y);

    MT_OK(nbcx_allreduce_init(&x, &y, 1, NBCX_INT32, NBCX_SUM, comm, &a));
    MT_OK(nbcx_barrier_init(comm, &b));
    /* A duplicate in startall: an error, and neither is started. */
    nbcx_request dup[3] = {a, b, a};
    if ((rc = nbcx_startall(3, dup)) != NBCX_ERR_REQUEST)
        mt_fail("nbcx_startall with a duplicate gave %d", rc);
    int flag = 0;
    MT_OK(nbcx_testall(3, dup, &flag));
    if (!flag)
        mt_fail("a failed nbcx_startall left a request active");

    /* Started: a second start and a free are refused, wait is fine. */
    y = -1;
    MT_OK(nbcx_start(&a));
    if ((rc = nbcx_start(&a)) != NBCX_ERR_REQUEST)
        mt_fail("starting an active request gave %d", rc);
    if ((rc = nbcx_request_free(&a)) != NBCX_ERR_REQUEST ||
        a == NBCX_REQUEST_NULL)
        mt_fail("freeing an active request gave %d", rc);
    MT_OK(nbcx_wait(&a));
    if (y != mt_size * (mt_size - 1) / 2)
        mt_fail("persistent allreduce after misuse gave %d", y);
    MT_OK(nbcx_request_free(&a));
    MT_OK(nbcx_request_free(&b));
    if ((rc = nbcx_request_free(&a)) != NBCX_SUCCESS)
        mt_fail("nbcx_request_free of NULL gave %d", rc);
}

int main(int argc, char **argv)
{
    nbcx_comm comm = NBCX_COMM_NULL;
    mt_init(&argc, &argv);
    double t0 = MPI_Wtime();
    mt_watch("setup");
    mc_type_int(&t_int);
    mc_type_double(&t_double);
    mc_type_contig(&t_contig, 3);
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
    restarts(comm);
    startall(comm);
    misuse(comm);
    memory(comm);
    mt_watch("teardown");
    MT_OK(nbcx_comm_free(&comm));
    mc_type_free(&t_contig);
    return mt_finish("test_persistent", t0);
}
