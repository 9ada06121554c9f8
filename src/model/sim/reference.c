/*
 * reference.c - the peers' choices in the simulator (nbcx-sim
 * --reference): for a call (collective, ranks, bytes), the algorithm that
 * MPICH's or Open MPI's nonblocking collective would run by default,
 * expressed as the nbcx algorithm that builds the same schedule, so that
 * it is simulated with the same parameters as nbcx's own choice.
 *
 * The rules were read (not copied) from:
 *  - MPICH: src/mpi/coll/coll_selection.json (pmodels/mpich, commit
 *    07f13b4514708bdcf17ba18981f6efce2fe8e75b), the "i" collectives'
 *    intra-communicator entries that the default CVARs (..._ALGORITHM =
 *    auto) select from;
 *  - Open MPI: ompi/mca/coll/libnbc/nbc_i*.c (open-mpi/ompi; the
 *    versions with the libnbc_<coll>_algorithm MCA parameters, i.e.
 *    Open MPI 4.1 and 5.0: nbc_iallreduce.c 0da975f6, nbc_ireduce_scatter.c
 *    02d6967d), their default branch (parameter 0).
 *
 * Calls as nbcx-sim makes them: not in place, a built-in commutative
 * operation (MPI_SUM) on 4-byte integers for the reductions, bytes for
 * the others; `bytes` is the buffer for bcast and the reductions, one
 * block for allgather, alltoall and reduce_scatter.
 *
 * Where nbcx has no algorithm for the peer's schedule, the answer says
 * so (NBCXI_SIM_REF_NONE, the peer's name kept) rather than substitute
 * one: a table shows the point as not modelled.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sim.h"
#include "coll/coll.h"

static const char *const peers[] = { "mpich", "openmpi-libnbc", NULL };

const char *nbcxi_sim_reference_name(int i)
{
    return i >= 0 && i < (int)(sizeof peers / sizeof *peers) ? peers[i]
                                                             : NULL;
}

static long long pof2_floor(long long p)
{
    long long k = 1;
    while (k * 2 <= p)
        k *= 2;
    return k;
}

static void set(struct nbcxi_sim_ref *r, int coll, const char *alg,
                size_t seg, int match, const char *peer_alg)
{
    r->coll = coll;
    r->alg = alg;
    r->segsize = seg;
    r->match = match;
    r->peer_alg = peer_alg;
}

enum { SAME = NBCXI_SIM_REF_SAME, VARIANT = NBCXI_SIM_REF_VARIANT,
       NONE = NBCXI_SIM_REF_NONE };

/* MPICH: coll_selection.json's ibarrier, ibcast, ireduce, iallreduce,
 * iallgather, ialltoall, ireduce_scatter (intra). */
static int mpich(int coll, long long p, size_t bytes,
                 struct nbcxi_sim_ref *r)
{
    const long long pof2 = pof2_floor(p);
    const bool is_pof2 = pof2 == p;
    const long long count = (long long)(bytes / 4); /* int32 reductions */
    const size_t total = bytes * (size_t)p;         /* blocks x ranks   */
    switch (coll) {
    case NBCXI_BARRIER:
        /* "recursive doubling": partners rank +- 2^k, ceil(log2 p)
         * rounds: the dissemination barrier */
        set(r, coll, "dissemination", 0, SAME, "recursive_doubling");
        return 0;
    case NBCXI_BCAST:
        if (p < 8 || bytes < 12288)
            set(r, coll, "binomial", 0, SAME, "binomial");
        else if (is_pof2 && bytes < 524288)
            /* binomial scatter from the farthest rank, allgather from
             * distance 1; nbcx's scatter_allgather runs the same two
             * phases in the other order (docs/results/scale) */
            set(r, coll, "scatter_allgather", 0, VARIANT,
                "scatter_recursive_doubling_allgather");
        else
            set(r, coll, NULL, 0, NONE, "scatter_ring_allgather");
        return 0;
    case NBCXI_REDUCE:
        if (bytes <= 2048 || count < pof2)
            set(r, coll, "binomial", 0, SAME, "binomial");
        else
            /* recursive halving from distance 1, binomial gather;
             * MPICH folds the odd ranks below 2*rem into rank - 1, nbcx
             * the even ones into rank + 1 */
            set(r, coll, "rabenseifner", 0, VARIANT, "reduce_scatter_gather");
        return 0;
    case NBCXI_ALLREDUCE:
        if (bytes <= 2048 || count < pof2)
            set(r, coll, "recursive_doubling", 0, SAME, "recursive_doubling");
        else
            set(r, coll, "rabenseifner", 0, SAME,
                "reduce_scatter_allgather");
        return 0;
    case NBCXI_ALLGATHER:
        if (is_pof2 && total < 524288)
            /* log2 p rounds of doubling blocks: Bruck's rounds and bytes
             * on a power of two (nbcx has no recursive-doubling
             * allgather) */
            set(r, coll, "bruck", 0, VARIANT, "recursive_doubling");
        else if (!is_pof2 && total < 81920)
            set(r, coll, "bruck", 0, SAME, "brucks");
        else
            set(r, coll, "ring", 0, SAME, "ring");
        return 0;
    case NBCXI_ALLTOALL:
        if (p >= 8 && bytes <= 2048)
            set(r, coll, "bruck", 0, SAME, "brucks");
        else if (bytes <= 32768)
            /* every send and receive posted at once */
            set(r, coll, "linear", 0, SAME, "permuted_sendrecv");
        else
            set(r, coll, "pairwise", 0, SAME, "pairwise");
        return 0;
    case NBCXI_REDUCE_SCATTER:
    case NBCXI_REDUCE_SCATTER_BLOCK:
        if (total < 524288)
            set(r, coll, "recursive_halving", 0, SAME, "recursive_halving");
        else
            set(r, coll, "pairwise", 0, SAME, "pairwise");
        return 0;
    default:
        return 1;
    }
}

/* Open MPI's libnbc: nbc_ibarrier.c, nbc_ibcast.c, nbc_ireduce.c,
 * nbc_iallreduce.c, nbc_iallgather.c, nbc_ialltoall.c,
 * nbc_ireduce_scatter(_block).c, default branches. */
static int libnbc(int coll, long long p, size_t bytes,
                  struct nbcxi_sim_ref *r)
{
    const long long pof2 = pof2_floor(p);
    const long long count = (long long)(bytes / 4);
    switch (coll) {
    case NBCXI_BARRIER:
        set(r, coll, "dissemination", 0, SAME, "dissemination");
        return 0;
    case NBCXI_BCAST:
        if (p <= 4)
            /* the root sends to every rank: the k-nomial tree of radix 4
             * on up to 4 ranks is that flat tree */
            set(r, coll, "knomial4", 0, SAME, "linear");
        else if (bytes < 65536)
            set(r, coll, "binomial", 0, SAME, "binomial");
        else if (bytes < 524288)
            set(r, coll, "chain", 8192, SAME, "chain");
        else
            set(r, coll, "chain", 32768, SAME, "chain");
        return 0;
    case NBCXI_REDUCE:
        if (p > 2 && count >= pof2)
            /* libnbc's fold exchanges halves of the vector between the
             * first 2*rem ranks (nbcx: the whole vector one way); the
             * halving and the gather are the same rounds and bytes */
            set(r, coll, "rabenseifner", 0, VARIANT, "redscat_gather");
        else if (p > 4 || bytes < 65536)
            set(r, coll, "binomial", 0, SAME, "binomial");
        else
            set(r, coll, "chain", 8192, SAME, "chain");
        return 0;
    case NBCXI_ALLREDUCE:
        if (p < 4 || bytes < 65536)
            /* binomial reduce to rank 0, binomial bcast */
            set(r, coll, "reduce_bcast", 0, SAME, "binomial");
        else if (count >= pof2)
            set(r, coll, "rabenseifner", 0, SAME, "redscat_allgather");
        else
            /* one block per step, not pipelined in fragments */
            set(r, coll, "ring", 0, VARIANT, "ring");
        return 0;
    case NBCXI_ALLGATHER:
        /* every rank sends its block to every other at once: nbcx's
         * allgatherv "linear" with equal blocks */
        set(r, NBCXI_ALLGATHERV, "linear", 0, SAME, "linear");
        return 0;
    case NBCXI_ALLTOALL:
        set(r, coll, "linear", 0, SAME, "linear");
        return 0;
    case NBCXI_REDUCE_SCATTER:
    case NBCXI_REDUCE_SCATTER_BLOCK:
        /* binomial reduce to rank 0, then the root sends every block */
        set(r, coll, "reduce_scatterv", 0, SAME, "binomial_reduce_scatter");
        return 0;
    default:
        return 1;
    }
}

int nbcxi_sim_reference(const char *peer, int coll, int ranks, size_t bytes,
                        struct nbcxi_sim_ref *out)
{
    memset(out, 0, sizeof *out);
    out->coll = coll;
    if (!peer)
        return -1;
    if (strcasecmp(peer, "mpich") == 0)
        return mpich(coll, ranks, bytes, out);
    if (strcasecmp(peer, "openmpi-libnbc") == 0)
        return libnbc(coll, ranks, bytes, out);
    return -1;
}
