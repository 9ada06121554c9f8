/*
 * test_inproc_count.c - the large-count API (nbcx_i<op>_c and
 * nbcx_<op>_init_c, issue 38) against the int calls, on 3 thread ranks
 * of the in-process transport (nbcx_inproc_run), no MPI.
 *
 * Every collective with counts is run four ways with the same small
 * arguments: nbcx_i<op>, nbcx_i<op>_c, nbcx_<op>_init and
 * nbcx_<op>_init_c (started once); the three others must leave exactly
 * the bytes the first leaves in the receive buffer (sentinels in the
 * gaps of the v layouts included). The v and w layouts have uneven
 * counts and displacements in reverse order with gaps; the neighbourhood
 * collectives run on a periodic ring (a 1-D Cartesian grid).
 *
 * Then the refusals (every collective serves counts above INT_MAX:
 * test_inproc_chunks.c, test_inproc_large_c.c): counts whose sum passes
 * LLONG_MAX (reduce_scatter_c) and a negative count are NBCX_ERR_COUNT,
 * with *req NBCX_REQUEST_NULL and nothing started (the next collective
 * runs normally).
 *
 * Run as test_inproc_count (ctest: inproc.count.<mode>).
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "nbcx.h"

enum { P = 3, N = 4, LEN = 128, FORMS = 4 };
#define SENTINEL (-7)

static const char *const names[] = {
    "bcast", "reduce", "allreduce", "gather", "scatter", "allgather",
    "alltoall", "gatherv", "scatterv", "allgatherv", "alltoallv",
    "alltoallw", "reduce_scatter", "reduce_scatter_block", "scan", "exscan",
    "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall",
    "neighbor_alltoallv", "neighbor_alltoallw",
};
enum { NOPS = sizeof names / sizeof names[0] };

struct layout {
    int ic[P], id[P], ibd[P];          /* counts, element and byte displs */
    nbcx_count wc[P], wd[P];
    ptrdiff_t pbd[P];
    nbcx_datatype types[P];
};

/* Counts i + 1 (block i), laid out last block first with one element of
 * gap after each. */
static void make_layout(struct layout *l, int n)
{
    int at = 0;
    for (int i = n - 1; i >= 0; i--) {
        l->ic[i] = i + 1;
        l->id[i] = at;
        at += l->ic[i] + 1;
    }
    for (int i = 0; i < n; i++) {
        l->wc[i] = l->ic[i];
        l->wd[i] = l->id[i];
        l->ibd[i] = l->id[i] * (int)sizeof(int);
        l->pbd[i] = l->ibd[i];
        l->types[i] = NBCX_INT32;
    }
}

/* Runs operation op in form f (0: i<op>, 1: i<op>_c, 2: <op>_init,
 * 3: <op>_init_c) from sbuf into rbuf; returns the first error. */
static int run(int op, int f, nbcx_comm comm, int rank, const int *sbuf,
               int *rbuf, const struct layout *l, const struct layout *nl)
{
    nbcx_request r = NBCX_REQUEST_NULL;
    const bool c = f & 1, init = f & 2;
    const int *ic = l->ic, *id = l->id;
    const nbcx_count *wc = l->wc, *wd = l->wd;
    const nbcx_datatype T = NBCX_INT32;
    /* the alltoallv/w arrays (read before the call returns, kept to the
     * end all the same) */
    int sc[P], rc[P], rd[P];
    nbcx_count wsc[P], wrc[P], wrd[P];
    ptrdiff_t prd[P];
    int e;
    /* Each case: the four calls with the same arguments. */
#define FOUR(iname, initname, ...)                                          \
    (init ? (c ? initname##_c(__VA_ARGS__) : initname(__VA_ARGS__))         \
          : (c ? iname##_c(__VA_ARGS__) : iname(__VA_ARGS__)))
    /* The same where the int and _c arguments differ (arrays). */
#define FOUR2(iname, initname, INT_ARGS, C_ARGS)                            \
    (init ? (c ? initname##_c C_ARGS : initname INT_ARGS)                   \
          : (c ? iname##_c C_ARGS : iname INT_ARGS))
    switch (op) {
    case 0:
        memcpy(rbuf, sbuf, sizeof(int) * N);
        e = FOUR(nbcx_ibcast, nbcx_bcast_init, rbuf, N,
                 T, 1, comm, &r);
        break;
    case 1:
        e = FOUR(nbcx_ireduce, nbcx_reduce_init, sbuf, rbuf, N, T, NBCX_SUM,
                 2, comm, &r);
        break;
    case 2:
        e = FOUR(nbcx_iallreduce, nbcx_allreduce_init, sbuf, rbuf, N, T,
                 NBCX_SUM, comm, &r);
        break;
    case 3:
        e = FOUR(nbcx_igather, nbcx_gather_init, sbuf, N, T, rbuf, N, T, 0,
                 comm, &r);
        break;
    case 4:
        e = FOUR(nbcx_iscatter, nbcx_scatter_init, sbuf, N, T, rbuf, N, T, 1,
                 comm, &r);
        break;
    case 5:
        e = FOUR(nbcx_iallgather, nbcx_allgather_init, sbuf, N, T, rbuf, N,
                 T, comm, &r);
        break;
    case 6:
        e = FOUR(nbcx_ialltoall, nbcx_alltoall_init, sbuf, N, T, rbuf, N, T,
                 comm, &r);
        break;
    case 7:
        e = FOUR2(nbcx_igatherv, nbcx_gatherv_init,
                  (sbuf, rank + 1, T, rbuf, ic, id, T, 2, comm, &r),
                  (sbuf, rank + 1, T, rbuf, wc, wd, T, 2, comm, &r));
        break;
    case 8:
        e = FOUR2(nbcx_iscatterv, nbcx_scatterv_init,
                  (sbuf, ic, id, T, rbuf, rank + 1, T, 0, comm, &r),
                  (sbuf, wc, wd, T, rbuf, rank + 1, T, 0, comm, &r));
        break;
    case 9:
        e = FOUR2(nbcx_iallgatherv, nbcx_allgatherv_init,
                  (sbuf, rank + 1, T, rbuf, ic, id, T, comm, &r),
                  (sbuf, rank + 1, T, rbuf, wc, wd, T, comm, &r));
        break;
    case 10: /* every rank sends block i of i + 1 elements to rank i... */
        for (int i = 0; i < P; i++) { /* ...and receives rank + 1 each */
            sc[i] = wsc[i] = i + 1;
            rc[i] = wrc[i] = rank + 1;
            rd[i] = wrd[i] = (P - 1 - i) * (rank + 2);
        }
        e = FOUR2(nbcx_ialltoallv, nbcx_alltoallv_init,
                  (sbuf, sc, id, T, rbuf, rc, rd, T, comm, &r),
                  (sbuf, wsc, wd, T, rbuf, wrc, wrd, T, comm, &r));
        break;
    case 11: /* the same exchange as alltoallv with byte displacements */
        for (int i = 0; i < P; i++) {
            sc[i] = wsc[i] = i + 1;
            rc[i] = wrc[i] = rank + 1;
            rd[i] = (P - 1 - i) * (rank + 2) * (int)sizeof(int);
            prd[i] = rd[i];
        }
        e = FOUR2(nbcx_ialltoallw, nbcx_alltoallw_init,
                  (sbuf, sc, l->ibd, l->types, rbuf, rc, rd, l->types, comm,
                   &r),
                  (sbuf, wsc, l->pbd, l->types, rbuf, wrc, prd, l->types,
                   comm, &r));
        break;
    case 12:
        e = FOUR2(nbcx_ireduce_scatter, nbcx_reduce_scatter_init,
                  (sbuf, rbuf, ic, T, NBCX_SUM, comm, &r),
                  (sbuf, rbuf, wc, T, NBCX_SUM, comm, &r));
        break;
    case 13:
        e = FOUR(nbcx_ireduce_scatter_block, nbcx_reduce_scatter_block_init,
                 sbuf, rbuf, N, T, NBCX_SUM, comm, &r);
        break;
    case 14:
        e = FOUR(nbcx_iscan, nbcx_scan_init, sbuf, rbuf, N, T, NBCX_SUM, comm,
                 &r);
        break;
    case 15:
        e = FOUR(nbcx_iexscan, nbcx_exscan_init, sbuf, rbuf, N, T, NBCX_SUM,
                 comm, &r);
        break;
    case 16:
        e = FOUR(nbcx_ineighbor_allgather, nbcx_neighbor_allgather_init, sbuf,
                 N, T, rbuf, N, T, comm, &r);
        break;
    case 17:
        e = FOUR2(nbcx_ineighbor_allgatherv, nbcx_neighbor_allgatherv_init,
                  (sbuf, 2, T, rbuf, (const int[]){ 2, 2 }, nl->id, T, comm,
                   &r),
                  (sbuf, 2, T, rbuf, (const nbcx_count[]){ 2, 2 }, nl->wd,
                   T, comm, &r));
        break;
    case 18:
        e = FOUR(nbcx_ineighbor_alltoall, nbcx_neighbor_alltoall_init, sbuf,
                 N, T, rbuf, N, T, comm, &r);
        break;
    case 19: /* blocks of 1 and 2 elements both ways (the ring is
                symmetric: -1 sends to +1's block of the same size) */
        e = FOUR2(nbcx_ineighbor_alltoallv, nbcx_neighbor_alltoallv_init,
                  (sbuf, nl->ic, nl->id, T, rbuf, (const int[]){ 2, 1 },
                   nl->id, T, comm, &r),
                  (sbuf, nl->wc, nl->wd, T, rbuf,
                   (const nbcx_count[]){ 2, 1 }, nl->wd, T, comm, &r));
        break;
    case 20:
        e = FOUR2(nbcx_ineighbor_alltoallw, nbcx_neighbor_alltoallw_init,
                  (sbuf, nl->ic, nl->pbd, nl->types, rbuf,
                   (const int[]){ 2, 1 }, nl->pbd, nl->types, comm, &r),
                  (sbuf, nl->wc, nl->pbd, nl->types, rbuf,
                   (const nbcx_count[]){ 2, 1 }, nl->pbd, nl->types, comm,
                   &r));
        break;
    default:
        return NBCX_ERR_ARG;
    }
#undef FOUR
#undef FOUR2
    if (e != NBCX_SUCCESS)
        return e;
    if (init && (e = nbcx_start(&r)) != NBCX_SUCCESS)
        return e;
    e = nbcx_wait(&r);
    if (init) {
        int f2 = nbcx_request_free(&r);
        e = e ? e : f2;
    }
    return e;
}

struct result {
    int failures;
};

/* The refusals of counts nbcx cannot serve; then a collective that must
 * still match on every rank. */
static int refusals(nbcx_comm comm, int rank)
{
    int bad = 0;
    char buf[8] = { 0 };
    nbcx_request r = NBCX_REQUEST_NULL;
    /* counts whose sum no buffer holds (past LLONG_MAX) */
    nbcx_count counts[P] = { (nbcx_count)1 << 62, (nbcx_count)1 << 62,
                             (nbcx_count)1 << 62 };
    int e = nbcx_ireduce_scatter_c(buf, buf, counts, NBCX_BYTE, NBCX_BOR,
                                   comm, &r);
    if (e != NBCX_ERR_COUNT || r != NBCX_REQUEST_NULL) {
        fprintf(stderr, "rank %d: reduce_scatter_c of 3 x 2^62: %d\n", rank,
                e);
        bad++;
    }
    e = nbcx_iallreduce_c(buf, buf + 4, -1, NBCX_BYTE, NBCX_BOR, comm, &r);
    if (e != NBCX_ERR_COUNT || r != NBCX_REQUEST_NULL) {
        fprintf(stderr, "rank %d: allreduce_c of -1: %d\n", rank, e);
        bad++;
    }
    /* nothing was started: the next collective matches */
    int one = 1, sum = 0;
    e = nbcx_iallreduce_c(&one, &sum, 1, NBCX_INT32, NBCX_SUM, comm, &r);
    if (e == NBCX_SUCCESS)
        e = nbcx_wait(&r);
    if (e != NBCX_SUCCESS || sum != P) {
        fprintf(stderr, "rank %d: allreduce after the refusals: %d, %d\n",
                rank, e, sum);
        bad++;
    }
    return bad;
}

static int body(nbcx_comm comm, void *arg)
{
    struct result *res = arg;
    int rank, bad = 0;
    nbcx_comm_rank(comm, &rank);
    int dims[1] = { P }, periods[1] = { 1 };
    int e = nbcx_comm_set_cart(comm, 1, dims, periods);
    if (e != NBCX_SUCCESS) {
        fprintf(stderr, "rank %d: nbcx_comm_set_cart: %d\n", rank, e);
        return 1;
    }
    struct layout l, nl;
    make_layout(&l, P);
    make_layout(&nl, 2);
    int sbuf[LEN], rbuf[FORMS][LEN];
    for (int i = 0; i < LEN; i++)
        sbuf[i] = rank * 1000 + i;
    for (int op = 0; op < NOPS; op++) {
        for (int f = 0; f < FORMS; f++) {
            for (int i = 0; i < LEN; i++)
                rbuf[f][i] = SENTINEL;
            e = run(op, f, comm, rank, sbuf, rbuf[f], &l, &nl);
            if (e != NBCX_SUCCESS) {
                fprintf(stderr, "rank %d: %s form %d: %s\n", rank,
                        names[op], f, nbcx_error_string(e));
                bad++;
                continue;
            }
            if (f > 0 && memcmp(rbuf[f], rbuf[0], sizeof rbuf[0]) != 0) {
                int i = 0;
                while (rbuf[f][i] == rbuf[0][i])
                    i++;
                fprintf(stderr, "rank %d: %s form %d differs from the int "
                        "call at %d: %d, expected %d\n", rank, names[op], f,
                        i, rbuf[f][i], rbuf[0][i]);
                bad++;
            }
        }
        /* the int call did something, where this rank receives */
        bool moved = false, receives = !(op == 1 && rank != 2) &&
                                       !(op == 3 && rank != 0) &&
                                       !(op == 7 && rank != 2) &&
                                       !(op == 15 && rank == 0);
        for (int i = 0; i < LEN; i++)
            moved |= rbuf[0][i] != SENTINEL;
        if (!moved && receives) {
            fprintf(stderr, "rank %d: %s: nothing received\n", rank,
                    names[op]);
            bad++;
        }
    }
    bad += refusals(comm, rank);
    __atomic_add_fetch(&res->failures, bad, __ATOMIC_RELAXED);
    return bad ? 1 : 0;
}

int main(void)
{
    struct result res = { 0 };
    int err = nbcx_inproc_run(P, body, &res);
    if (err != NBCX_SUCCESS || res.failures) {
        printf("FAIL: %d failures (%s)\n", res.failures,
               nbcx_error_string(err));
        return 1;
    }
    printf("ok: %d collectives x 4 forms (i<op>, i<op>_c, <op>_init, "
           "<op>_init_c) agree on %d ranks; counts past LLONG_MAX and "
           "negative refused with NBCX_ERR_COUNT\n", NOPS, P);
    return 0;
}
