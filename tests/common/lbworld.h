/*
 * lbworld.h - loopback worlds for the unit tests (tests/unit/loopback.h,
 * one thread drives every virtual rank): made on demand, reused for many
 * cases, and dropped after a failure (a deadlocked operation stays in
 * the old world forever). Uses the harness (harness.h).
 */
#ifndef NBCX_TEST_LBWORLD_H
#define NBCX_TEST_LBWORLD_H

#include <stdbool.h>
#include <stdint.h>

#include "harness.h"
#include "loopback.h"

enum { LB_WORLD_MAXP = 64 };

struct lb_world {
    int p;
    enum loopback_mode mode;
    int tag_ub;         /* of the transport (loopback_options) */
    uint64_t seed;      /* of the next world made */
    const int *nodes;   /* the transport's node of each rank (NULL: it
                           does not know; loopback_options) */
    bool live;
    nbcx_comm c[LB_WORLD_MAXP];
};

/* Makes the world if there is none; false (a failed check) if it cannot
 * be made. */
static inline bool lb_world_get(struct lb_world *w)
{
    if (w->live)
        return true;
    struct loopback_options opt = { .tag_ub = w->tag_ub, .mode = w->mode,
                                    .seed = w->seed++, .nodes = w->nodes };
    int err = loopback_world_create_ex(w->p, &opt, w->c);
    CHECK(err == NBCX_SUCCESS, "world of %d: %s", w->p,
          nbcx_error_string(err));
    w->live = err == NBCX_SUCCESS;
    return w->live;
}

static inline void lb_world_drop(struct lb_world *w)
{
    if (w->live)
        loopback_world_destroy(w->p, w->c);
    w->live = false;
}

/* Waits for the requests of one collective (started[r]: the start call's
 * return code on rank r). False, and the world dropped, if the case
 * failed: a start error, a deadlock or an error result. After a start
 * error the others' requests are still waited for if wait_anyway (else
 * the world goes at once: the others may be stuck). */
static inline bool lb_world_finish(struct lb_world *w, const int started[],
                                   nbcx_request req[], bool wait_anyway)
{
    bool ok = true;
    for (int r = 0; r < w->p; r++)
        if (!CHECK(started[r] == NBCX_SUCCESS, "rank %d: start returned %d "
                   "(%s)", r, started[r], nbcx_error_string(started[r])))
            ok = false;
    if (!ok && !wait_anyway) {
        lb_world_drop(w);
        return false;
    }
    int err = loopback_waitall(w->c[0], w->p, req);
    if (err == LOOPBACK_DEADLOCK) {
        CHECK(0, "deadlock: the collective can never complete");
        lb_world_drop(w);
        return false;
    }
    if (!CHECK(err == NBCX_SUCCESS, "waitall returned %d (%s)", err,
               nbcx_error_string(err)))
        ok = false;
    if (!ok)
        lb_world_drop(w);
    return ok;
}

#endif /* NBCX_TEST_LBWORLD_H */
