/*
 * app.h - what the application kernels in apps/ share: the four variants
 * of every collective call site, the time spent in communication calls,
 * the command line (--variant, --check) and the result line.
 *
 * Variants (--variant):
 *   blocking    plain MPI blocking collectives (the reference)
 *   native-nb   the MPI library's own MPI_I* collectives, started where the
 *               application can overlap them and waited for later
 *   nbcx        the same calls on nbcx_i* (progress thread by default)
 *   persistent  nbcx_*_init once per call site, then nbcx_start + wait;
 *               a site whose arguments change every time (marked
 *               transient) falls back to nbcx_i*
 *   transformed only in app_<kernel>_transformed: the blocking code path
 *               as plain MPI, rewritten by nbcx-transform at build time
 *               and run under libnbcx-pmpi (apps/transformed/)
 *
 * Every collective call, start and wait is timed: comm_s is the time the
 * application spends inside MPI / nbcx communication calls (max over
 * ranks), total_s the kernel's wall time (max over ranks).
 *
 * --check runs the kernel twice, first with the blocking variant, then
 * with the one asked for, and compares the results: integers exactly,
 * floating-point values with the kernel's stated relative tolerance.
 * Exit code: 0 ok, 1 wrong answer or mismatch, 2 bad arguments.
 */
#ifndef APPS_APP_H
#define APPS_APP_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbcx_mpi.h"

enum { V_BLOCKING, V_NATIVE, V_NBCX, V_PERSISTENT, V_TRANSFORMED, V_COUNT };
static const char *const app_variant_names[V_COUNT] = {
    "blocking", "native-nb", "nbcx", "persistent", "transformed"
};
/* The kernel's run_transformed(), in the transformed build only
 * (apps/transformed/extract_blocking.py defines it). */
#ifndef APP_RUN_TRANSFORMED
#define APP_RUN_TRANSFORMED NULL
#endif

/* The variant the current run uses and its communication time. */
static int app_variant;
static double app_comm_s;

#define APP_DIE(...)                                                       \
    do {                                                                   \
        fprintf(stderr, __VA_ARGS__);                                      \
        fputc('\n', stderr);                                               \
        MPI_Abort(MPI_COMM_WORLD, 1);                                      \
    } while (0)
#define NB(call)                                                           \
    do {                                                                   \
        int e_ = (call);                                                   \
        if (e_ != NBCX_SUCCESS)                                            \
            APP_DIE("%s:%d: %s: %s", __FILE__, __LINE__, #call,            \
                    nbcx_error_string(e_));                                \
    } while (0)
#define MP(call)                                                           \
    do {                                                                   \
        int e_ = (call);                                                   \
        if (e_ != MPI_SUCCESS)                                             \
            APP_DIE("%s:%d: %s failed (%d)", __FILE__, __LINE__, #call,    \
                    e_);                                                   \
    } while (0)

/* A communicator as both libraries see it. */
struct app_comm {
    MPI_Comm m;
    nbcx_comm n;
};
static inline void app_comm_make(MPI_Comm m, struct app_comm *c)
{
    c->m = m;
    c->n = NBCX_COMM_NULL;
    double t = MPI_Wtime(); /* a collective (MPI_Comm_dup): communication */
    if (app_variant == V_NBCX || app_variant == V_PERSISTENT)
        NB(nbcx_comm_from_mpi(m, &c->n));
    app_comm_s += MPI_Wtime() - t;
}
static inline void app_comm_free(struct app_comm *c)
{
    if (c->n != NBCX_COMM_NULL)
        NB(nbcx_comm_free(&c->n));
}

/* A datatype and an operation in both libraries. */
struct app_dt {
    MPI_Datatype m;
    nbcx_datatype n;
};
#define APP_DOUBLE ((struct app_dt){ MPI_DOUBLE, NBCX_DOUBLE })
#define APP_INT ((struct app_dt){ MPI_INT, NBCX_INT32 })
#define APP_INT64 ((struct app_dt){ MPI_INT64_T, NBCX_INT64 })
#define APP_BYTE ((struct app_dt){ MPI_BYTE, NBCX_UINT8 })
struct app_op {
    MPI_Op m;
    nbcx_op n;
};
#define APP_SUM ((struct app_op){ MPI_SUM, NBCX_SUM })

/* One collective call site: its request in each library; persistent
 * requests are made at the first start and reused (the site must then be
 * called with the same arguments every time). */
struct app_site {
    MPI_Request m;
    nbcx_request n;
    int inited;    /* persistent request made */
    int transient; /* arguments change: no persistent request */
};
#define APP_SITE_INIT { MPI_REQUEST_NULL, NBCX_REQUEST_NULL, 0, 0 }

static inline double app_now(void)
{
    return MPI_Wtime();
}

/* How a site runs in the current variant. */
enum { K_BLOCK, K_MPI_NB, K_NBCX, K_PERS };
static inline int app_kind(const struct app_site *s)
{
    switch (app_variant) {
    case V_BLOCKING: return K_BLOCK;
    case V_NATIVE: return K_MPI_NB;
    case V_NBCX: return K_NBCX;
    default: return s->transient ? K_NBCX : K_PERS;
    }
}

static inline void app_wait(struct app_site *s)
{
    double t = app_now();
    switch (app_kind(s)) {
    case K_BLOCK: break;
    case K_MPI_NB: MP(MPI_Wait(&s->m, MPI_STATUS_IGNORE)); break;
    default: NB(nbcx_wait(&s->n)); break;
    }
    app_comm_s += app_now() - t;
}
static inline void app_waitall(int n, struct app_site *s)
{
    for (int i = 0; i < n; i++)
        app_wait(&s[i]);
}
static inline void app_site_free(struct app_site *s)
{
    if (s->inited && s->n != NBCX_REQUEST_NULL)
        NB(nbcx_request_free(&s->n));
    s->inited = 0;
    s->n = NBCX_REQUEST_NULL;
}

/* Starts (or, blocking, runs) one collective of a site. P_ is the
 * persistent init call, I_ the nbcx nonblocking one, M_ the MPI
 * nonblocking one and B_ the MPI blocking one. */
#define APP_START(s, B_, M_, I_, P_)                                       \
    do {                                                                   \
        double t_ = app_now();                                             \
        switch (app_kind(s)) {                                             \
        case K_BLOCK: MP(B_); break;                                       \
        case K_MPI_NB: MP(M_); break;                                      \
        case K_NBCX: NB(I_); break;                                        \
        default:                                                           \
            if (!(s)->inited) {                                            \
                NB(P_);                                                    \
                (s)->inited = 1;                                           \
            }                                                              \
            NB(nbcx_start(&(s)->n));                                       \
        }                                                                  \
        app_comm_s += app_now() - t_;                                      \
    } while (0)

static inline void app_allreduce(struct app_site *s, const void *sb, void *rb,
                                 int n, struct app_dt t, struct app_op o,
                                 struct app_comm *c)
{
    APP_START(s, MPI_Allreduce(sb, rb, n, t.m, o.m, c->m),
              MPI_Iallreduce(sb, rb, n, t.m, o.m, c->m, &s->m),
              nbcx_iallreduce(sb, rb, n, t.n, o.n, c->n, &s->n),
              nbcx_allreduce_init(sb, rb, n, t.n, o.n, c->n, &s->n));
}
static inline void app_bcast(struct app_site *s, void *b, int n,
                             struct app_dt t, int root, struct app_comm *c)
{
    APP_START(s, MPI_Bcast(b, n, t.m, root, c->m),
              MPI_Ibcast(b, n, t.m, root, c->m, &s->m),
              nbcx_ibcast(b, n, t.n, root, c->n, &s->n),
              nbcx_bcast_init(b, n, t.n, root, c->n, &s->n));
}
static inline void app_allgatherv(struct app_site *s, const void *sb, int sn,
                                  void *rb, const int *rn, const int *rd,
                                  struct app_dt t, struct app_comm *c)
{
    APP_START(s, MPI_Allgatherv(sb, sn, t.m, rb, rn, rd, t.m, c->m),
              MPI_Iallgatherv(sb, sn, t.m, rb, rn, rd, t.m, c->m, &s->m),
              nbcx_iallgatherv(sb, sn, t.n, rb, rn, rd, t.n, c->n, &s->n),
              nbcx_allgatherv_init(sb, sn, t.n, rb, rn, rd, t.n, c->n,
                                   &s->n));
}
static inline void app_alltoall(struct app_site *s, const void *sb, void *rb,
                                int n, struct app_dt t, struct app_comm *c)
{
    APP_START(s, MPI_Alltoall(sb, n, t.m, rb, n, t.m, c->m),
              MPI_Ialltoall(sb, n, t.m, rb, n, t.m, c->m, &s->m),
              nbcx_ialltoall(sb, n, t.n, rb, n, t.n, c->n, &s->n),
              nbcx_alltoall_init(sb, n, t.n, rb, n, t.n, c->n, &s->n));
}
static inline void app_gather(struct app_site *s, const void *sb, void *rb,
                              int n, struct app_dt t, int root,
                              struct app_comm *c)
{
    APP_START(s, MPI_Gather(sb, n, t.m, rb, n, t.m, root, c->m),
              MPI_Igather(sb, n, t.m, rb, n, t.m, root, c->m, &s->m),
              nbcx_igather(sb, n, t.n, rb, n, t.n, root, c->n, &s->n),
              nbcx_gather_init(sb, n, t.n, rb, n, t.n, root, c->n, &s->n));
}
static inline void app_gatherv(struct app_site *s, const void *sb, int sn,
                               void *rb, const int *rn, const int *rd,
                               struct app_dt t, int root, struct app_comm *c)
{
    APP_START(s, MPI_Gatherv(sb, sn, t.m, rb, rn, rd, t.m, root, c->m),
              MPI_Igatherv(sb, sn, t.m, rb, rn, rd, t.m, root, c->m, &s->m),
              nbcx_igatherv(sb, sn, t.n, rb, rn, rd, t.n, root, c->n, &s->n),
              nbcx_gatherv_init(sb, sn, t.n, rb, rn, rd, t.n, root, c->n,
                                &s->n));
}
static inline void app_neighbor_alltoall(struct app_site *s, const void *sb,
                                         void *rb, int n, struct app_dt t,
                                         struct app_comm *c)
{
    APP_START(s, MPI_Neighbor_alltoall(sb, n, t.m, rb, n, t.m, c->m),
              MPI_Ineighbor_alltoall(sb, n, t.m, rb, n, t.m, c->m, &s->m),
              nbcx_ineighbor_alltoall(sb, n, t.n, rb, n, t.n, c->n, &s->n),
              nbcx_neighbor_alltoall_init(sb, n, t.n, rb, n, t.n, c->n,
                                          &s->n));
}
static inline void app_neighbor_alltoallv(struct app_site *s, const void *sb,
                                          const int *sn, const int *sd,
                                          void *rb, const int *rn,
                                          const int *rd, struct app_dt t,
                                          struct app_comm *c)
{
    APP_START(s,
              MPI_Neighbor_alltoallv(sb, sn, sd, t.m, rb, rn, rd, t.m, c->m),
              MPI_Ineighbor_alltoallv(sb, sn, sd, t.m, rb, rn, rd, t.m, c->m,
                                      &s->m),
              nbcx_ineighbor_alltoallv(sb, sn, sd, t.n, rb, rn, rd, t.n, c->n,
                                       &s->n),
              nbcx_neighbor_alltoallv_init(sb, sn, sd, t.n, rb, rn, rd, t.n,
                                           c->n, &s->n));
}
/* Displacements in bytes (ptrdiff_t and MPI_Aint are the same width on
 * every platform this builds on: checked below). */
_Static_assert(sizeof(ptrdiff_t) == sizeof(MPI_Aint), "MPI_Aint width");
static inline void app_neighbor_alltoallw(
    struct app_site *s, const void *sb, const int *sn, const ptrdiff_t *sd,
    const MPI_Datatype *stm, const nbcx_datatype *stn, void *rb,
    const int *rn, const ptrdiff_t *rd, const MPI_Datatype *rtm,
    const nbcx_datatype *rtn, struct app_comm *c)
{
    const MPI_Aint *msd = (const MPI_Aint *)sd, *mrd = (const MPI_Aint *)rd;
    APP_START(s,
              MPI_Neighbor_alltoallw(sb, sn, msd, stm, rb, rn, mrd, rtm,
                                     c->m),
              MPI_Ineighbor_alltoallw(sb, sn, msd, stm, rb, rn, mrd, rtm,
                                      c->m, &s->m),
              nbcx_ineighbor_alltoallw(sb, sn, sd, stn, rb, rn, rd, rtn,
                                       c->n, &s->n),
              nbcx_neighbor_alltoallw_init(sb, sn, sd, stn, rb, rn, rd, rtn,
                                           c->n, &s->n));
}

/* ---- results ---- */

#define APP_MAX_VALUES 8
struct app_result {
    int nint, nreal;
    const char *int_name[APP_MAX_VALUES];
    int64_t ints[APP_MAX_VALUES];
    const char *real_name[APP_MAX_VALUES];
    double reals[APP_MAX_VALUES];
    int ok;           /* the kernel's own verification passed */
    char why[160];    /* if not, why */
    double total_s;   /* this rank's kernel time */
};
static inline void app_int(struct app_result *r, const char *name, int64_t v)
{
    r->int_name[r->nint] = name;
    r->ints[r->nint++] = v;
}
static inline void app_real(struct app_result *r, const char *name, double v)
{
    r->real_name[r->nreal] = name;
    r->reals[r->nreal++] = v;
}

/* A kernel: parses its own options (returns 0, or -1 on a bad one) and
 * runs once in app_variant, filling the result on every rank (values
 * identical on every rank). */
struct app_kernel {
    const char *name;
    const char *usage; /* its options */
    double rtol;       /* relative tolerance of the real values */
    const char *rtol_why;
    int (*option)(const char *key, const char *val); /* 1 used, 0 unknown, -1 bad */
    void (*run)(struct app_result *res);
    /* The transformed variant (NULL: not in this build). */
    void (*run_transformed)(struct app_result *res);
};

static inline long app_atol(const char *v, long lo, long hi, int *bad)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || x < lo || x > hi)
        *bad = 1;
    return x;
}

static inline void app_print_result(const struct app_kernel *k,
                                    const struct app_result *r, int variant,
                                    int size, double total, double comm)
{
    printf("RESULT %s variant=%s ranks=%d", k->name,
           app_variant_names[variant], size);
    for (int i = 0; i < r->nint; i++)
        printf(" %s=%lld", r->int_name[i], (long long)r->ints[i]);
    for (int i = 0; i < r->nreal; i++)
        printf(" %s=%.12e", r->real_name[i], r->reals[i]);
    printf(" verified=%s\n", r->ok ? "yes" : "NO");
    printf("TIME %s variant=%s ranks=%d total_s=%.6f comm_s=%.6f\n", k->name,
           app_variant_names[variant], size, total, comm);
    fflush(stdout);
}

/* One run in `variant`: times it and prints its lines on rank 0. */
static inline void app_run_once(const struct app_kernel *k, int variant,
                                struct app_result *r, int rank, int size)
{
    memset(r, 0, sizeof *r);
    r->ok = 1;
    app_variant = variant;
    app_comm_s = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t = app_now();
    if (variant == V_TRANSFORMED)
        k->run_transformed(r);
    else
        k->run(r);
    double mine[2] = { app_now() - t, app_comm_s }, mx[2];
    MPI_Allreduce(mine, mx, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int ok = r->ok, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all && r->ok)
        snprintf(r->why, sizeof r->why, "another rank's check failed");
    r->ok = all;
    r->total_s = mx[0];
    if (rank == 0) {
        app_print_result(k, r, variant, size, mx[0], mx[1]);
        if (!r->ok)
            printf("FAILED %s variant=%s: %s\n", k->name,
                   app_variant_names[variant], r->why);
    }
}

static inline int app_main(int argc, char **argv, const struct app_kernel *k)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int variant = V_BLOCKING, check = 0, bad = 0;
    for (int i = 1; i < argc && !bad; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--check") == 0) {
            check = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strncmp(a, "--", 2) != 0 ||
            i + 1 >= argc) {
            bad = 1;
            break;
        }
        const char *v = argv[++i];
        if (strcmp(a, "--variant") == 0) {
            variant = -1;
            for (int j = 0; j < V_COUNT; j++)
                if (strcmp(v, app_variant_names[j]) == 0)
                    variant = j;
            bad = variant < 0;
            if (variant == V_TRANSFORMED && !k->run_transformed) {
                if (rank == 0)
                    fprintf(stderr, "%s: the transformed variant is the "
                                    "program app_%s_transformed\n",
                            k->name, k->name);
                bad = 1;
            }
        } else {
            int u = k->option(a + 2, v);
            bad = u != 1;
        }
    }
    if (bad) {
        if (rank == 0) {
            fprintf(stderr,
                    "usage: %s [--variant blocking|native-nb|nbcx|persistent"
                    "%s]"
                    " [--check] %s\n  --check: run the blocking variant "
                    "first and compare ",
                    k->name, k->run_transformed ? "|transformed" : "",
                    k->usage);
            if (k->rtol > 0)
                fprintf(stderr, "(integers exactly, reals to a relative "
                                "%.0e: %s)\n", k->rtol, k->rtol_why);
            else
                fprintf(stderr, "(exactly: %s)\n", k->rtol_why);
        }
        MPI_Finalize();
        return 2;
    }
    if (provided < MPI_THREAD_MULTIPLE && rank == 0)
        fprintf(stderr, "%s: MPI gives no MPI_THREAD_MULTIPLE: nbcx "
                        "variants may not progress in the background\n",
                k->name);
    struct app_result ref, res;
    int fail = 0;
    if (check && variant != V_BLOCKING) {
        app_run_once(k, V_BLOCKING, &ref, rank, size);
        fail |= !ref.ok;
    }
    app_run_once(k, variant, &res, rank, size);
    fail |= !res.ok;
    if (check && variant != V_BLOCKING && rank == 0) {
        int mism = ref.nint != res.nint || ref.nreal != res.nreal;
        for (int i = 0; !mism && i < res.nint; i++)
            if (ref.ints[i] != res.ints[i]) {
                printf("MISMATCH %s: %s=%lld, blocking %lld\n",
                       app_variant_names[variant], res.int_name[i],
                       (long long)res.ints[i], (long long)ref.ints[i]);
                mism = 1;
            }
        for (int i = 0; !mism && i < res.nreal; i++) {
            double a = res.reals[i], b = ref.reals[i];
            double scale = fmax(fabs(a), fabs(b));
            if (!(fabs(a - b) <= k->rtol * scale)) {
                printf("MISMATCH %s: %s=%.17g, blocking %.17g (rel. "
                       "tolerance %.0e)\n",
                       app_variant_names[variant], res.real_name[i], a, b,
                       k->rtol);
                mism = 1;
            }
        }
        if (!mism && res.nreal == 0)
            printf("CHECK %s variant=%s ranks=%d: same answer as blocking "
                   "(integers, exactly)\n",
                   k->name, app_variant_names[variant], size);
        else if (!mism)
            printf("CHECK %s variant=%s ranks=%d: same answer as blocking "
                   "(integers exactly, reals within a relative %.0e)\n",
                   k->name, app_variant_names[variant], size, k->rtol);
        fail |= mism;
    }
    MPI_Bcast(&fail, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return fail ? 1 : 0;
}

/* Deterministic pseudo-random numbers from a 64-bit key (splitmix64). */
static inline uint64_t app_hash(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
static inline double app_unit(uint64_t key) /* in [0, 1) */
{
    return (double)(app_hash(key) >> 11) * 0x1.0p-53;
}

#endif
