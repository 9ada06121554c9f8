/* comm.c - freeing a communicator: its handle dies at once, its cached
 * schedules go (api/cache.c), and the object itself when the last
 * operation in flight on it releases it (base/comm.c); and moving one
 * onto another transport (nbcx_comm_set_transport). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"

int nbcx_comm_free(nbcx_comm *h)
{
    if (!h)
        return NBCX_ERR_ARG;
    struct nbcx_comm_s *c = nbcxi_comm(*h);
    if (!c)
        return NBCX_ERR_COMM;
    *h = NBCX_COMM_NULL;
    c->magic = 0; /* the handle is dead; operations in flight hold refs */
    nbcxi_cache_close(c);
    nbcxi_comm_release(c);
    return NBCX_SUCCESS;
}

/* ---- nbcx_comm_split, nbcx_comm_dup ----
 *
 * The transport makes the new communicators (its split op); the API
 * checks the arguments and, for a dup, copies the topology. */

int nbcx_comm_split(nbcx_comm h, int color, int key, nbcx_comm *out)
{
    if (!out)
        return nbcxi_error(NBCX_ERR_ARG, "nbcx_comm_split: newcomm is NULL");
    *out = NBCX_COMM_NULL;
    struct nbcx_comm_s *c = nbcxi_comm(h);
    if (!c)
        return NBCX_ERR_COMM;
    if (color < 0 && color != NBCX_UNDEFINED)
        return nbcxi_error(NBCX_ERR_ARG, "nbcx_comm_split: color %d is "
                           "negative and not NBCX_UNDEFINED", color);
    nbcxi_transport *t = c->tp->ops->split ? c->tp
                         : c->kept && c->kept->ops->split ? c->kept
                                                          : NULL;
    if (!t)
        return nbcxi_error(NBCX_ERR_TRANSPORT, "nbcx_comm_split: "
                           "communicators on transport %s cannot be split",
                           c->tp->ops->name);
    int err = nbcxi_comm_broken(c);
    if (err != NBCX_SUCCESS)
        return err;
    return t->ops->split(t, c, color, key, out);
}

int nbcx_comm_dup(nbcx_comm h, nbcx_comm *out)
{
    struct nbcx_comm_s *c = nbcxi_comm(h);
    if (out)
        *out = NBCX_COMM_NULL;
    if (!c)
        return NBCX_ERR_COMM;
    int err = nbcx_comm_split(h, 0, c->rank, out);
    const struct nbcxi_topo *tp =
        err == NBCX_SUCCESS ? atomic_load(&c->topo) : NULL;
    if (tp) {
        err = tp->ndims >= 0
                  ? nbcx_comm_set_cart(*out, tp->ndims, tp->dims,
                                       tp->periods)
                  : nbcx_comm_set_neighbors(*out, tp->indegree, tp->sources,
                                            tp->outdegree, tp->destinations);
        if (err != NBCX_SUCCESS)
            nbcx_comm_free(out);
    }
    return err;
}

/* ---- nbcx_comm_set_transport ----
 *
 * The new transport is started over the old one: its bootstrap
 * (transport.h) runs on nbcx's own allgather and allreduce on comm.
 * First the members agree that none of them uses comm (first_failed),
 * so that all go on or all stop; then the backend is created (all
 * succeed or all fail, transport.h); then each member prepares its tag
 * slots for it and, once all have (first_failed again), it replaces the
 * old one on every member, or on none. The
 * transport comm was made on, if it cannot be created by name ("mpi"),
 * is kept meanwhile (base/comm.c), and naming it goes back to it. */

static int boot_allgather(void *ctx, const void *in, size_t bytes, void *out)
{
    if (bytes > (size_t)INT_MAX)
        return NBCX_ERR_ARG;
    nbcx_request r;
    int err = nbcx_iallgather(in, (int)bytes, NBCX_BYTE, out, (int)bytes,
                              NBCX_BYTE, ctx, &r);
    return err != NBCX_SUCCESS ? err : nbcx_wait(&r);
}

static int boot_first_failed(void *ctx, bool ok, int *rank)
{
    struct nbcx_comm_s *c = ctx;
    int32_t in = ok ? INT32_MAX : c->rank, out = INT32_MAX;
    nbcx_request r;
    int err = nbcx_iallreduce(&in, &out, 1, NBCX_INT32, NBCX_MIN, ctx, &r);
    if (err == NBCX_SUCCESS)
        err = nbcx_wait(&r);
    *rank = err == NBCX_SUCCESS && out != INT32_MAX ? (int)out : -1;
    return err;
}

/* The backend called name that can be created by name, or an error. */
static int backend_named(const char *name,
                         const struct nbcxi_transport_ops **ops)
{
    char known[128] = "";
    if ((*ops = nbcxi_backend_named(name, known, sizeof known)))
        return NBCX_SUCCESS;
    for (int b = 0; nbcxi_backends_off[b]; b++)
        if (strcmp(nbcxi_backends_off[b], name) == 0)
            return nbcxi_error(NBCX_ERR_TRANSPORT, "nbcx_comm_set_transport: "
                               "transport %s is not in this build of nbcx "
                               "(its library was not found when nbcx was "
                               "configured)", name);
    return nbcxi_error(NBCX_ERR_ARG, "nbcx_comm_set_transport: no transport "
                       "\"%s\" can be chosen by name (there are: %s; \"mpi\" "
                       "for a communicator made by nbcx_comm_from_mpi, "
                       "inproc by nbcx_inproc_run)", name,
                       *known ? known : "none");
}

int nbcx_comm_set_transport(nbcx_comm h, const char *name)
{
    struct nbcx_comm_s *c = nbcxi_comm(h);
    if (!c)
        return NBCX_ERR_COMM;
    if (!name || !*name)
        return nbcxi_error(NBCX_ERR_ARG, "nbcx_comm_set_transport: no "
                           "transport name (%s)", name ? "\"\"" : "NULL");
    if (strcmp(name, c->tp->ops->name) == 0)
        return NBCX_SUCCESS; /* (every member: nothing to agree on) */
    /* Back to the transport comm was made on ("mpi"), which is kept. */
    bool back = c->kept && strcmp(name, c->kept->ops->name) == 0;
    const struct nbcxi_transport_ops *ops = NULL;
    int err = back ? NBCX_SUCCESS : backend_named(name, &ops);
    if (err != NBCX_SUCCESS)
        return err;
    if (nbcxi_transport_can(c->tp, NBCXI_CAP_IN_PROCESS))
        return nbcxi_error(NBCX_ERR_TRANSPORT, "nbcx_comm_set_transport: the "
                           "ranks of this communicator are threads of one "
                           "process (nbcx_inproc_run): it stays on %s",
                           c->tp->ops->name);
    if ((err = nbcxi_comm_broken(c)) != NBCX_SUCCESS)
        return err;

    /* In use here: a schedule holds comm (an operation in flight or not
     * yet waited for, a persistent request, a user's schedule; the
     * cache's are freed first). */
    nbcxi_cache_flush(c);
    bool busy = atomic_load(&c->refs) > 1;
    int who;
    err = boot_first_failed(c, !busy, &who);
    nbcxi_cache_flush(c); /* (the allreduce's schedule) */
    if (err != NBCX_SUCCESS)
        return err;
    if (who >= 0)
        return nbcxi_error(NBCX_ERR_BUSY, "nbcx_comm_set_transport: rank "
                           "%d%s has operations in flight, persistent "
                           "requests or schedules on the communicator: wait "
                           "for and free them first",
                           busy ? c->rank : who, busy ? " (this one)" : "");
    nbcxi_transport *tp = c->kept;
    if (!back) {
        struct nbcxi_bootstrap boot = { .rank = c->rank, .size = c->size,
                                        .allgather = boot_allgather,
                                        .first_failed = boot_first_failed,
                                        .ctx = c };
        err = ops->create(&boot, &tp);
        nbcxi_cache_flush(c); /* (the bootstrap's allgathers) */
        if (err != NBCX_SUCCESS)
            return err;
    }
    /* Every member prepares, then all switch or none does: a member
     * that could not (out of memory) must not leave the others on
     * another transport. */
    const char *to = tp->ops->name;
    struct nbcxi_comm_switch sw;
    int mine = nbcxi_comm_switch_prepare(tp, &sw);
    err = boot_first_failed(c, mine == NBCX_SUCCESS, &who);
    nbcxi_cache_flush(c);
    if (err == NBCX_SUCCESS && who < 0) {
        nbcxi_comm_switch_commit(c, &sw);
        return NBCX_SUCCESS;
    }
    nbcxi_comm_switch_drop(c, &sw);
    if (mine != NBCX_SUCCESS || err != NBCX_SUCCESS)
        return mine != NBCX_SUCCESS ? mine : err;
    return nbcxi_error(NBCX_ERR_TRANSPORT, "nbcx_comm_set_transport: rank %d "
                       "could not switch to %s: the communicator stays on "
                       "%s", who, to, c->tp->ops->name);
}
