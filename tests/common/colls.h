/*
 * colls.h - the eight basic collectives as the unit and in-process tests
 * name them, and the shared cases of the insignificant-arguments tests
 * (tests/unit/test_algorithms.c on loopback worlds, tests/inproc/
 * test_inproc.c on in-process ones), with the harness (harness.h).
 */
#ifndef NBCX_TEST_COLLS_H
#define NBCX_TEST_COLLS_H

#include <stdbool.h>
#include <stdint.h>

#include "harness.h"
#include "nbcx.h"

enum coll_id { C_BARRIER, C_BCAST, C_REDUCE, C_ALLREDUCE, C_GATHER, C_SCATTER,
               C_ALLGATHER, C_ALLTOALL, NCOLL };
static const char *const coll_names[NCOLL] = {
    "barrier", "bcast", "reduce", "allreduce", "gather", "scatter",
    "allgather", "alltoall",
};

/* Arguments MPI calls insignificant may be anything: a non-root's
 * receive side of reduce and gather, its send side of scatter. A case:
 * INSIG_P ranks, INSIG_N int32 per block, root INSIG_ROOT; rank r's data
 * r * 100 + i, every output word -1 at first. */
enum { INSIG_P = 5, INSIG_N = 3, INSIG_ROOT = 2 };
static const enum coll_id insig_colls[] = { C_REDUCE, C_GATHER, C_SCATTER };

static inline void insig_fill(int32_t in[][INSIG_P * INSIG_N],
                              int32_t out[][INSIG_P * INSIG_N])
{
    for (int r = 0; r < INSIG_P; r++)
        for (int i = 0; i < INSIG_P * INSIG_N; i++) {
            in[r][i] = r * 100 + i;
            out[r][i] = -1;
        }
}

/* Starts rank r's part of collective coll (reduce, gather or scatter)
 * with NULL buffers, a count of -7 and NBCX_DATATYPE_NULL where they are
 * insignificant. */
static inline int insig_start(enum coll_id coll, int r, int32_t *in,
                              int32_t *out, nbcx_comm c, nbcx_request *req)
{
    enum { N = INSIG_N, ROOT = INSIG_ROOT };
    bool root = r == ROOT;
    if (coll == C_REDUCE)
        return nbcx_ireduce(in, root ? out : NULL, N, NBCX_INT32, NBCX_SUM,
                            ROOT, c, req);
    if (coll == C_GATHER)
        return nbcx_igather(in, N, NBCX_INT32, root ? out : NULL,
                            root ? N : -7,
                            root ? NBCX_INT32 : NBCX_DATATYPE_NULL, ROOT, c,
                            req);
    return nbcx_iscatter(root ? in : NULL, root ? N : -7,
                         root ? NBCX_INT32 : NBCX_DATATYPE_NULL, out, N,
                         NBCX_INT32, ROOT, c, req);
}

/* Starts every rank's part (a check each, with alg in the message). */
static inline void insig_start_all(enum coll_id coll, const char *alg,
                                   int32_t in[][INSIG_P * INSIG_N],
                                   int32_t out[][INSIG_P * INSIG_N],
                                   const nbcx_comm c[], nbcx_request req[])
{
    for (int r = 0; r < INSIG_P; r++) {
        int err = insig_start(coll, r, in[r], out[r], c[r], &req[r]);
        CHECK(err == NBCX_SUCCESS, "%s/%s rank %d: %s", coll_names[coll],
              alg, r, nbcx_error_string(err));
    }
}

/* Wrong words of the results, once every rank completed. */
static inline int insig_wrong(enum coll_id coll,
                              int32_t out[][INSIG_P * INSIG_N])
{
    enum { P = INSIG_P, N = INSIG_N, ROOT = INSIG_ROOT };
    int bad = 0;
    for (int i = 0; i < N; i++) {
        if (coll == C_REDUCE) {
            int32_t sum = 0;
            for (int r = 0; r < P; r++)
                sum += r * 100 + i;
            bad += out[ROOT][i] != sum;
        } else {
            for (int r = 0; r < P; r++)
                bad += coll == C_GATHER
                           ? out[ROOT][r * N + i] != r * 100 + i
                           : out[r][i] != ROOT * 100 + r * N + i;
        }
    }
    return bad;
}

#endif /* NBCX_TEST_COLLS_H */
