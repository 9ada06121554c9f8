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
 *   1b. The same for gatherv, scatterv, allgatherv, alltoallv, alltoallw,
 *      reduce_scatter, reduce_scatter_block, scan and exscan (part 5):
 *      int, double and contig(3,int) (reductions: int and double with
 *      each of their operations), block sizes drawn per pair of ranks
 *      (up to 0, 3 and 40 elements, some zero), blocks in reverse order
 *      with gaps, in place and not; receive buffers get new contents
 *      before every start as well, and every byte MPI leaves alone must
 *      stay (gaps included). The MPI library's known deviations are
 *      avoided as in test_vcollectives.c (MPICH 4.0.2's one-rank
 *      allgatherv, Open MPI 4.1.4's one-rank alltoallw: there the
 *      reference is the one message to itself); exscan's rank 0 must be
 *      left untouched.
 *   1c. The same for the five neighbourhood collectives (part 6) on a
 *      distributed graph without repeated edges and with in-degree =
 *      out-degree (the ring both ways; one way on 2 ranks; the edge to
 *      itself on 1), int and contig(3,int), blocks per edge up to 0, 3
 *      and 20 elements in reverse order with gaps.
 *   2. All kinds planned at once and run together with nbcx_startall,
 *      completed with nbcx_waitall, three times (the core kinds, then
 *      those of 1b, half of them in place).
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

/* c's persistent request (mpicoll.h). */
static int plan(struct mc_coll *c, nbcx_comm comm)
{
    return mc_call(c, comm, true);
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

/* The init of a persistent request returned rc: the job ends if it
 * failed (the other ranks could never complete it); the new request
 * must be inactive. */
static void expect_planned(int rc, nbcx_request *req, const char *what)
{
    if (rc != NBCX_SUCCESS) {
        fprintf(stderr, "[rank %d] %s: init failed: %s\n", mt_rank, what,
                nbcx_error_string(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    expect_inactive(req, what);
}

/* Run `run` of a persistent request: start and wait, which must
 * succeed; the watchdog then watches the check that follows. */
static void start_and_wait(nbcx_request *req, const char *what, int run)
{
    int rc;
    mt_watch("%s: start %d", what, run);
    MT_OK(nbcx_start(req));
    if ((rc = nbcx_wait(req)) != NBCX_SUCCESS)
        mt_fail("%s: run %d: wait gave %s", what, run,
                nbcx_error_string(rc));
    mt_watch("%s: check %d", what, run);
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
                expect_planned(plan(&c, comm), &c.req, what);
                for (int run = 0; run < RESTARTS; run++) {
                    if (run > 0)
                        refill(&c, &data);
                    start_and_wait(&c.req, what, run);
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
    long early = 0, last = 0, step = 0; /* step: the largest growth in one
                                          tenth of the restarts */
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
            early = last = resident_bytes();
        else if (k > n / 10 && k % (n / 10) == 0) {
            long now = resident_bytes();
            step = now - last > step ? now - last : step;
            last = now;
        }
    }
    long late = resident_bytes();
    step = late - last > step ? late - last : step;
    MT_OK(nbcx_request_free(&req));
    /* A leak grows at every restart, so in every tenth of them; a single
     * step is something that settles once, at a moment that depends on
     * scheduling: auto mode's progress thread loading hwloc's topology
     * (about 3 MB) whenever it first gets a core, which on a loaded
     * machine came after restart n/10 (2 of 8 runs at load 4). So growth
     * of which one tenth holds most is not counted as a leak. */
    if (early < 0 || late < 0)
        mt_fail("memory: cannot read /proc/self/statm");
    else if (late - early > MEM_SLACK && step < (late - early) * 4 / 5)
        mt_fail("memory: resident size grew by %ld bytes between restart "
                "%d and %d (at most %ld in one tenth)", late - early, n / 10,
                n, step);
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

/* ------------------------------------------------------------------ */
/* Part 5: the vector, reduce-scatter and scan collectives             */
/* ------------------------------------------------------------------ */

enum vkind { V_GATHERV, V_SCATTERV, V_ALLGATHERV, V_ALLTOALLV, V_ALLTOALLW,
             V_REDUCE_SCATTER, V_REDUCE_SCATTER_BLOCK, V_SCAN, V_EXSCAN,
             V_NKINDS };
static const char *const v_name[V_NKINDS] = {
    "gatherv", "scatterv", "allgatherv", "alltoallv", "alltoallw",
    "reduce_scatter", "reduce_scatter_block", "scan", "exscan"};

static bool v_reduces(enum vkind k) { return k >= V_REDUCE_SCATTER; }

static bool mpich; /* the library is MPICH (see main) */

/* One case: its shape (the same on every rank), its counts and
 * displacements (elements; bytes for alltoallw, whose types are all t)
 * and its buffers: s the input, r nbcx's output, r_ref MPI's, r_before
 * r as it was before the run. */
struct vcoll {
    enum vkind kind;
    const struct mc_type *t;
    int op, root, maxc;
    bool in_place;
    long id;
    int *sc, *sd, *rc, *rd;
    MPI_Datatype *mtypes;
    nbcx_datatype *ntypes;
    int scount, rcount, n; /* n: input elements of a reduction */
    size_t sbytes, rbytes, cmp_bytes; /* cmp_bytes: r compared with MPI's */
    unsigned char *s, *r, *r_ref, *r_before;
    nbcx_request req;
};

/* The block size of the pair (a, b), the same on every rank: 0 for about
 * one pair in four, else 1..maxc. */
static int v_units(const struct vcoll *v, int a, int b)
{
    uint64_t h = mt_seed((uint64_t)v->id, (uint64_t)a + 1, (uint64_t)b + 1);
    if (v->maxc == 0 || h % 4 == 0)
        return 0;
    return 1 + (int)((h >> 8) % (uint64_t)v->maxc);
}

/* Blocks in reverse rank order, one element of gap before each, so a
 * wrong displacement shows. Returns the elements of the buffer. */
static int v_layout(int p, const int *counts, int *displs)
{
    int pos = 1;
    for (int i = p - 1; i >= 0; i--) {
        displs[i] = pos;
        pos += counts[i] + 1;
    }
    return pos;
}

static void v_setup(struct vcoll *v)
{
    const int p = mt_size, me = mt_rank, root = v->root;
    const bool ip = v->in_place, at_root = me == root;
    const size_t es = v->t->size;
    size_t sn = 0, rn = 0; /* elements */
    v->sc = calloc((size_t)p, sizeof(int));
    v->sd = calloc((size_t)p, sizeof(int));
    v->rc = calloc((size_t)p, sizeof(int));
    v->rd = calloc((size_t)p, sizeof(int));
    v->mtypes = malloc(sizeof(MPI_Datatype) * (size_t)p);
    v->ntypes = malloc(sizeof(nbcx_datatype) * (size_t)p);
    if (!v->sc || !v->sd || !v->rc || !v->rd || !v->mtypes || !v->ntypes)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < p; i++) {
        v->mtypes[i] = v->t->mpi;
        v->ntypes[i] = v->t->nb;
    }
    switch (v->kind) {
    case V_GATHERV:
        v->scount = v_units(v, me, 0);
        sn = (size_t)v->scount;
        if (at_root) {
            for (int i = 0; i < p; i++)
                v->rc[i] = v_units(v, i, 0);
            rn = (size_t)v_layout(p, v->rc, v->rd);
        }
        break;
    case V_SCATTERV:
        v->rcount = v_units(v, root, me);
        rn = (size_t)v->rcount;
        if (at_root) {
            for (int i = 0; i < p; i++)
                v->sc[i] = v_units(v, root, i);
            sn = (size_t)v_layout(p, v->sc, v->sd);
        }
        break;
    case V_ALLGATHERV:
        v->scount = v_units(v, me, 0);
        sn = (size_t)v->scount;
        for (int i = 0; i < p; i++)
            v->rc[i] = v_units(v, i, 0);
        rn = (size_t)v_layout(p, v->rc, v->rd);
        break;
    case V_ALLTOALLV:
    case V_ALLTOALLW: /* in place the sizes are symmetric */
        for (int j = 0; j < p; j++) {
            int lo = me < j ? me : j, hi = me < j ? j : me;
            v->sc[j] = ip ? v_units(v, lo, hi) : v_units(v, me, j);
            v->rc[j] = ip ? v_units(v, lo, hi) : v_units(v, j, me);
        }
        sn = (size_t)v_layout(p, v->sc, v->sd);
        rn = (size_t)v_layout(p, v->rc, v->rd);
        if (v->kind == V_ALLTOALLW)
            for (int j = 0; j < p; j++) {
                v->sd[j] *= (int)es;
                v->rd[j] *= (int)es;
            }
        break;
    case V_REDUCE_SCATTER:
        v->n = 0;
        for (int i = 0; i < p; i++)
            v->n += v->rc[i] = v_units(v, i, 0);
        sn = (size_t)v->n;
        rn = (size_t)(ip ? v->n : v->rc[me]);
        v->cmp_bytes = (size_t)v->rc[me] * es;
        break;
    case V_REDUCE_SCATTER_BLOCK:
        v->n = v->maxc * p;
        sn = (size_t)v->n;
        rn = (size_t)(ip ? v->n : v->maxc);
        v->cmp_bytes = (size_t)v->maxc * es;
        break;
    default: /* scan, exscan */
        v->n = v->maxc;
        sn = rn = (size_t)v->n;
        break;
    }
    /* In place the input is in r: no s (at the root only for the rooted
     * ones). */
    bool no_s = ip && (v->kind != V_GATHERV || at_root) &&
                v->kind != V_SCATTERV;
    v->sbytes = no_s ? 0 : sn * es;
    v->rbytes = (ip && v->kind == V_SCATTERV && at_root) ? 0 : rn * es;
    if (!v_reduces(v->kind) || v->kind == V_SCAN || v->kind == V_EXSCAN)
        v->cmp_bytes = v->rbytes;
    v->s = mc_alloc(v->sbytes);
    v->r = mc_alloc(v->rbytes);
    v->r_ref = mc_alloc(v->rbytes);
    v->r_before = mc_alloc(v->rbytes);
    v->req = NBCX_REQUEST_NULL;
}

static void v_free(struct vcoll *v)
{
    free(v->sc);
    free(v->sd);
    free(v->rc);
    free(v->rd);
    free(v->mtypes);
    free(v->ntypes);
    free(v->s);
    free(v->r);
    free(v->r_ref);
    free(v->r_before);
}

/* New input (and new contents of r, which in place is input too) for
 * the next start, in the buffers the request was planned on. */
static void v_refill(struct vcoll *v, uint64_t *data)
{
    mc_fill(v->s, v->sbytes, v->t->dbl, data);
    mc_fill(v->r, v->rbytes, v->t->dbl, data);
    memcpy(v->r_ref, v->r, v->rbytes);
    memcpy(v->r_before, v->r, v->rbytes);
}

static int v_plan(struct vcoll *v, nbcx_comm comm)
{
    const bool ip = v->in_place, at_root = mt_rank == v->root;
    const nbcx_datatype t = v->t->nb, tnull = NBCX_DATATYPE_NULL;
    const nbcx_op op = v->t->nops ? v->t->nb_op[v->op] : NBCX_OP_NULL;
    const void *s = ip ? NBCX_IN_PLACE : v->s;
    nbcx_request *req = &v->req;
    switch (v->kind) {
    case V_GATHERV:
        s = ip && at_root ? NBCX_IN_PLACE : v->s;
        return nbcx_gatherv_init(s, s == NBCX_IN_PLACE ? -1 : v->scount,
                                 s == NBCX_IN_PLACE ? tnull : t, v->r,
                                 at_root ? v->rc : NULL,
                                 at_root ? v->rd : NULL,
                                 at_root ? t : tnull, v->root, comm, req);
    case V_SCATTERV: {
        void *r = ip && at_root ? NBCX_IN_PLACE : v->r;
        return nbcx_scatterv_init(v->s, at_root ? v->sc : NULL,
                                  at_root ? v->sd : NULL,
                                  at_root ? t : tnull, r,
                                  r == NBCX_IN_PLACE ? -1 : v->rcount,
                                  r == NBCX_IN_PLACE ? tnull : t, v->root,
                                  comm, req);
    }
    case V_ALLGATHERV:
        return nbcx_allgatherv_init(s, ip ? -1 : v->scount, ip ? tnull : t,
                                    v->r, v->rc, v->rd, t, comm, req);
    case V_ALLTOALLV:
        return nbcx_alltoallv_init(s, ip ? NULL : v->sc, ip ? NULL : v->sd,
                                   ip ? tnull : t, v->r, v->rc, v->rd, t,
                                   comm, req);
    case V_ALLTOALLW:
        return nbcx_alltoallw_init(s, ip ? NULL : v->sc, ip ? NULL : v->sd,
                                   ip ? NULL : v->ntypes, v->r, v->rc, v->rd,
                                   v->ntypes, comm, req);
    case V_REDUCE_SCATTER:
        return nbcx_reduce_scatter_init(s, v->r, v->rc, t, op, comm, req);
    case V_REDUCE_SCATTER_BLOCK:
        return nbcx_reduce_scatter_block_init(s, v->r, v->maxc, t, op, comm,
                                              req);
    case V_SCAN: return nbcx_scan_init(s, v->r, v->n, t, op, comm, req);
    case V_EXSCAN: return nbcx_exscan_init(s, v->r, v->n, t, op, comm, req);
    default: return NBCX_ERR_INTERN;
    }
}

/* MPI's collective on the same input, into r_ref: its persistent form,
 * made for this one run, where the library has them (MPI 4), else the
 * blocking one. */
#if MPI_VERSION >= 4
#define V_MPI(name, ...)                                                     \
    ((rc = MPI_##name##_init(__VA_ARGS__, w, MPI_INFO_NULL, &req)) !=        \
             MPI_SUCCESS                                                     \
         ? rc                                                                \
     : (rc = MPI_Start(&req)) != MPI_SUCCESS                                 \
         ? rc                                                                \
         : MPI_Wait(&req, MPI_STATUS_IGNORE))
#else
#define V_MPI(name, ...) MPI_##name(__VA_ARGS__, w)
#endif

static int v_reference(struct vcoll *v, MPI_Comm w)
{
    const bool ip = v->in_place, at_root = mt_rank == v->root;
    const int p = mt_size;
    const MPI_Datatype t = v->t->mpi;
    const MPI_Op op = v->t->nops ? v->t->mpi_op[v->op] : MPI_OP_NULL;
    void *s = ip ? MPI_IN_PLACE : v->s, *r = v->r_ref;
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS;
    switch (v->kind) {
    case V_GATHERV:
        s = ip && at_root ? MPI_IN_PLACE : v->s;
        rc = V_MPI(Gatherv, s, v->scount, t, r, v->rc, v->rd, t, v->root);
        break;
    case V_SCATTERV:
        r = ip && at_root ? MPI_IN_PLACE : v->r_ref;
        rc = V_MPI(Scatterv, v->s, v->sc, v->sd, t, r, v->rcount, t,
                   v->root);
        break;
    case V_ALLGATHERV:
        if (p == 1 && mpich && !ip)
            /* MPICH 4.0.2's MPI_Allgatherv on one rank ignores displs
             * (test_vcollectives.c): the one message to itself */
            rc = MPI_Sendrecv(v->s, v->scount, t, 0, 0,
                              v->r_ref + (size_t)v->rd[0] * v->t->size,
                              v->rc[0], t, 0, 0, MPI_COMM_SELF,
                              MPI_STATUS_IGNORE);
        else
            rc = V_MPI(Allgatherv, s, v->scount, t, r, v->rc, v->rd, t);
        break;
    case V_ALLTOALLV:
        rc = V_MPI(Alltoallv, s, v->sc, v->sd, t, r, v->rc, v->rd, t);
        break;
    case V_ALLTOALLW:
        if (p == 1) {
            /* Open MPI 4.1.4's MPI_Alltoallw on one rank takes the byte
             * displacements for element displacements
             * (test_vcollectives.c): the one message to itself; in place
             * the data stays where it is. */
            if (!ip)
                rc = MPI_Sendrecv(v->s + v->sd[0], v->sc[0], t, 0, 0,
                                  v->r_ref + v->rd[0], v->rc[0], t, 0, 0,
                                  MPI_COMM_SELF, MPI_STATUS_IGNORE);
        } else {
            rc = V_MPI(Alltoallw, s, v->sc, v->sd, v->mtypes, r, v->rc,
                       v->rd, v->mtypes);
        }
        break;
    case V_REDUCE_SCATTER:
        rc = V_MPI(Reduce_scatter, s, r, v->rc, t, op);
        break;
    case V_REDUCE_SCATTER_BLOCK:
        rc = V_MPI(Reduce_scatter_block, s, r, v->maxc, t, op);
        break;
    case V_SCAN: rc = V_MPI(Scan, s, r, v->n, t, op); break;
    case V_EXSCAN: rc = V_MPI(Exscan, s, r, v->n, t, op); break;
    default: rc = MPI_ERR_OTHER; break;
    }
    if (req != MPI_REQUEST_NULL)
        MPI_Request_free(&req);
    return rc;
}

static void v_check(struct vcoll *v, const char *what, int run)
{
    if (v_reference(v, MPI_COMM_WORLD) != MPI_SUCCESS) {
        mt_fail("%s: run %d: MPI's %s failed", what, run, v_name[v->kind]);
        return;
    }
    if (v->kind == V_EXSCAN && mt_rank == 0) {
        /* MPI leaves it undefined; nbcx leaves it alone */
        if (memcmp(v->r, v->r_before, v->rbytes) != 0)
            mt_fail("%s: run %d: nbcx wrote rank 0's recvbuf", what, run);
        return;
    }
    if (memcmp(v->r, v->r_ref, v->cmp_bytes) != 0)
        mt_fail("%s: run %d: result differs from MPI's %s", what, run,
#if MPI_VERSION >= 4
                "persistent collective"
#else
                "blocking collective"
#endif
        );
}

/* Every kind with int, double and contig(3,int) (reductions: the types
 * with operations), block sizes up to 0, 3 and 40, in place and not
 * (gatherv, scatterv: at the root), planned once and restarted RESTARTS
 * times with new input; every run compared with MPI's. */
static void vrestarts(nbcx_comm comm)
{
    static const int maxcs[] = {0, 3, 40};
    const struct mc_type *types[] = {&t_int, &t_double, &t_contig};
    char what[200];
    long id = 0;
    for (int k = 0; k < V_NKINDS; k++)
        for (size_t mi = 0; mi < sizeof maxcs / sizeof *maxcs; mi++)
            for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++)
                for (int ip = 0; ip < 2; ip++) {
                    const struct mc_type *t = types[ti];
                    if (v_reduces((enum vkind)k) && !t->nops)
                        continue;
                    struct vcoll v;
                    memset(&v, 0, sizeof v);
                    v.kind = (enum vkind)k;
                    v.t = t;
                    v.maxc = maxcs[mi];
                    v.in_place = ip == 1;
                    v.id = id;
                    v.op = t->nops ? (int)(id % t->nops) : 0;
                    v.root = (int)(id % mt_size);
                    id++;
                    v_setup(&v);
                    snprintf(what, sizeof what,
                             "persistent %s maxcount=%d %s%s%s root=%d",
                             v_name[k], v.maxc, t->name,
                             t->nops ? " op=" : "",
                             t->nops ? t->op_name[v.op] : "", v.root);
                    if (v.in_place)
                        strcat(what, " in place");
                    uint64_t data = mt_seed((uint64_t)id, mt_rank + 1, 23);
                    v_refill(&v, &data);
                    mt_watch("%s: init", what);
                    expect_planned(v_plan(&v, comm), &v.req, what);
                    for (int run = 0; run < RESTARTS; run++) {
                        if (run > 0)
                            v_refill(&v, &data);
                        start_and_wait(&v.req, what, run);
                        v_check(&v, what, run);
                        expect_inactive(&v.req, what);
                    }
                    MT_OK(nbcx_request_free(&v.req));
                    v_free(&v);
                }
    mt_unwatch();
}

/* Part 2 for the kinds of part 5: all planned at once (int, blocks of
 * up to 3 elements, the even ones in place), run together with
 * nbcx_startall three times with new contents, each compared with MPI's
 * after nbcx_waitall. */
static void vstartall(nbcx_comm comm)
{
    struct vcoll vs[V_NKINDS];
    nbcx_request reqs[V_NKINDS];
    uint64_t data[V_NKINDS];
    for (int k = 0; k < V_NKINDS; k++) {
        struct vcoll *v = &vs[k];
        memset(v, 0, sizeof *v);
        v->kind = (enum vkind)k;
        v->t = &t_int;
        v->maxc = 3;
        v->in_place = k % 2 == 0;
        v->id = 1000 + k;
        v->op = k % t_int.nops;
        v->root = k % mt_size;
        v_setup(v);
        data[k] = mt_seed((uint64_t)k, mt_rank + 1, 31);
        v_refill(v, &data[k]);
        MT_OK(v_plan(v, comm));
        reqs[k] = v->req;
    }
    for (int run = 0; run < 3; run++) {
        mt_watch("vstartall: run %d", run);
        for (int k = 0; run > 0 && k < V_NKINDS; k++)
            v_refill(&vs[k], &data[k]);
        MT_OK(nbcx_startall(V_NKINDS, reqs));
        int rc = nbcx_waitall(V_NKINDS, reqs);
        if (rc != NBCX_SUCCESS)
            mt_fail("vstartall: waitall gave %s", nbcx_error_string(rc));
        for (int k = 0; k < V_NKINDS; k++) {
            if (reqs[k] != vs[k].req)
                mt_fail("vstartall: waitall changed persistent request %d",
                        k);
            v_check(&vs[k], v_name[k], run);
        }
    }
    mt_unwatch();
    for (int k = 0; k < V_NKINDS; k++) {
        MT_OK(nbcx_request_free(&reqs[k]));
        v_free(&vs[k]);
    }
}

/* ------------------------------------------------------------------ */
/* Part 6: the neighbourhood collectives                               */
/* ------------------------------------------------------------------ */

enum nkind { N_ALLGATHER, N_ALLGATHERV, N_ALLTOALL, N_ALLTOALLV,
             N_ALLTOALLW, N_NKINDS };
static const char *const n_name[N_NKINDS] = {
    "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall",
    "neighbor_alltoallv", "neighbor_alltoallw"};

/* One neighbourhood case on a distributed graph with deg sources and
 * deg destinations (see nrestarts): counts and displacements of the
 * blocks (elements; bytes for alltoallw), buffers as in struct vcoll. */
struct ncoll {
    enum nkind kind;
    const struct mc_type *t;
    int maxc, deg;
    long id;
    int sc[2], sd[2], rc[2], rd[2];
    MPI_Aint mpi_sd[2], mpi_rd[2];
    ptrdiff_t nb_sd[2], nb_rd[2];
    MPI_Datatype mtypes[2];
    nbcx_datatype ntypes[2];
    size_t sbytes, rbytes;
    unsigned char *s, *r, *r_ref;
    nbcx_request req;
};

/* The block size of the edge sender -> receiver (0..maxc, some zero),
 * known to both ends; for allgather(v) receiver is -1: one block for
 * every destination. */
static int n_units(const struct ncoll *c, int sender, int receiver)
{
    uint64_t h = mt_seed((uint64_t)c->id, (uint64_t)sender + 1,
                         (uint64_t)(receiver + 2));
    if (c->maxc == 0 || h % 4 == 0)
        return 0;
    return 1 + (int)((h >> 8) % (uint64_t)c->maxc);
}

static void n_setup(struct ncoll *c, const int *srcs, const int *dsts)
{
    const int deg = c->deg, me = mt_rank;
    const size_t es = c->t->size;
    int sn = 0, rn = 0;
    for (int i = 0; i < deg; i++) {
        c->mtypes[i] = c->t->mpi;
        c->ntypes[i] = c->t->nb;
    }
    switch (c->kind) {
    case N_ALLGATHER:
    case N_ALLTOALL: /* regular: blocks side by side */
        sn = c->kind == N_ALLTOALL ? deg * c->maxc : c->maxc;
        rn = deg * c->maxc;
        break;
    case N_ALLGATHERV:
        c->sc[0] = n_units(c, me, -1);
        sn = c->sc[0];
        for (int i = 0; i < deg; i++)
            c->rc[i] = n_units(c, srcs[i], -1);
        rn = v_layout(deg, c->rc, c->rd);
        break;
    default: /* alltoallv, alltoallw */
        for (int j = 0; j < deg; j++) {
            c->sc[j] = n_units(c, me, dsts[j]);
            c->rc[j] = n_units(c, srcs[j], me);
        }
        sn = v_layout(deg, c->sc, c->sd);
        rn = v_layout(deg, c->rc, c->rd);
        for (int j = 0; j < deg; j++) {
            c->nb_sd[j] = c->mpi_sd[j] = (MPI_Aint)c->sd[j] * (MPI_Aint)es;
            c->nb_rd[j] = c->mpi_rd[j] = (MPI_Aint)c->rd[j] * (MPI_Aint)es;
        }
        break;
    }
    c->sbytes = (size_t)sn * es;
    c->rbytes = (size_t)rn * es;
    c->s = mc_alloc(c->sbytes);
    c->r = mc_alloc(c->rbytes);
    c->r_ref = mc_alloc(c->rbytes);
}

static int n_plan(struct ncoll *c, nbcx_comm comm)
{
    const nbcx_datatype t = c->t->nb;
    nbcx_request *req = &c->req;
    switch (c->kind) {
    case N_ALLGATHER:
        return nbcx_neighbor_allgather_init(c->s, c->maxc, t, c->r, c->maxc,
                                            t, comm, req);
    case N_ALLGATHERV:
        return nbcx_neighbor_allgatherv_init(c->s, c->sc[0], t, c->r, c->rc,
                                             c->rd, t, comm, req);
    case N_ALLTOALL:
        return nbcx_neighbor_alltoall_init(c->s, c->maxc, t, c->r, c->maxc,
                                           t, comm, req);
    case N_ALLTOALLV:
        return nbcx_neighbor_alltoallv_init(c->s, c->sc, c->sd, t, c->r,
                                            c->rc, c->rd, t, comm, req);
    case N_ALLTOALLW:
        return nbcx_neighbor_alltoallw_init(c->s, c->sc, c->nb_sd, c->ntypes,
                                            c->r, c->rc, c->nb_rd, c->ntypes,
                                            comm, req);
    default: return NBCX_ERR_INTERN;
    }
}

/* MPI's neighbourhood collective into r_ref (V_MPI: persistent where
 * the library has them, else blocking). */
static int n_reference(struct ncoll *c, MPI_Comm w)
{
    const MPI_Datatype t = c->t->mpi;
    MPI_Request req = MPI_REQUEST_NULL;
    int rc;
    switch (c->kind) {
    case N_ALLGATHER:
        rc = V_MPI(Neighbor_allgather, c->s, c->maxc, t, c->r_ref, c->maxc,
                   t);
        break;
    case N_ALLGATHERV:
        rc = V_MPI(Neighbor_allgatherv, c->s, c->sc[0], t, c->r_ref, c->rc,
                   c->rd, t);
        break;
    case N_ALLTOALL:
        rc = V_MPI(Neighbor_alltoall, c->s, c->maxc, t, c->r_ref, c->maxc,
                   t);
        break;
    case N_ALLTOALLV:
        rc = V_MPI(Neighbor_alltoallv, c->s, c->sc, c->sd, t, c->r_ref,
                   c->rc, c->rd, t);
        break;
    case N_ALLTOALLW:
        rc = V_MPI(Neighbor_alltoallw, c->s, c->sc, c->mpi_sd, c->mtypes,
                   c->r_ref, c->rc, c->mpi_rd, c->mtypes);
        break;
    default: rc = MPI_ERR_OTHER; break;
    }
    if (req != MPI_REQUEST_NULL)
        MPI_Request_free(&req);
    return rc;
}

/* Every neighbourhood collective with int and contig(3,int), blocks of
 * up to 0, 3 and 20 elements (per edge for the v and w forms, in reverse
 * order with gaps), on a distributed graph without repeated edges where
 * every rank has as many sources as destinations (the shape every MPI
 * library handles as the standard says, test_neighbor.c): the ring both
 * ways on 3 or more ranks, one way on 2, the edge to itself on 1.
 * Planned once, restarted RESTARTS times with new send and receive
 * contents, every run compared byte for byte with MPI's. */
static void nrestarts(void)
{
    static const int maxcs[] = {0, 3, 20};
    const struct mc_type *types[] = {&t_int, &t_contig};
    const int p = mt_size, me = mt_rank;
    const int left = (me + p - 1) % p, right = (me + 1) % p;
    const int deg = p >= 3 ? 2 : 1;
    const int srcs[2] = {left, right}, dsts[2] = {right, left};
    MPI_Comm g;
    nbcx_comm comm;
    char what[200];
    long id = 0;
    /* weights of 1 (MPI_UNWEIGHTED trips GCC's access checks) */
    const int ones[2] = {1, 1};
    MT_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, deg, srcs, ones,
                                          deg, dsts, ones, MPI_INFO_NULL, 0,
                                          &g));
    MT_OK(nbcx_comm_from_mpi(g, &comm));
    for (int k = 0; k < N_NKINDS; k++)
        for (size_t mi = 0; mi < sizeof maxcs / sizeof *maxcs; mi++)
            for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
                struct ncoll c;
                memset(&c, 0, sizeof c);
                c.kind = (enum nkind)k;
                c.t = types[ti];
                c.maxc = maxcs[mi];
                c.deg = deg;
                c.id = id++;
                n_setup(&c, srcs, dsts);
                snprintf(what, sizeof what, "persistent %s maxcount=%d %s",
                         n_name[k], c.maxc, c.t->name);
                uint64_t data = mt_seed((uint64_t)id, mt_rank + 1, 29);
                mt_watch("%s: init", what);
                expect_planned(n_plan(&c, comm), &c.req, what);
                for (int run = 0; run < RESTARTS; run++) {
                    mc_fill(c.s, c.sbytes, c.t->dbl, &data);
                    mc_fill(c.r, c.rbytes, c.t->dbl, &data);
                    memcpy(c.r_ref, c.r, c.rbytes);
                    start_and_wait(&c.req, what, run);
                    if (n_reference(&c, g) != MPI_SUCCESS)
                        mt_fail("%s: run %d: MPI's collective failed", what,
                                run);
                    else if (memcmp(c.r, c.r_ref, c.rbytes) != 0)
                        mt_fail("%s: run %d: result differs from MPI's",
                                what, run);
                    expect_inactive(&c.req, what);
                }
                MT_OK(nbcx_request_free(&c.req));
                free(c.s);
                free(c.r);
                free(c.r_ref);
            }
    mt_unwatch();
    MT_OK(nbcx_comm_free(&comm));
    MPI_Comm_free(&g);
}

int main(int argc, char **argv)
{
    nbcx_comm comm = NBCX_COMM_NULL;
    double t0 = mt_begin(&argc, &argv);
    mc_type_int(&t_int);
    mc_type_double(&t_double);
    mc_type_contig(&t_contig, 3);
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
    mpich = mt_is_mpich();
    restarts(comm);
    vrestarts(comm);
    nrestarts();
    startall(comm);
    vstartall(comm);
    misuse(comm);
    memory(comm);
    mt_watch("teardown");
    MT_OK(nbcx_comm_free(&comm));
    mc_type_free(&t_contig);
    return mt_finish("test_persistent", t0);
}
