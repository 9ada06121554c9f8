/*
 * global.c - the checks across ranks, on the compact graph of check.h.
 *
 * Matching. A rank's p2p nodes are sorted by (kind, peer, tag, posting
 * order). For every group of sends of rank r to d with tag t, the group
 * of receives of d from r with tag t is found by binary search; the k-th
 * send meets the k-th receive, and their sizes must agree. Sends or
 * receives beyond the shorter group are orphans.
 *
 * Deadlock. A send and its receive complete together (rendezvous), so
 * the global graph is the union of the ranks' graphs with each matched
 * pair merged into one vertex; it cannot deadlock iff it has no cycle.
 * Kahn's algorithm: a node whose predecessors are all complete becomes
 * ready; a local node completes at once; a message completes when it
 * and its partner are both ready (an orphan, already reported, completes
 * alone). Completed nodes with successors go on a stack, which is all
 * the extra memory. Linear in the nodes and edges, plus a binary search
 * per message. Nodes that never complete are explained by a cycle, found
 * by a depth-first search over them (a pair is entered as one vertex)
 * and reported step by step.
 *
 * Reports name the nodes as the builder numbered them: the rank's
 * schedule is built again and the compact numbering recomputed (views).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* ------------------------------------------------------------------ */
/* Views: a rank's schedule and compact numbering, for reports         */
/* ------------------------------------------------------------------ */

enum { NVIEWS = 4 };

struct view {
    int r;
    struct nbcx_sched_s *s;
    struct ck_regions reg;
    int *map;
    uint32_t nmap;
};

struct views {
    struct view v[NVIEWS];
    int next;
};

static void view_drop(struct ck_job *J, struct view *v)
{
    if (v->s)
        ck_put(J, v->s);
    free(v->map);
    ck_regions_free(&v->reg);
    memset(v, 0, sizeof *v);
    v->r = -1;
}

static void views_init(struct views *V)
{
    memset(V, 0, sizeof *V);
    for (int i = 0; i < NVIEWS; i++)
        V->v[i].r = -1;
}

static void views_free(struct ck_job *J, struct views *V)
{
    for (int i = 0; i < NVIEWS; i++)
        view_drop(J, &V->v[i]);
}

static struct view *view_of(struct ck_job *J, struct views *V, int r)
{
    for (int i = 0; i < NVIEWS; i++)
        if (V->v[i].r == r && V->v[i].s)
            return &V->v[i];
    struct view *v = &V->v[V->next];
    V->next = (V->next + 1) % NVIEWS;
    view_drop(J, v);
    J->silent++;
    v->s = ck_get(J, r, &v->reg);
    if (v->s &&
        ck_rank_analyse(J, r, v->s, &v->reg, &v->map, &v->nmap) != 0)
        view_drop(J, v);
    J->silent--;
    if (!v->s)
        return NULL;
    v->r = r;
    return v;
}

/* "rank 3 node 7 (send 40 B to rank 4, tag 0)" for compact node id. */
static void describe(struct ck_job *J, struct views *V, int r, uint32_t id,
                     char *buf, size_t len)
{
    struct view *v = view_of(J, V, r);
    if (!v || id >= v->nmap) {
        snprintf(buf, len, "rank %d node ? (compact %u)", r, id);
        return;
    }
    char d[128];
    ck_describe(v->s, v->map[id], d, sizeof d);
    snprintf(buf, len, "rank %d %s", r, d);
}

/* ------------------------------------------------------------------ */
/* Matching                                                            */
/* ------------------------------------------------------------------ */

/* First index in R's keys whose group is >= g (groups: key >> 20). */
static uint32_t lower_group(const struct ck_rank *R, uint64_t g)
{
    uint32_t a = 0, b = R->np;
    while (a < b) {
        uint32_t m = a + (b - a) / 2;
        if (CK_GROUP(R->key[m]) < g)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

static uint32_t group_end(const struct ck_rank *R, uint32_t i)
{
    uint64_t g = CK_GROUP(R->key[i]);
    uint32_t j = i;
    while (j < R->np && CK_GROUP(R->key[j]) == g)
        j++;
    return j;
}

/* The tags `peer` uses towards rank r in the opposite direction, as a
 * hint for orphan reports: " (rank 1 receives from rank 0 with tags 3
 * 4)". */
static void tags_hint(struct ck_job *J, int r, int peer, int kind, char *buf,
                      size_t len)
{
    const struct ck_rank *P = &J->ranks[peer];
    uint64_t lo = CK_GROUP(CK_KEY(1 - kind, r, 0, 0));
    uint64_t hi = CK_GROUP(CK_KEY(1 - kind, r, NBCX_SCHED_TAG_MAX, 0));
    uint32_t i = lower_group(P, lo);
    size_t n = (size_t)snprintf(buf, len, " (rank %d %s rank %d with %s",
                                peer, kind ? "sends to" : "receives from", r,
                                "tags");
    int shown = 0;
    while (i < P->np && CK_GROUP(P->key[i]) <= hi && n < len) {
        if (shown++ < 6)
            n += (size_t)snprintf(buf + n, len - n, " %d",
                                  CK_TAG(P->key[i]));
        i = group_end(P, i);
    }
    if (shown == 0)
        snprintf(buf, len, " (rank %d has no %s for rank %d at all)", peer,
                 kind ? "sends" : "receives", r);
    else if (n < len)
        snprintf(buf + n, len - n, "%s)", shown > 6 ? " ..." : "");
}

enum { NONE = 0xffffffffu };

/* Reports the orphans among the receives of rank r: those left without
 * a partner (pend[i] == NONE). */
static void orphan_receives(struct ck_job *J, struct views *V, int r)
{
    const struct ck_rank *R = &J->ranks[r];
    char a[192], hint[160];
    uint32_t i = lower_group(R, CK_GROUP(CK_KEY(1, 0, 0, 0)));
    while (i < R->np) {
        uint32_t j = group_end(R, i), matched = 0;
        while (matched < j - i && R->pend[i + matched] != NONE)
            matched++;
        for (uint32_t k = matched; k < j - i; k++) {
            int s = CK_PEER(R->key[i]);
            describe(J, V, r, i + k, a, sizeof a);
            if (matched == 0) {
                tags_hint(J, r, s, 1, hint, sizeof hint);
                ck_error(J, "orphan receive: %s has no matching send%s", a,
                         hint);
            } else {
                ck_error(J,
                         "orphan receive: %s is number %u with its peer and "
                         "tag, but rank %d posts only %u matching sends",
                         a, k + 1, s, matched);
            }
        }
        i = j;
    }
}

/* Pairs the k-th send of each (rank, peer, tag) group with the k-th
 * receive of the matching group, writing each one's partner into pend
 * (free until the deadlock check), checks sizes, reports orphans, and
 * finally turns each key into the link (peer << 32 | partner) that the
 * deadlock check follows. A rank's receive groups are sorted by source,
 * and sources are visited in increasing order, so one cursor per rank
 * finds them all in a single pass. */
void ck_match(struct ck_job *J)
{
    struct views V;
    views_init(&V);
    char a[192], b[192], hint[160];
    uint32_t *cursor = malloc(sizeof(uint32_t) * (size_t)J->size);
    if (!cursor) {
        ck_error(J, "out of memory in the matching check");
        J->fatal = true;
        return;
    }
    for (int r = 0; r < J->size; r++) {
        struct ck_rank *R = &J->ranks[r];
        for (uint32_t i = 0; i < R->np; i++)
            R->pend[i] = NONE;
        cursor[r] = lower_group(R, CK_GROUP(CK_KEY(1, 0, 0, 0)));
    }
    for (int r = 0; r < J->size; r++) {
        struct ck_rank *R = &J->ranks[r];
        for (uint32_t i = 0; i < R->np && CK_KIND(R->key[i]) == 0;) {
            uint32_t j = group_end(R, i);
            uint64_t key = R->key[i];
            int d = CK_PEER(key), tag = CK_TAG(key);
            struct ck_rank *D = &J->ranks[d];
            uint64_t want = CK_GROUP(CK_KEY(1, r, tag, 0));
            uint32_t p0 = cursor[d];
            while (p0 < D->np && CK_GROUP(D->key[p0]) < want)
                p0++;
            cursor[d] = p0;
            uint32_t p1 = p0;
            if (p0 < D->np && CK_GROUP(D->key[p0]) == want)
                p1 = group_end(D, p0);
            uint32_t mine = j - i, theirs = p1 - p0;
            uint32_t m = mine < theirs ? mine : theirs;
            for (uint32_t k = 0; k < m; k++) {
                R->pend[i + k] = p0 + k;
                D->pend[p0 + k] = i + k;
                if (CK_SIZE(R->key[i + k]) == CK_SIZE(D->key[p0 + k]))
                    continue;
                describe(J, &V, r, i + k, a, sizeof a);
                describe(J, &V, d, p0 + k, b, sizeof b);
                ck_error(J,
                         "size mismatch: %s meets %s (message %u of this "
                         "pair and tag)",
                         a, b, k + 1);
            }
            for (uint32_t k = m; k < mine; k++) {
                describe(J, &V, r, i + k, a, sizeof a);
                tags_hint(J, r, d, 0, hint, sizeof hint);
                if (theirs == 0)
                    ck_error(J, "orphan send: %s has no matching receive%s",
                             a, hint);
                else
                    ck_error(J,
                             "orphan send: %s is number %u with its peer and "
                             "tag, but rank %d posts only %u matching "
                             "receives",
                             a, k + 1, d, theirs);
            }
            i = j;
        }
    }
    free(cursor);
    for (int r = 0; r < J->size; r++)
        orphan_receives(J, &V, r);
    views_free(J, &V);
    for (int r = 0; r < J->size; r++) {
        struct ck_rank *R = &J->ranks[r];
        for (uint32_t i = 0; i < R->np; i++) {
            R->key[i] = (uint64_t)CK_PEER(R->key[i]) << 32 | R->pend[i];
            R->pend[i] = 0;
        }
    }
}

/* ------------------------------------------------------------------ */
/* Deadlock                                                            */
/* ------------------------------------------------------------------ */

/* The partner of p2p node v of rank r: (rank << 32 | id), or -1 for an
 * orphan (ck_match made the key this link). */
static int64_t partner(const struct ck_job *J, int r, uint32_t v)
{
    uint64_t link = J->ranks[r].key[v];
    return (uint32_t)link == NONE ? -1 : (int64_t)link;
}

struct stack {
    uint64_t *v;
    size_t n, cap;
    bool nomem;
};

static void push(struct stack *S, int r, uint32_t v)
{
    if (S->n == S->cap) {
        size_t cap = S->cap ? 2 * S->cap : 1024;
        uint64_t *p = realloc(S->v, cap * sizeof *p);
        if (!p) {
            S->nomem = true;
            return;
        }
        S->v = p;
        S->cap = cap;
    }
    S->v[S->n++] = (uint64_t)r << 32 | v;
}

static bool has_succ(const struct ck_rank *R, uint32_t v)
{
    return R->soff && R->soff[v + 1] > R->soff[v];
}

static void complete(struct ck_job *J, struct stack *S, int r, uint32_t v,
                     long long *done)
{
    struct ck_rank *R = &J->ranks[r];
    R->pend[v] |= CK_DONE;
    ++*done;
    if (has_succ(R, v))
        push(S, r, v);
}

/* v's predecessors are all complete. */
static void ready(struct ck_job *J, struct stack *S, int r, uint32_t v,
                  long long *done)
{
    struct ck_rank *R = &J->ranks[r];
    if (v >= R->np) {
        complete(J, S, r, v, done);
        return;
    }
    R->pend[v] |= CK_READY;
    int64_t p = partner(J, r, v);
    if (p < 0) {
        complete(J, S, r, v, done); /* an orphan, reported already */
        return;
    }
    int d = (int)(p >> 32);
    uint32_t w = (uint32_t)p;
    if ((J->ranks[d].pend[w] & (CK_READY | CK_DONE)) == CK_READY) {
        complete(J, S, r, v, done);
        complete(J, S, d, w, done);
    }
}

static void drain(struct ck_job *J, struct stack *S, long long *done)
{
    while (S->n > 0) {
        uint64_t x = S->v[--S->n];
        int r = (int)(x >> 32);
        uint32_t v = (uint32_t)x;
        struct ck_rank *R = &J->ranks[r];
        for (uint32_t e = R->soff[v]; e < R->soff[v + 1]; e++) {
            uint32_t w = R->succ[e];
            if ((--R->pend[w] & CK_COUNT) == 0)
                ready(J, S, r, w, done);
        }
    }
}

/* Depth-first search for a cycle among the nodes that never complete. */
struct frame {
    int r, r2;      /* the node and its partner (r2 < 0: none) */
    uint32_t v, v2;
    uint32_t e;     /* next successor to look at, over both nodes */
};

static bool stuck(const struct ck_job *J, int r, uint32_t v)
{
    return !(J->ranks[r].pend[v] & CK_DONE);
}

static uint32_t nsucc(const struct ck_rank *R, uint32_t v)
{
    return R->soff ? R->soff[v + 1] - R->soff[v] : 0;
}

static void enter(struct ck_job *J, struct frame *f, int r, uint32_t v)
{
    f->r = r;
    f->v = v;
    f->r2 = -1;
    f->v2 = 0;
    f->e = 0;
    J->ranks[r].pend[v] |= CK_GRAY;
    if (v < J->ranks[r].np) {
        int64_t p = partner(J, r, v);
        if (p >= 0 && stuck(J, (int)(p >> 32), (uint32_t)p)) {
            f->r2 = (int)(p >> 32);
            f->v2 = (uint32_t)p;
            J->ranks[f->r2].pend[f->v2] |= CK_GRAY;
        }
    }
}

static void leave(struct ck_job *J, const struct frame *f)
{
    J->ranks[f->r].pend[f->v] |= CK_BLACK;
    if (f->r2 >= 0)
        J->ranks[f->r2].pend[f->v2] |= CK_BLACK;
}

/* Frames from..top form the cycle; the last one leads back to node
 * (wr, ww) of frame `from`. Each step shows the node entered first and,
 * for a message, " = " its partner: "a = b -> c" says the pair completes
 * before c can start, whichever of the two c waits for. */
static void report_cycle(struct ck_job *J, const struct frame *F,
                         size_t from, size_t top, int wr, uint32_t ww,
                         long long nstuck)
{
    struct views V;
    views_init(&V);
    size_t len = 0, cap = 4096;
    char *msg = malloc(cap);
    char a[192], b[192];
    if (!msg)
        return;
    len += (size_t)snprintf(msg, cap,
                            "deadlock: %lld nodes can never complete; a "
                            "cycle of %zu steps (a -> b: a completes before "
                            "b starts; a = b: a send and its receive "
                            "complete together): ",
                            nstuck, top - from + 1);
    for (size_t i = from; i <= top && len < cap; i++) {
        if (i - from == 12) {
            len += (size_t)snprintf(msg + len, cap - len,
                                    " -> ... (%zu more steps)", top - i + 1);
            break;
        }
        const struct frame *f = &F[i];
        int r1 = f->r, r2 = f->r2;
        uint32_t v1 = f->v, v2 = f->v2;
        if (i == from && r2 == wr && v2 == ww) {
            r1 = f->r2;
            v1 = f->v2;
            r2 = f->r;
            v2 = f->v;
        }
        describe(J, &V, r1, v1, a, sizeof a);
        len += (size_t)snprintf(msg + len, cap - len, "%s%s",
                                i == from ? "" : " -> ", a);
        if (r2 >= 0 && len < cap) {
            describe(J, &V, r2, v2, b, sizeof b);
            len += (size_t)snprintf(msg + len, cap - len, " = %s", b);
        }
    }
    if (len < cap)
        snprintf(msg + len, cap - len, " -> back to the first step");
    ck_error(J, "%s", msg);
    free(msg);
    views_free(J, &V);
}

static void find_cycle(struct ck_job *J, long long nstuck)
{
    size_t cap = 1024, top = 0;
    struct frame *F = malloc(cap * sizeof *F);
    if (!F)
        return;
    for (int r0 = 0; r0 < J->size; r0++) {
        for (uint32_t v0 = 0; v0 < J->ranks[r0].n; v0++) {
            if (!stuck(J, r0, v0) ||
                (J->ranks[r0].pend[v0] & (CK_GRAY | CK_BLACK)))
                continue;
            top = 0;
            enter(J, &F[0], r0, v0);
            for (;;) {
                struct frame *f = &F[top];
                const struct ck_rank *R1 = &J->ranks[f->r];
                uint32_t n1 = nsucc(R1, f->v);
                uint32_t n2 =
                    f->r2 >= 0 ? nsucc(&J->ranks[f->r2], f->v2) : 0;
                if (f->e >= n1 + n2) {
                    leave(J, f);
                    if (top == 0)
                        break;
                    top--;
                    continue;
                }
                int via = f->e < n1 ? 0 : 1;
                int r = via ? f->r2 : f->r;
                const struct ck_rank *R = &J->ranks[r];
                uint32_t w = via ? R->succ[R->soff[f->v2] + (f->e - n1)]
                                 : R->succ[R->soff[f->v] + f->e];
                f->e++;
                if (!stuck(J, r, w) || (R->pend[w] & CK_BLACK))
                    continue;
                if (R->pend[w] & CK_GRAY) {
                    size_t from = top;
                    while (from > 0 &&
                           !((F[from].r == r && F[from].v == w) ||
                             (F[from].r2 == r && F[from].v2 == w)))
                        from--;
                    report_cycle(J, F, from, top, r, w, nstuck);
                    free(F);
                    return;
                }
                if (top + 1 == cap) {
                    struct frame *G = realloc(F, 2 * cap * sizeof *F);
                    if (!G) {
                        free(F);
                        return;
                    }
                    F = G;
                    cap *= 2;
                }
                enter(J, &F[++top], r, w);
            }
        }
    }
    free(F);
    ck_error(J, "deadlock: %lld nodes can never complete", nstuck);
}

void ck_deadlock(struct ck_job *J)
{
    long long total = 0, done = 0;
    struct stack S = { NULL, 0, 0, false };
    for (int r = 0; r < J->size; r++) { /* predecessors in the graph */
        struct ck_rank *R = &J->ranks[r];
        total += R->n;
        for (uint32_t v = 0; v < R->n; v++)
            R->pend[v] = 0;
        for (uint32_t e = 0; R->soff && e < R->soff[R->n]; e++)
            R->pend[R->succ[e]]++;
    }
    for (int r = 0; r < J->size && !S.nomem; r++) {
        struct ck_rank *R = &J->ranks[r];
        for (uint32_t v = 0; v < R->n; v++)
            if (R->pend[v] == 0) /* no flags, no predecessors left */
                ready(J, &S, r, v, &done);
        drain(J, &S, &done);
    }
    free(S.v);
    if (S.nomem) {
        ck_error(J, "out of memory in the deadlock check");
        return;
    }
    if (done < total)
        find_cycle(J, total - done);
}

void ck_free_ranks(struct ck_job *J)
{
    if (!J->ranks)
        return;
    for (int r = 0; r < J->size; r++) {
        free(J->ranks[r].key);
        free(J->ranks[r].pend);
        free(J->ranks[r].soff);
        free(J->ranks[r].succ);
    }
    free(J->ranks);
    J->ranks = NULL;
}
