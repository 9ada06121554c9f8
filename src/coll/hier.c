/*
 * hier.c - node-aware (hierarchical) builders: one DAG with a phase
 * inside each node and a phase between the nodes' leaders, on the nodes
 * the transport knows (base/transport.h, node_of: MPI's
 * MPI_COMM_TYPE_SHARED, the simulator's ranks per node; NBCX_NODE_RANKS
 * fakes them for tests). Where the transport does not know them, or
 * every rank is on one node, or each on its own, they build the flat
 * algorithm the automatic choice takes for all ranks: forcing `hier`
 * never fails.
 *
 * bcast: the root leads its node, the lowest rank leads every other.
 *   The leaders broadcast among themselves (the automatic choice for as
 *   many ranks, each on a node of its own: a k-nomial tree, the chain,
 *   scatter + allgather), then each leader broadcasts on its node (the
 *   on-node choice: binomial or chain).
 * allreduce: each node reduces to its lowest rank (the on-node choice:
 *   binomial or chain), the leaders allreduce in place (the automatic
 *   choice across nodes: recursive doubling, Rabenseifner or the ring),
 *   each leader broadcasts the result on its node. Non-commutative
 *   operations keep MPI's order when every node's ranks are consecutive
 *   (the partial results are then of rank ranges, the leaders in rank
 *   order); with other placements such an operation gets the flat
 *   algorithm.
 *
 * reduce: as allreduce's first two phases, to the root: each node
 *   reduces to its leader (the root on the root's node, the lowest rank
 *   on the others; a scratch buffer holds a leader's partial result),
 *   then the leaders reduce to the root. Non-commutative operations as
 *   in allreduce.
 * barrier: a barrier on each node, one among the leaders, and a second
 *   on each node, which lets a node's ranks go only once its leader has
 *   passed the leaders' barrier (every rank of every node has arrived).
 * allgather: an allgather on each node into the node's run of blocks,
 *   the leaders (lowest ranks) exchange the nodes' runs in place (an
 *   allgather of runs when all nodes have as many ranks, else an
 *   allgatherv), each leader broadcasts the other nodes' runs on its
 *   node (the run before its node's, then the one after: not the node's
 *   own, where each rank's own block may be its input). Only where every
 *   node's ranks are consecutive (a node's blocks are then one run of
 *   rbuf) and the whole buffer's bytes fit an int; elsewhere the flat
 *   algorithm.
 *   (Every rank must decide alike: by bytes, which MPI makes equal on
 *   all ranks, not by counts of types, which may differ.)
 *
 * A phase is an ordinary builder run on a group (its ranks, this rank's
 * index in it): s->build.rank and s->build.size are the group's while it builds, and
 * its nodes' peers are then mapped to ranks of the communicator. Phases
 * are chained per rank: every node of a phase that the builder gave no
 * predecessor waits for a join (a no-op CALL node) after the previous
 * phase's last nodes. That also keeps messages of two phases between the
 * same pair with the same tag apart: a phase's receives are posted, and
 * its sends leave, only after everything of the previous phase on that
 * rank is done. Where the next phase only sends on this rank (a leader
 * broadcasting on its node) the join waits only for the previous phase's
 * receives, copies and reductions: its own sends to other nodes still
 * in flight read the same buffer, and go to other ranks. Receives of a
 * rank's first phase are posted at start. Not
 * done: pipelining the phases (a leader forwarding the inter-node bcast's
 * fragments on its node as they arrive).
 */
#include <limits.h>
#include <stdlib.h>

#include "coll.h"

/* Where the ranks are, as this rank sees them. */
struct hier {
    int nnodes;   /* nodes                                               */
    int node;     /* this rank's node's index (nodes by lowest rank)     */
    int *leaders; /* each node's leader: its lowest rank (the root on the
                     root's node, for bcast)                             */
    int root_node;/* the root's node's index (-1: no root)               */
    int nlocal;   /* ranks of this rank's node                           */
    int *local;   /* them, ascending                                     */
    int me;       /* this rank's index in local                          */
    bool blocks;  /* every node's ranks are consecutive                  */
};

static void hier_free(struct hier *h)
{
    free(h->leaders);
    free(h->local);
}

/* Fills h for s's communicator (root: -1 for none). Returns 1 when the
 * transport knows the nodes (and they are valid: named by their lowest
 * rank), 0 when not, -1 when out of memory (s->build.err set). */
static int hier_layout(struct nbcx_sched_s *s, int root, struct hier *h)
{
    const nbcxi_transport *t = s->build.comm->tp;
    int p = s->build.size;
    *h = (struct hier){ .root_node = -1, .blocks = true };
    int mine = nbcxi_transport_node(t, s->build.rank);
    int rootn = root >= 0 ? nbcxi_transport_node(t, root) : -1;
    if (mine < 0 || (root >= 0 && rootn < 0))
        return 0;
    h->leaders = malloc(sizeof(int) * (size_t)p);
    h->local = malloc(sizeof(int) * (size_t)p);
    if (!h->leaders || !h->local) {
        hier_free(h);
        if (!s->build.err)
            s->build.err = NBCX_ERR_NOMEM;
        return -1;
    }
    int prev = -1;
    for (int r = 0; r < p; r++) {
        int n = nbcxi_transport_node(t, r);
        if (n < 0 || n > r || (n < r && nbcxi_transport_node(t, n) != n)) {
            hier_free(h);
            return 0;
        }
        if (n == r) {
            if (r == mine)
                h->node = h->nnodes;
            if (r == rootn)
                h->root_node = h->nnodes;
            h->leaders[h->nnodes++] = r == rootn ? root : r;
        } else if (n != prev) {
            h->blocks = false;
        }
        if (n == mine) {
            if (r == s->build.rank)
                h->me = h->nlocal;
            h->local[h->nlocal++] = r;
        }
        prev = n;
    }
    return 1;
}

static int noop(void *arg)
{
    (void)arg;
    return NBCX_SUCCESS;
}

/* What the next phase must wait for on this rank: everything of this
 * one (its last nodes), or only what writes memory (receives, copies,
 * reductions: not the sends) when the next phase only reads here (this
 * rank is its bcast's root; its pairs are others than this phase's, so
 * messages cannot mix either). */
enum join { JOIN_ALL, JOIN_WRITES };

/* Builds collective coll's phase on the n ranks of group (this rank is
 * group[me]) with the automatic choice's algorithm for them placed as
 * `place` says; its first nodes wait for `after` (-1: none). Returns the
 * node that joins its nodes as `join` says (after itself when there are
 * none here), -1 on error (s->build.err). */
static nbcx_node phase(struct nbcx_sched_s *s, enum nbcxi_coll coll,
                       struct nbcxi_coll_args *a, const int *group, int n,
                       int me, enum nbcxi_place place, nbcx_node after,
                       enum join join)
{
    if (s->build.err)
        return -1;
    int rank = s->build.rank, size = s->build.size;
    int n0 = s->build.nnodes, e0 = s->build.nedges;
    s->build.rank = me;
    s->build.size = n;
    const struct nbcxi_algorithm *alg = nbcxi_coll_flat(coll, s, a, place);
    int err = alg->build(s, a);
    s->build.rank = rank;
    s->build.size = size;
    if (err && !s->build.err)
        s->build.err = err;
    if (s->build.err)
        return -1;
    int n1 = s->build.nnodes;
    if (n1 == n0)
        return after;
    bool *has_succ = calloc((size_t)(n1 - n0), sizeof *has_succ);
    if (!has_succ) {
        s->build.err = NBCX_ERR_NOMEM;
        return -1;
    }
    for (int e = e0; e < s->build.nedges; e++)
        if (s->build.edges[e].from >= n0)
            has_succ[s->build.edges[e].from - n0] = true;
    for (int i = n0; i < n1; i++) {
        struct nbcxi_node *nd = &s->build.nodes[i];
        if (nd->kind == NBCXI_NODE_SEND || nd->kind == NBCXI_NODE_RECV)
            nd->u.p2p.peer = group[nd->u.p2p.peer];
        nd->level = 0; /* the phases' trees are not one tree */
        if (nd->npred == 0)
            nbcxi_dep(s, after, i);
    }
    /* what the join waits for: the last nodes, or every writer */
    int nwait = 0;
    for (int i = n0; i < n1; i++) {
        bool w = join == JOIN_ALL ? !has_succ[i - n0]
                                  : s->build.nodes[i].kind != NBCXI_NODE_SEND;
        has_succ[i - n0] = w; /* (now: waited for) */
        nwait += w;
    }
    nbcx_node j = after;
    if (nwait > 0) {
        j = nbcxi_call(s, noop, NULL);
        for (int i = n0; i < n1; i++)
            if (has_succ[i - n0])
                nbcxi_dep(s, i, j);
    }
    free(has_succ);
    return s->build.err ? -1 : j;
}

/* The flat algorithm of the automatic choice on all ranks. */
static int flat(struct nbcx_sched_s *s, enum nbcxi_coll coll,
                const struct nbcxi_coll_args *a)
{
    struct nbcxi_coll_args b = *a;
    int err = nbcxi_coll_flat(coll, s, &b, NBCXI_PLACE_GUESS)->build(s, &b);
    return err ? err : s->build.err;
}

/* Where the node-aware algorithm applies (the transport knows the nodes,
 * there are several, not one rank each, and, where need_blocks, every
 * node's ranks are consecutive): fills h and returns true. Elsewhere
 * builds the flat algorithm, *err its outcome, and returns false. */
static bool nodes_or_flat(struct nbcx_sched_s *s, enum nbcxi_coll coll,
                          const struct nbcxi_coll_args *a, int root,
                          bool need_blocks, struct hier *h, int *err)
{
    int known = s->build.size > 1 ? hier_layout(s, root, h) : 0;
    if (known < 0) {
        *err = s->build.err;
        return false;
    }
    if (known && h->nnodes > 1 && h->nnodes < s->build.size &&
        (h->blocks || !need_blocks))
        return true;
    if (known)
        hier_free(h);
    *err = flat(s, coll, a);
    return false;
}

/* Ends a node-aware build: the split-tree annotations of the phases'
 * builders do not describe the whole (split mode runs it on the progress
 * thread, as any schedule without them). */
static int done(struct nbcx_sched_s *s, struct hier *h)
{
    hier_free(h);
    s->build.tree_height = 0;
    return s->build.err;
}

int nbcxi_build_bcast_hier(struct nbcx_sched_s *s,
                           const struct nbcxi_coll_args *a)
{
    if (s->build.size == 1 || a->rcount == 0 || a->rtype->size == 0)
        return s->build.err;
    struct hier h;
    int err;
    if (!nodes_or_flat(s, NBCXI_BCAST, a, a->root, false, &h, &err))
        return err;
    nbcx_node j = -1;
    int leader = h.leaders[h.node];
    if (s->build.rank == leader) {
        struct nbcxi_coll_args b = *a;
        b.root = h.root_node;
        j = phase(s, NBCXI_BCAST, &b, h.leaders, h.nnodes, h.node,
                  NBCXI_PLACE_NODES, -1, JOIN_WRITES);
    }
    struct nbcxi_coll_args c = *a;
    c.root = 0;
    while (h.local[c.root] != leader)
        c.root++;
    phase(s, NBCXI_BCAST, &c, h.local, h.nlocal, h.me, NBCXI_PLACE_ONE_NODE,
          j, JOIN_ALL);
    return done(s, &h);
}

int nbcxi_build_allreduce_hier(struct nbcx_sched_s *s,
                               const struct nbcxi_coll_args *a)
{
    if (a->rcount == 0 || a->rtype->size == 0)
        return s->build.err;
    struct hier h;
    int err;
    if (!nodes_or_flat(s, NBCXI_ALLREDUCE, a, -1, !a->op->commutative, &h,
                       &err))
        return err;
    /* 1: the node's reduction to its lowest rank (in place there when
     * the call is) */
    struct nbcxi_coll_args r = *a;
    r.root = 0;
    nbcx_node j = phase(s, NBCXI_REDUCE, &r, h.local, h.nlocal, h.me,
                        NBCXI_PLACE_ONE_NODE, -1, JOIN_ALL);
    /* 2: the leaders' allreduce, in place in rbuf */
    if (h.me == 0) {
        struct nbcxi_coll_args x = *a;
        x.sbuf = x.rbuf;
        x.in_place = true;
        j = phase(s, NBCXI_ALLREDUCE, &x, h.leaders, h.nnodes, h.node,
                  NBCXI_PLACE_NODES, j, JOIN_WRITES);
    }
    /* 3: the result from the leader to its node */
    struct nbcxi_coll_args b = *a;
    b.root = 0;
    phase(s, NBCXI_BCAST, &b, h.local, h.nlocal, h.me, NBCXI_PLACE_ONE_NODE,
          j, JOIN_ALL);
    return done(s, &h);
}

int nbcxi_build_reduce_hier(struct nbcx_sched_s *s,
                            const struct nbcxi_coll_args *a)
{
    if (s->build.size == 1 || a->rcount == 0 || a->rtype->size == 0)
        return flat(s, NBCXI_REDUCE, a);
    struct hier h;
    int err;
    if (!nodes_or_flat(s, NBCXI_REDUCE, a, a->root, !a->op->commutative, &h,
                       &err))
        return err;
    int leader = h.leaders[h.node];
    bool lead = s->build.rank == leader, root = s->build.rank == a->root;
    /* a leader's partial result: rbuf at the root, else a scratch */
    void *part = root ? a->rbuf
                 : lead ? nbcxi_sched_tmp_typed(s, a->rcount, a->rtype)
                        : NULL;
    if (lead && !part) {
        if (!s->build.err)
            s->build.err = NBCX_ERR_NOMEM;
        return done(s, &h);
    }
    /* 1: the node's reduction to its leader */
    struct nbcxi_coll_args r = *a;
    r.root = 0;
    while (h.local[r.root] != leader)
        r.root++;
    if (lead)
        r.rbuf = part;
    nbcx_node j = phase(s, NBCXI_REDUCE, &r, h.local, h.nlocal, h.me,
                        NBCXI_PLACE_ONE_NODE, -1, JOIN_ALL);
    /* 2: the leaders' reduction to the root, from the partial results
     * (in place at the root) */
    if (lead) {
        struct nbcxi_coll_args x = *a;
        x.sbuf = part;
        x.rbuf = part;
        x.root = h.root_node;
        phase(s, NBCXI_REDUCE, &x, h.leaders, h.nnodes, h.node,
              NBCXI_PLACE_NODES, j, JOIN_ALL);
    }
    return done(s, &h);
}

int nbcxi_build_barrier_hier(struct nbcx_sched_s *s,
                             const struct nbcxi_coll_args *a)
{
    if (s->build.size == 1)
        return s->build.err;
    struct hier h;
    int err;
    if (!nodes_or_flat(s, NBCXI_BARRIER, a, -1, false, &h, &err))
        return err;
    struct nbcxi_coll_args b = *a;
    nbcx_node j = phase(s, NBCXI_BARRIER, &b, h.local, h.nlocal, h.me,
                        NBCXI_PLACE_ONE_NODE, -1, JOIN_ALL);
    if (h.me == 0)
        j = phase(s, NBCXI_BARRIER, &b, h.leaders, h.nnodes, h.node,
                  NBCXI_PLACE_NODES, j, JOIN_ALL);
    phase(s, NBCXI_BARRIER, &b, h.local, h.nlocal, h.me, NBCXI_PLACE_ONE_NODE,
          j, JOIN_ALL);
    return done(s, &h);
}

int nbcxi_build_allgather_hier(struct nbcx_sched_s *s,
                               const struct nbcxi_coll_args *a)
{
    int p = s->build.size;
    /* (decided alike on every rank: by a block's bytes, not by its count
     * of this rank's type, which may differ from another's) */
    size_t block = (size_t)a->rcount * a->rtype->size;
    if (block == 0 || (unsigned long long)p * block > INT_MAX)
        return flat(s, NBCXI_ALLGATHER, a);
    struct hier h;
    int err;
    if (!nodes_or_flat(s, NBCXI_ALLGATHER, a, -1, true, &h, &err))
        return err;
    int first = h.local[0], end = first + h.nlocal;
    /* 1: the node's allgather, into the node's run of rbuf (in place
     * when the call is: a rank's own block is then its sbuf) */
    struct nbcxi_coll_args g = *a;
    g.rbuf = nbcxi_rblock(a, first).buf;
    nbcx_node j = phase(s, NBCXI_ALLGATHER, &g, h.local, h.nlocal, h.me,
                        NBCXI_PLACE_ONE_NODE, -1, JOIN_ALL);
    /* 2: the leaders exchange their nodes' runs, in place */
    if (h.me == 0) {
        int *counts = malloc(sizeof(int) * 2 * (size_t)h.nnodes);
        if (!counts) {
            s->build.err = NBCX_ERR_NOMEM;
            return done(s, &h);
        }
        int *displs = counts + h.nnodes;
        for (int k = 0; k < h.nnodes; k++) {
            int next = k + 1 < h.nnodes ? h.leaders[k + 1] : p;
            counts[k] = (next - h.leaders[k]) * a->rcount;
            displs[k] = h.leaders[k] * a->rcount;
        }
        bool even = true;
        for (int k = 1; k < h.nnodes; k++)
            even = even && counts[k] == counts[0];
        struct nbcxi_coll_args x = *a;
        x.sbuf = g.rbuf;
        x.scount = counts[h.node];
        x.stype = a->rtype;
        x.in_place = true;
        if (even) { /* runs of one size: an allgather of runs (Bruck's
                       for small ones) */
            x.rcount = counts[0];
            j = phase(s, NBCXI_ALLGATHER, &x, h.leaders, h.nnodes, h.node,
                      NBCXI_PLACE_NODES, j, JOIN_WRITES);
        } else {
            x.rv = (struct nbcxi_vside){ .counts = counts, .displs = displs };
            j = phase(s, NBCXI_ALLGATHERV, &x, h.leaders, h.nnodes, h.node,
                      NBCXI_PLACE_NODES, j, JOIN_WRITES);
        }
        free(counts);
    }
    /* 3: the other nodes' runs, before and after this node's, from the
     * leader to its node (not the node's own run: each rank's own block
     * may be its input, which MPI does not let the call write) */
    struct nbcxi_coll_args b = *a;
    b.root = 0;
    if (first > 0) {
        b.rcount = first * a->rcount;
        j = phase(s, NBCXI_BCAST, &b, h.local, h.nlocal, h.me,
                  NBCXI_PLACE_ONE_NODE, j, JOIN_ALL);
    }
    if (end < p) {
        b.rbuf = nbcxi_rblock(a, end).buf;
        b.rcount = (p - end) * a->rcount;
        phase(s, NBCXI_BCAST, &b, h.local, h.nlocal, h.me,
              NBCXI_PLACE_ONE_NODE, j, JOIN_ALL);
    }
    return done(s, &h);
}
