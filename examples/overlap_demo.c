/*
 * overlap_demo.c - how much of an allreduce hides behind computation.
 *
 * For one message size, on the same inputs, it measures
 *   t_pure  start + wait at once (nbcx, and the native MPI_Iallreduce)
 *   t_cpu   a floating-point loop calibrated to last as long as t_pure
 *   t_ovrl  start, compute t_cpu (calling test every 1/tests of it), wait
 * and prints overlap = (t_pure + t_cpu - t_ovrl) / min(t_pure, t_cpu)
 * (the IMB-NBC definition), median over repetitions, max over ranks.
 * In nbcx's default progress mode (auto) a collective this large wakes the
 * progress thread (thread mode does it for every one) and advances while
 * the application computes; with NBCX_PROGRESS=caller it advances only
 * inside nbcx calls, as the native one does inside MPI calls, so overlap
 * then needs test calls: the demo shows both with and without them.
 *
 *   mpiexec -n 2 ./overlap_demo [bytes] [tests] [reps]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbcx_mpi.h"

static double sink; /* keeps the computation from being optimised away */

/* Real floating-point work on a cache-resident array; calls poll()
 * `tests` times spread evenly through it. */
static void compute(long iters, int tests, void (*poll)(void *), void *arg)
{
    static double a[2048];
    long chunk = tests > 0 ? iters / (tests + 1) + 1 : iters + 1;
    double acc = 0;
    for (long i = 0; i < iters; i++) {
        double *x = &a[i & 2047];
        *x = *x * 0.999 + 1e-3;
        acc += sqrt(*x + 1.0);
        if (poll && i % chunk == chunk - 1)
            poll(arg);
    }
    sink += acc;
}

static void poll_nbcx(void *r)
{
    int flag;
    nbcx_test(r, &flag);
}

static void poll_mpi(void *r)
{
    int flag;
    MPI_Test(r, &flag, MPI_STATUS_IGNORE);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median over ranks' maxima: each rank passes its repetitions. */
static double median_max(double *t, int n)
{
    MPI_Allreduce(MPI_IN_PLACE, t, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    qsort(t, (size_t)n, sizeof *t, cmp);
    return t[n / 2];
}

struct run {
    const char *name;
    int native; /* 1: MPI_Iallreduce, 0: nbcx_iallreduce */
};

int main(int argc, char **argv)
{
    /* MPI_THREAD_MULTIPLE lets nbcx run its progress thread. */
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    size_t bytes = argc > 1 ? strtoul(argv[1], NULL, 10) : 4u << 20;
    int tests = argc > 2 ? atoi(argv[2]) : 32;
    int reps = argc > 3 ? atoi(argv[3]) : 7;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (reps < 1 || reps > 1000 || tests < 0 || bytes < sizeof(double)) {
        if (!rank)
            fprintf(stderr, "usage: overlap_demo [bytes >= 8] [tests >= 0] "
                            "[reps 1..1000]\n");
        MPI_Finalize();
        return 2;
    }
    int count = (int)(bytes / sizeof(double));
    double *in = malloc((size_t)count * sizeof *in);
    double *out = malloc((size_t)count * sizeof *out);
    for (int i = 0; i < count; i++)
        in[i] = rank + i % 17;
    nbcx_comm comm;
    if (nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm) != NBCX_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);

    /* Calibrate: iterations per second of the computation. */
    double t0 = MPI_Wtime();
    compute(2000000, 0, NULL, NULL);
    double rate = 2000000 / (MPI_Wtime() - t0);

    if (!rank) { /* where the progress comes from */
        char info[512];
        nbcx_info(info, sizeof info);
        const char *p = strstr(info, "progress=");
        const char *end = p ? strstr(p, " segsize=") : NULL;
        if (p)
            printf("# nbcx %.*s\n", (int)(end ? end - p : (long)strlen(p)), p);
    }
    if (!rank)
        printf("# overlap_demo: allreduce of %zu bytes (doubles, sum), "
               "%d ranks, median of %d, max over ranks\n"
               "# %-34s %10s %10s %10s %8s\n",
               bytes, size, reps, "variant", "t_pure ms", "t_cpu ms",
               "t_ovrl ms", "overlap");
    const struct run runs[] = { { "native MPI_Iallreduce", 1 },
                                { "nbcx_iallreduce", 0 } };
    double tp[1000], to[1000];
    for (int r = 0; r < 2; r++) {
        for (int with_tests = 0; with_tests < 2; with_tests++) {
            for (int k = 0; k < reps; k++) {
                nbcx_request nreq;
                MPI_Request mreq;
                MPI_Barrier(MPI_COMM_WORLD);
                double t = MPI_Wtime();
                if (runs[r].native) {
                    MPI_Iallreduce(in, out, count, MPI_DOUBLE, MPI_SUM,
                                   MPI_COMM_WORLD, &mreq);
                    MPI_Wait(&mreq, MPI_STATUS_IGNORE);
                } else {
                    nbcx_iallreduce(in, out, count, NBCX_DOUBLE, NBCX_SUM,
                                    comm, &nreq);
                    nbcx_wait(&nreq);
                }
                tp[k] = MPI_Wtime() - t;
            }
            double pure = median_max(tp, reps);
            long iters = (long)(pure * rate);
            int ntests = with_tests ? tests : 0;
            for (int k = 0; k < reps; k++) {
                nbcx_request nreq;
                MPI_Request mreq;
                MPI_Barrier(MPI_COMM_WORLD);
                double t = MPI_Wtime();
                if (runs[r].native) {
                    MPI_Iallreduce(in, out, count, MPI_DOUBLE, MPI_SUM,
                                   MPI_COMM_WORLD, &mreq);
                    compute(iters, ntests, poll_mpi, &mreq);
                    MPI_Wait(&mreq, MPI_STATUS_IGNORE);
                } else {
                    nbcx_iallreduce(in, out, count, NBCX_DOUBLE, NBCX_SUM,
                                    comm, &nreq);
                    compute(iters, ntests, poll_nbcx, &nreq);
                    nbcx_wait(&nreq);
                }
                to[k] = MPI_Wtime() - t;
            }
            double ovrl = median_max(to, reps);
            double cpu = iters / rate;
            double ov = (pure + cpu - ovrl) / fmin(pure, cpu);
            ov = fmax(0, fmin(1, ov));
            if (!rank) {
                char name[64];
                snprintf(name, sizeof name, "%s, %d tests", runs[r].name,
                         ntests);
                printf("  %-34s %10.3f %10.3f %10.3f %7.0f%%\n", name,
                       pure * 1e3, cpu * 1e3, ovrl * 1e3, ov * 100);
            }
        }
    }
    nbcx_comm_free(&comm);
    free(in);
    free(out);
    MPI_Finalize();
    return sink == 12345.678; /* never true; uses sink */
}
