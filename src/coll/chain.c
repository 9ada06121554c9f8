/* chain.c - the fragment of the pipelined chains (bcast.c, reduce.c),
 * and with it the chain's cost in the automatic choice (select.c): one
 * function both use, in a file of its own so that the builders do not
 * depend on the selection that names them.
 */
#include <stdint.h>

#include "coll.h"

/* The fragment of the pipelined chains (bcast, reduce). Chosen by the
 * user (or a rule of NBCX_TUNING): that one. Else on a node (up to
 * NBCXI_ON_NODE ranks, or every rank on this node by the transport: the
 * shared-memory model has 64 KiB fragments 2-3 times faster than the
 * small ones below on 8 ranks), the transport's; beyond a node, the one
 * select.c's cost_chain finds cheapest, f = sqrt(2 n G / (p - 1)) (the fill's (p - 1) / 2 f against the
 * steady state's n G / f), in whole KiB, at least 4 KiB and at most the
 * transport's: 8 KiB for 4 MiB on 64 ranks, where 64 KiB took 51 ms in
 * nbcx-sim and 8 KiB 39 ms (libnbc's chain, 32 KiB: 44 ms). Every rank
 * computes the same value (p, n and the segsize agree). */
static uint64_t isqrt(uint64_t x) /* floor(sqrt(x)), digit by digit */
{
    uint64_t r = 0, bit = (uint64_t)1 << 62;
    while (bit > x)
        bit >>= 2;
    for (; bit; bit >>= 2) {
        if (x >= r + bit) {
            x -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
    }
    return r;
}

size_t nbcxi_chain_segsize(const struct nbcx_sched_s *s,
                           const struct nbcxi_coll_args *a, size_t nbytes)
{
    const int p = s->build.size;
    if (!a->segsize_auto || p <= NBCXI_ON_NODE || s->build.comm->tp->one_node)
        return a->segsize;
    uint64_t f =
        isqrt(2 * (uint64_t)nbytes * NBCXI_GAP_BYTES / (uint64_t)(p - 1));
    size_t kib = ((size_t)f + 1023) / 1024 * 1024;
    kib = NBCXI_MAX(kib, (size_t)4096);
    return NBCXI_MIN(kib, a->segsize);
}
