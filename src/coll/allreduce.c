/*
 * allreduce.c - allreduce by recursive doubling, by a ring, and by a
 * binomial reduce followed by a binomial bcast.
 *
 * Recursive doubling (any operation, any p; MPICH's algorithm).
 *   Let pof2 be the largest power of two <= p and rem = p - pof2. First
 *   the remainder is folded away: each even rank below 2*rem sends its
 *   data to rank + 1, which reduces it (rank's data first) and joins the
 *   doubling with new rank rank/2; ranks from 2*rem on join as
 *   rank - rem. In round k of the doubling a rank exchanges its running
 *   result with new rank ^ 2^k and combines the two in rank order (lower
 *   partner's data on the left), so non-commutative operations keep MPI's
 *   order. At the end the odd ranks below 2*rem return the result to their
 *   even neighbour.
 *   Dependencies: the send of round k waits for the node that produced
 *   the running result in round k - 1; the receive of round k goes to its
 *   own scratch buffer, so it is posted at start (above a scratch budget
 *   two buffers alternate, and a receive then waits until the data of two
 *   rounds before has been consumed); a node that overwrites rbuf waits
 *   for the send that still reads it. Nothing is copied into rbuf before
 *   it is needed: a rank that only forwards sends straight from sbuf.
 *
 * Ring (commutative operations only).
 *   The vector is cut into p blocks of near-equal element counts, and
 *   each block into fragments of a->segsize bytes, at least RING_SEG
 *   unless the user chose the size (see below). A reduce-scatter ring
 *   (p - 1 steps: at step i send block rank - i to the right, receive
 *   block rank - i - 1 from the left and add the own contribution) leaves
 *   rank with the full result of block rank + 1; an allgather ring
 *   (p - 1 steps: send block rank + 1 - i, receive block rank - i into
 *   rbuf) then spreads the results.
 *   Dependencies, per fragment: reduce-scatter receives go to scratch
 *   and are posted at start; a partial sum is computed in the scratch as
 *   soon as its fragment arrives and forwarded from there, so fragments
 *   pipeline around the ring. Only the rank's final block is reduced
 *   into rbuf. Allgather receives go straight to rbuf, waiting only for
 *   the nodes of the reduce-scatter that read that part of rbuf (in
 *   place); each is forwarded as soon as it arrives. Empty blocks (count
 *   < p) have no fragments and no messages, and the builder does not
 *   even visit them: a rank's build time grows with its own messages, not
 *   with p (at 100,000 ranks and count 1 the whole ring is built in well
 *   under a second instead of minutes).
 *   Tags: the k-th message in each direction uses tag k mod
 *   (NBCX_SCHED_TAG_MAX + 1); once tags wrap, a message also waits for
 *   the previous one with the same tag, so same-tag messages always start
 *   in the same order on both sides.
 *
 * Reduce + bcast (any operation).
 *   The binomial reduction to rank 0 (reduce.c), then the binomial
 *   broadcast of the result from rank 0 (bcast.c) on the same schedule:
 *   2 ceil(log2 p) steps instead of ceil(log2 p), but a tree, so in split
 *   progress mode its lowest levels run on the application thread and the
 *   narrow upper part on the progress thread (see the builder below).
 */
#include <limits.h>
#include <stdlib.h>

#include "coll.h"

enum {
    NTAGS = NBCX_SCHED_TAG_MAX + 1,
    TAG_FOLD = 64,   /* recursive doubling: remainder rank -> neighbour */
    TAG_UNFOLD = 65, /* recursive doubling: result back to it */
};

/* Recursive doubling keeps one scratch buffer per round up to this many
 * bytes in all; above it two buffers are used in turn. */
#define RD_SCRATCH_BUDGET ((size_t)1 << 20)

/* The ring's smallest fragment when the user chose none. Its fragments
 * pipeline a reduction behind a transfer, and each costs a message; at
 * 64 KiB the messages cost more than the pipelining gains, on both media
 * (2 ranks, 1-4 MiB, MPI transport, session 14, docs/results/ucx):
 * - through an emulated full-duplex 1 Gbit/s switch, MPICH (over UCX's
 *   TCP) took 1.15-1.5x its native allreduce with 64 KiB fragments and
 *   1.00-1.05x with 256 KiB: each message's rendezvous queues behind the
 *   other direction's data;
 * - on shared memory 256 KiB took 0.75-0.95x the time of 64 KiB, with
 *   both MPIs;
 * - on 4 ranks through the switch (Open MPI) 256 KiB was as fast or
 *   faster. The chain broadcast, whose fragments fill a pipeline of p - 1
 *   hops, keeps 64 KiB: there 256 KiB took 1.1-2x longer. */
#define RING_SEG ((size_t)256 << 10)

/* ------------------------------------------------------------------ */
/* Recursive doubling                                                  */
/* ------------------------------------------------------------------ */

/* The running result of recursive doubling: it is in sbuf until the
 * first node writes rbuf, then in rbuf. `ready` is the node that last
 * wrote rbuf (the running result), or -1 while nothing has. */
struct rd_result {
    const void *at;
    nbcx_node ready;
};

/* rbuf = in op rbuf, where `in` holds the LOWER ranks' data and was
 * received by node rv; `reader` (or -1) is a send that still reads rbuf.
 * Returns the reduce node, which also consumes `in`. */
static nbcx_node rd_reduce_lower(struct nbcx_sched_s *s,
                                 const struct nbcxi_coll_args *a,
                                 struct rd_result *res, const void *in,
                                 nbcx_node rv, nbcx_node reader)
{
    const int count = a->rcount;
    if (res->at != a->rbuf) {
        /* First write of rbuf: it must hold this rank's data. */
        res->ready = nbcxi_copy(s, a->sbuf, count, a->rtype, a->rbuf, count,
                                a->rtype);
        res->at = a->rbuf;
    }
    nbcx_node red = nbcxi_reduce_node(s, in, a->rbuf, count, a->rtype, a->op);
    nbcxi_dep(s, rv, red);
    nbcxi_dep(s, res->ready, red);
    nbcxi_dep(s, reader, red);
    res->ready = red;
    return red;
}

/* rbuf = running result op buf, where buf holds the HIGHER ranks' data
 * and was received by node rv. Computed in buf, then copied to rbuf.
 * Returns the copy, the last node that reads buf. */
static nbcx_node rd_reduce_higher(struct nbcx_sched_s *s,
                                  const struct nbcxi_coll_args *a,
                                  struct rd_result *res, void *buf,
                                  nbcx_node rv, nbcx_node reader)
{
    const int count = a->rcount;
    nbcx_node red = nbcxi_reduce_node(s, res->at, buf, count, a->rtype,
                                      a->op);
    nbcxi_dep(s, rv, red);
    nbcxi_dep(s, res->ready, red);
    nbcx_node cp = nbcxi_copy(s, buf, count, a->rtype, a->rbuf, count,
                              a->rtype);
    nbcxi_dep(s, red, cp);
    nbcxi_dep(s, res->ready, cp); /* previous write of rbuf, if any */
    nbcxi_dep(s, reader, cp);
    res->at = a->rbuf;
    res->ready = cp;
    return cp;
}

int nbcxi_build_allreduce_recursive_doubling(struct nbcx_sched_s *s,
                                            const struct nbcxi_coll_args *a)
{
    const int p = s->build.size, rank = s->build.rank, count = a->rcount;
    struct nbcx_datatype_s *t = a->rtype;
    void *rbuf = a->rbuf;
    const bool in_place = a->sbuf == a->rbuf;

    if (count == 0)
        return s->build.err;
    if (p == 1) {
        if (!in_place)
            nbcxi_copy(s, a->sbuf, count, t, rbuf, count, t);
        return s->build.err;
    }

    int rounds;
    const int pof2 = nbcxi_pof2_floor(p, &rounds);
    const int rem = p - pof2;
    struct rd_result res = { in_place ? rbuf : a->sbuf, -1 };
    int newrank;

    /* Fold the remainder: even ranks below 2*rem hand their data to the
     * odd neighbour and wait for the result. */
    if (rank < 2 * rem) {
        if (rank % 2 == 0) {
            nbcx_node sn = nbcxi_send(s, res.at, count, t, rank + 1, TAG_FOLD);
            nbcx_node rv = nbcxi_recv(s, rbuf, count, t, rank + 1,
                                      TAG_UNFOLD);
            if (in_place)
                nbcxi_dep(s, sn, rv); /* the send reads rbuf */
            return s->build.err;
        }
        void *in = nbcxi_sched_tmp_typed(s, count, t);
        nbcx_node rv = nbcxi_recv(s, in, count, t, rank - 1, TAG_FOLD);
        rd_reduce_lower(s, a, &res, in, rv, -1);
        newrank = rank / 2;
    } else {
        newrank = rank - rem;
    }

    /* Scratch for the received data: one buffer per round, or two used in
     * turn; busy[j] is the last node reading buffer j. */
    ptrdiff_t shift;
    size_t span = nbcxi_type_span(t, count, &shift);
    int nbuf = rounds;
    if (rounds > 2 && span > RD_SCRATCH_BUDGET / (size_t)rounds)
        nbuf = 2;
    void *bufs[32];
    nbcx_node busy[32];
    for (int j = 0; j < nbuf; j++) {
        bufs[j] = nbcxi_sched_tmp_typed(s, count, t);
        busy[j] = -1;
    }
    if (s->build.err)
        return s->build.err;

    for (int k = 0; k < rounds; k++) {
        int newpeer = newrank ^ (1 << k);
        int peer = newpeer < rem ? 2 * newpeer + 1 : newpeer + rem;
        int j = k % nbuf;

        nbcx_node sn = nbcxi_send(s, res.at, count, t, peer, k);
        nbcxi_dep(s, res.ready, sn);
        nbcx_node rv = nbcxi_recv(s, bufs[j], count, t, peer, k);
        nbcxi_dep(s, busy[j], rv);

        /* Overwriting rbuf must wait for this send if it reads rbuf. */
        nbcx_node reader = res.at == rbuf ? sn : -1;
        if (peer < rank || a->op->commutative)
            busy[j] = rd_reduce_lower(s, a, &res, bufs[j], rv, reader);
        else
            busy[j] = rd_reduce_higher(s, a, &res, bufs[j], rv, reader);
    }

    /* Unfold: return the result to the even neighbour. */
    if (rank < 2 * rem) {
        nbcx_node sn = nbcxi_send(s, rbuf, count, t, rank - 1, TAG_UNFOLD);
        nbcxi_dep(s, res.ready, sn);
    }
    return s->build.err;
}

/* ------------------------------------------------------------------ */
/* Ring                                                                */
/* ------------------------------------------------------------------ */

/* The messages of one direction of the ring, numbered in creation order:
 * message k uses tag k % NTAGS. When tags wrap, message k also waits for
 * message k - NTAGS, so same-tag messages start in creation order on both
 * sides and match correctly. */
struct chan {
    nbcx_node *last; /* latest node per tag; NULL if tags cannot wrap */
    long n;          /* messages so far */
};

static int chan_init(struct chan *c, long total)
{
    c->n = 0;
    c->last = NULL;
    if (total > NTAGS && !(c->last = malloc(NTAGS * sizeof *c->last)))
        return NBCX_ERR_NOMEM;
    return NBCX_SUCCESS;
}

static nbcx_node chan_add(struct nbcx_sched_s *s, struct chan *c, bool send,
                          const void *buf, int count,
                          struct nbcx_datatype_s *t, int peer)
{
    int tag = (int)(c->n % NTAGS);
    nbcx_node node = send ? nbcxi_send(s, buf, count, t, peer, tag)
                          : nbcxi_recv(s, (void *)(uintptr_t)buf, count, t,
                                       peer, tag);
    if (c->last) {
        if (c->n >= NTAGS)
            nbcxi_dep(s, c->last[tag], node);
        c->last[tag] = node;
    }
    c->n++;
    return node;
}

/* The ring's cut of the vector: p blocks of near-equal element counts
 * (the first r = count % p blocks hold q + 1 = count / p + 1 elements,
 * the others q), each cut into fragments of seg elements. Fragments are
 * numbered globally: block b has fragments ring_first(b) ..
 * ring_first(b + 1) - 1, fa fragments for each of the first r blocks and
 * fb for each of the others. Everything is O(1) per block: with count <
 * p only the first count blocks are non-empty, and a rank's loops visit
 * only the steps that touch them (ring_steps), so a rank's build time
 * grows with its messages, not with p. */
struct ring {
    int count, p, q, r;
    size_t seg;
    long fa, fb;
};

static int ring_first(const struct ring *R, int b)
{
    long lo = b < R->r ? b : R->r;
    return (int)(lo * R->fa + (long)(b - lo) * R->fb);
}

static void ring_block(const struct ring *R, int b, int *off, int *n)
{
    *off = b * R->q + (b < R->r ? b : R->r);
    *n = R->q + (b < R->r ? 1 : 0);
}

/* Fragment g (of block b): its first element and element count. */
static void ring_fragment(const struct ring *R, int b, int g, int *off,
                          int *n)
{
    int boff, bn;
    ring_block(R, b, &boff, &bn);
    size_t skip = (size_t)(g - ring_first(R, b)) * R->seg;
    *off = boff + (int)skip;
    *n = (int)NBCXI_MIN(R->seg, (size_t)bn - skip);
}

static int mod(long x, int p)
{
    long r = x % p;
    return (int)(r < 0 ? r + p : r);
}

/* The steps i in [0, p - 2] of a ring loop in which the block sent or
 * the block received is non-empty, in increasing order (so messages keep
 * their creation order and tags): the non-empty blocks are 0 .. ne - 1,
 * and a loop whose block sent at step i is (base - i) mod p and block
 * received (base - 1 - i) mod p touches them exactly in the steps
 * (base - ne) .. base, taken mod p. That is at most two ranges: the
 * steps 0 .. n0 - 1 and then start .. start + len - n0 - 1. Steps left
 * out would emit nothing. */
struct steps {
    int len, n0, start;
};

static void ring_steps(int p, int ne, long base, struct steps *st)
{
    if (ne + 1 >= p) { /* every step */
        st->len = st->n0 = p - 1;
        st->start = 0;
        return;
    }
    int a = mod(base - ne, p), b = mod(base, p);
    if (a <= b) { /* a .. b, without step p - 1 */
        st->n0 = 0;
        st->start = a;
        st->len = NBCXI_MIN(b, p - 2) - a + 1;
        if (st->len < 0)
            st->len = 0;
    } else { /* wraps: 0 .. b, then a .. p - 2 */
        st->n0 = b + 1;
        st->start = a;
        st->len = st->n0 + (p - 1 - a);
    }
}

/* The j-th of the steps (0 <= j < st->len). */
static int ring_step(const struct steps *st, int j)
{
    return j < st->n0 ? j : st->start + (j - st->n0);
}

/* Emits the two rings, given the cut R and the bookkeeping arrays. */
static void ring_emit(struct nbcx_sched_s *s, const struct nbcxi_coll_args *a,
                      const struct ring *R, nbcx_node *ready,
                      nbcx_node *reader, struct chan *out, struct chan *in)
{
    const int p = s->build.size, rank = s->build.rank;
    struct nbcx_datatype_s *t = a->rtype;
    void *rbuf = a->rbuf;
    const bool in_place = a->sbuf == a->rbuf;
    const void *mine = a->sbuf; /* this rank's contribution */
    void *tmp = nbcxi_sched_tmp_typed(s, a->rcount, t);
    if (!tmp)
        return;
    const int right = mod(rank + 1L, p), left = mod(rank - 1L, p);
    const int owned = right; /* the block whose full result ends here */
    const int ne = R->q > 0 ? p : R->r; /* non-empty blocks: 0 .. ne - 1 */
    int o, n;
    struct steps st;

    /* Reduce-scatter. */
    ring_steps(p, ne, rank, &st);
    for (int j = 0; j < st.len; j++) {
        const int i = ring_step(&st, j);
        int sb = mod((long)rank - i, p), rb = mod((long)rank - i - 1, p);
        for (int g = ring_first(R, sb); g < ring_first(R, sb + 1); g++) {
            ring_fragment(R, sb, g, &o, &n);
            /* Step 0 sends the own data, later steps a partial result. */
            const void *src = nbcxi_at(i == 0 ? mine : tmp, o, 1, t);
            nbcx_node sn = chan_add(s, out, true, src, n, t, right);
            nbcxi_dep(s, ready[g], sn);
            if (i == 0 && in_place)
                reader[g] = sn;
        }
        for (int g = ring_first(R, rb); g < ring_first(R, rb + 1); g++) {
            ring_fragment(R, rb, g, &o, &n);
            void *part = nbcxi_at(tmp, o, 1, t);
            nbcx_node rv = chan_add(s, in, false, part, n, t, left);
            nbcx_node red;
            if (rb == owned) {
                /* The full sum goes to rbuf, which must hold our data. */
                void *dst = nbcxi_at(rbuf, o, 1, t);
                nbcx_node cp = -1;
                if (!in_place)
                    cp = nbcxi_copy(s, nbcxi_at(mine, o, 1, t), n, t, dst, n,
                                    t);
                red = nbcxi_reduce_node(s, part, dst, n, t, a->op);
                nbcxi_dep(s, cp, red);
            } else {
                /* A partial sum, computed where it arrived. */
                red = nbcxi_reduce_node(s, nbcxi_at(mine, o, 1, t), part, n,
                                        t, a->op);
                if (in_place)
                    reader[g] = red;
            }
            nbcxi_dep(s, rv, red);
            ready[g] = red;
        }
    }

    /* Allgather. */
    ring_steps(p, ne, rank + 1L, &st);
    for (int j = 0; j < st.len; j++) {
        const int i = ring_step(&st, j);
        int sb = mod((long)rank + 1 - i, p), rb = mod((long)rank - i, p);
        for (int g = ring_first(R, sb); g < ring_first(R, sb + 1); g++) {
            ring_fragment(R, sb, g, &o, &n);
            nbcx_node sn = chan_add(s, out, true, nbcxi_at(rbuf, o, 1, t), n,
                                    t, right);
            nbcxi_dep(s, ready[g], sn);
        }
        for (int g = ring_first(R, rb); g < ring_first(R, rb + 1); g++) {
            ring_fragment(R, rb, g, &o, &n);
            nbcx_node rv = chan_add(s, in, false, nbcxi_at(rbuf, o, 1, t), n,
                                    t, left);
            nbcxi_dep(s, reader[g], rv);
            ready[g] = rv;
        }
    }
}

int nbcxi_build_allreduce_ring(struct nbcx_sched_s *s,
                              const struct nbcxi_coll_args *a)
{
    const int p = s->build.size, count = a->rcount;
    struct nbcx_datatype_s *t = a->rtype;

    if (!a->op->commutative)
        return NBCX_ERR_INTERN; /* select.c never picks the ring then */
    if (count == 0)
        return s->build.err;
    if (p == 1) {
        if (a->sbuf != a->rbuf)
            nbcxi_copy(s, a->sbuf, count, t, a->rbuf, count, t);
        return s->build.err;
    }

    struct ring R = { count, p, count / p, count % p, 0, 0, 0 };
    size_t seg = a->segsize_auto ? NBCXI_MAX(a->segsize, (size_t)RING_SEG)
                                 : a->segsize;
    R.seg = t->size ? seg / t->size : (size_t)count;
    R.seg = NBCXI_MIN(NBCXI_MAX(R.seg, (size_t)1), (size_t)count);
    R.fa = (long)(((size_t)R.q + 1 + R.seg - 1) / R.seg);
    R.fb = (long)(((size_t)R.q + R.seg - 1) / R.seg);
    const int nfrag = ring_first(&R, p);

    /* ready[g]: the node that produced the current value of fragment g.
     * reader[g]: (in place) the last reduce-scatter node that reads
     * fragment g of rbuf; the allgather receive into it waits for it. */
    nbcx_node *ready = malloc(sizeof(nbcx_node) * 2 * (size_t)nfrag);
    struct chan out = { NULL, 0 }, in = { NULL, 0 };
    int err = ready ? NBCX_SUCCESS : NBCX_ERR_NOMEM;
    if (err == NBCX_SUCCESS)
        err = chan_init(&out, 2L * nfrag);
    if (err == NBCX_SUCCESS)
        err = chan_init(&in, 2L * nfrag);
    if (err == NBCX_SUCCESS) {
        for (size_t g = 0; g < 2 * (size_t)nfrag; g++)
            ready[g] = -1;
        ring_emit(s, a, &R, ready, ready + nfrag, &out, &in);
        err = s->build.err;
    }
    free(out.last);
    free(in.last);
    free(ready);
    return err;
}

/* ------------------------------------------------------------------ */
/* Binomial reduce to rank 0, then binomial bcast from it              */
/* ------------------------------------------------------------------ */

/* The reduce builder (reduce.c) to root 0 fills the first nodes, the
 * bcast builder (bcast.c) from root 0 the rest; both annotate their tree
 * levels (up, then down), which is what split-tree progress needs: the
 * lowest levels of the reduction run inside the start call, those of the
 * broadcast inside the wait. Rooted at rank 0 the reduction keeps MPI's
 * order for non-commutative operations without an extra hop, and both
 * phases use the same tree, so no message goes the same way between two
 * ranks twice (tag 0 for both is safe).
 * Joining the phases: the bcast nodes without a predecessor are the
 * root's sends of the result and the others' receive into rbuf. A send
 * waits for every sink of the reduce part (at rank 0 the node that left
 * the result in rbuf). A receive waits for them only in place, where the
 * reduce part reads sbuf == rbuf (its sends and reductions); otherwise
 * the reduce part never touches rbuf off rank 0, and the receive is
 * posted at start. */
int nbcxi_build_allreduce_reduce_bcast(struct nbcx_sched_s *s,
                                      const struct nbcxi_coll_args *a)
{
    struct nbcxi_coll_args r = *a;
    r.root = 0;
    /* (the schedule may hold nodes before these: the pieces of a count
     * above INT_MAX, coll/select.c) */
    const int start = s->build.nnodes, first_edge = s->build.nedges;
    nbcxi_build_reduce_binomial(s, &r);
    int mid = s->build.nnodes;
    nbcxi_build_bcast_binomial(s, &r);
    if (s->build.err)
        return s->build.err;

    /* Sinks of the reduce part: among the edges of the two builders,
     * not the joining ones added below. */
    int nedges = s->build.nedges;
    bool *has_succ = calloc((size_t)(mid - start + 1), sizeof(bool));
    if (!has_succ)
        return NBCX_ERR_NOMEM;
    for (int e = first_edge; e < nedges; e++) {
        nbcx_node from = s->build.edges[e].from;
        if (from >= start && from < mid)
            has_succ[from - start] = true;
    }
    bool in_place = a->sbuf == a->rbuf;
    for (nbcx_node b = mid; b < s->build.nnodes; b++) {
        if (s->build.nodes[b].npred > 0 ||
            (s->build.nodes[b].kind == NBCXI_NODE_RECV && !in_place))
            continue;
        for (nbcx_node n = start; n < mid; n++)
            if (!has_succ[n - start])
                nbcxi_dep(s, n, b);
    }
    free(has_succ);
    return s->build.err;
}

/* ------------------------------------------------------------------ */
/* Rabenseifner: reduce-scatter by recursive halving, then allgather   */
/* by recursive doubling                                               */
/* ------------------------------------------------------------------ */

/* Tags of Rabenseifner's rounds: reduce-scatter round k uses tag k, the
 * allgather round k tag RAB_AG + k (k < 31); the fold uses TAG_FOLD and
 * TAG_UNFOLD as recursive doubling does. */
enum { RAB_AG = 32 };

/* Where the running partial result of Rabenseifner's reduce-scatter is:
 * element e of the vector (within the range the rank still keeps) is at
 * nbcxi_at(base, e - first, 1, t). It starts in sbuf (read only), moves
 * to rbuf at the first reduction, or to a scratch round buffer when a
 * non-commutative operation must combine into the higher ranks' data. */
enum { AT_SBUF, AT_RBUF, AT_TMP };
struct rab_acc {
    char *base;
    int first;
    nbcx_node ready; /* the node that last wrote it (-1: none) */
    int where;
};

/* First element of block b when count elements are cut into pof2 blocks
 * of near-equal counts. */
static int rab_off(int count, int pof2, int b)
{
    int q = count / pof2, r = count % pof2;
    return b * q + (b < r ? b : r);
}

/* The state Rabenseifner's reduce-scatter leaves for the second phase
 * (the allgather of allreduce, the gather of reduce). */
struct rab_state {
    int rounds, pof2, rem, newrank;
    bool out;          /* an even rank below 2*rem: folded away */
    nbcx_node fold_sn; /* its send of its data (out only) */
    int lo, hi;        /* the blocks this rank holds reduced, in W */
    nbcx_node final;   /* the node that left them in W */
    int peers[32], slo[32], shi[32];
    nbcx_node ag_dep[32]; /* what a receive of round k's half into W waits
                           * for: the last node of the reduce-scatter
                           * that read or wrote that part of W */
};

/* The fold and the reduce-scatter by recursive halving, accumulating into
 * W (count elements of the call's type; allreduce: rbuf; reduce: rbuf at
 * the root, scratch elsewhere). sbuf is only read; sbuf == W is in place.
 * Any operation: the partial results are combined in rank order. Needs
 * count > 0 and p > 1. */
static int rab_reduce_scatter(struct nbcx_sched_s *s,
                              const struct nbcxi_coll_args *a, char *W,
                              struct rab_state *st)
{
    const int p = s->build.size, rank = s->build.rank, count = a->rcount;
    struct nbcx_datatype_s *t = a->rtype;
    char *rbuf = W;
    const bool in_place = a->sbuf == W;
    const bool comm = a->op->commutative;

    st->pof2 = nbcxi_pof2_floor(p, &st->rounds);
    const int pof2 = st->pof2, rounds = st->rounds;
    const int rem = st->rem = p - pof2;
    struct rab_acc acc = { in_place ? rbuf : (char *)(uintptr_t)a->sbuf, 0,
                           -1, in_place ? AT_RBUF : AT_SBUF };
    int newrank;
    st->out = false;
    st->fold_sn = -1;

    /* Fold the remainder (as recursive doubling): even ranks below 2*rem
     * hand their data to the odd neighbour (and wait for the result). */
    if (rank < 2 * rem) {
        if (rank % 2 == 0) {
            st->out = true;
            st->newrank = -1;
            st->fold_sn = nbcxi_send(s, acc.base, count, t, rank + 1,
                                     TAG_FOLD);
            return s->build.err;
        }
        void *in = nbcxi_sched_tmp_typed(s, count, t);
        nbcx_node rv = nbcxi_recv(s, in, count, t, rank - 1, TAG_FOLD);
        nbcx_node cp = in_place ? -1
                                : nbcxi_copy(s, a->sbuf, count, t, rbuf,
                                             count, t);
        nbcx_node red = nbcxi_reduce_node(s, in, rbuf, count, t, a->op);
        nbcxi_dep(s, rv, red);
        nbcxi_dep(s, cp, red);
        acc = (struct rab_acc){ rbuf, 0, red, AT_RBUF };
        newrank = rank / 2;
    } else {
        newrank = rank - rem;
    }
    st->newrank = newrank;

    /* rb_last: the last node of the reduce-scatter chain that read or
     * wrote W. */
    nbcx_node rb_last = acc.where == AT_RBUF ? acc.ready : -1;
    /* Round buffers: round k receives the partner's half of the range
     * this rank keeps, into its own part of one scratch (about count
     * elements: the halves shrink), so every receive is posted at start. */
    long need = 0;
    for (int k = 0, l = 0, h = pof2; k < rounds; k++) {
        int mid = l + (h - l) / 2;
        if (newrank & (1 << k))
            l = mid;
        else
            h = mid;
        need += rab_off(count, pof2, h) - rab_off(count, pof2, l);
    }
    char *tmp = nbcxi_sched_tmp_typed(s, (int)NBCXI_MAX(need, 1L), t);
    if (s->build.err)
        return s->build.err;
    int toff = 0, lo = 0, hi = pof2;

    for (int k = 0; k < rounds; k++) {
        int newpeer = newrank ^ (1 << k);
        int peer = newpeer < rem ? 2 * newpeer + 1 : newpeer + rem;
        int mid = lo + (hi - lo) / 2;
        bool lower = newrank < newpeer;
        int klo = lower ? lo : mid, khi = lower ? mid : hi;
        st->peers[k] = peer;
        st->slo[k] = lower ? mid : lo;
        st->shi[k] = lower ? hi : mid;
        int es = rab_off(count, pof2, st->slo[k]);
        int ns = rab_off(count, pof2, st->shi[k]) - es;
        int ek = rab_off(count, pof2, klo);
        int nk = rab_off(count, pof2, khi) - ek;

        nbcx_node sn = -1;
        if (ns > 0) {
            sn = nbcxi_send(s, nbcxi_at(acc.base, es - acc.first, 1, t), ns,
                            t, peer, k);
            nbcxi_dep(s, acc.ready, sn);
        }
        st->ag_dep[k] = acc.where == AT_RBUF  ? (sn >= 0 ? sn : acc.ready)
                        : acc.where == AT_TMP ? rb_last
                                              : -1;
        if (nk > 0) {
            char *buf = nbcxi_at(tmp, toff, 1, t);
            toff += nk;
            nbcx_node rv = nbcxi_recv(s, buf, nk, t, peer, k);
            void *mine = nbcxi_at(acc.base, ek - acc.first, 1, t);
            if (!lower || comm) {
                /* acc = received op acc (the received data is the lower
                 * ranks', or the order does not matter) */
                nbcx_node cp = -1;
                void *dst = mine;
                if (acc.where == AT_SBUF) {
                    dst = nbcxi_at(rbuf, ek, 1, t);
                    cp = nbcxi_copy(s, mine, nk, t, dst, nk, t);
                }
                nbcx_node red = nbcxi_reduce_node(s, buf, dst, nk, t, a->op);
                nbcxi_dep(s, rv, red);
                nbcxi_dep(s, acc.ready, red);
                nbcxi_dep(s, cp, red);
                if (acc.where == AT_SBUF)
                    acc = (struct rab_acc){ rbuf, 0, red, AT_RBUF };
                acc.ready = red;
                if (acc.where == AT_RBUF)
                    rb_last = red;
            } else {
                /* non-commutative and this rank holds the lower ranks'
                 * data: received = acc op received, which becomes acc */
                nbcx_node red = nbcxi_reduce_node(s, mine, buf, nk, t, a->op);
                nbcxi_dep(s, rv, red);
                nbcxi_dep(s, acc.ready, red);
                if (acc.where == AT_RBUF)
                    rb_last = red;
                acc = (struct rab_acc){ buf, ek, red, AT_TMP };
            }
        }
        lo = klo;
        hi = khi;
    }

    /* The rank's block of the result, in W. */
    int e0 = rab_off(count, pof2, lo), nb = rab_off(count, pof2, hi) - e0;
    nbcx_node final = acc.ready;
    if (nb > 0 && acc.where != AT_RBUF) {
        final = nbcxi_copy(s, nbcxi_at(acc.base, e0 - acc.first, 1, t), nb, t,
                           nbcxi_at(rbuf, e0, 1, t), nb, t);
        nbcxi_dep(s, acc.ready, final);
        nbcxi_dep(s, rb_last, final);
    }
    st->lo = lo;
    st->hi = hi;
    st->final = final;
    return s->build.err;
}

int nbcxi_build_allreduce_rabenseifner(struct nbcx_sched_s *s,
                                      const struct nbcxi_coll_args *a)
{
    const int p = s->build.size, rank = s->build.rank, count = a->rcount;
    struct nbcx_datatype_s *t = a->rtype;
    char *rbuf = a->rbuf;
    const bool in_place = a->sbuf == a->rbuf;

    if (count == 0)
        return s->build.err;
    if (p == 1) {
        if (!in_place)
            nbcxi_copy(s, a->sbuf, count, t, rbuf, count, t);
        return s->build.err;
    }

    struct rab_state st;
    if (rab_reduce_scatter(s, a, rbuf, &st))
        return s->build.err;
    if (st.out) {
        /* Folded away: wait for the result. */
        nbcx_node rv = nbcxi_recv(s, rbuf, count, t, rank + 1, TAG_UNFOLD);
        if (in_place)
            nbcxi_dep(s, st.fold_sn, rv); /* the send reads rbuf */
        return s->build.err;
    }
    const int pof2 = st.pof2;
    int lo = st.lo, hi = st.hi;

    /* Allgather by recursive doubling, the rounds in reverse: send the
     * range gathered so far, receive the half sent in the same round of
     * the reduce-scatter straight into rbuf. */
    nbcx_node got[32];
    int ngot = 0;
    for (int k = st.rounds - 1; k >= 0; k--) {
        int es = rab_off(count, pof2, lo);
        int ns = rab_off(count, pof2, hi) - es;
        if (ns > 0) {
            nbcx_node sn = nbcxi_send(s, nbcxi_at(rbuf, es, 1, t), ns, t,
                                      st.peers[k], RAB_AG + k);
            nbcxi_dep(s, st.final, sn);
            for (int j = 0; j < ngot; j++)
                nbcxi_dep(s, got[j], sn);
        }
        int er = rab_off(count, pof2, st.slo[k]);
        int nr = rab_off(count, pof2, st.shi[k]) - er;
        if (nr > 0) {
            nbcx_node rv = nbcxi_recv(s, nbcxi_at(rbuf, er, 1, t), nr, t,
                                      st.peers[k], RAB_AG + k);
            nbcxi_dep(s, st.ag_dep[k], rv);
            got[ngot++] = rv;
        }
        lo = NBCXI_MIN(lo, st.slo[k]);
        hi = NBCXI_MAX(hi, st.shi[k]);
    }

    /* Unfold: return the result to the even neighbour. */
    if (rank < 2 * st.rem) {
        nbcx_node sn = nbcxi_send(s, rbuf, count, t, rank - 1, TAG_UNFOLD);
        nbcxi_dep(s, st.final, sn);
        for (int j = 0; j < ngot; j++)
            nbcxi_dep(s, got[j], sn);
    }
    return s->build.err;
}

/* Rabenseifner's reduce (MPICH's reduce_scatter_gather): the fold and the
 * reduce-scatter above into W (rbuf at the root, a scratch vector on the
 * other ranks, whose rbuf may be NULL), then a binomial gather to the
 * root on the same pairs, the rounds in reverse. newroot is the root's
 * rank among the pof2 (root / 2 for the fold's ranks, root - rem for the
 * others). In reverse round k a rank still in the gather whose bit k
 * differs from newroot's sends everything it holds, [lo, hi) blocks, to
 * its partner and is done; the other receives the partner's range (the
 * half it sent in round k of the reduce-scatter) into W, waiting only for
 * the reduce-scatter's last use of that part of W (posted early). A rank
 * stays in the gather while its bits above k match newroot's, so its
 * range grows exactly as in the allgather. When the root was folded away
 * (even, below 2*rem), root + 1 holds the result and sends it whole.
 * Any operation (the reduce-scatter keeps the rank order). */
int nbcxi_build_reduce_rabenseifner(struct nbcx_sched_s *s,
                                   const struct nbcxi_coll_args *a)
{
    const int p = s->build.size, rank = s->build.rank, count = a->rcount;
    const int root = a->root;
    struct nbcx_datatype_s *t = a->rtype;

    if (count == 0)
        return s->build.err;
    if (p == 1) {
        if (a->sbuf != a->rbuf)
            nbcxi_copy(s, a->sbuf, count, t, a->rbuf, count, t);
        return s->build.err;
    }

    char *W = rank == root ? a->rbuf : nbcxi_sched_tmp_typed(s, count, t);
    if (s->build.err)
        return s->build.err;
    struct rab_state st;
    if (rab_reduce_scatter(s, a, W, &st))
        return s->build.err;
    const int rem = st.rem, pof2 = st.pof2;
    const bool root_out = root < 2 * rem && root % 2 == 0;
    if (st.out) {
        if (rank == root) {
            nbcx_node rv = nbcxi_recv(s, W, count, t, rank + 1, TAG_UNFOLD);
            if (a->sbuf == W)
                nbcxi_dep(s, st.fold_sn, rv); /* the send reads W */
        }
        return s->build.err;
    }
    const int newroot = root < 2 * rem ? root / 2 : root - rem;
    int lo = st.lo, hi = st.hi;

    nbcx_node got[32];
    int ngot = 0;
    for (int k = st.rounds - 1; k >= 0; k--) {
        if ((st.newrank ^ newroot) & (1 << k)) {
            int es = rab_off(count, pof2, lo);
            int ns = rab_off(count, pof2, hi) - es;
            if (ns > 0) {
                nbcx_node sn = nbcxi_send(s, nbcxi_at(W, es, 1, t), ns, t,
                                          st.peers[k], RAB_AG + k);
                nbcxi_dep(s, st.final, sn);
                for (int j = 0; j < ngot; j++)
                    nbcxi_dep(s, got[j], sn);
            }
            return s->build.err;
        }
        int er = rab_off(count, pof2, st.slo[k]);
        int nr = rab_off(count, pof2, st.shi[k]) - er;
        if (nr > 0) {
            nbcx_node rv = nbcxi_recv(s, nbcxi_at(W, er, 1, t), nr, t,
                                      st.peers[k], RAB_AG + k);
            nbcxi_dep(s, st.ag_dep[k], rv);
            got[ngot++] = rv;
        }
        lo = NBCXI_MIN(lo, st.slo[k]);
        hi = NBCXI_MAX(hi, st.shi[k]);
    }

    /* This rank is newroot's: the result is in W. */
    if (root_out) {
        nbcx_node sn = nbcxi_send(s, W, count, t, root, TAG_UNFOLD);
        nbcxi_dep(s, st.final, sn);
        for (int j = 0; j < ngot; j++)
            nbcxi_dep(s, got[j], sn);
    }
    return s->build.err;
}
