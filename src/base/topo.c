/* topo.c - neighbourhood topologies attached to communicators.
 *
 * A topology is this rank's list of sources (receive blocks) and
 * destinations (send blocks), with a schedule tag for every edge so that
 * the blocks meet as MPI says even when two ranks share several edges:
 *
 *   graph      the k-th occurrence of rank d among the destinations is
 *              sent with tag k, and the k-th occurrence of rank s among
 *              the sources is received with tag k: the k-th edge to a rank
 *              meets the k-th edge from it (MPI's distributed graphs).
 *   Cartesian  block j (2d for the -1 neighbour of dimension d, 2d + 1
 *              for the +1 one) is sent with tag j and received block i
 *              with tag i ^ 1: what a rank sends towards -1 arrives in the
 *              neighbour's block for +1 (its neighbour on that side), and
 *              vice versa, also when both neighbours are one rank
 *              (periodic dimensions of 1 or 2 ranks; MPI-4.1 Example 8.10).
 *
 * Tags are taken modulo NBCX_SCHED_TAG_MAX + 1; beyond that (thousands of
 * edges between one pair of ranks) the non-overtaking order of the
 * messages, posted in list order, still matches them.
 *
 * Edges from a rank to itself are copied locally by the builders, which
 * pair each self-destination with the self-source of the same tag: a
 * graph must therefore list the rank among its own sources as often as
 * among its destinations (checked here).
 */
#include <stdlib.h>
#include <string.h>

#include "base.h"

enum { NTAGS = NBCX_SCHED_TAG_MAX + 1 };

void nbcxi_topo_free(struct nbcxi_topo *t)
{
    while (t) {
        struct nbcxi_topo *older = t->older;
        free(t->sources);
        free(t->destinations);
        free(t->rtags);
        free(t->stags);
        free(t->dims);
        free(t->periods);
        free(t);
        t = older;
    }
}

static int *int_array(int n)
{
    return malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
}

static struct nbcxi_topo *topo_alloc(int indegree, int outdegree)
{
    struct nbcxi_topo *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->indegree = indegree;
    t->outdegree = outdegree;
    t->ndims = -1;
    t->sources = int_array(indegree);
    t->rtags = int_array(indegree);
    t->destinations = int_array(outdegree);
    t->stags = int_array(outdegree);
    if (!t->sources || !t->rtags || !t->destinations || !t->stags) {
        nbcxi_topo_free(t);
        return NULL;
    }
    return t;
}

/* Attaches t to c (the previous topology is kept for the collectives
 * that may be reading it; see base/base.h). */
static void topo_attach(struct nbcx_comm_s *c, struct nbcxi_topo *t)
{
    t->older = atomic_load(&c->topo);
    atomic_store(&c->topo, t);
}

/* Tag k of each list entry: its occurrence number among the equal
 * entries before it. `seen` counts occurrences per rank (size entries,
 * zeroed on entry and on return). */
static void ordinal_tags(const int *ranks, int n, int *tags, int *seen,
                         int size)
{
    for (int i = 0; i < n; i++)
        tags[i] = ranks[i] == NBCX_PROC_NULL ? 0 : seen[ranks[i]]++ % NTAGS;
    for (int i = 0; i < n; i++)
        if (ranks[i] >= 0 && ranks[i] < size)
            seen[ranks[i]] = 0;
}

static int check_list(const int *ranks, int n, int size)
{
    if (n < 0)
        return NBCX_ERR_COUNT;
    if (n > 0 && !ranks)
        return NBCX_ERR_ARG;
    for (int i = 0; i < n; i++)
        if (ranks[i] != NBCX_PROC_NULL && (ranks[i] < 0 || ranks[i] >= size))
            return NBCX_ERR_RANK;
    return NBCX_SUCCESS;
}

int nbcx_comm_set_neighbors(nbcx_comm comm, int indegree,
                            const int sources[], int outdegree,
                            const int destinations[])
{
    struct nbcx_comm_s *c = nbcxi_comm(comm);
    if (!c)
        return NBCX_ERR_COMM;
    int err = check_list(sources, indegree, c->size);
    if (err == NBCX_SUCCESS)
        err = check_list(destinations, outdegree, c->size);
    if (err != NBCX_SUCCESS)
        return err;
    int self_in = 0, self_out = 0;
    for (int i = 0; i < indegree; i++)
        self_in += sources[i] == c->rank;
    for (int j = 0; j < outdegree; j++)
        self_out += destinations[j] == c->rank;
    if (self_in != self_out)
        return NBCX_ERR_TOPOLOGY; /* an edge to itself must come back */

    struct nbcxi_topo *t = topo_alloc(indegree, outdegree);
    int *seen = calloc((size_t)c->size, sizeof(int));
    if (!t || !seen) {
        nbcxi_topo_free(t);
        free(seen);
        return NBCX_ERR_NOMEM;
    }
    if (indegree > 0)
        memcpy(t->sources, sources, sizeof(int) * (size_t)indegree);
    if (outdegree > 0)
        memcpy(t->destinations, destinations, sizeof(int) * (size_t)outdegree);
    ordinal_tags(t->sources, indegree, t->rtags, seen, c->size);
    ordinal_tags(t->destinations, outdegree, t->stags, seen, c->size);
    free(seen);
    topo_attach(c, t);
    return NBCX_SUCCESS;
}

int nbcx_comm_set_cart(nbcx_comm comm, int ndims, const int dims[],
                       const int periods[])
{
    struct nbcx_comm_s *c = nbcxi_comm(comm);
    if (!c)
        return NBCX_ERR_COMM;
    if (ndims < 0 || ndims > (1 << 20))
        return NBCX_ERR_ARG;
    if (ndims > 0 && !dims)
        return NBCX_ERR_ARG;
    long long n = 1;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] <= 0)
            return NBCX_ERR_TOPOLOGY;
        n *= dims[d];
        if (n > c->size)
            return NBCX_ERR_TOPOLOGY;
    }
    if (n != c->size)
        return NBCX_ERR_TOPOLOGY; /* the grid must hold every rank */

    struct nbcxi_topo *t = topo_alloc(2 * ndims, 2 * ndims);
    if (t) {
        t->ndims = ndims;
        t->dims = int_array(ndims);
        t->periods = int_array(ndims);
    }
    if (!t || !t->dims || !t->periods) {
        nbcxi_topo_free(t);
        return NBCX_ERR_NOMEM;
    }
    /* Row-major coordinates: the last dimension varies fastest. */
    long long stride = 1;
    for (int d = ndims - 1; d >= 0; d--) {
        int coord = (int)((c->rank / stride) % dims[d]);
        bool periodic = periods && periods[d];
        t->dims[d] = dims[d];
        t->periods[d] = periodic;
        for (int k = 0; k < 2; k++) { /* k = 0: the -1 side, 1: +1 */
            int nc = coord + (k ? 1 : -1);
            int rank = NBCX_PROC_NULL;
            if (periodic)
                nc = (nc + dims[d]) % dims[d];
            if (nc >= 0 && nc < dims[d])
                rank = (int)(c->rank + (nc - coord) * stride);
            int i = 2 * d + k;
            t->sources[i] = t->destinations[i] = rank;
            t->stags[i] = i % NTAGS;
            t->rtags[i] = (i ^ 1) % NTAGS;
        }
        stride *= dims[d];
    }
    topo_attach(c, t);
    return NBCX_SUCCESS;
}

int nbcx_comm_neighbors_count(nbcx_comm comm, int *indegree, int *outdegree)
{
    struct nbcx_comm_s *c = nbcxi_comm(comm);
    if (!c)
        return NBCX_ERR_COMM;
    if (!indegree || !outdegree)
        return NBCX_ERR_ARG;
    struct nbcxi_topo *t = atomic_load(&c->topo);
    *indegree = t ? t->indegree : 0;
    *outdegree = t ? t->outdegree : 0;
    return NBCX_SUCCESS;
}

int nbcx_comm_neighbors(nbcx_comm comm, int maxin, int sources[], int maxout,
                        int destinations[])
{
    struct nbcx_comm_s *c = nbcxi_comm(comm);
    if (!c)
        return NBCX_ERR_COMM;
    if (maxin < 0 || maxout < 0 || (maxin > 0 && !sources) ||
        (maxout > 0 && !destinations))
        return NBCX_ERR_ARG;
    struct nbcxi_topo *t = atomic_load(&c->topo);
    if (!t)
        return NBCX_ERR_TOPOLOGY;
    for (int i = 0; i < maxin && i < t->indegree; i++)
        sources[i] = t->sources[i];
    for (int j = 0; j < maxout && j < t->outdegree; j++)
        destinations[j] = t->destinations[j];
    return NBCX_SUCCESS;
}
