/*
 * alltoall.c - alltoall: linear, pairwise and Bruck's algorithm.
 *
 * Linear. Every receive (from each peer straight into its block of rbuf)
 *   and every send (from the peer's block of the send data) is posted at
 *   start; the own block is copied locally. No dependencies at all.
 *
 * Pairwise. All receives are posted at start, but the sends go out one
 *   at a time: the send of step i, to rank + i, waits for the send of step
 *   i - 1, so each rank has one outgoing message in flight and the ranks
 *   pair up step by step instead of flooding one another.
 *
 * Bruck (log p rounds; for small blocks).
 *   The send data is copied into a byte scratch in rotated order: scratch
 *   block i is the block for rank (rank + i) mod p. In round k
 *   (dist = 2^k) the blocks whose index has bit k set are packed, sent to
 *   rank + dist, and replaced by the blocks received from rank - dist,
 *   which hold the same indices. Each block thus travels i ranks in
 *   total, and at the end scratch block i holds the block that rank - i
 *   sent here: it is copied to rbuf block rank - i (the inverse
 *   rotation).
 *   Dependencies: each round receives into its own scratch, so receives
 *   are posted at start. Packing a run of blocks waits for the nodes that
 *   last wrote those blocks (the rotation, or an unpacking of an earlier
 *   round); the send waits for its packing; unpacking a run waits for the
 *   receive and for the packing that read the run before. The final copy
 *   of each block waits for its last writer. Round k uses tag k.
 *
 * In place (a->in_place, sbuf NULL): the data to send is in rbuf, which
 * the receives overwrite. It is first copied to scratch, the sends read
 * the scratch, and every receive into rbuf waits for that copy (Bruck:
 * the rotation is that copy, and the final copies wait for it). The own
 * block then is in place already.
 *
 * Tags: linear and pairwise send one message per pair of ranks (tag 0).
 * Types: linear and pairwise send the user's blocks with the user's
 * types; Bruck moves packed bytes.
 */
#include <limits.h>
#include <stdlib.h>

#include "coll.h"
#include "tree.h"

static int mod(long x, int p)
{
    long r = x % p;
    return (int)(r < 0 ? r + p : r);
}

/* The data to send: sbuf, or (in place) a scratch copy of rbuf made by
 * node `saved`, which every node reading it or writing rbuf waits for. */
struct source {
    const void *buf;
    ptrdiff_t count; /* 64-bit: the _c calls' blocks */
    struct nbcx_datatype_s *type;
    nbcx_node saved; /* -1 when not in place */
};

/* Sets up the send data and copies the own block, if it must move. */
static int source_init(struct nbcx_sched_s *s, const struct nbcxi_coll_args *a,
                       struct source *src)
{
    const int p = s->build.size, rank = s->build.rank;
    if (!a->in_place) {
        *src = (struct source){ a->sbuf, a->scount, a->stype, -1 };
        nbcxi_copy(s, nbcxi_at(a->sbuf, rank, a->scount, a->stype),
                   a->scount, a->stype,
                   nbcxi_at(a->rbuf, rank, a->rcount, a->rtype), a->rcount,
                   a->rtype);
        return s->build.err;
    }
    ptrdiff_t n = (ptrdiff_t)p * a->rcount; /* may pass INT_MAX */
    void *tmp = nbcxi_sched_tmp_typed(s, n, a->rtype);
    nbcx_node cp = nbcxi_copy(s, a->rbuf, n, a->rtype, tmp, n, a->rtype);
    *src = (struct source){ tmp, a->rcount, a->rtype, cp };
    return s->build.err;
}

static const void *source_block(const struct source *src, int j)
{
    return nbcxi_at(src->buf, j, src->count, src->type);
}

/* What every alltoall does first: nothing for empty blocks; on one rank
 * only the own block moves (unless in place). Returns true when the
 * schedule is complete. */
static bool own_block_only(struct nbcx_sched_s *s,
                           const struct nbcxi_coll_args *a)
{
    if ((size_t)a->rcount * a->rtype->size == 0)
        return true;
    if (s->build.size > 1)
        return false;
    if (!a->in_place)
        nbcxi_copy(s, a->sbuf, a->scount, a->stype, a->rbuf, a->rcount,
                   a->rtype);
    return true;
}

/* Linear and pairwise differ only in whether sends wait for each other. */
static int build_direct(struct nbcx_sched_s *s,
                        const struct nbcxi_coll_args *a, bool chain_sends)
{
    const int p = s->build.size, rank = s->build.rank;
    if (own_block_only(s, a))
        return s->build.err;
    struct source src;
    int err = source_init(s, a, &src);
    if (err != NBCX_SUCCESS)
        return err;

    /* Receives in the order the pairwise sends arrive: rank - 1 first. */
    for (int i = 1; i < p; i++) {
        int from = mod((long)rank - i, p);
        nbcx_node rv = nbcxi_recv(s, nbcxi_at(a->rbuf, from, a->rcount,
                                              a->rtype),
                                  a->rcount, a->rtype, from, 0);
        nbcxi_dep(s, src.saved, rv);
    }
    nbcx_node prev = -1;
    for (int i = 1; i < p; i++) {
        int to = mod((long)rank + i, p);
        nbcx_node sn = nbcxi_send(s, source_block(&src, to), src.count,
                                  src.type, to, 0);
        nbcxi_dep(s, src.saved, sn);
        if (chain_sends)
            nbcxi_dep(s, prev, sn);
        prev = sn;
    }
    return s->build.err;
}

int nbcxi_build_alltoall_linear(struct nbcx_sched_s *s,
                               const struct nbcxi_coll_args *a)
{
    return build_direct(s, a, false);
}

int nbcxi_build_alltoall_pairwise(struct nbcx_sched_s *s,
                                 const struct nbcxi_coll_args *a)
{
    return build_direct(s, a, true);
}

/* ------------------------------------------------------------------ */
/* Bruck                                                               */
/* ------------------------------------------------------------------ */

/* Emits the rounds and the final copies; writer[i] is the node that last
 * wrote scratch block i, rot[0..1] the rotation copies. */
static void bruck_emit(struct nbcx_sched_s *s, const struct nbcxi_coll_args *a,
                       unsigned char *tmp, size_t B, nbcx_node *writer,
                       const nbcx_node rot[2])
{
    const int p = s->build.size, rank = s->build.rank;
    struct nbcx_datatype_s *byte = nbcxi_type(NBCX_BYTE);
    const ptrdiff_t nb = (ptrdiff_t)B;

    int k = 0;
    for (long dist = 1; dist < p; dist <<= 1, k++) {
        /* The blocks with bit k set: runs [i, i + dist) for odd i/dist. */
        ptrdiff_t nblocks = 0;
        for (long i = dist; i < p; i += 2 * dist)
            nblocks += NBCXI_MIN(dist, p - i);
        unsigned char *sbuf = nbcxi_sched_tmp(s, (size_t)nblocks * B);
        unsigned char *rbuf = nbcxi_sched_tmp(s, (size_t)nblocks * B);
        if (!sbuf || !rbuf)
            return;
        nbcx_node rv = nbcxi_recv(s, rbuf, nblocks * nb, byte,
                                  mod(rank - dist, p), k);
        nbcx_node sn = nbcxi_send(s, sbuf, nblocks * nb, byte,
                                  mod(rank + dist, p), k);

        size_t pos = 0; /* bytes packed so far */
        for (long i = dist; i < p; i += 2 * dist) {
            int n = (int)NBCXI_MIN(dist, p - i);
            unsigned char *run = tmp + (size_t)i * B;
            nbcx_node pk = nbcxi_copy(s, run, n * nb, byte, sbuf + pos,
                                      n * nb, byte);
            for (long j = i; j < i + n; j++) /* writers come in runs */
                if (j == i || writer[j] != writer[j - 1])
                    nbcxi_dep(s, writer[j], pk);
            nbcxi_dep(s, pk, sn);
            nbcx_node up = nbcxi_copy(s, rbuf + pos, n * nb, byte, run,
                                      n * nb, byte);
            nbcxi_dep(s, rv, up);
            nbcxi_dep(s, pk, up); /* the packing read the run first */
            for (long j = i; j < i + n; j++)
                writer[j] = up;
            pos += (size_t)n * B;
        }
    }

    /* Inverse rotation: scratch block i came from rank - i. */
    for (int i = 0; i < p; i++) {
        if (i == 0 && a->in_place)
            continue; /* the own block never left rbuf */
        int j = mod((long)rank - i, p);
        nbcx_node cp = nbcxi_copy(s, tmp + (size_t)i * B, nb, byte,
                                  nbcxi_at(a->rbuf, j, a->rcount, a->rtype),
                                  a->rcount, a->rtype);
        nbcxi_dep(s, writer[i], cp);
        if (a->in_place) { /* the rotation read rbuf */
            nbcxi_dep(s, rot[0], cp);
            nbcxi_dep(s, rot[1], cp);
        }
    }
}

int nbcxi_build_alltoall_bruck(struct nbcx_sched_s *s,
                              const struct nbcxi_coll_args *a)
{
    const int p = s->build.size, rank = s->build.rank;
    const size_t B = (size_t)a->rcount * a->rtype->size; /* block bytes */
    struct nbcx_datatype_s *byte = nbcxi_type(NBCX_BYTE);

    if (own_block_only(s, a))
        return s->build.err;

    /* The send data; in place it is in rbuf. */
    const void *sdata = a->in_place ? a->rbuf : a->sbuf;
    const ptrdiff_t scount = a->in_place ? a->rcount : a->scount;
    struct nbcx_datatype_s *stype = a->in_place ? a->rtype : a->stype;

    int err;
    unsigned char *tmp = nbcxi_bruck_scratch(s, B, &err);
    if (!tmp)
        return err;
    nbcx_node *writer = malloc(sizeof(nbcx_node) * (size_t)p);
    if (!writer)
        return NBCX_ERR_NOMEM;

    /* Rotation: send blocks rank .. p - 1 become scratch blocks
     * 0 .. p - rank - 1, blocks 0 .. rank - 1 the rest. */
    nbcx_node rot[2] = { -1, -1 };
    rot[0] = nbcxi_copy(s, nbcxi_at(sdata, rank, scount, stype),
                        (ptrdiff_t)(p - rank) * scount, stype, tmp,
                        (ptrdiff_t)(p - rank) * (ptrdiff_t)B, byte);
    if (rank > 0)
        rot[1] = nbcxi_copy(s, sdata, (ptrdiff_t)rank * scount, stype,
                            tmp + (size_t)(p - rank) * B,
                            (ptrdiff_t)rank * (ptrdiff_t)B, byte);
    for (int i = 0; i < p; i++)
        writer[i] = i < p - rank ? rot[0] : rot[1];

    bruck_emit(s, a, tmp, B, writer, rot);
    free(writer);
    return s->build.err;
}
