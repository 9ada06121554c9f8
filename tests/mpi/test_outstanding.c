/*
 * test_outstanding.c - many collectives in flight on one communicator.
 *
 * 64 collectives of mixed kinds (ibarrier, ibcast, ireduce, iallreduce,
 * igather, iscatter, iallgather, ialltoall), with mixed counts (zero,
 * small, and large ones cut into many fragments), roots, in-place variants
 * and a non-commutative user operation, are started back to back on ONE
 * nbcx communicator and only then completed:
 *   round 0/3  nbcx_wait in reverse order (63 down to 0);
 *   round 1/4  one nbcx_waitall;
 *   round 2/5  nbcx_waitany for half of them, then nbcx_testall polling;
 * in rounds 3-5 consecutive collectives of one kind also use different
 * algorithms (nbcx_algorithm_set between the starts). Every result is
 * compared with the blocking MPI collective run afterwards on the same
 * inputs.
 *
 * A last round checks the lifetime rules: the communicator, a derived
 * datatype and a user operation are freed while collectives that use them
 * are in flight; the collectives must still complete correctly.
 */
#include <stdbool.h>

#include "mpitest.h"

#define NOPS 64
#define PRIME 1009
#define SEGSIZE 512 /* small fragments: the large counts make many */

enum kind { K_BARRIER, K_BCAST, K_REDUCE, K_ALLREDUCE, K_GATHER, K_SCATTER,
            K_ALLGATHER, K_ALLTOALL, NKINDS };
static const char *const kind_name[NKINDS] = {
    "barrier", "bcast", "reduce", "allreduce", "gather", "scatter",
    "allgather", "alltoall"};

/* ---- the non-commutative user operation on contiguous(4, int) ------ */

/* inout = in x inout for 2x2 matrices mod PRIME (order matters). */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const int *a = in;
    int *b = inout;
    (void)dt;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        int r0 = (a[0] * b[0] + a[1] * b[2]) % PRIME;
        int r1 = (a[0] * b[1] + a[1] * b[3]) % PRIME;
        int r2 = (a[2] * b[0] + a[3] * b[2]) % PRIME;
        int r3 = (a[2] * b[1] + a[3] * b[3]) % PRIME;
        b[0] = r0, b[1] = r1, b[2] = r2, b[3] = r3;
    }
}

/* The two element types: int with MPI_SUM, matrices with matmul. */
struct etype {
    int ints;           /* ints per element */
    MPI_Datatype mpi;
    nbcx_datatype nb;
    MPI_Op mpi_op;
    nbcx_op nb_op;
};
static struct etype e_int, e_mat;

static void etypes_init(void)
{
    e_int.ints = 1;
    e_int.mpi = MPI_INT;
    e_int.mpi_op = MPI_SUM;
    MT_OK(nbcx_datatype_from_mpi(MPI_INT, &e_int.nb));
    MT_OK(nbcx_op_from_mpi(MPI_SUM, &e_int.nb_op));

    e_mat.ints = 4;
    MPI_Type_contiguous(4, MPI_INT, &e_mat.mpi);
    MPI_Type_commit(&e_mat.mpi);
    MPI_Op_create(matmul, 0, &e_mat.mpi_op);
    MT_OK(nbcx_datatype_from_mpi(e_mat.mpi, &e_mat.nb));
    MT_OK(nbcx_op_from_mpi(e_mat.mpi_op, &e_mat.nb_op));
}

static void etypes_free(void)
{
    MT_OK(nbcx_datatype_free(&e_int.nb));
    MT_OK(nbcx_op_free(&e_int.nb_op));
    MT_OK(nbcx_datatype_free(&e_mat.nb));
    MT_OK(nbcx_op_free(&e_mat.nb_op));
    MPI_Type_free(&e_mat.mpi);
    MPI_Op_free(&e_mat.mpi_op);
}

/* ---- one collective in flight -------------------------------------- */

struct coll {
    enum kind kind;
    int count, root;
    bool in_place;
    const struct etype *et;
    nbcx_datatype nb_type; /* usually et->nb; see the lifetime round */
    nbcx_op nb_op;
    int sn, rn;            /* ints in the send and receive buffers */
    int *s;                /* input (read by nbcx, then by MPI)      */
    int *r, *r_ref;        /* nbcx's and MPI's receive buffers       */
    nbcx_request req;
};

static int *alloc_ints(int n)
{
    int *p = calloc((size_t)(n > 0 ? n : 1), sizeof(int));
    if (!p)
        MPI_Abort(MPI_COMM_WORLD, 2);
    return p;
}

/* The i-th collective of a round: kinds interleaved, a large count every
 * few, roots moving around, in place and the matrix type now and then. */
static void coll_setup(struct coll *c, int i, int round)
{
    const int p = mt_size;
    uint64_t rng = mt_seed((uint64_t)(round * NOPS + i), mt_rank, 7);
    int n, e;

    memset(c, 0, sizeof *c);
    c->kind = (enum kind)((i * 5) % NKINDS);
    c->count = i % 7 == 3 ? 2000 + i : (i % 4 == 0 ? 0 : i % 9 + 1);
    c->root = (i / NKINDS) % p;
    c->et = (i / NKINDS) % 2 && (c->kind == K_REDUCE ||
                                 c->kind == K_ALLREDUCE) ? &e_mat : &e_int;
    c->nb_type = c->et->nb;
    c->nb_op = c->et->nb_op;
    c->in_place = (i / 16) % 2 == 1 &&
                  (c->kind == K_ALLREDUCE || c->kind == K_ALLTOALL ||
                   c->kind == K_ALLGATHER);
    e = c->et->ints;
    n = c->count * e;
    switch (c->kind) {
    case K_BARRIER: break;
    case K_BCAST: c->rn = n; break;
    case K_REDUCE:
    case K_ALLREDUCE: c->sn = n; c->rn = n; break;
    case K_GATHER: c->sn = n; c->rn = p * n; break;
    case K_SCATTER: c->sn = p * n; c->rn = n; break;
    case K_ALLGATHER: c->sn = n; c->rn = p * n; break;
    case K_ALLTOALL: c->sn = p * n; c->rn = p * n; break;
    default: break;
    }
    c->s = alloc_ints(c->sn);
    c->r = alloc_ints(c->rn);
    c->r_ref = alloc_ints(c->rn);
    for (int k = 0; k < c->sn; k++)
        c->s[k] = mt_range(&rng, 0, PRIME - 1);
    for (int k = 0; k < c->rn; k++)
        c->r[k] = c->r_ref[k] = mt_range(&rng, 0, PRIME - 1);
    c->req = NBCX_REQUEST_NULL;
}

static void coll_free(struct coll *c)
{
    free(c->s);
    free(c->r);
    free(c->r_ref);
}

static int coll_start(struct coll *c, nbcx_comm comm)
{
    const void *s = c->in_place ? NBCX_IN_PLACE : c->s;
    nbcx_datatype t = c->nb_type;
    int n = c->count;
    switch (c->kind) {
    case K_BARRIER: return nbcx_ibarrier(comm, &c->req);
    case K_BCAST: return nbcx_ibcast(c->r, n, t, c->root, comm, &c->req);
    case K_REDUCE:
        return nbcx_ireduce(s, c->r, n, t, c->nb_op, c->root, comm, &c->req);
    case K_ALLREDUCE:
        return nbcx_iallreduce(s, c->r, n, t, c->nb_op, comm, &c->req);
    case K_GATHER:
        return nbcx_igather(s, n, t, c->r, n, t, c->root, comm, &c->req);
    case K_SCATTER:
        return nbcx_iscatter(s, n, t, c->r, n, t, c->root, comm, &c->req);
    case K_ALLGATHER:
        return nbcx_iallgather(s, n, t, c->r, n, t, comm, &c->req);
    case K_ALLTOALL:
        return nbcx_ialltoall(s, n, t, c->r, n, t, comm, &c->req);
    default: return NBCX_ERR_INTERN;
    }
}

static int coll_reference(struct coll *c)
{
    MPI_Comm w = MPI_COMM_WORLD;
    void *s = c->in_place ? MPI_IN_PLACE : (void *)c->s;
    MPI_Datatype t = c->et->mpi;
    MPI_Op op = c->et->mpi_op;
    int n = c->count;
    switch (c->kind) {
    case K_BARRIER: return MPI_Barrier(w);
    case K_BCAST: return MPI_Bcast(c->r_ref, n, t, c->root, w);
    case K_REDUCE: return MPI_Reduce(s, c->r_ref, n, t, op, c->root, w);
    case K_ALLREDUCE: return MPI_Allreduce(s, c->r_ref, n, t, op, w);
    case K_GATHER:
        return MPI_Gather(s, n, t, c->r_ref, n, t, c->root, w);
    case K_SCATTER:
        return MPI_Scatter(s, n, t, c->r_ref, n, t, c->root, w);
    case K_ALLGATHER: return MPI_Allgather(s, n, t, c->r_ref, n, t, w);
    case K_ALLTOALL: return MPI_Alltoall(s, n, t, c->r_ref, n, t, w);
    default: return MPI_ERR_OTHER;
    }
}

/* Runs the reference and compares (the receive buffer matters
 * everywhere except on the non-roots of reduce and gather). */
static void coll_check(struct coll *c, int i, const char *round)
{
    bool significant = !((c->kind == K_REDUCE || c->kind == K_GATHER) &&
                         mt_rank != c->root);
    if (coll_reference(c) != MPI_SUCCESS)
        mt_fail("%s: reference MPI_%s failed", round, kind_name[c->kind]);
    if (!significant)
        return;
    for (int k = 0; k < c->rn; k++)
        if (c->r[k] != c->r_ref[k]) {
            mt_fail("%s: collective #%d (%s count=%d root=%d in_place=%d "
                    "%s): int %d of %d is %d, MPI says %d", round, i,
                    kind_name[c->kind], c->count, c->root, (int)c->in_place,
                    c->et == &e_mat ? "matmul" : "int sum", k, c->rn,
                    c->r[k], c->r_ref[k]);
            return;
        }
}

/* ---- algorithm cycling --------------------------------------------- */

static char alg_names[NKINDS][16][40];
static int alg_count[NKINDS];

static void algorithms_init(void)
{
    for (int k = 0; k < NKINDS; k++) {
        const char *list = NULL, *p;
        MT_OK(nbcx_algorithm_names(kind_name[k], &list));
        for (p = list ? list : ""; *p && alg_count[k] < 15;) {
            size_t len = strcspn(p, " ");
            /* "slots" needs the inproc transport: on MPI it is "auto" */
            if (len > 0 && len < 40 && strncmp(p, "slots", len) != 0) {
                memcpy(alg_names[k][alg_count[k]], p, len);
                alg_names[k][alg_count[k]++][len] = '\0';
            }
            p += len;
            p += strspn(p, " ");
        }
        strcpy(alg_names[k][alg_count[k]++], "auto");
    }
}

/* ---- the rounds ---------------------------------------------------- */

enum mode { M_REVERSE, M_WAITALL, M_WAITANY };
static const char *const mode_name[] = {"reverse nbcx_wait", "nbcx_waitall",
                                        "nbcx_waitany+nbcx_testall"};

static void run_round(int round, nbcx_comm comm)
{
    static struct coll cs[NOPS];
    nbcx_request reqs[NOPS];
    const enum mode mode = (enum mode)(round % 3);
    const bool cycle = round >= 3;
    char name[120];
    int rc;

    snprintf(name, sizeof name, "round %d (%s%s, %d ranks)", round,
             mode_name[mode], cycle ? ", algorithms cycled" : "", mt_size);
    mt_watch("%s: starting", name);

    for (int i = 0; i < NOPS; i++) {
        struct coll *c = &cs[i];
        coll_setup(c, i, round);
        if (cycle) {
            int k = c->kind;
            MT_OK(nbcx_algorithm_set(kind_name[k],
                                     alg_names[k][(i / NKINDS) % alg_count[k]]));
        }
        rc = coll_start(c, comm);
        if (rc != NBCX_SUCCESS) {
            /* the other ranks would wait for it forever */
            fprintf(stderr, "[rank %d] %s: starting #%d (%s) failed: %s\n",
                    mt_rank, name, i, kind_name[c->kind],
                    nbcx_error_string(rc));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    for (int k = 0; k < NKINDS; k++)
        MT_OK(nbcx_algorithm_set(kind_name[k], "auto"));

    mt_watch("%s: completing", name);
    switch (mode) {
    case M_REVERSE:
        for (int i = NOPS - 1; i >= 0; i--) {
            rc = nbcx_wait(&cs[i].req);
            if (rc != NBCX_SUCCESS || cs[i].req != NBCX_REQUEST_NULL)
                mt_fail("%s: nbcx_wait(#%d) returned %d (%s), request %s",
                        name, i, rc, nbcx_error_string(rc),
                        cs[i].req ? "not reset" : "reset");
        }
        break;
    case M_WAITALL:
        for (int i = 0; i < NOPS; i++)
            reqs[i] = cs[i].req;
        rc = nbcx_waitall(NOPS, reqs);
        if (rc != NBCX_SUCCESS)
            mt_fail("%s: nbcx_waitall returned %d (%s)", name, rc,
                    nbcx_error_string(rc));
        for (int i = 0; i < NOPS; i++)
            if (reqs[i] != NBCX_REQUEST_NULL)
                mt_fail("%s: nbcx_waitall left request %d set", name, i);
        break;
    case M_WAITANY: {
        bool seen[NOPS] = {false};
        int flag = 0, index = -2;
        for (int i = 0; i < NOPS; i++)
            reqs[i] = cs[i].req;
        for (int n = 0; n < NOPS / 2; n++) {
            rc = nbcx_waitany(NOPS, reqs, &index);
            if (rc != NBCX_SUCCESS || index < 0 || index >= NOPS ||
                seen[index] || reqs[index] != NBCX_REQUEST_NULL) {
                mt_fail("%s: nbcx_waitany returned %d (%s), index %d", name,
                        rc, nbcx_error_string(rc), index);
                break;
            }
            seen[index] = true;
        }
        while (!flag) {
            rc = nbcx_testall(NOPS, reqs, &flag);
            if (rc != NBCX_SUCCESS) {
                mt_fail("%s: nbcx_testall returned %d (%s)", name, rc,
                        nbcx_error_string(rc));
                break;
            }
        }
        for (int i = 0; i < NOPS; i++)
            if (reqs[i] != NBCX_REQUEST_NULL)
                mt_fail("%s: nbcx_testall left request %d set", name, i);
        rc = nbcx_waitany(NOPS, reqs, &index);
        if (rc != NBCX_SUCCESS || index != -1)
            mt_fail("%s: nbcx_waitany on finished requests: %d, index %d "
                    "(expected -1)", name, rc, index);
        break;
    }
    }

    mt_watch("%s: checking against MPI", name);
    for (int i = 0; i < NOPS; i++) {
        coll_check(&cs[i], i, name);
        coll_free(&cs[i]);
    }
    mt_unwatch();
}

/* Frees the communicator, a datatype and an operation while collectives
 * using them are in flight. */
static void run_lifetime_round(void)
{
    enum { N = 8 };
    struct coll cs[N];
    nbcx_comm comm = NBCX_COMM_NULL;
    nbcx_datatype mat = NBCX_DATATYPE_NULL;
    nbcx_op op = NBCX_OP_NULL;
    nbcx_request reqs[N];
    int rc;

    mt_watch("lifetime round: starting (%d ranks)", mt_size);
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
    MT_OK(nbcx_datatype_from_mpi(e_mat.mpi, &mat));
    MT_OK(nbcx_op_from_mpi(e_mat.mpi_op, &op));
    for (int i = 0; i < N; i++) {
        /* collectives 1, 9, 17, ... of a round: reduce/allreduce with
         * the matrix type alternate with others */
        coll_setup(&cs[i], 8 + i, 100);
        if (cs[i].et == &e_mat) {
            cs[i].nb_type = mat;
            cs[i].nb_op = op;
        }
        rc = coll_start(&cs[i], comm);
        if (rc != NBCX_SUCCESS) {
            fprintf(stderr, "[rank %d] lifetime round: start failed: %s\n",
                    mt_rank, nbcx_error_string(rc));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        reqs[i] = cs[i].req;
    }
    MT_OK(nbcx_comm_free(&comm));
    MT_OK(nbcx_datatype_free(&mat));
    MT_OK(nbcx_op_free(&op));
    if (comm != NBCX_COMM_NULL || mat != NBCX_DATATYPE_NULL ||
        op != NBCX_OP_NULL)
        mt_fail("lifetime round: a free did not reset its handle");

    mt_watch("lifetime round: completing (%d ranks)", mt_size);
    rc = nbcx_waitall(N, reqs);
    if (rc != NBCX_SUCCESS)
        mt_fail("lifetime round: nbcx_waitall returned %d (%s)", rc,
                nbcx_error_string(rc));
    for (int i = 0; i < N; i++) {
        coll_check(&cs[i], i, "lifetime round");
        coll_free(&cs[i]);
    }
    mt_unwatch();
}

int main(int argc, char **argv)
{
    nbcx_comm comm = NBCX_COMM_NULL;
    double t0;

    t0 = mt_begin(&argc, &argv);
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
    MT_OK(nbcx_segsize_set(SEGSIZE));
    etypes_init();
    algorithms_init();

    for (int round = 0; round < 6; round++)
        run_round(round, comm);
    run_lifetime_round();

    mt_watch("teardown");
    etypes_free();
    MT_OK(nbcx_comm_free(&comm));
    return mt_finish("test_outstanding", t0);
}
