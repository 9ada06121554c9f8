/*
 * nbcx-bench-threads - collectives from many application threads at
 * once (issue 35): with MPI_THREAD_MULTIPLE, T threads per rank, each on
 * its own communicator (an MPI_Comm_dup of MPI_COMM_WORLD, and the nbcx
 * communicator made from it), start and wait on a nonblocking collective
 * over and over. The figure is the aggregate throughput: operations per
 * second of all threads together (T * iterations over the slowest
 * thread's time, the maximum over ranks), the median of --reps runs,
 * for the native MPI_I<op> and for nbcx, side by side in one run.
 *
 *   mpiexec -n 2 nbcx-bench-threads --threads 1,2,4 --ops ibcast,iallreduce
 *       --sizes 8,64k [--iters N] [--reps 5] [--impl both|nbcx|native]
 *
 * Every result is checked: each iteration's input is a function of
 * (thread, iteration, rank, element), and the last iteration's output is
 * compared with its sequential reference on every thread. Open MPI 4.1's
 * nonblocking collectives (libnbc) are not thread-safe: with Open MPI,
 * --impl both measures nbcx only and says so.
 */
#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "../common/tool_args.h"
#include "nbcx.h"
#include "nbcx_mpi.h"

enum op { OP_IBCAST, OP_IALLREDUCE, NOPS };
static const char *const op_names[NOPS] = { "ibcast", "iallreduce" };
enum impl { NATIVE, NBCX };
static const char *const impl_names[] = { "native", "nbcx" };

enum { MAX_THREADS = 64, MAX_LIST = 16 };

struct config {
    int threads[MAX_LIST], nthreads;
    size_t sizes[MAX_LIST];
    int nsizes;
    int ops[NOPS], nops;
    int iters; /* 0: by size */
    int reps;
    int sync; /* a barrier every sync operations (0: none) */
    int impls[2], nimpls;
};

struct worker {
    pthread_t tid;
    int index, rank, size;
    enum impl impl;
    enum op op;
    size_t bytes;
    int iters;
    int sync;
    MPI_Comm mcomm;
    nbcx_comm ncomm;
    int *buf, *out;   /* bytes each, as ints */
    double seconds;   /* of the timed loop */
    int errors;
    pthread_barrier_t *start;
};

/* Element i of the input of (thread, iteration, rank). */
_Static_assert(sizeof(int) == 4, "NBCX_INT32 is int");

static int input(int t, int it, int rank, size_t i)
{
    return (int)((unsigned)(t * 7919 + it * 104729 + rank * 31 + (int)i) &
                 0xFFFF);
}

static int run_one(struct worker *w, int it)
{
    size_t n = w->bytes / sizeof(int);
    for (size_t i = 0; i < n; i++)
        w->buf[i] = input(w->index, it, w->rank, i);
    if (w->impl == NATIVE) {
        MPI_Request r;
        int e = w->op == OP_IBCAST
                    ? MPI_Ibcast(w->buf, (int)n, MPI_INT, 0, w->mcomm, &r)
                    : MPI_Iallreduce(w->buf, w->out, (int)n, MPI_INT, MPI_SUM,
                                     w->mcomm, &r);
        return e != MPI_SUCCESS ? e : MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    nbcx_request r;
    int e = w->op == OP_IBCAST
                ? nbcx_ibcast(w->buf, (int)n, NBCX_INT32, 0, w->ncomm, &r)
                : nbcx_iallreduce(w->buf, w->out, (int)n, NBCX_INT32, NBCX_SUM,
                                  w->ncomm, &r);
    return e != NBCX_SUCCESS ? e : nbcx_wait(&r);
}

/* The last iteration's result against its sequential reference. */
static int check(struct worker *w, int it)
{
    size_t n = w->bytes / sizeof(int);
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++) {
        int want = 0;
        if (w->op == OP_IBCAST) {
            want = input(w->index, it, 0, i);
            bad = w->buf[i] != want;
        } else {
            for (int r = 0; r < w->size; r++)
                want += input(w->index, it, r, i);
            bad = w->out[i] != want;
        }
    }
    return bad;
}

static void *work(void *arg)
{
    struct worker *w = arg;
    for (int it = 0; it < 20; it++) /* warm-up */
        if (run_one(w, it) != 0)
            w->errors++;
    pthread_barrier_wait(w->start);
    double t0 = MPI_Wtime();
    for (int it = 0; it < w->iters; it++) {
        if (run_one(w, it) != 0)
            w->errors++;
        if (w->sync && (it + 1) % w->sync == 0 &&
            MPI_Barrier(w->mcomm) != MPI_SUCCESS)
            w->errors++;
    }
    w->seconds = MPI_Wtime() - t0;
    w->errors += check(w, w->iters - 1);
    return NULL;
}

static int parse_list(const char *s, size_t out[], int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        unsigned long long v = strtoull(s, &end, 10);
        if (end == s)
            return -1;
        if (*end == 'k' || *end == 'K')
            v <<= 10, end++;
        else if (*end == 'm' || *end == 'M')
            v <<= 20, end++;
        out[n++] = (size_t)v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return n;
}

static void usage(FILE *f)
{
    fprintf(f,
"Usage: mpiexec -n RANKS nbcx-bench-threads [options]\n"
"\n"
"Collectives from many application threads at once: T threads per rank\n"
"(MPI_THREAD_MULTIPLE), each on its own communicator, start and wait on\n"
"a nonblocking collective over and over. Prints the aggregate throughput\n"
"(operations per second of all threads together; the median of --reps\n"
"runs, each the slowest thread's, maximum over ranks) of the native\n"
"MPI_I<op> and of nbcx, side by side. Every result is checked.\n"
"\n"
"Options:\n"
"  --threads LIST  threads per rank, e.g. 1,2,4 (default 1,2,4)\n"
"  --ops LIST      ibcast, iallreduce (default both; ints, SUM)\n"
"  --sizes LIST    bytes per operation, suffixes k, m (default 8,64k)\n"
"  --iters N       operations per thread and run (default: 2000 below\n"
"                  4 KiB, else 200)\n"
"  --reps N        runs per point (default 5)\n"
"  --sync N        an MPI_Barrier on the thread's communicator after every\n"
"                  N operations (default 0: none), timed with them: bounds\n"
"                  how far an ibcast root runs ahead of the other ranks\n"
"  --impl WHICH    both, nbcx or native (default both; Open MPI 4.1's\n"
"                  libnbc is not thread-safe: there, nbcx only)\n");
}

static int parse(int argc, char **argv, struct config *c)
{
    size_t tmp[MAX_LIST];
    c->nthreads = 3;
    c->threads[0] = 1, c->threads[1] = 2, c->threads[2] = 4;
    c->nsizes = 2;
    c->sizes[0] = 8, c->sizes[1] = 65536;
    c->nops = 2;
    c->ops[0] = OP_IBCAST, c->ops[1] = OP_IALLREDUCE;
    c->reps = 5;
    c->nimpls = 2;
    c->impls[0] = NATIVE, c->impls[1] = NBCX;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return -1;
        if (!strcmp(argv[i], "--threads")) {
            int n = parse_list(v, tmp, MAX_LIST);
            if (n <= 0)
                return -1;
            for (int k = 0; k < n; k++) {
                if (tmp[k] < 1 || tmp[k] > MAX_THREADS)
                    return -1;
                c->threads[k] = (int)tmp[k];
            }
            c->nthreads = n;
        } else if (!strcmp(argv[i], "--sizes")) {
            int n = parse_list(v, c->sizes, MAX_LIST);
            if (n <= 0)
                return -1;
            for (int k = 0; k < n; k++)
                if (c->sizes[k] < sizeof(int) || c->sizes[k] > (1u << 30))
                    return -1;
            c->nsizes = n;
        } else if (!strcmp(argv[i], "--ops")) {
            c->nops = 0;
            char copy[128];
            snprintf(copy, sizeof copy, "%s", v);
            for (char *t = copy; t && *t;) {
                char *comma = strchr(t, ',');
                if (comma)
                    *comma = '\0';
                int found = -1;
                for (int k = 0; k < NOPS; k++)
                    if (!strcmp(t, op_names[k]))
                        found = k;
                if (found < 0 || c->nops == NOPS)
                    return -1;
                c->ops[c->nops++] = found;
                t = comma ? comma + 1 : NULL;
            }
        } else if (!strcmp(argv[i], "--iters")) {
            c->iters = atoi(v);
            if (c->iters < 1)
                return -1;
        } else if (!strcmp(argv[i], "--sync")) {
            c->sync = atoi(v);
            if (c->sync < 0)
                return -1;
        } else if (!strcmp(argv[i], "--reps")) {
            c->reps = atoi(v);
            if (c->reps < 1)
                return -1;
        } else if (!strcmp(argv[i], "--impl")) {
            if (!strcmp(v, "both")) {
                c->nimpls = 2;
            } else if (!strcmp(v, "nbcx") || !strcmp(v, "native")) {
                c->nimpls = 1;
                c->impls[0] = !strcmp(v, "nbcx") ? NBCX : NATIVE;
            } else {
                return -1;
            }
        } else {
            return -1;
        }
        i++;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One run: T threads of impl on op and bytes; the aggregate operations
 * per second (max over ranks of the slowest thread's time), or -1 on an
 * error or a wrong result anywhere. */
static double run(struct worker *ws, int t, enum impl impl, enum op op,
                  size_t bytes, int iters, int sync)
{
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)t);
    for (int i = 0; i < t; i++) {
        ws[i].impl = impl;
        ws[i].op = op;
        ws[i].bytes = bytes;
        ws[i].iters = iters;
        ws[i].sync = sync;
        ws[i].errors = 0;
        ws[i].start = &start;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < t; i++)
        pthread_create(&ws[i].tid, NULL, work, &ws[i]);
    double slowest = 0;
    int errors = 0;
    for (int i = 0; i < t; i++) {
        pthread_join(ws[i].tid, NULL);
        slowest = ws[i].seconds > slowest ? ws[i].seconds : slowest;
        errors += ws[i].errors;
    }
    pthread_barrier_destroy(&start);
    MPI_Allreduce(MPI_IN_PLACE, &slowest, 1, MPI_DOUBLE, MPI_MAX,
                  MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM,
                  MPI_COMM_WORLD);
    return errors ? -1 : (double)t * iters / slowest;
}

int main(int argc, char **argv)
{
    nbcx_tool_version(argc, argv, "nbcx-bench-threads");
    if (nbcx_tool_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    struct config c = { 0 };
    if (parse(argc, argv, &c) != 0) {
        fprintf(stderr, "nbcx-bench-threads: bad options\n");
        usage(stderr);
        return 2;
    }
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            fprintf(stderr, "nbcx-bench-threads: MPI gives no "
                            "MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 2;
    }
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, ",\n")] = '\0';
    for (char *p = lib; *p; p++)
        *p = *p == '\t' ? ' ' : *p;
    bool open_mpi = strncmp(lib, "Open MPI", 8) == 0;
    if (open_mpi && c.nimpls == 2) {
        c.nimpls = 1;
        c.impls[0] = NBCX;
    } else if (open_mpi && c.impls[0] == NATIVE) {
        if (rank == 0)
            fprintf(stderr, "nbcx-bench-threads: Open MPI 4.1's nonblocking "
                            "collectives are not thread-safe\n");
        MPI_Finalize();
        return 2;
    }
    int tmax = 0;
    for (int i = 0; i < c.nthreads; i++)
        tmax = c.threads[i] > tmax ? c.threads[i] : tmax;
    size_t bmax = 0;
    for (int i = 0; i < c.nsizes; i++)
        bmax = c.sizes[i] > bmax ? c.sizes[i] : bmax;
    struct worker ws[MAX_THREADS];
    for (int i = 0; i < tmax; i++) {
        memset(&ws[i], 0, sizeof ws[i]);
        ws[i].index = i;
        ws[i].rank = rank;
        ws[i].size = size;
        MPI_Comm_dup(MPI_COMM_WORLD, &ws[i].mcomm);
        int e = nbcx_comm_from_mpi(ws[i].mcomm, &ws[i].ncomm);
        ws[i].buf = malloc(bmax);
        ws[i].out = malloc(bmax);
        if (e != NBCX_SUCCESS || !ws[i].buf || !ws[i].out) {
            fprintf(stderr, "nbcx-bench-threads: set-up failed: %s\n",
                    nbcx_error_detail(e));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (rank == 0) {
        char all[1024], info[64] = "progress=?", sync_note[64] = "";
        if (c.sync)
            snprintf(sync_note, sizeof sync_note,
                     "; a barrier every %d operations", c.sync);
        nbcx_info(all, sizeof all);
        const char *p = strstr(all, "progress=");
        if (p)
            snprintf(info, sizeof info, "%.*s", (int)strcspn(p, " "), p);
        printf("# nbcx-bench-threads: %s, %d ranks, %s%s; aggregate "
               "operations per second of all threads (median of %d runs, "
               "slowest thread, max over ranks%s)\n",
               lib, size, info,
               open_mpi ? "; native not measured (Open MPI 4.1's libnbc "
                          "is not thread-safe)"
                        : "",
               c.reps, sync_note);
        printf("%-11s %8s %8s", "op", "bytes", "threads");
        for (int k = 0; k < c.nimpls; k++)
            printf(" %12s", impl_names[c.impls[k]]);
        if (c.nimpls == 2)
            printf(" %8s", "nbcx/nat");
        printf(" %12s\n", "nbcx/1thr");
    }
    int status = 0;
    for (int o = 0; o < c.nops; o++)
        for (int s = 0; s < c.nsizes; s++) {
            double nbcx_one = 0;
            for (int ti = 0; ti < c.nthreads; ti++) {
                int t = c.threads[ti];
                int iters = c.iters ? c.iters : c.sizes[s] < 4096 ? 2000 : 200;
                double med[2] = { 0, 0 };
                for (int k = 0; k < c.nimpls; k++) {
                    double v[64];
                    int reps = c.reps < 64 ? c.reps : 64;
                    for (int r = 0; r < reps; r++) {
                        v[r] = run(ws, t, c.impls[k], c.ops[o], c.sizes[s],
                                   iters, c.sync);
                        if (v[r] < 0) {
                            if (rank == 0)
                                fprintf(stderr, "nbcx-bench-threads: %s %s "
                                        "of %zu bytes on %d threads: an "
                                        "error or a wrong result\n",
                                        impl_names[c.impls[k]],
                                        op_names[c.ops[o]], c.sizes[s], t);
                            status = 1;
                        }
                    }
                    qsort(v, (size_t)reps, sizeof v[0], cmp_double);
                    med[k] = v[reps / 2];
                    if (c.impls[k] == NBCX && t == 1)
                        nbcx_one = med[k];
                }
                if (rank != 0)
                    continue;
                printf("%-11s %8zu %8d", op_names[c.ops[o]], c.sizes[s], t);
                double nb = 0, nat = 0;
                for (int k = 0; k < c.nimpls; k++) {
                    printf(" %12.0f", med[k]);
                    if (c.impls[k] == NBCX)
                        nb = med[k];
                    else
                        nat = med[k];
                }
                if (c.nimpls == 2)
                    printf(" %8.2f", nat > 0 ? nb / nat : 0);
                if (nbcx_one > 0 && nb > 0)
                    printf(" %12.2f\n", nb / nbcx_one);
                else
                    printf(" %12s\n", "-");
                fflush(stdout);
            }
        }
    for (int i = 0; i < tmax; i++) {
        nbcx_comm_free(&ws[i].ncomm);
        MPI_Comm_free(&ws[i].mcomm);
        free(ws[i].buf);
        free(ws[i].out);
    }
    MPI_Finalize();
    return status;
}
