/*
 * test_inproc_chunks.c - the paths of counts above INT_MAX at small
 * sizes (issue 38): messages, copies and reductions cut into chunks,
 * messages of a type whose size does not divide the chunks packed into
 * bytes first, bcast moved as bytes in pieces, the other element-wise
 * collectives in pieces (sched/sched.h, coll/select.c).
 *
 * Every collective's _c form, nonblocking (nbcx_i<op>_c) and persistent
 * (nbcx_<op>_init_c), on 3 thread ranks, with INT32, DOUBLE and two
 * derived types with gaps (gap_mid, 8 bytes of data in 12; gap_five, 20
 * in 24, a size that divides no chunk), with the same type on both
 * sides, with INT32 on the receive side ("mixed": the other side's
 * bytes as words, cut alike), and in place where MPI allows it; the v
 * and w layouts have uneven counts and displacements in reverse order
 * with gaps. Each case runs twice on the same input: with the real
 * limits, under which nothing this small is cut (the reference), and
 * with them lowered as NBCX_CHUNK_TEST=100 lowers them (cut above 100
 * bytes into chunks of 96; bcast, reduce, allreduce, scan and exscan of
 * more than 100 elements or bytes in pieces of 51). The receive buffers,
 * gaps and sentinels included, must be equal byte for byte, and the
 * reference must have written something where the rank receives.
 *
 * The limits are switched between runs by rank 0 between two thread
 * barriers (the schedule cache is off, NBCX_SCHED_CACHE=0, so each run
 * builds), and the thread ranks' shared-memory slots are off
 * (NBCX_INPROC_SLOT_MAX=0): every collective runs its point-to-point
 * schedule.
 * Run as test_inproc_chunks (ctest: inproc.chunks.<mode>).
 */
#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t, setenv */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptype.h"
#include "nbcx.h"
#include "sched/sched.h"

enum { P = 3, N = 37, M = 113, BUF = 1 << 15, NOPS = 21, NTYPES = 4 };
enum { V_SAME, V_MIXED, V_IN_PLACE, NVARIANTS };

static const char *const names[NOPS] = {
    "bcast", "reduce", "allreduce", "gather", "scatter", "allgather",
    "alltoall", "gatherv", "scatterv", "allgatherv", "alltoallv",
    "alltoallw", "reduce_scatter", "reduce_scatter_block", "scan", "exscan",
    "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall",
    "neighbor_alltoallv", "neighbor_alltoallw",
};
static const char *const tnames[NTYPES] = { "int32", "double", "gap_mid",
                                            "gap_five" };
static const char *const vnames[NVARIANTS] = { "same", "mixed", "in place" };

static struct nbcxi_sched_chunking real_limits;
static const struct nbcxi_sched_chunking small_limits = { 100, 96, 100, 51 };

/* One case's arguments: both sides' types and counts, the layouts. */
struct args {
    int rank;
    nbcx_datatype st, rt;
    nbcx_count k;        /* receive elements per send element (mixed) */
    ptrdiff_t rext;      /* receive type's extent */
    bool in_place;
    void *sbuf, *rbuf;
    /* v forms: block i of every rank's v side */
    nbcx_count vc[P], vd[P];
    /* alltoallv/w: this rank's send and receive blocks */
    nbcx_count sc[P], sd[P], rc[P], rd[P];
    ptrdiff_t sbd[P], rbd[P];
    nbcx_datatype sts[P], rts[P];
    /* neighbourhood (a periodic ring: left, then right) */
    nbcx_count nsc[2], nsd[2], nrc[2], nrd[2];
    ptrdiff_t nsbd[2], nrbd[2];
};

/* Counts laid out last block first, one element of gap after each. */
static void reverse_layout(const nbcx_count *c, nbcx_count *d, int n)
{
    nbcx_count at = 0;
    for (int i = n - 1; i >= 0; i--) {
        d[i] = at;
        at += c[i] + 1;
    }
}

/* Elements rank a sends rank b in alltoallv (symmetric, for in place). */
static nbcx_count pair(int a, int b)
{
    return N + 2 * (a + b);
}

static void make_layouts(struct args *x, ptrdiff_t sext)
{
    const int r = x->rank;
    for (int i = 0; i < P; i++) {
        x->vc[i] = (N + 4 * i) * x->k;
        x->sc[i] = pair(r, i);
        x->rc[i] = pair(i, r) * x->k;
    }
    reverse_layout(x->vc, x->vd, P);
    reverse_layout(x->sc, x->sd, P);
    reverse_layout(x->rc, x->rd, P);
    for (int i = 0; i < P; i++) {
        x->sbd[i] = x->sd[i] * sext;
        x->rbd[i] = x->rd[i] * x->rext;
        x->sts[i] = x->st;
        x->rts[i] = x->rt;
    }
    const int nb[2] = { (r + P - 1) % P, (r + 1) % P };
    for (int j = 0; j < 2; j++) {
        x->nsc[j] = pair(r, nb[j]);
        x->nrc[j] = pair(nb[j], r) * x->k;
    }
    reverse_layout(x->nsc, x->nsd, 2);
    reverse_layout(x->nrc, x->nrd, 2);
    for (int j = 0; j < 2; j++) {
        x->nsbd[j] = x->nsd[j] * sext;
        x->nrbd[j] = x->nrd[j] * x->rext;
    }
}

/* The nonblocking or persistent _c call of op; in place where asked. */
static int call(int op, bool init, const struct args *x, nbcx_comm comm,
                nbcx_request *r)
{
    const int rank = x->rank;
    const void *sb = x->sbuf;
    void *rb = x->rbuf;
    const nbcx_datatype st = x->st, rt = x->rt;
    const nbcx_count n = N, k = x->k;
    const void *ip = x->in_place ? NBCX_IN_PLACE : sb;
    /* the root's in-place send buffer (gather), receive buffer (scatter) */
    const void *ipr = x->in_place && rank == 0 ? NBCX_IN_PLACE : sb;
    void *ipsr = x->in_place && rank == 0 ? NBCX_IN_PLACE : rb;
#define C(iname, initname, ...)                                             \
    (init ? initname##_c(__VA_ARGS__) : iname##_c(__VA_ARGS__))
    switch (op) {
    case 0: return C(nbcx_ibcast, nbcx_bcast_init, rb,
                     rank == 1 ? M : M * k, rank == 1 ? st : rt, 1, comm, r);
    case 1: return C(nbcx_ireduce, nbcx_reduce_init,
                     x->in_place && rank == 1 ? NBCX_IN_PLACE : sb, rb, M,
                     st, NBCX_SUM, 1, comm, r);
    case 2: return C(nbcx_iallreduce, nbcx_allreduce_init, ip, rb, M, st,
                     NBCX_SUM, comm, r);
    case 3: return C(nbcx_igather, nbcx_gather_init, ipr, n, st, rb, n * k,
                     rt, 0, comm, r);
    case 4: return C(nbcx_iscatter, nbcx_scatter_init, sb, n, st, ipsr,
                     n * k, rt, 0, comm, r);
    case 5: return C(nbcx_iallgather, nbcx_allgather_init, ip, n, st, rb,
                     n * k, rt, comm, r);
    case 6: return C(nbcx_ialltoall, nbcx_alltoall_init, ip, n, st, rb,
                     n * k, rt, comm, r);
    case 7: return C(nbcx_igatherv, nbcx_gatherv_init, ipr,
                     x->vc[rank] / k, st, rb, x->vc, x->vd, rt, 0, comm, r);
    case 8: return C(nbcx_iscatterv, nbcx_scatterv_init, sb, x->vc, x->vd,
                     rt, ipsr, x->vc[rank] / k, st, 0, comm, r);
    case 9: return C(nbcx_iallgatherv, nbcx_allgatherv_init, ip,
                     x->vc[rank] / k, st, rb, x->vc, x->vd, rt, comm, r);
    case 10: return C(nbcx_ialltoallv, nbcx_alltoallv_init, ip, x->sc,
                      x->sd, st, rb, x->rc, x->rd, rt, comm, r);
    case 11: return C(nbcx_ialltoallw, nbcx_alltoallw_init, ip, x->sc,
                      x->sbd, x->sts, rb, x->rc, x->rbd, x->rts, comm, r);
    case 12: return C(nbcx_ireduce_scatter, nbcx_reduce_scatter_init, ip, rb,
                      x->vc, st, NBCX_SUM, comm, r);
    case 13: return C(nbcx_ireduce_scatter_block,
                      nbcx_reduce_scatter_block_init, ip, rb, n, st,
                      NBCX_SUM, comm, r);
    case 14: return C(nbcx_iscan, nbcx_scan_init, ip, rb, M, st, NBCX_SUM,
                      comm, r);
    case 15: return C(nbcx_iexscan, nbcx_exscan_init, ip, rb, M, st,
                      NBCX_SUM, comm, r);
    case 16: return C(nbcx_ineighbor_allgather, nbcx_neighbor_allgather_init,
                      sb, n, st, rb, n * k, rt, comm, r);
    case 17: {
        nbcx_count c[2] = { (N + (rank + P - 1) % P) * k,
                            (N + (rank + 1) % P) * k }, d[2];
        reverse_layout(c, d, 2);
        return C(nbcx_ineighbor_allgatherv, nbcx_neighbor_allgatherv_init,
                 sb, N + rank, st, rb, c, d, rt, comm, r);
    }
    case 18: return C(nbcx_ineighbor_alltoall, nbcx_neighbor_alltoall_init,
                      sb, n, st, rb, n * k, rt, comm, r);
    case 19: return C(nbcx_ineighbor_alltoallv, nbcx_neighbor_alltoallv_init,
                      sb, x->nsc, x->nsd, st, rb, x->nrc, x->nrd, rt, comm,
                      r);
    case 20: return C(nbcx_ineighbor_alltoallw, nbcx_neighbor_alltoallw_init,
                      sb, x->nsc, x->nsbd, x->sts, rb, x->nrc, x->nrbd,
                      x->rts, comm, r);
    default: return NBCX_ERR_ARG;
    }
#undef C
}

static bool reduction(int op)
{
    return op == 1 || op == 2 || (op >= 12 && op <= 15);
}

/* Which variants op has: mixed types only where data moves unreduced;
 * in place where MPI allows it (not bcast, not the neighbourhood ones). */
static bool applies(int op, int v)
{
    if (v == V_MIXED)
        return !reduction(op);
    if (v == V_IN_PLACE)
        return op != 0 && op < 16;
    return true;
}

/* Data words rank * 1000 + i (as doubles for DOUBLE): exact sums. */
static void fill(void *buf, nbcx_datatype t, int rank)
{
    if (t == NBCX_DOUBLE)
        for (size_t i = 0; i < BUF / sizeof(double); i++)
            ((double *)buf)[i] = rank * 1000 + (double)i;
    else
        for (size_t i = 0; i < BUF / sizeof(int32_t); i++)
            ((int32_t *)buf)[i] = rank * 1000 + (int32_t)i;
}

/* The rank threads meet here (no schedule is built meanwhile: every
 * rank's previous operation is over). */
static pthread_barrier_t meet;

/* One run of a case with limits `lim` (set by rank 0 while the others
 * wait): inputs made afresh, the call started and waited for. */
static int run_once(int op, bool init, struct args *x, nbcx_comm comm,
                    const struct nbcxi_sched_chunking *lim)
{
    pthread_barrier_wait(&meet);
    if (x->rank == 0)
        nbcxi_sched_chunking = *lim;
    pthread_barrier_wait(&meet);
    int e;
    fill(x->sbuf, x->st, x->rank);
    if (x->in_place || (op == 0 && x->rank == 1))
        fill(x->rbuf, x->st, x->rank + 7);
    else
        memset(x->rbuf, 0xa5, BUF);
    nbcx_request r = NBCX_REQUEST_NULL;
    e = call(op, init, x, comm, &r);
    if (!e && init)
        e = nbcx_start(&r);
    if (!e)
        e = nbcx_wait(&r);
    if (init && r != NBCX_REQUEST_NULL) {
        int f = nbcx_request_free(&r);
        e = e ? e : f;
    }
    return e;
}

/* Whether this rank receives anything in op (the reference must have
 * written its buffer then). */
static bool receives(int op, int rank)
{
    return !(op == 1 && rank != 1) && !(op == 3 && rank != 0) &&
           !(op == 7 && rank != 0) && !(op == 15 && rank == 0) &&
           !(op == 0 && rank == 1);
}

static int one_case(int op, bool init, int ti, int v, struct args *x,
                    nbcx_comm comm, unsigned char *ref)
{
    static const nbcx_datatype types[NTYPES] = { NBCX_INT32, NBCX_DOUBLE,
                                                 GAP_MID, GAP_FIVE };
    size_t size;
    ptrdiff_t sext;
    x->st = types[ti];
    x->rt = v == V_MIXED ? NBCX_INT32 : x->st;
    nbcx_datatype_size(x->st, &size);
    nbcx_datatype_extent(x->st, &sext);
    nbcx_datatype_extent(x->rt, &x->rext);
    x->k = v == V_MIXED ? (nbcx_count)(size / 4) : 1;
    x->in_place = v == V_IN_PLACE;
    make_layouts(x, sext);
    int e = run_once(op, init, x, comm, &real_limits);
    memcpy(ref, x->rbuf, BUF);
    int e2 = run_once(op, init, x, comm, &small_limits);
    const char *what = init ? "init_c" : "i_c";
    if (e || e2) {
        fprintf(stderr, "rank %d: %s %s %s %s: %s / %s\n", x->rank,
                names[op], what, tnames[ti], vnames[v],
                nbcx_error_string(e), nbcx_error_string(e2));
        return 1;
    }
    bool moved = false;
    for (int i = 0; i < BUF && !moved; i++)
        moved = ref[i] != 0xa5;
    if (!moved && receives(op, x->rank) && !x->in_place) {
        fprintf(stderr, "rank %d: %s %s %s %s: nothing received\n", x->rank,
                names[op], what, tnames[ti], vnames[v]);
        return 1;
    }
    if (memcmp(ref, x->rbuf, BUF) != 0) {
        int i = 0;
        while (ref[i] == ((unsigned char *)x->rbuf)[i])
            i++;
        fprintf(stderr, "rank %d: %s %s %s %s: cut differs at byte %d: "
                "0x%02x, reference 0x%02x\n", x->rank, names[op], what,
                tnames[ti], vnames[v], i,
                ((unsigned char *)x->rbuf)[i], ref[i]);
        return 1;
    }
    return 0;
}

struct result {
    int failures, cases;
};

static int body(nbcx_comm comm, void *arg)
{
    struct result *res = arg;
    struct args x = { 0 };
    nbcx_comm_rank(comm, &x.rank);
    int dims[1] = { P }, periods[1] = { 1 };
    if (nbcx_comm_set_cart(comm, 1, dims, periods) != NBCX_SUCCESS)
        return 1;
    x.sbuf = malloc(BUF);
    x.rbuf = malloc(BUF);
    unsigned char *ref = malloc(BUF);
    int bad = 0, cases = 0;
    for (int op = 0; op < NOPS && x.sbuf && x.rbuf && ref; op++)
        for (int ti = 0; ti < NTYPES; ti++)
            for (int v = 0; v < NVARIANTS; v++)
                for (int init = 0; init < 2; init++) {
                    if (!applies(op, v))
                        continue;
                    bad += one_case(op, init, ti, v, &x, comm, ref);
                    cases++;
                }
    free(x.sbuf);
    free(x.rbuf);
    free(ref);
    if (x.rank == 0)
        res->cases = cases;
    __atomic_add_fetch(&res->failures, bad, __ATOMIC_RELAXED);
    return bad ? 1 : 0;
}

int main(void)
{
    setenv("NBCX_SCHED_CACHE", "0", 1);
    /* the point-to-point algorithms, not the shared-memory slots (which
     * serve small gathers, bcasts, ... natively and are never cut) */
    setenv("NBCX_INPROC_SLOT_MAX", "0", 1);
    pthread_barrier_init(&meet, NULL, P);
    real_limits = nbcxi_sched_chunking;
    struct result res = { 0 };
    int err = nbcx_inproc_run(P, body, &res);
    if (err != NBCX_SUCCESS || res.failures) {
        printf("FAIL: %d failures (%s)\n", res.failures,
               nbcx_error_string(err));
        return 1;
    }
    printf("ok: %d cases (21 collectives, _c and _init_c, 4 types, same, "
           "mixed and in place) cut into chunks and pieces give the uncut "
           "results on %d ranks\n", res.cases, P);
    return 0;
}
