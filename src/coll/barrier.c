/*
 * barrier.c - barrier builders.
 *
 * dissemination (Hensgen, Finkel and Manber):
 * ceil(log2 p) rounds. In round k every rank sends a one-byte token to
 * (rank + 2^k) mod p and receives one from (rank - 2^k) mod p. After round
 * k a rank has heard, directly or through others, from the 2^(k+1) - 1
 * ranks before it, so after the last round it has heard from everyone.
 *
 * Dependencies: receives have no predecessors (each has its own byte, so
 * all are posted when the schedule starts). The send of round k waits for
 * the receive of round k - 1, which carries the knowledge gathered so
 * far, and for the send of round k - 1. Round k uses tag k.
 *
 * knomial: a fan-in to rank 0 and a fan-out from it on the k-nomial tree
 * of radix k = 2..8 (tree.h, a->radix; "knomial" is radix 4): 2 (p - 1)
 * one-byte messages in 2 ceil(log_k p) levels, against dissemination's
 * p ceil(log2 p) in ceil(log2 p) rounds. Every receive has its own byte
 * and no predecessor (posted at start): the tokens from the children
 * (tag 0) and the one from the parent (tag 1). The token to the parent
 * waits for every child's; the tokens to the children wait for the
 * parent's (at rank 0: for every child's), largest subtrees first.
 */
#include <string.h>

#include "coll.h"
#include "tree.h"

int nbcxi_build_barrier_dissemination(struct nbcx_sched_s *s,
                                     const struct nbcxi_coll_args *a)
{
    (void)a;
    const int p = s->build.size, rank = s->build.rank;
    if (p == 1)
        return s->build.err;

    int rounds = 0;
    for (long dist = 1; dist < p; dist <<= 1)
        rounds++;

    /* Byte 0 is the token every send reads; byte k + 1 receives round k.
     * Its value is never looked at, but it is defined. */
    struct nbcx_datatype_s *byte = nbcxi_type(NBCX_BYTE);
    unsigned char *tok = nbcxi_sched_tmp(s, (size_t)rounds + 1);
    if (!tok)
        return s->build.err;
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
    return s->build.err;
}

int nbcxi_build_barrier_knomial(struct nbcx_sched_s *s,
                                const struct nbcxi_coll_args *a)
{
    const int p = s->build.size, vr = s->build.rank;
    const int k = nbcxi_knomial_k(a->radix);
    if (p == 1)
        return s->build.err;
    enum { TAG_IN = 0, TAG_OUT = 1 };
    int nchild = 0;
    long top = nbcxi_knomial_top_mask(vr, p, k);
    for (long m = top; m > 0; m /= k)
        for (int d = 1; d < k && vr + d * m < p; d++)
            nchild++;

    /* Byte 0: the token every send reads; 1 .. nchild: the children's;
     * nchild + 1: the parent's. Never looked at, but defined. */
    struct nbcx_datatype_s *byte = nbcxi_type(NBCX_BYTE);
    unsigned char *tok = nbcxi_sched_tmp(s, (size_t)nchild + 2);
    if (!tok)
        return s->build.err;
    memset(tok, 0, (size_t)nchild + 2);

    /* At most (k - 1) ceil(log_k p) children: 77 for k = 8, p < 2^31. */
    nbcx_node in[128];
    int i = 0;
    for (long m = top; m > 0; m /= k)
        for (int d = 1; d < k && vr + d * m < p; d++, i++)
            in[i] = nbcxi_recv(s, tok + 1 + i, 1, byte, (int)(vr + d * m),
                               TAG_IN);
    nbcx_node go = -1; /* what the fan-out waits for */
    if (vr > 0) {
        int parent = nbcxi_knomial_parent(vr, k);
        nbcx_node up = nbcxi_send(s, tok, 1, byte, parent, TAG_IN);
        for (int j = 0; j < nchild; j++)
            nbcxi_dep(s, in[j], up);
        go = nbcxi_recv(s, tok + 1 + nchild, 1, byte, parent, TAG_OUT);
    }
    i = 0;
    for (long m = top; m > 0; m /= k)
        for (int d = 1; d < k && vr + d * m < p; d++, i++) {
            nbcx_node down = nbcxi_send(s, tok, 1, byte, (int)(vr + d * m),
                                        TAG_OUT);
            if (vr > 0)
                nbcxi_dep(s, go, down);
            else
                for (int j = 0; j < nchild; j++)
                    nbcxi_dep(s, in[j], down);
        }
    return s->build.err;
}
