/* mode_split.c - the split-tree cost model and the choice of S.
 *
 * Denis et al. split a binomial-tree collective: the S tree levels nearest
 * the leaves run on the application cores (they hold most of the
 * messages, which a few progress cores would serialise), the H - S upper
 * levels on the progress cores (few messages, overlapped with the
 * computation). Levels are counted from the leaves here, as in the
 * schedules (struct nbcxi_node.level); the paper's level i, counted from
 * the root, is our level H - i + 1.
 *
 * The model, in units of one point-to-point transfer of the operation's
 * buffer (latency and cache effects neglected, as in the paper), for N
 * ranks:
 *
 *   H(N)     = ceil(log2 N)                        tree height, eq. 1
 *   F(N, j)  = floor((N - 1 + 2^(j-1)) / 2^j)      messages on level j
 *
 * F counts the ranks 1..N-1 whose lowest set bit is 2^(j-1): the edge of
 * rank v to its parent is on the level of v's lowest set bit (tree.h).
 * The levels thus hold the N - 1 messages exactly. The paper's eq. 3 is
 * meant to give the same counts but does not as printed (for N = 16 it
 * gives 2, 3, 5, 9 from the root, 19 in all), so we use the exact count.
 *
 * With A application cores and P the cores the upper levels are folded
 * on (the progress cores, or the application cores when the progress
 * threads share them), the S lowest levels take
 *
 *   app(S)   = sum_{j=1..S}   ceil(F(N, j) / A)
 *
 * which is S when A >= N (the paper's min(S, H): every level in one
 * step), and the upper levels, one after the other,
 *
 *   prog(S)  = sum_{j=S+1..H} ceil(F(N, j) / P)                    eq. 4
 *
 * The collective alone takes app(S) + prog(S) (eq. 4). Overlapped with a
 * computation of C units (eq. 5): the lowest levels cannot overlap, the
 * upper ones can,
 *
 *   dedicated progress cores:  app(S) + max(C, prog(S))
 *   shared with the application:
 *                              app(S) + max(C + K * sum_{j>S} F(N, j) / A,
 *                                           prog(S))
 *
 * In the shared case the network (or the kernel's copy) still moves the
 * upper levels' bytes while the application computes, but the progress
 * thread's own CPU time, a fraction K of each transfer's time, is taken
 * from the computation, spread over the A cores. K = SHARED_CPU_FRACTION
 * (0.05: posting, polling and matching cost about a twentieth of a
 * transfer of a buffer worth splitting; a rough constant, like the unit
 * costs of the paper's model). With dedicated cores that time is the
 * progress cores' and costs the computation nothing.
 *
 * The chosen S has the least overlapped time, the smaller S on ties (more
 * overlap for the same time). In split mode the computation is assumed
 * sized like the blocking collective, C = H, the paper's assumption.
 *
 * Unless NBCX_SPLIT_LEVELS forces S, a split rule of the NBCX_TUNING
 * table (nbcx-tune --split: S chosen by simulating the split mode with
 * S = 0..H, coll/tuning.c) wins over the model; select.c leaves it in the
 * schedule (split_tuned) when it builds the collective.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../coll/coll.h"
#include "progress.h"

/* The progress thread's CPU time per transfer, as a fraction of the
 * transfer's time, when it shares the application's cores (see above). */
#define SHARED_CPU_FRACTION 0.05

/* ceil(log2 n), n >= 1. */
static int tree_height(int n)
{
    int h = 0;
    while (h < 31 && ((int64_t)1 << h) < n)
        h++;
    return h;
}

/* Messages on level j (1 = leaves) of the binomial tree of n ranks. */
static int64_t level_messages(int n, int j)
{
    int64_t half = (int64_t)1 << (j - 1);
    return ((int64_t)n - 1 + half) / (2 * half);
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* The model's times when the s lowest of the h levels run on the
 * application (0 <= s <= h). */
static void model_times(int n, int h, int app_cores, int progress_cores,
                        double compute, int s, double *t_coll, double *t_ovl)
{
    int fold = progress_cores > 0 ? progress_cores : app_cores;
    int64_t app = 0, prog = 0, upper = 0;
    for (int j = 1; j <= h; j++) {
        int64_t f = level_messages(n, j);
        if (j <= s) {
            app += ceil_div(f, app_cores);
        } else {
            prog += ceil_div(f, fold);
            upper += f;
        }
    }
    double busy = compute;
    if (progress_cores == 0)
        busy += SHARED_CPU_FRACTION * (double)upper / app_cores;
    *t_coll = (double)(app + prog);
    *t_ovl = (double)app + (busy > (double)prog ? busy : (double)prog);
}

/* Arguments: ranks >= 1, app_cores >= 1, progress_cores >= 0 (0: shared),
 * compute >= 0 (not NaN), S >= 0 for the times of that S (values above H
 * mean H, as the paper's min(S, H)) or -1 for those of the best S. The
 * result is the best S in either case. */
int nbcx_split_model(int ranks, int app_cores, int progress_cores,
                     double compute, int S, double *t_collective,
                     double *t_overlapped, int *levels)
{
    if (ranks < 1 || app_cores < 1 || progress_cores < 0 ||
        !(compute >= 0) || S < -1)
        return -1;
    int h = tree_height(ranks);
    int best = 0;
    double best_ovl = 0;
    for (int s = 0; s <= h; s++) {
        double c, o;
        model_times(ranks, h, app_cores, progress_cores, compute, s, &c, &o);
        /* Ties (up to rounding of the shared-core term): the smaller S. */
        if (s == 0 || o < best_ovl - 1e-9 * (best_ovl > 1 ? best_ovl : 1)) {
            best = s;
            best_ovl = o;
        }
    }
    double c, o;
    model_times(ranks, h, app_cores, progress_cores, compute,
                S < 0 ? best : (S < h ? S : h), &c, &o);
    if (t_collective)
        *t_collective = c;
    if (t_overlapped)
        *t_overlapped = o;
    if (levels)
        *levels = h;
    return best;
}

/* NBCX_SPLIT_LEVELS: a number of levels >= 0, or "auto" (the model).
 * Returns -1 for the model. Read at every start rather than once, so that
 * a program may change it between operations (getenv costs nothing next
 * to a collective). */
static int forced_levels(void)
{
    static atomic_bool warned;
    const char *v = nbcxi_getenv("NBCX_SPLIT_LEVELS");
    if (!v || !strcmp(v, "auto"))
        return -1;
    char *end;
    long n = strtol(v, &end, 10);
    if (end != v && *end == '\0' && n >= 0)
        return n > 127 ? 127 : (int)n;
    if (!atomic_exchange(&warned, true))
        fprintf(stderr,
                "nbcx: NBCX_SPLIT_LEVELS=%s is not a number of tree levels "
                "(>= 0) or \"auto\"; using the cost model\n",
                v);
    return -1;
}

void nbcxi_split_mark(struct nbcx_sched_s *s)
{
    s->split.app_up_left = s->split.app_down_left = 0;
    int h = s->build.tree_height;
    if (h <= 0)
        return;
    int levels = forced_levels();
    if (levels < 0 && s->build.split_tuned > 0)
        levels = s->build.split_tuned - 1;
    if (levels < 0) {
        int app_cores = 0, progress_cores = 0;
        nbcxi_placement_cores(&app_cores, &progress_cores);
        levels = nbcx_split_model(s->build.size, NBCXI_MAX(app_cores, 1),
                                  NBCXI_MAX(progress_cores, 0), (double)h,
                                  -1, NULL, NULL, NULL);
        levels = NBCXI_MAX(levels, 0);
    }
    levels = NBCXI_MIN(levels, h);
    /* Every node is (re)marked: a persistent schedule is marked again at
     * each start, possibly with another S. */
    for (int i = 0; i < s->build.nnodes; i++) {
        struct nbcxi_node *n = &s->build.nodes[i];
        int lv = n->level < 0 ? -n->level : n->level;
        n->app = lv >= 1 && lv <= levels;
        if (n->app) {
            if (n->level > 0)
                s->split.app_up_left++;
            else
                s->split.app_down_left++;
        }
    }
}

/* ------------------------------------------------------------------ */
/* The split mode's table                                              */
/* ------------------------------------------------------------------ */

/* As the thread mode; then the tree levels that come first (reduce,
 * gather) are done here, on the application thread, before the start
 * returns. */
static void split_started_locked(struct nbcx_request_s *r, bool *wake)
{
    nbcxi_thread_started_locked(r, wake);
    struct nbcx_sched_s *s = r->sched;
    if (nbcxi_request_done(r) || s->split.app_up_left <= 0)
        return;
    if (*wake) { /* the thread must poll while we wait */
        nbcxi_thread_wake();
        *wake = false;
    }
    nbcxi_waiters++;
    while (!nbcxi_request_done(r) && s->split.app_up_left > 0)
        if (!nbcxi_engine_notify_locked() && !nbcxi_serve_deferred_locked())
            pthread_cond_wait(&nbcxi_done_cv, &nbcxi_engine_lock);
    nbcxi_waiters--;
}

/* Split progress splits binomial trees: unless an algorithm is forced,
 * tree-shaped collectives use theirs (allreduce: a reduce, then a
 * bcast). */
static const char *split_algorithm(int coll)
{
    switch (coll) {
    case NBCXI_BCAST:
    case NBCXI_REDUCE:
    case NBCXI_GATHER:
    case NBCXI_SCATTER:
        return "binomial";
    case NBCXI_ALLREDUCE:
        return "reduce_bcast";
    default:
        return NULL;
    }
}

const struct nbcxi_progress_mode nbcxi_split_mode = {
    .name = "split",
    .id = NBCX_PROGRESS_SPLIT,
    .thread = true,
    .prepare = nbcxi_split_mark,
    .defers = true,
    .started_locked = split_started_locked,
    .poke = nbcxi_thread_poke,
    .wait_some = nbcxi_thread_wait_some,
    .algorithm = split_algorithm,
};
