/*
 * barrier.c - the dissemination barrier (Hensgen, Finkel and Manber).
 *
 * ceil(log2 p) rounds. In round k every rank sends a one-byte token to
 * (rank + 2^k) mod p and receives one from (rank - 2^k) mod p. After round
 * k a rank has heard, directly or through others, from the 2^(k+1) - 1
 * ranks before it, so after the last round it has heard from everyone.
 *
 * Dependencies: receives have no predecessors (each has its own byte, so
 * all are posted when the schedule starts). The send of round k waits for
 * the receive of round k - 1, which carries the knowledge gathered so
 * far, and for the send of round k - 1. Round k uses tag k.
 */
#include <string.h>

#include "coll.h"

int nbcxi_build_barrier_dissemination(struct nbcx_sched_s *s,
                                     const struct nbcxi_coll_args *a)
{
    (void)a;
    const int p = s->size, rank = s->rank;
    if (p == 1)
        return s->err;

    int rounds = 0;
    for (long dist = 1; dist < p; dist <<= 1)
        rounds++;

    /* Byte 0 is the token every send reads; byte k + 1 receives round k.
     * Its value is never looked at, but it is defined. */
    struct nbcx_datatype_s *byte = nbcxi_type(NBCX_BYTE);
    unsigned char *tok = nbcxi_sched_tmp(s, (size_t)rounds + 1);
    if (!tok)
        return s->err;
    memset(tok, 0, (size_t)rounds + 1);

    nbcx_node prev_send = -1, prev_recv = -1;
    long dist = 1;
    for (int k = 0; k < rounds; k++, dist <<= 1) {
        int to = (int)((rank + dist) % p);
        int from = (int)((rank - dist + p) % p);
        nbcx_node rv = nbcxi_recv(s, tok + k + 1, 1, byte, from, k);
        nbcx_node sn = nbcxi_send(s, tok, 1, byte, to, k);
        nbcxi_dep(s, prev_recv, sn);
        nbcxi_dep(s, prev_send, sn);
        prev_send = sn;
        prev_recv = rv;
    }
    return s->err;
}
